"""Values checked before a request (vehicledata/_values.py): enumerated filters and conditions
against the schema table's lists with a "did you mean", sort keys by short name, blanks trimmed."""
from __future__ import annotations

import pytest

import vehicledata as vd


def test_an_unknown_enumerated_filter_is_a_query_error_with_a_hint(api):
    before = api.stats()["requests"]
    with pytest.raises(vd.QueryError, match=r"unknown value 'AWD' for filter drive_type of /api/engines/v2; "
                                            r"did you mean 'all wheel drive'\? Valid: all wheel drive, "):
        api.engines.search(drive_type="AWD", year=2020)
    with pytest.raises(vd.QueryError, match=r"did you mean 'SUV'\?"):
        api.bodies.search(type="SVU")
    assert api.stats()["requests"] == before  # nothing was sent


def test_valid_enumerated_filters_pass_as_the_service_reads_them(api):
    want = [r.id for r in api.engines.search(drive_type="all wheel drive", year=2020, make="Subaru")]
    assert want
    assert [r.id for r in api.engines.search(drive_type="All Wheel Drive ", year=2020, make="Subaru")] == want
    assert [r.id for r in api.engines.search(drive_type="all%", year=2020, make="Subaru")] == want
    suvs = api.bodies.search(type="suv", year=2020, make="Toyota").to_pandas()
    assert len(suvs) and set(suvs["type"]) == {"SUV"}


def test_stray_blanks_are_trimmed(api):
    want = api.trims.search(model="Camry", year=2020).to_pandas()
    assert len(want) > 0
    got = api.trims.search(model=" Camry ", year=2020)
    assert dict(got.params)["model"] == "Camry"
    assert list(got.to_pandas()["id"]) == list(want["id"])
    with pytest.raises(vd.QueryError, match="filter 'make' of /api/trims/v2 is blank"):
        api.trims.search(make="  ")


def test_sort_keys_by_their_short_name(api):
    pager = api.trims.search(year=2020, make="Honda", sort="msrp", direction="desc")
    assert dict(pager.params)["sort"] == "MakeModelTrims.msrp"
    msrp = [r.msrp for r in pager]
    assert msrp == sorted(msrp, reverse=True) and len(msrp) > 5
    assert dict(api.trims.search(sort="make").params)["sort"] == "Makes.name"
    assert dict(api.trims.search(sort="MakeModelTrims.year").params)["sort"] == "MakeModelTrims.year"
    with pytest.raises(vd.QueryError, match=r"unknown sort 'msrpp' for /api/trims/v2; did you mean 'msrp'\?"):
        api.trims.search(sort="msrpp")


def test_enumerated_condition_values_are_checked(api):
    with pytest.raises(vd.QueryError, match=r"unknown value 'AWD' for condition field engines.drive_type of "
                                            r"/api/trims/v2; did you mean 'all wheel drive'\?"):
        api.trims.search(vd.F("engines.drive_type") == "AWD")
    with pytest.raises(vd.QueryError, match=r"did you mean 'Sedan'\?"):
        api.trims.search(vd.F("bodies.type").isin(["SUV", "Sedn"]))
    ok = api.trims.search(vd.F("engines.drive_type") == "all wheel drive", year=2020, make="Subaru").to_pandas()
    like = api.trims.search(vd.F("engines.drive_type").like("ALL%"), year=2020, make="Subaru").to_pandas()
    assert len(ok) > 0 and list(like["id"]) == list(ok["id"])


def test_vehicles_check_values_too(api):
    with pytest.raises(vd.QueryError, match=r"did you mean 'all wheel drive'\?"):
        api.vehicles.search(vd.F("engine.drive_type") == "AWD", year=2020)
