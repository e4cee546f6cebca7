"""Demo access: makes, models and conditions on related records see only the demo model years
(2015-2020) without a subscription; full access sees every year."""
from __future__ import annotations

import json
from typing import Dict

import pytest

from emu_support import DEMO_SQL, Db, Http


@pytest.mark.parametrize("path,year", [("/api/models/v2", 1990), ("/api/models", 1990),
                                       ("/api/makes/v2", 1985), ("/api/makes", 1985),
                                       ("/api/models/v2", 2021), ("/api/makes/v2", 2014)])
def test_demo_year_filter_outside_the_demo_set_is_empty(api: Http, db: Db, path: str, year: int) -> None:
    # The database does hold such models and makes (a full-access search finds them) ...
    key = "model_id" if "models" in path else "make_id"
    assert db.one(f"SELECT COUNT(DISTINCT {key}) FROM trims WHERE year = ?", (year,)) > 0
    # ... but the demo data-set is model years 2015-2020 only.
    r = api.get(f"{path}?year={year}")
    assert r.status == 200, r.body
    body = r.json()
    assert body["data"] == []
    assert body["collection"]["total"] == 0 and body["collection"]["count"] == 0
    assert body["collection"]["pages"] == 1


def test_demo_year_filter_inside_the_demo_set_is_unchanged(api: Http, db: Db) -> None:
    r = api.get("/api/models/v2?year=2019&limit=1000")
    ids = [m["id"] for m in r.json()["data"]]
    expected = [row[0] for row in db.all(
        "SELECT id FROM models WHERE id IN (SELECT model_id FROM trims WHERE year = 2019) "
        "ORDER BY make, name, id")]
    assert sorted(ids) == sorted(expected) and len(ids) == len(expected) > 0


def test_demo_json_year_condition_outside_the_demo_set_is_empty(api: Http) -> None:
    cond = json.dumps([{"field": "year", "op": "<", "val": 2015}], separators=(",", ":"))
    from urllib.parse import quote
    r = api.get("/api/models/v2?json=" + quote(cond))
    assert r.status == 200, r.body
    assert r.json()["collection"]["total"] == 0 and r.json()["data"] == []


def test_full_access_year_filter_still_sees_every_year(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    expected = db.one("SELECT COUNT(DISTINCT model_id) FROM trims WHERE year = 1990")
    r = api.get("/api/models/v2?year=1990", token=tokens["premium"])
    assert r.json()["collection"]["total"] == expected > 0
    expected_makes = db.one("SELECT COUNT(DISTINCT make_id) FROM trims WHERE year = 1985")
    assert api.get("/api/makes/v2?year=1985", token=tokens["basic"]).json()["collection"]["total"] == expected_makes


def test_demo_related_engine_condition_sees_only_demo_trims(api: Http, db: Db) -> None:
    from urllib.parse import quote
    cond = json.dumps([{"field": "engines.fuel_type", "op": "=", "val": "electric"}], separators=(",", ":"))
    r = api.get("/api/trims/v2?limit=1&json=" + quote(cond))
    expected = db.count("trims", f"{DEMO_SQL} AND id IN (SELECT trim_id FROM engines WHERE fuel_type = 'electric' "
                                 f"AND {DEMO_SQL})")
    assert r.json()["collection"]["total"] == expected > 0
