"""VIN decoding over the vPIC tables (a simple decoder: model year, WMI make, schema patterns)."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Dict, Iterator

import pytest

from emu_support import Db, Http, assert_error

TESLA = "5YJ3E1EA7KF317000"      # 2019 Tesla Model 3
HONDA = "1HGCM82633A004352"      # 2003 Honda Accord EX-V6 coupe


@pytest.fixture(scope="module")
def vpic(db: Db) -> Iterator[sqlite3.Connection]:
    rel = db.one("SELECT value FROM meta WHERE key = 'vpic_path'")
    if not rel:
        pytest.skip("this database has no vPIC tables")
    path = Path(db.path).parent / rel
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    yield con
    con.close()


def test_decodes_a_demo_year_vin(api: Http, db: Db, vpic: sqlite3.Connection) -> None:
    r = api.get(f"/api/vin/{TESLA}")
    assert r.status == 200, r.body
    body = r.json()
    assert list(body) == ["year", "make", "model", "trim", "specs", "trims"]
    make = vpic.execute("SELECT m.Name FROM Wmi w JOIN Make m ON m.Id = w.MakeId WHERE w.Wmi = '5YJ'").fetchone()[0]
    assert (body["year"], body["make"], body["model"]) == (2019, make, "Model 3")
    public = vpic.execute("SELECT COUNT(*) FROM Element WHERE ifnull(IsPrivate, 0) = 0").fetchone()[0]
    assert len(body["specs"]) == public
    assert body["specs"]["model_year"] == "2019" and body["specs"]["make"] == make
    assert all(v is None or isinstance(v, str) for v in body["specs"].values())
    ids = [row[0] for row in db.all("SELECT id FROM trims WHERE year = 2019 AND make = ? COLLATE NOCASE "
                                    "AND model LIKE 'Model 3%' ORDER BY id", (make,))]
    assert ids and [t["id"] for t in body["trims"]] == ids
    assert set(body["trims"][0]) >= {"id", "make_model_id", "name", "make_model"}


def test_verbose_adds_the_per_trim_arrays(api: Http) -> None:
    t = api.get(f"/api/vin/{TESLA}?verbose=yes").json()["trims"][0]
    assert {"bodies", "engines", "mileages", "exterior_colors", "interior_colors"} <= set(t)
    assert t["engines"][0]["make_model_trim_id"] == t["id"]


def test_years_outside_the_demo_need_a_subscription(api: Http, tokens: Dict[str, str], vpic: sqlite3.Connection) -> None:
    assert_error(api.get(f"/api/vin/{HONDA}"), 404, "NotFoundException", f"/api/vin/{HONDA}", "demo")
    body = api.get(f"/api/vin/{HONDA}", token=tokens["premium"]).json()
    assert (body["year"], body["make"], body["model"], body["trim"]) == (2003, "Honda", "Accord", "EX-V6")
    trims = api.get(f"/api/vin/{HONDA}?all_trims=yes", token=tokens["premium"]).json()["trims"]
    assert len(trims) >= len(body["trims"])


@pytest.mark.parametrize("vin,status,exception,part", [
    ("123", 400, "BadRequestException", "17 characters"),
    ("1HGCM82633A00435I", 400, "BadRequestException", "without I, O, Q"),
    ("1HGCM82633A004352X", 400, "BadRequestException", "17 characters"),
    ("ZZZCMXA23KA004352", 404, "NotFoundException", "(WMI) 'ZZZ'"),
    ("1HGCM82630A004352", 400, "BadRequestException", "model year"),
])
def test_bad_vins(api: Http, vpic: sqlite3.Connection, vin: str, status: int, exception: str, part: str) -> None:
    assert_error(api.get(f"/api/vin/{vin}"), status, exception, f"/api/vin/{vin}", part)


def test_bad_flags(api: Http, vpic: sqlite3.Connection) -> None:
    assert_error(api.get(f"/api/vin/{TESLA}?verbose=maybe"), 400, "BadRequestException", f"/api/vin/{TESLA}", "verbose")
    assert_error(api.get(f"/api/vin/{TESLA}?all_trims=1"), 400, "BadRequestException", f"/api/vin/{TESLA}", "all_trims")
