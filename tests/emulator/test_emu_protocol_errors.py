"""Protocol-level errors: 414 naming the URL, a login without a body or over 1 MiB (text), 405 for
an unknown method on a known path, 404 on an unknown one, 404 for a page past the last."""
from __future__ import annotations

from typing import Any

import pytest

from emu_support import Db, Http, raw_request, strict_json


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
