"""DataFrames and Arrow tables from the C++ columns: dtypes and values."""
from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import vehicledata as vd
from vehicledata import schema

EXPECTED_PANDAS = {"int": "Int64", "int64": "Int64", "decimal": "float64", "string": "string",
                   "timestamp": "datetime64[us, UTC]"}


def _cell(v):
    if v is pd.NA or v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT:
        return None
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime()
    if isinstance(v, np.generic):
        return v.item()
    return v


@pytest.mark.parametrize("name,path,record", [("trims", "/api/trims/v2", "trim"),
                                              ("bodies", "/api/bodies/v2", "body"),
                                              ("engines", "/api/engines/v2", "engine"),
                                              ("mileages", "/api/mileages/v2", "mileage")])
def test_dtypes_and_values_match_raw_json(api, raw_json, typed, name, path, record):
    df = getattr(api, name).search(year=2019, make="BMW", limit=30).to_pandas()
    raw = raw_json(f"{path}?year=2019&make=BMW&limit=1000")
    fields = schema.record(record).record_fields()
    assert list(df.columns) == [f.name for f in fields]
    for f in fields:
        assert str(df[f.name].dtype) == EXPECTED_PANDAS[f.type], f.name
    expected = typed(raw["data"], record)
    rows = [{k: _cell(v) for k, v in row.items()} for row in df.to_dict(orient="records")]
    for got, want in zip(rows, expected):
        for f in fields:
            w = want[f.name]
            if isinstance(w, datetime):
                w = w.astimezone(timezone.utc)
            assert got[f.name] == w, (f.name, got[f.name], w)
    assert len(rows) == len(expected) == raw["collection"]["total"]


def test_nulls_are_missing_values(api):
    df = api.mileages.search(year=2019, make="BMW", limit=1000).to_pandas()
    assert df["range_electric"].isna().any()
    assert df["range_electric"].dtype == "Int64"
    assert df["fuel_tank_capacity"].dtype == "float64"
    assert df["series"].dtype == "string"


def test_iter_pandas_one_frame_per_page(api):
    pager = api.trims.search(year=2019, make="BMW", limit=25)
    frames = list(pager.iter_pandas())
    assert len(frames) == pager.page_count
    assert [len(f) for f in frames[:-1]] == [25] * (len(frames) - 1)
    whole = pd.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(whole, api.trims.search(year=2019, make="BMW", limit=1000).to_pandas())


def test_to_arrow_types(api):
    table = api.trims.search(year=2019, make="BMW", limit=1000).to_arrow()
    assert table.schema.field("id").type == pa.int64()
    assert table.schema.field("make").type == pa.large_string()
    assert table.schema.field("created").type == pa.timestamp("us", tz="UTC")
    df = api.trims.search(year=2019, make="BMW", limit=1000).to_pandas()
    assert table.num_rows == len(df)
    assert table.column("msrp").to_pylist() == [None if v is pd.NA else int(v) for v in df["msrp"]]
    assert table.column("series").null_count == int(df["series"].isna().sum())
    body = api.bodies.search(year=2019, make="BMW", limit=5).to_arrow()
    assert body.schema.field("length").type == pa.float64()


def test_decimals_and_timestamps_exact(api, raw_json):
    df = api.engines.search(year=2019, make="BMW", limit=1000).to_pandas()
    raw = raw_json("/api/engines/v2?year=2019&make=BMW&limit=1000")["data"]
    assert [None if math.isnan(x) else x for x in df["size"]] == [
        None if r["size"] is None else float(r["size"]) for r in raw]


def test_records_keep_the_offset(api, raw_json):
    rec = next(iter(api.trims.search(year=2019, make="BMW", limit=1)))
    raw = raw_json("/api/trims/v2?year=2019&make=BMW&limit=1")["data"][0]
    assert rec.created == datetime.fromisoformat(raw["created"])
    assert rec.created.utcoffset() == datetime.fromisoformat(raw["created"]).utcoffset()


