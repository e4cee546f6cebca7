"""to_parquet as a nightly job (issue 40 item 3): a refresh fetches what changed (by ``modified``)
and replaces the stale rows; rows deleted upstream are gone after it; checkpoints every N pages
whatever the file size, so a kill refetches at most those pages; one id once."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings

import pandas as pd
import pyarrow.dataset as ds
import pytest

import vehicledata as vd
from vehicledata import checkpoint
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]


def _table(root) -> pd.DataFrame:
    return ds.dataset(root, partitioning="hive").to_table().to_pandas()


def _trims_requests(emu) -> int:
    return emu.stats()["by_path"].get("/api/trims/v2", 0)


@pytest.fixture()
def private(database, client_factory):
    """A private emulator (touches must not reach the shared one) and a client of it."""
    with Emulator(db=database) as emu, client_factory(emu.url) as api:
        yield emu, api


def test_a_refresh_fetches_what_changed_and_replaces_the_stale_rows(private, tmp_path):
    emu, api = private
    root = tmp_path / "trims"

    def search():
        return api.trims.search(year=2019)

    search().to_parquet(root, partition_cols=["make"], page_size=200)
    before = search().to_pandas().set_index("id")
    pages = -(-len(before) // 200)
    assert pages > 10
    mark = before["modified"].max()
    ties = int((before["modified"] == mark).sum())  # asked again (the server compares with >=), then dropped
    touched = [int(i) for i in before.groupby("make").head(1).index[:3]]  # three makes, three partitions
    time.sleep(1.1)  # the service keeps modified to the second
    assert emu.touch("trims", touched)["touched"] == 3

    sent = _trims_requests(emu)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a refresh is the normal case: no warning
        search().to_parquet(root, partition_cols=["make"], page_size=200)
    # the changes (the ties and the three, in pages of 200), then page 1 of the search for its total
    assert _trims_requests(emu) - sent == -(-(ties + 3) // 200) + 1
    after = search().to_pandas().set_index("id")
    got = _table(root)
    assert got["id"].is_unique and sorted(got["id"]) == sorted(after.index)
    got = got.set_index("id")
    new, old = got.loc[touched, "modified"].tolist(), before.loc[touched, "modified"].tolist()
    assert new == after.loc[touched, "modified"].tolist()
    assert all(n > o for n, o in zip(new, old))  # not the stale rows
    state = json.loads((root / checkpoint.CHECKPOINT_NAME).read_text())
    assert state["complete"] and state["run"] == 2 and state["total"] == len(after)
    assert pd.Timestamp(state["mark"]) == after.loc[touched, "modified"].max()
    assert not (root / checkpoint.STAGING_NAME).exists()

    sent = _trims_requests(emu)  # nothing changed since: the touched rows asked again, nothing rewritten
    files = {p: p.stat().st_mtime_ns for p in root.rglob("*.parquet")}
    search().to_parquet(root, partition_cols=["make"], page_size=200)
    assert _trims_requests(emu) - sent == 2
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*.parquet")} == files
    assert sorted(_table(root)["id"]) == sorted(after.index)


def test_the_async_client_refreshes_the_same_dataset(private, tmp_path):
    import asyncio

    from client_support import make_async

    emu, api = private
    root = api.engines.search(year=2019, make="BMW").to_parquet(tmp_path / "engines", page_size=20)
    first = _table(root).set_index("id")
    touched = sorted(int(i) for i in first.index)[:2]
    time.sleep(1.1)  # engines answer without modified: the watermark is the run's start, to the second
    assert emu.touch("engines", touched)["touched"] == 2
    sent = emu.stats()["by_path"].get("/api/engines/v2", 0)

    async def refresh():
        async with make_async(emu.url) as aapi:
            await aapi.engines.search(year=2019, make="BMW").to_parquet(root, page_size=20)

    asyncio.run(refresh())
    assert emu.stats()["by_path"].get("/api/engines/v2", 0) - sent == 2  # the two changed, then the total
    got = _table(root)
    assert got["id"].is_unique and sorted(got["id"]) == sorted(first.index)
    assert sorted(_table(root)["id"].tolist()) == sorted(api.engines.search(year=2019, make="BMW").to_pandas()["id"])
    assert {int(p.name.split("-")[1][1:]) for p in root.rglob("part-*.parquet")} == {1, 2}


def test_rows_deleted_upstream_are_gone_after_a_refresh(database, client_factory, tmp_path):
    from vpic_damage import copy_dataset

    (tmp_path / "db").mkdir()
    copy = copy_dataset(database, tmp_path / "db")
    root = tmp_path / "trims"
    with Emulator(db=copy) as emu, client_factory(emu.url) as api:
        api.trims.search(year=2019, make="BMW").to_parquet(root, page_size=50)
        first = sorted(_table(root)["id"])
    gone = first[:2]
    con = sqlite3.connect(copy)
    with con:
        assert con.execute(f"DELETE FROM trims WHERE id IN ({gone[0]}, {gone[1]})").rowcount == 2
    con.close()
    with Emulator(db=copy) as emu, client_factory(emu.url) as api:
        api.trims.search(year=2019, make="BMW").to_parquet(root, page_size=50)
        expected = sorted(api.trims.search(year=2019, make="BMW").to_pandas()["id"])
    assert expected == first[2:]
    assert sorted(_table(root)["id"]) == expected


def test_a_refresh_of_a_search_without_modified_writes_it_again(api, emulator, tmp_path):
    root = tmp_path / "makes"
    api.makes.search().to_parquet(root)
    sent = emulator.stats()["by_path"].get("/api/makes/v2", 0)
    api.makes.search().to_parquet(root)
    assert emulator.stats()["by_path"].get("/api/makes/v2", 0) > sent
    got = _table(root)
    assert got["id"].is_unique and sorted(got["id"]) == sorted(api.makes.search().to_pandas()["id"])


def test_checkpoints_every_n_pages_whatever_the_file_size(api, tmp_path):
    """rows_per_file at its default (one file): the checkpoint still moves every checkpoint_pages pages."""
    seen = []
    real = checkpoint.write_checkpoint

    def spy(path, state):
        seen.append((state.pages_done, state.files_done, state.complete))
        real(path, state)

    checkpoint.write_checkpoint = spy
    try:
        root = api.trims.search(year=2019).to_parquet(tmp_path / "d", page_size=100, checkpoint_pages=5)
    finally:
        checkpoint.write_checkpoint = real
    pages = -(-len(api.trims.search(year=2019).to_pandas()) // 100)
    staged = [d for d, files, complete in seen if not complete and files == 0]
    assert staged == list(range(5, pages, 5))  # every 5 pages, the file still open
    assert seen[len(staged):] == [(pages, pages, False), (pages, pages, True)]  # the file closed, then done
    assert len(list(root.rglob("*.parquet"))) == 1  # one file: the checkpoints do not cut files
    assert sorted(_table(root)["id"]) == sorted(api.trims.search(year=2019).to_pandas()["id"])
    assert checkpoint.CHECKPOINT_PAGES <= 600  # a minute of pages at the default 600 requests a minute


_NIGHTLY = """
import sys
import vehicledata as vd
with vd.Client(base_url=sys.argv[1], api_token=sys.argv[2], api_secret=sys.argv[3], rate_limit=None) as api:
    api.trims.search().to_parquet(sys.argv[4], partition_cols=["make"], page_size=100)
