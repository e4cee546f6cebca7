"""Conformance tests of the review fixes: demo access on makes/models, UTF-8, Range, direction, protocol errors."""
from __future__ import annotations

import json
from typing import Any, Dict, Tuple

import pytest

from emu_support import DEMO_SQL, Db, Http, assert_error, read_until_close


# ---- 1. demo access: makes/models see only demo model years ----------------------------------
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


# ---- 2. every JSON body is valid UTF-8, whatever bytes the request held -------------------------
REPL = "\ufffd"


def raw_request(emulator_url: str, request: bytes, timeout: float = 30) -> Tuple[int, Dict[str, str], bytes]:
    """Send bytes as they are (http.client refuses non-ASCII targets); one request, then close."""
    import socket
    from urllib.parse import urlsplit
    u = urlsplit(emulator_url)
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
        s.sendall(request)
        data = read_until_close(s)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def strict_json(body: bytes) -> Any:
    return json.loads(body.decode("utf-8"))  # raises on invalid UTF-8


@pytest.mark.parametrize("target,path,message", [
    ("/api/trims/v2?year=%FF", "/api/trims/v2", f"Invalid value for year: expected an integer, got '{REPL}'"),
    ("/api/vehicle-attributes?attribute=%C0%AF", "/api/vehicle-attributes",
     f"Invalid attribute '{REPL}{REPL}': expected one of bodies.type, engines.cam_type, engines.cylinders, "
     "engines.drive_type, engines.engine_type, engines.fuel_type, engines.transmission, engines.valve_timing, "
     "engines.valves"),
    ("/api/vin/%FF%FE%FD", "/api/vin/%FF%FE%FD",
     f"Invalid VIN '{REPL}{REPL}{REPL}': expected 17 characters, got 3"),
    ("/api/license-plate?country_code=%FF&lookup=ABC123&region=CA", "/api/license-plate",
     f"Invalid country_code '{REPL}': expected one of US, CA, AU, UK, FR, IE, NZ, MX, DE, CZ, PT"),
])
def test_invalid_utf8_parameters_give_valid_json_errors(api: Http, target: str, path: str, message: str) -> None:
    r = api.get(target)
    assert r.status == 400, r.body
    assert r.headers["content-type"] == "application/json; charset=UTF-8"
    assert strict_json(r.body) == {"exception": "BadRequestException", "code": 400, "url": path, "message": message}


