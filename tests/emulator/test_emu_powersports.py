"""Powersports (issue 20, deliverable 6): /api/{years,makes,models}/powersports with the required
`type` (street_motorcycle, the one value of the public OpenAPI document), answered from vPIC's
motorcycle makes and models (dataset/powersports.py) and checked against the database."""
from __future__ import annotations

import json
from typing import Dict
from urllib.parse import quote

import pytest

from emu_support import Db, Http, assert_error

TYPE = "type=street_motorcycle"
PATHS = ("/api/years/powersports", "/api/makes/powersports", "/api/models/powersports")


def test_the_tables_hold_vpic_motorcycles(db: Db):
    # Numbers of the lite vPIC of the shared sources (docs/dataset.md, "Powersports").
    assert db.count("powersports_models") > 9000 and db.count("powersports_makes") > 1500
    assert db.one("SELECT COUNT(*) FROM powersports_models WHERE make = 'Harley-Davidson'") > 100
    assert db.all("SELECT MIN(year), MAX(year) FROM powersports_model_years") == [(1980, 2027)]
    # Every model year belongs to a model of the same make.
    assert db.one("SELECT COUNT(*) FROM powersports_model_years y JOIN powersports_models m ON m.id = y.model_id "
                  "WHERE m.make_id != y.make_id OR m.make != y.make OR m.name != y.model") == 0


def test_years_are_the_model_years_newest_first(api: Http, db: Db, tokens: Dict[str, str]):
    r = api.get(f"/api/years/powersports?{TYPE}&make=Harley-Davidson", tokens["premium"])
    assert r.status == 200
    expected = [y for (y,) in db.all("SELECT DISTINCT year FROM powersports_model_years "
                                     "WHERE make = 'Harley-Davidson' ORDER BY year DESC")]
    assert r.json() == expected and len(expected) > 10
    # Without a subscription: the demo years only.
    demo = api.get(f"/api/years/powersports?{TYPE}").json()
    assert demo == [2020, 2019, 2018, 2017, 2016, 2015]


def test_makes_are_records_of_vpic_motorcycle_makes(api: Http, db: Db, tokens: Dict[str, str]):
    r = api.get(f"/api/makes/powersports?{TYPE}&make=har%25&year=2019&limit=1000", tokens["premium"])
    assert r.status == 200
    body = r.json()
    expected = db.records("powersports_make", "name LIKE 'har%' AND id IN "
                          "(SELECT make_id FROM powersports_model_years WHERE year = 2019)",
                          order="name COLLATE NOCASE, id")
    assert body["data"] == expected and expected
    assert {"id", "name"} == set(expected[0])
    assert body["collection"]["total"] == len(expected)
    assert "Harley-Davidson" in [m["name"] for m in expected]


def test_models_are_records_with_their_make(api: Http, db: Db, tokens: Dict[str, str]):
    target = f"/api/models/powersports?{TYPE}&make=Harley-Davidson&year=2019&limit=1000"
    r = api.get(target, tokens["premium"])
    assert r.status == 200
    expected = db.records("powersports_model", "make LIKE 'Harley-Davidson' AND id IN "
                          "(SELECT model_id FROM powersports_model_years WHERE year = 2019)",
                          order="make COLLATE NOCASE, name COLLATE NOCASE, id")
    assert r.json()["data"] == expected and len(expected) > 5
    assert list(expected[0]) == ["id", "make_id", "name", "make"]
    # The json parameter: the SDK's `make in [...]` with a year.
    cond = quote(json.dumps([{"field": "make", "op": "in", "val": ["Harley-Davidson"]},
                             {"field": "year", "op": "=", "val": 2019}]))
    by_json = api.get(f"/api/models/powersports?{TYPE}&json={cond}&limit=1000", tokens["premium"])
    assert by_json.status == 200 and by_json.json()["data"] == expected


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("query", ["", "?make=Honda", "?type="])  # an empty value is no value
def test_a_missing_type_is_a_400(api: Http, path: str, query: str, tokens: Dict[str, str]):
    r = api.get(path + query, tokens["premium"])
    assert_error(r, 400, "BadRequestException", path)
    assert r.json()["message"] == "The type parameter is required: one of street_motorcycle"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("value", ["atv", "Street_Motorcycle", "street_motorcycle,atv"])
def test_a_bad_type_is_a_400(api: Http, path: str, value: str, tokens: Dict[str, str]):
    r = api.get(f"{path}?type={value}&limit=1", tokens["premium"])
    assert_error(r, 400, "BadRequestException", path)
    assert r.json()["message"] == f"Invalid type '{value}': expected one of street_motorcycle"
