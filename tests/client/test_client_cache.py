"""The on-disk response cache (``vd.Client(cache=..., cache_ttl=..., cache_max_bytes=...)``):
a re-run spends no request, counted by the emulator; one access tier never reads another's
answers; the TTL, the size bound, corrupt files and file modes (docs/client.md, "Response cache")."""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]
BASIC = DEMO_ACCOUNTS["basic"]


def make_client(url: str, account: Any = PREMIUM, **kw: Any) -> vd.Client:
    """A client of the emulator (no client-side rate limit, short backoffs); ``account`` None: anonymous."""
    kw.setdefault("rate_limit", None)
    kw.setdefault("retry", vd.Retry(total=3, backoff_factor=0.01, backoff_jitter=0.0))
    token, secret = (account["api_token"], account["api_secret"]) if account else ("", "")
    return vd.Client(base_url=url, api_token=token, api_secret=secret, **kw)


def served(emulator: Emulator) -> int:
    """Requests the emulator has answered since its last reset (logins included)."""
    return int(emulator.stats()["requests"])


def notebook(api: vd.Client) -> Dict[str, Any]:
    """The cells of a notebook: a multi-page crawl, a detail, a raw GET and the joined vehicles."""
    return {
        "trims": api.trims.search(year=2020, make="Toyota").to_pandas(page_size=50),
        "detail": api.trims.get(9366).to_dict(),
        "years": api.get_json("/api/years/v2", make="Honda"),
        "vehicles": api.vehicles.search(year=2020, make="Honda").to_pandas(),
    }


def entries(cache: Path) -> List[Path]:
    return sorted(cache.glob("*.vdc"))


