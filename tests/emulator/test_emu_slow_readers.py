"""Slow readers cost a buffer, not a worker (issue 25, item 1): connections that pipeline requests
for large answers and never read them used to hold every worker for the write timeout (30 s);
the gate now buffers a worker's answer (up to 8 MiB per connection) and sends it as the socket
drains, so other clients are served at once, and the slow connections get their whole answers
when they finally read."""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from emu_support import read_response
from test_emu_hostile import connect, get, hostport
from vehicledata.testing import Emulator

BIG = "/api/trims/v2?limit=1000&verbose=yes"


@pytest.fixture(scope="module")
def emu(database: Path) -> Iterator[Emulator]:
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=4) as e:
        yield e


def slow_reader(emu: Emulator, requests: int) -> socket.socket:
    """A connection with a 4 KB receive buffer that pipelines `requests` large answers."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(hostport(emu))
    s.sendall(get(BIG) * requests)
    return s


def test_slow_readers_do_not_hold_the_workers(emu: Emulator) -> None:
    with connect(emu) as s:
        s.sendall(get(BIG))
        code, _, body = read_response(s, bytearray())
    assert code == 200 and len(body) > 300_000  # 16 of them are more than the socket buffers hold
    slow: List[socket.socket] = [slow_reader(emu, 16) for _ in range(8)]  # twice the 4 workers
    try:
        time.sleep(1.0)  # the workers have taken the slow connections' requests
        # Answered at all while the 8 readers still hold their answers unread: workers held by them
        # would answer only after the 30 s write deadline (past this socket's 10 s), and that
        # deadline would have dropped the readers, who get every answer below (no clock asserted).
        with connect(emu, timeout=10) as s:
            s.sendall(get("/api/makes/v2?limit=2", "Connection: close\r\n"))
            code, _, body = read_response(s, bytearray())
        assert code == 200 and len(json.loads(body)["data"]) == 2
        # The slow readers still get all 16 answers, whole, once they read.
        for s in slow:
            buf = bytearray()
            answers = [read_response(s, buf) for _ in range(16)]
            assert [a[0] for a in answers] == [200] * 16
            assert all(len(a[2]) > 300_000 and json.loads(a[2])["data"] for a in answers)
    finally:
        for s in slow:
            s.close()

