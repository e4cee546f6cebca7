"""Issue 22's call-level items against the real emulator: ``pager.total`` after ``to_pandas()``
reuses the total the crawl's first page gave (no request), and the CLI's ``--sort`` takes a key's
short name as ``search(sort=)`` does."""
from __future__ import annotations

import pytest


def test_total_after_to_pandas_sends_no_request(api, emulator):
    pager = api.trims.search(year=2020, make="Toyota")
    df = pager.to_pandas()
    sent = emulator.stats()["requests"]
    assert pager.total == len(df) > 100
    assert emulator.stats()["requests"] == sent
    assert api.trims.search(year=2020, make="Toyota").total == len(df)  # a fresh pager asks
    assert emulator.stats()["requests"] == sent + 1


def test_total_of_a_pager_with_its_own_page_size(api, emulator):
    pager = api.trims.search(year=2020, make="Toyota", limit=50)
    df = pager.to_pandas()
    sent = emulator.stats()["requests"]
    assert pager.total == len(df) and pager.page_count == -(-len(df) // 50)
    assert emulator.stats()["requests"] == sent


@pytest.mark.parametrize("key", ["msrp", "MakeModelTrims.msrp", " msrp "])
def test_cli_sort_takes_short_names(cli, api, key):
    code, out, err = cli("get", "trims", "--year", "2020", "--make", "Toyota", "--sort", key, "--direction", "desc",
                         "--format", "json", "--limit", "5")
    assert code == 0, err
    import json

    got = [r["id"] for r in json.loads(out)]
    want = [r.id for r in api.trims.search(year=2020, make="Toyota", sort="MakeModelTrims.msrp",
                                           direction="desc").first(5)]
    assert got == want


def test_cli_sort_names_the_valid_keys(cli, capsys):
    with pytest.raises(SystemExit) as exc:
        cli("get", "trims", "--year", "2020", "--sort", "msrpp")
    assert exc.value.code == 2  # argparse's usage error, before any request
    err = capsys.readouterr().err
    assert "argument --sort: unknown sort 'msrpp' for /api/trims/v2; did you mean 'msrp'?" in err
    assert "MakeModelTrims.msrp" in err


def test_max_wait_caps_the_waiting_of_a_whole_crawl(emulator, client_factory, caplog):
    """Three later pages each answered 503 Retry-After 2: each request alone would sleep 2 s (under
    max_wait=3), but the crawl's sleeps add up to 6 s; the second sleep would pass 3 s: raised instead."""
    import logging

    import vehicledata as vd

    caplog.set_level(logging.INFO, logger="vehicledata")
    with client_factory(emulator.url, max_wait=3.0, max_parallel=4) as api:
        pager = api.trims.search(year=2020, limit=100)
        assert pager.page_count >= 4  # the first page fetched, no fault yet
        emulator.fault("/api/trims/v2", status=503, retry_after=2, count=3)
        with pytest.raises(vd.ServiceUnavailableError) as info:
            pager.to_pandas()
    assert info.value.retry_after == 2.0
    # one 2 s sleep at most (the sleeps announced, counted: no clock); before, every page slept its
    # 2 s and the crawl went on
    sleeps = [r.getMessage() for r in caplog.records if r.name == "vehicledata" and "retrying" in r.getMessage()]
    assert len(sleeps) <= 1, sleeps


def test_a_crawl_within_max_wait_waits_and_finishes(emulator, client_factory):
    with client_factory(emulator.url, max_wait=3.0) as api:
        pager = api.trims.search(year=2020, limit=100)
        total = pager.total
        emulator.fault("/api/trims/v2", status=503, retry_after=1, count=2)
        assert len(pager.to_pandas()) == total
        assert api.stats()["retries"] == 2


def test_each_lazy_iteration_is_one_call(emulator, client_factory):
    """A page-by-page iteration (iter_pandas) is one call too: its later pages' sleeps add up."""
    import vehicledata as vd

    with client_factory(emulator.url, max_wait=3.0, max_parallel=1) as api:
        pager = api.trims.search(year=2020, limit=100)
        pages = pager.iter_pandas()
        next(pages)
        emulator.fault("/api/trims/v2", status=503, retry_after=2, count=1)
        next(pages)  # slept 2 s: within 3 s
        emulator.fault("/api/trims/v2", status=503, retry_after=2, count=1)
        with pytest.raises(vd.ServiceUnavailableError):
            next(pages)  # another 2 s would make 4 s
