"""vd.AsyncClient's raw GET and data feed against the real emulator (and the hostile server for a
slow body): the engine's Get and Download jobs, with vd.Client's arguments, errors, resume and
deadlines; cancelling a download mid-body leaves the client usable."""
from __future__ import annotations

import asyncio
import hashlib
import zipfile
from pathlib import Path

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

from client_support import make_async
from hostile_server import hostile_server

BASIC = DEMO_ACCOUNTS["basic"]
DOWNLOAD = "/api/data-feeds/download"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def no_jobs_left(aapi: vd.AsyncClient) -> int:
    """The engine's jobs once the cancelled one has left (at once, normally): 6000 looks of 10 ms are
    a hang guard far above any machine's pace, not a speed check."""
    engine = aapi._client._core
    for _ in range(6000):
        if engine.jobs == 0:
            break
        await asyncio.sleep(0.01)
    return int(engine.jobs)


@pytest.fixture(scope="module")
def reference_feed(tmp_path_factory, emulator_session, client_factory) -> Path:
    with client_factory(emulator_session.url) as api:  # the sync client's download
        return api.data_feed.download(tmp_path_factory.mktemp("feed") / "feed.zip")


# ---- get_json: the engine's Get job ----------------------------------------------------------------
@pytest.mark.asyncio
async def test_get_json_answers_as_the_sync_client(emulator: Emulator, api: vd.Client, raw_json):
    async with make_async(emulator.url) as aapi:
        got = await aapi.get_json("/api/makes/v2", year=2019)
        assert got == raw_json("/api/makes/v2?year=2019") == api.get_json("/api/makes/v2", year=2019)
        # params merged with the path's query string (a param given twice: the keyword wins)
        merged = await aapi.get_json("/api/trims/v2?year=2018&make=Honda&limit=3", limit=5)
        assert merged == api.get_json("/api/trims/v2?year=2018&make=Honda", limit=5)
        assert merged["collection"]["url"].count("limit=") == 1
        assert len(merged["data"]) == min(5, merged["collection"]["total"])
        # concurrent raw GETs share the engine
        many = await asyncio.gather(*(aapi.get_json("/api/years/v2", make=m) for m in ("Honda", "BMW", "Ford")))
        assert many == [api.get_json("/api/years/v2", make=m) for m in ("Honda", "BMW", "Ford")]


@pytest.mark.asyncio
async def test_get_json_4xx_is_the_typed_error_with_the_servers_message(emulator: Emulator, api: vd.Client):
    with pytest.raises(vd.NotFoundError) as sync_error:
        api.get_json("/api/trims/v2/999999999")
    async with make_async(emulator.url, retry=0) as aapi:
        with pytest.raises(vd.NotFoundError) as info:
            await aapi.get_json("/api/trims/v2/999999999")
        assert info.value.status == 404
        assert info.value.message == sync_error.value.message and info.value.message
        sent = aapi.stats()["requests"]
        with pytest.raises(vd.PaginationError, match="another origin"):  # as vd.Client: never sent
            await aapi.get_json("http://elsewhere.example/api/makes/v2")
        assert aapi.stats()["requests"] == sent
        # still usable
        assert (await aapi.get_json("/api/makes/v2", year=2019))["data"]


@pytest.mark.asyncio
async def test_get_json_retries_a_503_on_the_engine(emulator: Emulator, api: vd.Client):
    emulator.fault("/api/makes/v2", status=503, count=2)
    async with make_async(emulator.url) as aapi:
        assert await aapi.get_json("/api/makes/v2", year=2019) == api.get_json("/api/makes/v2", year=2019)
        assert aapi.stats()["retries"] == 2


@pytest.mark.asyncio
async def test_get_json_timeout(emulator: Emulator):
    emulator.fault("/api/makes/v2", action="delay", delay_ms=4000, count=1)
    async with make_async(emulator.url, timeout=1, retry=0) as aapi:
        with pytest.raises(vd.Timeout):
            await aapi.get_json("/api/makes/v2", year=2019)
        assert await no_jobs_left(aapi) == 0
        assert (await aapi.get_json("/api/makes/v2", year=2019))["data"]


# ---- data_feed: the engine's Download job ---------------------------------------------------------
@pytest.mark.asyncio
async def test_download_round_trip(emulator: Emulator, tmp_path: Path, reference_feed: Path):
    async with make_async(emulator.url) as aapi:
        assert await aapi.data_feed.last_updated()
        path = await aapi.data_feed.download(tmp_path / "feed.zip")
        assert path == tmp_path / "feed.zip"
        assert not (tmp_path / "feed.zip.part").exists()
        assert sha(path) == sha(reference_feed)
        assert aapi.stats()["bytes"] >= path.stat().st_size
        # a directory gets the default name; load/to_parquet read the archive off the loop
        assert (await aapi.data_feed.download(tmp_path)).name == "vehicledata-feed.zip"
        frames = await aapi.data_feed.load(path, tables=["makes"])
        with zipfile.ZipFile(path) as zf, zf.open("makes.csv") as fh:
            assert len(frames["makes"]) == len(fh.read().decode().splitlines()) - 1
        written = await aapi.data_feed.to_parquet(tmp_path / "pq", path, tables=["makes"])
        assert sorted(written) == ["makes"] and written["makes"].is_file()


