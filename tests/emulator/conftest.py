"""Fixtures of the emulator conformance suite.

Every test talks to a real ``vehicledata-emulator`` process over loopback, on the real database
(the session fixture ``database`` of tests/conftest.py).  Helpers live in emu_support.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterator

import pytest

from emu_support import CONFORMANCE_SECRET, Db, Http
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

# ---- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def db(database: Path) -> Iterator[Db]:
    d = Db(Path(database))
    yield d
    d.con.close()


@pytest.fixture(scope="session")
def emulator(database: Path) -> Iterator[Emulator]:
    """The emulator with limits high enough never to trip (limit tests start their own)."""
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000,
                  jwt_secret=CONFORMANCE_SECRET, threads=4) as emu:
        yield emu


@pytest.fixture(scope="session")
def api(emulator: Emulator) -> Iterator[Http]:
    h = Http(emulator.url)
    yield h
    h.close()


@pytest.fixture(scope="session")
def tokens(api: Http) -> Dict[str, str]:
    return {name: api.login(name) for name in DEMO_ACCOUNTS}


@pytest.fixture()
def clean(emulator: Emulator) -> Iterator[Emulator]:
    """The shared emulator, reset before and after the test (faults, maintenance, clock, counters)."""
    emulator.reset()
    yield emulator
    emulator.reset()


