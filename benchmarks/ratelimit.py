"""Rate-limited crawl: wall time against the ideal N/rate, 429s, client CPU per request.

A fresh emulator enforcing the service's 600 requests per minute; the client keeps its default
`rate_limit=600` and no retries (a single 429 would raise). The crawl is scaled down to N pages
(120 by default, 60 in a quick run: at least 50, the page size being at most 1000) by choosing the page size. Targets: wall time <= 1.05x the ideal
N/rate, no 429; reported: the client's CPU time (user + system) per request.

    python benchmarks/ratelimit.py [--rounds 2] [--quick]
"""
from __future__ import annotations

import resource
import sys
import time
from typing import List

import harness

SCENARIO = "ratelimit"
CPU_SHARE = ("ours alone (no peer) against a fresh emulator, unpinned; the client CPU per request is "
             "measured, not wall time")
TITLE = "4. Rate-limited crawl (600/min)"
ORDER = 40

RATE_PER_MIN = 600


def cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run(ctx: harness.Context) -> List[harness.Result]:
    import vehicledata as vd
    from vehicledata.testing import DEMO_ACCOUNTS, Emulator

    acct = DEMO_ACCOUNTS["premium"]
    pages_wanted = 60 if ctx.quick else 120
    rounds = max(1, min(ctx.rounds, 2))
    samples: List[float] = []
    ideal: List[float] = []
    n429 = 0
    cpu: List[float] = []
    with Emulator(db=ctx.database()) as emu:  # the service's default limit: 600/min
        for _ in range(rounds):
            with vd.Client(base_url=emu.url, api_token=acct["api_token"], api_secret=acct["api_secret"],
                           retry=0) as api:
                api.login()
                probe = api.trims.search(limit=1)
                limit = max(1, -(-probe.total // pages_wanted))
                emu.reset()  # a fresh window: login and probe do not count
                pager = api.trims.search(limit=limit)
                c0, t0 = cpu_seconds(), time.perf_counter()
                rows = sum(len(page) for page in pager.pages)
                elapsed = time.perf_counter() - t0
                c1 = cpu_seconds()
                n = pager.page_count
            stats = emu.stats()
            n429 += int(stats["by_status"].get("429", 0))
            samples.append(elapsed)
            ideal.append(n * 60.0 / RATE_PER_MIN)
            cpu.append((c1 - c0) / n)
            emu.reset()
            time.sleep(0 if ctx.quick else 1)
    res = harness.Result(name="ratelimit", title=f"Crawl of {n} pages ({rows} trims, {limit} per page) at 600/min",
                         unit="s", ours="vehicledata", samples={"vehicledata": samples, "ideal N/rate": ideal},
                         targets=[harness.Target("wall time <= 1.05x ideal N/rate", "ratio_max", 1.05,
                                                 peer="ideal N/rate")])
    res.extra["vehicledata"] = {"429 responses (target 0)": n429, "client CPU ms/request": 1000 * min(cpu)}
    res.notes.append(f"429 responses over {rounds} crawl(s): {n429} (target 0): " + ("met" if n429 == 0 else "NOT met"))
    return [res]


if __name__ == "__main__":
    sys.exit(harness.main(run))