"""


@pytest.mark.parametrize("kill_after", [60, 300])
def test_a_kill_refetches_at_most_the_pages_since_the_last_checkpoint(database, client_factory, tmp_path, kill_after):
    """kill -9 of a nightly job (default checkpoint_pages and rows_per_file: 603 pages of 100 in one
    file per make) after ``kill_after`` requests: its re-run fetches the pages after the checkpoint;
    the pages fetched twice are at most those since the checkpoint and those in flight."""
    script = tmp_path / "nightly.py"
    script.write_text(_NIGHTLY)
    target = tmp_path / "trims"
    with Emulator(db=database, rate_limit=100_000) as emu, client_factory(emu.url) as api:
        emu.fault("/api/trims/v2", action="delay", delay_ms=25, count=100_000)  # a job slow enough to kill
        proc = subprocess.Popen([sys.executable, str(script), emu.url, PREMIUM["api_token"], PREMIUM["api_secret"],
                                 str(target)], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            while _trims_requests(emu) < kill_after and proc.poll() is None:
                time.sleep(0.005)
            os.kill(proc.pid, signal.SIGKILL)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL, err
        emu.clear_faults()
        state = json.loads((target / checkpoint.CHECKPOINT_NAME).read_text())
        assert not state["complete"] and state["files_done"] == 0 and state["pages_done"] > 0

        api.makes.search().total  # (logged in: the re-run's requests are all pages)
        sent = api.stats()["requests"]
        api.trims.search().to_parquet(target, partition_cols=["make"], page_size=100)
        rerun = api.stats()["requests"] - sent  # this client's (the killed job's last requests may still land)
        pages = state["pages"]
        assert rerun == pages - state["pages_done"]  # from the page after the checkpoint on
        killed = _trims_requests(emu) - rerun  # every request of the killed job, answered or not
        refetched = killed + rerun - pages
        assert refetched <= checkpoint.CHECKPOINT_PAGES + 2 * api.max_parallel, (killed, rerun, pages, state)
        got = _table(target)
        assert got["id"].is_unique
        assert sorted(got["id"]) == sorted(api.trims.search().to_pandas()["id"])


@pytest.mark.parametrize("crash", ["write_checkpoint", "upsert_parts"])
def test_a_refresh_interrupted_anywhere_ends_with_one_row_per_id(private, tmp_path, monkeypatch, crash):
    """A refresh that dies after staging its second checkpoint, or between writing its files and
    removing the old rows: the next call finishes it (the same watermark), one row per id."""
    emu, api = private
    root = api.trims.search(year=2019).to_parquet(tmp_path / "t", partition_cols=["make"], page_size=50)
    ids = [int(i) for i in sorted(_table(root)["id"])[::40]]  # 76 trims: two pages of 50 changed
    time.sleep(1.1)
    assert emu.touch("trims", ids)["touched"] == len(ids)
    real = getattr(checkpoint, crash)
    calls = {"n": 0}

    def dies(*args):
        calls["n"] += 1
        if crash == "upsert_parts" or calls["n"] == 2:
            raise KeyboardInterrupt("killed")
        return real(*args)

    monkeypatch.setattr(checkpoint, crash, dies)
    with pytest.raises(KeyboardInterrupt):
        api.trims.search(year=2019).to_parquet(root, partition_cols=["make"], page_size=50, checkpoint_pages=1)
    monkeypatch.setattr(checkpoint, crash, real)
    state = json.loads((root / checkpoint.CHECKPOINT_NAME).read_text())
    assert not state["complete"] and state["run"] == 2 and state["since"]
    api.trims.search(year=2019).to_parquet(root, partition_cols=["make"], page_size=50, checkpoint_pages=1)
    got, want = _table(root), api.trims.search(year=2019).to_pandas()
    assert got["id"].is_unique and sorted(got["id"]) == sorted(want["id"])
    got, want = got.set_index("id"), want.set_index("id")
    assert got.loc[ids, "modified"].tolist() == want.loc[ids, "modified"].tolist()
    assert json.loads((root / checkpoint.CHECKPOINT_NAME).read_text())["complete"]
