"""Names and years of a search checked against the service's own lists before the search is sent
(issue 40, point 2; ``vehicledata._names``): a mistyped make or model, or a year the service does
not have, is a QueryError with a "did you mean" or the range of years, not an empty result; each
list is requested once per client; a list that cannot be fetched skips its check; the CLI prints
an empty result as one sentence.  Against the real emulator over loopback."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List

import pytest

import vehicledata as vd
from vehicledata.testing import Emulator

from client_support import make_async


def by_path(emulator: Emulator) -> Dict[str, int]:
    return dict(emulator.stats()["by_path"])


def listed(names: List[str]) -> str:
    return ", ".join(sorted(names, key=str.lower))


@pytest.fixture()
def makes(emulator: Emulator, client_factory: Callable[..., vd.Client]) -> List[str]:
    with client_factory(emulator.url) as other:
        return [str(m) for m in other.makes.search().to_pandas()["name"]]


@pytest.fixture()
def toyota_models(emulator: Emulator, client_factory: Callable[..., vd.Client]) -> List[str]:
    with client_factory(emulator.url) as other:
        return [str(m) for m in other.models.search(make="Toyota").to_pandas()["name"]]


@pytest.fixture()
def years(emulator: Emulator, client_factory: Callable[..., vd.Client]) -> List[int]:
    with client_factory(emulator.url) as other:
        return other.years()


def make_message(makes: List[str]) -> str:
    if len(makes) <= 60:
        return f" Valid: {listed(makes)}."
    return f" The service lists {len(makes)} makes (api.makes.search())."


# ---- errors before the search --------------------------------------------------------------------
def test_a_mistyped_make_is_an_error_before_the_search(api: vd.Client, emulator: Emulator, makes: List[str]):
    before = by_path(emulator)
    with pytest.raises(vd.QueryError) as info:
        api.trims.search(year=2019, make="Toyta")
    assert str(info.value) == ("unknown make 'Toyta' for /api/trims/v2; did you mean 'Toyota'?" +
                               make_message(makes))
    assert info.value.field == "make"
    after = by_path(emulator)
    assert after.get("/api/trims/v2", 0) == before.get("/api/trims/v2", 0)  # the search was not sent
    assert after["/api/makes/v2"] == before.get("/api/makes/v2", 0) + 1


def test_a_mistyped_model_is_an_error_naming_the_make(api: vd.Client, toyota_models: List[str]):
    with pytest.raises(vd.QueryError) as info:
        api.trims.search(year=2019, make="Toyota", model="Camri")
    assert str(info.value) == ("unknown model 'Camri' of make 'Toyota' for /api/trims/v2; did you mean 'Camry'?"
                               f" Valid: {listed(toyota_models)}.")
    with pytest.raises(vd.QueryError, match=r"^unknown model 'Corola' of make 'toyota' for /api/engines/v2; "
                                            r"did you mean 'Corolla'\?"):
        api.engines.search(make="toyota", model="Corola")


def test_a_mistyped_submodel_is_an_error_naming_make_and_model(api: vd.Client, emulator: Emulator,
                                                               client_factory: Callable[..., vd.Client]):
    with client_factory(emulator.url) as other:
        names = sorted(set(other.submodels.search(make="Toyota", model="Camry").to_pandas()["submodel"]))
    with pytest.raises(vd.QueryError) as info:
        api.trims.search(year=2019, make="Toyota", model="Camry", submodel="Hybird LE")
    assert str(info.value) == ("unknown submodel 'Hybird LE' of 'Toyota' 'Camry' for /api/trims/v2; did you mean "
                               f"'Hybrid LE'? Valid: {listed(names)}.")
    assert api.trims.search(year=2019, make="Toyota", model="Camry", submodel="hybrid le").total > 0  # case ignored


def test_names_compare_as_the_service_compares_them(api: vd.Client):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        n = api.trims.search(year=2019, make="Toyota", model="Camry").total
        assert n > 0
        # case ignored (the service's collation), stray blanks trimmed
        assert api.trims.search(year=2019, make="TOYOTA", model="camry ").total == n
        assert api.trims.search(year=2019, make=" toyota", model="Camry").total == n
        # a search of the makes (models) is not checked against itself
        assert api.makes.search(make="Toyta").total == 0
        assert api.models.search(make="Toyota", model="Camri").total == 0
        # a model of the make in another year than asked: a legitimate empty result
        assert api.trims.search(year=2015, make="Toyota", model="GR Supra").total == 0
    # like filters (the deprecated endpoints): a pattern that matches a listed name
    with pytest.warns(DeprecationWarning):
        assert api.trims.search(make="Toy%", year=2019, legacy=True, limit=1).total > 0
    with pytest.warns(DeprecationWarning), pytest.raises(vd.QueryError, match=r"^unknown make 'Toyt%' for "
                                                                              r"/api/trims; did you mean"):
        api.trims.search(make="Toyt%", legacy=True)
    # a make given by id, or a model without a make: not checked
    assert api.trims.search(model="Camri").total == 0


def test_a_year_outside_the_services_years_names_the_range(api: vd.Client, years: List[int]):
    lo, hi = min(years), max(years)
    for year in (2035, lo - 1):
        with pytest.raises(vd.QueryError) as info:
            api.trims.search(year=year)
        assert str(info.value) == f"year {year} for /api/trims/v2 is outside the service's model years {lo}-{hi}"
        assert info.value.field == "year"
    with pytest.raises(vd.QueryError, match=r"^year 2035 for /api/models/v2 is outside"):
        api.models.search(year=2035, make="Toyota")
    assert api.trims.search(year=hi, limit=1).total > 0


def test_without_credentials_the_message_names_the_demo_years(demo_api: vd.Client):
    for year in (2035, 2010):
        with pytest.raises(vd.QueryError) as info:
            demo_api.trims.search(year=year, make="Toyota")
        assert str(info.value) == (f"year {year} for /api/trims/v2 is outside the demo data-set's model years "
                                   "2015-2020: without a subscription (no api_token/api_secret) the service "
                                   "serves only those")
    with pytest.raises(vd.QueryError) as info:
        demo_api.trims.search(make="Pontiac")  # (its last model year is 2010)
    assert str(info.value).startswith("unknown make 'Pontiac' for /api/trims/v2. Valid: Acura, ")
    assert str(info.value).endswith(" Without a subscription (no api_token/api_secret) the service lists only the "
                                    "makes of its demo data-set, model years 2015-2020.")
    assert demo_api.trims.search(year=2016, make="Toyota", limit=1).total > 0


def test_vehicles_check_their_names_too(api: vd.Client, emulator: Emulator):
    with pytest.raises(vd.QueryError, match=r"^year 2035 for /api/trims/v2 is outside the service's model years"):
        api.vehicles.search(year=2035)
    with pytest.raises(vd.QueryError, match=r"^unknown make 'Toyta' for /api/trims/v2; did you mean 'Toyota'\?"):
        api.vehicles.search(year=2019, make="Toyta")


# ---- one request per list per client -----------------------------------------------------------
def test_each_list_is_requested_once_per_client(emulator: Emulator, client_factory: Callable[..., vd.Client]):
    before = by_path(emulator)
    with client_factory(emulator.url) as api:
        api.trims.search(year=2019, make="Toyota", model="Camry").total
        api.engines.search(year=2020, make="toyota", model="Corolla").to_pandas()
        api.vehicles.search(year=2019, make="Toyota", model="Camry").to_pandas()
        with pytest.raises(vd.QueryError):
            api.trims.search(year=2019, make="Toyota", model="Camri")
        api.trims.search(year=2019, make="Honda", model="Civic").total
    after = by_path(emulator)
    sent = {p: after.get(p, 0) - before.get(p, 0) for p in ("/api/years/v2", "/api/makes/v2", "/api/models/v2")}
    assert sent == {"/api/years/v2": 1, "/api/makes/v2": 1, "/api/models/v2": 2}  # Toyota's and Honda's
    with client_factory(emulator.url) as another:  # another client: its own lists
        another.trims.search(make="Toyota").total
    assert by_path(emulator)["/api/makes/v2"] == after["/api/makes/v2"] + 1


def test_a_list_that_cannot_be_fetched_skips_its_check(emulator: Emulator, client_factory: Callable[..., vd.Client]):
    with client_factory(emulator.url) as api:
        emulator.fault("/api/makes/v2", status=403, count=1)
        emulator.fault("/api/years/v2", status=403, count=1)
        assert api.trims.search(year=2035, make="Toyta").total == 0  # as before: no check, no failure
        assert api.trims.search(make="Toyta").total == 0  # (the failure is remembered: not asked again)
        with pytest.raises(vd.QueryError, match="did you mean 'Camry'"):  # the models list still works
            api.trims.search(make="Toyota", model="Camri")


# ---- the async client: the same checks, awaited before the first request -----------------------
@pytest.mark.asyncio
async def test_the_async_client_checks_the_same_names(emulator: Emulator, makes: List[str]):
    before = by_path(emulator)
    async with make_async(emulator.url) as aapi:
        pager = aapi.trims.search(year=2019, make="Toyta")  # nothing sent yet
        with pytest.raises(vd.QueryError) as info:
            await pager.total
        assert str(info.value) == ("unknown make 'Toyta' for /api/trims/v2; did you mean 'Toyota'?" +
                                   make_message(makes))
        with pytest.raises(vd.QueryError, match=r"^year 2035 for /api/trims/v2 is outside"):
            await aapi.trims.search(year=2035).to_pandas()
        with pytest.raises(vd.QueryError, match="did you mean 'Camry'"):
            await aapi.vehicles.search(year=2019, make="Toyota", model="Camri").to_pandas()
        df = await aapi.vehicles.search(year=2019, make="Toyota", model="Camry").to_pandas()
        assert len(df) > 0
    after = by_path(emulator)
    assert after.get("/api/trims/v2", 0) - before.get("/api/trims/v2", 0) == 1  # the one good search
    sent = {p: after.get(p, 0) - before.get(p, 0) for p in ("/api/years/v2", "/api/makes/v2", "/api/models/v2")}
    assert sent == {"/api/years/v2": 1, "/api/makes/v2": 1, "/api/models/v2": 1}


@pytest.mark.asyncio
async def test_the_async_vehicles_crawls_share_each_lists_request(emulator: Emulator):
    before = by_path(emulator)
    async with make_async(emulator.url) as aapi:
        assert len(await aapi.vehicles.search(year=2020, make="Honda", model="Civic").to_pandas()) > 0
    after = by_path(emulator)
    sent = {p: after.get(p, 0) - before.get(p, 0) for p in ("/api/years/v2", "/api/makes/v2", "/api/models/v2")}
    assert sent == {"/api/years/v2": 1, "/api/makes/v2": 1, "/api/models/v2": 1}


# ---- the CLI --------------------------------------------------------------------------------------
def test_the_cli_prints_an_empty_result_as_one_sentence(cli: Any):
    code, out, err = cli("get", "trims", "--year", "2019", "--make", "Toyota", "--model", "Camry",
                         "--trim", "No Such Trim", "--no-rate-limit")
    assert (code, out) == (0, "no trims match year=2019, make=Toyota, model=Camry, trim=No Such Trim\n")
    code, out, err = cli("get", "trims", "--year", "2019", "--make", "Toyta", "--no-rate-limit")
    assert code != 0 and out == ""
    assert "unknown make 'Toyta' for /api/trims/v2; did you mean 'Toyota'?" in err
    code, out, _ = cli("get", "trims", "--year", "2019", "--make", "Toyota", "--trim", "No Such Trim",
                       "--format", "csv", "--no-rate-limit")
    assert code == 0 and out.startswith("id,") and out.count("\n") == 1  # csv: the header, for programs
