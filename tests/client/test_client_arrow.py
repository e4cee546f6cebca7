"""The Arrow C Data Interface export of decoded pages, and records as views over the columns."""
from __future__ import annotations

import gc
import json
import pickle
from datetime import datetime, timezone

import pandas as pd
import pyarrow as pa
import pytest

import vehicledata as vd
from vehicledata import _core, frames
from vehicledata.pager import Record, records_of

# One row with a value in every column, one with every column null, one with every column missing.
TRIMS = json.dumps([
    {"id": 9366, "make_id": 3, "year": 2019, "make": "BMW", "series": "5 Series", "msrp": 53400,
     "created": "2023-06-29T21:01:06-04:00", "engines": [{"engine_type": "gas", "size": "2.0", "hp": 248}]},
    {"id": None, "make_id": None, "year": None, "make": None, "series": None, "msrp": None, "created": None,
     "engines": None},
    {},
]).encode()


def _decode(body: bytes, record: str, shape: str = "array") -> object:
    return _core.client.decode(body, record, shape, "")


def test_pa_table_of_a_page_equals_to_arrow_and_keeps_nulls() -> None:
    page = _decode(TRIMS, "trim_detail")
    table = pa.table(page)
    assert table.equals(frames.page_to_arrow(page))
    assert pa.record_batch(page).equals(table.to_batches()[0])
    lists = page.to_lists()
    assert table.column_names == list(lists)
    for name in table.column_names:
        col = table.column(name)
        assert col.null_count == sum(v is None for v in lists[name]), name
        assert [v is None for v in col.to_pylist()] == [v is None for v in lists[name]], name
    assert table.column("id").to_pylist() == [9366, None, None]
    assert table.column("make").to_pylist() == ["BMW", None, None]
    assert table.column("created").to_pylist() == [datetime(2023, 6, 30, 1, 1, 6, tzinfo=timezone.utc), None, None]
    engines = table.column("engines").to_pylist()
    assert json.loads(engines[0]) == [{"engine_type": "gas", "size": "2.0", "hp": 248}] and engines[1:] == [None, None]
    assert table.schema.field("created").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("engines").type == pa.large_string()


def test_decimal_and_date_columns() -> None:
    bodies = _decode(b'[{"id":1,"length":"192.1","width":null},{"id":2,"length":"7"}]', "body")
    t = pa.table(bodies)
    assert t.schema.field("length").type == pa.float64()
    assert t.column("length").to_pylist() == [192.1, 7.0]
    assert t.column("width").to_pylist() == [None, None] and t.column("width").null_count == 2
    days = _decode(b'[{"date":"2024-02-29","count":3},{"date":null,"count":1},{"count":null}]', "usage_day")
    t = pa.table(days)
    assert t.schema.field("date").type == pa.date32()
    assert t.column("date").to_pylist() == [datetime(2024, 2, 29).date(), None, None]
    assert t.column("count").to_pylist() == [3, 1, None]
    df = frames.page_to_pandas(days)
    assert str(df["date"].dtype) == "datetime64[s]" and str(df["count"].dtype) == "Int64"
    assert df["date"].isna().tolist() == [False, True, True]
    assert df["date"][0] == pd.Timestamp("2024-02-29")


def test_a_malformed_date_raises_value_error() -> None:
    page = _decode(b'[{"date":"2024-02-30","count":3}]', "usage_day")
    with pytest.raises(ValueError, match="not a date"):
        pa.table(page)
    with pytest.raises(ValueError, match="not a date"):
        frames.page_to_pandas(page)


def test_the_export_outlives_the_page_object() -> None:
    page = _decode(TRIMS, "trim_detail")
    batch = pa.record_batch(page)
    del page
    gc.collect()
    assert batch.column(batch.schema.get_field_index("make")).to_pylist() == ["BMW", None, None]


def test_stream_of_several_pages_and_errors() -> None:
    a, b = _decode(TRIMS, "trim_detail"), _decode(b'[{"id":5}]', "trim_detail")
    reader = pa.RecordBatchReader.from_stream(frames.ArrowStream(frames.empty_page("trim_detail"), iter([a, b])))
    table = reader.read_all()
    assert table.num_rows == 4 and table.column("id").to_pylist() == [9366, None, None, 5]

    def failing():
        yield a
        raise RuntimeError("the fetch failed")

    reader = pa.RecordBatchReader.from_stream(frames.ArrowStream(a, failing()))
    with pytest.raises(Exception, match="the fetch failed"):
        reader.read_all()
    other = _decode(b'[{"id":5,"name":"BMW"}]', "make")
    with pytest.raises(Exception, match="other columns"):
        pa.RecordBatchReader.from_stream(frames.ArrowStream(a, iter([other]))).read_all()


