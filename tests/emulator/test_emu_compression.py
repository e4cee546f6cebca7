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
