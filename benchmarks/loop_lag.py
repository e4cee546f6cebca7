"""The event loop beside an AsyncClient crawl: how late a 1 ms ticker wakes (issue 42).

Not a scenario and never a pass/fail test (run it by hand): an asyncio app crawls every trim with
``vd.AsyncClient`` (``--mode pages``: ``async for page in search.pages``; ``frame``: ``to_pandas()``;
``records``: ``async for record in search``) while a task sleeps 1 ms in a loop and records how late
it wakes.  Prints the worst, p99 and median lateness of the crawl and of the same ticker on an idle
loop (what the machine itself adds), and with ``--debug`` the callbacks asyncio's debug mode
reported as slower than ``--slow`` ms (by name: which step held the loop).

    VEHICLEDATA_HOME=$PWD/build/home .venv/bin/python benchmarks/loop_lag.py [--mode pages|frame|records]
        [--limit 100] [--rounds 3] [--parallel 8] [--debug] [--slow 5] [--url URL] [--pin] [--switch-interval MS]

``--pin`` puts the emulator it starts on the last core and this process (the loop, the client's engine
thread) on the first: the server's 16 worker threads then compete with the loop for a core no more (on
the 2-core machine they otherwise take both cores during a warm crawl). The last line sums up the
measured rounds (median and range of their p99, the worst tick) with the load average before and after.

Targets: worst tick under 10 ms on a quiet machine (issue 42); p99 under 5 ms in every round (issue 41).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import statistics
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

import harness  # benchmarks/ is the script's folder
from crawl_async import LagProbe


class Ticker(LagProbe):
    """crawl_async's probe (a task sleeping 1 ms at a time; ``lags``: how late each wake-up was),
    with the summary this benchmark prints, and each lateness less the time the loop's thread spent
    runnable but not running meanwhile (``ours``: the kernel's run_delay of the thread, from
    /proc/thread-self/schedstat, is the machine's share: other processes, or this one's other threads,
    on the cores; what is left is the loop's own work and its waits for the GIL)."""

    def __init__(self) -> None:
        super().__init__()
        self.ours: List[float] = []

    async def run(self) -> None:
        import os

        fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)  # (this thread's: the loop's)
        try:
            def run_delay() -> float:
                return int(os.pread(fd, 128, 0).split()[1]) / 1e9

            while not self._stop:
                t, d = time.perf_counter(), run_delay()
                await asyncio.sleep(0.001)
                lag = time.perf_counter() - t - 0.001
                self.lags.append(lag)
                self.ours.append(max(0.0, lag - (run_delay() - d)))
        finally:
            os.close(fd)

    def summary(self) -> Dict[str, float]:
        s = sorted(self.lags) or [0.0]
        o = sorted(self.ours) or [0.0]
        return {"ticks": len(self.lags), "worst_ms": s[-1] * 1e3, "p99_ms": s[int(len(s) * 0.99)] * 1e3,
                "median_ms": statistics.median(s) * 1e3, "ours_worst_ms": o[-1] * 1e3,
                "ours_p99_ms": o[int(len(o) * 0.99)] * 1e3}


