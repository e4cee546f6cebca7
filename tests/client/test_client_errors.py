"""Each exception class from a real server response (or a real transport failure); all picklable."""
from __future__ import annotations

import json
import logging
import pickle
import socket
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

from client_support import stub_server

BASIC = DEMO_ACCOUNTS["basic"]

NO_RETRY = vd.Retry(total=0)


def raw_error(url: str) -> Dict[str, Any]:
    """The server's own error body for a GET of url (stdlib)."""
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(url, timeout=10)
    return json.loads(info.value.read())


def assert_carries(exc: vd.VehicleDataError, body: Dict[str, Any], url: str) -> None:
    assert exc.status == body["code"]
    assert exc.exception == body["exception"]
    assert exc.message == body["message"]
    assert exc.url == url
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is type(exc)
    assert (again.status, again.url, again.exception, again.message) == (exc.status, exc.url, exc.exception, exc.message)


def test_bad_request(api, emulator):
    url = emulator.url + "/api/trims/v2?year=abc"
    body = raw_error(url)
    with pytest.raises(vd.BadRequestError) as info:  # a raw GET: search() refuses the str before sending
        api.get_json("/api/trims/v2", year="abc")
    assert_carries(info.value, body, url)
    assert isinstance(info.value, vd.APIError)
    before = api.stats()["requests"]
    with pytest.raises(vd.QueryError, match="filter 'year' of /api/trims/v2 takes an int, not str 'abc'"):
        api.trims.search(year="abc").total
    assert api.stats()["requests"] == before


def test_not_found(api, emulator):
    with pytest.raises(vd.NotFoundError) as info:
        api.trims.get(987654321)
    assert info.value.status == 404 and info.value.exception == "RecordNotFoundException"
    assert info.value.url == emulator.url + "/api/trims/v2/987654321"


def test_authentication_error_on_login(emulator, client_factory):
    with client_factory(emulator.url, {"api_token": "nobody", "api_secret": "wrong-secret-123"}, retry=NO_RETRY) as api:
        with pytest.raises(vd.AuthenticationError) as info:
            api.trims.search(year=2019).total
    exc = info.value
    assert exc.status == 401 and exc.url == emulator.url + "/api/auth/login"
    assert "wrong-secret-123" not in str(exc) + repr(exc) + repr(exc.__dict__)
    assert pickle.loads(pickle.dumps(exc)).status == 401


def test_unauthenticated_500_on_account(demo_api, emulator):
    url = emulator.url + "/api/account/requests-today"
    body = raw_error(url)
    with pytest.raises(vd.AuthenticationError) as info:
        demo_api.account.requests_today()
    assert_carries(info.value, body, url)
    assert info.value.status == 500 and info.value.exception == "UnauthenticatedException"


def test_permission_denied_on_feed_without_product(emulator, tmp_path, client_factory):
    with client_factory(emulator.url, BASIC, retry=NO_RETRY) as api:
        with pytest.raises(vd.PermissionDeniedError) as info:
            api.data_feed.download(tmp_path / "feed.zip")
    assert info.value.status == 403
    assert not (tmp_path / "feed.zip").exists()


def test_method_not_allowed(api, emulator):
    emulator.fault("/api/makes/v2", status=405)
    with pytest.raises(vd.MethodNotAllowedError) as info:
        api.makes.search().total
    assert info.value.exception == "MethodNotAllowedException"


def test_server_error(emulator, client_factory):
    emulator.fault("/api/makes/v2", status=500)
    with client_factory(emulator.url, retry=NO_RETRY) as api:
        with pytest.raises(vd.ServerError) as info:
            api.makes.search().total
    assert info.value.status == 500 and info.value.exception == "InternalErrorException"
    assert not isinstance(info.value, vd.ServiceUnavailableError)


def test_service_unavailable_in_maintenance(emulator, client_factory):
    emulator.maintenance(True)
    url = emulator.url + "/api/obd-codes"
    body = raw_error(url)
    with client_factory(emulator.url, None, retry=NO_RETRY) as api:
        with pytest.raises(vd.ServiceUnavailableError) as info:
            api.obd_codes.search().total
    assert_carries(info.value, body, url)


@pytest.fixture()
def limited() -> Iterator[Emulator]:
    with Emulator(rate_limit=3) as emu:
        yield emu


