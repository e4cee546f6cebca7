"""to_parquet's checkpoints over recorded answers (vehicledata.testing.ReplayServer): a crawl an
error stops mid-way resumes after its last checkpoint and asks the server for exactly the pages
after it, with either client; no dataset, no emulator."""
from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import pyarrow.dataset as ds
import pytest

import vehicledata as vd
from vehicledata import checkpoint
from vehicledata.testing import ReplayServer

from client_support import REPLAY_LIMIT, REPLAY_MAKES, REPLAY_SEARCH, recorded_pages, replay_options

PAGES = recorded_pages()
EXPECTED = sorted(r["id"] for page in PAGES.values() for r in page["data"])
EVERY = 2  # checkpoint_pages


def page_target(page: int) -> str:
    return f"{REPLAY_SEARCH}?limit={REPLAY_LIMIT}" + ("" if page == 1 else f"&page={page}")


def crawl(client: str, url: str, root: Path, options: Optional[Dict[str, Any]] = None, **kw: Any) -> Any:
    """``to_parquet`` of the recorded search with the sync or the async client (``options``: the
    client's, over ``replay_options()``)."""
    kw.setdefault("checkpoint_pages", EVERY)
    settings = replay_options(**(options or {}))
    if client == "sync":
        with vd.Client(base_url=url, **settings) as api:
            return api.makes.search().to_parquet(root, page_size=REPLAY_LIMIT, **kw)

    async def run() -> Any:
        async with vd.AsyncClient(base_url=url, **settings) as api:
            return await api.makes.search().to_parquet(root, page_size=REPLAY_LIMIT, **kw)

    return asyncio.run(run())


def ids(root: Path) -> List[int]:
    return sorted(ds.dataset(root).to_table()["id"].to_pylist())


def data_requests(server: ReplayServer, since: int = 0) -> List[str]:
    return sorted(s.target for s in server.requests[since:] if s.answer != "login")


@pytest.mark.parametrize("first, second", [("sync", "sync"), ("async", "async"), ("sync", "async"),
                                           ("async", "sync")])
def test_a_crawl_stopped_by_an_error_resumes_after_its_last_checkpoint(tmp_path, first, second):
    stop = 5  # the page that fails: pages 1-4 are done, and checkpointed after page 4
    assert len(PAGES) > stop and (stop - 1) % EVERY == 0
    root = tmp_path / "makes"
    with ReplayServer(REPLAY_MAKES) as server:
        server.fault(f"{REPLAY_SEARCH}?page={stop}", status=500)  # not retried: the crawl stops
        # One page at a time in the run that fails: a parallel one still has later pages on the
        # wire when it stops, and the server may record them after `before` below.
        with pytest.raises(vd.ServerError, match=f"page={stop}"):
            crawl(first, server.url, root, options={"max_parallel": 1})
        state = json.loads((root / checkpoint.CHECKPOINT_NAME).read_text())
        assert state["pages_done"] == stop - 1 and not state["complete"]
        assert server.count(f"{REPLAY_SEARCH}?page={stop}") == 1

        before = len(server.requests)
        assert crawl(second, server.url, root) == root  # mode="refresh" finishes the interrupted run
        # exactly the pages after the checkpoint, each once: none of those written again
        assert data_requests(server, before) == sorted(page_target(n) for n in range(stop, len(PAGES) + 1))
    assert ids(root) == EXPECTED  # nothing lost, nothing twice
    state = json.loads((root / checkpoint.CHECKPOINT_NAME).read_text())
    assert state["complete"] and state["pages_done"] == state["pages"] == len(PAGES)


@pytest.mark.parametrize("client", ["sync", "async"])
def test_a_retried_fault_mid_crawl_leaves_no_gap(tmp_path, client):
    root = tmp_path / "makes"
    with ReplayServer(REPLAY_MAKES) as server:
        server.fault(f"{REPLAY_SEARCH}?page=3", status=429, retry_after=0)
        server.fault(f"{REPLAY_SEARCH}?page=6", action="truncate")
        crawl(client, server.url, root)
        assert server.count(f"{REPLAY_SEARCH}?page=3") == server.count(f"{REPLAY_SEARCH}?page=6") == 2
        assert data_requests(server).count(page_target(2)) == 1
    assert ids(root) == EXPECTED


@pytest.mark.parametrize("client", ["sync", "async"])
def test_resume_of_a_finished_crawl_asks_for_nothing_and_refresh_of_a_search_without_modified_for_all(
        tmp_path, client):
    root = tmp_path / "makes"
    with ReplayServer(REPLAY_MAKES) as server:
        crawl(client, server.url, root)
        before = len(server.requests)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            crawl(client, server.url, root, mode="resume")
        assert [w.category for w in caught] == [checkpoint.CheckpointWarning]
        assert data_requests(server, before) == []
        before = len(server.requests)
        crawl(client, server.url, root)  # refresh: makes have no `modified`, so the whole search again
        assert data_requests(server, before) == sorted(page_target(n) for n in PAGES)
    assert ids(root) == EXPECTED
