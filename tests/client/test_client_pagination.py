"""Pagination: lazy pages, parallel = sequential, resume, and PaginationError on bad links."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterator, Tuple
from urllib.parse import parse_qs, urlsplit

import pytest

import vehicledata as vd
from client_support import stub_server



def test_pages_cover_total_in_order(api, raw_json):
    pager = api.trims.search(year=2019, make="BMW", limit=10)
    pages = list(pager.pages)
    assert pager.page_count == len(pages) > 2
    assert [p.number for p in pages] == list(range(1, len(pages) + 1))
    ids = [r.id for p in pages for r in p]
    raw = raw_json("/api/trims/v2?year=2019&make=BMW&limit=1000")
    assert ids == [r["id"] for r in raw["data"]]
    assert pager.total == len(ids) == raw["collection"]["total"]
    assert sum(len(p) for p in pages) == pager.total


def test_parallel_and_sequential_agree(api):
    par = [r.to_dict() for r in api.trims.search(year=2018, limit=50)]
    seq = [r.to_dict() for r in api.trims.search(year=2018, limit=50, parallel=False)]
    assert par == seq and len(par) > 100


def test_lazy_first_page_only(api, emulator):
    pager = api.trims.search(year=2019, limit=5)
    assert emulator.stats()["by_path"].get("/api/trims/v2", 0) == 0  # nothing sent yet
    first = pager.first(3)
    assert len(first) == 3 and pager.page_count > 1
    assert emulator.stats()["by_path"]["/api/trims/v2"] == 1  # one page, not all of them


def test_start_page_resumes(api):
    full = [r.id for r in api.trims.search(year=2019, make="BMW", limit=10)]
    resumed = api.trims.search(year=2019, make="BMW", limit=10, start_page=3)
    assert [r.id for r in resumed] == full[20:]
    assert next(iter(resumed.pages)).number == 3
    with pytest.raises(vd.QueryError):
        api.trims.search(start_page=0)


def test_start_page_past_the_end_is_empty(api):
    """The server answers a page past the last 404 NotFoundException; the pager reads it as empty."""
    pager = api.trims.search(year=2019, make="BMW", limit=10, start_page=500)
    assert list(pager) == []
    full = api.trims.search(year=2019, make="BMW", limit=10)
    assert (pager.total, pager.page_count) == (full.total, full.page_count) and full.total > 10


def test_pager_has_no_len(api):
    pager = api.trims.search(year=2019)
    with pytest.raises(TypeError):
        len(pager)  # type: ignore[arg-type]


def test_empty_result(api):
    pager = api.trims.search(year=2019, make="Toyota", trim="No Such Trim")  # (make="NoSuchMake": a QueryError)
    assert pager.total == 0
    assert list(pager) == []
    df = pager.to_pandas()
    assert len(df) == 0 and list(df.columns) == vd.schema.record("trim").field_names()


# ---- a server that breaks the paging rules (the emulator never does) -----------------------
def _envelope(page: int, pages: int, next_page: Any, path: str = "/api/makes/v2") -> bytes:
    data = [{"id": page * 10 + i, "name": f"Make {page}-{i}"} for i in range(2)]
    nxt = "" if next_page is None else f"{path}?limit=2&page={next_page}"
    body = {"collection": {"url": f"{path}?limit=2&page={page}", "count": 2, "pages": pages, "total": 2 * pages,
                           "next": nxt, "prev": "", "first": f"{path}?limit=2", "last": f"{path}?limit=2&page={pages}"},
            "data": data}
    return json.dumps(body).replace("/", "\\/").encode()


@pytest.fixture()
def broken_server() -> Iterator[Tuple[str, Dict[str, Callable[[int], bytes]]]]:
    routes: Dict[str, Callable[[int], bytes]] = {}

    def answer(path: str, headers: Any) -> Tuple[int, Dict[str, str], bytes]:
        page = int(parse_qs(urlsplit(path).query).get("page", ["1"])[0])
        return 200, {"Content-Type": "application/json"}, routes["page"](page)

    with stub_server(answer) as url:
        yield url, routes


@pytest.mark.parametrize("parallel", [True, False])
def test_repeated_next_raises(broken_server, parallel, client_factory):
    url, routes = broken_server
    routes["page"] = lambda p: _envelope(p, 3, 2 if p >= 2 else p + 1)  # page 2 points to itself
    with client_factory(url, None) as api:
        pager = api.makes.search(limit=2, parallel=parallel)
        with pytest.raises(vd.PaginationError, match="repeats") as info:
            list(pager)
        assert "page=2" in info.value.url


def test_inconsistent_page_count_raises(broken_server, client_factory):
    url, routes = broken_server
    routes["page"] = lambda p: _envelope(p, 3 if p == 1 else 4, p + 1)
    with client_factory(url, None) as api:
        with pytest.raises(vd.PaginationError, match="pages=4"):
            list(api.makes.search(limit=2))


def test_missing_next_before_last_page_raises(broken_server, client_factory):
    url, routes = broken_server
    routes["page"] = lambda p: _envelope(p, 3, None)
    with client_factory(url, None) as api:
        with pytest.raises(vd.PaginationError, match="no next link"):
            list(api.makes.search(limit=2))


def test_escaped_slashes_in_links_are_followed(broken_server, client_factory):
    url, routes = broken_server
    routes["page"] = lambda p: _envelope(p, 3, p + 1 if p < 3 else None)
    with client_factory(url, None) as api:
        ids = [r.id for r in api.makes.search(limit=2, parallel=False)]
    assert ids == [10, 11, 20, 21, 30, 31]


def test_repeated_next_raises_in_to_pandas(broken_server, client_factory):
    url, routes = broken_server
    routes["page"] = lambda p: _envelope(p, 4, 3 if p == 3 else p + 1)
    with client_factory(url, None) as api:
        with pytest.raises(vd.PaginationError, match="page 3's next link repeats page 3"):
            api.makes.search(limit=2).to_pandas()


def test_progress_bar_on_multi_page_work(api, capsys):
    ids = [r.id for r in api.trims.search(year=2019, make="BMW", limit=10, progress=True)]
    err = capsys.readouterr().err
    assert "/api/trims/v2" in err and "page" in err
    df = api.trims.search(year=2019, make="BMW", limit=10, progress=True).to_pandas()
    assert df["id"].tolist() == ids


@pytest.mark.parametrize("options", [{"parallel": False}, {"progress": True}, {}])
def test_frames_do_not_consume_the_cached_first_page(api, raw_json, options):
    """to_pandas()/to_arrow() twice, then iteration: every call sees every record."""
    total = raw_json("/api/trims/v2?year=2019&make=BMW&limit=1")["collection"]["total"]
    pager = api.trims.search(year=2019, make="BMW", limit=10, **options)
    assert pager.page_count > 2
    sizes = [len(pager.to_pandas()), len(pager.to_pandas()), len(list(pager)), pager.to_arrow().num_rows]
    assert sizes == [total] * 4
    assert [r.id for r in pager] == pager.to_pandas()["id"].tolist()


def requests_to(emulator, path: str) -> int:
    return emulator.stats()["by_path"].get(path, 0)


@pytest.mark.parametrize("parallel", [True, False])
def test_first_fetches_only_the_pages_needed(api, emulator, parallel):
    got = api.trims.search(limit=10, parallel=parallel).first(15)
    assert len(got) == 15
    assert requests_to(emulator, "/api/trims/v2") == 2
    assert api.trims.search(limit=10, parallel=parallel).first(10) and requests_to(emulator, "/api/trims/v2") == 3


def test_breaking_out_of_iteration_over_fetches_little(api, emulator):
    pager = api.trims.search(limit=10)
    for i, _ in enumerate(pager):
        if i == 14:  # second page
            break
    assert requests_to(emulator, "/api/trims/v2") == 2


def test_the_pager_repr_counts_in_the_singular(api):
    pager = api.trims.search(year=2020, make="Toyota", model="Camry", limit=1000)
    pager.total
    assert repr(pager).endswith(f"total={pager.total}, 1 page fetched>")
    assert "1 page fetched" in pager._repr_html_()
