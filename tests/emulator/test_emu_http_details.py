"""HTTP details of every answer, probed over raw sockets (issue 20, deliverable 7; docs/emulator.md,
"Differences from the live service"): a `Date` header on every answer, whichever path wrote it (the
gate's direct path, cpp-httplib, httplib's own errors, the gate's refusals, the control plane); a
HEAD carries exactly the headers of the GET; a 405's `Allow` names HEAD with GET; and any number of
trailing slashes route as CakePHP routes them (`#^<template>[/]*$#`)."""
from __future__ import annotations

import email.utils
import json
import re
import socket
import time
from typing import Dict, List, Optional, Tuple

import pytest

from emu_support import read_answer
from vehicledata.testing import Emulator

IMF_FIXDATE = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                         r"\d{4} \d\d:\d\d:\d\d GMT")


def raw_exchange(url: str, raw: bytes, head: bool = False) -> Tuple[str, List[Tuple[str, str]], bytes]:
    """Sends `raw` on a fresh connection; the status line, the header fields in order, the body (read by
    Content-Length, else until the server closes)."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(raw)
        data = read_answer(s, head)
    head_bytes, _, body = data.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    fields = [(n, v.strip()) for n, _, v in (line.partition(":") for line in lines[1:])]
    return lines[0], fields, body


def req(method: str, target: str, token: Optional[str] = None, extra: Optional[List[str]] = None,
        body: bytes = b"") -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    lines += extra or []
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def one(fields: List[Tuple[str, str]], name: str) -> str:
    values = [v for n, v in fields if n.lower() == name.lower()]
    assert len(values) == 1, (name, fields)
    return values[0]


def assert_dated_now(fields: List[Tuple[str, str]]) -> None:
    date = one(fields, "Date")
    assert IMF_FIXDATE.fullmatch(date), date
    assert abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time()) < 30, date


@pytest.fixture()
def token(clean: Emulator, tokens: Dict[str, str]) -> str:
    return tokens["premium"]


# ---- Date ----------------------------------------------------------------------------------
def test_every_answer_carries_a_date(clean: Emulator, token: str) -> None:
    url = clean.url
    login = json.dumps({"api_token": "premium-token", "api_secret": "x"}).encode()
    probes = [
        (req("GET", "/api/trims/v2?limit=2", token), "HTTP/1.1 200 OK"),                 # direct path
        (req("GET", "/api/trims/v2?limit=2", token, ["X-Empty:"]), "HTTP/1.1 200 OK"),   # httplib path
        (req("GET", "/api/years/v2"), "HTTP/1.1 200 OK"),                                # demo tier
        (req("GET", "/api/trims/v2/999999999", token), "HTTP/1.1 404 Not Found"),
        (req("GET", "/no/such/path"), "HTTP/1.1 404 Not Found"),
        (req("POST", "/api/trims/v2", token, body=b"{}"), "HTTP/1.1 405 Method Not Allowed"),
        (req("POST", "/api/auth/login", body=login), "HTTP/1.1 401 Unauthorized"),
        (req("GET", "/api/vin/BADVIN", token), "HTTP/1.1 400 Bad Request"),
        (req("FOO", "/api/trims/v2"), "HTTP/1.1 405 Method Not Allowed"),                # httplib's own error
        (b"GET /api/trims/v2 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"),             # the gate's refusal
        (req("GET", "/_emulator/health"), "HTTP/1.1 200 OK"),                            # control plane
        (req("HEAD", "/api/makes/v2", token), "HTTP/1.1 200 OK"),
    ]
    for raw, status in probes:
        line, fields, _ = raw_exchange(url, raw, head=raw.startswith(b"HEAD"))
        assert line == status, (raw[:60], line)
        assert_dated_now(fields)


def test_the_date_follows_the_emulators_clock(clean: Emulator, token: str) -> None:
    # the control plane's clock moves the Date with the tokens' expiry and the rate-limit windows
    before = email.utils.parsedate_to_datetime(one(raw_exchange(clean.url, req("GET", "/api/years/v2"))[1], "Date"))
    clean.shift_clock(86400)
    after = email.utils.parsedate_to_datetime(one(raw_exchange(clean.url, req("GET", "/api/years/v2"))[1], "Date"))
    assert 86400 - 30 < (after - before).total_seconds() < 86400 + 30


# ---- HEAD ----------------------------------------------------------------------------------
# (not the login: its 405 names the method asked, so a HEAD's message, and length, is its own; the
# 405 test below covers HEAD there)
HEAD_TARGETS = [
    "/api/trims/v2?limit=3",
    "/api/makes/v2",
    "/api/trims/v2/1",
    "/api/trims/v2/999999999",
    "/api/vin/1FTFW1RT0PW000001",
    "/api/account/requests",
    "/no/such/path",
    "/_emulator/health",
]


@pytest.mark.parametrize("target", HEAD_TARGETS)
@pytest.mark.parametrize("path", ["direct", "httplib"])
def test_head_carries_exactly_the_get_headers(clean: Emulator, token: str, target: str, path: str) -> None:
    extra = ["X-Empty:"] if path == "httplib" else []  # a field httplib drops; the direct path declines it
    for accept in ([], ["Accept-Encoding: gzip"]):
        get_line, get_fields, get_body = raw_exchange(clean.url, req("GET", target, token, extra + accept))
        head_line, head_fields, head_body = raw_exchange(clean.url, req("HEAD", target, token, extra + accept), True)
        assert head_line == get_line
        assert head_body == b""
        blank = [(n, "-" if n == "Date" else v) for n, v in get_fields]
        assert [(n, "-" if n == "Date" else v) for n, v in head_fields] == blank
        assert not any(n.lower() == "accept-ranges" for n, _ in head_fields)
        assert int(one(get_fields, "Content-Length")) == len(get_body)


# ---- 405 Allow -----------------------------------------------------------------------------
@pytest.mark.parametrize("method,target,allow", [
    ("POST", "/api/trims/v2", "GET, HEAD"),
    ("DELETE", "/api/trims/v2/1", "GET, HEAD"),
    ("PUT", "/api/vin/1FTFW1RT0PW000001", "GET, HEAD"),
    ("TRACE", "/api/makes/v2", "GET, HEAD"),
    ("GET", "/api/auth/login", "POST"),
    ("HEAD", "/api/auth/login", "POST"),
    ("POST", "/_emulator/health", "GET, HEAD"),
    ("GET", "/_emulator/reset", "POST"),
])
def test_a_405_allow_names_head_with_get(clean: Emulator, token: str, method: str, target: str, allow: str) -> None:
    body = b"{}" if method in ("POST", "PUT", "DELETE") else b""
    line, fields, _ = raw_exchange(clean.url, req(method, target, token, body=body), head=method == "HEAD")
    assert line == "HTTP/1.1 405 Method Not Allowed"
    assert one(fields, "Allow") == allow


# ---- trailing slashes ----------------------------------------------------------------------
@pytest.mark.parametrize("target", ["/api/makes/v2", "/api/years/v2", "/api/trims/v2/1", "/api/vin/1FTFW1RT0PW000001"])
@pytest.mark.parametrize("slashes", ["/", "//", "/////"])
def test_trailing_slashes_route_as_cakephp(clean: Emulator, token: str, target: str, slashes: str) -> None:
    plain = raw_exchange(clean.url, req("GET", target, token))
    slashed = raw_exchange(clean.url, req("GET", target + slashes, token))
    assert slashed[0] == plain[0] == "HTTP/1.1 200 OK"
    a, b = json.loads(plain[2]), json.loads(slashed[2])
    if isinstance(a, dict) and "collection" in a:  # the envelope repeats the target as sent
        assert b["collection"]["url"] == target + slashes
        a.pop("collection"), b.pop("collection")
    assert a == b


def test_trailing_slashes_keep_the_query(clean: Emulator, token: str) -> None:
    plain = json.loads(raw_exchange(clean.url, req("GET", "/api/makes/v2?limit=2&page=2", token))[2])
    slashed = json.loads(raw_exchange(clean.url, req("GET", "/api/makes/v2///?limit=2&page=2", token))[2])
    assert slashed["data"] == plain["data"] and len(plain["data"]) == 2


@pytest.mark.parametrize("target", ["/api/trims/v2//1", "/api//makes/v2", "/api/trims/v2/1/x/"])
def test_slashes_elsewhere_are_not_a_route(clean: Emulator, token: str, target: str) -> None:
    line, fields, body = raw_exchange(clean.url, req("GET", target, token))
    assert line == "HTTP/1.1 404 Not Found"
    assert json.loads(body) == {"exception": "NotFoundException", "code": 404, "url": target, "message": "Not Found"}
