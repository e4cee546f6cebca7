"""Malformed requests: each answered with the right 4xx and a body naming the problem, never a 500."""
from __future__ import annotations

import json
from typing import List, Tuple
from urllib.parse import quote

import pytest

from emu_support import Http, assert_error, read_until_close, required_query
from vehicledata import schema

Case = Tuple[str, int, str, str]  # target, status, exception, message part


def jq(value: object) -> str:
    return quote(value if isinstance(value, str) else json.dumps(value), safe="")


def search_cases() -> List[Case]:
    cases: List[Case] = []
    for e in schema.endpoints().values():
        if e.shape != "envelope":
            continue
        # Required parameters (powersports `type`) come first, so each case names its own problem.
        p = e.path + ("?" + required_query(e) + "&" if required_query(e) else "?")
        # page, limit, sort and direction are normalised, never a 400 (test_emu_paging.py).
        cases += [
            (f"{p}page=%zz", 400, "BadRequestException", "percent-encoding"),
        ]
        if e.verbose:
            cases.append((f"{p}verbose=maybe", 400, "BadRequestException", "verbose 'maybe'"))
        if e.json_fields:
            cases += [
                (f"{p}json={jq('[')}", 400, "BadRequestException", "Invalid json parameter"),
                (f"{p}json={jq([{'field': 'no_such_field', 'op': '=', 'val': 1}])}", 400, "BadRequestException",
                 "no_such_field"),
                (f"{p}json={jq([{'field': e.json_fields[0].name, 'op': '~', 'val': 1}])}", 400,
                 "BadRequestException", "~"),
            ]
        else:
            cases.append((f"{p}json={jq([])}", 400, "BadRequestException", "not accepted"))
        for name, match in e.filters:
            f = schema.table_record(e.table).fields
            col = next((x for x in f if x.name == name), None)
            if match == "value" and col is not None and col.type in ("int", "int64"):
                cases.append((f"{p}{name}=abc", 400, "BadRequestException", f"Invalid value for {name}"))
    return cases


JSON_CASES: List[Case] = [
    (f"/api/trims/v2?json={jq(v)}", 400, "BadRequestException", part) for v, part in [
        ({}, "Invalid json parameter"),
        ([1], "Invalid json parameter"),
        ([{"op": "=", "val": 1}], "Invalid json parameter"),
        ([{"field": "year", "val": 2019}], "year"),
        ([{"field": "year", "op": "="}], "year"),
        ([{"field": "year", "op": "in", "val": 2019}], "year"),
        ([{"field": "year", "op": ">", "val": "abc"}], "year"),
        ([{"field": "year", "op": "is null", "val": 1}], "year"),
        ([{"field": "engines.nothing", "op": "=", "val": "x"}], "engines.nothing"),
        ('[{"field":"year","op":"=","val":2019}', "Invalid json parameter"),
        ("x" * 7000, "Invalid json parameter"),
        ([{"field": "year", "op": ">", "val": i} for i in range(40)], "Invalid json parameter"),
    ]
]