def test_raw_bytes_in_the_target_are_replaced_in_the_envelope(emulator: Any) -> None:
    status, headers, body = raw_request(
        emulator.url, b"GET /api/makes/v2?limit=1&x=\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 200, body
    c = strict_json(body)["collection"]
    assert c["url"] == f"/api/makes/v2?limit=1&x={REPL}{REPL}"
    assert c["first"] == c["url"]


def test_raw_bytes_in_an_unknown_path_give_a_valid_404(emulator: Any) -> None:
    status, headers, body = raw_request(
        emulator.url, b"GET /api/nope\xff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 404
    assert strict_json(body) == {"exception": "NotFoundException", "code": 404, "url": f"/api/nope{REPL}",
                                 "message": "Not Found"}


# ---- 3. data feed Range: 416 with "bytes */SIZE", text/plain errors -------------------------
def feed_size(api: Http, token: str) -> int:
    r = api.get("/api/data-feeds/download", token=token, headers={"Range": "bytes=0-0"})
    assert r.status == 206, r.body[:200]
    assert r.headers["content-range"].startswith("bytes 0-0/")
    return int(r.headers["content-range"].split("/")[1])


@pytest.mark.parametrize("spec", ["{size}-", "99999999-", "{size}-{size}"])
def test_range_at_or_past_the_end_is_416(api: Http, tokens: Dict[str, str], spec: str) -> None:
    size = feed_size(api, tokens["premium"])
    rng = spec.format(size=size)
    r = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": f"bytes={rng}"})
    assert r.status == 416
    assert r.headers["content-type"] == "text/plain; charset=UTF-8"
    assert r.headers["content-range"] == f"bytes */{size}"
    assert r.text == f"Range Not Satisfiable: the range '{rng}' starts at or past the end of the {size}-byte archive"


def test_malformed_range_is_416_text(api: Http, tokens: Dict[str, str]) -> None:
    size = feed_size(api, tokens["premium"])
    r = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": "bytes=10-5"})
    assert r.status == 416
    assert r.headers["content-type"] == "text/plain; charset=UTF-8"
    assert r.headers["content-range"] == f"bytes */{size}"
    assert r.text == "Range Not Satisfiable: malformed Range header 'bytes=10-5'"


def test_suffix_and_open_ranges_are_served(api: Http, tokens: Dict[str, str]) -> None:
    size = feed_size(api, tokens["premium"])
    tail = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": "bytes=-10"})
    assert tail.status == 206
    assert tail.headers["content-range"] == f"bytes {size - 10}-{size - 1}/{size}"
    same = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": f"bytes={size - 10}-"})
    assert same.status == 206 and same.body == tail.body and len(tail.body) == 10
    clamped = api.get("/api/data-feeds/download", token=tokens["premium"],
                      headers={"Range": f"bytes={size - 4}-{size + 100}"})
    assert clamped.status == 206 and clamped.body == tail.body[-4:]
    assert clamped.headers["content-range"] == f"bytes {size - 4}-{size - 1}/{size}"


def test_range_does_not_slice_error_or_json_bodies(api: Http) -> None:
    r = api.get("/api/data-feeds/download", headers={"Range": "bytes=5-"})
    assert r.status == 401 and "content-range" not in r.headers
    assert r.text == "Unauthorized: a valid JWT is required"
    whole = api.get("/api/makes/v2?limit=2")
    ranged = api.get("/api/makes/v2?limit=2", headers={"Range": "bytes=0-10"})
    assert ranged.status == 200 and "content-range" not in ranged.headers
    assert ranged.json() == whole.json()


# ---- 4. direction without sort; case-insensitive text sorting ------------------------------
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


# ---- 5. protocol-level errors ---------------------------------------------------------------
def test_414_names_a_url(emulator: Any) -> None:
    status, headers, body = raw_request(
        emulator.url, b"GET /api/trims/v2?x=" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 414
    assert strict_json(body) == {"exception": "UriTooLongException", "code": 414, "url": "/",
                                 "message": "URI Too Long: the request line is over 8192 bytes"}


def test_login_without_a_body_is_answered_at_once_as_text(emulator: Any) -> None:
    # No Content-Length: the body is empty (RFC 9112 6.3); httplib alone would wait for its 10 s read
    # timeout, longer than this socket's timeout, so a hang fails here.
    status, headers, body = raw_request(
        emulator.url, b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=8)
    assert status == 400
    assert headers["content-type"] == "text/plain; charset=UTF-8"
    assert body == b'Bad Request: the body must be JSON {"api_token": ..., "api_secret": ...}'


def test_login_body_over_one_mebibyte_is_413_text(api: Http) -> None:
    r = api.request("POST", "/api/auth/login", body=b"x" * (2 * 1024 * 1024))
    assert r.status == 413
    assert r.headers["content-type"] == "text/plain; charset=UTF-8"
    assert r.text == "Payload Too Large: the body is over 1048576 bytes"


@pytest.mark.parametrize("method", ["TRACE", "FOO", "CONNECT"])
def test_unknown_method_on_a_known_path_is_405(api: Http, method: str) -> None:
    r = api.request(method, "/api/trims/v2")
    assert r.status == 405
    assert r.headers["allow"] == "GET, HEAD"
    assert r.headers["content-type"] == "application/json; charset=UTF-8"
    assert r.json() == {"exception": "MethodNotAllowedException", "code": 405, "url": "/api/trims/v2",
                        "message": f"Method Not Allowed: {method} is not valid for /api/trims/v2 (use GET)"}


def test_unknown_method_on_an_unknown_path_is_404(api: Http) -> None:
    r = api.request("FOO", "/api/nope")
    assert r.status == 404
    assert r.json() == {"exception": "NotFoundException", "code": 404, "url": "/api/nope", "message": "Not Found"}


def test_page_past_the_last_of_a_one_page_result_is_404(api: Http, db: Db) -> None:
    target = "/api/trims/v2?year=2019&make=BMW&limit=1000&page=2"
    total = db.count("trims", "year = 2019 AND make = 'BMW'")
    assert 0 < total <= 1000
    r = api.get(target)
    assert r.status == 404
    assert r.json() == {"exception": "NotFoundException", "code": 404, "url": "/api/trims/v2",
                        "message": "Page 2 is past the last page (1) of this search"}
