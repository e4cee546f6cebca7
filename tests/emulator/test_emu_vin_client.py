"""The client's VIN side: local validation through the C++ bindings (no request) and the typed
record of Client.vin against the real emulator."""
from __future__ import annotations

from collections.abc import Mapping

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

GMC = "1GTG6CEN0L1139305"


@pytest.mark.parametrize("vin,message", [
    ("1GTG6CEN0L113930", "Invalid VIN '1GTG6CEN0L113930': expected 17 characters, got 16"),
    ("1GTG6CEN0L113930Q", "Invalid VIN '1GTG6CEN0L113930Q': character 'Q' at position 17 is not in the VIN "
                          "alphabet (0-9 and A-Z without I, O, Q)"),
    ("1GTG6CENAL1139305", "Invalid VIN '1GTG6CENAL1139305': position 9 (check digit) must be 0-9 or X, got 'A'"),
    ("1GTG6CEN0Z1139305", "Invalid VIN '1GTG6CEN0Z1139305': position 10 (model year) must be one of A-H, J-N, P, "
                          "R-T, V-Y, 1-9, got 'Z'"),
])
def test_validate_names_the_rule(vin: str, message: str) -> None:
    with pytest.raises(vd.QueryError) as e:
        vd.vin.validate(vin)
    assert str(e.value) == message
    assert e.value.field == "vin"


def test_validate_normalizes_and_check_digit() -> None:
    assert vd.vin.validate(" 1gtg6cen0l1139305 ") == GMC
    assert vd.vin.check_digit(GMC) == "0"
    assert vd.vin.check_digit(GMC[:8] + "7" + GMC[9:]) == "0"
    with pytest.raises(vd.QueryError):
        vd.vin.validate(17)  # type: ignore[arg-type]


def test_client_vin_is_typed(emulator: Emulator) -> None:
    premium = DEMO_ACCOUNTS["premium"]
    with vd.Client(premium["api_token"], premium["api_secret"], base_url=emulator.url) as api:
        r = api.vin(GMC)
        assert isinstance(r, vd.vin.VinResult)
        assert (r.year, r.make, r.model, r.trim) == (2020, "GMC", "Canyon", "SLE")
        assert isinstance(r.specs, Mapping) and r.specs["displacement_l"] == "3.6"
        assert r.specs["error_code"] == "0"
        assert r.trims and r.trims[0]["year"] == 2020
        assert len(api.vin(GMC, all_trims=True).trims) >= len(r.trims)
        with pytest.raises(vd.BadRequestError) as e:
            api.vin("1GTG6CENAL1139305")
        assert "position 9 (check digit)" in str(e.value)
