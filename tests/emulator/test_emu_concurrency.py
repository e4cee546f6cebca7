"""Many clients at once: every answer equals the one-at-a-time answer (bounded, loopback only)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

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
