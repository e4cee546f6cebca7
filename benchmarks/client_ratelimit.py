"""Against the service's 600/min limit: a crawl of N pages takes at most 1.05 x N/10 s and gets no 429.

    PYTHONPATH=python:BUILD/pkg python benchmarks/client_ratelimit.py [--pages 120]

The emulator enforces 600 requests per minute (its default, as the service);
the client keeps its default rate_limit=600 and no retries, so a single 429
would raise.  Reported: wall time of the crawl, the bound 1.05 x N/10 s, and
the statuses the emulator counted.
"""
from __future__ import annotations

import argparse
import sys
import time

import vehicledata as vd

from client_common import PREMIUM, emulator


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=120)
    args = ap.parse_args()
    with emulator() as emu:
        with vd.Client(base_url=emu.url, api_token=PREMIUM["api_token"], api_secret=PREMIUM["api_secret"],
                       retry=0) as api:  # rate_limit: the default 600/min
            api.login()
            probe = api.trims.search(limit=1)
            limit = max(1, -(-probe.total // args.pages))  # page size giving about N pages
            emu.reset()  # a fresh window: the probe does not count
            pager = api.trims.search(limit=limit)
            started = time.perf_counter()
            rows = sum(len(page) for page in pager.pages)
            elapsed = time.perf_counter() - started
            n = pager.page_count
            waited = api.stats()["rate_wait_seconds"]
        stats = emu.stats()
    bound = 1.05 * n / 10
    print(f"\nCrawl of {n} pages ({rows} trims, {limit} per page) at the 600/min limit")
    print(f"  wall time {elapsed:.2f} s; bound 1.05 x N/10 = {bound:.2f} s -> {'OK' if elapsed <= bound else 'OVER'}")
    print(f"  statuses seen by the emulator: {stats['by_status']} (429: {stats['by_status'].get('429', 0)})")
    print(f"  client waited {waited:.2f} s in the token bucket")
    return 0 if elapsed <= bound and "429" not in stats["by_status"] else 1


if __name__ == "__main__":
    sys.exit(main())
