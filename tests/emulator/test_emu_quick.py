"""The reactor's quick path (docs/architecture.md, "The serving rooms"): a response-cache hit that
needs no wait is answered on the gate's reactor thread itself, without a worker; everything else
goes to the workers. `GET /_emulator/stats` counts the quick answers (`gate.quick`), which is how
these tests see which path answered. A quick answer is byte for byte the worker's (Date aside);
pipelined answers keep their order when some are quick and some not; the path declines with logging
on, a fault set, in maintenance, for the VIN decoder, on a cache miss and with the cache off; a
forged or expired JWT gets the worker's answer; rate limits and usage counters count quick answers
as they count the workers'."""
from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import pytest

from emu_support import CONFORMANCE_SECRET, DEMO_SQL, Db, Http, read_answer, read_until_close, strict_json, undated
from vehicledata.testing import Emulator

TARGETS = [
    "/api/trims/v2?limit=100",
    "/api/trims/v2?limit=2&make=Alfa%20Romeo",
    "/api/makes/v2",
    "/api/vehicle-attributes?attribute=engines.engine_type",
]
VARIANTS: List[Tuple[str, List[str]]] = [
    ("GET", []),
    ("GET", ["Accept-Encoding: gzip"]),
    ("HEAD", []),
    ("GET", ["Connection: close"]),
]
VIN = "/api/vin/1HGCM82633A004352"
ELSEWHERE = "/api/not-a-route"  # a fault here touches no request of these tests, but there is one
TTL = 3600


@pytest.fixture(scope="module")
def emu(database: Path) -> Iterator[Emulator]:
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, jwt_secret=CONFORMANCE_SECRET,
                  threads=2, token_ttl=TTL) as e:
        yield e


@pytest.fixture(scope="module")
def callers(emu: Emulator) -> Dict[str, Optional[str]]:
    h = Http(emu.url)
    try:
        return {"none": None, "free": h.login("free"), "premium": h.login("premium")}
    finally:
        h.close()


def quick(emu: Emulator) -> int:
    return int(emu.stats()["gate"]["quick"])


def request(method: str, target: str, token: Optional[str] = None, lines: Sequence[str] = (),
            worker: bool = False) -> bytes:
    """One request's bytes; `worker`: with a field of empty value, which the direct path (and so the
    quick path) declines: the request goes to a worker and httplib, whose answers are the same."""
    head = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    head += list(lines)
    if worker:
        head.append("X-Empty:")
    return ("\r\n".join(head) + "\r\n\r\n").encode()