def test_pager_and_pages_through_the_arrow_protocols(api) -> None:
    search = lambda: api.trims.search(year=2019, make="BMW", limit=25)  # noqa: E731
    whole = search().to_arrow()
    assert pa.table(search()).equals(whole)
    assert pa.RecordBatchReader.from_stream(search()).read_all().equals(whole)
    pages = list(api.trims.search(year=2019, make="BMW", limit=25).pages)
    assert len(pages) > 1
    assert pa.concat_tables([pa.table(p) for p in pages]).equals(whole)
    assert pa.record_batch(pages[0]).num_rows == 25
    pd.testing.assert_frame_equal(frames.arrow_to_pandas(whole), search().to_pandas())


def test_frames_are_writable(api) -> None:
    page = next(iter(api.trims.search(year=2019, make="BMW", limit=5).pages))
    df = page.to_pandas()
    df.loc[0, "make"] = "Audi"
    df.loc[0, "created"] = pd.Timestamp("2020-01-01", tz="UTC")
    df.loc[1, "msrp"] = None
    assert df.loc[0, "make"] == "Audi" and pd.isna(df.loc[1, "msrp"])
    assert page.to_arrow().column("make").to_pylist()[0] == "BMW"


def test_records_are_views_that_make_only_what_is_read() -> None:
    records = records_of(_decode(TRIMS, "trim_detail"))
    r = records[0]
    assert isinstance(r, Record) and r._is_view
    assert (r.id, r["make"], r.msrp, r.series) == (9366, "BMW", 53400, "5 Series")
    assert r.created == datetime.fromisoformat("2023-06-29T21:01:06-04:00")
    assert r.created.utcoffset().total_seconds() == -4 * 3600
    engines = r.engines
    assert engines is r.engines  # nested values are made once
    assert isinstance(engines[0], Record) and engines[0].size == 2.0 and engines[0]["hp"] == 248
    assert r._is_view and "make" in r and "colour" not in r and len(r) == 22
    assert list(r)[:3] == ["id", "make_id", "model_id"]
    assert records[1].make is None and records[2].make is None and records[2].engines is None
    with pytest.raises(KeyError):
        r["colour"]
    with pytest.raises(AttributeError, match="did you mean 'make'"):
        r.mak
    with pytest.raises(AttributeError, match="read-only"):
        r.make = "Audi"  # type: ignore[misc]


def test_record_views_compare_pickle_and_convert_like_dicts() -> None:
    page = _decode(TRIMS, "trim_detail")
    lists = page.to_lists()
    rows = [dict(zip(lists, row)) for row in zip(*lists.values())]
    views = records_of(page)
    for view, row in zip(records_of(page), rows):
        plain = {k: (v if not isinstance(v, list) else [dict(x) for x in v]) for k, v in view.to_dict().items()}
        want = {k: v for k, v in row.items() if k != "engines"}
        assert {k: v for k, v in plain.items() if k != "engines"} == want
    assert views[0].to_dict()["engines"] == [{"engine_type": "gas", "size": 2.0, "hp": 248}]
    back = pickle.loads(pickle.dumps(views[0]))
    assert back == views[0] and not back._is_view and back._kind == "trim_detail"
    assert views[1] == dict(views[1]) and views[1] != views[0]
    assert repr(views[0]).startswith("<Record trim_detail id=9366 year=2019 make='BMW'")
    # A dict-backed record behaves the same.
    d = Record({"id": 1, "make": "BMW"}, "trim")
    assert d.make == d["make"] == "BMW" and dict(d) == {"id": 1, "make": "BMW"} and not d._is_view


def test_records_keep_their_page_alive() -> None:
    records = records_of(_decode(TRIMS, "trim_detail"))
    gc.collect()
    assert [r.make for r in records] == ["BMW", None, None]


def test_records_from_the_emulator_match_the_raw_json(api, raw_json, typed) -> None:
    got = api.trims.search(year=2019, make="BMW", limit=10).first(10)
    want = typed(raw_json("/api/trims/v2?year=2019&make=BMW&limit=10")["data"], "trim")
    assert [dict(r) for r in got] == want
    assert all(isinstance(r, vd.Record) for r in got)
