"""vd.AsyncClient's progress bars and its vehicles' iter_arrow/iter_pandas/to_parquet against the
real emulator: the sync client's bars (``_fetcher.progress_bar``), rows, dataset and checkpoint."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vehicledata as vd
from vehicledata.testing import Emulator

from client_support import make_async

pq = pytest.importorskip("pyarrow.parquet")



# ---- progress bars -------------------------------------------------------------------------------
@pytest.fixture()
def bars(monkeypatch) -> list:
    """The progress bars the async face makes (vehicledata._fetcher.progress_bar's tqdm bars), kept
    to read their counts after the crawl (a closed bar is erased from the terminal)."""
    import vehicledata.aio as aio

    made: list = []
    real = aio.progress_bar

    def recording(*args: Any, **kwargs: Any) -> Any:
        bar = real(*args, **kwargs)
        if bar is not None and bar is not True:  # (True: a probe)
            made.append(bar)
        return bar

    monkeypatch.setattr(aio, "progress_bar", recording)
    return made


@pytest.mark.asyncio
async def test_progress_bar_of_an_async_crawl(emulator: Emulator, api: vd.Client, capsys, bars):
    expected = api.engines.search(year=2018).to_pandas(page_size=200)
    pages = api.engines.search(year=2018, limit=200).page_count
    assert pages > 2
    capsys.readouterr()
    async with make_async(emulator.url) as aapi:
        df = await aapi.engines.search(year=2018, progress=True).to_pandas(page_size=200)
        assert "/api/engines" in capsys.readouterr().err
        assert [(b.n, b.total) for b in bars] == [(pages, pages)]  # every page counted on the bar
        assert df.equals(expected)
        quiet = await aapi.engines.search(year=2018, progress=False).to_pandas(page_size=200)
        assert capsys.readouterr().err == "" and quiet.equals(expected) and len(bars) == 1
    # the client's default, as vd.Client(progress=True)
    async with make_async(emulator.url, progress=True) as aapi:
        numbers = [page.number async for page in aapi.engines.search(year=2018, limit=200).pages]
        assert numbers == list(range(1, pages + 1))
        assert [(b.n, b.total) for b in bars[1:]] == [(pages, pages)]
        assert "/api/engines" in capsys.readouterr().err


# ---- vehicles: iter_arrow / iter_pandas / to_parquet ---------------------------------------------
@pytest.mark.asyncio
async def test_vehicles_iter_pandas_gives_the_sync_clients_rows(emulator: Emulator, api: vd.Client):
    pd = pytest.importorskip("pandas")
    sync = api.vehicles.search(year=2020, make="Toyota")
    expected = list(sync.iter_pandas(page_size=25))
    table = sync.to_arrow()
    assert len(expected) > 1
    async with make_async(emulator.url) as aapi:
        search = aapi.vehicles.search(year=2020, make="Toyota")
        got = [df async for df in search.iter_pandas(page_size=25)]
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            pd.testing.assert_frame_equal(a, b)
        tables = [t async for t in aapi.vehicles.search(year=2020, make="Toyota").iter_arrow(page_size=25)]
        assert [i for t in tables for i in t["id"].to_pylist()] == table["id"].to_pylist()


@pytest.mark.asyncio
async def test_vehicles_to_parquet_is_the_sync_dataset(emulator: Emulator, api: vd.Client, tmp_path: Path):
    from vehicledata.checkpoint import CheckpointWarning

    out = tmp_path / "v"
    want = sorted(api.vehicles.search(year=2020, make="Toyota").to_arrow()["id"].to_pylist())
    async with make_async(emulator.url) as aapi:
        written = await aapi.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"])
        files = sorted(Path(written).rglob("*.parquet"))
        assert len(files) == len({f.parent.name for f in files}) > 3  # one file per partition
        assert sorted(pq.read_table(out)["id"].to_pylist()) == want
        sent = emulator.stats()["requests"]
        with pytest.warns(CheckpointWarning, match="nothing fetched"):
            await aapi.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"],
                                                                          mode="resume")
        assert emulator.stats()["requests"] == sent  # resume after a finished run: no request
    # one dataset for both clients: the sync client finds the async run finished
    with pytest.warns(CheckpointWarning, match="nothing fetched"):
        api.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"], mode="resume")
    assert emulator.stats()["requests"] == sent
    async with make_async(emulator.url) as aapi:
        await aapi.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"], mode="append")
        assert sorted(pq.read_table(out)["id"].to_pylist()) == sorted(want * 2)
        with pytest.raises(vd.QueryError, match="another query"):
            await aapi.vehicles.search(year=2020, make="Honda").to_parquet(out, partition_cols=["model"])


@pytest.mark.asyncio
async def test_vehicles_part_searches_decode_the_sync_projection(emulator: Emulator, api: vd.Client, tmp_path: Path):
    """The async part crawls are decoded on the engine with the sync ones' projection (Pager.fields):
    the same columns, fewer than the record's, the same rows (whole, page by page, and written to
    Parquet); and the joined frame equals the sync one."""
    pd = pytest.importorskip("pandas")
    sync = api.vehicles.search(year=2020, make="Toyota")
    expected = sync.to_pandas()
    async with make_async(emulator.url) as aapi:
        search = aapi.vehicles.search(year=2020, make="Toyota")
        for resource in ("bodies", "engines", "mileages"):
            fields = sync._pagers[resource].fields
            assert fields and search._pagers[resource].fields == fields
            part = await search._pagers[resource].to_arrow()
            want = sync._pagers[resource].to_arrow()
            assert part.column_names == want.column_names
            assert set(part.column_names) < set(getattr(aapi, resource).fields)
            assert part.equals(want)
            pages = [t async for t in search._pagers[resource].iter_arrow(page_size=100)]
            assert len(pages) > 1 and all(t.column_names == want.column_names for t in pages)
            written = await search._pagers[resource].to_parquet(tmp_path / resource, page_size=100)
            on_disk = pq.read_table(written)
            assert on_disk.column_names == want.column_names
            # the files of a directory come back in an order the pyarrow version chooses: rows by id
            assert on_disk.sort_by("id").equals(sync._pagers[resource].to_arrow(page_size=100).sort_by("id"))
        got = await aapi.vehicles.search(year=2020, make="Toyota").to_pandas()
        pd.testing.assert_frame_equal(got, expected)


@pytest.mark.asyncio
async def test_vehicles_frames_carry_the_sync_clients_labels(emulator: Emulator, api: vd.Client):
    """The synthetic and null columns of the frames (issue 40, point 8): the async client's whole
    results and pages name the same ones as the sync client's."""
    from vehicledata import frames

    sync = api.vehicles.search(year=2020, make="Toyota")
    want = sync.to_pandas().attrs
    assert {"length", "width", "height"} <= set(want[frames.ALWAYS_NULL_ATTR])
    assert "range_city" in want[frames.SYNTHETIC_ATTR]
    async with make_async(emulator.url) as aapi:
        search = aapi.vehicles.search(year=2020, make="Toyota")
        assert (await search.to_pandas()).attrs == want
        meta = (await search.to_arrow()).schema.metadata
        assert meta[b"vehicledata.always_null"].decode().split(",") == want[frames.ALWAYS_NULL_ATTR]
        pages = [df.attrs async for df in search.iter_pandas(page_size=50)]
        assert pages == [df.attrs for df in sync.iter_pandas(page_size=50)] and len(pages) > 1


@pytest.mark.asyncio
async def test_the_null_column_note_points_at_the_awaiting_line(emulator: Emulator, monkeypatch):
    """The async client builds a whole frame on a worker thread; its NullColumnWarning is said on
    the loop's thread once awaited, at the caller's line (not concurrent/futures/thread.py)."""
    import warnings

    from vehicledata import frames

    monkeypatch.setattr(frames, "_NULL_NOTED", set())  # each column is named once per process
    async with make_async(emulator.url) as aapi:
        search = aapi.vehicles.search(year=2020, make="Toyota")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await search.to_pandas()
    notes = [w for w in caught if issubclass(w.category, vd.NullColumnWarning)]
    assert len(notes) == 1 and str(notes[0].message).startswith("series, length, width, height,")
    assert notes[0].filename == __file__, notes[0].filename
