"""The control plane: health, faults (status, drop, truncate, delay), maintenance, clock, stats, touch."""
from __future__ import annotations

import csv
import http.client
import io
import json
import socket
import threading
import time
import zipfile
from typing import Dict
from urllib.parse import quote

import pytest

from emu_support import Http, assert_error, read_until_close
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
        return read_until_close(s, resets=True)


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
    ("GET", "touch", None, 405), ("DELETE", "touch", None, 405),
])
def test_control_errors(clean: Emulator, api: Http, method: str, route: str, body: bytes, status: int) -> None:
    r = api.request(method, f"/_emulator/{route}", body=body)
    assert r.status == status
    assert r.json()["code"] == status


def test_launcher_helpers_raise_on_errors(clean: Emulator) -> None:
    with pytest.raises(EmulatorError, match="400 .*unknown table 'nope'"):
        clean.touch("nope", [1])
    with pytest.raises(EmulatorError, match="action"):
        clean.fault("/api", action="explode")


# ---- touch: modified timestamps changed through the control plane -------------------------
TOUCH_SHAPE = ('touch: body must be {"table": one of models, submodels, trims, bodies, engines, mileages, '
               'exterior_colors, interior_colors, "ids": [integer, ...], "modified": optional '
               '"YYYY-MM-DDTHH:MM:SS-05:00"}')


@pytest.fixture(scope="module")
def touchable(database: object):
    """A private emulator (touches must not leak into the shared one) and its Http client."""
    with Emulator(db=database, rate_limit=1_000_000) as emu:
        c = Http(emu.url)
        yield emu, c
        c.close()


def feed_trims(c: Http, token: str) -> Dict[int, str]:
    """id -> modified of trims.csv in the data feed archive."""
    r = c.get("/api/data-feeds/download", token=token)
    assert r.status == 200, r.status
    with zipfile.ZipFile(io.BytesIO(r.body)) as z:
        rows = csv.DictReader(io.TextIOWrapper(z.open("trims.csv"), encoding="utf-8", newline=""))
        return {int(row["id"]): row["modified"] for row in rows}


@pytest.mark.parametrize("body,message", [
    (b"[]", TOUCH_SHAPE),
    (b'{"table": "makes", "ids": [1]}',
     "touch: unknown table 'makes': expected one of models, submodels, trims, bodies, engines, mileages, "
     "exterior_colors, interior_colors"),
    (b'{"table": "trims", "ids": [1, "2"]}', 'touch: ids must be integers (got "2")'),
    (b'{"table": "trims", "ids": [1.5]}', "touch: ids must be integers (got 1.5)"),
    (b'{"table": "trims", "ids": 3}', "touch: ids must be an array of integers"),
    (b'{"table": "trims", "ids": []}', "touch: ids must not be empty"),
    (b'{"table": "trims", "ids": [' + b",".join([b"1"] * 10001) + b"]}",
     "touch: at most 10000 ids per call (got 10001)"),
    (b'{"table": "trims", "ids": [1], "modified": "2026-11-23 06:30:00"}',
     'touch: modified must be an ISO 8601 timestamp with offset, as "2026-11-23T06:30:00-05:00" '
     '(got "2026-11-23 06:30:00")'),
    (b'{"table": "trims", "ids": [1], "modified": "2026-13-23T06:30:00-05:00"}',
     'touch: modified must be an ISO 8601 timestamp with offset, as "2026-11-23T06:30:00-05:00" '
     '(got "2026-13-23T06:30:00-05:00")'),
    (b'{"table": "trims", "ids": [1], "when": 1}', "touch: unknown key 'when'; " + TOUCH_SHAPE),
])
def test_touch_refuses_bad_bodies(touchable, body: bytes, message: str) -> None:
    _, c = touchable
    r = c.request("POST", "/_emulator/touch", body=body)
    assert_error(r, 400, "BadRequestException", "/_emulator/touch")
    assert r.json()["message"] == message
    assert r.json()["code"] == 400


def test_touch_is_seen_by_searches_details_and_the_feed_and_reset_undoes_it(touchable) -> None:
    emu, c = touchable
    token = c.login("premium")
    ids = [r["id"] for r in c.get("/api/trims/v2?year=2019&make=BMW&sort=id&limit=3", token=token).json()["data"]]
    assert len(ids) == 3
    before = c.get(f"/api/trims/v2/{ids[0]}", token=token).json()["modified"]
    newer = "/api/trims/v2?sort=id&json=" + quote(json.dumps([{"field": "modified", "op": ">=", "val": "2030-01-01T00:00:00-05:00"}]))
    assert c.get(newer, token=token).json()["collection"]["total"] == 0  # fills the result cache
    before_feed = feed_trims(c, token)  # builds the feed archive
    answer = emu.touch("trims", ids + [999999999], modified="2030-06-01T12:00:00+00:00")
    assert answer == {"touched": 3, "modified": "2030-06-01T08:00:00-04:00", "missing": [999999999]}
    page = c.get(newer, token=token).json()
    assert [r["id"] for r in page["data"]] == ids
    assert {r["modified"] for r in page["data"]} == {"2030-06-01T08:00:00-04:00"}
    feed_rows = feed_trims(c, token)
    assert {i: feed_rows[i] for i in ids} == {i: "2030-06-01T08:00:00-04:00" for i in ids}
    assert c.get(f"/api/trims/v2/{ids[0]}", token=token).json()["modified"] == "2030-06-01T08:00:00-04:00"
    assert c.get(f"/api/trims/{ids[0]}", token=token).json()["modified"] == "2030-06-01T08:00:00-04:00"
    # default: the emulator clock's now, in the service's Eastern form
    now = emu.touch("trims", ids[:1])["modified"]
    assert now[:4] >= "2026" and now[10] == "T" and now[19:] in ("-04:00", "-05:00")
    assert c.get(f"/api/trims/v2/{ids[0]}", token=token).json()["modified"] == now
    emu.reset()
    assert c.get(newer, token=token).json()["collection"]["total"] == 0
    assert c.get(f"/api/trims/v2/{ids[0]}", token=token).json()["modified"] == before
    assert feed_trims(c, token)[ids[1]] == before_feed[ids[1]]


def test_touch_and_reset_while_searches_run_answer_only_200(touchable) -> None:
    emu, c = touchable
    token = c.login("premium")
    ids = [r["id"] for r in c.get("/api/trims/v2?year=2019&limit=30", token=token).json()["data"]]
    assert len(ids) == 30
    statuses: list = []

    def worker() -> None:
        h = Http(emu.url)
        for n in range(60):
            statuses.append(h.get(f"/api/trims/v2?year=2019&limit=50&page={n % 5 + 1}", token=token).status)
            statuses.append(h.get(f"/api/trims/v2/{ids[n % 30]}", token=token).status)
        h.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(8):
        emu.touch("trims", ids, modified=f"2031-01-0{i + 1}T00:00:00-05:00")
        if i % 4 == 3:
            emu.reset()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert statuses == [200] * 240
    emu.touch("trims", ids[:1], modified="2031-02-01T00:00:00-05:00")
    assert c.get(f"/api/trims/v2/{ids[0]}", token=token).json()["modified"] == "2031-02-01T00:00:00-05:00"
    emu.reset()
