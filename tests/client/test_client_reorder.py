"""The reorder buffer of a whole-result crawl: pages that arrive ahead of a missing one wait, boundedly.

``to_pandas()`` fetches the pages after the first concurrently and appends them in order
(``Client::collect_pages``); while an earlier page is retried or slow, later pages that arrive
wait for it.  At most ``2 * max_parallel - 1`` wait: no page further ahead is sent meanwhile
(``Client::reorder_window``, docs/client.md "Pagers, pages and records").  ``api.stats()``
reports the most that waited at once as ``reorder_peak``.
"""
from __future__ import annotations

import pytest

MAX_PARALLEL = 2
CAP = 2 * MAX_PARALLEL - 1  # pages that may wait on an earlier one


@pytest.fixture()
def reference(emulator, client_factory):
    with client_factory(emulator.url) as api:
        return [r.id for r in api.trims.search(year=2019, limit=100, parallel=False)]


def served(emulator, status=None):
    stats = emulator.stats()
    return stats["by_path"].get("/api/trims/v2", 0) if status is None else stats["by_status"].get(status, 0)


def crawl(emulator, make_client, **fault):
    """The 2019 trims in pages of 100, ``fault`` (if any) scheduled after the first page:
    (ids, the client's stats, requests the emulator served for the pages after the first)."""
    with make_client(emulator.url, max_parallel=MAX_PARALLEL) as api:
        pager = api.trims.search(year=2019, limit=100)
        assert pager.page_count > CAP + 3  # enough pages after the held ones for the cap to matter
        before = served(emulator)
        if fault:
            emulator.fault("/api/trims/v2", count=1, **fault)
        ids = pager.to_pandas()["id"].tolist()
        return ids, api.stats(), served(emulator) - before, pager.page_count - 1


def test_pages_behind_a_retried_page_wait_at_most_the_cap(emulator, client_factory, reference):
    # The first of the concurrent requests is answered 503 with Retry-After 1: for that second
    # every other page inside the window arrives and waits; none further ahead is sent.
    ids, stats, requests, rest = crawl(emulator, client_factory, status=503, retry_after=1)
    assert ids == reference  # complete, in order, no page twice
    assert stats["retries"] == 1 and served(emulator, "503") == 1 and requests == rest + 1
    assert stats["reorder_peak"] == CAP  # reached, never passed (unbounded: every later page)


def test_pages_behind_a_slow_page_wait_at_most_the_cap(emulator, client_factory, reference):
    # The first concurrent request is answered after 600 ms: no retry, the same bound.
    ids, stats, requests, rest = crawl(emulator, client_factory, action="delay", delay_ms=600)
    assert ids == reference
    assert stats["retries"] == 0 and requests == rest
    assert stats["reorder_peak"] == CAP


def test_an_undisturbed_crawl_stays_inside_the_window(emulator, client_factory, reference):
    ids, stats, requests, rest = crawl(emulator, client_factory)
    assert ids == reference and requests == rest
    assert 0 <= stats["reorder_peak"] <= CAP
