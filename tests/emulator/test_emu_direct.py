"""The gate's direct path (docs/emulator.md, "Serving path"): a GET or HEAD of a data endpoint is
answered without cpp-httplib parsing its head again, and the bytes sent are exactly those of
httplib's own processing. A request with a field of empty value (which httplib drops) is declined by
the direct path and goes through httplib, so each answer below is compared with its twin on the
other path: status line, headers in order, body; plain and compressed, GET and HEAD, keep-alive and
close, HTTP/1.0, errors, the demo tier, faults."""
from __future__ import annotations

import re
import socket
from typing import Dict, List, Optional

import pytest

from emu_support import Http, read_answer, read_until_close, undated
from vehicledata.testing import Emulator

TARGETS = [
    "/api/trims/v2?limit=100",
    "/api/trims/v2?limit=3&page=2&sort=id&direction=desc",
    "/api/trims/v2?limit=2&make=Alfa%20Romeo",
    "/api/trims%2Fv2?limit=2",
    "/api/trims/v2?limit=abc",
    "/api/trims/v2/1",
    "/api/trims/v2/999999999",
    "/api/trims/1",
    "/api/makes/v2",
    "/api/vehicle-attributes?attribute=engines.engine_type",
    "/api/vin/1HGCM82633A004352",
    "/api/vin/BADVIN",
    "/api/data-feeds/download",
]
VARIANTS = [
    ("GET", "HTTP/1.1", []),
    ("GET", "HTTP/1.1", ["Accept-Encoding: gzip"]),
    ("GET", "HTTP/1.1", ["Accept-Encoding: deflate"]),
    ("GET", "HTTP/1.1", ["Connection: close"]),
    ("GET", "HTTP/1.0", []),
    ("GET", "HTTP/1.0", ["Connection: Keep-Alive"]),
    ("HEAD", "HTTP/1.1", []),
    ("GET", "HTTP/1.1", ["X-Value: a%41b"]),
    ("GET", "HTTP/1.1", ["Range: bytes=100-199"]),  # the feed answers 206; the others ignore it
    ("GET", "HTTP/1.1", ["Range: bytes=-50"]),
    ("GET", "HTTP/1.1", ["Range: bytes=99999999-"]),  # the feed: 416
]


def exchange(url: str, raw: bytes, head: bool) -> bytes:
    """One answer to `raw` on a fresh connection, Date blanked: read by its Content-Length, else until EOF."""
    return undated(exchange_raw(url, raw, head))


def exchange_raw(url: str, raw: bytes, head: bool) -> bytes:
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(raw)
        return read_answer(s, head)


def request(method: str, target: str, version: str, lines: List[str], token: Optional[str], httplib: bool) -> bytes:
    head = [f"{method} {target} {version}", "Host: 127.0.0.1"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    head += lines
    if httplib:
        head.append("X-Empty:")  # the direct path declines it; httplib drops the field
    return ("\r\n".join(head) + "\r\n\r\n").encode()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("who", ["premium", "free", None])
def test_direct_and_httplib_answers_are_identical(emulator: Emulator, tokens: Dict[str, str], target: str,
                                                  who: Optional[str]) -> None:
    token = tokens[who] if who else None
    for method, version, lines in VARIANTS:
        answers = [exchange(emulator.url, request(method, target, version, lines, token, httplib), method == "HEAD")
                   for httplib in (False, True, False, True)]
        assert answers[0].startswith(b"HTTP/1.1 "), answers[0][:200]
        assert answers[0] == answers[1] == answers[2] == answers[3], (method, version, lines)


def test_paths_keep_alive_and_close_alike(emulator: Emulator, tokens: Dict[str, str]) -> None:
    # two requests on one connection: the first answer keeps it open (Keep-Alive), the second closes it
    pair = {httplib: request("GET", "/api/years/v2", "HTTP/1.1", [], tokens["basic"], httplib) +
            request("GET", "/api/makes/v2", "HTTP/1.1", ["Connection: close"], tokens["basic"], httplib)
            for httplib in (False, True)}
    host, port = emulator.url.split("//")[1].split(":")
    out = {}
    for httplib, raw in pair.items():
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(raw)
            out[httplib] = undated(read_until_close(s))
    assert out[False] == out[True]
    assert out[False].count(b"HTTP/1.1 200 OK") == 2
    # the gate keeps a connection for any number of requests: the idle timeout (5 s) and no max (issue 38)
    assert b"\r\nKeep-Alive: timeout=5\r\n" in out[False] and b"Connection: close" in out[False]
    assert b"max=" not in out[False]


def test_faults_and_maintenance_on_both_paths(clean: Emulator, tokens: Dict[str, str]) -> None:
    api = Http(clean.url)
    try:
        for fault in ({"path": "/api/trims/v2", "status": 503, "retry_after": 7},
                      {"path": "/api/trims/v2", "status": 500, "body": "{\"x\":1}"},
                      {"path": "/api/trims/v2", "action": "truncate"}):
            answers = []
            for httplib in (False, True):
                assert api.post_json("/_emulator/faults", fault).status == 200
                answers.append(exchange(clean.url, request("GET", "/api/trims/v2?limit=50", "HTTP/1.1", [],
                                                           tokens["premium"], httplib), False))
            assert answers[0] == answers[1], fault
        assert answers[0].startswith(b"HTTP/1.1 200 OK")  # truncated: the full length declared, half sent
        declared = int(re.search(rb"Content-Length: (\d+)", answers[0]).group(1))  # type: ignore[union-attr]
        assert len(answers[0].split(b"\r\n\r\n", 1)[1]) == declared // 2
        assert api.post_json("/_emulator/maintenance", {"enabled": True}).status == 200
        down = [exchange(clean.url, request("GET", "/api/trims/v2?limit=2", "HTTP/1.1", [], None, h), False)
                for h in (False, True)]
        assert down[0] == down[1] and down[0].startswith(b"HTTP/1.1 503 ")
    finally:
        api.close()
