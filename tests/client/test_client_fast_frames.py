"""The fast page -> DataFrame path (pandas' internal constructors, frames._FastFrames) against
pandas' public construction (frames._page_to_pandas_public): the same frames, dtypes and values,
for every record type, empty pages and pages of 1, 10 and 1000 records with nulls; and the
fallbacks when a pandas lacks the internals."""
from __future__ import annotations

import json
import urllib.parse
from typing import Any, Dict, List

import pandas as pd
import pytest

from vehicledata import _core, frames, schema

SEARCHES = sorted(p for p, e in schema.endpoints().items() if e.kind == "search" and e.shape == "envelope")


@pytest.fixture(autouse=True)
def fresh_fast_path():
    """Each test starts without a cached fast path (and leaves none behind)."""
    frames._FAST.clear()
    yield
    frames._FAST.clear()


def _same(page: Any) -> pd.DataFrame:
    """page_to_pandas through the fast path, checked against the public construction."""
    fast = frames.page_to_pandas(page)
    assert frames._FAST.get("arrow") is not None, "the fast path fell back to the public one"
    public = frames._page_to_pandas_public(page)
    pd.testing.assert_frame_equal(fast, public, check_exact=True)
    # the blocks of pandas' own construction: the same dtypes, columns and order
    assert [(str(b.dtype), b.mgr_locs.as_array.tolist()) for b in fast._mgr.blocks] == \
        [(str(b.dtype), b.mgr_locs.as_array.tolist()) for b in public._mgr.blocks]
    assert isinstance(fast.index, pd.RangeIndex) and len(fast.index) == page.rows
    return fast


def _with_nulls(raw: Dict[str, Any], size: int) -> bytes:
    """The first `size` records of a page, every third with all its fields null and every third
    with its fields missing."""
    rows: List[Dict[str, Any]] = []
    for i, rec in enumerate(raw["data"][:size]):
        rows.append(rec if i % 3 == 0 else {} if i % 3 == 2 else {k: None for k in rec})
    return json.dumps({**raw, "data": rows}).encode()


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("name", sorted(schema.records()))
def test_an_empty_page_of_every_record(name, verbose):
    df = _same(frames.empty_page(name, verbose))
    assert len(df) == 0
    fields = schema.record(name).record_fields(verbose)
    assert list(df.columns) == [f.name for f in fields]
    for f in fields:
        assert df[f.name].dtype == pd.api.types.pandas_dtype(frames.pandas_dtype(f.type)), (name, f.name)


@pytest.mark.parametrize("path", SEARCHES)
def test_pages_of_every_search_with_nulls(raw_json, path):
    ep = schema.endpoint(path)
    checked = 0
    for verbose in ([False, True] if ep.verbose else [False]):
        required = "".join(f"{k}={v[0]}&" for k, v in ep.required_parameters().items())  # powersports `type`
        raw = raw_json(f"{path}?{required}limit=1000" + ("&verbose=yes" if verbose else ""))
        assert raw["data"], path
        for size in (1, 10, 1000):
            for body in (json.dumps({**raw, "data": raw["data"][:size]}).encode(), _with_nulls(raw, size)):
                page = _core.client.decode(body, ep.record, "envelope", "", verbose)
                df = _same(page)
                assert len(df) == min(size, len(raw["data"]))
                checked += 1
    assert checked >= 6


@pytest.mark.parametrize("path,record,verbose", [("/api/trims", "trim_legacy", True),
                                                  ("/api/mileages/v2", "mileage", False)])
def test_nulls_of_every_type_are_missing_values(raw_json, path, record, verbose):
    raw = raw_json(f"{path}?limit=10" + ("&verbose=yes" if verbose else ""))
    df = _same(_core.client.decode(_with_nulls(raw, 10), record, "envelope", "", verbose))
    for name in df.columns:
        assert df[name].isna().tolist()[1:3] == [True, True], name
        assert df[name].isna().iloc[0] == (raw["data"][0].get(name) is None), name


