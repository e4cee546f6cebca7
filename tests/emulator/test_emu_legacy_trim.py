"""/api/trims/{id} and /api/trims items in the public OpenAPI document's shape (MakeModelTrim).

The keys are those of the service's published OpenAPI document 2.1.29, kept here as its member
names only (openapi_trim_keys.json, with the document's sha256): MakeModelTrim's, then make_model (MakeModel + make), make_model_trim_body, _engine,
_mileage objects and make_model_trim_exterior_colors / _interior_colors arrays, without verbose.
Values come from the database.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from emu_support import DEMO_SQL, Db, Http

DOC = Path(__file__).resolve().parent / "openapi_trim_keys.json"


@pytest.fixture(scope="module")
def openapi() -> Dict[str, Any]:
    return json.loads(DOC.read_text())


def keys(doc: Dict[str, Any], name: str) -> List[str]:
    return list(doc["components"]["schemas"][name]["properties"])


def trim_keys(doc: Dict[str, Any]) -> List[str]:
    item = doc["paths"]["/api/trims/{id}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert item["allOf"] == [{"$ref": "#/components/schemas/MakeModelTrim"}]
    return keys(doc, "MakeModelTrim") + list(item["properties"])


def check_trim(doc: Dict[str, Any], db: Db, t: Dict[str, Any]) -> None:
    assert list(t) == trim_keys(doc)
    tid = t["id"]
    assert list(t["make_model"]) == keys(doc, "MakeModel") + ["make"]
    assert list(t["make_model"]["make"]) == keys(doc, "Make")
    body_id = db.one("SELECT MIN(id) FROM bodies WHERE trim_id = ?", (tid,))
    engine_id = db.one("SELECT MIN(id) FROM engines WHERE trim_id = ?", (tid,))
    mileage_id = db.one("SELECT MIN(id) FROM mileages WHERE trim_id = ?", (tid,))
    for member, schema_name, row_id in [("make_model_trim_body", "MakeModelTrimBody", body_id),
                                        ("make_model_trim_engine", "MakeModelTrimEngine", engine_id),
                                        ("make_model_trim_mileage", "MakeModelTrimMileage", mileage_id)]:
        if row_id is None:
            assert t[member] is None
            continue
        assert list(t[member]) == keys(doc, schema_name), member
        assert t[member]["id"] == row_id and t[member]["make_model_trim_id"] == tid
    for member, schema_name, table in [("make_model_trim_exterior_colors", "MakeModelTrimExteriorColor",
                                        "exterior_colors"),
                                       ("make_model_trim_interior_colors", "MakeModelTrimInteriorColor",
                                        "interior_colors")]:
        rows = db.all(f"SELECT id, color, rgb FROM {table} WHERE trim_id = ? ORDER BY id", (tid,))
        assert [list(c) for c in t[member]] == [keys(doc, schema_name)] * len(rows)
        assert [(c["id"], c["name"], c["rgb"]) for c in t[member]] == [tuple(r) for r in rows]
        assert all(c["make_model_trim_id"] == tid for c in t[member])


def test_trim_by_id_has_the_documented_nested_members(api: Http, db: Db, openapi: Dict[str, Any]) -> None:
    tid, model_id, hp = db.all(f"SELECT t.id, t.model_id, e.horsepower_hp FROM trims t JOIN engines e "
                               f"ON e.trim_id = t.id WHERE t.make = 'BMW' AND t.year = 2019 ORDER BY t.id LIMIT 1")[0]
    r = api.get(f"/api/trims/{tid}")
    assert r.status == 200
    t = r.json()
    check_trim(openapi, db, t)
    assert t["make_model"]["id"] == model_id and t["make_model"]["make"]["name"] == "BMW"
    assert t["make_model_trim_engine"]["horsepower_hp"] == hp
    assert len(t["make_model_trim_exterior_colors"]) > 0


def test_verbose_adds_only_the_flat_names(api: Http, db: Db, openapi: Dict[str, Any]) -> None:
    tid = db.one(f"SELECT MIN(id) FROM trims WHERE {DEMO_SQL}")
    plain = api.get(f"/api/trims/{tid}").json()
    verbose = api.get(f"/api/trims/{tid}?verbose=yes").json()
    assert list(verbose) == trim_keys(openapi) + ["make_id", "make", "model"]
    assert {k: verbose[k] for k in plain} == plain


def test_trims_search_items_have_the_same_shape(api: Http, db: Db, openapi: Dict[str, Any]) -> None:
    page = api.get("/api/trims?year=2019&make=Toyota&limit=5").json()
    assert page["collection"]["count"] == 5
    for t in page["data"]:
        check_trim(openapi, db, t)
        assert t == api.get(f"/api/trims/{t['id']}").json()


def test_demo_restriction_applies(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    tid = db.one("SELECT MIN(id) FROM trims WHERE year < 2015")
    assert api.get(f"/api/trims/{tid}").status == 404
    r = api.get(f"/api/trims/{tid}", token=tokens["premium"])
    assert r.status == 200 and r.json()["id"] == tid
