"""Many clients at once: every answer equals the one-at-a-time answer (bounded, loopback only)."""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

from emu_support import Http
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