def test_nulls_and_values_of_every_type():
    types = {f.type for p, e in schema.endpoints().items() if e.kind == "search" and e.shape == "envelope"
             for f in schema.record(e.record).record_fields(True)}
    assert types == {"int", "int64", "decimal", "string", "timestamp", "nested"}
    page = _core.client.decode(b'[{"date": "2024-03-10", "count": 7}, {"date": null, "count": null},'
                               b' {"count": 3}]', "usage_day", "array", "")
    df = _same(page)
    assert df["date"].tolist()[0] == pd.Timestamp("2024-03-10") and df["date"].isna().tolist() == [False, True, True]
    assert df["count"].tolist() == [7, pd.NA, 3]


def test_the_fast_path_makes_its_frames_as_cheap_pandas_objects(raw_json):
    raw = raw_json("/api/trims/v2?limit=10")
    page = _core.client.decode(json.dumps(raw).encode(), "trim", "envelope", "")
    a, b = frames.page_to_pandas(page), frames.page_to_pandas(page)
    a.columns.name = "renamed"
    a.index.name = "row"
    assert b.columns.name is None and b.index.name is None  # the cached columns Index is not shared
    fresh = frames.page_to_pandas(page)
    assert fresh.columns.name is None and fresh.index.name is None
    a.loc[0, "make"] = "changed"
    assert b.loc[0, "make"] == raw["data"][0]["make"]


def test_floats_are_copied_as_pandas_copies_them(raw_json):
    # bodies with a wheel base (vPIC's; length has no public source and is null throughout)
    raw = raw_json("/api/bodies/v2?limit=5&json=" + urllib.parse.quote('[{"field":"wheel_base","op":"not null"}]'))
    page = _core.client.decode(json.dumps(raw).encode(), "body", "envelope", "")
    a = frames.page_to_pandas(page)
    assert a["wheel_base"].dtype == "float64"
    a.loc[0, "wheel_base"] = -1.0
    assert frames.page_to_pandas(page).loc[0, "wheel_base"] == float(raw["data"][0]["wheel_base"])


def test_without_the_internals_the_public_path_gives_the_same(raw_json, monkeypatch, caplog):
    raw = raw_json("/api/trims/v2?limit=10&verbose=yes")
    page = _core.client.decode(_with_nulls(raw, 10), "trim", "envelope", "", True)
    want = _same(page)

    def missing(*args: Any, **kw: Any) -> None:
        raise AttributeError("type object 'BlockManager' has no attribute 'from_blocks'")

    frames._FAST.clear()
    monkeypatch.setattr(frames._FastFrames, "__init__", missing)
    with caplog.at_level("WARNING", logger="vehicledata.frames"):
        got = frames.page_to_pandas(page)
        frames.page_to_pandas(page)
    assert frames._FAST == {"arrow": None}
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # said once, with the versions and the reason (never silently)
    import pyarrow as pa
    assert [r.getMessage() for r in caplog.records] == [
        "DataFrames of pages are built by pandas' public constructors (slower on small pages): the fast path"
        f" does not work with pandas {pd.__version__} and pyarrow {pa.__version__}: this pandas lacks an internal"
        " the fast path uses (AttributeError: type object 'BlockManager' has no attribute 'from_blocks')"]


def test_a_pandas_that_builds_differently_gets_the_public_path(raw_json, monkeypatch, caplog):
    raw = raw_json("/api/engines/v2?limit=10")
    page = _core.client.decode(json.dumps(raw).encode(), "engine", "envelope", "")
    want = frames._page_to_pandas_public(page)

    def differs(pd_: Any, fast: Any, public: Any) -> None:
        raise AssertionError("DataFrame.iloc[:, 0] (column name=\"id\") are different")

    monkeypatch.setattr(frames, "_check_same", differs)
    with caplog.at_level("WARNING", logger="vehicledata.frames"):
        got = frames.page_to_pandas(page)
    assert frames._FAST == {"arrow": None, "numpy": None}  # disabled for the rest of the process
    [record] = caplog.records
    assert record.levelname == "WARNING" and record.getMessage().endswith(
        "its frame of a page of engine records differs from pandas' public construction or failed"
        " (AssertionError: DataFrame.iloc[:, 0] (column name=\"id\") are different)")
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    pd.testing.assert_frame_equal(frames.page_to_pandas(page), want, check_exact=True)


