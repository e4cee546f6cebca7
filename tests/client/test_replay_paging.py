"""The real clients (sync and async) over recorded answers (vehicledata.testing.ReplayServer): the
page walk, retries of faults, the token's renewal and the mapping of errors, with no dataset and no
emulator. The oracle is the recording read with the stdlib (client_support.recorded_pages)."""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Dict, Iterator, List

import pytest

import vehicledata as vd
from vehicledata.testing import ReplayServer, load_answers

from client_support import REPLAY_LIMIT, REPLAY_MAKES, REPLAY_SEARCH, recorded_pages, replay_options


def page_target(page: int) -> str:
    return f"{REPLAY_SEARCH}?limit={REPLAY_LIMIT}" + ("" if page == 1 else f"&page={page}")


@pytest.fixture(scope="module")
def pages() -> Dict[int, Any]:
    found = recorded_pages()
    assert sorted(found) == list(range(1, len(found) + 1)) and len(found) >= 4, sorted(found)
    return found


@pytest.fixture(scope="module")
def expected(pages: Dict[int, Any]) -> List[int]:
    """The recorded ids, page after page (the oracle)."""
    return [r["id"] for n in sorted(pages) for r in pages[n]["data"]]


@pytest.fixture()
def server() -> Iterator[ReplayServer]:
    with ReplayServer(load_answers(REPLAY_MAKES)) as s:
        yield s


def walk_sync(url: str, **kw: Any) -> List[int]:
    with vd.Client(base_url=url, **replay_options(**kw)) as api:
        return [r.id for r in api.makes.search(limit=REPLAY_LIMIT)]


def walk_async(url: str, **kw: Any) -> List[int]:
    async def walk() -> List[int]:
        async with vd.AsyncClient(base_url=url, **replay_options(**kw)) as api:
            return [r.id async for r in api.makes.search(limit=REPLAY_LIMIT)]

    return asyncio.run(walk())


WALKS = {"sync": walk_sync, "async": walk_async}


def seen_pages(server: ReplayServer, since: int = 0) -> List[str]:
    return sorted(s.target for s in server.requests[since:] if s.answer != "login")


# ---- the page walk -----------------------------------------------------------------------------
def test_sync_and_async_walk_every_recorded_page_once_and_in_order(server, pages, expected):
    assert len(expected) > 3 * REPLAY_LIMIT and len(set(expected)) == len(expected)
    every_page = sorted(page_target(n) for n in pages)
    for name, walk in WALKS.items():
        before = len(server.requests)
        assert walk(server.url) == expected, name
        assert seen_pages(server, before) == every_page, name  # each page asked for once, no other request
        assert [s.answer for s in server.requests[before:]].count("login") == 1, name
        assert all(s.authorized for s in server.requests[before:] if s.answer != "login"), name
    with vd.Client(base_url=server.url, **replay_options()) as api:
        frame = api.makes.search(limit=REPLAY_LIMIT).to_pandas()
        assert frame["id"].tolist() == expected
        assert frame["name"].tolist() == [r["name"] for n in sorted(pages) for r in pages[n]["data"]]
    assert server.unexpected == [] and server.unused() == []


def test_first_asks_only_for_the_pages_it_needs(server, expected):
    with vd.Client(base_url=server.url, **replay_options()) as api:
        got = [r.id for r in api.makes.search(limit=REPLAY_LIMIT).first(REPLAY_LIMIT + 5)]
    assert got == expected[:REPLAY_LIMIT + 5]
    assert seen_pages(server) == sorted([page_target(1), page_target(2)])


# ---- the crawl's scheduling ---------------------------------------------------------------------
def frame_sync(url: str, **kw: Any) -> List[int]:
    with vd.Client(base_url=url, **replay_options(**kw)) as api:
        return list(api.makes.search(limit=REPLAY_LIMIT).to_pandas()["id"])


def frame_async(url: str, **kw: Any) -> List[int]:
    async def frame() -> List[int]:
        async with vd.AsyncClient(base_url=url, **replay_options(**kw)) as api:
            return list((await api.makes.search(limit=REPLAY_LIMIT).to_pandas())["id"])

    return asyncio.run(frame())


CRAWLS = dict(WALKS, **{"sync to_pandas": frame_sync, "async to_pandas": frame_async})


@pytest.mark.parametrize("max_parallel", [1, 2])
@pytest.mark.parametrize("crawl", list(CRAWLS))
def test_a_crawl_never_has_more_than_max_parallel_requests_in_flight(server, expected, crawl, max_parallel):
    assert CRAWLS[crawl](server.url, max_parallel=max_parallel) == expected
    assert 1 <= server.max_in_flight <= max_parallel


@pytest.mark.parametrize("crawl", ["sync to_pandas", "async to_pandas"])
def test_a_held_page_does_not_hold_the_pages_after_it(server, expected, crawl):
    # page 2 is answered 2 s late: the crawl asks for the pages after it meanwhile (a client that
    # fetched one page at a time would have one request in flight, however long page 2 took)
    server.fault(f"{REPLAY_SEARCH}?page=2", action="delay", delay_ms=2000)
    assert CRAWLS[crawl](server.url, max_parallel=3) == expected
    assert 2 <= server.max_in_flight <= 3


def break_sync(url: str, after: int) -> List[int]:
    with vd.Client(base_url=url, **replay_options()) as api:
        got = []
        for record in api.makes.search(limit=REPLAY_LIMIT):
            got.append(record.id)
            if len(got) == after:
                break
        return got


