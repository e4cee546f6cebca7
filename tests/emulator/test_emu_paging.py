"""Paging and sorting as CakePHP's numeric paginator (API-NOTES, "Paging, sorting, filtering").

page and limit are PHP-(int)-cast and clamped, direction defaults to asc, an unknown sort is
ignored, a page past the last is 404 NotFoundException, an empty match is page 1 of 1. Totals
come from the database; the data of a normalised request equals that of its canonical form.
"""
from __future__ import annotations

import math
from typing import Any, Dict

import pytest

from emu_support import DEMO_SQL, Db, Http

BASE = "/api/trims/v2"
FILTER = "year=2019&make=BMW"
WHERE = "year = 2019 AND make = 'BMW'"


def collection(target: str, others: str, page: int, limit: int, total: int) -> Dict[str, Any]:
    pages = max(1, math.ceil(total / limit))

    def link(p: int) -> str:
        return f"{BASE}?{others}{'&' if others else ''}page={p}&limit={limit}"

    return {"url": target, "count": max(0, min(limit, total - (page - 1) * limit)), "pages": pages,
            "total": total, "next": link(page + 1) if page < pages else "", "prev": link(page - 1) if page > 1 else "",
            "first": target if page == 1 else link(1), "last": link(pages) if pages > 1 else ""}


@pytest.mark.parametrize("raw,page", [("0", 1), ("-1", 1), ("abc", 1), ("2x", 2), (" 2", 2), ("1.9", 1),
                                      ("1e0", 1), ("99999999999999999999999", None)])
def test_page_is_int_cast_and_at_least_one(api: Http, db: Db, raw: str, page: Any) -> None:
    total = db.count("trims", WHERE)
    limit = 5
    target = f"{BASE}?{FILTER}&page={raw.replace(' ', '%20')}&limit={limit}"
    r = api.get(target)
    if page is None:  # saturates at PHP_INT_MAX-ish: past the last page
        assert r.status == 404
        body = r.json()
        assert body["exception"] == "NotFoundException" and body["url"] == BASE
        return
    assert r.status == 200, r.body
    body = r.json()
    assert body["collection"] == collection(target, FILTER, page, limit, total)
    canonical = api.get(f"{BASE}?{FILTER}&page={page}&limit={limit}").json()
    assert body["data"] == canonical["data"] and len(body["data"]) == body["collection"]["count"]


@pytest.mark.parametrize("raw,limit", [("abc", 1), ("0", 1), ("-7", 1), ("3x", 3), ("100000", 1000),
                                       ("1001", 1000)])
def test_limit_is_int_cast_and_clamped(api: Http, db: Db, raw: str, limit: int) -> None:
    total = db.count("trims", DEMO_SQL)
    assert total > 1000
    target = f"{BASE}?limit={raw}"
    r = api.get(target)
    assert r.status == 200, r.body
    body = r.json()
    assert body["collection"] == collection(target, "", 1, limit, total)
    assert body["data"] == api.get(f"{BASE}?limit={limit}").json()["data"]


@pytest.mark.parametrize("direction", ["up", "sideways", "ASC", "", "Desc"])
def test_direction_anything_but_asc_or_desc_is_asc(api: Http, db: Db, direction: str) -> None:
    target = f"{BASE}?{FILTER}&sort=MakeModelTrims.msrp&direction={direction}&limit=50"
    r = api.get(target)
    assert r.status == 200, r.body
    want = "desc" if direction.lower() == "desc" else "asc"
    msrps = [x["msrp"] for x in r.json()["data"]]
    assert msrps == sorted(msrps, reverse=want == "desc")
    assert r.json()["data"] == api.get(f"{BASE}?{FILTER}&sort=MakeModelTrims.msrp&direction={want}&limit=50").json()["data"]
    assert r.json()["collection"] == collection(target, f"{FILTER}&sort=MakeModelTrims.msrp&direction={direction}",
                                                1, 50, db.count("trims", WHERE))


@pytest.mark.parametrize("sort", ["bogus", "msrp", "Makes.id", "%FF%FE"])
def test_unknown_sort_is_ignored(api: Http, db: Db, sort: str) -> None:
    target = f"{BASE}?{FILTER}&sort={sort}&limit=40"
    r = api.get(target)
    assert r.status == 200, r.body
    assert r.json()["data"] == api.get(f"{BASE}?{FILTER}&limit=40").json()["data"]
    c = r.json()["collection"]
    assert (c["count"], c["total"]) == (min(40, db.count("trims", WHERE)), db.count("trims", WHERE))


