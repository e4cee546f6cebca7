"""The control plane: health, faults (status, drop, truncate, delay), maintenance, clock, stats."""
from __future__ import annotations

import http.client
import socket
import time
from typing import Dict

import pytest

from emu_support import Http, assert_error
from vehicledata.testing import Emulator, EmulatorError


def test_health(api: Http) -> None:
    r = api.get("/_emulator/health")
    assert r.status == 200 and r.json() == {"status": "ok"}


def test_status_fault_for_the_next_n_matching_requests(clean: Emulator, api: Http) -> None:
    clean.fault("/api/trims/v2", status=503, count=2, retry_after=2)
    assert api.get("/api/makes/v2?limit=1").status == 200  # other paths are untouched
    for _ in range(2):
        r = api.get("/api/trims/v2/123?x=1")
        assert_error(r, 503, "ServiceUnavailableException", "/api/trims/v2/123")
        assert r.headers["retry-after"] == "2"
    assert api.get("/api/trims/v2?limit=1").status == 200


def test_fault_429_uses_the_service_message_and_custom_body(clean: Emulator, api: Http) -> None:
    clean.fault("/api/bodies", status=429, retry_after=1)
    r = api.get("/api/bodies/v2")
    assert_error(r, 429, "TooManyRequestsException", "/api/bodies/v2", "Max Per Minute: 1000000")
    clean.fault("/api/engines", status=500, body="oops")
    r = api.get("/api/engines/v2")
    assert r.status == 500 and r.text == "oops" and "retry-after" not in r.headers


def test_login_fault_is_text(clean: Emulator, api: Http) -> None:
    clean.fault("/api/auth/login", status=503)
    r = api.post_json("/api/auth/login", {"api_token": "demo-free-token", "api_secret": "demo-free-secret"})
    assert r.status == 503 and r.headers["content-type"].startswith("text/plain")


def raw_get(url: str, path: str) -> bytes:
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks)


def test_drop_closes_without_an_answer(clean: Emulator) -> None:
    clean.fault("/api/makes", action="drop")
    assert raw_get(clean.url, "/api/makes/v2") == b""
    assert raw_get(clean.url, "/api/makes/v2").startswith(b"HTTP/1.1 200")


def test_truncate_sends_half_of_the_declared_body(clean: Emulator) -> None:
    full = raw_get(clean.url, "/api/trims/v2?limit=5")
    clean.fault("/api/trims/v2", action="truncate")
    cut = raw_get(clean.url, "/api/trims/v2?limit=5")
    head, _, body = cut.partition(b"\r\n\r\n")
    full_body = full.partition(b"\r\n\r\n")[2]
    assert b"200 OK" in head
    length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0]
    assert length == len(full_body)
    assert body == full_body[: length // 2]


def test_delay_fault(clean: Emulator, api: Http) -> None:
    clean.fault("/api/years", action="delay", delay_ms=300)
    t = time.monotonic()
    r = api.get("/api/years/v2")
    assert r.status == 200 and r.json()[0] == 2020
    assert time.monotonic() - t >= 0.3


def test_clear_faults(clean: Emulator, api: Http) -> None:
    clean.fault("/api", status=502, count=5)
    clean.clear_faults()
    assert api.get("/api/years/v2").status == 200


def test_maintenance_mode(clean: Emulator, api: Http) -> None:
    clean.maintenance(True)
    assert_error(api.get("/api/trims/v2"), 503, "ServiceUnavailableException", "/api/trims/v2", "maintenance")
    r = api.post_json("/api/auth/login", {"api_token": "a", "api_secret": "b"})
    assert r.status == 503 and r.headers["content-type"].startswith("text/plain")
    assert api.get("/_emulator/health").status == 200
    clean.maintenance(False)
    assert api.get("/api/trims/v2?limit=1").status == 200


def test_maintenance_flag_at_start(database: object) -> None:
    with Emulator(db=database, maintenance=True) as emu:
        c = Http(emu.url)
        assert c.get("/api/years/v2").status == 503
        emu.maintenance(False)
        assert c.get("/api/years/v2").status == 200
        c.close()


def test_clock_and_stats(clean: Emulator, api: Http) -> None:
    r = clean.shift_clock(3600)
    assert r["offset_seconds"] == 3600 and abs(r["now"] - time.time() - 3600) < 5
    api.get("/api/years/v2")
    api.get("/api/years/v2")
    api.get("/api/nope")
    s = clean.stats()
    assert s["requests"] == 3
    assert s["by_path"] == {"/api/years/v2": 2, "/api/nope": 1}
    assert s["by_status"] == {"200": 2, "404": 1}


@pytest.mark.parametrize("method,route,body,status", [
    ("POST", "faults", b"{}", 400), ("POST", "faults", b'{"path":"/a","action":"boom"}', 400),
    ("POST", "faults", b'{"path":"/a","count":0}', 400), ("POST", "faults", b"nope", 400),
    ("POST", "maintenance", b'{"enabled":"yes"}', 400), ("POST", "clock", b'{"offset_seconds":"x"}', 400),
    ("GET", "reset", None, 405), ("POST", "health", b"{}", 405), ("GET", "nothing", None, 404),
])
def test_control_errors(clean: Emulator, api: Http, method: str, route: str, body: bytes, status: int) -> None:
    r = api.request(method, f"/_emulator/{route}", body=body)
    assert r.status == status
    assert r.json()["code"] == status


def test_launcher_helpers_raise_on_errors(clean: Emulator) -> None:
    with pytest.raises(EmulatorError, match="action"):
        clean.fault("/api", action="explode")
