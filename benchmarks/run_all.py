#!/usr/bin/env python3
"""Run every benchmark scenario (`make bench`), write benchmarks/results/latest.json and docs/performance.md.

    python benchmarks/run_all.py [--only NAME[,NAME]] [--rounds N] [--quick] [--no-report]

A scenario is any ``benchmarks/*.py`` with a ``SCENARIO = "name"`` line and a ``run(ctx)``
function (see harness.py): new scenario modules are found without registration.
Measurements only: nothing here passes or fails.
"""
from __future__ import annotations

import importlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

SCENARIO_LINE = re.compile(r"^SCENARIO\s*=\s*['\"]([\w-]+)['\"]", re.M)


def discover() -> List[Any]:
    mods = []
    for path in sorted(HERE.glob("*.py")):
        if path.stem in ("harness", "run_all", "report") or not SCENARIO_LINE.search(path.read_text()):
            continue
        mods.append(importlib.import_module(path.stem))
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 100), m.SCENARIO))


def main(argv: List[str] | None = None) -> int:
    ap = harness.arg_parser()
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--no-report", action="store_true", help="do not rewrite docs/performance.md")
    ap.add_argument("--out", default=str(harness.RESULTS / "latest.json"))
    args = ap.parse_args(argv)
    mods = discover()
    if args.list:
        for m in mods:
            print(f"{m.SCENARIO:<14} {getattr(m, 'TITLE', '')}")
        return 0
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {m.SCENARIO for m in mods}
        if unknown:
            print(f"unknown scenario(s): {', '.join(sorted(unknown))}; see --list", file=sys.stderr)
            return 2
        mods = [m for m in mods if m.SCENARIO in want]
    started = time.time()
    ctx = harness.Context(rounds=args.rounds, quick=args.quick, count_instructions=args.instructions)
    scenarios = []
    try:
        for m in mods:
            print(f"==> {m.SCENARIO}: {getattr(m, 'TITLE', '')}", flush=True)
            scenarios.append(harness.run_scenario(m, ctx))
    finally:
        ctx.close()
    out = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
           "seconds": time.time() - started, "rounds": args.rounds, "quick": args.quick,
           "machine": harness.machine(), "versions": harness.versions(), "scenarios": scenarios}
    path = Path(args.out)
    if args.only and path.exists():  # a partial run updates its scenarios in the last full results
        old = json.loads(path.read_text())
        keep = [s for s in old.get("scenarios", []) if s["scenario"] not in {s2["scenario"] for s2 in scenarios}]
        out["scenarios"] = sorted(keep + scenarios, key=lambda s: (s.get("order", 100), s["scenario"]))
        out["partial_update"] = sorted(m.SCENARIO for m in mods)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"\nwrote {path}")
    if not args.no_report:
        import report

        print(f"wrote {report.write(out)}")
    failed = [s["scenario"] for s in scenarios if s["error"]]
    if failed:
        print(f"scenarios that did not complete: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
