"""One dtype map (frames.PANDAS_DTYPES): API frames and data-feed frames agree column by column."""
from __future__ import annotations

import datetime

import pandas as pd
import pyarrow as pa
import pytest

from vehicledata import _core, frames, schema
from vehicledata.feed import feed_tables


@pytest.fixture(scope="module")
def feed(tmp_path_factory, emulator_session, client_factory):
    with client_factory(emulator_session.url) as api:
        path = api.data_feed.download(tmp_path_factory.mktemp("feed") / "feed.zip")
        return api.data_feed.load(path)


def test_api_frames_follow_the_map_for_every_record_and_type():
    seen = set()
    for name, rec in schema.records().items():
        df = frames.page_to_pandas(frames.empty_page(name, verbose=True))
        for f in rec.record_fields(verbose=True):
            assert df[f.name].dtype == pd.api.types.pandas_dtype(frames.pandas_dtype(f.type)), (name, f.name)
            seen.add(f.type)
    assert seen >= {"int", "decimal", "string", "date", "timestamp", "nested"}, seen  # the schema has no bool


def test_a_date_is_the_same_dtype_and_value_from_a_page_and_from_arrow():
    page = _core.client.decode(b'[{"date": "2024-03-10", "count": 7}, {"date": null, "count": 1}]',
                               "usage_day", "array", "")
    api = frames.page_to_pandas(page)
    typed = pa.table({"date": pa.array([datetime.date(2024, 3, 10), None], frames.arrow_type(pa, "date")),
                      "count": pa.array([7, 1], frames.arrow_type(pa, "int"))})
    feed = frames.arrow_to_pandas(typed)
    assert str(api["date"].dtype) == str(feed["date"].dtype) == "datetime64[s]"
    pd.testing.assert_frame_equal(api, feed)
    assert api["date"][0] == pd.Timestamp("2024-03-10") and pd.isna(api["date"][1])


def test_every_feed_table_has_the_dtypes_of_its_api_frame(api, feed):
    assert sorted(feed) == sorted(feed_tables())
    compared = 0
    for table, df in feed.items():
        rec = schema.table_record(table)
        resource = getattr(api, table, None)  # the accessor of a feed table is named after it
        if resource is None:
            assert table == "powersports_model_years"  # the powersports years' rows: no search of their own
            continue
        ep = schema.endpoint(resource.path)
        assert ep.record == rec.name, table
        required = {name: allowed[0] for name, allowed in ep.required_parameters().items()}  # powersports' type
        reference = next(iter(resource.search(limit=20, **required).pages)).to_pandas()  # one page of the API
        assert len(reference) > 0, table
        for f in rec.fields:
            if f.name not in df.columns:
                continue
            want = pd.api.types.pandas_dtype(frames.pandas_dtype(f.type))
            assert df[f.name].dtype == want, (table, f.name, df[f.name].dtype, want)
            if f.name in reference.columns:
                assert df[f.name].dtype == reference[f.name].dtype, (table, f.name)
                compared += 1
    assert compared > 50, compared

