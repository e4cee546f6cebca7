"""The Test Car List: the repository's compact CSV (data/epa-testcar/) and EPA's own XLSX files
(the official refresh, tools/compact_sources.py) read alike. It is read in worker processes;
where a process pool cannot be made (no POSIX semaphores: no /dev/shm, as in AWS Lambda or a bare
chroot) it is read in this process, with the same result (found by `make wheels-test`)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vehicledata.dataset import epa, paths, testcar


def _key(cars: testcar.TestCars):
    return sorted((k, sorted(map(repr, v))) for k, v in cars.by_key.items())


def test_without_a_process_pool_the_list_is_read_here(sources_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = sources_dir / paths.TESTCAR_DIR
    files = testcar.files_in(folder)
    assert [p.name for p in files] == ["epa-testcar-2015-2024.csv.gz"], folder
    pooled = testcar.Reading(files).result()

    def no_semaphores(*args: object, **kw: object) -> None:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(testcar, "ProcessPoolExecutor", no_semaphores)
    here = testcar.Reading(files)
    assert here._pool is None and here._futures == []
    assert _key(here.result()) == _key(pooled) and pooled.by_key


def _as_xlsx(cars: list, path: Path) -> Path:
    """A workbook laid out as EPA's yearly XLSX files: the header row, then one row a test."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Test Vehicle ID", *testcar.COLUMNS])
    for i, c in enumerate(cars):
        ws.append([f"T{i}", c.year, c.mfr_code, c.model, c.displ, c.cylinders, c.hp, c.trans, c.gears, c.drive, c.etw])
    wb.save(path)
    return path


def test_calamine_openpyxl_and_the_compact_csv_read_the_same_configurations(sources_dir: Path,
                                                                               tmp_path: Path) -> None:
    """The builder reads XLSX with python-calamine where installed, else openpyxl, and the repository
    carries a CSV: the content hash must depend on none of them."""
    pytest.importorskip("python_calamine")
    pytest.importorskip("openpyxl")
    compact = testcar.read_file(testcar.files_in(sources_dir / paths.TESTCAR_DIR)[0])
    assert len(compact) > 10_000 and len(set(compact)) == len(compact)
    assert {c.year for c in compact} == set(range(2015, 2025))
    sample = [c for c in compact if c.year == 2019][:1500] + [c for c in compact if c.hp is None][:20]
    xlsx = _as_xlsx(sample, tmp_path / "19tstcar.xlsx")
    fast = testcar._read_xlsx(xlsx)
    assert fast == sample
    assert fast == testcar._read_xlsx_openpyxl(xlsx)
    assert any(c.hp for c in fast) and all(isinstance(c.year, int) and isinstance(c.mfr_code, str) for c in fast)


def test_a_damaged_compact_csv_is_a_source_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "epa-testcar-2015-2024.csv.gz"
    bad.write_bytes(b"\x1f\x8b\x08 not really gzip")
    with pytest.raises(testcar.SourceError, match="epa-testcar-2015-2024.csv.gz: not a readable Test Car List CSV"):
        testcar.read_file(bad)


@pytest.mark.parametrize("reader", ["_read_xlsx", "_read_xlsx_openpyxl"])
def test_a_damaged_xlsx_is_a_source_error_naming_the_file(tmp_path: Path, reader: str) -> None:
    pytest.importorskip("python_calamine" if reader == "_read_xlsx" else "openpyxl")
    bad = tmp_path / "19tstcar.xlsx"
    bad.write_bytes(b"PK\x03\x04 not really a workbook")
    with pytest.raises(testcar.SourceError, match="19tstcar.xlsx: not a readable XLSX file"):
        getattr(testcar, reader)(bad)


def _vehicle(**given: object) -> "epa.Vehicle":
    """An EPA row with the given fields, the others empty (0, "" or False)."""
    blank = {"int": 0, "float": 0.0, "str": "", "bool": False}
    values = {f.name: blank.get(str(f.type).replace("Optional[", "").rstrip("]"), None)
              for f in dataclasses.fields(epa.Vehicle)}
    values.update(given)
    return epa.Vehicle(**values)  # type: ignore[arg-type]


def test_the_lightest_tested_vehicle_of_a_configuration_gives_its_curb_weight() -> None:
    # one configuration tested on three vehicles (its grades weigh differently); another model
    # line of the same engine and a heavier all-wheel-drive configuration stay out
    def car(model: str, hp: int, drive: str, etw: int) -> testcar.TestCar:
        return testcar.TestCar(2020, "NSX", model, 2.5, 4, hp, "CVT", 1, drive, etw)
    cars = testcar.TestCars([car("ALTIMA", 182, "F", 3750), car("ALTIMA", 188, "F", 3500),
                             car("ALTIMA", 182, "F", 3625), car("ALTIMA AWD", 182, "A", 3875),
                             car("ROGUE", 170, "F", 3375)])
    fwd = _vehicle(year=2020, mfr_code="NSX", model="Altima", base_model="Altima", displ=2.5, cylinders=4,
                   drive="Front-Wheel Drive", trany="Automatic (AV-S7)")
    best = cars.match(fwd)
    assert best is not None and best.model == "ALTIMA" and best.hp == 182  # the match is unchanged
    assert cars.lightest_etw(fwd) == 3500
    assert cars.lightest_etw(_vehicle(year=2020, mfr_code="NSX", model="Sentra", displ=2.5, cylinders=4)) is None
