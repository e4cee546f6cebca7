"""The async client under signals and at exit (issue 40, points 1 and 7): Ctrl-C, or an exception a
signal handler raises, stops an ``AsyncClient`` crawl at once, its other crawls cancelled rather than
awaited (their Retry-After sleeps cut short: the retries are never sent); a daemon thread still
running an ``AsyncClient`` crawl when the interpreter exits says nothing on stderr.

Each scenario runs in a fresh interpreter (``asyncio.run`` there owns SIGINT as a user's program's
does).  No verdict rests on a duration: what was sent is counted by the emulator, and the clock is
only a hang guard far above the working case."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict

import pytest

from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]
PARTS = ("/api/bodies/v2", "/api/engines/v2", "/api/mileages/v2")
SAFETY = 60.0  # seconds: a guard against a hung child, never what the tests measure

# Three concurrent crawls (api.vehicles. four, a search and a page walk) on one loop; the parts and
# the colours search sleep 30 s (503, Retry-After 30) once.  "ready" once the loop is waiting.
CRAWLS = """
import asyncio, json, signal, sys, time
import vehicledata as vd
url, token, secret, how = sys.argv[1:5]

class Raised(Exception):
    pass

def on_alarm(signum, frame):
    raise Raised("from the handler")

if how == "handler":
    signal.signal(signal.SIGUSR1, on_alarm)

async def walk(api):
    return [r async for r in api.makes.search(year=2019)]

async def main():
    async with vd.AsyncClient(token, secret, base_url=url, rate_limit=None,
                              retry=vd.Retry(total=3, backoff_factor=0.01, backoff_jitter=0.0)) as api:
        print("ready", flush=True)
        await asyncio.gather(api.vehicles.search(year=2019, make="BMW").to_pandas(),
                             api.exterior_colors.search(year=2018).to_arrow(), walk(api))

started = time.monotonic()
try:
    asyncio.run(main())
    got = "no exception"
except KeyboardInterrupt:
    got = "KeyboardInterrupt"
except Raised as exc:
    got = "Raised: " + str(exc)
print(json.dumps({"got": got, "seconds": time.monotonic() - started}), flush=True)
"""


def _run_and_signal(emulator: Emulator, how: str, signum: int) -> Dict[str, Any]:
    emulator.reset()
    for path in PARTS + ("/api/exterior-colors/v2",):
        emulator.fault(path, status=503, retry_after=30, count=1)
    proc = subprocess.Popen([sys.executable, "-c", CRAWLS, emulator.url, PREMIUM["api_token"],
                             PREMIUM["api_secret"], how], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + SAFETY
        while int(emulator.stats().get("by_status", {}).get("503", 0)) < 4:  # every faulted crawl sleeps
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr and proc.stderr.read()
            time.sleep(0.01)
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=SAFETY)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    return {"result": json.loads(out.strip().splitlines()[-1]), "stderr": err}


@pytest.mark.parametrize("how, signum, got", [("sigint", signal.SIGINT, "KeyboardInterrupt"),
                                              ("handler", signal.SIGUSR1, "Raised: from the handler")],
                         ids=["ctrl-c", "handler-exception"])
def test_a_signal_stops_the_async_crawls_and_cancels_the_others(emulator: Emulator, how: str, signum: int, got: str):
    run = _run_and_signal(emulator, how, signum)
    assert run["result"]["got"] == got, run
    # The sleeping crawls were cancelled, not awaited: none of their retries was sent (each would be
    # 30 s after its 503), and the child has exited, engine and all.
    stats = emulator.stats()
    assert int(stats["by_status"].get("503", 0)) == 4
    assert [stats["by_path"].get(p) for p in PARTS + ("/api/exterior-colors/v2",)] == [1, 1, 1, 1]
    assert "Task exception was never retrieved" not in run["stderr"]
    assert "Traceback" not in run["stderr"], run["stderr"][-3000:]


# A daemon thread's AsyncClient crawl at interpreter exit.  ``phase`` orders it for certain with an
# atexit handler that joins the thread (so that what it prints is printed): "executor" crawls after
# concurrent.futures stopped taking work (the main thread has ended), the engine still open;
# "engine" crawls after the client's engine was closed at exit (weakref.finalize): its request then
# waits to be frozen with the interpreter (the join gives up after 3 s).
AT_EXIT = """
import asyncio, atexit, sys, threading
import vehicledata as vd
url, token, secret, phase = sys.argv[1:5]
engine_closed = threading.Event()
threads = []
if phase == "engine":  # registered first: runs after the client's finalizer closed the engine
    atexit.register(lambda: (engine_closed.set(), threads[0].join(3)))
api = vd.AsyncClient(token, secret, base_url=url, rate_limit=None)
if phase == "executor":  # registered last: runs first, with the engine open
    atexit.register(lambda: threads[0].join(30))
ready = threading.Event()

async def crawl():
    pager = api.trims.search(year=2020)
    print("warm", len(await pager.to_pandas()), flush=True)
    ready.set()
    while threading.main_thread().is_alive() or (phase == "engine" and not engine_closed.is_set()):
        await asyncio.sleep(0.005)
    df = await api.engines.search(year=2020).to_pandas()
    print("at exit", len(df), flush=True)

threads.append(threading.Thread(target=lambda: asyncio.run(crawl()), daemon=True))
threads[0].start()
ready.wait(30)
"""


@pytest.mark.parametrize("phase", ["executor", "engine"])
def test_a_daemon_threads_crawl_at_exit_is_quiet(emulator: Emulator, api: Any, phase: str):
    emulator.reset()
    proc = subprocess.run([sys.executable, "-c", AT_EXIT, emulator.url, PREMIUM["api_token"], PREMIUM["api_secret"],
                           phase], capture_output=True, text=True, timeout=SAFETY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0] == f"warm {len(api.trims.search(year=2020).to_pandas())}"
    if phase == "executor":  # the frame built at exit, in a thread of its own
        assert lines[1:] == [f"at exit {len(api.engines.search(year=2020).to_pandas())}"]
    else:  # the request waits for the thread to be frozen with the interpreter: no word
        assert lines[1:] == []
