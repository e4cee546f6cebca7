"""Polars DataFrames from the pages' Arrow export: types, exact values, nulls, empty results, and
the ImportError without polars."""
from __future__ import annotations

import json
import sys
from datetime import date, datetime, timezone

import polars as pl
import pytest

import vehicledata as vd
from vehicledata import _core, frames, schema

POLARS_TYPES = {"int": pl.Int64, "int64": pl.Int64, "decimal": pl.Float64, "bool": pl.Boolean,
                "string": pl.String, "nested": pl.String, "date": pl.Date,
                "timestamp": pl.Datetime("us", "UTC")}


@pytest.mark.parametrize("name,path,record", [("trims", "/api/trims/v2", "trim"),
                                              ("bodies", "/api/bodies/v2", "body"),
                                              ("mileages", "/api/mileages/v2", "mileage")])
def test_types_and_values_match_raw_json(api, raw_json, typed, name, path, record):
    df = getattr(api, name).search(year=2019, make="BMW", limit=30).to_polars()
    raw = raw_json(f"{path}?year=2019&make=BMW&limit=1000")
    fields = schema.record(record).record_fields()
    assert df.columns == [f.name for f in fields]
    assert df.schema == pl.Schema({f.name: POLARS_TYPES[f.type] for f in fields})
    expected = typed(raw["data"], record)
    assert len(df) == len(expected) == raw["collection"]["total"] > 30
    for got, want in zip(df.to_dicts(), expected):
        for f in fields:
            w = want[f.name]
            if isinstance(w, datetime):
                w = w.astimezone(timezone.utc)
            assert got[f.name] == w, (f.name, got[f.name], w)


def test_nulls_are_nulls_and_agree_with_pandas(api):
    pager = api.mileages.search(year=2019, make="BMW", limit=1000)
    df, pdf = pager.to_polars(), pager.to_pandas()
    for col in ("range_electric", "fuel_tank_capacity", "series"):
        assert df[col].null_count() == int(pdf[col].isna().sum()), col
    assert df["range_electric"].null_count() > 0


def test_a_page_and_the_pager_agree(api):
    pager = api.trims.search(year=2019, make="BMW", limit=25)
    pages = [p.to_polars() for p in pager.pages]
    assert len(pages) == pager.page_count > 1
    assert pl.concat(pages).equals(api.trims.search(year=2019, make="BMW").to_polars())
    assert pl.DataFrame(pager).equals(pl.concat(pages))  # the docs' polars.DataFrame(pager)


def test_nested_columns_are_json_text(raw_json):
    raw = raw_json("/api/trims?limit=5&verbose=yes")
    page = _core.client.decode(json.dumps(raw).encode(), "trim_legacy", "envelope", "", True)
    df = frames.page_to_polars(page)
    nested = [f.name for f in schema.record("trim_legacy").record_fields(True) if f.type == "nested"]
    assert nested
    for name in nested:
        assert df.schema[name] == pl.String
        assert [None if v is None else json.loads(v) for v in df[name]] == [r.get(name) for r in raw["data"]]


def test_dates_and_nulls_of_an_array_page():
    page = _core.client.decode(b'[{"date": "2024-03-10", "count": 7}, {"date": null, "count": null}]',
                               "usage_day", "array", "")
    df = frames.page_to_polars(page)
    assert df.schema == pl.Schema({"date": pl.Date, "count": pl.Int64})
    assert df.to_dicts() == [{"date": date(2024, 3, 10), "count": 7}, {"date": None, "count": None}]


def test_empty_results_have_the_columns(api):
    df = api.trims.search(make="Toyota", trim="No Such Trim").to_polars()  # (make="NoSuchMake": a QueryError)
    assert df.height == 0
    fields = schema.record("trim").record_fields()
    assert df.schema == pl.Schema({f.name: POLARS_TYPES[f.type] for f in fields})
    assert frames.page_to_polars(frames.empty_page("trim")).schema == df.schema


def test_numbers_are_not_copied():
    body = b'[{"date": "2024-03-10", "count": 7}]'
    page = _core.client.decode(body, "usage_day", "array", "")
    df = frames.page_to_polars(page)
    page.columns()[1]["values"][0] = 8  # the page's buffer, seen by polars
    assert df["count"][0] == 8


def test_frame_from_bytes_polars(raw_json):
    raw = raw_json("/api/trims/v2?limit=10")
    body = json.dumps(raw).encode()
    df = vd.frames.frame_from_bytes(body, "trim", kind="polars")
    assert isinstance(df, pl.DataFrame)
    assert df["id"].to_list() == [r["id"] for r in raw["data"]]
    assert df.equals(pl.from_pandas(vd.frames.frame_from_bytes(body, "trim")))
    with pytest.raises(ValueError, match="kind must be 'pandas' or 'polars'"):
        vd.frames.frame_from_bytes(body, "trim", kind="arrow")  # type: ignore[call-overload]


def test_without_polars_an_import_error_names_the_extra(api, monkeypatch):
    page = next(iter(api.trims.search(limit=3).pages))
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(ImportError, match=r"pip install 'pyvehicledata\[polars\]'"):
        page.to_polars()
