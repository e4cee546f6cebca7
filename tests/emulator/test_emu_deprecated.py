"""--deprecated-403: deprecated paths answer as the live service was seen to (API-NOTES.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from emu_support import Http
from vehicledata.testing import Emulator


@pytest.fixture(scope="module")
def strict(database: Path) -> Iterator[Http]:
    with Emulator(db=database, deprecated_403=True) as emu:
        h = Http(emu.url)
        yield h
        h.close()


@pytest.mark.parametrize("target, v2", [
    ("/api/trims?year=2019", "/api/trims/v2"),
    ("/api/trims/40605", "/api/trims/v2/{id}"),
    ("/api/bodies", "/api/bodies/v2"),
    ("/api/engines?verbose=yes", "/api/engines/v2"),
    ("/api/mileages", "/api/mileages/v2"),
    ("/api/exterior-colors", "/api/exterior-colors/v2"),
    ("/api/interior-colors", "/api/interior-colors/v2"),
    ("/api/years", "/api/years/v2"),
    ("/api/makes", "/api/makes/v2"),
    ("/api/models", "/api/models/v2"),
])
def test_deprecated_paths_answer_403(strict: Http, target: str, v2: str) -> None:
    r = strict.get(target)
    assert r.status == 403
    assert r.body == json.dumps({"exception": "DeprecatedException",
                                 "message": f"This endpoint is being deprecated. Use {v2} instead.",
                                 "code": 403}, separators=(",", ":")).replace("/", "\\/").encode()


def test_current_paths_are_unaffected(strict: Http) -> None:
    assert strict.get("/api/trims/v2?year=2019&limit=1").status == 200
    assert strict.get("/api/trims/v2/40605").status == 200


def test_without_the_flag_deprecated_paths_answer(api: Http) -> None:
    assert api.get("/api/trims?year=2019&limit=1").status == 200