def test_rate_limit_error_carries_retry_after(limited, database, client_factory):
    with client_factory(limited.url, None, retry=NO_RETRY) as api:
        for _ in range(3):
            api.makes.search(limit=1).total
        with pytest.raises(vd.RateLimitError) as info:
            api.makes.search(limit=2).total
    exc = info.value
    assert exc.status == 429 and exc.exception == "TooManyRequestsException"
    assert exc.message.startswith("TooManyRequestsException - Max Per Minute: 3")
    assert exc.retry_after == 60.0
    assert pickle.loads(pickle.dumps(exc)).retry_after == 60.0


def test_rate_limit_beyond_max_wait_raises_instead_of_sleeping(limited, caplog, client_factory):
    caplog.set_level(logging.INFO, logger="vehicledata")
    with client_factory(limited.url, None, retry=vd.Retry(total=3, max_wait=5)) as api:
        for _ in range(3):
            api.makes.search(limit=1).total
        with pytest.raises(vd.RateLimitError) as info:
            api.makes.search(limit=2).total
    assert info.value.retry_after == 60.0
    assert "retrying" not in caplog.text


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_transport_error_connection_refused(client_factory):
    url = f"http://127.0.0.1:{_closed_port()}"
    with client_factory(url, None, retry=NO_RETRY) as api:
        with pytest.raises(vd.TransportError) as info:
            api.makes.search().total
    assert not isinstance(info.value, vd.Timeout)
    assert info.value.url == url + "/api/makes/v2"
    assert info.value.status is None
    assert pickle.loads(pickle.dumps(info.value)).url == info.value.url


def test_timeout(api, emulator, client_factory):
    emulator.fault("/api/makes/v2", action="delay", delay_ms=3000)
    with client_factory(emulator.url, None, retry=NO_RETRY, timeout=0.5) as api:
        with pytest.raises(vd.Timeout) as info:
            api.makes.search().total
    assert isinstance(info.value, vd.TransportError)
    assert "timed out" in info.value.message


def test_decode_error_names_url_and_position(emulator, client_factory):
    body = '{"collection": {"count": 1}, "data": [{"id": 1,'
    emulator.fault("/api/makes/v2", status=200, body=body)
    with client_factory(emulator.url, None, retry=NO_RETRY) as api:
        with pytest.raises(vd.DecodeError) as info:
            api.makes.search().total
    exc = info.value
    assert exc.url == emulator.url + "/api/makes/v2"
    assert exc.position is not None and 0 <= exc.position <= len(body)
    assert f"at byte {exc.position}" in exc.message
    assert pickle.loads(pickle.dumps(exc)).position == exc.position


def test_decode_error_offline():
    with pytest.raises(vd.DecodeError) as info:
        vd._core.client.decode(b'{"data": [{"id": "x"}]}', "make", "envelope", "file:page.json")
    assert "field 'id'" in info.value.message and info.value.url == "file:page.json"
    with pytest.raises(vd.DecodeError, match="no 'data' member"):
        vd._core.client.decode(b'{"collection": {}}', "make", "envelope", "")
    with pytest.raises(vd.DecodeError, match="expected a JSON array"):
        vd._core.client.decode(b'{}', "year", "array", "")


def test_query_error_is_value_error(api):
    with pytest.raises(ValueError):
        api.trims.search(nope=1)
    with pytest.raises(vd.QueryError):
        api.vin("")


def test_invalid_utf8_in_an_error_body_is_a_bad_request(api, emulator):
    """The emulator echoes the bad bytes of the VIN; the client decodes them with replacement characters."""
    body = raw_error(emulator.url + "/api/vin/%FF%FE%FD")
    with pytest.raises(vd.BadRequestError) as info:
        api.get_json("/api/vin/%FF%FE%FD")
    assert info.value.status == 400 and info.value.exception == "BadRequestException"
    assert "\ufffd\ufffd\ufffd" in str(info.value)
    assert body["message"].replace("\ufffd", "") in str(info.value).replace("\ufffd", "")


