"""Hostile clients over raw sockets (issue 13, items 10-13): each test first reproduces the attack,
then asserts the emulator's answer (status and JSON error body) and that other clients are served.

No timing asserts: waits are bounded by socket timeouts, and every limit that needs a deadline to
pass runs on an emulator started with short timeouts (1 s)."""
from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

from emu_support import read_response
from vehicledata.testing import Emulator

PATH = "/api/makes/v2"


@pytest.fixture(scope="module")
def emu(database: Path) -> Iterator[Emulator]:
    """Four workers, short timeouts, small limits: so that a handful of hostile sockets would
    exhaust an unguarded server and every deadline passes within a couple of seconds."""
    with Emulator(db=database, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=4,
                  extra_args=["--request-timeout", "1", "--idle-timeout", "1", "--max-headers", "50",
                              "--max-header-bytes", "8192", "--max-connections", "64"]) as e:
        yield e


def hostport(emu: Emulator) -> Tuple[str, int]:
    host, port = emu.url.rsplit("//", 1)[1].rsplit(":", 1)
    return host, int(port)


def connect(emu: Emulator, timeout: float = 10.0, source: Optional[str] = None) -> socket.socket:
    """A connection from `source` (a loopback address such as 127.0.0.2; default the system's)."""
    s = socket.create_connection(hostport(emu), timeout=timeout, source_address=(source, 0) if source else None)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def exchange(emu: Emulator, raw: bytes, count: int = 1) -> List[Tuple[int, dict, bytes]]:
    with connect(emu) as s:
        s.sendall(raw)
        buf = bytearray()
        return [read_response(s, buf) for _ in range(count)]


