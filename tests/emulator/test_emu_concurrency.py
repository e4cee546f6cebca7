"""Many clients at once: every answer equals the one-at-a-time answer (bounded, loopback only)."""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

from emu_support import Http, read_response
from test_emu_hostile import connect, get
from vehicledata.testing import Emulator

TARGETS = [
    "/api/trims/v2?limit=100", "/api/trims/v2?limit=50&page=7", "/api/bodies/v2?limit=20&make=Ford",
    "/api/engines?verbose=yes&limit=10", "/api/trims?verbose=yes&limit=3", "/api/makes/v2",
    "/api/years/v2?make=Toyota", "/api/exterior-colors/v2?limit=200&page=3", "/api/trims/v2?sort=Makes.name",
    "/api/vehicle-attributes?attribute=engines.fuel_type", "/api/trims/v2?page=x",
]


def test_parallel_clients_get_identical_answers(emulator: Emulator, tokens: Dict[str, str]) -> None:
    one = Http(emulator.url)
    expected = {t: one.get(t, token=tokens["basic"]) for t in TARGETS}
    one.close()

    def worker(n: int) -> List[bool]:
        h = Http(emulator.url)
        out = []
        for i in range(40):
            t = TARGETS[(n + i) % len(TARGETS)]
            r = h.get(t, token=tokens["basic"])
            out.append(r.status == expected[t].status and r.body == expected[t].body)
        h.close()
        return out

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = [ok for chunk in pool.map(worker, range(8)) for ok in chunk]
    assert len(results) == 320 and all(results)


def gate_stats(h: Http) -> Dict[str, Any]:
    r = h.get("/_emulator/stats")
    assert r.status == 200
    gate: Dict[str, Any] = r.json()["gate"]
    return gate


def test_by_default_twice_the_cores_compute_at_once(emulator: Emulator) -> None:
    """More runnable workers than that only queue in the kernel (docs/reliability.md, "Worker count")."""
    h = Http(emulator.url)
    gate = gate_stats(h)
    h.close()
    assert gate["compute"] == min(gate["workers"], max(2, 2 * len(os.sched_getaffinity(0))))


def test_a_sleeping_request_leaves_its_turn_of_the_cores_to_the_others(database: object) -> None:
    """One worker of two may compute at once; a delay fault's sleep is a wait, not a turn: while it
    sleeps (60 s) the other worker answers, and the sleeper is still asleep after those answers."""
    with Emulator(db=database, rate_limit=1_000_000, threads=2, compute_workers=1) as emu:
        emu.fault("/api/years", action="delay", delay_ms=60_000)
        answered: List[int] = []

        def sleeper() -> None:
            s = Http(emu.url)
            try:
                answered.append(s.get("/api/years/v2").status)
            except OSError:  # the emulator stopped first
                pass
            s.close()

        threading.Thread(target=sleeper, daemon=True).start()
        h = Http(emu.url)
        deadline = time.monotonic() + 60
        while gate_stats(h)["waiting"] == 0:  # the sleeper's request has reached its fault
            assert time.monotonic() < deadline, "the delayed request never started waiting"
            time.sleep(0.05)
        makes = h.get("/api/makes/v2")
        assert makes.status == 200 and len(makes.json()["data"]) > 0
        gate = gate_stats(h)
        assert gate["workers"] == 2 and gate["compute"] == 1
        assert gate["waiting"] == 1 and answered == []  # answered beside the sleeper, not after it
        h.close()


KEPT = 6  # kept connections: more than the workers that may wait for one (half of them)


def test_kept_connections_speaking_at_once_are_all_answered(database: object) -> None:
    """The keep-alive turns (docs/reliability.md, "Keep-alive on the worker"): of 4 workers at most
    2 wait for their kept connection's next request and 1 computes at once, so a request arriving
    while a worker waits often finds the one turn taken (the waiting worker queues it) or no worker
    waiting for it (the epoll thread queues it). Whichever way each goes, 6 kept connections that
    all send at once, round after round (half of them two pipelined requests), get every answer
    exactly, and so does each one sending right behind an uncached page that holds the turn; while
    they sit idle, fresh connections are answered; and they are still served after. (With the
    waiting worker's queueing replaced by an abort, 20 runs of 20 failed: the path is taken.)"""
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=4, compute_workers=1,
                  idle_timeout=600) as emu:
        h = Http(emu.url)
        auth = f"Authorization: Bearer {h.login('basic')}\r\n"
        h.close()

        def request(t: str, extra: str = "") -> bytes:
            return get(t, auth + extra)

        targets = TARGETS[:KEPT]
        with connect(emu, timeout=60) as s:
            buf = bytearray()
            expected = {}
            for t in targets:
                s.sendall(request(t))
                expected[t] = read_response(s, buf)
        assert all(code == 200 and json.loads(body)["data"] for code, _, body in expected.values())

        def answers_match(s: socket.socket, buf: bytearray, sent: List[str]) -> bool:
            got = [read_response(s, buf) for _ in sent]
            return all(g[0] == expected[t][0] and g[2] == expected[t][2] for g, t in zip(got, sent))

        kept = [connect(emu, timeout=60) for _ in range(KEPT)]
        bufs = [bytearray() for _ in kept]
        heavy, heavy_buf = connect(emu, timeout=60), bytearray()
        try:
            for n in range(30):
                sent = []
                for i, s in enumerate(kept):
                    paths = [targets[(n + i) % KEPT]] + ([targets[(n + i + 1) % KEPT]] if i % 2 else [])
                    s.sendall(b"".join(request(t) for t in paths))
                    sent.append(paths)
                assert all(answers_match(s, b, p) for s, b, p in zip(kept, bufs, sent)), f"round {n}"
            # A kept connection's next request right behind a page the response cache does not
            # hold (its limit differs every time): one worker renders that page while the kept
            # connection's worker, waiting for it, finds no free turn.
            for n in range(30):
                for i, s in enumerate(kept):
                    limit = 500 + n * KEPT + i
                    heavy.sendall(request(f"/api/trims/v2?verbose=yes&limit={limit}"))
                    s.sendall(request(targets[i]))
                    assert answers_match(s, bufs[i], [targets[i]]), f"round {n}"
                    code, _, body = read_response(heavy, heavy_buf)
                    assert code == 200 and len(json.loads(body)["data"]) == limit
            for n in range(2 * KEPT):  # the kept connections idle, open
                t = targets[n % KEPT]
                with connect(emu, timeout=60) as s:
                    s.sendall(request(t, "Connection: close\r\n"))
                    assert answers_match(s, bytearray(), [t])
            for i, s in enumerate(kept):
                s.sendall(request(targets[i]))
            assert all(answers_match(s, b, [targets[i]]) for i, (s, b) in enumerate(zip(kept, bufs)))
            h = Http(emu.url)
            gate = gate_stats(h)
            h.close()
            assert gate["workers"] == 4 and gate["compute"] == 1 and gate["queued"] == 0
        finally:
            for s in kept + [heavy]:
                s.close()
