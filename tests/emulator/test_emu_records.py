"""Records: the schema table's field order, decimals as strings, nulls as null, nested arrays."""
from __future__ import annotations

from typing import Dict, List, Tuple

import pytest

from emu_support import DEMO_SQL, Db, Http, render_row, search_target, select_list
from vehicledata import schema

# Default order and demo restriction of each search endpoint, as docs/emulator.md states them.
DEFAULT_ORDER: Dict[str, str] = {
    # Text columns sort case-insensitively (COLLATE NOCASE), as the live service's MySQL collation does.
    "/api/makes/v2": "name COLLATE NOCASE ASC, id ASC", "/api/makes": "name COLLATE NOCASE ASC, id ASC",
    "/api/models/v2": "make COLLATE NOCASE ASC, name COLLATE NOCASE ASC, id ASC",
    "/api/models": "make COLLATE NOCASE ASC, name COLLATE NOCASE ASC, id ASC",
    "/api/makes/powersports": "name COLLATE NOCASE ASC, id ASC",
    "/api/models/powersports": "make COLLATE NOCASE ASC, name COLLATE NOCASE ASC, id ASC",
    "/api/submodels/v2": "year DESC, make COLLATE NOCASE ASC, model COLLATE NOCASE ASC, "
                         "submodel COLLATE NOCASE ASC, id ASC",
    "/api/obd-codes": "code COLLATE NOCASE ASC",
}
DEMO_WHERE: Dict[str, str] = {
    "makes": "id IN (SELECT make_id FROM trims WHERE year BETWEEN 2015 AND 2020)",
    "models": "id IN (SELECT model_id FROM trims WHERE year BETWEEN 2015 AND 2020)",
    "obd_codes": "demo = 1",
    "powersports_makes": "id IN (SELECT make_id FROM powersports_model_years WHERE year BETWEEN 2015 AND 2020)",
    "powersports_models": "id IN (SELECT model_id FROM powersports_model_years WHERE year BETWEEN 2015 AND 2020)",
}


def search_endpoints() -> List[schema.Endpoint]:
    return [e for e in schema.endpoints().values() if e.shape == "envelope"]


@pytest.mark.parametrize("path", [e.path for e in search_endpoints()])
@pytest.mark.parametrize("page", [1, 3])
def test_demo_page_equals_database_rows(api: Http, db: Db, path: str, page: int) -> None:
    e = schema.endpoint(path)
    where = DEMO_WHERE.get(e.table, DEMO_SQL)
    limit = 25
    expected = db.records(e.record, where, order=DEFAULT_ORDER.get(path, "id ASC"), limit=limit,
                          offset=(page - 1) * limit)
    total = db.count(e.table, where)
    r = api.get(search_target(e, f"limit={limit}&page={page}"))
    if (page - 1) * limit >= total > 0:  # past the last page: CakePHP's NotFoundException
        assert r.status == 404 and r.json()["exception"] == "NotFoundException"
        return
    body = r.json()
    assert body["collection"]["total"] == total
    data = body["data"]
    nested_keys = {f.name for f in schema.record(e.record).fields if f.type == "nested"}
    # Nested members (legacy trims) are compared in test_emu_legacy_trim.py: the scalar fields here.
    data = [{k: v for k, v in d.items() if k not in nested_keys} for d in data]
    assert data == expected
    for d, x in zip(body["data"], expected):
        assert [k for k in d if k not in nested_keys] == list(x)  # field order of the schema table


@pytest.mark.parametrize("path", [e.path for e in search_endpoints() if e.verbose])
def test_verbose_adds_hidden_descriptors(api: Http, db: Db, path: str) -> None:
    e = schema.endpoint(path)
    plain = api.get(f"{path}?limit=5&verbose=no").json()["data"]
    verbose = api.get(f"{path}?limit=5&verbose=yes").json()["data"]
    assert [d["id"] for d in plain] == [d["id"] for d in verbose]
    expected = db.records(e.record, DEMO_SQL, order="id ASC", limit=5, verbose=True)
    for v, x in zip(verbose, expected):
        for k, value in x.items():
            assert v[k] == value, (k, v, x)
    added = set(verbose[0]) - set(plain[0])
    assert {"make", "model"} <= added