def test_without_pyarrow_both_paths_agree(raw_json, monkeypatch):
    monkeypatch.setattr(frames, "_pyarrow", lambda: None)
    raw = raw_json("/api/trims/v2?limit=10&verbose=yes")
    page = _core.client.decode(_with_nulls(raw, 10), "trim", "envelope", "", True)
    fast = frames.page_to_pandas(page)
    assert frames._FAST.get("numpy") is not None
    public = frames._page_to_pandas_public(page)
    pd.testing.assert_frame_equal(fast, public, check_exact=True)
    assert fast["make"].dtype == object and fast["make"][0] == raw["data"][0]["make"]


# ---- what the fast path takes from the page: Page._pandas_values and the Arrow text export ----

def _pages_with_nulls(raw_json: Any) -> List[Any]:
    """10-record pages with nulls (every third record null, every third missing) of records with
    every kind of column: int64, float64, string, timestamp, nested (JSON text), date."""
    pages = []
    for path, record, verbose in [("/api/trims", "trim_legacy", True), ("/api/mileages/v2", "mileage", False),
                                  ("/api/trims/v2", "trim", False)]:
        raw = raw_json(f"{path}?limit=10" + ("&verbose=yes" if verbose else ""))
        pages.append(_core.client.decode(_with_nulls(raw, 10), record, "envelope", "", verbose))
    pages.append(_core.client.decode(b'[{"date": "2024-03-10", "count": 7}, {"date": null, "count": null}]',
                                     "usage_day", "array", ""))
    return pages


def test_pandas_values_are_the_page_columns_as_pandas_takes_them(raw_json):
    import numpy as np

    kinds = set()
    for page in _pages_with_nulls(raw_json) + [frames.empty_page("trim_legacy", True)]:
        values = page._pandas_values()
        cols = page.columns()
        assert len(values) == len(cols)
        for got, col in zip(values, cols):
            kinds.add(col["kind"])
            valid = col["valid"]
            if col["kind"] == "int64":
                numbers, mask = got
                assert numbers.dtype == np.int64 and mask.dtype == np.bool_
                assert numbers.tolist() == col["values"].tolist() and mask.tolist() == (~valid).tolist()
                assert numbers.flags.writeable and (len(numbers) == 0 or np.shares_memory(numbers, col["values"]))
            elif col["kind"] == "float64":
                assert got.dtype == np.float64 and got.flags.writeable
                np.testing.assert_array_equal(got, col["values"])  # NaN for nulls, as decoded
            elif col["kind"] == "timestamp":
                assert got.dtype == np.dtype("M8[us]") and got.shape == (1, page.rows)
                want = [v if ok else None for v, ok in zip(col["values"].tolist(), valid.tolist())]
                assert [None if np.isnat(t) else int(t.astype(np.int64)) for t in got[0]] == want
                if col["null_count"] == 0 and page.rows:
                    assert np.shares_memory(got, col["values"])  # a view: pandas writes into the page
                else:
                    assert not np.shares_memory(got, col["values"])  # a copy with NaT for the nulls
            else:
                assert got is None, col["name"]  # text, nested and dates come from the Arrow export
    assert kinds == {"int64", "float64", "string", "timestamp", "json"}


def test_the_text_export_is_the_pages_text_columns(raw_json):
    import pyarrow as pa

    for page in _pages_with_nulls(raw_json) + [frames.empty_page("trim_legacy", True)]:
        full = pa.record_batch(page)
        text = [f.name for f in full.schema if f.type in (pa.large_string(), pa.date32())]
        schema_ = pa.Schema._import_from_c_capsule(page._arrow_text_schema())
        assert schema_ == full.select(text).schema
        capsule, address = page._arrow_text_array()
        batch = pa.RecordBatch._import_from_c(address, schema_)
        del capsule
        assert batch.equals(full.select(text))
        assert batch.num_rows == page.rows


