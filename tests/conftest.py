"""Session fixtures shared by every test directory.

``database``: the emulator database built from the real sources
(``VEHICLEDATA_SOURCES``, as CI passes ``../shared/sources``), cached under
``VEHICLEDATA_HOME`` between runs.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def sources_dir() -> Path:
    value = os.environ.get("VEHICLEDATA_SOURCES")
    if not value:
        pytest.fail("VEHICLEDATA_SOURCES is not set: point it at the raw sources (CI: ../shared/sources)")
    path = Path(value)
    if not (path / "epa-vehicles.csv.zip").is_file():
        pytest.fail(f"VEHICLEDATA_SOURCES={value} has no epa-vehicles.csv.zip")
    return path


@pytest.fixture(scope="session")
def database(sources_dir: Path) -> Path:
    from vehicledata import dataset

    return dataset.ensure_database(sources=sources_dir)
