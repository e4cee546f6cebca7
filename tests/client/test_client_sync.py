"""sync() (issue 25 item 5, issue 22 item 4): instants across both DST transitions, the watermark's
types, every endpoint with a ``modified`` field, conditions beside ``since``."""
from __future__ import annotations

import time
from datetime import date, datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

import vehicledata as vd
from vehicledata import schema
from vehicledata.client import _SEARCHES
from vehicledata.testing import Emulator

EDT = timezone(timedelta(hours=-4))
EST = timezone(timedelta(hours=-5))


def _changed_after(api, mark: datetime, **filters) -> list:
    """The reference: every record of the search whose modified instant is after ``mark``."""
    df = api.trims.search(**filters).to_pandas()
    return sorted(df.loc[df["modified"] > pd.Timestamp(mark), "id"].tolist())


@pytest.fixture()
def touched(database, client_factory):
    """A private emulator (touches must not reach the shared one) and a client of it."""
    with Emulator(db=database) as emu, client_factory(emu.url) as api:
        yield emu, api


def test_sync_returns_a_record_changed_inside_the_fall_back_hour(touched):
    emu, api = touched
    ids = sorted(api.trims.search(year=2019, make="BMW").to_pandas()["id"].tolist())[:3]
    before, inside, after = (int(i) for i in ids)
    emu.touch("trims", [before], modified="2023-11-05T01:30:00-04:00")  # 30 min before the mark
    emu.touch("trims", [inside], modified="2023-11-05T01:15:00-05:00")  # 30 min after it, in EST
    emu.touch("trims", [after], modified="2023-11-05T01:50:00-04:00")   # 5 min after it, in EDT
    mark = datetime(2023, 11, 5, 1, 45, tzinfo=EDT)
    df, new_mark = api.trims.sync(since=mark, year=2019, make="BMW")
    got = sorted(df["id"].tolist())
    assert inside in got and after in got and before not in got
    assert got == _changed_after(api, mark, year=2019, make="BMW")
    assert len(got) == len(set(got))
    assert new_mark == df["modified"].max()
    # The other side of the hour: a mark in EST, a record earlier in EDT (its text sorts later).
    late_mark = datetime(2023, 11, 5, 1, 20, tzinfo=EST)
    df, _ = api.trims.sync(since=late_mark, year=2019, make="BMW")
    assert before not in df["id"].tolist() and after not in df["id"].tolist()
    assert sorted(df["id"].tolist()) == _changed_after(api, late_mark, year=2019, make="BMW")


def test_sync_across_the_spring_forward_gap(touched):
    emu, api = touched
    ids = sorted(api.trims.search(year=2019, make="BMW").to_pandas()["id"].tolist())[:2]
    early, late = (int(i) for i in ids)
    emu.touch("trims", [early], modified="2024-03-10T01:58:00-05:00")
    emu.touch("trims", [late], modified="2024-03-10T03:00:30-04:00")  # two minutes after 01:59 EST
    mark = datetime(2024, 3, 10, 1, 59, tzinfo=EST)
    df, _ = api.trims.sync(since=mark, year=2019, make="BMW")
    assert late in df["id"].tolist() and early not in df["id"].tolist()
    assert sorted(df["id"].tolist()) == _changed_after(api, mark, year=2019, make="BMW")


def test_since_takes_every_kind_of_time_and_refuses_what_is_not_one(touched):
    emu, api = touched
    trim = int(api.trims.search(year=2019, make="BMW").first(1)[0].id)
    emu.touch("trims", [trim], modified="2023-11-05T01:15:00-05:00")
    mark = datetime(2023, 11, 5, 1, 45, tzinfo=EDT)
    expected = _changed_after(api, mark, year=2019, make="BMW")
    assert trim in expected
    for since in (mark, pd.Timestamp(mark), np.datetime64("2023-11-05T05:45:00"), "2023-11-05T01:45:00-04:00",
                  "2023-11-05T05:45:00Z", datetime(2023, 11, 5, 5, 45)):  # naive: UTC
        df, _ = api.trims.sync(since=since, year=2019, make="BMW")
        assert sorted(df["id"].tolist()) == expected, since
    df, _ = api.trims.sync(since=date(2023, 11, 5), year=2019, make="BMW")  # midnight UTC
    assert sorted(df["id"].tolist()) == _changed_after(api, datetime(2023, 11, 5, tzinfo=timezone.utc),
                                                       year=2019, make="BMW")
    for bad, message in (("yesterday", "ISO 8601"), (pd.NaT, "NaT"), (np.datetime64("NaT"), "NaT"),
                         (1700000000, "not int"), ("", "ISO 8601")):
        with pytest.raises(vd.QueryError, match=message):
            api.trims.sync(since=bad, year=2019, make="BMW")


