"""The emulator compresses with gzip when asked, never with slow brotli, and sends exact JSON."""
from __future__ import annotations

import gzip
import json

from emu_support import Http

TARGET = "/api/trims/v2?limit=200"


def _get(api: Http, accept: str):
    return api.request("GET", TARGET, headers={"Accept-Encoding": accept})


def test_identity_and_gzip_bodies_hold_the_same_json(api: Http) -> None:
    plain = _get(api, "identity")
    assert plain.status == 200
    assert "content-encoding" not in plain.headers
    assert plain.headers["content-type"] == "application/json; charset=UTF-8"
    packed = _get(api, "gzip, deflate")
    assert packed.status == 200
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.headers["vary"] == "Accept-Encoding"
    assert len(packed.body) < len(plain.body) / 3
    assert gzip.decompress(packed.body) == plain.body
    assert json.loads(plain.body)["collection"]["count"] == 200


def test_brotli_alone_gets_an_uncompressed_body(api: Http) -> None:
    # cpp-httplib would brotli-compress at quality 11 (slow); the emulator declines instead.
    only_br = _get(api, "br")
    assert only_br.status == 200 and "content-encoding" not in only_br.headers
    assert json.loads(only_br.body)["collection"]["count"] == 200


def test_browser_style_accept_gets_gzip(api: Http) -> None:
    r = _get(api, "gzip, deflate, br, zstd")
    assert r.headers["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(r.body))["collection"]["count"] == 200


def test_gzip_refused_with_q0(api: Http) -> None:
    r = _get(api, "gzip;q=0, identity")
    assert "content-encoding" not in r.headers
    assert json.loads(r.body)["collection"]["count"] == 200


def test_small_bodies_are_not_compressed(api: Http) -> None:
    r = api.request("GET", "/api/trims/v2/999999999", headers={"Accept-Encoding": "gzip"})
    assert r.status == 404 and "content-encoding" not in r.headers
    assert r.json()["exception"] == "RecordNotFoundException"


# ---- the one rule: above 1 KiB, a coding the client offers (gzip, else deflate), Vary always ----
import zlib  # noqa: E402
from typing import Dict  # noqa: E402

from vehicledata.testing import DEMO_ACCOUNTS  # noqa: E402


def test_deflate_when_only_deflate_is_offered(api: Http) -> None:
    plain = _get(api, "identity")
    r = _get(api, "deflate, br")
    assert r.headers["content-encoding"] == "deflate"
    assert r.headers["vary"] == "Accept-Encoding"
    assert zlib.decompress(r.body) == plain.body


def test_star_means_gzip(api: Http) -> None:
    assert _get(api, "*").headers["content-encoding"] == "gzip"


def test_small_bodies_carry_vary_but_no_coding(api: Http) -> None:
    r = api.request("GET", "/api/makes/v2?limit=1", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert r.status == 200 and len(r.body) <= 1024
    assert "content-encoding" not in r.headers
    assert r.headers["vary"] == "Accept-Encoding"


def test_large_error_bodies_follow_the_rule(api: Http) -> None:
    value = "x" * 1500
    target = f"/api/trims/v2?year={value}"
    r = api.request("GET", target, headers={"Accept-Encoding": "br, gzip"})
    assert r.status == 400
    assert r.headers["content-encoding"] == "gzip" and r.headers["vary"] == "Accept-Encoding"
    assert json.loads(gzip.decompress(r.body)) == {
        "exception": "BadRequestException", "code": 400, "url": "/api/trims/v2",
        "message": f"Invalid value for year: expected an integer, got '{value}'"}


def test_login_answers_are_never_compressed(api: Http) -> None:
    acct = DEMO_ACCOUNTS["premium"]
    body = json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode()
    for accept in ("br", "gzip", "gzip, deflate, br", "*"):
        r = api.request("POST", "/api/auth/login", body=body, headers={"Accept-Encoding": accept})
        assert r.status == 200, r.body
        assert "content-encoding" not in r.headers and "vary" not in r.headers
        assert r.body.count(b".") == 2  # the bare JWT, as text
        bad = api.request("POST", "/api/auth/login", body=b'{"api_token":"no","api_secret":"no"}',
                          headers={"Accept-Encoding": accept})
        assert bad.status == 401 and "content-encoding" not in bad.headers
        assert bad.text == "Unauthorized: api_token and api_secret do not match an account"


def test_feed_zip_is_sent_as_is_with_vary(api: Http, tokens: Dict[str, str]) -> None:
    r = api.request("GET", "/api/data-feeds/download", token=tokens["premium"],
                    headers={"Accept-Encoding": "gzip, deflate, br"})
    assert r.status == 200
    assert "content-encoding" not in r.headers
    assert r.headers["vary"] == "Accept-Encoding"
    assert r.body[:4] == b"PK\x03\x04"
