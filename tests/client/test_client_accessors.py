"""Every accessor against the emulator; decoded values equal the stdlib's reading of the same URL."""
from __future__ import annotations

import warnings
from urllib.parse import quote

import pytest

import vehicledata as vd
from vehicledata import schema


SEARCHES = [
    ("makes", "/api/makes/v2", {"year": 2019}),
    ("models", "/api/models/v2", {"make": "BMW"}),
    ("submodels", "/api/submodels/v2", {"make": "BMW", "year": 2019}),
    ("trims", "/api/trims/v2", {"year": 2019, "make": "BMW"}),
    ("bodies", "/api/bodies/v2", {"year": 2019, "make": "BMW"}),
    ("engines", "/api/engines/v2", {"year": 2019, "make": "BMW"}),
    ("mileages", "/api/mileages/v2", {"year": 2019, "make": "BMW"}),
    ("exterior_colors", "/api/exterior-colors/v2", {"year": 2019, "make": "BMW"}),
    ("interior_colors", "/api/interior-colors/v2", {"year": 2019, "make": "BMW"}),
    ("obd_codes", "/api/obd-codes", {"code": "P01%"}),
    ("powersports_makes", "/api/makes/powersports", {"type": "street_motorcycle", "year": 2019, "make": "Ha%"}),
    ("powersports_models", "/api/models/powersports", {"type": "street_motorcycle", "make": "Honda"}),
]


def _query(filters):
    return "&".join(f"{k}={quote(str(v), safe='')}" for k, v in filters.items())


@pytest.mark.parametrize("name,path,filters", SEARCHES, ids=[s[0] for s in SEARCHES])
def test_search_records_equal_raw_json(api, raw_json, name, path, filters, typed):
    pager = getattr(api, name).search(limit=1000, **filters)
    records = list(pager)
    raw = raw_json(f"{path}?{_query(filters)}&limit=1000")
    assert pager.total == raw["collection"]["total"] == len(records) > 0
    ep = schema.endpoint(path)
    assert [r.to_dict() for r in records] == typed(raw["data"], ep.record)
    first = records[0]
    field = schema.record(ep.record).field_names()[0]
    assert getattr(first, field) == first[field] == first.to_dict()[field]


@pytest.mark.parametrize("name,path,filters", SEARCHES, ids=[s[0] for s in SEARCHES])
def test_unknown_filter_is_refused_before_sending(api, emulator, name, path, filters):
    def served():  # request counters only: the gate's busy/buffered figures are a moment's state
        stats = emulator.stats()
        return stats["requests"], stats["by_path"], stats["by_status"]

    before = served()
    with pytest.raises(vd.QueryError) as info:
        getattr(api, name).search(colour="red")
    assert "unknown filter 'colour'" in str(info.value)
    assert path in str(info.value)
    assert served() == before


def test_years(api, raw_json):
    assert api.years(make="BMW") == raw_json("/api/years/v2?make=BMW")
    assert api.years(make="BMW")[0] > api.years(make="BMW")[-1]


def test_powersports_years(api, raw_json):
    years = api.powersports_years(type="street_motorcycle", make="Honda")
    assert years == raw_json("/api/years/powersports?type=street_motorcycle&make=Honda")
    assert years[0] > years[-1] and api.powersports_years.legacy_path is None
    with pytest.raises(TypeError, match="no legacy endpoint"):
        api.powersports_years(type="street_motorcycle", legacy=True)


@pytest.mark.parametrize("name", ["powersports_years", "powersports_makes", "powersports_models"])
def test_powersports_without_type_raise_the_servers_400(api, name):
    with pytest.raises(vd.BadRequestError) as info:
        result = getattr(api, name)(make="Honda")
        if name != "powersports_years":
            list(result)  # a search pager asks on iteration
    assert info.value.status == 400
    assert "The type parameter is required: one of street_motorcycle" in str(info.value)


def test_demo_data_without_credentials(demo_api, raw_json):
    assert demo_api.years() == raw_json("/api/years/v2", anonymous=True)
    assert min(demo_api.years()) == 2015 and max(demo_api.years()) == 2020
    assert demo_api.trims.search(vd.F("year") == 2010).total == 0
    with pytest.raises(vd.QueryError, match="outside the demo data-set's model years 2015-2020"):
        demo_api.trims.search(year=2010)  # a year= keyword is checked against /api/years/v2


def test_trim_detail_with_nested_records(api, raw_json, typed):
    trim_id = next(iter(api.trims.search(year=2019, make="BMW", limit=1))).id
    detail = api.trims.get(trim_id)
    raw = raw_json(f"/api/trims/v2/{trim_id}")
    assert detail.to_dict() == typed(raw, "trim_detail")
    assert detail.id == trim_id
    assert isinstance(detail.bodies[0].wheel_base, float) and detail.bodies[0].length is None  # no public source
    assert detail.engines[0].engine_type == raw["engines"][0]["engine_type"]