class GcPauses:
    """The cyclic garbage collector's passes (``gc.callbacks``): generation and seconds, each. A pass
    holds the GIL for its whole length, on whichever thread allocated past the threshold."""

    def __init__(self) -> None:
        import gc

        self.passes: List[Any] = []
        self._started = 0.0
        gc.callbacks.append(self)

    def __call__(self, phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.passes.append((info["generation"], time.perf_counter() - self._started))

    def take(self) -> Dict[str, float]:
        passes, self.passes = self.passes, []
        worst = max(passes, key=lambda p: p[1], default=(0, 0.0))
        return {"gc_passes": len(passes), "gc_worst_ms": worst[1] * 1e3, "gc_worst_gen": worst[0]}


class SlowCallbacks(logging.Handler):
    """asyncio's debug-mode lines "Executing <...> took 0.012 seconds", kept."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if msg.startswith("Executing "):
            self.lines.append(msg)


async def crawl(url: str, mode: str, limit: int, parallel: int) -> int:
    import vehicledata as vd
    from vehicledata.testing import DEMO_ACCOUNTS

    acct = DEMO_ACCOUNTS["premium"]
    async with vd.AsyncClient(base_url=url, api_token=acct["api_token"], api_secret=acct["api_secret"],
                              rate_limit=None, max_parallel=parallel) as api:
        search = api.trims.search(limit=limit)
        if mode == "frame":
            return len(await search.to_pandas(page_size=limit))
        if mode == "records":
            return sum([1 async for _ in search])
        n = 0
        async for page in search.pages:
            n += page.count
        return n


async def one_round(url: str, mode: str, limit: int, parallel: int, gc_pauses: GcPauses) -> Dict[str, float]:
    gc_pauses.take()
    ticker = Ticker()
    task = asyncio.ensure_future(ticker.run())
    started = time.perf_counter()
    rows = await crawl(url, mode, limit, parallel)
    took = time.perf_counter() - started
    ticker.stop()
    await task
    return {"rows": rows, "seconds": took, **ticker.summary(), **gc_pauses.take()}


async def idle(seconds: float) -> Dict[str, float]:
    ticker = Ticker()
    task = asyncio.ensure_future(ticker.run())
    await asyncio.sleep(seconds)
    ticker.stop()
    await task
    return ticker.summary()


@contextlib.contextmanager
def emulator(url: Optional[str], pin: bool = False) -> Iterator[str]:
    import os

    if url:
        yield url
        return
    from vehicledata.testing import Emulator

    cores = sorted(os.sched_getaffinity(0))
    if pin and len(cores) < 2:
        raise SystemExit("--pin needs two cores")
    with contextlib.ExitStack() as stack:
        if pin:  # the emulator (and its threads) on the last core; this process on the first, once it runs
            stack.enter_context(harness.affinity(cores[-1:]))
        emu = stack.enter_context(Emulator(rate_limit=1_000_000))  # (the per-minute limit off: every trim)
        if pin:
            os.sched_setaffinity(0, {cores[0]})  # the loop's thread; threads started later inherit it
        yield emu.url


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("pages", "frame", "records"), default="pages")
    ap.add_argument("--limit", type=int, default=100, help="records per page (default 100)")
    ap.add_argument("--parallel", type=int, default=8, help="the client's max_parallel (default 8)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--debug", action="store_true", help="asyncio debug mode: name the slow callbacks")
    ap.add_argument("--slow", type=float, default=5.0, help="debug mode's slow_callback_duration, ms (default 5)")
    ap.add_argument("--url", help="a running emulator (default: start one)")
    ap.add_argument("--gc-freeze", action="store_true",
                    help="gc.freeze() after the warm-up: the objects made so far leave the collector's passes")
    ap.add_argument("--pin", action="store_true",
                    help="the emulator on the last core, this process on the first (see the docstring)")
    ap.add_argument("--switch-interval", type=float, metavar="MS",
                    help="sys.setswitchinterval for the run, ms (Python's default: 5)")
    args = ap.parse_args(argv)
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval / 1e3)
    import os

    load_before = os.getloadavg()[0]

    handler = SlowCallbacks()
    gc_pauses = GcPauses()
    if args.debug:
        logging.getLogger("asyncio").addHandler(handler)

    async def run(url: str) -> List[Dict[str, Any]]:
        loop = asyncio.get_running_loop()
        loop.slow_callback_duration = args.slow / 1e3
        rounds = [await one_round(url, args.mode, args.limit, args.parallel, gc_pauses)]  # the first is a warm-up
        if args.gc_freeze:
            import gc

            gc.freeze()
        for _ in range(args.rounds):
            rounds.append(await one_round(url, args.mode, args.limit, args.parallel, gc_pauses))
        rounds.append({"idle": 1.0, **(await idle(max(1.0, rounds[-1]["seconds"])))})
        return rounds

    with emulator(args.url, args.pin) as url:
        results = asyncio.run(run(url), debug=args.debug)
    for i, r in enumerate(results):
        label = "idle" if "idle" in r else ("warm-up" if i == 0 else f"round {i}")
        extra = "" if "idle" in r else (f"  {r['rows']} rows in {r['seconds']:.2f} s; gc: {r['gc_passes']} passes, "
                                        f"worst {r['gc_worst_ms']:.1f} ms (gen {r['gc_worst_gen']})")
        print(f"{label:8} ticks {int(r['ticks']):6}  worst {r['worst_ms']:6.1f} ms  p99 {r['p99_ms']:5.1f} ms  "
              f"median {r['median_ms']:5.2f} ms  (less run_delay: worst {r['ours_worst_ms']:5.1f} ms, "
              f"p99 {r['ours_p99_ms']:5.1f} ms){extra}")
    measured = [r for r in results[1:] if "idle" not in r]
    if measured:
        p99s = sorted(r["p99_ms"] for r in measured)
        ours = sorted(r["ours_p99_ms"] for r in measured)
        print(f"rounds {len(measured)}: p99 median {statistics.median(p99s):.1f} ms ({p99s[0]:.1f}-{p99s[-1]:.1f}), "
              f"{sum(p < 5.0 for p in p99s)}/{len(p99s)} under 5 ms; worst tick {max(r['worst_ms'] for r in measured):.1f} ms; "
              f"less run_delay: p99 median {statistics.median(ours):.1f} ms ({ours[0]:.1f}-{ours[-1]:.1f}), worst "
              f"{max(r['ours_worst_ms'] for r in measured):.1f} ms; "
              f"{'pinned' if args.pin else 'unpinned'}, switch interval {sys.getswitchinterval() * 1e3:g} ms, "
              f"load {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    if args.debug:
        print(f"\nslow callbacks (> {args.slow:g} ms), asyncio debug mode: {len(handler.lines)}")
        for line in handler.lines[:40]:
            print("  " + (line if len(line) < 240 else line[:150] + " ... " + line[-80:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
