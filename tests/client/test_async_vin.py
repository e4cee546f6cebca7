"""await api.vin.decode_many on vd.AsyncClient against the real emulator: the sync client's table row
for row (bad VINs get their rows), the requests on the client's engine inside its one rate limit,
a 429 waited out, and a cancelled batch resumed from its checkpoint with only the VINs it lacks."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import List

import pytest

import vehicledata as vd
from vehicledata.testing import Emulator

from client_support import make_async
from test_vin_online import BAD, benchmark_vins, vin_requests

pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def emu(database: Path):
    with Emulator(db=database, rate_limit=10_000_000) as e:
        yield e


def distinct_valid(vins: List[object]) -> set:
    out = set()
    for v in vins:
        if isinstance(v, str):
            try:
                out.add(vd.vin.validate(v))
            except vd.QueryError:
                pass
    return out


def checkpoint_vins(path: Path) -> List[str]:
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"vehicledata_vin_checkpoint": 1}
    return [json.loads(line)["vin"] for line in lines[1:]]


@pytest.mark.asyncio
async def test_decode_many_gives_the_sync_clients_table(emu: Emulator, client_factory, capsys) -> None:
    vins = benchmark_vins(150) + BAD + [None, benchmark_vins(1)[0]]  # a null; a repeated VIN
    with client_factory(emu.url) as api:
        expected = api.vin.decode_many(vins, concurrency=3, progress=False)
    emu.reset()
    async with make_async(emu.url, max_parallel=8) as aapi:
        table = await aapi.vin.decode_many(vins, concurrency=3, progress=True)
        requests = vin_requests(emu)
        # the batch's own cap inside the engine's (8): never more than 3 of its transfers at once
        assert 1 <= aapi._client._core.peak_transfers <= 3
        assert (await aapi.vin(vins[0])).year == table.column("year")[0].as_py()  # the single call still works
    assert table.column_names == list(vd.vin.COLUMNS)
    assert table.schema == expected.schema
    assert table.equals(expected)
    rows = table.to_pylist()
    assert rows[150]["error_code"] == "invalid_vin" and rows[150]["vin"] == "1GTG6CEN0L113930"  # not sent
    assert rows[154]["error_code"] == "not_found" and rows[154]["error_text"]                 # the server's 404
    assert rows[156] == {**{c: None for c in vd.vin.COLUMNS}, "error_code": "invalid_vin", "error_text": "VIN is null"}
    assert sum(r["error_code"] == "0" for r in rows) > 100
    # each distinct well-formed VIN asked once (the 404 one included); the malformed ones not at all
    assert requests == len(distinct_valid(vins))
    err = capsys.readouterr().err
    assert "VINs:" in err and f"/{len(distinct_valid(vins))} [" in err  # the tqdm bar of the requests


@pytest.mark.asyncio
async def test_decode_many_checks_its_arguments_as_the_sync_one(emu: Emulator) -> None:
    vins = benchmark_vins(5)
    async with make_async(emu.url) as aapi:
        with pytest.raises(vd.QueryError, match="concurrency"):
            await aapi.vin.decode_many(vins, concurrency=0)
        with pytest.raises(vd.QueryError):
            await aapi.vin.decode_many(vins[0])  # one string, not a batch
        empty = await aapi.vin.decode_many([], progress=False)
        assert empty.num_rows == 0 and empty.column_names == list(vd.vin.COLUMNS)
        np = pytest.importorskip("numpy")
        listed = await aapi.vin.decode_many(vins, progress=False)
        assert (await aapi.vin.decode_many(np.array(vins), progress=False)).equals(listed)
        assert (await aapi.vin.decode_many(pa.chunked_array([vins[:2], vins[2:]]), progress=False)).equals(listed)


@pytest.mark.asyncio
async def test_a_429_is_waited_out(emu: Emulator, client_factory) -> None:
    vins = benchmark_vins(30)
    with client_factory(emu.url) as api:
        expected = api.vin.decode_many(vins, progress=False)
    emu.reset()
    emu.fault("/api/vin/", status=429, retry_after=1, count=2)  # the first two answers: wait 1 s, ask again
    async with make_async(emu.url) as aapi:
        table = await aapi.vin.decode_many(vins, concurrency=2, progress=False)
        assert aapi.stats()["retries"] >= 2
    by_status = emu.stats()["by_status"]
    assert by_status["429"] == 2
    assert table.equals(expected)
    emu.reset()


@pytest.mark.asyncio
async def test_a_cancelled_batch_resumes_from_its_checkpoint(emu: Emulator, client_factory, tmp_path: Path) -> None:
    vins = benchmark_vins(40) + ["AAA000000A0000000"]  # and a VIN the service refuses (404)
    distinct = distinct_valid(vins)
    held = vd.vin.validate(vins[3])
    ckpt = tmp_path / "vins.ckpt"
    with client_factory(emu.url) as api:
        expected = api.vin.decode_many(vins, progress=False)
    emu.reset()
    # One VIN answers 503 with Retry-After 100: the batch takes every other answer, then waits for it.
    emu.fault("/api/vin/" + held, status=503, retry_after=100, count=1)
    async with make_async(emu.url) as aapi:
        task = asyncio.ensure_future(aapi.vin.decode_many(vins, concurrency=2, checkpoint=ckpt, progress=False))
        for _ in range(6000):  # until every other answer is in the checkpoint (a bound, not a timing)
            if ckpt.exists() and ckpt.read_text().count("\n") == len(distinct):  # the header + all but one
                break
            assert not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        kept = checkpoint_vins(ckpt)
        assert sorted(kept) == sorted(distinct - {held})  # nothing written after the cancel, the held one missing
        emu.reset()
        table = await aapi.vin.decode_many(vins, concurrency=2, checkpoint=ckpt, progress=False)  # the client still works
    assert vin_requests(emu) == 1  # only the VIN the checkpoint lacked
    assert table.equals(expected)
    assert sorted(checkpoint_vins(ckpt)) == sorted(distinct)


@pytest.mark.asyncio
async def test_a_batch_shares_the_clients_one_rate_limit(database: Path, emu: Emulator, client_factory) -> None:
    vins = benchmark_vins(40)
    with client_factory(emu.url) as api:
        expected = api.vin.decode_many(vins, progress=False)
        makes_total = api.makes.search().total
    # 20 requests per 2-second window (the service's 600/min, compressed); the bucket at 90 % of it,
    # shared by the batch and a crawl running beside it on the same client.
    with Emulator(db=database, rate_limit=20, window_seconds=2) as strict:
        async with make_async(strict.url, rate_limit=540, rate_limit_burst=1, retry=0, max_parallel=4) as aapi:
            table, makes = await asyncio.gather(aapi.vin.decode_many(vins, concurrency=4, progress=False),
                                                aapi.makes.search().to_list())
            assert aapi.stats()["rate_wait_seconds"] > 0
        by_status = strict.stats()["by_status"]
    assert len(makes) == makes_total
    assert "429" not in by_status
    assert table.equals(expected)
