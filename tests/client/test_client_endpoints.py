"""The client's accessors and the CLI's resources are the schema table's endpoints, served by the emulator."""
from __future__ import annotations

import json
from typing import Any, Callable

import pytest

import vehicledata as vd
from vehicledata import client as client_module
from vehicledata import schema


@pytest.mark.parametrize("resource", schema.resources("search"))
def test_every_search_of_the_schema_is_an_accessor(api: vd.Client, raw_json: Callable[..., Any], resource: str):
    ep = schema.endpoint_for("search", resource)
    assert isinstance(vars(vd.Client)[resource], property)
    acc = getattr(api, resource)
    assert (acc.path, acc.legacy_path) == (ep.path, ep.deprecates or None)
    required = {name: allowed[0] for name, allowed in ep.required_parameters().items()}  # powersports' type
    got = [r.to_dict(json_safe=True) for r in acc.search(limit=100, **required).first(3)]
    expected = raw_json(ep.path + "?limit=100" + "".join(f"&{k}={v}" for k, v in required.items()))["data"][:3]
    assert len(got) == 3
    key = "id" if "id" in expected[0] else "code"
    assert [r[key] for r in got] == [r[key] for r in expected]
    if ep.deprecates:
        with pytest.warns(DeprecationWarning, match=f"{ep.deprecates} is deprecated by the service; use {ep.path}"):
            legacy = acc.search(limit=100, legacy=True).first(3)
        assert [r[key] for r in legacy] == [r[key] for r in raw_json(ep.deprecates + "?limit=100")["data"][:3]]


@pytest.mark.parametrize("resource", schema.resources("detail"))
def test_every_detail_of_the_schema_is_get(api: vd.Client, raw_json: Callable[..., Any], resource: str):
    ep = schema.endpoint_for("detail", resource)
    acc = getattr(api, resource)
    assert acc.detail_path == ep.path
    first = acc.search(limit=100).first(1)[0]
    key = first[ep.parameter]
    rec = acc.get(key)
    assert rec[ep.parameter] == key
    assert rec.to_dict(json_safe=True)[ep.parameter] == raw_json(ep.path.replace("{" + ep.parameter + "}",
                                                                                str(key)))[ep.parameter]


def test_a_search_without_a_typed_property_is_still_an_accessor(api: vd.Client):
    # What a new search endpoint in schema.cpp gets: a property made from the table.
    prop = client_module._search_property("obd_codes")
    res = prop.__get__(api)
    assert isinstance(res, client_module.SearchResource) and res is api.obd_codes
    assert "obd_codes" in (prop.__doc__ or "")


def test_the_other_accessors_use_the_schema_paths(api: vd.Client, raw_json: Callable[..., Any]):
    assert api.years.path == schema.endpoint_for("years").path
    assert api.years.legacy_path == schema.endpoint_for("years", deprecated=True).path
    assert api.vehicle_attributes.path == schema.endpoint_for("attributes").path
    assert api.years(make="BMW") == raw_json(schema.endpoint_for("years").path + "?make=BMW")
    assert api.vehicle_attributes("engines.valves") == raw_json(api.vehicle_attributes.path +
                                                                "?attribute=engines.valves")
    assert api.account.requests_today() >= 1
    assert api.vin("1HGCM82633A004352").year == 2003
    assert api.license_plate("US", "ABC#TEST", region="CA")["make"] == "Toyota"
    assert api.data_feed.last_updated()


def test_cli_resources_are_the_schema_endpoints(cli: Callable[..., Any], capsys: pytest.CaptureFixture):
    def help_of(*argv: str) -> str:
        with pytest.raises(SystemExit) as exit_:
            cli(*argv, "--help")
        assert exit_.value.code == 0
        return capsys.readouterr().out

    out = help_of("get")
    names = [e.resource.replace("_", "-") for e in schema.endpoints().values()
             if e.kind in ("years", "search", "attributes") and not e.deprecated]
    assert len(names) == 15
    for name in names:
        assert name in out
    for resource in schema.resources("detail"):
        assert f"by its {schema.endpoint_for('detail', resource).parameter}" in help_of("get", resource.replace("_", "-"))


def test_cli_detail_by_code(cli: Callable[..., Any], api: vd.Client):
    code = api.obd_codes.search(limit=100).first(1)[0].code
    status, out, err = cli("get", "obd-codes", "--id", code, "--format", "json")
    assert status == 0, err
    assert json.loads(out)["code"] == code