def test_engine_record_matches_the_live_shape(api: Http, db: Db) -> None:
    trim_id = db.one(f"SELECT trim_id FROM engines WHERE {DEMO_SQL} AND size IS NOT NULL ORDER BY id LIMIT 1")
    r = api.get(f"/api/engines/v2?trim_id={trim_id}")
    rec = r.json()["data"][0]
    assert list(rec)[:12] == ["id", "make_id", "model_id", "submodel_id", "trim_id", "year", "make", "model",
                              "series", "submodel", "trim", "trim_description"]
    size = db.one("SELECT size FROM engines WHERE trim_id = ?", (trim_id,))
    assert rec["size"] == f"{size:.1f}"
    assert isinstance(rec["horsepower_hp"], (int, type(None)))
    assert f'"size":"{size:.1f}"'.encode() in r.body


def test_nulls_are_null(api: Http, db: Db) -> None:
    trim_id = db.one(f"SELECT trim_id FROM mileages WHERE {DEMO_SQL} AND range_electric IS NULL ORDER BY id LIMIT 1")
    r = api.get(f"/api/mileages/v2?trim_id={trim_id}")
    assert r.json()["data"][0]["range_electric"] is None
    assert b'"range_electric":null' in r.body


def nested(db: Db, record: str, trim_id: int) -> List[dict]:
    return db.records(record, "trim_id = ?", (trim_id,), order="id")


def test_trim_detail_has_every_array(api: Http, db: Db) -> None:
    trim_id = db.one(f"SELECT id FROM trims WHERE {DEMO_SQL} AND make = 'Toyota' ORDER BY id LIMIT 1")
    body = api.get(f"/api/trims/v2/{trim_id}").json()
    trim = db.records("trim", "id = ?", (trim_id,))[0]
    assert list(body)[: len(trim)] == list(trim)
    assert {k: body[k] for k in trim} == trim
    assert list(body)[len(trim):] == ["bodies", "engines", "transmissions", "drive_types", "mileages",
                                      "exterior_colors", "interior_colors"]
    assert body["bodies"] == nested(db, "body_legacy", trim_id)
    assert body["engines"] == nested(db, "engine_legacy", trim_id)
    assert body["mileages"] == nested(db, "mileage_legacy", trim_id)
    assert body["exterior_colors"] == nested(db, "exterior_color_legacy", trim_id)
    assert body["interior_colors"] == nested(db, "interior_color_legacy", trim_id)
    assert len(body["exterior_colors"]) > 1
    assert list(body["exterior_colors"][0]) == ["id", "make_model_trim_id", "name", "rgb"]
    transmissions = [r[0] for r in db.all("SELECT DISTINCT transmission FROM engines WHERE trim_id = ? AND "
                                          "transmission IS NOT NULL ORDER BY 1", (trim_id,))]
    assert body["transmissions"] == [{"description": t} for t in transmissions]
    drives = [r[0] for r in db.all("SELECT DISTINCT drive_type FROM engines WHERE trim_id = ? AND "
                                   "drive_type IS NOT NULL ORDER BY 1", (trim_id,))]
    assert body["drive_types"] == [{"description": d} for d in drives]


def make_model(db: Db, model_id: int) -> dict:
    mid, make_id, name = db.all("SELECT id, make_id, name FROM models WHERE id = ?", (model_id,))[0]
    make = db.all("SELECT id, name FROM makes WHERE id = ?", (make_id,))[0]
    return {"id": mid, "make_id": make_id, "name": name, "make": {"id": make[0], "name": make[1]}}


LEGACY_NESTED = ["make_model", "make_model_trim_body", "make_model_trim_engine", "make_model_trim_mileage",
                 "make_model_trim_exterior_colors", "make_model_trim_interior_colors"]


