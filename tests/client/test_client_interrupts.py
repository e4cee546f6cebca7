"""Ctrl-C (and any exception a signal handler raises) stops a call at once (issue 40, point 1):
``api.vehicles`` cancels its other crawls instead of awaiting them, and ``Decoder.decode_many`` stops
its C++ workers mid-batch.  Real signals (SIGINT, SIGALRM) sent to this process while the call runs."""
from __future__ import annotations

import concurrent.futures
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List

import pytest

import vehicledata as vd
from vehicledata import vehicles

pa = pytest.importorskip("pyarrow")

PARTS = ("/api/bodies/v2", "/api/engines/v2", "/api/mileages/v2")
SAFETY = 60.0  # seconds: a generous bound against a hung test, never what the tests measure


class Raised(Exception):
    """What the program's own signal handler raises (not KeyboardInterrupt)."""


@pytest.fixture()
def handler() -> Iterator[Callable[[int, BaseException], List[Any]]]:
    """``handler(signum, exc)``: a Python handler of ``signum`` raising ``exc`` once (later signals are
    ignored, so a late one never reaches pytest); returns the list its calls are appended to."""
    saved = {}

    def install(signum: int, exc: BaseException) -> List[Any]:
        calls: List[Any] = []

        def on_signal(num: int, frame: Any) -> None:
            calls.append(_tasks())
            if len(calls) == 1:
                raise exc

        saved.setdefault(signum, signal.getsignal(signum))
        signal.signal(signum, on_signal)
        return calls

    yield install
    signal.setitimer(signal.ITIMER_REAL, 0)
    for signum, old in saved.items():
        signal.signal(signum, old)


def _tasks() -> int:
    """The OS threads of this process now."""
    return len(os.listdir("/proc/self/task"))


def _send_when(condition: Callable[[], bool], signum: int) -> threading.Event:
    """A thread that sends ``signum`` to this process once ``condition()`` holds (polled every 10 ms),
    then lives on until the Event returned is set (so that the OS threads counted stay the same)."""
    finished = threading.Event()

    def run() -> None:
        deadline = time.monotonic() + SAFETY
        while time.monotonic() < deadline:
            if condition():
                os.kill(os.getpid(), signum)
                finished.wait(SAFETY)
                return
            time.sleep(0.01)

    threading.Thread(target=run, daemon=True).start()
    return finished