MAKES_DEMO = "id IN (SELECT make_id FROM trims WHERE year BETWEEN 2015 AND 2020)"


@pytest.mark.parametrize("query", ["direction=desc", "direction=DESC", "direction=asc", "sort=bogus&direction=desc",
                                   "sort=&direction=desc", "sort=Makes.name%00&direction=desc",
                                   "direction=desc&sort=Makes.id"])  # makes/v2 lists Makes.name, name, id
def test_direction_without_a_usable_sort_is_ignored(api: Http, db: Db, query: str) -> None:
    # CakePHP's paginator applies `direction` only to a whitelisted `sort` (validateSort drops both
    # otherwise): the default order (makes by name, then id) whatever the direction (issue 38).
    target = f"/api/makes/v2?{query}&limit=10"
    r = api.get(target)
    assert r.status == 200, r.body
    assert r.json()["data"] == db.records("make", MAKES_DEMO, order="name COLLATE NOCASE ASC, id ASC", limit=10)
    assert r.json()["data"] == api.get("/api/makes/v2?limit=10").json()["data"]
    assert r.json()["collection"]["url"] == target


@pytest.mark.parametrize("direction", ["desc", "asc"])
def test_direction_without_sort_keeps_every_default_order(api: Http, db: Db, direction: str) -> None:
    trims = api.get(f"/api/trims/v2?direction={direction}&limit=5").json()["data"]
    assert [t["id"] for t in trims] == [row[0] for row in db.all(
        f"SELECT id FROM trims WHERE {DEMO_SQL} ORDER BY id ASC LIMIT 5")]
    # submodels: year descending, make, model, submodel, id; `direction=asc` does not turn the year around
    subs = api.get(f"/api/submodels/v2?direction={direction}&limit=5").json()["data"]
    assert [s["id"] for s in subs] == [row[0] for row in db.all(
        f"SELECT id FROM submodels WHERE {DEMO_SQL} ORDER BY year DESC, make COLLATE NOCASE, model COLLATE NOCASE, "
        "submodel COLLATE NOCASE, id LIMIT 5")]
    codes = api.get(f"/api/obd-codes?direction={direction}&limit=1000").json()["data"]
    assert [c["code"] for c in codes] == sorted(c["code"] for c in codes)


def test_direction_with_a_listed_sort_still_applies(api: Http, db: Db) -> None:
    data = api.get("/api/makes/v2?sort=Makes.name&direction=desc&limit=10").json()["data"]
    assert data == db.records("make", MAKES_DEMO, order="name COLLATE NOCASE DESC, id ASC", limit=10)


def test_page_past_the_last_is_404(api: Http, db: Db) -> None:
    total = db.count("trims", WHERE)
    pages = math.ceil(total / 10)
    assert api.get(f"{BASE}?{FILTER}&limit=10&page={pages}").status == 200
    r = api.get(f"{BASE}?{FILTER}&limit=10&page={pages + 1}")
    assert r.status == 404
    assert r.headers["content-type"] == "application/json; charset=UTF-8"
    assert r.json() == {"exception": "NotFoundException", "code": 404, "url": BASE,
                        "message": f"Page {pages + 1} is past the last page ({pages}) of this search"}


def test_empty_match_is_page_one_of_one_and_page_two_is_404(api: Http) -> None:
    target = f"{BASE}?make=NoSuchMake"
    r = api.get(target)
    assert r.status == 200
    assert r.json() == {"collection": {"url": target, "count": 0, "pages": 1, "total": 0, "next": "", "prev": "",
                                       "first": target, "last": ""}, "data": []}
    r = api.get(f"{BASE}?make=NoSuchMake&page=2")
    assert r.status == 404
    assert r.json() == {"exception": "NotFoundException", "code": 404, "url": BASE,
                        "message": "Page 2 is past the last page (1) of this search"}


@pytest.mark.parametrize("target,message", [
    ("/api/trims/v2?year=abc&page=0", "Invalid value for year: expected an integer, got 'abc'"),
    ("/api/trims/v2?limit=0&json=%5B", None),
])
def test_filters_and_json_still_answer_400(api: Http, target: str, message: Any) -> None:
    r = api.get(target)
    assert r.status == 400
    body = r.json()
    assert list(body) == ["exception", "code", "url", "message"]
    assert body["exception"] == "BadRequestException" and body["url"] == "/api/trims/v2"
    if message:
        assert body["message"] == message
    else:
        assert body["message"].startswith("Invalid json parameter")