OTHER_CASES: List[Case] = [
    ("/api/trims/v2/abc", 400, "BadRequestException", "trim id 'abc'"),
    ("/api/trims/v2/-5", 400, "BadRequestException", "trim id '-5'"),
    ("/api/trims/v2/99999999999", 404, "RecordNotFoundException", "Record not found"),
    ("/api/trims/v2/0", 404, "RecordNotFoundException", "Record not found"),
    ("/api/trims/abc", 400, "BadRequestException", "trim id"),
    ("/api/trims/99999999", 404, "RecordNotFoundException", "Record not found"),
    ("/api/trims/1?verbose=maybe", 400, "BadRequestException", "verbose"),
    ("/api/obd-codes/ZZZZ", 404, "RecordNotFoundException", "Record not found"),
    ("/api/obd-codes/" + "X" * 20, 400, "BadRequestException", "OBD code"),
    ("/api/vehicle-attributes", 400, "BadRequestException", "attribute parameter is required"),
    ("/api/vehicle-attributes?attribute=engines.colour", 400, "BadRequestException", "engines.colour"),
    ("/api/vehicle-attributes?attribute=", 400, "BadRequestException", "required"),
    ("/api/years/v2?year=abc", 400, "BadRequestException", "year"),
    ("/api/years/v2?json=%5B", 400, "BadRequestException", "Invalid json parameter"),
    ("/api/license-plate", 400, "BadRequestException", "country_code"),
    ("/api/license-plate?country_code=XX&lookup=a", 400, "BadRequestException", "country_code 'XX'"),
    ("/api/license-plate?country_code=US&lookup=ABC", 400, "BadRequestException", "region"),
    ("/api/license-plate?country_code=DE", 400, "BadRequestException", "lookup"),
    ("/api/license-plate?country_code=DE&lookup=B-XY-123", 404, "NotFoundException", "not found"),
    ("/api/nope", 404, "NotFoundException", "Not Found"),
    ("/api", 404, "NotFoundException", "Not Found"),
    ("/", 404, "NotFoundException", "Not Found"),
    ("/api/trims/v2/1/extra", 404, "NotFoundException", "Not Found"),
    ("/api/trims/v3", 400, "BadRequestException", "trim id 'v3'"),  # /api/trims/{id}
    ("/API/trims/v2", 404, "NotFoundException", "Not Found"),
]

ALL = search_cases() + JSON_CASES + OTHER_CASES


def test_there_are_at_least_100_cases() -> None:
    assert len(ALL) >= 100


@pytest.mark.parametrize("target,status,exception,part", ALL)
def test_malformed_get(api: Http, target: str, status: int, exception: str, part: str) -> None:
    r = api.get(target)
    assert_error(r, status, exception, target.split("?")[0], part)


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/api/trims/v2", "/api/trims/v2/1", "/api/account/requests", "/api/makes/v2",
                                  "/api/data-feeds/last-updated", "/api/vehicle-attributes"])
def test_wrong_method_on_a_known_path(api: Http, method: str, path: str) -> None:
    r = api.request(method, path, body=b"{}")
    assert_error(r, 405, "MethodNotAllowedException", path, method)
    assert r.headers["allow"] == "GET, HEAD"


def test_get_on_login_is_405_text(api: Http) -> None:
    r = api.get("/api/auth/login")
    assert r.status == 405 and r.headers["content-type"].startswith("text/plain")
    assert r.headers["allow"] == "POST"


def test_body_over_one_mebibyte_is_413_json(api: Http) -> None:
    r = api.request("POST", "/api/trims/v2", body=b"x" * (1024 * 1024 + 10))
    assert r.status == 413
    assert r.headers["content-type"] == "application/json; charset=UTF-8"
    assert r.json() == {"exception": "PayloadTooLargeException", "code": 413, "url": "/api/trims/v2",
                        "message": "Payload Too Large: the body is over 1048576 bytes"}


def test_garbage_request_line_does_not_kill_the_server(emulator: object, api: Http) -> None:
    import socket
    url = getattr(emulator, "url")
    host, port = url.split("//")[1].split(":")
    for junk in (b"\x00\x01\x02\r\n\r\n", b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n" , b"G" * 10000 + b"\r\n\r\n"):
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(junk)
            s.shutdown(socket.SHUT_WR)
            read_until_close(s)
    assert api.get("/_emulator/health").status == 200
    assert api.get("/api/years/v2").status == 200


def test_uri_over_8192_bytes_is_414_json(api: Http) -> None:
    r = api.get("/api/trims/v2?json=" + "x" * 9000)
    assert r.status == 414
    assert r.json()["exception"] == "UriTooLongException" and r.json()["code"] == 414


def test_huge_and_odd_parameters(api: Http) -> None:
    assert api.get("/api/trims/v2?make=" + "A" * 5000).json()["collection"]["total"] == 0
    assert api.get("/api/trims/v2?make=%00%FF").json()["collection"]["total"] == 0
    assert api.get("/api/trims/v2?unknown_parameter=1&limit=1").status == 200
    r = api.get("/api/trims/v2?year=2019&year=x")
    assert_error(r, 400, "BadRequestException", "/api/trims/v2", "year")
