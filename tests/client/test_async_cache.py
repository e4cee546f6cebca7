"""vd.AsyncClient's response cache (``cache=``, vd.Client's options and files): the engine looks
answers up and stores them with the Client's own steps, so a re-run spends no request (counted by
the emulator) and the sync and async clients read each other's entries."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

from client_support import make_async

PREMIUM = DEMO_ACCOUNTS["premium"]


def served(emulator: Emulator) -> int:
    return int(emulator.stats()["requests"])


def again_hits(sent: int) -> int:
    """The answers a re-run takes from the cache: every request but the login."""
    return sent - 1


async def crawl(aapi: vd.AsyncClient) -> Dict[str, Any]:
    """A collected multi-page crawl, pages one by one, a detail, a raw GET and the joined vehicles."""
    pager = aapi.trims.search(year=2020, make="Toyota", limit=20)
    return {
        "frame": await aapi.trims.search(year=2020, make="Toyota").to_pandas(page_size=50),
        "pages": [[r.id for r in page.records] async for page in pager.pages],
        "detail": (await aapi.trims.get(9366)).to_dict(json_safe=True),
        "years": await aapi.get_json("/api/years/v2", make="Honda"),
        "vehicles": await aapi.vehicles.search(year=2020, make="Honda").to_pandas(),
    }


@pytest.mark.asyncio
async def test_a_second_async_crawl_with_the_same_cache_makes_no_request(emulator: Emulator, tmp_path: Path):
    cache = tmp_path / "cache"
    async with make_async(emulator.url, cache=cache) as aapi:
        assert aapi.cache_dir == cache
        first = await crawl(aapi)
        assert aapi.stats()["cache_hits"] == 0
        sent = aapi.stats()["requests"]
    assert len(first["pages"]) > 1 and len(first["frame"]) > 50  # several pages of each
    on_server = served(emulator)
    assert on_server == sent  # every GET and the login (counted in requests)
    assert again_hits(sent) == len(list(cache.glob("*.vdc")))  # every GET stored, the login not
    async with make_async(emulator.url, cache=cache) as again:
        second = await crawl(again)
        assert again.stats()["requests"] == 0 and again.stats()["logins"] == 0
        assert again.stats()["cache_hits"] == again_hits(sent)
    assert served(emulator) == on_server  # the emulator saw nothing: no login, no page
    for key in ("frame", "vehicles"):  # (frames: NaN equals NaN)
        assert second.pop(key).equals(first.pop(key))
    assert second == first
    # the same files as vd.Client's: the sync client reads the async client's answers
    with vd.Client(base_url=emulator.url, api_token=PREMIUM["api_token"], api_secret=PREMIUM["api_secret"],
                   rate_limit=None, cache=cache) as api:
        assert api.get_json("/api/years/v2", make="Honda") == first["years"]
        assert api.stats()["requests"] == 0 and api.stats()["cache_hits"] == 1
    async with make_async(emulator.url, cache=cache) as aapi:
        assert aapi.clear_cache() == again_hits(sent)
        await aapi.get_json("/api/years/v2", make="Honda")
        assert aapi.stats()["requests"] == 2 and aapi.stats()["cache_hits"] == 0  # the login and the GET


@pytest.mark.asyncio
async def test_the_async_client_reads_the_sync_clients_cache(emulator: Emulator, tmp_path: Path):
    cache = tmp_path / "cache"
    with vd.Client(base_url=emulator.url, api_token=PREMIUM["api_token"], api_secret=PREMIUM["api_secret"],
                   rate_limit=None, cache=cache, cache_ttl=600) as api:
        expected = api.engines.search(year=2019, make="BMW").to_pandas(page_size=20)
        pages = api.stats()["requests"] - 1  # the login
    assert pages > 1
    on_server = served(emulator)
    async with make_async(emulator.url, cache=cache, cache_ttl=600) as aapi:
        got = await aapi.engines.search(year=2019, make="BMW").to_pandas(page_size=20)
        assert aapi.stats()["requests"] == 0 and aapi.stats()["cache_hits"] == pages
        # account answers are never cached: asked of the server each time
        await aapi.account.requests_today()
        await aapi.account.requests_today()
        assert aapi.stats()["requests"] == 3 and aapi.stats()["logins"] == 1  # the login and both
    assert got.equals(expected)
    assert served(emulator) == on_server + 3  # a login and the two account requests


def test_cache_options_are_checked_as_vd_clients(tmp_path: Path):
    for kw, name in (({"cache": 5}, "cache"), ({"cache": tmp_path, "cache_ttl": -1}, "cache_ttl"),
                     ({"cache": tmp_path, "cache_max_bytes": -1}, "cache_max_bytes")):
        with pytest.raises(ValueError, match=name):
            vd.AsyncClient(base_url="http://127.0.0.1:9", **kw)
    assert vd.AsyncClient(base_url="http://127.0.0.1:9", cache=False).cache_dir is None