def test_a_rerun_notebook_makes_no_request(emulator: Emulator, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with make_client(emulator.url, cache=cache) as api:
        first = notebook(api)
        assert api.stats()["cache_hits"] == 0
    sent = served(emulator)
    assert sent > 8  # a login, several trims pages, the detail, years and four vehicle crawls
    assert len(entries(cache)) == sent - 1  # every GET stored, the login not
    with make_client(emulator.url, cache=cache) as again:
        second = notebook(again)
        assert again.stats()["requests"] == 0 and again.stats()["logins"] == 0
        assert again.stats()["cache_hits"] == sent - 1
    assert served(emulator) == sent  # the emulator saw no request at all: no login, no page
    assert first["trims"].equals(second["trims"]) and len(first["trims"]) > 50
    assert first["detail"] == second["detail"]
    assert first["years"] == second["years"]
    assert first["vehicles"].equals(second["vehicles"])


def test_the_cache_is_off_by_default(emulator: Emulator) -> None:
    with make_client(emulator.url) as api:
        assert api.cache_dir is None
        api.trims.search(year=2020).total
        api.trims.search(year=2020).total
        # login, the service's years (the year= check, once per client) and two pages
        assert api.stats()["cache_hits"] == 0 and api.stats()["requests"] == 4


def test_tiers_never_share_an_answer(emulator: Emulator, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    target = "/api/trims/v2?year=2010&limit=5"
    with make_client(emulator.url, cache=cache) as premium:
        assert premium.get_json(target)["collection"]["total"] > 0
    sent = served(emulator)
    # anonymous: the demo data-set (no 2010 rows), asked of the server, not read from the cache
    with make_client(emulator.url, None, cache=cache) as anonymous:
        with pytest.warns(vd.DemoDataWarning):
            assert anonymous.trims.search(vd.F("year") == 2010, limit=5).total == 0
        assert anonymous.stats()["cache_hits"] == 0
    assert served(emulator) == sent + 1
    # another account: asks the server too
    with make_client(emulator.url, BASIC, cache=cache) as basic:
        basic.get_json(target)
        assert basic.stats()["cache_hits"] == 0
    assert served(emulator) == sent + 3  # its login and the page
    # the premium token with a wrong secret: rejected by the server, never served the cached answer
    wrong = dict(PREMIUM, api_secret="not-the-secret")
    with make_client(emulator.url, wrong, cache=cache) as impostor:
        with pytest.raises(vd.AuthenticationError):
            impostor.get_json(target)
        assert impostor.stats()["cache_hits"] == 0
    # premium again: from the cache
    with make_client(emulator.url, cache=cache) as premium:
        premium.get_json(target)
        assert premium.stats() ["cache_hits"] == 1 and premium.stats()["requests"] == 0


def test_the_query_order_does_not_matter(emulator: Emulator, tmp_path: Path) -> None:
    with make_client(emulator.url, cache=tmp_path) as api:
        a = api.get_json("/api/trims/v2?year=2020&make=Honda&limit=3")
        b = api.get_json("/api/trims/v2?make=Honda&limit=3&year=2020")
        c = api.get_json("/api/trims/v2?make=Honda&limit=4&year=2020")
        assert a == b and len(c["data"]) == 4
        assert api.stats()["cache_hits"] == 1


def test_the_ttl_is_honoured(emulator: Emulator, tmp_path: Path) -> None:
    with make_client(emulator.url, cache=tmp_path, cache_ttl=1) as api:
        api.trims.search(year=2020, limit=5).total
        api.trims.search(year=2020, limit=5).total
        assert api.stats()["cache_hits"] == 1
        time.sleep(2.1)
        api.trims.search(year=2020, limit=5).total
        # login, the service's years (the year= check, once per client), page, page again
        assert api.stats()["cache_hits"] == 1 and api.stats()["requests"] == 4
    with make_client(emulator.url, cache=tmp_path, cache_ttl=None) as forever:
        forever.trims.search(year=2020, limit=5).total
        assert forever.stats()["cache_hits"] == 2  # the years (of the year= check) and the page


def test_an_answer_that_changes_every_time_is_not_cached(emulator: Emulator, tmp_path: Path) -> None:
    with make_client(emulator.url, cache=tmp_path) as api:
        n = api.account.requests_today()
        assert api.account.requests_today() == n + 1
        assert api.stats()["cache_hits"] == 0
    assert entries(tmp_path) == []


def test_files_are_private_and_written_whole(emulator: Emulator, tmp_path: Path) -> None:
    cache = tmp_path / "a" / "b"
    with make_client(emulator.url, cache=cache) as api:
        api.trims.search(year=2020, make="Honda").to_pandas(page_size=20)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    files = entries(cache)
    assert len(files) > 3
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert list(cache.glob("*.tmp")) == []  # written to a temporary name, then renamed
    text = files[0].read_bytes()
    assert text.startswith(b"vehicledata-response-cache 1\ntier account ")
    assert PREMIUM["api_secret"].encode() not in text and PREMIUM["api_token"].encode() not in text


def test_corrupt_entries_are_ignored_and_rewritten(emulator: Emulator, tmp_path: Path) -> None:
    with make_client(emulator.url, cache=tmp_path) as api:
        expected = api.trims.search(year=2020, make="Honda").to_pandas(page_size=20)
    files = entries(tmp_path)
    damage = [b"", b"garbage", None, b"vehicledata-response-cache 1\ntier x\n"]
    for i, f in enumerate(files):
        how = damage[i % len(damage)]
        if how is None:  # truncated: the body shorter than announced
            f.write_bytes(f.read_bytes()[:-10])
        else:
            f.write_bytes(how)
    before = served(emulator)
    with make_client(emulator.url, cache=tmp_path) as api:
        again = api.trims.search(year=2020, make="Honda").to_pandas(page_size=20)
        assert api.stats()["cache_hits"] == 0
    assert again.equals(expected)
    assert served(emulator) == before + len(files) + 1  # every page again, and a login
    with make_client(emulator.url, cache=tmp_path) as api:  # rewritten: whole again
        third = api.trims.search(year=2020, make="Honda").to_pandas(page_size=20)
        assert api.stats()["cache_hits"] == len(files) and api.stats()["requests"] == 0
    assert third.equals(expected)


def test_a_body_that_no_longer_decodes_is_fetched_again(emulator: Emulator, tmp_path: Path) -> None:
    # (conditions, not year=/make= keywords: those would add the service's lists to the cache)
    with make_client(emulator.url, cache=tmp_path) as api:
        total = api.trims.search(vd.F("year") == 2020, limit=5).total
    (f,) = entries(tmp_path)
    head, _, body = f.read_bytes().partition(b"\nbody ")
    size, _, body = body.partition(b"\n")
    bad = b"{" * int(size)  # the right length, not JSON
    f.write_bytes(head + b"\nbody " + size + b"\n" + bad)
    with make_client(emulator.url, cache=tmp_path) as api:
        assert api.trims.search(vd.F("year") == 2020, limit=5).total == total
        assert api.stats()["cache_hits"] == 0 and api.stats()["requests"] == 2
        assert api.trims.search(vd.F("year") == 2020, limit=5).total == total
        assert api.stats()["cache_hits"] == 1


def test_the_size_is_bounded_least_recently_used_first(emulator: Emulator, tmp_path: Path) -> None:
    # (conditions, not year=/make= keywords: those would add the service's lists to the cache)
    with make_client(emulator.url, cache=tmp_path) as api:
        api.trims.search(vd.F("year") == 2020, limit=10).total
        one = entries(tmp_path)[0].stat().st_size
    limit = one * 5
    with make_client(emulator.url, cache=tmp_path, cache_max_bytes=limit) as api:
        for make in ("Honda", "Toyota", "Ford", "BMW", "Kia", "Audi", "Mazda", "Subaru"):
            api.trims.search(vd.F("year") == 2020, vd.F("make") == make, limit=10).total
            assert sum(f.stat().st_size for f in entries(tmp_path)) <= limit
        newest = api.stats()["requests"]
        api.trims.search(vd.F("year") == 2020, vd.F("make") == "Subaru", limit=10).total  # the last one stored: still there
        assert api.stats()["requests"] == newest and api.stats()["cache_hits"] == 1
        api.trims.search(vd.F("year") == 2020, limit=10).total  # the first, least recently used: evicted
        assert api.stats()["requests"] == newest + 1


def test_an_unusable_directory_is_a_miss_not_a_crash(emulator: Emulator, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with make_client(emulator.url, cache=blocker / "cache") as api:
        assert api.trims.search(year=2020, limit=5).total > 0
        assert api.trims.search(year=2020, limit=5).total > 0
        assert api.stats()["cache_hits"] == 0


def test_clear_cache(emulator: Emulator, tmp_path: Path) -> None:
    # (conditions, not year=/make= keywords: those would add the service's lists to the cache)
    with make_client(emulator.url, cache=tmp_path) as api:
        api.trims.search(vd.F("year") == 2020, limit=5).total
        assert api.clear_cache() == 1
        assert entries(tmp_path) == []
    with make_client(emulator.url) as off:
        assert off.clear_cache() == 0


def test_cache_true_is_under_the_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VEHICLEDATA_HOME", str(tmp_path))
    with vd.Client(base_url="http://127.0.0.1:9", api_token="", api_secret="", cache=True) as api:
        assert api.cache_dir == tmp_path / "responses"


@pytest.mark.parametrize("kw, message", [
    ({"cache": ""}, "cache must be"),
    ({"cache": 3}, "cache must be"),
    ({"cache_ttl": 0}, "cache_ttl must be"),
    ({"cache_ttl": -5}, "cache_ttl must be"),
    ({"cache_ttl": "1h"}, "cache_ttl must be"),
    ({"cache_max_bytes": -1}, "cache_max_bytes must be"),
    ({"cache_max_bytes": 1.5}, "cache_max_bytes must be"),
])
def test_bad_options_name_themselves(kw: Dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        vd.Client(base_url="http://127.0.0.1:9", api_token="", api_secret="", **kw)
