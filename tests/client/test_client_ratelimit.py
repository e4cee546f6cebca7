"""The client-side token bucket keeps a crawl under the server's limit: no 429 at all."""
from __future__ import annotations

from typing import Iterator

import pytest

import vehicledata as vd
from vehicledata.testing import Emulator



@pytest.fixture()
def strict(database) -> Iterator[Emulator]:
    # 20 requests per 2-second window: the service's 600/min, compressed.
    with Emulator(db=database, rate_limit=20, window_seconds=2) as emu:
        yield emu


def test_crawl_inside_the_bucket_gets_no_429(strict, client_factory):
    # 90 % of the compressed limit: a 2-second window leaves no slack for scheduling jitter,
    # where the service's 60-second window leaves six requests (the benchmark runs at 600/min).
    # The bucket's burst is a share of a 60-second budget; this window is 2 s: no burst.
    with client_factory(strict.url, None, rate_limit=540, rate_limit_burst=1, retry=0, max_parallel=4) as api:
        pager = api.trims.search(year=2019, limit=40)
        records = list(pager)
        assert len(records) == pager.total
        assert pager.page_count >= 30
        assert api.stats()["rate_wait_seconds"] > 0
    assert "429" not in strict.stats()["by_status"]


def test_without_the_bucket_the_server_says_429(strict, client_factory):
    with client_factory(strict.url, None, rate_limit=None, retry=0, max_parallel=4) as api:
        with pytest.raises(vd.RateLimitError) as info:
            list(api.trims.search(year=2019, limit=40))
    assert info.value.retry_after is not None
