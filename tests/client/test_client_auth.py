"""JWT: lazy login, cache, renewal before exp and after a 401, single flight, disk cache, no leaks."""
from __future__ import annotations

import logging
import os
import stat
import threading
import time
from typing import Iterator

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]


@pytest.fixture()
def short_ttl(database) -> Iterator[Emulator]:
    with Emulator(db=database, token_ttl=4) as emu:
        yield emu


def logins(emu: Emulator) -> int:
    return emu.stats()["by_path"].get("/api/auth/login", 0)


def test_login_is_lazy_and_cached(api, emulator):
    assert logins(emulator) == 0 and not api._core.has_token
    for _ in range(3):
        api.trims.search(year=1990).total
    assert logins(emulator) == 1
    assert api.stats()["logins"] == 1
    exp = api._core.token_expires_at
    assert exp is not None and exp > time.time() + 6 * 86400


def test_premium_sees_full_data_demo_does_not(api, demo_api):
    assert api.trims.search(year=1990).total > 0
    assert demo_api.trims.search(vd.F("year") == 1990).total == 0
    with pytest.raises(vd.QueryError, match="outside the demo data-set's model years 2015-2020"):
        demo_api.trims.search(year=1990)  # a year= keyword is checked against the anonymous /api/years/v2


def test_renewed_before_expiry(short_ttl, client_factory):
    with client_factory(short_ttl.url) as api:
        assert api.trims.search(year=1990).total > 0
        first_exp = api._core.token_expires_at
        time.sleep(3.2)  # inside the renewal margin (lifetime / 4 = 1 s)
        assert api.trims.search(year=1990).total > 0  # still full data: a fresh token was sent
        assert api._core.token_expires_at > first_exp
        assert api.stats()["logins"] == 2
    assert short_ttl.stats()["by_status"].get("401", 0) == 0


def test_renewed_once_after_401(short_ttl, caplog, client_factory):
    caplog.set_level(logging.INFO, logger="vehicledata")
    with client_factory(short_ttl.url) as api:
        api.account.requests_today()
        short_ttl.shift_clock(60)  # the server now sees the cached token as expired
        assert api.account.requests_today() >= 1
        assert api.stats()["logins"] == 2
    assert "token rejected (HTTP 500)" in caplog.text


def test_feed_401_renewal(short_ttl, tmp_path, client_factory):
    with client_factory(short_ttl.url) as api:
        api.data_feed.last_updated()
        short_ttl.shift_clock(60)
        path = api.data_feed.download(tmp_path / "feed.zip")
        assert path.stat().st_size > 0
        assert api.stats()["logins"] == 2


def test_single_flight_login_across_threads(emulator, client_factory):
    with client_factory(emulator.url) as api:
        barrier = threading.Barrier(8)
        errors = []

        def work() -> None:
            try:
                barrier.wait()
                api.trims.search(year=1990).total
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert api.stats()["logins"] == 1
    assert logins(emulator) == 1


def test_disk_cache_is_private_and_reused(emulator, tmp_path, client_factory):
    cache = tmp_path / "jwt"
    with client_factory(emulator.url, jwt_cache=cache) as api:
        api.trims.search(year=1990).total
    files = sorted(cache.iterdir())
    assert [f.suffix for f in files] == [".jwt", ".lock"]  # the token and the login lock beside it
    assert stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    assert PREMIUM["api_token"] not in files[0].name
    with client_factory(emulator.url, jwt_cache=cache) as again:
        again.trims.search(year=1990).total
        assert again.stats()["logins"] == 0
    assert logins(emulator) == 1
    with client_factory(emulator.url + "/", jwt_cache=cache) as same_url:
        same_url.trims.search(year=1990).total
    assert logins(emulator) == 1


def test_secrets_never_leak(emulator, tmp_path, caplog, client_factory):
    caplog.set_level(logging.DEBUG, logger="vehicledata")
    cache = tmp_path / "jwt"
    emulator.fault("/api/trims/v2", status=503, count=1)
    with client_factory(emulator.url, jwt_cache=cache) as api:
        api.trims.search(year=1990).total
        jwt = next(cache.glob("*.jwt")).read_text().strip()
        assert jwt.count(".") == 2
        texts = [repr(api), str(api), repr(api._core), caplog.text, repr(api.stats())]
        emulator.fault("/api/trims/v2", status=400, count=1)
        with pytest.raises(vd.BadRequestError) as info:
            api.trims.search(year=1990).total
        texts += [str(info.value), repr(info.value), repr(vars(info.value))]
    for text in texts:
        assert PREMIUM["api_secret"] not in text
        assert jwt not in text


def test_half_credentials_are_refused(monkeypatch):
    monkeypatch.delenv("VEHICLEDATA_API_SECRET", raising=False)
    with pytest.raises(vd.AuthenticationError, match="api_secret is missing"):
        vd.Client(api_token="abc", base_url="http://127.0.0.1:1")


def test_environment_variables(emulator, monkeypatch):
    monkeypatch.setenv("VEHICLEDATA_API_TOKEN", PREMIUM["api_token"])
    monkeypatch.setenv("VEHICLEDATA_API_SECRET", PREMIUM["api_secret"])
    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    with vd.Client(rate_limit=None) as api:
        assert api.base_url == emulator.url and api.authenticated
        assert api.trims.search(year=1990).total > 0
    monkeypatch.delenv("VEHICLEDATA_BASE_URL")
    assert vd.Client().base_url == "https://carapi.app"


def test_wrong_secret_does_not_reuse_cached_token(emulator, tmp_path, client_factory):
    cache = tmp_path / "jwt"
    with client_factory(emulator.url, jwt_cache=cache) as api:
        api.login()
    wrong = dict(PREMIUM, api_secret=PREMIUM["api_secret"] + "x")
    with client_factory(emulator.url, wrong, jwt_cache=cache) as bad:
        with pytest.raises(vd.AuthenticationError):
            bad.trims.search(year=2019).total
    for f in cache.iterdir():
        assert PREMIUM["api_secret"] not in f.name and PREMIUM["api_secret"] not in f.read_text()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_disk_token_signed_with_an_old_key_is_replaced(database, tmp_path, client_factory, caplog):
    """A server whose signing key changed answers search endpoints with demo data, not 401: the client
    checks a disk-cached token once (requests-today) and logs in again when it is rejected."""
    caplog.set_level(logging.INFO, logger="vehicledata")
    cache = tmp_path / "jwt"
    port = _free_port()
    with Emulator(db=database, port=port, jwt_secret="old-signing-key") as old:
        with client_factory(old.url, jwt_cache=cache) as api:
            api.login()
    stale = next(cache.glob("*.jwt")).read_text().strip()
    with Emulator(db=database, port=port, jwt_secret="new-signing-key") as new:
        with client_factory(new.url, jwt_cache=cache) as api:
            premium_total = api.trims.search(year=1990).total  # 1990 is outside the demo years
            assert premium_total > 0
            assert api.stats()["logins"] == 1
            assert new.stats()["by_path"].get("/api/account/requests-today", 0) == 1
            api.trims.search(year=1991).total
            assert new.stats()["by_path"].get("/api/account/requests-today", 0) == 1  # checked once
        assert next(cache.glob("*.jwt")).read_text().strip() != stale
        # A valid cached token: one check, no login.
        with client_factory(new.url, jwt_cache=cache) as again:
            assert again.trims.search(year=1990).total == premium_total
            assert again.stats()["logins"] == 0
    assert "cached token was rejected" in caplog.text
    assert stale not in caplog.text
