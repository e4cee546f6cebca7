"""The connection fields say what the emulator does next (issue 38, point 7; docs/emulator.md, "What
matches the real service"): cpp-httplib announced `Keep-Alive: timeout=5, max=5` on every answer,
also on the HTTP/1.0 answers it then closed, while the gate keeps a connection for any number of
requests and closes it after --idle-timeout seconds without one. Now an answer after which the
connection is closed says `Connection: close` and nothing about keep-alive, and any other says
`Keep-Alive: timeout=<--idle-timeout>` without a `max`: on the direct path and on httplib's, raw
over loopback."""
from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from emu_support import read_answer, read_response
from vehicledata.testing import Emulator

IDLE = 3  # --idle-timeout of this module's emulator (the default is 5)
PATHS = {"direct": "", "httplib": "X-Empty:\r\n"}  # a field of empty value: the direct path declines it


@pytest.fixture(scope="module")
def emu(database: Path) -> Iterator[Emulator]:
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=4,
                  idle_timeout=IDLE) as e:
        yield e


def connect(emu: Emulator) -> socket.socket:
    host, port = emu.url.split("//")[1].split(":")
    s = socket.create_connection((host, int(port)), timeout=IDLE + 10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request(target: str, version: str = "HTTP/1.1", extra: str = "") -> bytes:
    return f"GET {target} {version}\r\nHost: x\r\n{extra}\r\n".encode()


def fields(raw: bytes) -> List[Tuple[str, str]]:
    """The header fields of the first answer in `raw`, in order, names as sent."""
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return [(n, v.strip()) for n, _, v in (line.partition(":") for line in head)]


def closed(s: socket.socket) -> bool:
    """True when the server has closed the connection (end of input), False when it is still open."""
    s.settimeout(0.5)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True
    finally:
        s.settimeout(IDLE + 10)


def keep_alive_fields(headers: Dict[str, str]) -> Tuple[str, str]:
    return headers.get("connection", ""), headers.get("keep-alive", "")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("target", ["/api/makes/v2?limit=2", "/api/nope", "/api/trims/v2/999999999"])
def test_a_kept_connection_announces_the_idle_timeout_and_no_max(emu: Emulator, path: str, target: str) -> None:
    with connect(emu) as s:
        buf = bytearray()
        for _ in range(12):  # more than httplib's announced max=5: every one answered on this connection
            s.sendall(request(target, extra=PATHS[path]))
            status, headers, _ = read_response(s, buf)
            assert status in (200, 404)
            assert keep_alive_fields(headers) == ("", f"timeout={IDLE}"), headers
        assert not closed(s)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("extra,want", [("", [("Keep-Alive", f"timeout={IDLE}")]),
                                        ("Connection: close\r\n", [("Connection", "close")]),
                                        ("Connection: CLOSE\r\n", [("Connection", "close")])])
def test_the_connection_fields_as_sent(emu: Emulator, path: str, extra: str, want: List[Tuple[str, str]]) -> None:
    with connect(emu) as s:
        s.sendall(request("/api/years/v2", extra=PATHS[path] + extra))
        got = fields(read_answer(s))
    assert [(n, v) for n, v in got if n.lower() in ("connection", "keep-alive")] == want


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("connection", ["", "Connection: keep-alive\r\n", "Connection: close\r\n"])
def test_http_1_0_answers_that_are_closed_say_close(emu: Emulator, path: str, connection: str) -> None:
    # HTTP/1.0 keeps a connection only with "Connection: Keep-Alive" (as httplib spells it)
    with connect(emu) as s:
        s.sendall(request("/api/makes/v2?limit=2", "HTTP/1.0", PATHS[path] + connection) +
                  request("/api/makes/v2?limit=3", "HTTP/1.0", PATHS[path] + connection))
        buf = bytearray()
        status, headers, _ = read_response(s, buf)
        assert status == 200
        assert keep_alive_fields(headers) == ("close", ""), headers
        assert bytes(buf) == b"" and closed(s)  # the second request is not answered


@pytest.mark.parametrize("path", PATHS)
def test_http_1_0_with_keep_alive_is_kept_and_says_so(emu: Emulator, path: str) -> None:
    with connect(emu) as s:
        buf = bytearray()
        for _ in range(7):
            s.sendall(request("/api/makes/v2?limit=2", "HTTP/1.0", PATHS[path] + "Connection: Keep-Alive\r\n"))
            status, headers, _ = read_response(s, buf)
            assert status == 200
            assert keep_alive_fields(headers) == ("", f"timeout={IDLE}"), headers
        assert not closed(s)


def test_the_announced_timeout_is_kept(emu: Emulator) -> None:
    with connect(emu) as s:
        buf = bytearray()
        s.sendall(request("/api/years/v2"))
        assert read_response(s, buf)[1]["keep-alive"] == f"timeout={IDLE}"
        time.sleep(IDLE - 1.5)  # well inside the timeout: still open, and it answers
        assert not closed(s)
        s.sendall(request("/api/years/v2"))
        assert read_response(s, buf)[0] == 200
        time.sleep(IDLE + 1.5)  # past it: closed without an answer
        assert closed(s)