def exchange(url: str, raw: bytes, head: bool = False) -> bytes:
    """One answer to `raw` on a fresh connection, its Date blanked."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(raw)
        return undated(read_answer(s, head))


def twice(emu: Emulator, raw: bytes, head: bool = False) -> Tuple[bytes, bytes, int]:
    """Two answers to `raw` (fresh connections) and how many of them the reactor gave itself."""
    before = quick(emu)
    first = exchange(emu.url, raw, head)
    second = exchange(emu.url, raw, head)
    return first, second, quick(emu) - before


def split_answers(data: bytes) -> List[bytes]:
    """The answers of a pipelined exchange, each whole (by Content-Length)."""
    out = []
    while data:
        end = data.index(b"\r\n\r\n") + 4
        m = re.search(rb"\r\nContent-Length: (\d+)\r\n", data[:end])
        assert m, data[:end]
        n = end + int(m.group(1))
        out.append(data[:n])
        data = data[n:]
    return out


def test_a_quick_answer_is_the_workers_answer(emu: Emulator, callers: Dict[str, Optional[str]], db: Db) -> None:
    answers: Dict[Tuple[str, str, str, Tuple[str, ...]], Tuple[bytes, bytes]] = {}
    detail = f"/api/trims/v2/{db.one(f'SELECT min(id) FROM trims WHERE {DEMO_SQL}')}"  # every caller's 200
    emu.reset()
    try:
        for target in TARGETS + [detail]:
            for name, token in callers.items():
                for method, lines in VARIANTS:
                    emu.reset()  # (empties the cache) a miss, answered by a worker, then a hit: quick
                    raw = request(method, target, token, lines)
                    miss, hit, took = twice(emu, raw, method == "HEAD")
                    assert took == 1, (target, name, method, lines)
                    assert miss.startswith(b"HTTP/1.1 200 OK\r\n") and miss == hit, (target, name, method, lines)
                    answers[(target, name, method, tuple(lines))] = (miss, hit)
        for (target, name, method, lines), (miss, hit) in answers.items():
            emu.fault(ELSEWHERE, count=1_000_000)  # (empties the cache) with a fault set, a worker answers the hit
            raw = request(method, target, callers[name], lines)
            miss2, hit2, took = twice(emu, raw, method == "HEAD")
            assert took == 0, (target, name, method, lines)
            assert hit2 == miss2 == hit, (target, name, method, lines)
    finally:
        emu.reset()


def test_pipelined_answers_keep_their_order(emu: Emulator, callers: Dict[str, Optional[str]]) -> None:
    emu.reset()
    token = callers["premium"]
    cached = ["/api/makes/v2", "/api/trims/v2?limit=5", "/api/years/v2"]
    for target in cached:
        exchange(emu.url, request("GET", target, token))
    # two hits (the reactor's), a miss and the VIN decoder (a worker's), then hits again
    sequence = cached[:2] + ["/api/trims/v2?limit=7", VIN, cached[2], cached[0]]

    def pipelined(worker: bool) -> Tuple[List[bytes], int]:
        raw = b"".join(request("GET", t, token, [], worker) for t in sequence[:-1])
        raw += request("GET", sequence[-1], token, ["Connection: close"], worker)
        host, port = emu.url.split("//")[1].split(":")
        before = quick(emu)
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(raw)
            data = undated(read_until_close(s))
        return split_answers(data), quick(emu) - before

    mixed, took = pipelined(False)
    assert 2 <= took <= len(sequence) - 2, took  # never the miss nor the VIN
    by_workers, none = pipelined(True)
    assert none == 0
    assert mixed == by_workers
    assert len(mixed) == len(sequence)
    singly = {t: exchange(emu.url, request("GET", t, token)) for t in set(sequence)}
    for target, answer in zip(sequence, mixed):
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), (target, answer[:200])
        assert answer.split(b"\r\n\r\n", 1)[1] == singly[target].split(b"\r\n\r\n", 1)[1], target


def test_the_quick_path_declines_what_it_must_leave_to_a_worker(emu: Emulator,
                                                                 callers: Dict[str, Optional[str]]) -> None:
    token = callers["premium"]
    page = "/api/trims/v2?limit=3"
    emu.reset()
    try:
        _, _, took = twice(emu, request("GET", page, token))
        assert took == 1  # a miss (the first), then a hit
        vin_first, vin_second, took = twice(emu, request("GET", VIN, token))
        assert took == 0 and vin_first == vin_second  # the VIN decoder's answers: cached, not quick
        emu.maintenance(True)
        down, again, took = twice(emu, request("GET", page, token))
        assert took == 0 and down == again and down.startswith(b"HTTP/1.1 503 "), down[:200]
        emu.maintenance(False)
        emu.fault(page.split("?")[0], status=500, count=1)  # a fault on this path: taken by a worker
        failed, ok, took = twice(emu, request("GET", page, token))
        assert took == 0 and failed.startswith(b"HTTP/1.1 500 ") and ok.startswith(b"HTTP/1.1 200 ")
        _, _, took = twice(emu, request("GET", page, token))
        assert took == 2  # the fault taken, the path is quick again
    finally:
        emu.reset()


@pytest.mark.parametrize("extra", [["--log"], ["--response-cache-mb", "0"]])
def test_no_quick_answers_with_logging_or_without_the_cache(database: Path, extra: List[str]) -> None:
    with Emulator(db=database, threads=2, extra_args=extra) as e:
        first, second, took = twice(e, request("GET", "/api/makes/v2"))
        assert took == 0 and first == second and first.startswith(b"HTTP/1.1 200 OK\r\n")


def test_forged_and_expired_tokens_get_the_workers_answer(emu: Emulator, callers: Dict[str, Optional[str]]) -> None:
    premium = callers["premium"]
    assert premium
    page = "/api/trims/v2?limit=2&sort=id"
    emu.reset()
    try:
        full, _, took = twice(emu, request("GET", page, premium))  # the reactor has verified this token
        demo, _, _ = twice(emu, request("GET", page))
        assert took == 1 and full != demo
        forged = premium[:-3] + ("AAA" if not premium.endswith("AAA") else "BBB")
        for token in (forged, "abc.def", premium + "x"):
            first, second, took = twice(emu, request("GET", page, token))
            assert took == 2, token  # the demo page's entry
            assert first == second == exchange(emu.url, request("GET", page, token, worker=True)), token
            assert first.split(b"\r\n\r\n", 1)[1] == demo.split(b"\r\n\r\n", 1)[1], token
        emu.shift_clock(TTL + 60)  # (empties the cache) the premium token has expired
        first, second, took = twice(emu, request("GET", page, premium))
        assert took == 1
        assert first == second == exchange(emu.url, request("GET", page, premium, worker=True))
        assert first.split(b"\r\n\r\n", 1)[1] == demo.split(b"\r\n\r\n", 1)[1]
    finally:
        emu.reset()


def test_quick_answers_count_usage_and_rate_limits(database: Path) -> None:
    limit = 8
    with Emulator(db=database, rate_limit=limit, login_rate_limit=1_000_000, threads=2) as e:
        h = Http(e.url)
        try:
            token = h.login("premium")
        finally:
            h.close()
        page = "/api/makes/v2"

        def get(target: str, worker: bool = False) -> Tuple[int, bytes]:
            # a fresh connection each: a worker keeps a connection for the next request that arrives
            # within 2 ms, which would leave the reactor out
            answer = exchange(e.url, request("GET", target, token, worker=worker))
            return int(answer.split(b" ", 2)[1]), answer.split(b"\r\n\r\n", 1)[1]

        before = quick(e)
        status, body = get(page)  # a miss
        assert status == 200
        for _ in range(4):
            assert get(page) == (200, body)
        assert quick(e) - before == 4
        assert get("/api/account/requests-today") == (200, b'{"count":6}')  # the quick answers counted
        for _ in range(limit - 6):
            assert get(page)[0] == 200
        before = quick(e)
        status, refused = get(page)
        assert quick(e) == before + 1  # refused on the reactor too
        assert status == 429 and strict_json(refused)["exception"] == "TooManyRequestsException", refused
        assert get(page, worker=True) == (429, refused)  # a worker's refusal: the same
        assert quick(e) == before + 1