def get(path: str = PATH, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode()


def assert_json_error(resp: Tuple[int, dict, bytes], status: int, exception: str, part: str) -> None:
    code, headers, body = resp
    assert code == status, body
    assert headers["content-type"].startswith("application/json")
    doc = json.loads(body)
    assert set(doc) == {"exception", "code", "url", "message"}
    assert doc["exception"] == exception and doc["code"] == status
    assert part in doc["message"], doc


def served(emu: Emulator) -> None:
    """A normal client is answered 200 with the makes page."""
    (code, _, body), = exchange(emu, get(PATH, "Connection: close\r\n"))
    assert code == 200 and json.loads(body)["data"], body


# ---- 10: slowloris and bodies that never come --------------------------------------------------
def test_slowloris_does_not_starve_other_clients(emu: Emulator) -> None:
    # More dripping connections than workers (4): before the gate, each held a worker.
    drips = [connect(emu) for _ in range(16)]
    try:
        for s in drips:
            s.sendall(b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\nX-A: ")
        for _ in range(3):
            served(emu)
            for s in drips:
                s.sendall(b"a")
        # The request deadline (1 s) passes while they drip: each gets a 408 and is closed.
        for s in drips:
            buf = bytearray()
            s.settimeout(10)
            assert_json_error(read_response(s, buf), 408, "RequestTimeoutException", "Request Timeout")
    finally:
        for s in drips:
            s.close()


def test_idle_keep_alive_connection_is_closed(emu: Emulator) -> None:
    with connect(emu) as s:
        s.sendall(get())
        buf = bytearray()
        assert read_response(s, buf)[0] == 200
        s.settimeout(10)
        assert s.recv(1) == b""  # closed after the idle timeout (1 s), without an answer


# ---- the same attacks on a kept-alive connection ------------------------------------------------
# After a response the worker itself reads the connection's next request when it arrives at once
# (docs/reliability.md, "The gate"); each attack below comes right behind a served request, so it
# usually takes that path (always, with the wait raised to 500 ms by hand: all pass), and must meet
# the same limits as on a fresh connection.
def kept(emu: Emulator) -> Tuple[socket.socket, bytearray]:
    s = connect(emu)
    s.sendall(get())
    buf = bytearray()
    assert read_response(s, buf)[0] == 200
    return s, buf


def test_slowloris_on_kept_connections_does_not_starve_other_clients(emu: Emulator) -> None:
    drips = [kept(emu) for _ in range(16)]
    try:
        for s, _ in drips:
            s.sendall(b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\nX-A: ")
        for _ in range(3):
            served(emu)
            for s, _ in drips:
                s.sendall(b"a")
        for s, buf in drips:
            s.settimeout(10)
            assert_json_error(read_response(s, buf), 408, "RequestTimeoutException", "Request Timeout")
    finally:
        for s, _ in drips:
            s.close()


def test_header_flood_on_a_kept_connection_is_431(emu: Emulator) -> None:
    s, buf = kept(emu)
    with s:
        try:
            s.sendall(b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\n" + b"X: y\r\n" * 100_000)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert_json_error(read_response(s, buf), 431, "RequestHeaderFieldsTooLargeException", "header fields")
    served(emu)


def test_get_body_on_a_kept_connection_is_discarded(emu: Emulator) -> None:
    smuggled = b"GET /_emulator/stats HTTP/1.1\r\nHost: x\r\n\r\n"
    s, buf = kept(emu)
    with s:
        s.sendall(f"GET {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(smuggled)}\r\n\r\n".encode())
        s.sendall(smuggled)
        code, _, body = read_response(s, buf)
        assert code == 200 and "data" in json.loads(body)
        s.sendall(get("/api/engines/v2", "Connection: close\r\n"))
        code, _, body = read_response(s, buf)
        assert code == 200 and b"by_path" not in body and buf == b""


def test_pipelined_requests_on_a_kept_connection_are_answered_in_order(emu: Emulator) -> None:
    s, buf = kept(emu)
    with s:
        s.sendall(get("/api/makes/v2?limit=1") + get("/api/nope") + get("/api/makes/v2?limit=2"))
        first, second, third = (read_response(s, buf) for _ in range(3))
        assert first[0] == 200 and len(json.loads(first[2])["data"]) == 1
        assert_json_error(second, 404, "NotFoundException", "Not Found")
        assert third[0] == 200 and len(json.loads(third[2])["data"]) == 2


def test_http11_without_host_on_a_kept_connection_is_400(emu: Emulator) -> None:
    s, buf = kept(emu)
    with s:
        s.sendall(f"GET {PATH} HTTP/1.1\r\n\r\n".encode())
        assert_json_error(read_response(s, buf), 400, "BadRequestException", "Host")


@pytest.mark.parametrize("length,status,part", [
    ("99999999999999999999", 413, "Payload Too Large"),
    ("2000000", 413, "Payload Too Large"),
    ("-1", 400, "invalid Content-Length '-1'"),
    ("12abc", 400, "invalid Content-Length '12abc'"),
])
def test_post_announcing_a_body_that_never_comes(emu: Emulator, length: str, status: int, part: str) -> None:
    raw = f"POST /api/trims/v2 HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()
    exc = "PayloadTooLargeException" if status == 413 else "BadRequestException"
    assert_json_error(exchange(emu, raw)[0], status, exc, part)


def test_login_refusals_are_text_as_the_login_route_answers(emu: Emulator) -> None:
    raw = b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"
    code, headers, body = exchange(emu, raw)[0]
    assert (code, headers["content-type"], body) == (400, "text/plain; charset=UTF-8",
                                                     b"Bad Request: invalid Content-Length '-5'")


def test_post_whose_body_stalls_gets_408_and_pins_no_worker(emu: Emulator) -> None:
    stalled = [connect(emu) for _ in range(8)]
    try:
        for s in stalled:
            s.sendall(b"POST /api/trims/v2 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        served(emu)
        for s in stalled:
            assert_json_error(read_response(s, bytearray()), 408, "RequestTimeoutException", "Request Timeout")
    finally:
        for s in stalled:
            s.close()


# ---- 11: header count and size -----------------------------------------------------------------
def test_too_many_headers_is_431(emu: Emulator) -> None:
    extra = "".join(f"X-H{i}: v\r\n" for i in range(51))
    assert_json_error(exchange(emu, get(PATH, extra))[0], 431, "RequestHeaderFieldsTooLargeException",
                      "more than 50 header fields")
    served(emu)


def test_header_flood_of_100k_fields_is_431_without_reading_it_all(emu: Emulator) -> None:
    with connect(emu) as s:
        s.sendall(b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\n")
        try:
            for _ in range(100):
                s.sendall(b"X: y\r\n" * 1000)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed mid-flood
        assert_json_error(read_response(s, bytearray()), 431, "RequestHeaderFieldsTooLargeException",
                          "header fields")
    served(emu)


def test_oversized_head_is_431(emu: Emulator) -> None:
    extra = "".join(f"X-{i}: {'v' * 1000}\r\n" for i in range(9))
    assert_json_error(exchange(emu, get(PATH, extra))[0], 431, "RequestHeaderFieldsTooLargeException",
                      "over 8192 bytes")


def test_headers_under_the_limits_are_served(emu: Emulator) -> None:
    extra = "".join(f"X-H{i}: v\r\n" for i in range(40))
    code, _, body = exchange(emu, get(PATH, extra))[0]
    assert code == 200 and json.loads(body)["data"]


# ---- 12: CL.0 smuggling and pipelining ---------------------------------------------------------
def test_get_body_is_discarded_not_parsed_as_a_request(emu: Emulator) -> None:
    smuggled = b"GET /_emulator/stats HTTP/1.1\r\nHost: x\r\n\r\n"
    head = f"GET {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(smuggled)}\r\n\r\n".encode()
    with connect(emu) as s:
        s.sendall(head)
        buf = bytearray()
        s.sendall(smuggled)  # the body, in its own segment
        code, _, body = read_response(s, buf)
        assert code == 200 and "data" in json.loads(body)
        s.sendall(get("/api/engines/v2", "Connection: close\r\n"))
        code, _, body = read_response(s, buf)
        assert code == 200 and "data" in json.loads(body)  # the next real request, not the smuggled one
        assert b"by_path" not in body and buf == b""


def test_pipelined_requests_in_one_segment_are_all_answered_in_order(emu: Emulator) -> None:
    raw = get("/api/makes/v2?limit=1") + get("/api/nope") + get("/api/makes/v2?limit=2", "Connection: close\r\n")
    first, second, third = exchange(emu, raw, 3)
    assert first[0] == 200 and len(json.loads(first[2])["data"]) == 1
    assert_json_error(second, 404, "NotFoundException", "Not Found")
    assert third[0] == 200 and len(json.loads(third[2])["data"]) == 2


def test_content_length_with_transfer_encoding_is_400(emu: Emulator) -> None:
    raw = (b"POST /api/trims/v2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    assert_json_error(exchange(emu, raw)[0], 400, "BadRequestException", "both Content-Length and Transfer-Encoding")


def test_conflicting_content_lengths_are_400(emu: Emulator) -> None:
    raw = b"POST /api/trims/v2 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
    assert_json_error(exchange(emu, raw)[0], 400, "BadRequestException", "conflicting Content-Length")


def test_chunked_login_body_is_read(emu: Emulator) -> None:
    body = b'{"api_token":"demo-free-token","api_secret":"demo-free-secret"}'
    raw = (b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    code, _, jwt = exchange(emu, raw + get(PATH, "Connection: close\r\n"), 2)[0]
    assert code == 200 and jwt.count(b".") == 2


# ---- 13: Host, control plane, faults -----------------------------------------------------------
def test_http11_without_host_is_400(emu: Emulator) -> None:
    assert_json_error(exchange(emu, f"GET {PATH} HTTP/1.1\r\n\r\n".encode())[0], 400, "BadRequestException",
                      "needs a Host header")
    raw = f"GET {PATH} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".encode()
    assert_json_error(exchange(emu, raw)[0], 400, "BadRequestException", "more than one Host header")


def test_http10_without_host_is_served(emu: Emulator) -> None:
    code, _, body = exchange(emu, f"GET {PATH} HTTP/1.0\r\n\r\n".encode())[0]
    assert code == 200 and json.loads(body)["data"]


def test_control_plane_needs_the_token_when_one_is_set(database: Path) -> None:
    with Emulator(db=database, extra_args=["--control-token", "s3cret"]) as e:
        raw = b"POST /_emulator/reset HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
        assert_json_error(exchange(e, raw)[0], 403, "ForbiddenException", "X-Emulator-Token")
        wrong = b"GET /_emulator/stats HTTP/1.1\r\nHost: x\r\nX-Emulator-Token: s3creT\r\n\r\n"
        assert_json_error(exchange(e, wrong)[0], 403, "ForbiddenException", "X-Emulator-Token")
        right = b"GET /_emulator/stats HTTP/1.1\r\nHost: x\r\nX-Emulator-Token: s3cret\r\n\r\n"
        code, _, body = exchange(e, right)[0]
        assert code == 200 and "by_path" in json.loads(body)


def non_loopback_address() -> Optional[str]:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
            ip = u.getsockname()[0]
        return None if ip.startswith("127.") else ip
    except OSError:
        return None


def test_control_plane_refuses_non_loopback_clients(database: Path) -> None:
    ip = non_loopback_address()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with Emulator(db=database, host="0.0.0.0") as e:
        port = hostport(e)[1]
        with socket.create_connection((ip, port), timeout=10) as s:
            s.sendall(b"POST /_emulator/maintenance HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\n\r\n"
                      b'{"enabled":true}')
            resp = read_response(s, bytearray())
        assert_json_error(resp, 403, "ForbiddenException", "loopback clients only")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:  # loopback still may
            s.sendall(b"GET /_emulator/maintenance HTTP/1.1\r\nHost: x\r\n\r\n")
            code, _, body = read_response(s, bytearray())
        assert code == 200 and json.loads(body) == {"enabled": False}


def test_faults_are_bounded(database: Path) -> None:
    with Emulator(db=database) as e:
        def post(body: str) -> Tuple[int, dict, bytes]:
            raw = (f"POST /_emulator/faults HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
                   + body).encode()
            return exchange(e, raw)[0]
        big = json.dumps({"path": "/api/makes", "body": "x" * 65537})
        assert_json_error(post(big), 400, "BadRequestException", "body must be at most 65536 bytes")
        raw = b"".join(
            (f"POST /_emulator/faults HTTP/1.1\r\nHost: x\r\nContent-Length: {len(b)}\r\n\r\n" + b).encode()
            for b in [json.dumps({"path": f"/nowhere/{i}"}) for i in range(1001)])
        answers = exchange(e, raw, 1001)
        assert [a[0] for a in answers[:1000]] == [200] * 1000
        assert json.loads(answers[999][2]) == {"faults": 1000}
        assert_json_error(answers[1000], 400, "BadRequestException", "at most 1000 faults")


def test_many_connections_wait_for_the_cap_then_are_served(emu: Emulator) -> None:
    # 80 idle connections against a cap of 64: the last 16 wait in the backlog, and are answered
    # once the idle ones time out (1 s) and make room. They come from three addresses, each under
    # its share of the cap (half: test_emu_connection_share.py).
    idle = [connect(emu, source=f"127.0.0.{2 + i % 3}") for i in range(80)]
    try:
        results: List[int] = []

        def client() -> None:
            (code, _, _), = exchange(emu, get(PATH, "Connection: close\r\n"))
            results.append(code)
        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert results == [200] * 4
    finally:
        for s in idle:
            s.close()
