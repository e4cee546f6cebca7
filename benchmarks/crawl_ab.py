"""Interleaved A/B of our crawl under two environments (allocator settings, builds on PYTHONPATH...).

Not a scenario of run_all: a probe for benchmarks/notes/crawl.md.  One emulator (the bench's,
rate limit off); PROCS fresh processes per variant, alternating A B / B A; each process makes the
warm-up crawl of crawl.py, one crawl measured for peak RSS growth (as crawl.py), then 5 timed
crawls, each with its minor page faults (getrusage).

    python benchmarks/crawl_ab.py /api/engines/v2 '' 6 '{"MALLOC_TRIM_THRESHOLD_": "268435456"}'
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from typing import Any, Dict, List

import crawl
import harness

CHILD = r'''
import gc, json, resource, sys, time
import crawl, harness, orjson, pandas, pyarrow, vehicledata  # imports outside the measurement
url, jwt, path, query = sys.argv[1:5]
crawl.crawl_vehicledata(url, jwt, path, crawl.WARM_UP, crawl.WARM_UP_LIMIT)
gc.collect()
base = harness.rss_bytes(); harness.reset_peak()
df = crawl.crawl_vehicledata(url, jwt, path, query)
growth = harness.peak_rss_bytes() - base
size = int(df.memory_usage(deep=True).sum()); del df
times, faults = [], []
for _ in range(5):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t = time.perf_counter(); crawl.crawl_vehicledata(url, jwt, path, query); times.append(time.perf_counter() - t)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(json.dumps({"times": times, "faults": faults, "growth": growth, "df": size}))
'''


def summary(name: str, rs: List[Dict[str, Any]]) -> str:
    best = [min(r["times"]) * 1e3 for r in rs]
    med = [statistics.median(r["times"]) * 1e3 for r in rs]
    faults = [statistics.median(r["faults"]) for r in rs]
    ratio = [r["growth"] / r["df"] for r in rs]
    return (f"{name}: best {min(best):.1f} ms (per process {' '.join(f'{b:.1f}' for b in best)}); "
            f"median of the process medians {statistics.median(med):.1f} ms; minor faults per crawl "
            f"{statistics.median(faults):.0f} ({min(faults):.0f}-{max(faults):.0f}); peak growth / frame "
            f"{min(ratio):.2f}-{max(ratio):.2f}x")


def main(argv: List[str]) -> int:
    path, query, procs, env_b = argv[0], argv[1], int(argv[2]), json.loads(argv[3])
    ctx = harness.Context()
    try:
        url, jwt = ctx.url, ctx.jwt
        crawl.crawl_requests(url, jwt, path, query)  # warm the emulator's caches
        variants = {"A (as is)": harness.child_env(), "B " + json.dumps(env_b): {**harness.child_env(), **env_b}}
        out: Dict[str, List[Dict[str, Any]]] = {v: [] for v in variants}
        for p in range(procs):
            for v in (list(variants) if p % 2 == 0 else list(variants)[::-1]):
                r = subprocess.run([sys.executable, "-c", CHILD, url, jwt, path, query], env=variants[v],
                                   capture_output=True, text=True, check=True)
                out[v].append(json.loads(r.stdout.strip().splitlines()[-1]))
        for v, rs in out.items():
            print(summary(v, rs))
    finally:
        ctx.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