@pytest.mark.asyncio
async def test_download_resumes_a_partial_file(emulator: Emulator, tmp_path: Path, reference_feed: Path):
    data = reference_feed.read_bytes()
    (tmp_path / "feed.zip.part").write_bytes(data[: len(data) // 3])
    async with make_async(emulator.url) as aapi:
        path = await aapi.data_feed.download(tmp_path / "feed.zip", progress=False)
        assert sha(path) == sha(reference_feed)
        assert aapi.stats()["bytes"] < len(data) - len(data) // 3 + 4096  # only the rest was transferred
        # a stale .part of another archive: started over once, and the right file
        (tmp_path / "other.zip.part").write_bytes(b"PK\x03\x04" + b"\x00" * 5000)
        assert sha(await aapi.data_feed.download(tmp_path / "other.zip")) == sha(reference_feed)
        assert not (tmp_path / "other.zip.part").exists()
        # a dropped connection mid-body: retried (resumed) on the engine
        emulator.fault(DOWNLOAD, action="truncate", count=1)
        assert sha(await aapi.data_feed.download(tmp_path / "dropped.zip")) == sha(reference_feed)


@pytest.mark.asyncio
async def test_download_progress_bar(emulator: Emulator, tmp_path: Path, capsys, reference_feed: Path,
                                     monkeypatch):
    import vehicledata.aio as aio

    bars = []
    real = aio.progress_bar

    def recording(*args, **kwargs):  # the bars made, to read their counts once closed (and erased)
        bar = real(*args, **kwargs)
        bars.append(bar)
        return bar

    monkeypatch.setattr(aio, "progress_bar", recording)
    async with make_async(emulator.url) as aapi:
        path = await aapi.data_feed.download(tmp_path / "feed.zip", progress=True)
    err = capsys.readouterr().err
    assert "feed.zip" in err
    assert sha(path) == sha(reference_feed)
    size = reference_feed.stat().st_size
    assert [(b.n, b.total) for b in bars] == [(size, size)]  # the reports reached the bar, on the loop


@pytest.mark.asyncio
async def test_download_max_bytes_and_arguments(emulator: Emulator, tmp_path: Path, reference_feed: Path):
    size = reference_feed.stat().st_size
    async with make_async(emulator.url) as aapi:
        with pytest.raises(vd.LimitError, match=f"larger than max_bytes \\({size // 2} bytes") as info:
            await aapi.data_feed.download(tmp_path / "feed.zip", max_bytes=size // 2)
        assert info.value.limit == "max_bytes"
        assert list(tmp_path.iterdir()) == []  # no .part kept: resuming it would only grow it
        for kw, name in (({"timeout": 0}, "timeout"), ({"max_bytes": 0}, "max_bytes"), ({"max_bytes": -5}, "max_bytes")):
            with pytest.raises(ValueError, match=name):
                await aapi.data_feed.download(tmp_path / "feed.zip", **kw)
        assert sha(await aapi.data_feed.download(tmp_path / "feed.zip", max_bytes=size)) == sha(reference_feed)


@pytest.mark.asyncio
async def test_download_refused_is_the_typed_error(emulator: Emulator, tmp_path: Path, client_factory):
    with client_factory(emulator.url, BASIC, retry=0) as api:
        with pytest.raises(vd.PermissionDeniedError) as sync_error:
            api.data_feed.download(tmp_path / "sync.zip")
    async with make_async(emulator.url, BASIC, retry=0) as aapi:
        with pytest.raises(vd.PermissionDeniedError) as info:
            await aapi.data_feed.download(tmp_path / "feed.zip")
        assert info.value.status == 403 and info.value.message == sync_error.value.message
    assert list(tmp_path.iterdir()) == []  # no empty .part left behind


@pytest.mark.asyncio
async def test_download_corrupt_archive_is_refused(emulator: Emulator, tmp_path: Path):
    emulator.fault(DOWNLOAD, status=200, body="PK\x03\x04 not really a zip")
    async with make_async(emulator.url) as aapi:
        with pytest.raises(vd.DecodeError, match="not a valid ZIP"):
            await aapi.data_feed.download(tmp_path / "feed.zip", resume=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.asyncio
async def test_download_total_timeout(tmp_path: Path):
    with hostile_server() as server:
        async with make_async(server.url + "/trickle", None, retry=vd.Retry(total=2, backoff_factor=0.01)) as aapi:
            with pytest.raises(vd.Timeout, match="total timeout of 2.00 s"):
                await aapi.data_feed.download(tmp_path / "feed.zip", timeout=2)
        assert 0 < server.sent["trickle"] < 10_000_000  # the 10 MB body (2 KB a second) was not waited out
    assert 0 < (tmp_path / "feed.zip.part").stat().st_size < 10_000_000  # kept for a resume


@pytest.mark.asyncio
async def test_cancelling_a_download_mid_body_keeps_the_part_and_the_client(tmp_path: Path):
    with hostile_server() as server:
        async with make_async(server.url + "/trickle", None) as aapi:
            part = tmp_path / "feed.zip.part"
            task = asyncio.ensure_future(aapi.data_feed.download(tmp_path / "feed.zip"))
            for _ in range(1000):  # until the body is arriving (2 KB a second)
                if part.exists() and part.stat().st_size > 0:
                    break
                await asyncio.sleep(0.01)
            assert part.stat().st_size > 0 and not task.done()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await no_jobs_left(aapi) == 0
            assert part.exists()  # kept for a resume
            # the same client runs the next download (here it runs out of its total timeout)
            with pytest.raises(vd.Timeout):
                await aapi.data_feed.download(tmp_path / "feed.zip", timeout=1.5)
            assert server.requests["trickle"] == 2


@pytest.mark.asyncio
async def test_cancelled_download_then_the_same_client_downloads_the_feed(emulator: Emulator, tmp_path: Path,
                                                                          reference_feed: Path):
    emulator.fault(DOWNLOAD, action="delay", delay_ms=3000, count=1)
    async with make_async(emulator.url) as aapi:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(aapi.data_feed.download(tmp_path / "feed.zip"), 0.5)
        assert await no_jobs_left(aapi) == 0
        assert sha(await aapi.data_feed.download(tmp_path / "feed.zip")) == sha(reference_feed)
