"""Every JSON body is valid UTF-8, whatever bytes the request held: invalid UTF-8 in parameters,
raw bytes in the target (replaced in the envelope) and in an unknown path."""
from __future__ import annotations

from typing import Any

import pytest

from emu_support import Http, raw_request, strict_json


REPL = "\ufffd"


@pytest.mark.parametrize("target,path,message", [
    ("/api/trims/v2?year=%FF", "/api/trims/v2", f"Invalid value for year: expected an integer, got '{REPL}'"),
    ("/api/vehicle-attributes?attribute=%C0%AF", "/api/vehicle-attributes",
     f"Invalid attribute '{REPL}{REPL}': expected one of bodies.type, engines.cam_type, engines.cylinders, "
     "engines.drive_type, engines.engine_type, engines.fuel_type, engines.transmission, engines.valve_timing, "
     "engines.valves"),
    ("/api/vin/%FF%FE%FD", "/api/vin/%FF%FE%FD",
     f"Invalid VIN '{REPL}{REPL}{REPL}': expected 17 characters, got 3"),
    ("/api/license-plate?country_code=%FF&lookup=ABC123&region=CA", "/api/license-plate",
     f"Invalid country_code '{REPL}': expected one of US, CA, AU, UK, FR, IE, NZ, MX, DE, CZ, PT"),
])
def test_invalid_utf8_parameters_give_valid_json_errors(api: Http, target: str, path: str, message: str) -> None:
    r = api.get(target)
    assert r.status == 400, r.body
    assert r.headers["content-type"] == "application/json; charset=UTF-8"
    assert strict_json(r.body) == {"exception": "BadRequestException", "code": 400, "url": path, "message": message}


def test_raw_bytes_in_the_target_are_replaced_in_the_envelope(emulator: Any) -> None:
    status, headers, body = raw_request(
        emulator.url, b"GET /api/makes/v2?limit=1&x=\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 200, body
    c = strict_json(body)["collection"]
    assert c["url"] == f"/api/makes/v2?limit=1&x={REPL}{REPL}"
    assert c["first"] == c["url"]


def test_raw_bytes_in_an_unknown_path_give_a_valid_404(emulator: Any) -> None:
    status, headers, body = raw_request(
        emulator.url, b"GET /api/nope\xff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 404
    assert strict_json(body) == {"exception": "NotFoundException", "code": 404, "url": f"/api/nope{REPL}",
                                 "message": "Not Found"}
