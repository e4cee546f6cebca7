"""Sorting: `direction` without a usable `sort` keeps the default order (as CakePHP's paginator);
text sorts are case-insensitive with an id tie-breaker."""
from __future__ import annotations


from emu_support import DEMO_SQL, Db, Http


MAKES_DEMO = "id IN (SELECT make_id FROM trims WHERE year BETWEEN 2015 AND 2020)"


def test_direction_without_sort_keeps_the_default_order(api: Http, db: Db) -> None:
    # (issue 38 reversed this review fix: CakePHP's paginator ignores `direction` without a listed
    # `sort`; test_emu_paging.py has the cases)
    data = api.get("/api/makes/v2?direction=desc&limit=10").json()["data"]
    assert data == db.records("make", MAKES_DEMO, order="name COLLATE NOCASE ASC, id ASC", limit=10)
    trims = api.get("/api/trims/v2?direction=desc&limit=5").json()["data"]
    assert [t["id"] for t in trims] == [row[0] for row in db.all(
        f"SELECT id FROM trims WHERE {DEMO_SQL} ORDER BY id ASC LIMIT 5")]


def test_text_sort_is_case_insensitive_with_an_id_tie_breaker(api: Http, db: Db) -> None:
    body = api.get("/api/makes/v2?sort=name&direction=desc&limit=1000").json()
    names = [m["name"] for m in body["data"]]
    assert body["data"] == db.records("make", MAKES_DEMO, order="name COLLATE NOCASE DESC, id ASC")
    assert "smart" in names and names.index("Volvo") < names.index("smart")
    asc = [m["name"] for m in api.get("/api/makes/v2?sort=name&limit=1000").json()["data"]]
    assert asc == sorted(asc, key=lambda n: n.encode().lower()) and asc.index("smart") < asc.index("Volvo")
