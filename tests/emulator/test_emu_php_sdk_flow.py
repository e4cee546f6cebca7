"""The official PHP SDK's smoke test (carapi-php-sdk test.php), as raw HTTP against the emulator.

Same calls, same paths (the SDK uses the deprecated, unversioned ones), same query strings (PHP's
http_build_query, JSON conditions json_encode'd), same headers (accept, accept-encoding: gzip).
Every call must answer 200 with a body the SDK can decode. The SDK's trimItem(1) asks for id 1,
which the live catalogue has; the emulator's ids differ, so the flow asks for the id of the trim
its own trims call returned (the step the SDK's README describes).
"""
from __future__ import annotations

import gzip
import http.client
import json
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlencode

import pytest

from vehicledata.testing import DEMO_ACCOUNTS, Emulator


class PhpSdkLikeClient:
    def __init__(self, url: str) -> None:
        host, port = url.split("//", 1)[1].split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)
        self.jwt: Optional[str] = None

    def _send(self, method: str, path: str, body: Optional[bytes], accept: str) -> Tuple[int, Dict[str, str], bytes]:
        headers = {"accept": accept, "accept-encoding": "gzip"}
        if body is not None:
            headers["content-type"] = "application/json"
            headers["content-length"] = str(len(body))
        if self.jwt:
            headers["Authorization"] = f"Bearer {self.jwt}"
        self.conn.request(method, "/api" + path, body=body, headers=headers)
        r = self.conn.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        if hdrs.get("content-encoding", "").lower() == "gzip":
            data = gzip.decompress(data)
        return r.status, hdrs, data

    def authenticate(self, token: str, secret: str) -> str:
        status, _, body = self._send("POST", "/auth/login",
                                     json.dumps({"api_token": token, "api_secret": secret}).encode(), "text/plain")
        assert status == 200, body
        assert len(body.split(b".")) == 3
        self.jwt = body.decode()
        return self.jwt

    def get(self, path: str, query: Optional[Dict[str, Any]] = None) -> Any:
        target = path + ("?" + urlencode(query) if query else "")  # http_build_query: spaces as "+"
        status, _, body = self._send("GET", target, None, "application/json")
        assert status == 200, (target, status, body)
        return json.loads(body)

    def close(self) -> None:
        self.conn.close()


@pytest.fixture()
def sdk(emulator: Emulator) -> Any:
    c = PhpSdkLikeClient(emulator.url)
    yield c
    c.close()


def test_php_sdk_smoke_flow(sdk: PhpSdkLikeClient) -> None:
    acct = DEMO_ACCOUNTS["premium"]
    sdk.authenticate(acct["api_token"], acct["api_secret"])

    years = sdk.get("/years", {"make": "Tesla"})
    assert years and all(isinstance(y, int) for y in years) and years == sorted(years, reverse=True)

    makes = sdk.get("/makes", {"limit": 1, "page": 0})  # page=0: CakePHP's paginator reads page 1
    assert makes["collection"]["count"] == 1 and len(makes["data"]) == 1
    assert makes["collection"]["next"] == "/api/makes?page=2&limit=1"

    models = sdk.get("/models", {"make": "Tesla", "limit": 1})
    assert models["collection"]["count"] == 1 and models["data"][0]["make"] == "Tesla"

    cond = json.dumps([{"field": "make", "op": "like", "val": "Tesla"}])
    trims = sdk.get("/trims", {"json": cond, "limit": 1})
    assert trims["collection"]["count"] == 1
    trim_id = trims["data"][0]["id"]

    trim = sdk.get(f"/trims/{trim_id}")
    assert trim["id"] == trim_id

    for path in ("/bodies", "/engines", "/mileages"):
        page = sdk.get(path, {"make": "Tesla", "limit": 1})
        assert page["collection"]["count"] == 1, path

    vin = sdk.get("/vin/1GTG6CEN0L1139305")
    assert vin["year"] == 2020 and vin["make"].upper() == "GMC"

    for path in ("/interior-colors", "/exterior-colors"):
        page = sdk.get(path, {"make": "Tesla", "limit": 1})
        assert page["collection"]["count"] == 1, path

    attrs = sdk.get("/vehicle-attributes", {"attribute": "bodies.type"})
    assert attrs and all(isinstance(a, str) for a in attrs)

    assert isinstance(sdk.get("/account/requests"), list)
    assert set(sdk.get("/account/requests-today")) == {"count"}

    plate = sdk.get("/license-plate", {"country_code": "US", "lookup": "LNP8460#TEST", "region": "NY"})
    assert plate["vin"]

    obd = sdk.get("/obd-codes", {"limit": 1})
    assert obd["collection"]["count"] == 1
    assert sdk.get("/obd-codes/B1200")["code"] == "B1200"


def test_php_sdk_powersports_calls(sdk: PhpSdkLikeClient) -> None:
    """The SDK's Powersports class: years(), makes() and models() on /years/powersports,
    /makes/powersports and /models/powersports, with the service's required type."""
    acct = DEMO_ACCOUNTS["premium"]
    sdk.authenticate(acct["api_token"], acct["api_secret"])
    years = sdk.get("/years/powersports", {"type": "street_motorcycle", "make": "Honda"})
    assert years and all(isinstance(y, int) for y in years) and years == sorted(years, reverse=True)

    makes = sdk.get("/makes/powersports", {"type": "street_motorcycle", "year": 2020, "limit": 1})
    assert makes["collection"]["count"] == 1 and set(makes["data"][0]) == {"id", "name"}

    # The SDK's own test: models with a JsonSearch (make in [...]) and a year.
    cond = json.dumps([{"field": "make", "op": "in", "val": ["Honda"]}])
    models = sdk.get("/models/powersports", {"type": "street_motorcycle", "json": cond, "year": 2020, "limit": 1})
    assert models["collection"]["count"] == 1 and models["data"][0]["make"] == "Honda"