@pytest.fixture()
def crawls(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    """The part crawls (vehicles._PartCrawls) each api.vehicles call makes, in order."""
    made: List[Any] = []

    class Recorded(vehicles._PartCrawls):
        def __init__(self, crawl: Callable[[str], Any]) -> None:
            super().__init__(crawl)
            made.append(self)

    monkeypatch.setattr(vehicles, "_PartCrawls", Recorded)
    return made


def _ended_cancelled(crawl: Any) -> None:
    """Each part crawl of ``crawl`` ended by its cancellation: none ran to its end (a 30 s Retry-After
    sleep, then the pages), none returned a result."""
    futures = list(crawl.futures.values())
    done, pending = concurrent.futures.wait(futures, timeout=SAFETY)
    assert not pending
    assert crawl.token.cancelled
    for f in futures:
        assert f.cancelled() or isinstance(f.exception(), concurrent.futures.CancelledError), f


def _sleeping_in_parts(emulator: Any) -> Callable[[], bool]:
    """True once the emulator has answered the three part crawls' first requests (503, Retry-After 30):
    each crawl is then in its 30 s retry sleep."""
    return lambda: int(emulator.stats().get("by_status", {}).get("503", 0)) >= len(PARTS)


@pytest.mark.parametrize("signum, exc", [(signal.SIGINT, KeyboardInterrupt()), (signal.SIGALRM, Raised("alarm"))],
                         ids=["sigint", "handler-exception"])
def test_a_signal_stops_vehicles_to_pandas_and_cancels_the_part_crawls(emulator, client_factory, handler, crawls,
                                                                       signum, exc):
    emulator.reset()
    for path in PARTS:
        emulator.fault(path, status=503, retry_after=30, count=1)  # each part crawl sleeps 30 s, then retries
    with client_factory(emulator.url) as api:
        calls = handler(signum, exc)
        # The trims crawl (this thread) ends at once; the signal comes while this thread waits for the parts.
        sent = _send_when(_sleeping_in_parts(emulator), signum)
        try:
            with pytest.raises(type(exc)) as raised:
                api.vehicles.search(year=2019, make="BMW").to_pandas()
        finally:
            sent.set()
        assert raised.value is exc and len(calls) == 1
        assert len(crawls) == 1
        _ended_cancelled(crawls[0])
        # nothing was asked after the 503s: the cancelled crawls made no retry
        stats = emulator.stats()
        assert int(stats["by_status"].get("503", 0)) == len(PARTS)
        assert [stats["by_path"][p] for p in PARTS] == [1, 1, 1]
        # the client and the pool still work: the same search, without faults, in full
        assert len(api.vehicles.search(year=2019, make="BMW").to_pandas()) > 0


def test_a_signal_during_the_trims_crawl_cancels_the_part_crawls(emulator, client_factory, handler, crawls):
    emulator.reset()
    for path in PARTS + ("/api/trims/v2",):
        emulator.fault(path, status=503, retry_after=30, count=1)  # this thread sleeps too, in the trims crawl
    with client_factory(emulator.url) as api:
        handler(signal.SIGINT, KeyboardInterrupt())
        sent = _send_when(lambda: int(emulator.stats().get("by_status", {}).get("503", 0)) >= 4, signal.SIGINT)
        try:
            with pytest.raises(KeyboardInterrupt):
                api.vehicles.search(year=2019, make="BMW").to_arrow()
        finally:
            sent.set()
        _ended_cancelled(crawls[0])


def test_a_failed_part_crawl_cancels_the_others(emulator, client_factory, crawls):
    emulator.reset()
    emulator.fault("/api/engines/v2", status=404, count=1)  # fails at once (no retry of a 404)
    for path in ("/api/bodies/v2", "/api/mileages/v2"):
        emulator.fault(path, status=503, retry_after=30, count=1)
    with client_factory(emulator.url) as api:
        with pytest.raises(vd.NotFoundError):
            api.vehicles.search(year=2019, make="BMW").to_pandas()
    crawl = crawls[0]
    futures = list(crawl.futures.values())
    concurrent.futures.wait(futures, timeout=SAFETY)
    assert isinstance(crawl.futures["engine"].exception(), vd.NotFoundError)
    for rec in ("body", "mileage"):
        f = crawl.futures[rec]
        assert f.done() and (f.cancelled() or isinstance(f.exception(), concurrent.futures.CancelledError)), rec


def test_iter_pandas_cancels_the_part_crawls(emulator, client_factory, handler, crawls):
    emulator.reset()
    for path in PARTS:
        emulator.fault(path, status=503, retry_after=30, count=1)
    with client_factory(emulator.url) as api:
        handler(signal.SIGINT, KeyboardInterrupt())
        sent = _send_when(_sleeping_in_parts(emulator), signal.SIGINT)
        try:
            with pytest.raises(KeyboardInterrupt):
                next(iter(api.vehicles.search(year=2019, make="BMW").iter_pandas()))
        finally:
            sent.set()
        _ended_cancelled(crawls[0])


# ---- the offline decoder ------------------------------------------------------------------------------
VINS_TSV = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "vins.tsv"


@pytest.fixture(scope="module")
def decoder(database: Path) -> vd.vin.Decoder:
    return vd.vin.Decoder(database)


def _many_vins(rows: int) -> Any:
    vins = [line.split("\t")[0] for line in VINS_TSV.read_text().splitlines()
            if line.strip() and not line.startswith(("#", "vin\t"))]
    base = pa.array(vins, pa.large_string())
    return pa.chunked_array([base] * (rows // len(vins) + 1)).combine_chunks()[:rows]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("signum, exc", [(signal.SIGINT, KeyboardInterrupt()), (signal.SIGALRM, Raised("alarm"))],
                         ids=["sigint", "handler-exception"])
def test_a_signal_stops_decode_many_while_its_workers_run(decoder, handler, threads, signum, exc):
    vins = _many_vins(1_000_000)  # about a second of decoding here: the signal comes well inside
    idle = _tasks()
    calls = handler(signum, exc)
    # Sent once the batch's C++ worker runs (threads=2: one more OS thread) or, with one thread, once the
    # call has begun (this thread decodes): the handler must run inside the call, not after it.
    started = threading.Event()
    if threads == 2:
        sent = _send_when(lambda: _tasks() > idle + 1, signum)  # +1: the sender itself
    else:
        sent = _send_when(started.is_set, signum)
    table = None
    try:
        with pytest.raises(type(exc)) as raised:
            started.set()
            table = decoder.decode_many(vins, threads=threads)
    finally:
        sent.set()
    assert raised.value is exc and table is None
    assert len(calls) == 1
    if threads == 2:
        assert calls[0] == idle + 2  # the handler ran while the worker thread (and the sender) still ran
    # the decoder still works, and a batch after an interrupted one is whole and right
    small = vins[:5000]
    assert decoder.decode_many(small, threads=threads).equals(decoder.decode_many(small.to_pylist(), threads=1))


def test_an_exception_raised_while_the_client_logs_is_raised_by_the_call(emulator, client_factory):
    """A signal handler runs wherever the main thread runs Python code, the client's log calls included:
    its exception (here raised by a logging handler, as a handler's would be) stops the call, raised as
    raised, instead of being printed as unraisable while the call sleeps on."""
    import logging

    emulator.reset()
    emulator.fault("/api/trims/v2", status=503, retry_after=30, count=1)

    class Interrupting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "retrying" in record.getMessage():
                raise Raised("while logging")

    log = logging.getLogger("vehicledata")
    handler = Interrupting(logging.WARNING)
    log.addHandler(handler)
    try:
        with client_factory(emulator.url) as api:
            with pytest.raises(Raised, match="while logging"):
                api.trims.search(year=2019, make="BMW").to_pandas()
    finally:
        log.removeHandler(handler)
    assert emulator.stats()["by_path"]["/api/trims/v2"] == 1  # the 30 s Retry-After sleep was not slept: no retry


def test_a_signal_stops_opening_a_decoder_and_the_load_goes_on(database: Path, handler):
    """Decoder() reads the tables for about 2 s on a thread of its own: a signal stops the call at once
    (the handler runs while the load still runs), and the next Decoder of the path takes that load."""
    import shutil
    import uuid

    where = database.parent / f"interrupt-{uuid.uuid4().hex[:8]}"  # a path no Decoder of this process opened
    where.mkdir()
    try:
        con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        vpic_name = con.execute("SELECT value FROM meta WHERE key = 'vpic_path'").fetchone()[0]
        con.close()
        for name in ("vehicledata.db", vpic_name):
            os.link(database.parent / name, where / name)  # the same files, another path: loaded anew
        path = str((where / "vehicledata.db").resolve())
        seen: List[bool] = []
        calls = handler(signal.SIGALRM, Raised("alarm"))
        sent = _send_when(lambda: path in vd.vin._LOADING, signal.SIGALRM)
        try:
            with pytest.raises(Raised):
                vd.vin.Decoder(path)
            seen.append(path in vd.vin._LOADING)  # raised while the tables were still loading
        finally:
            sent.set()
        assert len(calls) == 1 and seen == [True]
        opened = vd.vin.Decoder(path)  # waits for the same load
        assert vd.vin._OPEN[path] is opened._core and path not in vd.vin._LOADING
        assert opened.decode("1GTG6CEN0L1139305").year == 2020
    finally:
        vd.vin._OPEN.pop(str((where / "vehicledata.db").resolve()), None)
        shutil.rmtree(where)