def test_trim_detail_unknown_id_is_not_found(api):
    with pytest.raises(vd.NotFoundError) as info:
        api.trims.get(987654321)
    assert info.value.status == 404
    assert info.value.exception == "RecordNotFoundException"


def test_trim_get_refuses_non_integer_id(api):
    with pytest.raises(vd.QueryError):
        api.trims.get("abc")


def test_legacy_endpoints_warn_and_work(api, raw_json, typed):
    with pytest.warns(DeprecationWarning, match=r"/api/trims is deprecated.*/api/trims/v2"):
        pager = api.trims.search(legacy=True, year=2019, make="BMW", limit=1000)
    raw = raw_json("/api/trims?year=2019&make=BMW&limit=1000")
    assert [r.to_dict() for r in pager] == typed(raw["data"], "trim_legacy")
    with pytest.warns(DeprecationWarning):
        legacy = api.trims.get(raw["data"][0]["id"], legacy=True)
    assert legacy.make_model.make.name == "BMW"
    for name in ("bodies", "engines", "mileages", "exterior_colors", "interior_colors", "makes", "models"):
        with pytest.warns(DeprecationWarning):
            assert getattr(api, name).search(legacy=True, year=2019).total > 0
    with pytest.warns(DeprecationWarning):
        assert api.years(legacy=True) == raw_json("/api/years")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api.trims.search(year=2019).total  # v2: no warning


def test_conditions_encode_to_json_parameter(api, raw_json):
    pager = api.engines.search(vd.F("horsepower_hp") >= 500, year=2019, limit=1000)
    records = list(pager)
    assert records and all(r.horsepower_hp >= 500 for r in records)
    raw = raw_json("/api/engines/v2?year=2019&json=" + quote('[{"field":"horsepower_hp","op":">=","val":500}]')
                   + "&limit=1000")
    assert [r.id for r in records] == [r["id"] for r in raw["data"]]
    where = api.engines.search(where='[{"field":"horsepower_hp","op":">=","val":500}]', year=2019, limit=1000)
    assert [r.id for r in where] == [r.id for r in records]
    # Conditions and where= text go together, in that order, into one json parameter.
    both = api.engines.search(vd.F("horsepower_hp") >= "500", where='[{"field":"year","op":"=","val":"2019"}]',
                              limit=1000)
    assert dict(both.params)["json"] == ('[{"field":"horsepower_hp","op":">=","val":500},'
                                         '{"field":"year","op":"=","val":2019}]')
    assert [r.id for r in both] == [r.id for r in records]
    # where="[]" sends no json parameter, as before.
    assert "json" not in dict(api.engines.search(where="[]", year=2019).params)


def test_invalid_condition_is_a_query_error(api):
    with pytest.raises(vd.QueryError):
        api.trims.search(vd.F("year") >= "soon")
    with pytest.raises(vd.QueryError):
        api.obd_codes.search(vd.F("code") == "P0100")  # obd-codes takes no json


def test_sort_and_direction(api):
    recs = list(api.trims.search(year=2019, make="BMW", sort="MakeModelTrims.msrp", direction="desc", limit=1000))
    msrps = [r.msrp for r in recs if r.msrp is not None]
    assert msrps == sorted(msrps, reverse=True)
    with pytest.raises(vd.QueryError, match="unknown sort"):
        api.trims.search(sort="price")
    with pytest.raises(vd.QueryError, match="direction"):
        api.trims.search(direction="up")
    with pytest.raises(vd.QueryError, match="limit"):
        api.trims.search(limit=5000)


def test_vehicle_attributes(api, raw_json):
    assert api.vehicle_attributes("engines.fuel_type") == raw_json("/api/vehicle-attributes?attribute=engines.fuel_type")
    with pytest.raises(vd.QueryError, match="unknown attribute"):
        api.vehicle_attributes("engines.colour")


def test_obd_code_get(api, raw_json):
    assert api.obd_codes.get("P0100").to_dict() == raw_json("/api/obd-codes/P0100")
    with pytest.raises(vd.NotFoundError):
        api.obd_codes.get("P9999X")


def test_license_plate(api, raw_json, typed):
    rec = api.license_plate("US", "ABC#TEST", region="CA")
    assert rec.to_dict() == typed(raw_json("/api/license-plate?country_code=US&lookup=ABC%23TEST&region=CA"),
                                  "license_plate")
    with pytest.raises(vd.NotFoundError) as info:
        api.license_plate("US", "NOPE123", region="CA")
    assert info.value.exception == "NotFoundException"


