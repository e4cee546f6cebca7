"""HTTP/1.1 framing details of the gate over raw sockets (issue 25, item 4): empty lines before a
request, Connection header values in any case, pipelined requests after a half-close, and chunked
bodies in many small pieces (scanned once, not from the start on every read)."""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from emu_support import read_response, read_until_close
from test_emu_hostile import assert_json_error, connect, get
from vehicledata.testing import Emulator

PATH = "/api/makes/v2"


@pytest.fixture(scope="module")
def emu(database: Path) -> Iterator[Emulator]:
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=4,
                  extra_args=["--request-timeout", "30"]) as e:
        yield e


def read_all(s: socket.socket, count: int) -> Tuple[List[Tuple[int, dict, bytes]], bytes]:
    """`count` responses, then whatever the server sends until it closes (b"" when it closes)."""
    s.settimeout(10)
    buf = bytearray()
    out = [read_response(s, buf) for _ in range(count)]
    return out, bytes(buf) + read_until_close(s)


def corked(emu: Emulator) -> socket.socket:
    """A connection whose writes are held (TCP_CORK) until shutdown(SHUT_WR) sends them with the
    FIN: the server reads the requests and the end of input at once."""
    s = connect(emu)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    return s


def cpu_seconds(emu: Emulator) -> float:
    """User + system CPU time the emulator process has used so far."""
    pid = emu._proc.pid  # type: ignore[union-attr]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quiet(emu: Emulator) -> None:
    """Waits (up to 30 s) until the emulator is idle: after its start it loads data in the
    background for a few seconds, which must not count against what a test measures."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        before = cpu_seconds(emu)
        time.sleep(0.5)
        if cpu_seconds(emu) - before < 0.03:
            return


# ---- RFC 9112, section 2.2: "at least one empty line (CRLF) received prior to the request-line" ---
@pytest.mark.parametrize("prefix", [b"\r\n", b"\n", b"\r\n\r\n"])
def test_empty_lines_before_a_request_are_ignored(emu: Emulator, prefix: bytes) -> None:
    with connect(emu) as s:
        s.sendall(prefix + get(PATH + "?limit=2", "Connection: close\r\n"))
        (resp,), rest = read_all(s, 1)
    code, headers, body = resp
    assert code == 200, body
    assert len(json.loads(body)["data"]) == 2
    assert headers["connection"] == "close" and rest == b""


def test_empty_line_between_pipelined_requests_is_ignored(emu: Emulator) -> None:
    # Some clients send a CRLF after a request (RFC 9112 2.2 names POST bodies): the next request
    # on the connection is still answered.
    with connect(emu) as s:
        s.sendall(get(PATH + "?limit=1") + b"\r\n" + get(PATH + "?limit=3", "Connection: close\r\n"))
        (first, second), rest = read_all(s, 2)
    assert first[0] == 200 and len(json.loads(first[2])["data"]) == 1
    assert second[0] == 200 and len(json.loads(second[2])["data"]) == 3
    assert rest == b""


def test_empty_line_before_an_httplib_request_is_ignored(emu: Emulator) -> None:
    # Not a direct-path request (a POST): httplib's own parsing must get the request without the CRLF.
    body = b'{"api_token": "no-such-token", "api_secret": "no-such-secret"}'
    raw = (b"\r\nPOST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    with connect(emu) as s:
        s.sendall(raw)
        (resp,), _ = read_all(s, 1)
    assert resp[0] == 401, resp  # a login answer, not a 400 for a malformed request line


# ---- Connection: close in any case (RFC 9110 7.6.1: connection options are case-insensitive) ----
@pytest.mark.parametrize("value", ["Close", "CLOSE", "keep-alive, Close", " close "])
@pytest.mark.parametrize("path", [PATH, "/api/nope"])  # the direct path and httplib's
def test_connection_close_in_any_case_closes(emu: Emulator, value: str, path: str) -> None:
    with connect(emu) as s:
        s.sendall(get(path, f"Connection: {value}\r\n") + get(PATH))
        (resp,), rest = read_all(s, 1)
    assert resp[1]["connection"] == "close"
    assert "keep-alive" not in resp[1]
    assert rest == b""  # closed after the first answer: the second request is not served


def test_connection_keep_alive_keeps_the_connection(emu: Emulator) -> None:
    with connect(emu) as s:
        s.sendall(get(PATH, "Connection: Keep-Alive\r\n") + get(PATH, "Connection: close\r\n"))
        (first, second), rest = read_all(s, 2)
    assert "connection" not in first[1] and first[0] == 200
    assert second[1]["connection"] == "close" and rest == b""


# ---- pipelined requests, then a half-close ---------------------------------------------------
@pytest.mark.parametrize("paths", [
    [PATH + "?limit=1", PATH + "?limit=2", PATH + "?limit=3"],      # direct path
    ["/api/nope", PATH + "?limit=2", "/api/also-nope"],              # httplib and direct mixed
])
def test_every_pipelined_request_is_answered_after_a_half_close(emu: Emulator, paths: List[str]) -> None:
    with corked(emu) as s:
        s.sendall(b"".join(get(p) for p in paths))
        s.shutdown(socket.SHUT_WR)  # the requests and the FIN leave together
        responses, rest = read_all(s, 3)
    assert rest == b""
    for p, (code, headers, body) in zip(paths, responses):
        if "nope" in p:
            assert_json_error((code, headers, body), 404, "NotFoundException", "Not Found")
        else:
            assert code == 200 and len(json.loads(body)["data"]) == int(p[-1])
    # none but the last may announce the close (the last one does when the end of input was read
    # before it was answered, which depends on timing)
    assert [r[1].get("connection") for r in responses[:2]] == [None, None]


def test_half_close_with_an_incomplete_request_after_complete_ones(emu: Emulator) -> None:
    with corked(emu) as s:
        s.sendall(get(PATH + "?limit=1") + get(PATH + "?limit=2") + b"GET /api/makes/v2 HTTP/1.1\r\nHo")
        s.shutdown(socket.SHUT_WR)
        responses, rest = read_all(s, 2)
    assert [len(json.loads(r[2])["data"]) for r in responses] == [1, 2]
    assert rest == b""  # the incomplete one is dropped with the connection


# ---- chunked bodies in small pieces ----------------------------------------------------------
def test_chunked_body_in_many_reads_costs_linear_cpu(emu: Emulator) -> None:
    # 150,000 one-byte chunks (900 kB on the wire) sent in 3,000 writes of 300 bytes, most read
    # by the gate separately: scanning the whole buffer again on every read costs seconds of CPU
    # (issue 25: 9.9 s of CPU in 14 s for 4 such connections); scanning only the new chunks, a
    # few milliseconds. The body is not JSON, so the answer is the login's 400.
    pieces = [b"1\r\nx\r\n" * 50] * 3000
    head = (b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    quiet(emu)
    before = cpu_seconds(emu)
    with connect(emu) as s:
        s.sendall(head)
        for i, piece in enumerate(pieces):
            s.sendall(piece)
            time.sleep(0.0003)  # let the gate read it
        s.sendall(b"0\r\n\r\n")
        (resp,), _ = read_all(s, 1)
    used = cpu_seconds(emu) - before
    assert resp[0] == 400, resp
    assert used < 0.5, f"the emulator used {used:.2f} s of CPU for one 900 kB chunked body"


def test_chunked_body_split_inside_size_lines_and_data(emu: Emulator) -> None:
    # Resuming a scan must not trust a chunk-size line or chunk data that was cut off by a read.
    body = b'{"api_token": "no-such-token", "api_secret": "no-such-secret"}'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7]) for i in range(0, len(body), 7))
    chunked += b"0\r\n\r\n"
    head = (b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    with connect(emu) as s:
        s.sendall(head)
        for i in range(0, len(chunked), 3):
            s.sendall(chunked[i:i + 3])
            time.sleep(0.002)
        (resp,), _ = read_all(s, 1)
    assert resp[0] == 401, resp  # the whole JSON body reached the login handler
