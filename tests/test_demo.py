"""The main job (`vehicledata demo`, what `make demo` runs): real vehicles, end to end."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vehicledata.cli import main


def test_demo_prints_the_2019_camry_with_epa_mileage(database: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    trims = con.execute(
        "SELECT t.id, t.description, t.msrp, m.epa_city_mpg, m.epa_highway_mpg, m.combined_mpg "
        "FROM trims t JOIN mileages m ON m.trim_id = t.id "
        "WHERE t.year = 2019 AND t.make = 'Toyota' AND t.model = 'Camry' ORDER BY t.id").fetchall()
    con.close()
    assert trims, "the database has no 2019 Toyota Camry"
    assert f"{len(trims)} trims of the 2019 Toyota Camry:" in out
    lines = out.splitlines()
    for trim_id, description, msrp, city, highway, combined in trims:
        row = next(line for line in lines if line.split()[:1] == [str(trim_id)] and description in line)
        assert row.split()[-1] == str(msrp)
        mpg = next(line for line in lines if line.split()[:1] == [str(trim_id)] and line is not row)
        assert mpg.split()[-3:] == [str(city), str(highway), str(combined)]
    assert out.splitlines()[1].startswith("emulator: http://127.0.0.1:")