def test_vin(api, raw_json, typed):
    raw = raw_json("/api/vin/1HGCM82633A004352")
    rec = api.vin("1HGCM82633A004352")
    assert rec.to_dict() == typed(raw, "vin_result")
    assert (rec.year, rec.make, rec.model) == (raw["year"], raw["make"], raw["model"])
    assert rec.specs == raw["specs"] and len(rec.trims) == len(raw["trims"])
    verbose = api.vin("1HGCM82633A004352", verbose=True, all_trims=True)
    raw_verbose = raw_json("/api/vin/1HGCM82633A004352?verbose=yes&all_trims=yes")
    fields = vd.schema.record("trim_legacy").field_names()
    ours = [{k: v for k, v in t.to_dict().items() if k in fields} for t in verbose.trims]
    assert ours == typed(raw_verbose["trims"], "trim_legacy")
    extras = [k for k in raw_verbose["trims"][0] if k not in fields]  # verbose additions, kept as served
    assert extras
    detail = vd.schema.record("trim_detail")
    for k in extras:  # verbose additions: scalars as served, trim_detail's nested arrays typed by their record
        raw_value, ours_value = raw_verbose["trims"][0][k], verbose.trims[0].to_dict()[k]
        f = detail.field(k) if k in detail.field_names() else None
        if f is not None and f.type == "nested":
            raw_value = [{n: v for n, v in typed(x, f.nested, True).items() if n in x} for x in raw_value]
        assert ours_value == raw_value, k
    with pytest.raises(vd.APIError):
        api.vin("NOT-A-VIN")


def test_account_usage(api, raw_json):
    api.trims.search(year=2019).total
    today = api.account.requests_today()
    assert today >= 1
    days = api.account.requests()
    raw = raw_json("/api/account/requests")
    assert [(r.date, r.count) for r in days][:-1] == [(d["date"], d["count"]) for d in raw][:-1]
    assert days[-1].date == raw[-1]["date"]


def test_data_feed_last_updated(api, raw_json):
    assert api.data_feed.last_updated() == raw_json("/api/data-feeds/last-updated")["last_updated"]


def test_get_json_escape_hatch(api, raw_json):
    assert api.get_json("/api/makes/v2", year=2019) == raw_json("/api/makes/v2?year=2019")


LEGACY_VERBOSE = ["bodies", "engines", "mileages", "exterior_colors", "interior_colors"]


@pytest.mark.parametrize("name", LEGACY_VERBOSE)
def test_legacy_verbose_search_keeps_verbose_fields(api, raw_json, typed, name):
    """verbose=yes on a deprecated search: the emulator's make_model_id, make_id, year, make, model, trim are kept."""
    path = api._search(name).legacy_path
    record = schema.endpoint(path).record
    verbose_only = [f.name for f in schema.record(record).fields if f.verbose_only]
    assert verbose_only == ["make_model_id", "make_id", "year", "make", "model", "trim"]
    raw = raw_json(f"{path}?make=Plymouth&verbose=yes&limit=1000")
    assert raw["data"] and all(raw["data"][0][k] is not None for k in verbose_only)
    with pytest.warns(DeprecationWarning):
        pager = getattr(api, name).search(legacy=True, verbose=True, make="Plymouth", limit=1000)
    first = pager.first(1)[0]
    assert first.to_dict() == typed(raw["data"][0], record, True)
    df = pager.to_pandas()
    assert list(df.columns) == schema.record(record).field_names(verbose=True)
    assert len(df) == raw["collection"]["total"]
    head = df.head(len(raw["data"]))
    assert head["make"].tolist() == [r["make"] for r in raw["data"]]
    assert head["make_model_id"].tolist() == [r["make_model_id"] for r in raw["data"]]
    with pytest.warns(DeprecationWarning):
        plain = getattr(api, name).search(legacy=True, make="Plymouth", limit=5).first(1)[0]
    assert "make" not in plain and set(plain) == set(schema.record(record).field_names())


LEGACY_TRIM_MEMBERS = {"make_model_trim_body": "body_legacy", "make_model_trim_engine": "trim_engine_legacy",
                       "make_model_trim_mileage": "mileage_legacy",
                       "make_model_trim_exterior_colors": "exterior_color_legacy",
                       "make_model_trim_interior_colors": "interior_color_legacy"}


def test_legacy_verbose_trim_detail_keeps_nested_members(api, raw_json, typed):
    raw = raw_json("/api/trims/187?verbose=yes")
    with pytest.warns(DeprecationWarning):
        ours = api.trims.get(187, legacy=True, verbose=True).to_dict()
    assert set(ours) == set(raw)
    for key in ("make_id", "make", "model"):
        assert ours[key] == raw[key] is not None
    for name, nested in LEGACY_TRIM_MEMBERS.items():
        assert raw[name], name
        if isinstance(raw[name], list):
            assert ours[name] == [{k: v for k, v in typed(x, nested, True).items() if k in x} for x in raw[name]]
        else:
            assert ours[name] == {k: v for k, v in typed(raw[name], nested, True).items() if k in raw[name]}
    base = {k: v for k, v in typed(raw, "trim_legacy", True).items() if k not in LEGACY_TRIM_MEMBERS}
    assert {k: ours[k] for k in base} == base
