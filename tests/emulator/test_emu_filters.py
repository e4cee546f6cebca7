"""Filters (every Value and Like parameter of every endpoint), json conditions and sorting."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import quote

import pytest

from emu_support import DEMO_SQL, Db, Http, record_fields, search_target
from vehicledata import schema

DEMO_WHERE: Dict[str, str] = {
    "makes": "id IN (SELECT make_id FROM trims WHERE year BETWEEN 2015 AND 2020)",
    "models": "id IN (SELECT model_id FROM trims WHERE year BETWEEN 2015 AND 2020)",
    "obd_codes": "demo = 1",
    "powersports_makes": "id IN (SELECT make_id FROM powersports_model_years WHERE year BETWEEN 2015 AND 2020)",
    "powersports_models": "id IN (SELECT model_id FROM powersports_model_years WHERE year BETWEEN 2015 AND 2020)",
}
# Parameters whose column has another name (the oracle's own list, from SPEC.md and API-NOTES.md).
ALIASES = {"make_model_id": "model_id", "make_model_trim_id": "trim_id", "oem_make_model_id": "model_id",
           "description": "trim_description", "name": "color"}
PREDICATES = {("makes", "year"): "id IN (SELECT make_id FROM trims WHERE year = ?)",
              ("models", "year"): "id IN (SELECT model_id FROM trims WHERE year = ?)",
              ("powersports_makes", "year"): "id IN (SELECT make_id FROM powersports_model_years WHERE year = ?)",
              ("powersports_models", "year"): "id IN (SELECT model_id FROM powersports_model_years WHERE year = ?)"}
SELF_ALIASES = {("makes", "make"): "name", ("models", "model"): "name",
                ("powersports_makes", "make"): "name", ("powersports_models", "model"): "name"}


def columns(table: str) -> List[str]:
    return [f.name for f in schema.table_record(table).fields if f.type != "nested"]


def filter_sql(table: str, name: str, match: str) -> str:
    if (table, name) in PREDICATES:
        return PREDICATES[(table, name)]
    col = SELF_ALIASES.get((table, name)) or (name if name in columns(table) else ALIASES[name])
    return f"{col} {'LIKE' if match == 'like' else '='} ?"


def filter_cases() -> List[Tuple[str, str, str]]:
    out = []
    for e in schema.endpoints().values():
        if e.shape == "envelope" or e.path.startswith("/api/years"):
            required = e.required_parameters()  # powersports `type`: in every target, no condition
            for name, match in e.filters:
                if name not in required:
                    out.append((e.path, name, match))
    return out


def sample_value(db: Db, table: str, name: str, match: str) -> Any:
    demo = DEMO_WHERE.get(table, DEMO_SQL)
    if (table, name) in PREDICATES:
        return 2017
    col = filter_sql(table, name, "value").split(" ")[0]
    if db.one(f"SELECT COUNT({col}) FROM {table}") == 0:
        return None  # a column the dataset leaves empty (series): nothing can match
    value = db.one(f"SELECT {col} FROM {table} WHERE {demo} AND {col} IS NOT NULL AND {col} != '' "
                   f"ORDER BY id LIMIT 1 OFFSET 37" if table != "obd_codes" else
                   f"SELECT {col} FROM {table} WHERE {demo} ORDER BY code LIMIT 1 OFFSET 2")
    assert value is not None, (table, name)
    if match == "like":
        text = str(value)
        return "%" + text[1:4].lower() + "%"
    return value


@pytest.mark.parametrize("path,name,match", filter_cases())
def test_every_filter(api: Http, db: Db, path: str, name: str, match: str) -> None:
    e = schema.endpoint(path)
    table = e.table
    value = sample_value(db, table, name, match)
    if value is None:
        r = api.get(search_target(e, f"{name}=x"))
        assert r.status == 200 and r.json()["collection"]["total"] == 0
        return
    where = f"({filter_sql(table, name, match)}) AND ({DEMO_WHERE.get(table, DEMO_SQL)})"
    target = search_target(e, f"{name}={quote(str(value), safe='')}")
    r = api.get(target)
    assert r.status == 200, r.body
    if path.startswith("/api/years"):
        expected = [row[0] for row in db.all(f"SELECT DISTINCT year FROM {table} WHERE {where} ORDER BY 1 DESC", (value,))]
        assert r.json() == expected and expected
        return
    total = db.count(table, where, (value,))
    assert total > 0, (target, where)
    assert r.json()["collection"]["total"] == total, target


def test_value_filters_match_exactly_and_like_filters_use_wildcards(api: Http, db: Db) -> None:
    assert api.get("/api/trims/v2?make=BM").json()["collection"]["total"] == 0
    assert api.get("/api/trims/v2?trim=Bas").json()["collection"]["total"] == 0  # LIKE without % is exact
    n = db.count("trims", f"trim LIKE 'bas%' AND {DEMO_SQL}")
    assert n > 0
    assert api.get("/api/trims/v2?trim=bas%25").json()["collection"]["total"] == n  # case-insensitive


def test_filters_combine_with_and(api: Http, db: Db) -> None:
    n = db.count("engines", f"make = 'Ford' AND year = 2018 AND cylinders LIKE 'V%' AND {DEMO_SQL}")
    assert n > 0
    r = api.get("/api/engines/v2?make=Ford&year=2018&cylinders=V%25")
    assert r.json()["collection"]["total"] == n


# ---- json conditions ----------------------------------------------------------------------------
def jq(conditions: List[Dict[str, Any]]) -> str:
    return quote(json.dumps(conditions, separators=(",", ":")), safe="")


def total(api: Http, path: str, conditions: List[Dict[str, Any]], token: Optional[str] = None) -> int:
    r = api.get(f"{path}?json={jq(conditions)}", token=token)
    assert r.status == 200, r.body
    return r.json()["collection"]["total"]


@pytest.mark.parametrize("op,val,sql", [
    ("=", 2019, "year = 2019"), ("!=", 2019, "year != 2019"), (">", 2018, "year > 2018"),
    ("<", 2017, "year < 2017"), (">=", 2019, "year >= 2019"), ("<=", 2016, "year <= 2016"),
    ("in", [2015, 2020], "year IN (2015, 2020)"), ("not in", [2015, 2020], "year NOT IN (2015, 2020)"),
])
def test_json_numeric_operators(api: Http, db: Db, op: str, val: Any, sql: str) -> None:
    assert total(api, "/api/trims/v2", [{"field": "year", "op": op, "val": val}]) == \
        db.count("trims", f"{sql} AND {DEMO_SQL}")


def test_json_string_operators_and_nulls(api: Http, db: Db) -> None:
    assert total(api, "/api/trims/v2", [{"field": "make", "op": "like", "val": "%merc%"}]) == \
        db.count("trims", f"make LIKE '%merc%' AND {DEMO_SQL}")
    assert total(api, "/api/trims/v2", [{"field": "make", "op": "not like", "val": "B%"}]) == \
        db.count("trims", f"make NOT LIKE 'B%' AND {DEMO_SQL}")
    assert total(api, "/api/trims/v2", [{"field": "series", "op": "is null"}]) == \
        db.count("trims", f"series IS NULL AND {DEMO_SQL}")
    assert total(api, "/api/trims/v2", [{"field": "series", "op": "not null"}]) == \
        db.count("trims", f"series IS NOT NULL AND {DEMO_SQL}")


def test_json_range_on_one_field_and_decimal_field(api: Http, db: Db) -> None:
    conds = [{"field": "horsepower_hp", "op": ">=", "val": 300}, {"field": "horsepower_hp", "op": "<", "val": 400},
             {"field": "size", "op": ">", "val": 2.5}]
    assert total(api, "/api/engines/v2", conds) == \
        db.count("engines", f"horsepower_hp >= 300 AND horsepower_hp < 400 AND size > 2.5 AND {DEMO_SQL}")


def test_json_dotted_related_fields_on_trims(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    conds = [{"field": "engines.fuel_type", "op": "=", "val": "electric"},
             {"field": "bodies.type", "op": "in", "val": ["SUV", "Sedan"]}]
    where = ("id IN (SELECT trim_id FROM engines WHERE fuel_type = 'electric') AND "
             "id IN (SELECT trim_id FROM bodies WHERE type IN ('SUV', 'Sedan'))")
    assert total(api, "/api/trims/v2", conds) == db.count("trims", f"{where} AND {DEMO_SQL}") > 0
    assert total(api, "/api/trims/v2", conds, tokens["premium"]) == db.count("trims", where)
    assert total(api, "/api/trims", conds) == db.count("trims", f"{where} AND {DEMO_SQL}")


def test_json_legacy_names(api: Http, db: Db) -> None:
    model_id = db.one(f"SELECT model_id FROM bodies WHERE {DEMO_SQL} ORDER BY id LIMIT 1 OFFSET 5")
    assert total(api, "/api/bodies", [{"field": "make_model_id", "op": "=", "val": model_id}]) == \
        db.count("bodies", f"model_id = {model_id} AND {DEMO_SQL}")
    assert total(api, "/api/exterior-colors", [{"field": "name", "op": "like", "val": "%white%"}]) == \
        db.count("exterior_colors", f"color LIKE '%white%' AND {DEMO_SQL}")


def test_json_together_with_filters(api: Http, db: Db) -> None:
    r = api.get(f"/api/mileages/v2?make=Toyota&json={jq([{'field': 'combined_mpg', 'op': '>', 'val': 40}])}")
    assert r.json()["collection"]["total"] == db.count("mileages", f"make = 'Toyota' AND combined_mpg > 40 AND {DEMO_SQL}")
    assert "json=%5B%7B%22field%22" in r.json()["collection"]["first"]


# ---- sorting -------------------------------------------------------------------------------------
SORT_COLUMN = {"Makes.name": "make", "OemMakeModels.name": "model", "OemMakeModelSubmodels.name": "submodel",
               "MakeModelTrims.name": "trim", "MakeModelTrims.year": "year", "MakeModelTrims.id": "id",
               "MakeModelTrims.msrp": "msrp", "OemMakeModelSubmodels.year": "year",
               "make_model_trim_id": "make_model_trim_id", "name": "name"}


def sort_cases() -> List[Tuple[str, str]]:
    return [(e.path, k) for e in schema.endpoints().values() if e.shape == "envelope" for k in e.sort_keys]


def comparable(f: schema.FieldSpec, v: Any) -> Any:
    if f.type == "decimal":
        return float(v)
    if isinstance(v, str):
        return v.encode().lower()  # text sorts COLLATE NOCASE: bytes with ASCII letters folded
    return v


@pytest.mark.parametrize("path,key", sort_cases())
@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_every_sort_key(api: Http, path: str, key: str, direction: str) -> None:
    e = schema.endpoint(path)
    r = api.get(search_target(e, f"sort={key}&direction={direction}&limit=60"))
    assert r.status == 200, r.body
    data = r.json()["data"]
    assert data
    field = SORT_COLUMN.get(key, key)
    fields = {f.name: f for f in record_fields(e.record)}
    if field not in fields:  # e.g. Makes.name on the makes endpoint is the record's name
        field = "name"
    values = [comparable(fields[field], d[field]) for d in data if d[field] is not None]
    assert values == sorted(values, reverse=direction == "desc"), (path, key, values[:10])


def test_sort_then_default_order_breaks_ties(api: Http, db: Db) -> None:
    data = api.get("/api/trims/v2?sort=MakeModelTrims.year&direction=desc&limit=30").json()["data"]
    expected = [r[0] for r in db.all(f"SELECT id FROM trims WHERE {DEMO_SQL} ORDER BY year DESC, id ASC LIMIT 30")]
    assert [d["id"] for d in data] == expected


# ---- text equality folds case, as the service's MySQL collation does ----------------------

def test_value_filters_on_text_ignore_case(api: Http, db: Db) -> None:
    exact = api.get("/api/trims/v2?year=2019&make=BMW&limit=1").json()["collection"]["total"]
    assert exact == db.one("SELECT count(*) FROM trims WHERE year = 2019 AND make = 'BMW'") > 0
    for spelling in ("bmw", "Bmw", "bMW"):
        assert api.get(f"/api/trims/v2?year=2019&make={spelling}&limit=1").json()["collection"]["total"] == exact


def test_json_text_equality_ignores_case_but_ordering_does_not_change(api: Http, db: Db) -> None:
    import json as _json
    from urllib.parse import quote

    def total(conds: list) -> int:
        return api.get("/api/trims/v2?year=2019&limit=1&json=" + quote(_json.dumps(conds))).json()["collection"]["total"]

    bmw = db.one("SELECT count(*) FROM trims WHERE year = 2019 AND make = 'BMW'")
    assert total([{"field": "make", "op": "=", "val": "bmw"}]) == bmw
    assert total([{"field": "make", "op": "in", "val": ["bmw", "TOYOTA"]}]) == db.one(
        "SELECT count(*) FROM trims WHERE year = 2019 AND make IN ('BMW', 'Toyota')")
    assert total([{"field": "make", "op": "!=", "val": "bmw"}]) == db.one(
        "SELECT count(*) FROM trims WHERE year = 2019 AND make != 'BMW'")
    assert total([{"field": "engines.fuel_type", "op": "=", "val": "ELECTRIC"}]) == db.one(
        "SELECT count(*) FROM trims WHERE year = 2019 AND id IN "
        "(SELECT trim_id FROM engines WHERE fuel_type = 'electric')") > 0