def break_async(url: str, after: int) -> List[int]:
    async def run() -> List[int]:
        async with vd.AsyncClient(base_url=url, **replay_options()) as api:
            got = []
            async for record in api.makes.search(limit=REPLAY_LIMIT):
                got.append(record.id)
                if len(got) == after:
                    break
            return got

    return asyncio.run(run())


@pytest.mark.parametrize("walk", [break_sync, break_async], ids=["sync", "async"])
def test_breaking_out_in_the_second_page_asks_for_two_pages(server, expected, walk):
    after = REPLAY_LIMIT + 5
    assert walk(server.url, after) == expected[:after]
    assert seen_pages(server) == sorted([page_target(1), page_target(2)])


# ---- faults: retried, honoured, raised ------------------------------------------------------------
@pytest.mark.parametrize("walk", list(WALKS))
def test_a_429_is_retried_after_its_retry_after(server, expected, walk, caplog):
    server.fault(f"{REPLAY_SEARCH}?page=3", status=429, retry_after=0)
    with caplog.at_level(logging.INFO, logger="vehicledata"):
        assert WALKS[walk](server.url) == expected
    assert server.count(f"{REPLAY_SEARCH}?page=3") == 2  # the 429, then the page
    assert [s.answer for s in server.requests if "page=3" in s.target] == ["fault", "recorded"]
    retries = [r.getMessage() for r in caplog.records if r.getMessage().startswith("retrying")]
    assert len(retries) == 1 and "page=3" in retries[0] and "HTTP 429 (Retry-After 0)" in retries[0], retries


@pytest.mark.parametrize("walk", list(WALKS))
def test_a_retry_after_past_max_wait_raises_instead_of_waiting(server, walk):
    server.fault(f"{REPLAY_SEARCH}?page=2", status=429, retry_after=3600, count=5)
    with pytest.raises(vd.RateLimitError) as info:
        WALKS[walk](server.url, max_wait=30)
    assert info.value.status == 429 and info.value.retry_after == 3600
    assert "page=2" in (info.value.url or "")
    assert server.count(f"{REPLAY_SEARCH}?page=2") == 1  # the hour was not waited, nor the request sent again


@pytest.mark.parametrize("walk", list(WALKS))
@pytest.mark.parametrize("fault", [dict(action="truncate"), dict(status=503), dict(status=503, retry_after=0)],
                         ids=["truncated body", "503", "503 retry-after"])
def test_a_truncated_body_and_a_503_are_retried(server, expected, walk, fault):
    server.fault(f"{REPLAY_SEARCH}?page=4", **fault)
    assert WALKS[walk](server.url) == expected
    assert server.count(f"{REPLAY_SEARCH}?page=4") == 2
    assert server.unexpected == []


@pytest.mark.parametrize("status, error", [
    (400, vd.BadRequestError), (403, vd.PermissionDeniedError), (404, vd.NotFoundError),
    (405, vd.MethodNotAllowedError), (429, vd.RateLimitError), (500, vd.ServerError), (502, vd.ServerError),
    (503, vd.ServiceUnavailableError),
])
@pytest.mark.parametrize("walk", list(WALKS))
def test_an_error_status_raises_its_class_with_the_services_message(server, walk, status, error):
    server.fault(f"{REPLAY_SEARCH}?page=2", status=status, count=10)
    with pytest.raises(error) as info:
        WALKS[walk](server.url, retry=0)
    assert type(info.value) is error
    assert info.value.status == status and "page=2" in (info.value.url or "")
    assert "Fault injected by vehicledata.testing.ReplayServer" in str(info.value)
    assert server.count(f"{REPLAY_SEARCH}?page=2") == 1  # retry=0: asked once


# ---- the token -----------------------------------------------------------------------------------
@pytest.mark.parametrize("walk", list(WALKS))
def test_a_rejected_token_is_renewed_once_and_the_request_sent_again(server, expected, walk):
    server.fault(f"{REPLAY_SEARCH}?page=2", status=401)
    assert WALKS[walk](server.url) == expected
    assert server.logins == 2
    assert server.count(f"{REPLAY_SEARCH}?page=2") == 2


def test_a_token_past_its_expiry_is_renewed_before_each_request(expected):
    with ReplayServer(REPLAY_MAKES, token_ttl=0) as server:  # each token expires as it is issued
        with vd.Client(base_url=server.url, **replay_options()) as api:
            assert [r.id for r in api.makes.search(limit=REPLAY_LIMIT, parallel=False)] == expected
        data = [s for s in server.requests if s.answer != "login"]
        assert server.logins == len(data) == len(recorded_pages())
        assert [s.answer for s in server.requests] == ["login", "recorded"] * len(data)


def test_a_long_lived_token_is_used_for_every_request(server, expected):
    with vd.Client(base_url=server.url, **replay_options()) as api:
        assert [r.id for r in api.makes.search(limit=REPLAY_LIMIT)] == expected
        assert [r.id for r in api.makes.search(limit=REPLAY_LIMIT)] == expected
    assert server.logins == 1


# ---- a slow answer -------------------------------------------------------------------------------
@pytest.mark.parametrize("walk", list(WALKS))
def test_an_answer_later_than_the_timeout_is_a_timeout(server, walk):
    # 60 s late against a 1 s timeout; the server's stop ends the wait (no 60 s spent)
    server.fault(page_target(1), action="delay", delay_ms=60_000)
    with pytest.raises(vd.Timeout, match="timed out"):
        WALKS[walk](server.url, timeout=1, retry=0)
    assert server.count(REPLAY_SEARCH) == 1
