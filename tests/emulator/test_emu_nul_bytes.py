"""NUL bytes (`%00`) in request values are never cut (issue 38, point 7; docs/emulator.md, "Paging,
filters, json, sorting"): SQLite reads a LIKE pattern as a C string, so a Like filter's value or a
json `like` / `not like` val with a NUL is refused with a 400 naming it (before, `type=SUV%00zzz`
matched every SUV); every other value keeps its NUL as an ordinary byte and matches nothing; and an
error message quoting such a value quotes it whole (before, the message ended at the NUL)."""
from __future__ import annotations

import json
from typing import Optional
from urllib.parse import quote

import pytest

from emu_support import DEMO_SQL, Db, Http, assert_error

NUL_PATTERN = "is not allowed in a LIKE pattern"


def error(api: Http, target: str, status: int, exception: str, path: str) -> str:
    r = api.get(target)
    assert_error(r, status, exception, path)
    assert b"\\u0000" in r.body or status != 400, r.body  # the NUL escaped in the JSON text, not cut
    return str(r.json()["message"])


@pytest.mark.parametrize("path,name", [("/api/bodies/v2", "type"), ("/api/trims/v2", "trim"),
                                       ("/api/makes/v2", "make"), ("/api/obd-codes", "code")])
def test_a_like_filter_with_a_nul_is_a_400_quoting_it_whole(api: Http, path: str, name: str) -> None:
    message = error(api, f"{path}?{name}=SUV%00zzz&limit=1", 400, "BadRequestException", path)
    assert message == (f"Invalid value for {name}: a NUL byte (%00) at position 4 {NUL_PATTERN}, "
                       "got 'SUV\x00zzz'")


def test_the_pattern_before_the_nul_is_not_what_is_matched(api: Http, db: Db) -> None:
    # The pattern "SUV" alone matches the SUVs; with the NUL it is refused, never those same rows.
    suvs = api.get("/api/bodies/v2?type=SUV&limit=1").json()["collection"]["total"]
    assert suvs == db.count("bodies", f"type LIKE 'SUV' AND {DEMO_SQL}") > 0
    assert api.get("/api/bodies/v2?type=SUV%00&limit=1").status == 400
    assert api.get("/api/bodies/v2?type=%00SUV&limit=1").status == 400


@pytest.mark.parametrize("op", ["like", "not like", "LIKE"])
def test_a_json_like_val_with_a_nul_is_a_400(api: Http, op: str) -> None:
    text = json.dumps([{"field": "bodies.type", "op": op, "val": "SUV\x00zzz"}])
    assert "\\u0000" in text
    message = error(api, "/api/trims/v2?json=" + quote(text), 400, "BadRequestException", "/api/trims/v2")
    position = text.index('"SUV')
    assert message == (f'Invalid json parameter: condition 1 (field "bodies.type", op "{op}"): val must not '
                       f"contain a NUL character (\\u0000) in a LIKE pattern (at byte {position})")


def test_other_values_keep_the_nul_and_match_nothing(api: Http, db: Db) -> None:
    assert api.get("/api/trims/v2?make=BMW&limit=1").json()["collection"]["total"] > 0
    for target in ("/api/trims/v2?make=BMW%00", "/api/trims/v2?make=BMW%00zzz", "/api/makes/v2?year=2019%00",
                   "/api/trims/v2?json=" + quote(json.dumps([{"field": "make", "op": "=", "val": "BMW\x00"}])),
                   "/api/trims/v2?json=" + quote(json.dumps([{"field": "make", "op": "in", "val": ["BMW\x00"]}]))):
        r = api.get(target)
        if r.status == 400:  # a numeric Value filter: not a number, quoted whole
            assert r.json()["message"] == "Invalid value for year: expected an integer, got '2019\x00'", target
            continue
        assert r.status == 200, (target, r.body)
        assert r.json()["collection"]["total"] == 0, target
    # `!=` keeps the whole value too: every row differs from "BMW\0"
    ne = json.dumps([{"field": "make", "op": "!=", "val": "BMW\x00"}])
    assert api.get("/api/trims/v2?limit=1&json=" + quote(ne)).json()["collection"]["total"] == db.count(
        "trims", DEMO_SQL)


@pytest.mark.parametrize("target,status,exception,path,message", [
    ("/api/trims/v2?year=2019%00x", 400, "BadRequestException", "/api/trims/v2",
     "Invalid value for year: expected an integer, got '2019\x00x'"),
    ("/api/bodies?verbose=yes%00no", 400, "BadRequestException", "/api/bodies",
     "Invalid verbose 'yes\x00no': expected yes or no"),
    ("/api/trims/v2/12%00x", 400, "BadRequestException", "/api/trims/v2/12%00x",
     "Invalid trim id '12\x00x': expected a positive integer"),
    ("/api/vehicle-attributes?attribute=bodies.type%00x", 400, "BadRequestException", "/api/vehicle-attributes",
     None),
    ("/api/makes/powersports?type=street_motorcycle%00x", 400, "BadRequestException", "/api/makes/powersports",
     None),
    ("/api/trims/v2?a%00b=%ZZ", 400, "BadRequestException", "/api/trims/v2",
     "malformed percent-encoding in the value of query parameter 'a\x00b'"),
    ("/api/obd-codes/P0100%00", 404, "RecordNotFoundException", "/api/obd-codes/P0100%00",
     'Record not found in table "obd_codes"'),
])
def test_messages_quoting_a_value_with_a_nul_are_whole(api: Http, target: str, status: int, exception: str,
                                                        path: str, message: Optional[str]) -> None:
    r = api.get(target)
    assert_error(r, status, exception, path)
    got = r.json()["message"]
    if message is not None:
        assert got == message
    else:  # the value is quoted whole, with what follows it
        assert "%00x" not in got and "\x00x'" in got, got


def test_a_vin_with_a_nul_is_quoted_whole(api: Http) -> None:
    r = api.get("/api/vin/1HGCM82633A00435%00")
    assert_error(r, 400, "BadRequestException", "/api/vin/1HGCM82633A00435%00")
    message = r.json()["message"]
    assert message.startswith("Invalid VIN '1HGCM82633A00435\x00': "), message
    assert message.endswith("is not in the VIN alphabet (0-9 and A-Z without I, O, Q)"), message
