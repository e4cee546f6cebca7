"""The route table is the schema's endpoint table: every endpoint answers at its path and method,
and nothing else does."""
from __future__ import annotations

import json
from typing import Dict, List

import pytest

from emu_support import Db, Http
from vehicledata import schema
from vehicledata.testing import DEMO_ACCOUNTS

# What each kind needs to answer 200 (the query string); path parameters come from the database.
QUERIES = {"attributes": "?attribute=bodies.type", "plate": "?country_code=US&lookup=ABC%23TEST&region=CA"}


def sample_target(db: Db, e: schema.Endpoint) -> str:
    values = {"id": db.one("SELECT MIN(id) FROM trims WHERE year = 2019"),
              "code": db.one("SELECT MIN(code) FROM obd_codes WHERE demo = 1"),
              "vin": "1HGCM82633A004352"}
    path = e.path.replace("{" + e.parameter + "}", str(values[e.parameter])) if e.parameter else e.path
    query = QUERIES.get(e.kind, "")
    for name, allowed in e.required_parameters().items():  # powersports: type=street_motorcycle
        query += ("&" if query else "?") + f"{name}={allowed[0]}"
    return path + query


@pytest.mark.parametrize("path", list(schema.endpoints()))
def test_every_endpoint_answers_at_its_path_and_method(api: Http, db: Db, tokens: Dict[str, str], path: str):
    e = schema.endpoints()[path]
    target = sample_target(db, e)
    if e.kind == "login":
        acct = DEMO_ACCOUNTS["premium"]
        r = api.post_json(target, {"api_token": acct["api_token"], "api_secret": acct["api_secret"]})
        assert r.status == 200 and r.text.count(".") == 2
    elif e.kind == "feed_download":
        r = api.get(target, tokens["premium"], headers={"Range": "bytes=0-3"})
        assert (r.status, r.body) == (206, b"PK\x03\x04")
    else:
        r = api.get(target, tokens["premium"])
        assert r.status == 200, (target, r.body[:200])
        body = r.json()
        if e.shape == "envelope":
            assert body["collection"]["url"] == target and body["data"]
        elif e.shape == "array":
            assert isinstance(body, list) and body
        else:
            assert isinstance(body, dict)
            if e.parameter in ("id", "code"):
                assert str(body[e.parameter]) == target.rsplit("/", 1)[1]
    # Any other method: 405 naming the endpoint's own (and HEAD with GET, RFC 9110 section 9.3.2).
    other = "GET" if e.method == "POST" else "POST"
    r = api.request(other, target, token=tokens["premium"], body=b"{}")
    assert r.status == 405 and r.headers["allow"] == ("GET, HEAD" if e.method == "GET" else e.method)


def test_verbose_is_read_from_the_endpoint(api: Http, db: Db, tokens: Dict[str, str]):
    trim = db.one("SELECT MIN(id) FROM trims WHERE year = 2019")
    detail = schema.endpoint_for("detail", "trims")
    legacy = schema.endpoint_for("detail", "trims", deprecated=True)
    plain = api.get(legacy.path.replace("{id}", str(trim)), tokens["premium"]).json()
    verbose = api.get(legacy.path.replace("{id}", str(trim)) + "?verbose=yes", tokens["premium"]).json()
    assert set(verbose) - set(plain) == {"make_id", "make", "model"}
    assert detail.verbose is False and legacy.verbose is True
    # The v2 detail does not take verbose: the parameter is ignored, the record unchanged.
    v2 = detail.path.replace("{id}", str(trim))
    assert api.get(v2 + "?verbose=maybe", tokens["premium"]).body == api.get(v2, tokens["premium"]).body
    r = api.get(legacy.path.replace("{id}", str(trim)) + "?verbose=maybe", tokens["premium"])
    assert r.status == 400 and "Invalid verbose 'maybe': expected yes or no" in r.json()["message"]


@pytest.mark.parametrize("target", ["/api/nope", "/api/trims/v2/1/x", "/api/trims/1/x", "/api/vin/", "/api/trimsx",
                                    "/api/obd-codes/P0100/x", "/api"])
def test_paths_outside_the_table_are_not_found(api: Http, target: str):
    r = api.get(target)
    assert r.status == 404
    assert r.json() == {"exception": "NotFoundException", "code": 404, "url": target, "message": "Not Found"}


def test_a_trailing_slash_is_the_same_route(api: Http, tokens: Dict[str, str]):
    targets: List[str] = [schema.endpoint_for("search", "makes").path, schema.endpoint_for("years").path]
    for t in targets:
        a, b = api.get(t + "?limit=5", tokens["premium"]), api.get(t + "/?limit=5", tokens["premium"])
        assert a.status == b.status == 200
        assert json.loads(a.body).__class__ is json.loads(b.body).__class__