def test_decode_accepts_escapes_nulls_and_missing_fields():
    body = (b'{"data":[{"id":1,"name":"A\\/B \\u0026 C\\u00e9","extra":{"x":[1,2]}},'
            b'{"name":null},{"id":3}],"collection":{"url":"\\/api\\/makes\\/v2","count":3,"pages":1,"total":3,'
            b'"next":"","prev":"","first":"\\/api\\/makes\\/v2","last":""}}')
    page = vd._core.client.decode(body, "make", "envelope", "")
    assert page.rows == 3
    assert page.to_lists() == {"id": [1, None, 3], "name": ["A/B & C\u00e9", None, None]}
    assert page.collection["url"] == "/api/makes/v2"
    df = vd.frames.page_to_pandas(page) if hasattr(vd, "frames") else None
    from vehicledata import frames

    df = frames.page_to_pandas(page)
    assert df["id"].tolist() == [1, pd.NA, 3]
    assert df["name"].isna().tolist() == [False, True, True]


def test_decode_timestamps():
    parse = vd._core.client.parse_timestamp
    assert parse("2023-06-29T21:01:06-04:00") == (1688086866000000, -240)
    assert parse("2023-06-29T21:01:06Z") == (1688072466000000, 0)
    assert parse("2023-06-29 21:01:06.5+05:30") == (1688052666500000, 330)
    assert parse("2023-13-29T21:01:06Z") is None
    assert parse("yesterday") is None


def test_empty_frame_has_schema_dtypes():
    from vehicledata import frames

    df = frames.pages_to_pandas([], "trim")
    assert len(df) == 0
    assert str(df["id"].dtype) == "Int64" and str(df["created"].dtype) == "datetime64[us, UTC]"


def test_without_pyarrow_strings_are_python_objects(api, monkeypatch):
    from vehicledata import frames

    monkeypatch.setattr(frames, "_pyarrow", lambda: None)
    page = api.trims.search(year=2019, make="BMW", limit=1000).pages
    core = next(page)._core
    col = next(c for c in core.columns() if c["name"] == "series")
    arr = frames._pandas_column(pd, None, col, core.rows)
    assert isinstance(arr, np.ndarray) and arr.dtype == object
    assert [v is None for v in arr] == [not v for v in col["valid"]]
    df = frames.page_to_pandas(core)
    assert set(df["make"]) == {"BMW"}
    assert df["series"].isna().tolist() == [not v for v in col["valid"]]


def test_records_are_light_mappings(api):
    import pickle

    rec = api.trims.search(year=2019, make="BMW").first(1)[0]
    assert rec.make == rec["make"] == dict(rec)["make"] == "BMW"
    assert list(rec) == schema.record("trim").field_names()
    assert pickle.loads(pickle.dumps(rec)) == rec
    with pytest.raises(AttributeError, match="no field 'colour'"):
        rec.colour
    with pytest.raises(AttributeError):
        rec.make = "Audi"  # type: ignore[misc]


def test_legacy_trim_old_and_documented_shapes_decode_alike(api, raw_json):
    """The older verbose shape (arrays bodies, engines, ...) decodes into the documented members."""
    import json as _json

    trim_id = api.trims.search(year=2019, make="BMW", limit=1).first(1)[0].id
    new = raw_json(f"/api/trims/{trim_id}?verbose=yes")
    old = {k: v for k, v in new.items() if not k.startswith("make_model_trim_")}
    old["bodies"] = [new["make_model_trim_body"]]
    old["engines"] = [new["make_model_trim_engine"]]
    old["mileages"] = [new["make_model_trim_mileage"]]
    old["exterior_colors"] = new["make_model_trim_exterior_colors"]
    old["interior_colors"] = new["make_model_trim_interior_colors"]
    a = vd._core.client.decode(_json.dumps(new).encode(), "trim_legacy", "object", "", True)
    b = vd._core.client.decode(_json.dumps(old).encode(), "trim_legacy", "object", "", True)
    assert a.to_lists() == b.to_lists()
    engine = a.to_lists()["make_model_trim_engine"][0]
    assert (engine if isinstance(engine, dict) else _json.loads(engine)) == new["make_model_trim_engine"]
    old["bodies"] = []
    c = vd._core.client.decode(_json.dumps(old).encode(), "trim_legacy", "object", "", True)
    assert c.to_lists()["make_model_trim_body"] == [None]
