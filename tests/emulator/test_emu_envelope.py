"""Collection envelope: url echo, counts, pages and the rebuilt links, on several pages."""
from __future__ import annotations

import math
from urllib.parse import quote_plus

import pytest

from emu_support import DEMO_SQL, Db, Http, envelope_endpoints, required_query, search_target
from vehicledata import schema

MEMBERS = ["url", "count", "pages", "total", "next", "prev", "first", "last"]


def link(path: str, others: str, page: int, limit: int) -> str:
    return f"{path}?{others}{'&' if others else ''}page={page}&limit={limit}"


def test_live_service_example_shape(api: Http, db: Db) -> None:
    """API-NOTES' example: /api/trims/v2?limit=10&model=Range%20Rover, page 1."""
    target = "/api/trims/v2?limit=10&model=Range%20Rover"
    r = api.get(target)
    assert r.status == 200
    assert r.headers["content-type"].startswith("application/json")
    total = db.count("trims", f"model = 'Range Rover' AND {DEMO_SQL}")
    assert total > 10
    pages = math.ceil(total / 10)
    body = r.json()
    assert list(body) == ["collection", "data"]
    c = body["collection"]
    assert list(c) == MEMBERS
    assert c == {
        "url": target, "count": 10, "pages": pages, "total": total,
        "next": "/api/trims/v2?model=Range+Rover&page=2&limit=10", "prev": "",
        "first": target, "last": f"/api/trims/v2?model=Range+Rover&page={pages}&limit=10",
    }
    # The live service's escaping: "/" as "\/" and "&" as "\u0026".
    assert b'"url":"\\/api\\/trims\\/v2?limit=10\\u0026model=Range%20Rover"' in r.body
    assert b'"prev":""' in r.body


@pytest.mark.parametrize("page", [1, 2, 3, 4])
def test_links_on_every_page(api: Http, db: Db, page: int) -> None:
    limit = 7
    total = db.count("trims", f"make = 'BMW' AND year = 2019")
    pages = math.ceil(total / limit)
    assert pages >= 4
    target = f"/api/trims/v2?make=BMW&year=2019&page={page}&limit={limit}"
    c = api.get(target).json()["collection"]
    others = "make=BMW&year=2019"
    assert c["url"] == target
    assert c["total"] == total and c["pages"] == pages
    assert c["count"] == min(limit, total - (page - 1) * limit)
    assert c["next"] == (link("/api/trims/v2", others, page + 1, limit) if page < pages else "")
    assert c["prev"] == (link("/api/trims/v2", others, page - 1, limit) if page > 1 else "")
    assert c["first"] == (target if page == 1 else link("/api/trims/v2", others, 1, limit))
    assert c["last"] == link("/api/trims/v2", others, pages, limit)


def test_last_page_and_beyond(api: Http, db: Db) -> None:
    limit = 9
    total = db.count("trims", "make = 'Audi' AND year = 2018")
    pages = math.ceil(total / limit)
    last = api.get(f"/api/trims/v2?make=Audi&year=2018&limit={limit}&page={pages}").json()
    assert last["collection"]["next"] == ""
    assert last["collection"]["count"] == total - (pages - 1) * limit == len(last["data"])
    beyond = api.get(f"/api/trims/v2?make=Audi&year=2018&limit={limit}&page={pages + 5}")
    assert beyond.status == 404
    assert beyond.json() == {"exception": "NotFoundException", "code": 404, "url": "/api/trims/v2",
                             "message": f"Page {pages + 5} is past the last page ({pages}) of this search"}


def test_single_page_has_empty_links_and_first_is_the_request(api: Http, db: Db) -> None:
    make, model, total = db.all(
        "SELECT make, model, COUNT(*) n FROM trims WHERE year = 2019 AND make = 'BMW' GROUP BY make, model "
        "HAVING n BETWEEN 2 AND 100 ORDER BY n DESC, model LIMIT 1")[0]
    target = f"/api/trims/v2?make={make}&model={quote_plus(model).replace('+', '%20')}&year=2019"
    c = api.get(target).json()["collection"]
    assert c == {"url": target, "count": total, "pages": 1, "total": total, "next": "", "prev": "",
                 "first": target, "last": ""}


def test_empty_result(api: Http) -> None:
    target = "/api/trims/v2?make=NoSuchMake"
    body = api.get(target).json()
    assert body == {"collection": {"url": target, "count": 0, "pages": 1, "total": 0, "next": "", "prev": "",
                                   "first": target, "last": ""}, "data": []}


def test_default_limit_is_100_and_links_carry_it(api: Http, db: Db) -> None:
    total = db.count("trims", DEMO_SQL)
    c = api.get("/api/trims/v2").json()["collection"]
    assert c["count"] == 100 and c["total"] == total and c["pages"] == math.ceil(total / 100)
    assert c["next"] == "/api/trims/v2?page=2&limit=100"


def test_link_parameters_keep_order_and_are_form_encoded(api: Http) -> None:
    value = 'Range Rover & "Co"/x'
    target = "/api/trims/v2?limit=1&model=" + quote_plus(value).replace("+", "%20") + "&year=2019&make=Land%20Rover"
    c = api.get(target).json()["collection"]
    assert c["url"] == target
    expected_others = "model=" + quote_plus(value, safe="") + "&year=2019&make=Land+Rover"
    if c["total"] > 1:
        assert c["next"] == f"/api/trims/v2?{expected_others}&page=2&limit=1"
    # Nothing matches this model: the links are empty, the echo is exact.
    assert c["next"] == ""


def test_repeated_parameter_keeps_first_place_and_last_value(api: Http, db: Db) -> None:
    c = api.get("/api/trims/v2?year=2015&make=BMW&year=2019&limit=2").json()["collection"]
    assert c["total"] == db.count("trims", "year = 2019 AND make = 'BMW'")
    assert c["next"] == "/api/trims/v2?year=2019&make=BMW&page=2&limit=2"


@pytest.mark.parametrize("endpoint", [e.path for e in envelope_endpoints()])
def test_every_search_endpoint_has_the_envelope(api: Http, endpoint: str) -> None:
    e = schema.endpoint(endpoint)
    required = required_query(e) + "&" if required_query(e) else ""  # powersports: type=street_motorcycle
    target = search_target(e, "limit=3&page=2")
    r = api.get(target)
    assert r.status == 200, r.body
    body = r.json()
    assert list(body) == ["collection", "data"]
    c = body["collection"]
    assert list(c) == MEMBERS
    assert c["url"] == target
    assert c["count"] == len(body["data"]) <= 3
    assert c["first"] == f"{endpoint}?{required}page=1&limit=3"
    assert c["prev"] == f"{endpoint}?{required}page=1&limit=3"
    for k in ("next", "prev", "first", "last"):
        assert isinstance(c[k], str)
