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


def _typed_filters(kind: str):
    """(accessor, filter) of every search accessor's keyword filter typed ``kind`` in the schema table."""
    from vehicledata import _typegen, _values, schema

    for res in _typegen.RESOURCES:
        ep = schema.endpoint_for("search", res)
        for name, t in _values.filter_types(ep).items():
            if t == kind:
                yield res, name


def test_every_int_filter_refuses_what_is_not_an_int(api):
    cases = list(_typed_filters("int"))
    assert ("trims", "year") in cases and ("trims", "make_id") in cases and ("bodies", "doors") in cases
    assert len(cases) > 20
    before = api.stats()["requests"]
    for res, name in cases:
        for value, shown in (("2020", f"str '2020'; pass {name}=2020"), (2020.0, f"float 2020.0; pass {name}=2020"),
                             (True, "bool True"), ("abc", "str 'abc'"), (b"7", "bytes b'7'")):
            with pytest.raises(vd.QueryError) as e:
                getattr(api, res).search(**{name: value})
            assert str(e.value).startswith(f"filter {name!r} of ") and f" takes an int, not {shown}" in str(e.value), \
                (res, name, str(e.value))
            assert e.value.field == name
    with pytest.raises(vd.QueryError, match="filter 'year' of /api/trims/v2 takes an int, not str '2020'"):
        api.vehicles.search(year="2020")  # the join's four searches: the same check
    assert api.stats()["requests"] == before  # refused before anything was sent


def test_int_filters_take_ints_of_numpy_and_float_filters_numbers(api):
    np = pytest.importorskip("numpy")
    want = api.trims.search(year=2019, make="BMW").total
    assert api.trims.search(year=np.int64(2019), make="BMW").total == want
    assert api.trims.search(year=np.int32(2019), make="BMW", limit=1).first(1)[0].year == 2019
    floats = list(_typed_filters("float"))
    assert ("engines", "size") in floats
    for res, name in floats:
        with pytest.raises(vd.QueryError, match=f"filter '{name}' of .* takes a float, not str '2.0'"):
            getattr(api, res).search(**{name: "2.0"})
        getattr(api, res).search(**{name: 2}).total  # an int is a number
        getattr(api, res).search(**{name: np.float32(2.0)}).total


def test_async_client_checks_the_types_too(emulator):
    import asyncio

    from client_support import make_async

    async def run() -> None:
        async with make_async(emulator.url) as aapi:
            with pytest.raises(vd.QueryError, match="filter 'make_id' of /api/trims/v2 takes an int, not str '5'"):
                aapi.trims.search(make_id="5")

    asyncio.run(run())


def test_text_that_is_not_text_is_a_query_error_before_anything_is_sent(api):
    """A lone surrogate in a filter, a path parameter (VIN, plate), a raw query or a condition: a
    QueryError naming the parameter, the character and its position (issue 40, point 7), not the
    UnicodeEncodeError of URL encoding or the binding's RuntimeError."""
    before = api.stats()["requests"]
    cases = [
        (lambda: api.trims.search(trim="Base\ud800").total, "trim 'Base\\ud800' is not valid text "
         "(surrogates not allowed: '\\ud800' at position 4)", "trim"),
        (lambda: api.vin("1GTG6CEN0L113930\ud800"), "vin '1GTG6CEN0L113930\\ud800' is not valid text "
         "(surrogates not allowed: '\\ud800' at position 16)", "vin"),
        (lambda: api.license_plate("US", "AB\udc00", "CA"), "lookup 'AB\\udc00' is not valid text", "lookup"),
        (lambda: api.get_json("/api/trims/v2", make="\ud800"), "make '\\ud800' is not valid text", "make"),
        (lambda: api.get_json("/api/trims/v2", **{"ma\ud800": "x"}),
         "parameter name 'ma\\ud800' is not valid text", "parameter name"),
        (lambda: api.trims.search(vd.F("make") == "T\ud800", year=2020).total,
         "condition 1 (field 'make'): 'T\\ud800' is not valid text", "make"),
        (lambda: api.vehicles.search(vd.F("engine.drive_type").like("\ud800%"), year=2020).to_pandas(),
         "condition 1 (field 'engine.drive_type'): '\\ud800%' is not valid text", "engine.drive_type"),
    ]
    for call, message, field in cases:
        with pytest.raises(vd.QueryError) as e:
            call()
        assert str(e.value).startswith(message), str(e.value)
        assert e.value.field == field
    assert api.stats()["requests"] == before
    assert api.vin("1GTG6CEN0L1139305").year == 2020  # valid text still goes
