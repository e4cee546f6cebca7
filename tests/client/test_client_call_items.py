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
