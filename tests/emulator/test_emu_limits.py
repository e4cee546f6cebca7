"""Rate limits (429 with the service's message and Retry-After) and usage counters."""
from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

from emu_support import Http, assert_error
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

LIMIT = 30
LOGIN_LIMIT = 4


def message(limit: int) -> str:
    return (f"TooManyRequestsException - Max Per Minute: {limit} (note: daily rate limits may apply, "
            "see your subscription plans details)")


@pytest.fixture(scope="module")
def limited(database: Any) -> Iterator[Emulator]:
    with Emulator(db=database, rate_limit=LIMIT, login_rate_limit=LOGIN_LIMIT) as emu:
        yield emu


@pytest.fixture()
def h(limited: Emulator) -> Iterator[Http]:
    limited.reset()
    client = Http(limited.url)
    yield client
    client.close()


def login(h: Http, name: str) -> str:
    a = DEMO_ACCOUNTS[name]
    r = h.post_json("/api/auth/login", {"api_token": a["api_token"], "api_secret": a["api_secret"]})
    assert r.status == 200, r.body
    return r.text


def test_the_request_after_the_limit_gets_429(h: Http) -> None:
    paths = ["/api/makes/v2", "/api/trims/v2?limit=1", "/api/years/v2", "/api/nope-is-not-counted"]
    ok = 0
    for i in range(LIMIT):
        r = h.get(paths[i % 3])
        assert r.status == 200, (i, r.body)
        ok += 1
    assert h.get("/api/nope").status == 404  # unknown paths are not rate-limited
    r = h.get("/api/bodies/v2")
    assert_error(r, 429, "TooManyRequestsException", "/api/bodies/v2")
    assert r.json()["message"] == message(LIMIT)
    retry = int(r.headers["retry-after"])
    assert 1 <= retry <= 60
    assert ok == LIMIT


def test_window_slides_with_the_clock(limited: Emulator, h: Http) -> None:
    for _ in range(LIMIT):
        assert h.get("/api/makes/v2?limit=1").status == 200
    assert h.get("/api/makes/v2?limit=1").status == 429
    limited.shift_clock(61)
    assert h.get("/api/makes/v2?limit=1").status == 200


def test_limits_are_per_account(h: Http) -> None:
    premium = login(h, "premium")
    for _ in range(LIMIT):
        assert h.get("/api/makes/v2?limit=1", token=premium).status == 200
    assert h.get("/api/makes/v2?limit=1", token=premium).status == 429
    # Another account and the anonymous address still have their own windows.
    basic = login(h, "basic")
    assert h.get("/api/makes/v2?limit=1", token=basic).status == 200
    assert h.get("/api/makes/v2?limit=1").status == 200


def test_login_limit_and_text_body(h: Http) -> None:
    for _ in range(LOGIN_LIMIT):
        login(h, "free")
    r = h.post_json("/api/auth/login", {"api_token": "demo-free-token", "api_secret": "demo-free-secret"})
    assert r.status == 429
    assert r.headers["content-type"].startswith("text/plain")
    assert r.text == message(LOGIN_LIMIT)
    assert int(r.headers["retry-after"]) >= 1
    # Data endpoints have their own window.
    assert h.get("/api/makes/v2?limit=1").status == 200


def test_control_plane_is_not_limited(limited: Emulator, h: Http) -> None:
    for _ in range(LIMIT + 5):
        assert h.get("/_emulator/health").status == 200
    assert h.get("/api/makes/v2?limit=1").status == 200


def test_usage_counters(limited: Emulator, h: Http) -> None:
    token = login(h, "basic")
    for _ in range(7):
        assert h.get("/api/years/v2", token=token).status == 200
    r = h.get("/api/account/requests-today", token=token)
    assert r.json() == {"count": 8}  # the seven searches and this request; logins are not counted
    today = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 5 * 3600))
    assert h.get("/api/account/requests", token=token).json() == [{"date": today, "count": 9}]
    other = login(h, "premium")
    assert h.get("/api/account/requests-today", token=other).json() == {"count": 1}
    # Anonymous requests belong to no account; control routes are not counted.
    h.get("/api/years/v2")
    h.get("/_emulator/stats")
    assert h.get("/api/account/requests-today", token=token).json() == {"count": 10}


def test_usage_days_are_utc_minus_5(limited: Emulator, h: Http) -> None:
    now = int(time.time())
    # Move the clock to 04:59:50 UTC of tomorrow: still "today" in UTC-5 until 05:00 UTC.
    tomorrow_0459 = (now // 86400 + 1) * 86400 + 5 * 3600 - 10
    limited.shift_clock(tomorrow_0459 - now)
    token = login(h, "premium")
    h.get("/api/years/v2", token=token)
    limited.shift_clock(tomorrow_0459 - now + 20)
    token = login(h, "premium")
    h.get("/api/years/v2", token=token)
    days = h.get("/api/account/requests", token=token).json()
    d1 = time.strftime("%Y-%m-%d", time.gmtime(tomorrow_0459 - 5 * 3600))
    d2 = time.strftime("%Y-%m-%d", time.gmtime(tomorrow_0459 + 20 - 5 * 3600))
    assert d1 != d2
    assert days == [{"date": d1, "count": 1}, {"date": d2, "count": 2}]


def test_reset_clears_windows_and_counters(limited: Emulator, h: Http) -> None:
    token = login(h, "premium")
    for _ in range(LIMIT):
        h.get("/api/makes/v2?limit=1", token=token)
    assert h.get("/api/makes/v2?limit=1", token=token).status == 429
    limited.reset()
    assert h.get("/api/account/requests-today", token=token).json() == {"count": 1}


def test_default_limit_600_then_429(database: Any) -> None:
    with Emulator(db=database) as emu:
        c = Http(emu.url)
        statuses = [c.get("/api/years/v2").status for _ in range(601)]
        assert statuses[:600] == [200] * 600
        r = c.get("/api/years/v2")
        assert statuses[600] == 429 and r.status == 429
        assert r.json()["message"] == message(600)
        c.close()