def test_invalid_utf8_in_a_200_body_is_a_decode_error():
    """No real server sends this: a stub answers 200 with a bad byte inside a JSON string."""
    body = b'{"collection":{"count":1,"pages":1,"total":1},"data":[{"id":1,"name":"Bad \xff name"}]}'
    with stub_server(lambda path, headers: (200, {"Content-Type": "application/json"}, body)) as url:
        with vd.Client(base_url=url, api_token="", api_secret="", retry=NO_RETRY, rate_limit=None) as api:
            with pytest.raises(vd.DecodeError, match="UTF-8") as info:
                api.get_json("/api/makes/v2")
            assert info.value.position == body.index(b"\xff")
            with pytest.raises(vd.DecodeError):
                api.makes.search().first(1)


def test_long_conditions_are_refused_before_sending(api, emulator):
    cond = vd.F("model").isin([f"Model {i:04d}" for i in range(400)])
    with pytest.raises(vd.QueryError, match="8000"):
        api.trims.search(cond).total
    with pytest.raises(vd.QueryError, match="8000"):
        api.years(cond)
    with pytest.raises(vd.QueryError, match="8000"):
        api.trims.search(cond).to_pandas()
    assert emulator.stats()["by_path"].get("/api/trims/v2", 0) == 0
    assert emulator.stats()["by_path"].get("/api/years/v2", 0) == 0
    assert api.trims.search(vd.F("model").isin([f"Model {i:04d}" for i in range(100)])).total == 0


def test_414_from_a_server_is_a_clear_bad_request(api):
    with pytest.raises(vd.BadRequestError, match="414 URI Too Long") as info:
        api._core.get("/api/makes/v2?make=" + "a" * 9000)
    assert info.value.status == 414


def test_userinfo_never_shown(emulator):
    url = emulator.url.replace("http://", "http://user:hunter2@")
    with vd.Client(base_url=url, api_token="", api_secret="", retry=NO_RETRY) as api:
        assert "hunter2" not in repr(api)
        with pytest.raises(vd.NotFoundError) as info:
            api.get_json("/api/nowhere")
    assert "hunter2" not in str(info.value) and "hunter2" not in (info.value.url or "")


def test_get_json_merges_query_strings(api, raw_json):
    got = api.get_json("/api/makes/v2?limit=1", page=2)
    assert got == raw_json("/api/makes/v2?limit=1&page=2")
    assert got["collection"]["url"].count("?") == 1


def test_deprecated_endpoint_answering_403_is_permission_denied(database, client_factory):
    with Emulator(db=database, deprecated_403=True) as strict:
        body = raw_error(strict.url + "/api/trims?year=2019")
        assert body == {"exception": "DeprecatedException", "code": 403,
                        "message": "This endpoint is being deprecated. Use /api/trims/v2 instead."}
        with client_factory(strict.url, retry=NO_RETRY) as api:
            with pytest.warns(DeprecationWarning), pytest.raises(vd.PermissionDeniedError) as info:
                api.trims.search(year=2019, legacy=True).total
    err = info.value
    assert (err.status, err.exception, err.message) == (403, "DeprecatedException", body["message"])
    assert err.url.startswith(strict.url + "/api/trims?")


def test_huge_names_and_values_are_echoed_cut_with_their_length():
    """Issue 40, point 6: an unknown value, field, sort or vehicles field of a million characters is
    named by its first 200 and its length, found before any request (no server here)."""
    api = vd.Client(base_url="http://127.0.0.1:1")
    cases = {
        "unknown value ": lambda: api.engines.search(drive_type="x" * 10**6).total,
        "unknown json field ": lambda: api.trims.search(vd.F("y" * 10**6) == 1).total,
        "unknown sort ": lambda: api.trims.search(sort="z" * 10**6).total,
    }
    for head, call in cases.items():
        with pytest.raises(vd.QueryError) as e:
            call()
        text = str(e.value)
        assert text.startswith(head + "'" + text[len(head) + 1] * 200 + "'... (1,000,000 characters) for "), head
        assert len(text) < 1000, head
    with pytest.raises(vd.QueryError) as e:  # (a million would pass the json length limit first)
        api.vehicles.search(vd.F("q" * 5000) == 1).to_pandas()
    assert str(e.value).startswith("unknown vehicles condition field '" + "q" * 200 + "'... (5,000 characters). Valid: ")
    assert len(str(e.value)) < 1000