def test_legacy_trim_detail_and_list(api: Http, db: Db) -> None:
    trim_id, model_id = db.all(f"SELECT id, model_id FROM trims WHERE {DEMO_SQL} ORDER BY id LIMIT 1 OFFSET 40")[0]
    body = api.get(f"/api/trims/{trim_id}").json()
    scalar = db.records("trim_legacy", "id = ?", (trim_id,))[0]
    assert list(body) == list(scalar) + LEGACY_NESTED
    assert {k: body[k] for k in scalar} == scalar
    assert body["make_model"] == make_model(db, model_id)
    assert body["make_model_trim_body"] == (nested(db, "body_legacy", trim_id) or [None])[0]
    assert body["make_model_trim_engine"] == (nested(db, "trim_engine_legacy", trim_id) or [None])[0]
    assert body["make_model_trim_mileage"] == (nested(db, "mileage_legacy", trim_id) or [None])[0]
    assert body["make_model_trim_exterior_colors"] == nested(db, "exterior_color_legacy", trim_id)
    assert body["make_model_trim_interior_colors"] == nested(db, "interior_color_legacy", trim_id)
    listed = api.get(f"/api/trims?make_model_id={model_id}&year={body['year']}").json()["data"]
    assert body in listed


def test_legacy_trim_verbose_adds_the_flat_names_not_arrays(api: Http, db: Db) -> None:
    trim_id = db.one(f"SELECT id FROM trims WHERE {DEMO_SQL} ORDER BY id LIMIT 1 OFFSET 77")
    body = api.get(f"/api/trims/{trim_id}?verbose=yes").json()
    make, model, make_id = db.all("SELECT make, model, make_id FROM trims WHERE id = ?", (trim_id,))[0]
    assert list(body)[-3:] == ["make_id", "make", "model"]
    assert (body["make_id"], body["make"], body["model"]) == (make_id, make, model)
    assert body["make_model_trim_interior_colors"] == nested(db, "interior_color_legacy", trim_id)
    assert not {"bodies", "engines", "interior_colors", "transmissions"} & set(body)


def test_years_are_newest_first(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    assert api.get("/api/years/v2").json() == [2020, 2019, 2018, 2017, 2016, 2015]
    full = [r[0] for r in db.all("SELECT DISTINCT year FROM trims ORDER BY year DESC")]
    assert api.get("/api/years", token=tokens["premium"]).json() == full
    bmw = [r[0] for r in db.all(f"SELECT DISTINCT year FROM trims WHERE make = 'BMW' AND {DEMO_SQL} ORDER BY 1 DESC")]
    assert api.get("/api/years/v2?make=BMW").json() == bmw


@pytest.mark.parametrize("attribute", schema.attributes())
def test_vehicle_attributes(api: Http, db: Db, attribute: str) -> None:
    table, column = attribute.split(".")
    expected = [str(r[0]) for r in db.all(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL "
                                          f"ORDER BY {column}")]
    assert expected
    assert api.get(f"/api/vehicle-attributes?attribute={attribute}").json() == expected


def test_obd_codes_demo_and_full(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    demo = api.get("/api/obd-codes").json()
    assert [d["code"] for d in demo["data"]] == ["B1200", "C1091", "P0100", "U1000"]
    assert demo["data"][2] == {"code": "P0100", "description": db.one(
        "SELECT description FROM obd_codes WHERE code = 'P0100' ORDER BY make IS NOT NULL LIMIT 1")}
    assert api.get("/api/obd-codes/p0100").json() == demo["data"][2]
    full_code = db.one("SELECT code FROM obd_codes WHERE demo = 0 AND make IS NULL ORDER BY code LIMIT 1")
    r = api.get(f"/api/obd-codes/{full_code}")
    assert r.status == 404 and r.json()["exception"] == "RecordNotFoundException"
    r = api.get(f"/api/obd-codes/{full_code}", token=tokens["premium"])
    assert r.status == 200 and r.json()["code"] == full_code
    assert api.get("/api/obd-codes?limit=1", token=tokens["premium"]).json()["collection"]["total"] == \
        db.count("obd_codes")


def test_select_list_helper_covers_record_fields() -> None:
    # The oracle's own sanity: it selects exactly the record's JSON fields.
    assert select_list("make") == "id, name"
    assert render_row("make", (1, "x")) == {"id": 1, "name": "x"}
