"""pytest plugin (registered through the ``pytest11`` entry point ``vehicledata``).

Fixtures for users' own test suites:

``vehicledata_emulator``
    A session-scoped :class:`vehicledata.testing.Emulator` over the default database
    (:func:`vehicledata.dataset.ensure_database`).  Its state is reset before each test that uses
    ``vehicledata_emulator_clean``.
``vehicledata_emulator_clean``
    The same emulator, reset (rate windows, usage, faults, maintenance, clock) for this test.

Options: ``--vehicledata-emulator-db PATH`` picks the database, ``--vehicledata-emulator-arg ARG``
(repeatable) passes extra flags to the executable.
"""
from __future__ import annotations

from typing import Iterator

import pytest

from .emulator import Emulator


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vehicledata")
    group.addoption("--vehicledata-emulator-db", default=None, help="database for the vehicledata_emulator fixture")
    group.addoption("--vehicledata-emulator-arg", action="append", default=[],
                    help="extra flag for the vehicledata emulator (repeatable)")


@pytest.fixture(scope="session")
def vehicledata_emulator(request: pytest.FixtureRequest) -> Iterator[Emulator]:
    db = request.config.getoption("--vehicledata-emulator-db")
    extra = request.config.getoption("--vehicledata-emulator-arg")
    with Emulator(db=db, extra_args=extra) as emu:
        yield emu


@pytest.fixture()
def vehicledata_emulator_clean(vehicledata_emulator: Emulator) -> Iterator[Emulator]:
    vehicledata_emulator.reset()
    yield vehicledata_emulator
    vehicledata_emulator.reset()
