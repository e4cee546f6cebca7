"""Page bytes -> pandas, two versions of ``vehicledata/frames.py`` side by side, with orjson + polars.

Not a scenario (run it by hand): the ``frames.py`` of another checkout (``--base``, e.g. main's) is
loaded beside this one's (both on this checkout's ``_core``: a change to the C++ decode shows in
``decode_frame.py --breakdown`` run in each checkout), and the two and ``pl.DataFrame(orjson.loads(body)["data"])`` decode the same saved trims
page in interleaved rounds (the order rotated), the whole process (polars' pool included) on one core,
as `decode_frame.py` times them. Prints per contender the median and range of the wall time and of the
process's CPU time per call (every thread's: polars' pool counts), and orjson + polars over each
version, round by round. CPU time is the steadier figure on a shared machine.

    python benchmarks/frame_ab.py --base ../main/python/vehicledata/frames.py \\
        [--size 10] [--rounds 15] [--payloads benchmarks/results/payloads]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent


def load_frames(path: str, name: str) -> Any:
    """``path`` (a frames.py) as the module ``vehicledata.<name>`` (its relative imports: this package)."""
    import vehicledata  # noqa: F401  (the package its ``from . import _core`` resolves in)

    spec = importlib.util.spec_from_file_location(f"vehicledata.{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the other frames.py (e.g. main's)")
    ap.add_argument("--size", type=int, default=10, choices=(10, 100, 1000))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--payloads", default=str(HERE / "results" / "payloads"),
                    help="where decode_frame.py saved the pages (run it once first)")
    args = ap.parse_args(argv)

    import orjson
    import pandas as pd
    import polars as pl

    from vehicledata import frames

    base = load_frames(args.base, "frames_base")
    body = (Path(args.payloads) / f"api_trims_v2_limit_{args.size}.json").read_bytes()
    fns: Dict[str, Callable[[], Any]] = {
        "base": lambda: base.frame_from_bytes(body, "trim"),
        "this": lambda: frames.frame_from_bytes(body, "trim"),
        "orjson + polars": lambda: pl.DataFrame(orjson.loads(body)["data"]),
    }
    pd.testing.assert_frame_equal(fns["base"](), fns["this"](), check_exact=True)  # the same frame
    core = sorted(os.sched_getaffinity(0))[:1]
    for tid in os.listdir("/proc/self/task"):  # every thread, pools started at import included
        os.sched_setaffinity(int(tid), core)
    number = max(1, 2000 // args.size)
    wall: Dict[str, List[float]] = {k: [] for k in fns}
    cpu: Dict[str, List[float]] = {k: [] for k in fns}
    keys = list(fns)
    load = os.getloadavg()[0]
    for r in range(args.rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            fn = fns[k]
            w, c = time.perf_counter(), time.process_time()
            for _ in range(number):
                fn()
            wall[k].append((time.perf_counter() - w) / number * 1e6)
            cpu[k].append((time.process_time() - c) / number * 1e6)
    print(f"{args.size} records, {args.rounds} rounds x {number} calls, core {core[0]}, "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    for k in keys:
        print(f"  {k:16s} wall {statistics.median(wall[k]):7.1f} us ({min(wall[k]):.1f}-{max(wall[k]):.1f})  "
              f"cpu {statistics.median(cpu[k]):7.1f} us ({min(cpu[k]):.1f}-{max(cpu[k]):.1f})")
    for k in ("base", "this"):
        rw = [p / o for p, o in zip(wall["orjson + polars"], wall[k])]
        rc = [p / o for p, o in zip(cpu["orjson + polars"], cpu[k])]
        print(f"  orjson + polars / {k}: wall {statistics.median(rw):.2f}x ({min(rw):.2f}-{max(rw):.2f}), "
              f"cpu {statistics.median(rc):.2f}x ({min(rc):.2f}-{max(rc):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
