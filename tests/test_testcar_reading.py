"""The Test Car List is read in two worker processes; where a process pool cannot be made (no
POSIX semaphores: no /dev/shm, as in AWS Lambda or a bare chroot) it is read in this process,
with the same result (found by `make wheels-test` in the Debian roots)."""
from __future__ import annotations

from pathlib import Path

import pytest

from vehicledata.dataset import paths, testcar


def _key(cars: testcar.TestCars):
    return sorted((k, sorted(map(repr, v))) for k, v in cars.by_key.items())


def test_without_a_process_pool_the_list_is_read_here(sources_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = sources_dir / paths.TESTCAR_DIR
    files = [p for p in testcar.files_in(folder) if p.suffix.lower() == ".csv"]  # 2015, 2016: quick to read
    assert files, folder
    pooled = testcar.Reading(files).result()

    def no_semaphores(*args: object, **kw: object) -> None:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(testcar, "ProcessPoolExecutor", no_semaphores)
    here = testcar.Reading(files)
    assert here._pool is None and here._futures == []
    assert _key(here.result()) == _key(pooled) and pooled.by_key


def test_calamine_and_openpyxl_read_the_same_configurations(sources_dir: Path) -> None:
    """The builder reads XLSX with python-calamine where installed, else openpyxl: the content
    hash must not depend on which one a machine has."""
    pytest.importorskip("python_calamine")
    pytest.importorskip("openpyxl")
    folder = sources_dir / paths.TESTCAR_DIR
    xlsx = [p for p in testcar.files_in(folder) if p.suffix.lower() == ".xlsx"]
    assert xlsx, folder
    smallest = min(xlsx, key=lambda p: p.stat().st_size)
    fast = testcar._read_xlsx(smallest)
    assert len(fast) > 1000
    assert fast == testcar._read_xlsx_openpyxl(smallest)
    assert any(c.hp for c in fast) and all(isinstance(c.year, int) and isinstance(c.mfr_code, str) for c in fast)


@pytest.mark.parametrize("reader", ["_read_xlsx", "_read_xlsx_openpyxl"])
def test_a_damaged_xlsx_is_a_source_error_naming_the_file(tmp_path: Path, reader: str) -> None:
    pytest.importorskip("python_calamine" if reader == "_read_xlsx" else "openpyxl")
    bad = tmp_path / "19tstcar.xlsx"
    bad.write_bytes(b"PK\x03\x04 not really a workbook")
    with pytest.raises(testcar.SourceError, match="19tstcar.xlsx: not a readable XLSX file"):
        getattr(testcar, reader)(bad)