def test_a_text_export_not_imported_is_released_with_its_capsule(raw_json):
    raw = raw_json("/api/trims/v2?limit=10")
    page = _core.client.decode(json.dumps(raw).encode(), "trim", "envelope", "")
    for _ in range(3):
        capsule, address = page._arrow_text_array()
        assert isinstance(address, int) and address
        del capsule  # released by the capsule: the page and its columns stay as they were
    assert frames.page_to_pandas(page)["make"].tolist() == [r["make"] for r in raw["data"]]


def test_fast_frames_after_the_first_are_the_public_construction(raw_json):
    for page in _pages_with_nulls(raw_json):
        frames.page_to_pandas(page)  # the first of its layout: verified against the public path
        for _ in range(2):
            _same(page)


def test_pages_of_one_record_with_and_without_verbose_are_two_layouts(raw_json):
    raw = raw_json("/api/trims?limit=10")
    verbose = raw_json("/api/trims?limit=10&verbose=yes")
    a = _same(_core.client.decode(json.dumps(raw).encode(), "trim_legacy", "envelope", "", False))
    b = _same(_core.client.decode(json.dumps(verbose).encode(), "trim_legacy", "envelope", "", True))
    assert len(b.columns) > len(a.columns)
    assert list(a.columns) == [f.name for f in schema.record("trim_legacy").record_fields(False)]
    assert list(b.columns) == [f.name for f in schema.record("trim_legacy").record_fields(True)]
    assert len(frames._FAST["arrow"].layouts) == 2


def test_polars_frames_are_those_of_the_public_constructor(raw_json, monkeypatch):
    import polars as pl

    pages = _pages_with_nulls(raw_json) + [frames.empty_page("trim_legacy", True)]
    for page in pages:
        fast = frames.page_to_polars(page)
        public = pl.DataFrame(page)
        assert fast.schema == public.schema and fast.equals(public, null_equal=True)
    monkeypatch.setattr(frames, "_polars_unnest", lambda: None)  # a polars without the internals
    for page in pages:
        assert frames.page_to_polars(page).equals(pl.DataFrame(page), null_equal=True)


def test_a_large_first_page_is_checked_on_rows_spread_over_it(raw_json, monkeypatch):
    """The first frame of a layout is compared with pandas' public construction on at most
    frames._CHECK_ROWS rows of its page (first and last included), not on all of them: a whole
    crawl's first frame checked whole held the GIL for a quarter of a second."""
    raw = raw_json("/api/trims/v2?limit=1000&verbose=yes")
    one = _core.client.decode(_with_nulls(raw, 1000), "trim", "envelope", "", True)
    page = _core.client.concat([one.copy(), one.copy(), one.copy()])  # 3,000 rows, every third null
    checked: List[Any] = []
    check_same = frames._check_same

    def recorded(pd_: Any, fast: Any, public: Any) -> None:
        checked.append(fast)
        check_same(pd_, fast, public)

    monkeypatch.setattr(frames, "_check_same", recorded)
    df = frames.page_to_pandas(page)
    assert frames._FAST.get("arrow") is not None, "the fast path fell back to the public one"
    [sample] = checked
    assert len(sample) == frames._CHECK_ROWS < len(df) == 3000
    ids = df["id"].tolist()
    assert sample["id"].iloc[0] == ids[0] and sample["id"].iloc[-1] == ids[-1]
    assert set(sample["id"].dropna()) <= set(df["id"].dropna())
    assert sample.isna().any().any()  # the nulls of the page are in the sample
    pd.testing.assert_frame_equal(df, frames._page_to_pandas_public(page), check_exact=True)
    frames.page_to_pandas(page)
    assert len(checked) == 1  # verified once per layout
