"""Crawl every trim of the full dataset from the emulator into one DataFrame.

    PYTHONPATH=python:BUILD/pkg VEHICLEDATA_SOURCES=... python benchmarks/client_crawl.py [--rounds 3]

Contenders, side by side in one run, each in its own process (so peak memory is
its own; time is the best of 3 warm runs, memory the first run's peak RSS
growth): vehicledata (pages concurrently, C++ columns), a plain `requests`
loop (one Session, r.json(), pd.DataFrame(records)), and a tuned pycurl +
orjson script (one reused handle, keep-alive, orjson, pd.DataFrame(records)).
Targets (issue 5): >= 8x faster than requests, >= 2x faster than pycurl+orjson,
peak memory under 2x the final DataFrame's size.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

HERE = Path(__file__).resolve().parent


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()


def peak_rss_bytes() -> int:
    """VmHWM: this process's peak RSS (unlike ru_maxrss, not inherited across exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux >= 4.0), so the peak is the crawl's own."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def crawl_vehicledata(url: str, jwt: str) -> Any:
    import vehicledata as vd
    from client_common import PREMIUM

    with vd.Client(base_url=url, api_token=PREMIUM["api_token"], api_secret=PREMIUM["api_secret"],
                   rate_limit=None) as api:
        return api.trims.search(limit=1000).to_pandas()


def crawl_requests(url: str, jwt: str) -> Any:
    import pandas as pd
    import requests

    records: List[Dict[str, Any]] = []
    with requests.Session() as s:
        s.headers["Authorization"] = "Bearer " + jwt
        target = "/api/trims/v2?limit=1000"
        while target:
            r = s.get(url + target, timeout=60)
            r.raise_for_status()
            body = r.json()
            records.extend(body["data"])
            target = body["collection"]["next"]
    return pd.DataFrame(records)


def crawl_pycurl(url: str, jwt: str) -> Any:
    from io import BytesIO

    import orjson
    import pandas as pd
    import pycurl

    c = pycurl.Curl()
    c.setopt(pycurl.HTTPHEADER, ["Authorization: Bearer " + jwt])
    c.setopt(pycurl.TCP_NODELAY, 1)
    records: List[Dict[str, Any]] = []
    target = "/api/trims/v2?limit=1000"
    while target:
        buf = BytesIO()
        c.setopt(pycurl.URL, url + target)
        c.setopt(pycurl.WRITEDATA, buf)
        c.perform()
        body = orjson.loads(buf.getvalue())
        records.extend(body["data"])
        target = body["collection"]["next"]
    c.close()
    return pd.DataFrame(records)


CONTENDERS = {"vehicledata": crawl_vehicledata, "requests loop": crawl_requests, "pycurl + orjson": crawl_pycurl}


def run_one(name: str, url: str, jwt: str, warm_runs: int = 3) -> None:
    import pandas  # noqa: F401  (imports outside the measurement)
    import pyarrow  # noqa: F401
    import requests  # noqa: F401
    import pycurl  # noqa: F401
    import orjson  # noqa: F401
    import vehicledata  # noqa: F401
    from vehicledata import _core  # noqa: F401

    if name == "vehicledata":  # libcurl's global init, as `import pycurl` already did for the peer
        vehicledata.Client(base_url=url, rate_limit=None).close()
    base = rss_bytes()
    reset_peak()
    t = time.perf_counter()
    df = CONTENDERS[name](url, jwt)
    cold = time.perf_counter() - t
    peak = peak_rss_bytes() - base  # first (cold) run only
    size = int(df.memory_usage(deep=True).sum())
    rows = len(df)
    del df
    warm = []
    for _ in range(warm_runs):
        t = time.perf_counter()
        CONTENDERS[name](url, jwt)
        warm.append(time.perf_counter() - t)
    print(json.dumps({"name": name, "seconds": min(warm) if warm else cold, "cold": cold, "rows": rows,
                      "df_bytes": size, "peak_bytes": peak}))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--run", nargs=3, metavar=("NAME", "URL", "JWT"))
    args = ap.parse_args()
    if args.run:
        run_one(*args.run)
        return 0
    from client_common import emulator, login

    results: Dict[str, List[Dict[str, Any]]] = {n: [] for n in CONTENDERS}
    with emulator(rate_limit=10**7) as emu:  # the crawl speed, not the service's limit, is measured here
        jwt = login(emu.url)
        crawl_requests(emu.url, jwt)  # warm the emulator's caches: no contender pays for them
        names = list(CONTENDERS)
        for round_no in range(args.rounds):
            for name in names[round_no % len(names):] + names[:round_no % len(names)]:  # rotate the order
                out = subprocess.run([sys.executable, str(HERE / "client_crawl.py"), "--run", name, emu.url, jwt],
                                     capture_output=True, text=True, check=True)
                results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = {n: min(r["seconds"] for r in rs) for n, rs in results.items()}
    total = {n: rs[0]["rows"] for n, rs in results.items()}
    assert len(set(total.values())) == 1, total
    print(f"\nCrawl of every trim ({total['vehicledata']} records, 1000 per page) into one DataFrame: "
          f"best warm run of {args.rounds} processes x 3 runs; peak memory of each process's first run")
    for name, secs in rows.items():
        r = min(results[name], key=lambda x: x["seconds"])
        cold = min(x["cold"] for x in results[name])
        print(f"  {name:<18} {secs:8.3f} s (cold {cold:.3f} s)  {rows[name] / rows['vehicledata']:5.1f}x ours   "
              f"peak +{r['peak_bytes'] / 2**20:7.1f} MiB, DataFrame {r['df_bytes'] / 2**20:6.1f} MiB "
              f"({r['peak_bytes'] / r['df_bytes']:.2f}x)")
    print(f"  ratio vs requests loop:   {rows['requests loop'] / rows['vehicledata']:.1f}x (target >= 8)")
    print(f"  ratio vs pycurl + orjson: {rows['pycurl + orjson'] / rows['vehicledata']:.1f}x (target >= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