def test_sync_on_every_endpoint_with_a_modified_field(api):
    able = [name for name, (path, _) in _SEARCHES.items() if "modified" in schema.endpoint(path).json_field_names()]
    assert {"trims", "engines", "bodies", "mileages", "models"} <= set(able)
    for name in able:
        resource = getattr(api, name)
        before = pd.Timestamp.now(tz="UTC").floor("s")
        everything, mark = resource.sync(vd.F("year") == 2019, since=None)
        reference = resource.search(vd.F("year") == 2019).to_pandas()
        assert sorted(everything["id"]) == sorted(reference["id"]) and len(everything) > 0, name
        if "modified" in reference.columns:
            assert mark == reference["modified"].max(), name
        else:  # served without modified: the watermark is when the sync started
            assert before <= mark <= pd.Timestamp.now(tz="UTC"), name
        again, same = resource.sync(vd.F("year") == 2019, since=mark)
        assert len(again) == 0, name
    for name in sorted(set(_SEARCHES) - set(able)):
        with pytest.raises(vd.QueryError, match="no modified field to sync on; sync works on: .*trims"):
            getattr(api, name).sync(since=None)


def test_sync_of_records_served_without_modified_sees_a_touch(touched):
    emu, api = touched
    everything, mark = api.engines.sync(vd.F("year") == 2019, vd.F("make") == "BMW", since=None)
    chosen = sorted(int(i) for i in everything["id"])[:2]
    time.sleep(1.1)  # the service keeps modified to the second
    assert emu.touch("engines", chosen)["touched"] == 2
    changed, new_mark = api.engines.sync(vd.F("year") == 2019, vd.F("make") == "BMW", since=mark)
    assert sorted(changed["id"].tolist()) == chosen and new_mark > mark
    again, _ = api.engines.sync(vd.F("year") == 2019, vd.F("make") == "BMW", since=new_mark + pd.Timedelta(seconds=1))
    assert len(again) == 0


def test_sync_takes_conditions_before_since_and_the_watermark_positionally(api):
    reference = api.trims.search(vd.F("make") == "BMW", year=2019).to_pandas()
    stamps = sorted(reference["modified"].dropna().unique())
    cut = stamps[len(stamps) // 2]
    newer, _ = api.trims.sync(vd.F("make") == "BMW", since=cut, year=2019)
    assert sorted(newer["id"]) == sorted(reference.loc[reference["modified"] > cut, "id"])
    assert 0 < len(newer) < len(reference)
    positional, _ = api.trims.sync(cut, vd.F("make") == "BMW", year=2019)
    assert sorted(positional["id"]) == sorted(newer["id"])


def test_since_outside_the_comparable_times_is_a_query_error(api):
    from datetime import timezone as tz

    from vehicledata import sync

    for since in (datetime.max, datetime.max.replace(tzinfo=tz.utc), datetime.min,
                  datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))), np.datetime64("9999-12-31"),
                  "9999-12-31T23:59:59Z", date(3000, 1, 1), datetime(1600, 1, 1)):
        with pytest.raises(vd.QueryError) as e:
            api.trims.sync(since=since, year=2019, make="BMW")
        assert "is outside the times a sync compares with modified (1677-09-22T00:00:00+00:00 to " \
               "2262-04-11T23:47:16.854775+00:00, pandas' timestamps)" in str(e.value), since
        assert e.value.field == "since"
    assert sync.watermark(sync.LATEST) == sync.LATEST and sync.watermark(sync.EARLIEST) == sync.EARLIEST
    with pytest.raises(vd.QueryError) as e:  # huge text is echoed cut
        api.trims.sync(since="x" * 10**6)
    assert len(str(e.value)) < 600 and "(1,000,000 characters)" in str(e.value)


def test_the_watermark_is_an_aware_utc_timestamp_even_when_nothing_changed(api):
    for since in (pd.Timestamp.max, pd.Timestamp("2262-01-01"), datetime(2200, 1, 1), "2200-01-01T00:00:00-05:00",
                  date(2200, 1, 1), np.datetime64("2200-01-01T00:00:00")):
        df, mark = api.trims.sync(since=since, year=2019, make="BMW")
        assert len(df) == 0, since
        assert isinstance(mark, pd.Timestamp) and str(mark.tz) == "UTC", (since, mark)
    _, mark = api.trims.sync(since=pd.Timestamp.max, year=2019, make="BMW")
    assert mark == pd.Timestamp("2262-04-11 23:47:16.854775", tz="UTC")  # to the microsecond, as every watermark
    _, mark = api.trims.sync(since=datetime(2200, 1, 1, tzinfo=timezone(timedelta(hours=-5))), year=2019, make="BMW")
    assert mark == pd.Timestamp("2200-01-01 05:00", tz="UTC")
