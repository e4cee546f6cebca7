"""Slow readers of the data feed ZIP cost neither a worker nor a copy of the ZIP (issue 25, item 1):
the answer's head goes out at once and the epoll thread pulls the ZIP from its file, 64 KiB at a
time, as each socket drains. Before, a worker wrote every answer over the 8 MiB per-connection
buffer itself (waiting on the socket up to the 30 s deadline) and smaller ones were copied whole
into the buffer; ranged downloads went through cpp-httplib's own path."""
from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Tuple


from emu_support import read_response, read_until_close
from test_emu_hostile import connect, get, hostport
from vehicledata.testing import Emulator

FEED = "/api/data-feeds/download"
BIG = "/api/trims/v2?limit=1000&verbose=yes"
READERS = 8  # twice the session emulator's 4 workers


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def feed_request(token: str, extra: str = "") -> bytes:
    return get(FEED, f"Authorization: Bearer {token}\r\n{extra}")


def slow_reader(emu: Emulator, raw: bytes) -> socket.socket:
    """A connection with a 4 KB receive buffer that sends `raw` and then reads nothing."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(hostport(emu))
    s.sendall(raw)
    return s


def timed_get(emu: Emulator, path: str) -> Tuple[float, int, bytes]:
    started = time.monotonic()
    with connect(emu, timeout=10) as s:
        s.sendall(get(path, "Connection: close\r\n"))
        code, _, body = read_response(s, bytearray())
    return time.monotonic() - started, code, body


def test_slow_feed_readers_hold_no_worker_and_no_copy(emulator: Emulator, tokens: Dict[str, str]) -> None:
    # the session's emulator (4 workers): its ZIP is built once for this and test_emu_feed.py
    emu, token = emulator, tokens["premium"]
    with connect(emu, timeout=60) as s:  # builds the ZIP once
        s.sendall(feed_request(token))
        code, headers, full = read_response(s, bytearray())
    assert code == 200 and headers["content-type"] == "application/zip" and len(full) > 1_000_000
    assert full[:4] == b"PK\x03\x04"
    assert emu._proc is not None
    pid = emu._proc.pid
    before = rss_kib(pid)
    # Each reader asks for the whole ZIP, then (pipelined) a range of it and a JSON page.
    tail = f"Range: bytes=1000-{len(full) - 1}\r\n"
    raw = feed_request(token) + feed_request(token, tail) + get("/api/makes/v2?limit=2")
    slow: List[socket.socket] = [slow_reader(emu, raw) for _ in range(READERS)]
    try:
        time.sleep(1.0)  # the workers have answered the readers' first requests (as far as they go)
        # Answered at all while the readers hold their answers unread: workers held by them would
        # answer only after the 30 s write deadline (past timed_get's 10 s socket timeout), and that
        # deadline would have dropped the readers, who get every answer below (no clock asserted).
        for _ in range(5):
            _, code, body = timed_get(emu, "/api/makes/v2?limit=2")
            assert code == 200 and len(json.loads(body)["data"]) == 2
        # The ZIP is not copied per connection: what a socket does not take is read again later.
        grown = rss_kib(pid) - before
        assert grown < READERS * len(full) // 1024 // 2, f"RSS grew {grown} KiB with a {len(full)} byte ZIP"
        # Every reader still gets all three answers, whole, once it reads.  They read at once (one
        # thread each): the write deadline is total per answer, so readers drained one after another
        # on a slow build (ASan) would see the last ones cut at the deadline, as they should be.
        def drain(s: socket.socket) -> None:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            buf = bytearray()
            code, _, body = read_response(s, buf)
            assert code == 200 and body == full
            code, headers, body = read_response(s, buf)
            assert code == 206 and headers["content-range"] == f"bytes 1000-{len(full) - 1}/{len(full)}"
            assert body == full[1000:]
            code, _, body = read_response(s, buf)
            assert code == 200 and len(json.loads(body)["data"]) == 2

        with ThreadPoolExecutor(max_workers=READERS) as pool:
            for done in [pool.submit(drain, s) for s in slow]:
                done.result()
    finally:
        for s in slow:
            s.close()


def test_a_reader_that_stops_is_dropped_at_the_total_deadline(database: Path) -> None:
    """The write deadline is total per response (--write-timeout), also for a pulled body: a
    reader that stops reading is closed when it passes, and the only worker is free meanwhile."""
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=1,
                  write_timeout=2) as e:
        t, code, body = timed_get(e, BIG)  # rendered and cached: a pulled content provider
        assert code == 200 and len(body) > 300_000
        started = time.monotonic()
        # 32 answers of 325 KB: more than the emulator's socket send buffer takes (at most 4 MiB)
        s = slow_reader(e, get(BIG) * 32)
        try:
            time.sleep(0.5)
            t, code, _ = timed_get(e, "/api/makes/v2?limit=1")
            assert code == 200 and t < 1.5, f"the only worker was held {t:.1f} s"
            time.sleep(max(0.0, started + 4 - time.monotonic()))  # past the 2 s deadline
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            got = len(read_until_close(s, resets=True))  # returns once the emulator has closed it
            assert got < 16 * len(body), f"{got} bytes after the deadline"
        finally:
            s.close()


def test_a_slow_reader_of_a_large_answer_on_httplibs_path_holds_no_worker(emulator: Emulator,
                                                                          tokens: Dict[str, str]) -> None:
    """An answer over the 8 MiB per-connection buffer written on cpp-httplib's own path (here the
    feed ZIP for a GET with a Content-Length header, which the direct path declines) is handed to
    the epoll thread like any other: the worker is free while the reader has not read a byte.
    Before, the worker wrote it itself, waiting on the socket until the 30 s write deadline. Read
    from the emulator's own figures (GET /_emulator/stats, "gate"), not from timing."""
    emu, token = emulator, tokens["premium"]
    with connect(emu, timeout=60) as s:  # the direct path's answer, and the ZIP built once
        s.sendall(feed_request(token))
        code, _, full = read_response(s, bytearray())
    assert code == 200 and len(full) > 8 << 20, f"the feed ZIP ({len(full)} bytes) is not over 8 MiB"
    before = emu.stats()["gate"]
    s = slow_reader(emu, feed_request(token, "Content-Length: 0\r\n"))
    try:
        # Waits (bounded) until the answer is handed over and only the stats request itself holds a worker.
        gate = emu.stats()["gate"]
        for _ in range(600):
            if gate["large_handed"] > before["large_handed"] and gate["busy"] == 1:
                break
            time.sleep(0.1)
            gate = emu.stats()["gate"]
        assert gate["large_handed"] == before["large_handed"] + 1 and gate["busy"] == 1, (before, gate)
        assert gate["worker_writes"] == before["worker_writes"], (before, gate)
        assert gate["buffered_bytes"] > 0  # the answer waits in the buffer, not in a worker
        t, code, body = timed_get(emu, "/api/makes/v2?limit=2")
        assert code == 200 and len(json.loads(body)["data"]) == 2
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        code, headers, body = read_response(s, bytearray())
        assert code == 200 and headers["content-type"] == "application/zip" and body == full
    finally:
        s.close()
