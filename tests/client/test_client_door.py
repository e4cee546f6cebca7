"""One typed door (issue 39, point 3): every request of ``vd.Client``'s resources goes to the C++ core
through the client's Fetcher, as a bound endpoint (``schema.BoundEndpoint``: the endpoint of the
schema table with its record, ``Shape`` and ``Kind``, and the target), never around it.  Against the
real emulator: the core client is wrapped so that a request method called from anywhere but
``vehicledata._fetcher`` is recorded as a bypass."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import vehicledata as vd
from vehicledata import schema
from vehicledata._fetcher import on_the_wire
from vehicledata.schema import Kind, Shape

REQUESTS = ("get", "get_page", "get_pages", "collect_pages", "fetch_pages_settled", "download")


class Guard:
    """The core client, its request methods recording (caller module, method, shape)."""

    def __init__(self, core: Any) -> None:
        self._real = core
        self.calls: List[Tuple[str, str, str]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if name not in REQUESTS:
            return attr
        caller = sys._getframe(1).f_globals.get("__name__", "?")

        def call(*args: Any, **kwargs: Any) -> Any:
            shape = args[2] if name in ("get_page", "get_pages", "fetch_pages_settled") and len(args) > 2 else \
                args[3] if name == "collect_pages" and len(args) > 3 else ""
            self.calls.append((caller, name, shape))
            return attr(*args, **kwargs)

        return call


@pytest.fixture()
def guarded(api: vd.Client) -> Guard:
    guard = Guard(api._core_client)
    api._core_client = guard
    return guard


def test_every_resource_request_goes_through_the_fetcher(api: vd.Client, guarded: Guard, tmp_path: Path) -> None:
    assert api.years() and api.powersports_years(type="street_motorcycle")
    with pytest.warns(DeprecationWarning):
        assert api.years(legacy=True)
    assert api.vehicle_attributes("engines.fuel_type")
    assert api.account.requests() and api.account.requests_today() >= 1
    assert api.trims.get(9366).id == 9366
    camry = api.trims.search(year=2019, make="Toyota", model="Camry")  # its names checked first
    assert len(camry.to_pandas(page_size=2)) == camry.total > 2  # pages merged in C++ (collect_pages)
    assert len(api.trims.search(year=2019, make="BMW", limit=5).first(12)) == 12
    assert api.vin("1HGCM82633A004352").make
    assert api.license_plate("US", "ABC#TEST", region="CA")
    assert api.get_json("/api/makes/v2", year=2019)
    assert api.data_feed.last_updated()
    assert api.vin.decode_many(["1HGCM82633A004352", "5YJ3E1EA7KF317000"], progress=False).num_rows == 2
    bypasses = [c for c in guarded.calls if c[0] != "vehicledata._fetcher"]
    assert bypasses == [], f"requests around the Fetcher: {bypasses}"
    methods = {m for _, m, _ in guarded.calls}
    assert {"get", "get_page", "get_pages", "collect_pages", "fetch_pages_settled"} <= methods
    # The shapes the core was given are the schema's names, each one used.
    assert {s for _, _, s in guarded.calls if s} == {s.value for s in Shape}


def test_a_bound_endpoint_carries_the_schema_tables_shape_and_kind() -> None:
    detail = schema.endpoint_for(Kind.DETAIL, "trims")
    request = detail.bind("/api/trims/v2/9366")
    assert (request.path, request.record, request.shape, request.kind) == \
        ("/api/trims/v2/{id}", "trim_detail", Shape.OBJECT, Kind.DETAIL)
    assert request.at("/api/trims/v2/1").target == "/api/trims/v2/1" and request.at("x").endpoint is detail
    assert schema.endpoint_for(Kind.YEARS, "years").bind().target == "/api/years/v2"
    assert repr(request) == "<BoundEndpoint /api/trims/v2/{id} (detail, trim_detail as object): /api/trims/v2/9366>"
    assert f"{Shape.ENVELOPE}" == str(Shape.ENVELOPE) == "envelope" and Kind("vin") is Kind.VIN


def test_several_pages_in_one_call_are_of_one_endpoint() -> None:
    trims = schema.endpoint("/api/trims/v2")
    assert on_the_wire([trims.bind("/api/trims/v2?page=2"), trims.bind("/api/trims/v2?page=3")]) == \
        (["/api/trims/v2?page=2", "/api/trims/v2?page=3"], "trim", "envelope")
    with pytest.raises(ValueError, match="several endpoints"):
        on_the_wire([trims.bind(), schema.endpoint("/api/bodies/v2").bind()])
    with pytest.raises(ValueError, match="no requests"):
        on_the_wire([])


def test_a_pager_walks_a_search_endpoint_only(api: vd.Client) -> None:
    with pytest.raises(ValueError, match="is not a search of 'trim' records"):
        vd.Pager(api._fetcher, "/api/years/v2", "trim", [])
