"""Transport details seen from the server side: proxy variables, User-Agent, gzip, timeouts never infinite."""
from __future__ import annotations

import gzip
import json
import threading
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import vehicledata as vd
from client_support import stub_server


ENVELOPE = {"collection": {"url": "/api/makes/v2", "count": 2, "pages": 1, "total": 2, "next": "", "prev": "",
                           "first": "/api/makes/v2", "last": ""},
            "data": [{"id": 1, "name": "Acura"}, {"id": 2, "name": "Audi"}]}


@pytest.fixture()
def recording_proxy() -> Iterator[Dict[str, Any]]:
    """A forward proxy on loopback that answers every request itself and records it."""
    seen: List[Dict[str, Any]] = []

    def answer(path: str, headers: Any) -> Tuple[int, Dict[str, str], bytes]:
        seen.append({"target": path, "headers": dict(headers)})
        body = json.dumps(ENVELOPE).encode()
        out = {"Content-Type": "application/json"}
        if "gzip" in headers.get("Accept-Encoding", ""):
            body = gzip.compress(body)
            out["Content-Encoding"] = "gzip"
        return 200, out, body

    with stub_server(answer) as url:
        yield {"url": url, "seen": seen}


def test_proxy_variables_user_agent_and_gzip(recording_proxy, monkeypatch, client_factory):
    monkeypatch.setenv("http_proxy", recording_proxy["url"])
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with client_factory("http://vehicles.example.test", None) as api:
        records = [r.to_dict() for r in api.makes.search()]
    assert records == ENVELOPE["data"]
    (req,) = recording_proxy["seen"]
    assert req["target"] == "http://vehicles.example.test/api/makes/v2"  # absolute URI: it went through the proxy
    assert req["headers"]["User-Agent"] == f"vehicledata/{vd.__version__}"
    assert "gzip" in req["headers"]["Accept-Encoding"]  # a remote host: compressed bodies asked for and decoded


def test_explicit_proxy_option(recording_proxy, monkeypatch, client_factory):
    monkeypatch.delenv("http_proxy", raising=False)
    with client_factory("http://vehicles.example.test", None, proxy=recording_proxy["url"], compress=False) as api:
        assert api.makes.search().total == 2
    (req,) = recording_proxy["seen"]
    assert "Accept-Encoding" not in req["headers"]


def test_loopback_is_not_compressed(recording_proxy, client_factory):
    with client_factory(recording_proxy["url"], None) as api:
        assert api.makes.search().total == 2
    (req,) = recording_proxy["seen"]
    assert req["target"] == "/api/makes/v2"
    assert "Accept-Encoding" not in req["headers"]


def test_timeouts_must_be_finite():
    for bad in (0, -1):
        with pytest.raises(ValueError, match="never infinite"):
            vd.Client(base_url="http://127.0.0.1:1", timeout=bad)
    with pytest.raises(ValueError, match="http"):
        vd.Client(base_url="ftp://example.test")


def test_closed_client_refuses_work():
    api = vd.Client(base_url="http://127.0.0.1:1")
    api.close()
    with pytest.raises(vd.VehicleDataError, match="closed"):
        api.makes.search().total


def test_gil_is_released_during_transfers(emulator, client_factory):
    emulator.fault("/api/makes/v2", action="delay", delay_ms=800)
    counter = {"n": 0, "stop": False}

    def spin() -> None:
        while not counter["stop"]:
            counter["n"] += 1

    with client_factory(emulator.url, None) as api:
        t = threading.Thread(target=spin)
        t.start()
        try:
            before = counter["n"]
            assert api.makes.search().total > 0  # 0.8 s inside C++ waiting for the answer
            during = counter["n"] - before
        finally:
            counter["stop"] = True
            t.join()
    assert during > 200_000  # the other thread ran all along (it would be frozen if the GIL were held)
