"""vd.AsyncClient against the real emulator over loopback: the same records, frames and errors as
vd.Client, faults retried on the engine thread, cancellation, timeouts, shared limits."""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import vehicledata as vd
from vehicledata import schema
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

from client_support import make_async

PREMIUM = DEMO_ACCOUNTS["premium"]


def ids(records: List[Any]) -> List[Any]:
    return [r["id"] if "id" in r else r["code"] for r in records]


async def eventually(predicate: Callable[[], bool], what: str, guard: float = 60.0) -> None:
    """Await until ``predicate()`` holds, looking again every 10 ms.  The verdict is the predicate;
    ``guard`` only ends a hang (a broken client) and sits far above any machine's pace."""
    deadline = time.monotonic() + guard
    while not predicate():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.01)


# ---- the same answers as the sync client ---------------------------------------------------------
@pytest.mark.asyncio
async def test_get_vin_and_search_give_the_sync_clients_records(emulator: Emulator, api: vd.Client):
    trim_id = api.trims.search(year=2019, make="BMW").first(1)[0].id
    vin = "WBA5R1C50KAK12345"
    async with make_async(emulator.url) as aapi:
        detail = await aapi.trims.get(trim_id)
        assert detail.to_dict(json_safe=True) == api.trims.get(trim_id).to_dict(json_safe=True)
        assert len(detail.engines) >= 1
        try:
            expected_vin = api.vin(vin)
        except vd.VehicleDataError as exc:  # an undecodable VIN: the same error, the same message
            with pytest.raises(type(exc), match=str(exc.message)[:40]):
                await aapi.vin(vin)
        else:
            got = await aapi.vin(vin)
            assert got.to_dict(json_safe=True) == expected_vin.to_dict(json_safe=True)
        records = [r async for r in aapi.trims.search(year=2019, make="BMW", limit=7)]
        expected = api.trims.search(year=2019, make="BMW", limit=7).to_list()
        assert [r.to_dict(json_safe=True) for r in records] == [r.to_dict(json_safe=True) for r in expected]
        assert len(records) > 7  # several pages


@pytest.mark.asyncio
async def test_pages_total_and_first(emulator: Emulator, api: vd.Client):
    async with make_async(emulator.url) as aapi:
        pager = aapi.engines.search(year=2018, limit=50)
        assert await pager.total == api.engines.search(year=2018, limit=50).total
        assert await pager.page_count == api.engines.search(year=2018, limit=50).page_count
        numbers, counts = [], []
        async for page in pager.pages:
            numbers.append(page.number)
            counts.append(page.count)
            assert page.total == await pager.total
        sync_pages = list(api.engines.search(year=2018, limit=50).pages)
        assert numbers == [p.number for p in sync_pages] == list(range(1, len(sync_pages) + 1))
        assert counts == [p.count for p in sync_pages]
        first = await aapi.engines.search(year=2018, limit=50).first(60)
        assert ids(first) == ids(api.engines.search(year=2018, limit=50).first(60))
        assert "AsyncPager" in repr(pager) and "total=" in repr(pager)


@pytest.mark.asyncio
async def test_frames_equal_the_sync_clients(emulator: Emulator, api: vd.Client):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    async with make_async(emulator.url, max_parallel=4) as aapi:
        df = await aapi.trims.search(year=2019).to_pandas(page_size=250)
        expected = api.trims.search(year=2019).to_pandas(page_size=250)
        assert len(df) == len(expected) == api.trims.search(year=2019).total > 1000
        pd.testing.assert_frame_equal(df, expected)
        table = await aapi.mileages.search(year=2017).to_arrow(page_size=300)
        assert table.equals(api.mileages.search(year=2017).to_arrow(page_size=300))
        frame = await aapi.engines.search(year=2016).to_polars(page_size=400)
        assert frame.equals(api.engines.search(year=2016).to_polars(page_size=400))
        assert isinstance(frame, pl.DataFrame)
        chunks = [d async for d in aapi.makes.search().iter_pandas(page_size=10)]
        pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), api.makes.search().to_pandas())


@pytest.mark.asyncio
async def test_to_parquet_writes_the_same_rows(emulator: Emulator, api: vd.Client, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    async with make_async(emulator.url) as aapi:
        out = await aapi.bodies.search(year=2019).to_parquet(tmp_path / "bodies", page_size=500)
        got = pq.read_table(out).to_pandas().sort_values("id").reset_index(drop=True)
    expected = api.bodies.search(year=2019).to_pandas().sort_values("id").reset_index(drop=True)
    assert list(got["id"]) == list(expected["id"])


@pytest.mark.asyncio
@pytest.mark.parametrize("resource", schema.resources("search"))
async def test_every_search_and_detail(emulator: Emulator, api: vd.Client, resource: str):
    ep = schema.endpoint_for("search", resource)
    required = {name: allowed[0] for name, allowed in ep.required_parameters().items()}
    expected = getattr(api, resource).search(limit=100, **required).first(3)
    async with make_async(emulator.url) as aapi:
        acc = getattr(aapi, resource)
        assert acc.filters == getattr(api, resource).filters
        got = await acc.search(limit=100, **required).first(3)
        assert [r.to_dict(json_safe=True) for r in got] == [r.to_dict(json_safe=True) for r in expected]
        if resource in schema.resources("detail"):
            dep = schema.endpoint_for("detail", resource)
            key = got[0][dep.parameter]
            rec = await acc.get(key)
            assert rec.to_dict(json_safe=True) == getattr(api, resource).get(key).to_dict(json_safe=True)


@pytest.mark.asyncio
async def test_the_other_endpoints(emulator: Emulator, api: vd.Client):
    async with make_async(emulator.url) as aapi:
        assert await aapi.years(make="BMW") == api.years(make="BMW")
        assert await aapi.powersports_years(type="street_motorcycle") == \
            api.powersports_years(type="street_motorcycle")
        assert await aapi.vehicle_attributes("engines.valves") == api.vehicle_attributes("engines.valves")
        assert await aapi.account.requests_today() >= 1
        got = [r.to_dict(json_safe=True) for r in await aapi.account.requests()]
        expected = [r.to_dict(json_safe=True) for r in api.account.requests()]
        assert [r["date"] for r in got] == [r["date"] for r in expected] and got
        assert got[-1]["count"] + 1 == expected[-1]["count"]  # the sync request counted once more
        with pytest.warns(DeprecationWarning, match=r"api\.account\.requests\(\)"):
            assert [r["date"] for r in await aapi.account_requests()] == [r["date"] for r in got]
        try:
            plate = api.license_plate("US", "ABC123", "CA").to_dict(json_safe=True)
        except vd.VehicleDataError as exc:
            with pytest.raises(type(exc)):
                await aapi.license_plate("US", "ABC123", "CA")
        else:
            assert (await aapi.license_plate("US", "ABC123", "CA")).to_dict(json_safe=True) == plate


# ---- errors: typed, with the server's message ------------------------------------------------------
@pytest.mark.asyncio
async def test_errors_are_the_sync_clients(emulator: Emulator, api: vd.Client):
    async with make_async(emulator.url) as aapi:
        with pytest.raises(vd.NotFoundError) as info:
            await aapi.trims.get(999999999)
        with pytest.raises(vd.NotFoundError) as sync_info:
            api.trims.get(999999999)
        assert info.value.message == sync_info.value.message and info.value.status == 404
        with pytest.raises(vd.QueryError, match="unknown filter"):
            aapi.trims.search(colour="red")  # checked before any request
        with pytest.raises(vd.QueryError):
            await aapi.trims.get("abc")
    async with make_async(emulator.url, account={"api_token": "nope", "api_secret": "wrong"}) as bad:
        with pytest.raises(vd.AuthenticationError):
            await bad.trims.get(1)


# ---- faults, retried on the engine thread -----------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("action", ["status", "drop", "truncate"])
async def test_faults_are_retried(emulator: Emulator, api: vd.Client, action: str):
    expected = api.models.search(year=2019, limit=100).to_list()
    emulator.fault("/api/models", status=503, count=2, action=action)
    async with make_async(emulator.url) as aapi:
        got = [r async for r in aapi.models.search(year=2019, limit=100)]
        assert ids(got) == ids(expected)
        # (libcurl itself sends a request again once when a reused connection turns out closed)
        assert aapi.stats()["retries"] == 2 if action != "drop" else 1 <= aapi.stats()["retries"] <= 2


@pytest.mark.asyncio
async def test_503_past_the_retry_budget_raises_with_retry_after(emulator: Emulator):
    emulator.fault("/api/trims", status=503, count=10, retry_after=0)
    async with make_async(emulator.url, retry=vd.Retry(total=1, backoff_factor=0.01)) as aapi:
        with pytest.raises(vd.ServiceUnavailableError) as info:
            await aapi.trims.search(year=2019).total
        assert info.value.status == 503
        # the client is still usable once the fault is gone
        emulator.clear_faults()
        assert await aapi.trims.search(year=2019).total > 0


@pytest.mark.asyncio
async def test_a_slow_answer_is_a_timeout(emulator: Emulator):
    # The answer comes 3 s late; the client gives up at 0.5 s.  Only the timeout can end the request
    # with vd.Timeout (the late answer would be a success): no clock in the verdict.
    emulator.fault("/api/makes", action="delay", delay_ms=3000, count=5)
    async with make_async(emulator.url, timeout=0.5, retry=0) as aapi:
        with pytest.raises(vd.Timeout, match="timed out"):
            await aapi.makes.search().to_list()
        assert aapi._client._core.jobs == 0


@pytest.mark.asyncio
async def test_wait_for_cancels_the_transfer_and_the_client_stays_usable(emulator: Emulator):
    emulator.fault("/api/makes", action="delay", delay_ms=3000, count=1)
    async with make_async(emulator.url) as aapi:
        with pytest.raises(asyncio.TimeoutError):  # (the answer is 3 s away: only a 2.7 s stall could beat it)
            await asyncio.wait_for(aapi.makes.search().to_list(), 0.3)
        engine = aapi._client._core
        await eventually(lambda: engine.jobs == 0, "the cancelled job left the engine")
        assert len(await aapi.makes.search().to_list()) > 10


@pytest.mark.asyncio
async def test_cancelling_a_crawl_midway(emulator: Emulator, api: vd.Client):
    expected = api.trims.search(year=2019, limit=100).total
    async with make_async(emulator.url, max_parallel=4) as aapi:
        pager = aapi.trims.search(year=2019, limit=100)
        assert await pager.total == expected  # the first page, before the fault
        # every later page is answered 503 Retry-After: 30: the crawl cannot end before it is
        # cancelled (its pages wait on the engine), whatever the machine's pace
        emulator.fault("/api/trims/v2", status=503, retry_after=30, count=1000)
        task = asyncio.ensure_future(pager.to_pandas())
        await eventually(lambda: aapi.stats()["retries"] >= 1, "a later page waits for its retry")  # mid-way
        assert not task.done()
        sent = aapi.stats()["requests"]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        engine = aapi._client._core
        await eventually(lambda: engine.jobs == 0, "the cancelled crawl left the engine")
        await asyncio.sleep(0.2)
        assert aapi.stats()["requests"] == sent  # nothing more was sent for the cancelled crawl
        emulator.clear_faults()
        assert len(await aapi.trims.search(year=2019, limit=1000).to_pandas()) == expected


# ---- many concurrent searches share one pool and one limiter --------------------------------------
@pytest.fixture()
def strict(database) -> Iterator[Emulator]:
    # 40 requests per 1-second window (2400/min): the service's limit, compressed.
    with Emulator(db=database, rate_limit=40, window_seconds=1) as emu:
        yield emu


@pytest.mark.asyncio
async def test_fifty_concurrent_searches_inside_the_rate_limit(strict: Emulator, client_factory: Callable[..., Any]):
    makes = [m.name for m in client_factory(strict.url, None).makes.search().to_list()]
    queries = [(year, make) for year in range(2015, 2021) for make in makes][:50]
    with client_factory(strict.url, None) as sync_api:
        expected = {q: ids(sync_api.trims.search(year=q[0], make=q[1], limit=20).to_list()) for q in queries}
    strict.reset()
    async with make_async(strict.url, None, rate_limit=2160, rate_limit_burst=1, retry=0, max_parallel=8) as aapi:

        async def crawl(year: int, make: str) -> List[Any]:
            out = []
            async for page in aapi.trims.search(year=year, make=make, limit=20).pages:
                out.extend(page.records)
            return ids(out)

        results = await asyncio.gather(*(crawl(y, m) for y, m in queries))
        stats = aapi.stats()
        assert aapi._client._core.peak_transfers <= 8
    assert dict(zip(queries, results)) == expected  # no lost, no duplicated page
    assert sum(len(v) for v in expected.values()) > 50
    assert stats["requests"] > 60 and stats["rate_wait_seconds"] > 0
    assert "429" not in strict.stats()["by_status"]


# ---- loops ----------------------------------------------------------------------------------------
def test_works_under_asyncio_run(emulator: Emulator, api: vd.Client):
    async def main() -> int:
        async with make_async(emulator.url) as aapi:
            return len(await aapi.makes.search().to_list())

    assert asyncio.run(main()) == api.makes.search().total


def test_works_under_uvloop(emulator: Emulator, api: vd.Client):
    uvloop = pytest.importorskip("uvloop")

    async def main() -> List[int]:
        async with make_async(emulator.url) as aapi:
            return list(await asyncio.gather(aapi.makes.search().total, aapi.models.search().total))

    assert uvloop.run(main()) == [api.makes.search().total, api.models.search().total]


class _LoopThreadCalls:
    """A profile hook on one thread (``sys.setprofile`` is per thread): the functions of
    vehicledata that ran on it, Python ones as (file name, qualified name), the C++ core's as
    ("_core", name).  Installed on the loop's thread it says which steps the loop itself ran."""

    def __init__(self) -> None:
        import os

        import vehicledata

        self.package = os.path.dirname(vehicledata.__file__) + os.sep
        self.calls: "set[tuple[str, str]]" = set()

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(self.package):
                self.calls.add((code.co_filename[len(self.package):], getattr(code, "co_qualname", code.co_name)))
        elif event == "c_call":
            module = getattr(arg, "__module__", None) or type(getattr(arg, "__self__", None)).__module__ or ""
            if module.startswith("vehicledata._core"):
                self.calls.add(("_core", arg.__name__))

    def core(self, *words: str) -> List[str]:
        """The C++ core's functions that ran here whose names hold one of ``words``."""
        return sorted(name for kind, name in self.calls if kind == "_core" and any(w in name.lower() for w in words))


# The core's functions that transfer, decode, or copy or convert pages: the engine thread's and the
# frames thread's work, never the loop's (the loop's own calls: submit, cancel, check_paging, ...).
_NOT_ON_THE_LOOP = ("decode", "get_page", "fetch", "collect", "download", "concat", "append", "copy", "arrow",
                    "columns", "records", "join", "gather")


def test_the_loop_is_not_blocked_by_a_crawl(emulator: Emulator, monkeypatch: pytest.MonkeyPatch):
    """A crawl's transfers, decoding and frame building run off the loop's thread.  Asserted where
    each step runs (the thread that logs each request, a profile hook on the loop's thread, the
    thread that builds the frame), never how late the loop woke: a slow or busy machine cannot fail
    it, and moving any of that work onto the loop does.  The loop runs in asyncio's debug mode, where
    a call into the loop from another thread (anything but call_soon_threadsafe) raises.
    (How late a 1 ms ticker wakes beside a crawl is measured, not tested: benchmarks/loop_lag.py.)"""
    import sys
    import threading

    from vehicledata import frames

    requests: List[Tuple[int, str]] = []  # (thread, request line) of every request of the crawl

    class Requests(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("GET " + emulator.url + "/api/trims"):
                requests.append((threading.get_ident(), record.getMessage()))

    built: List[int] = []  # the threads that built a frame
    page_to_pandas = frames.page_to_pandas

    def recorded(page: Any) -> Any:
        built.append(threading.get_ident())
        return page_to_pandas(page)

    monkeypatch.setattr(frames, "page_to_pandas", recorded)
    log = logging.getLogger("vehicledata")
    handler = Requests(logging.DEBUG)
    log.addHandler(handler)
    old_level = log.level
    log.setLevel(logging.DEBUG)  # (setLevel: it clears the loggers' isEnabledFor caches)
    loop_thread = threading.get_ident()
    on_loop = _LoopThreadCalls()

    async def main() -> Tuple[int, int, int, List[Any]]:
        assert asyncio.get_running_loop().get_debug()
        async with make_async(emulator.url, max_parallel=4) as aapi:
            search = aapi.trims.search(year=2019, limit=100)
            pages, cores = 0, []
            async for page in search.pages:
                pages += 1
                cores.append(page._core)
            df = await aapi.trims.search(year=2019, limit=100).to_pandas(page_size=100)
            return pages, len(df), await search.total, cores

    sys.setprofile(on_loop)
    try:
        pages, rows, total, cores = asyncio.run(main(), debug=True)
    finally:
        sys.setprofile(None)
        log.removeHandler(handler)
        log.setLevel(old_level)
    assert pages > 10 and rows == total > 1000
    # the instruments saw the crawl: its requests (the pages twice: iterated, then the frame), the
    # engine's submits from the loop, the frame built once
    assert len(requests) >= 2 * pages
    assert on_loop.core("submit") == ["submit"], sorted(on_loop.calls)
    assert len(built) == 1
    # transfers: every request was sent and answered on another thread (the engine's)
    assert loop_thread not in {thread for thread, _ in requests}
    # decoding: the loop received decoded pages and decoded nothing itself
    assert all(type(core).__name__ == "Page" and core.rows > 0 for core in cores)
    assert not on_loop.core(*_NOT_ON_THE_LOOP), "a transfer, a decode or a copy of pages ran on the loop"
    assert not [c for c in on_loop.calls if c[0] != "_core" and "decode" in c[1].lower()], "a decode ran on the loop"
    # frames: built on the frames thread, not on the loop (no function of vehicledata.frames ran there)
    assert built[0] != loop_thread
    assert not [c for c in on_loop.calls if c[0] == "frames.py"], "frame work ran on the loop"


@pytest.mark.asyncio
async def test_the_records_of_a_crawl_stay_out_of_the_cyclic_collector(emulator: Emulator):
    """Records are views the collector never looked inside (RecordBase has no traverse): untracked,
    a crawl's tens of thousands of them do not lengthen every full collection, a pass that holds
    the GIL (27-33 ms beside a record-by-record crawl of every trim: issue 42, benchmarks/loop_lag.py)."""
    import gc

    from vehicledata.pager import Record

    async with make_async(emulator.url) as aapi:
        records = [r async for r in aapi.trims.search(year=2019, make="BMW", limit=50)]
        detail = await aapi.trims.get(records[0].id)
    assert len(records) > 50 and not any(gc.is_tracked(r) for r in records)
    as_dicts = [r.to_dict(json_safe=True) for r in records]  # every field read, nested values too
    gc.collect()
    assert [r.to_dict(json_safe=True) for r in records] == as_dicts and as_dicts[0]["id"] == detail.id
    assert gc.is_tracked(Record({"id": 1}, "trim"))  # a dict-backed record is a container: tracked


@pytest.mark.asyncio
async def test_a_closed_client_raises(emulator: Emulator):
    aapi = make_async(emulator.url)
    await aapi.aclose()
    with pytest.raises(vd.VehicleDataError, match="closed"):
        await aapi.makes.search().total
    with pytest.raises(AttributeError):
        aapi.no_such_resource
    with pytest.raises(AttributeError, match="not offered by AsyncClient yet"):
        aapi.login  # (the engine logs in with the first request that needs it)
    with pytest.raises(vd.VehicleDataError, match="closed"):
        await aapi.get_json("/api/makes/v2")


@pytest.mark.asyncio
async def test_demo_warning_points_at_the_caller(emulator: Emulator):
    async with make_async(emulator.url, None) as aapi:
        with pytest.warns(vd.DemoDataWarning) as record:
            pager = aapi.trims.search(vd.F("year") == 2010)
        assert record[0].filename == __file__
        assert await pager.total == 0


# ---- the hostile server's attacks that apply to a page request --------------------------------------
MiB = 1 << 20
HOSTILE = [
    ("long", {"max_body": 8 * MiB}, "LimitError", "max_body"),
    ("long", {}, "LimitError", "max_body"),  # 2 GiB announced: refused before the body
    ("claim", {}, "LimitError", "max_body"),
    ("error", {"max_body": 8 * MiB}, "LimitError", "max_body"),
    ("bomb", {"compress": True, "max_decompressed": 16 * MiB}, "LimitError", "max_decompressed"),
    ("truncated", {}, "TransportError", None),
    ("redirect", {}, "APIError", None),  # 302 is not followed: an error status, typed
]


@pytest.mark.asyncio
@pytest.mark.parametrize("attack,opts,error,limit", HOSTILE,
                         ids=[f"{c[0]}-{'limited' if c[1] else 'default'}" for c in HOSTILE])
async def test_hostile_answers_end_bounded_with_a_typed_error(attack: str, opts: Dict[str, Any], error: str,
                                                              limit: Optional[str]):
    from hostile_server import hostile_server

    with hostile_server() as server:
        async with vd.AsyncClient(base_url=f"{server.url}/{attack}", retry=0, rate_limit=None, api_token="",
                                  api_secret="", **opts) as aapi:
            with pytest.raises(getattr(vd, error)) as info:
                await aapi.makes.search().total
            assert getattr(info.value, "limit", None) == limit
            assert aapi._client._core.jobs == 0
            # bounded by the client: the attacks that send without end were cut off by it (the server
            # gives up on its own only after 120 s), not waited out
            if attack in ("long", "error"):
                assert server.sent.get(attack, 0) < 64 * MiB


@pytest.mark.asyncio
async def test_closing_the_client_ends_the_requests_it_had(emulator: Emulator):
    emulator.fault("/api/makes", action="delay", delay_ms=2000, count=1)
    aapi = make_async(emulator.url)
    task = asyncio.ensure_future(aapi.makes.search().to_list())
    await asyncio.sleep(0.2)
    aapi.close()
    # close() settles the pending future on the loop's next turn and the task ends on the turn after:
    # counted in turns of the loop, not seconds (the delayed answer, 2 s away, plays no part)
    for _ in range(5):
        await asyncio.sleep(0)
    assert task.done()
    with pytest.raises(vd.VehicleDataError, match="closed"):
        await task


def test_await_in_a_jupyter_cell(emulator: Emulator, api: vd.Client, tmp_path):
    """Jupyter's kernel runs its own loop: a cell awaits the client directly (no asyncio.run)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    acct = PREMIUM
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import vehicledata as vd\n"
                                  f"api = vd.AsyncClient(base_url={emulator.url!r}, api_token={acct['api_token']!r}, "
                                  f"api_secret={acct['api_secret']!r}, rate_limit=None)"),
        nbformat.v4.new_code_cell("df = await api.makes.search().to_pandas()\nprint(len(df))"),
        nbformat.v4.new_code_cell(f"print((await api.trims.get({api.trims.search(year=2019).first(1)[0].id})).id)"),
        nbformat.v4.new_code_cell("await api.aclose()"),
    ]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = ["".join(str(o.get("text", "")) for o in c.outputs) for c in nb.cells]
    assert all(o.get("output_type") != "error" for c in nb.cells for o in c.outputs)
    assert outputs[1].strip() == str(api.makes.search().total)
    assert outputs[2].strip() == str(api.trims.search(year=2019).first(1)[0].id)


def test_the_example_of_docs_async_md_runs(emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path, capsys):
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "async.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)  # type: ignore[union-attr]
    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    monkeypatch.setenv("VEHICLEDATA_API_TOKEN", PREMIUM["api_token"])
    monkeypatch.setenv("VEHICLEDATA_API_SECRET", PREMIUM["api_secret"])
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/async.md", "exec"), {"__name__": "docs_async"})
    out = capsys.readouterr().out
    assert out.strip() and (tmp_path / "bodies").is_dir()


# ---- JWT and Retry-After, handled on the engine thread ------------------------------------------------
def _logins(emu: Emulator) -> int:
    return int(emu.stats()["by_path"].get("/api/auth/login", 0))


@pytest.fixture()
def short_ttl(database) -> Iterator[Emulator]:
    with Emulator(db=database, token_ttl=4) as emu:
        yield emu


@pytest.mark.asyncio
async def test_one_login_for_concurrent_requests_and_renewal_after_401(short_ttl: Emulator):
    async with make_async(short_ttl.url) as aapi:
        totals = await asyncio.gather(*(aapi.trims.search(year=y).total for y in (1990, 2000, 2010, 2019)))
        assert all(t > 0 for t in totals)  # premium data: the JWT was sent
        assert _logins(short_ttl) == 1 and aapi.stats()["logins"] == 1
        short_ttl.shift_clock(60)  # the server now sees the token as expired
        assert await aapi.account.requests_today() >= 1
        assert aapi.stats()["logins"] == 2


@pytest.mark.asyncio
async def test_retry_after_is_waited_on_the_engine_thread_not_the_loop(emulator: Emulator):
    import threading

    emulator.fault("/api/makes", status=503, count=1, retry_after=1)
    retrying: List[int] = []  # the thread that announced the wait (and then waited)

    class Retries(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("retrying GET "):
                retrying.append(threading.get_ident())

    log = logging.getLogger("vehicledata")
    handler = Retries(logging.INFO)
    log.addHandler(handler)
    old = log.level
    log.setLevel(logging.INFO)
    try:
        async with make_async(emulator.url, retry=vd.Retry(total=2, backoff_factor=0.01)) as aapi:
            ticks_while_waiting = 0

            async def tick() -> None:
                nonlocal ticks_while_waiting
                while True:
                    await asyncio.sleep(0.01)
                    if retrying and not request.done():
                        ticks_while_waiting += 1

            request = asyncio.ensure_future(aapi.makes.search().to_list())
            ticker = asyncio.ensure_future(tick())
            started = time.monotonic()
            assert len(await request) > 10
            waited = time.monotonic() - started
            ticker.cancel()
            retries = aapi.stats()["retries"]
    finally:
        log.removeHandler(handler)
        log.setLevel(old)
    # a lower bound only (the Retry-After was honoured): a slow machine only makes it longer
    assert waited >= 0.9 and retries == 1
    # the wait was announced, and so taken, on the engine's thread, not the loop's ...
    assert len(retrying) == 1 and retrying[0] != threading.get_ident()
    # ... and the loop went on running other tasks during it (a loop blocked by the wait could not)
    assert ticks_while_waiting >= 1


@pytest.mark.asyncio
async def test_closing_from_the_engine_thread_does_not_wait_for_itself(emulator: Emulator):
    # The logger runs on the engine thread: a handler that closes the client there (as a finalizer
    # run by a garbage collection on that thread would) must neither deadlock nor crash.
    import logging
    import threading

    aapi = make_async(emulator.url)
    main = threading.get_ident()

    class Closer(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if threading.get_ident() != main:
                aapi.close()

    handler = Closer(level=logging.DEBUG)
    log = logging.getLogger("vehicledata")
    old = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        with pytest.raises(vd.VehicleDataError, match="closed"):
            await asyncio.wait_for(aapi.makes.search().to_list(), 5)
    finally:
        log.removeHandler(handler)
        log.setLevel(old)


@pytest.mark.asyncio
async def test_request_lines_reach_the_logger_when_debug_is_on(emulator: Emulator, caplog: pytest.LogCaptureFixture):
    async with make_async(emulator.url) as aapi:
        with caplog.at_level(logging.WARNING, logger="vehicledata"):
            await aapi.makes.search().total
        assert not [r for r in caplog.records if r.levelno < logging.WARNING]
        with caplog.at_level(logging.DEBUG, logger="vehicledata"):
            await aapi.models.search().total
        lines = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
        assert any(line.startswith("GET " + emulator.url + "/api/models") and "-> 200" in line for line in lines)


# ---- sync: the rules of vehicledata.sync, over the async pager -------------------------------------
@pytest.mark.asyncio
async def test_sync_gives_the_sync_clients_frame_and_watermark(database, client_factory):
    from datetime import datetime, timedelta, timezone

    edt = timezone(timedelta(hours=-4))
    with Emulator(db=database) as emu, client_factory(emu.url) as api:  # touches stay on a private emulator
        ids = sorted(api.trims.search(year=2019, make="BMW").to_pandas()["id"].tolist())[:3]
        before, inside, after = (int(i) for i in ids)
        emu.touch("trims", [before], modified="2023-11-05T01:30:00-04:00")  # 30 min before the mark
        emu.touch("trims", [inside], modified="2023-11-05T01:15:00-05:00")  # 30 min after it, in EST
        emu.touch("trims", [after], modified="2023-11-05T01:50:00-04:00")   # 5 min after it, in EDT
        mark = datetime(2023, 11, 5, 1, 45, tzinfo=edt)
        expected, expected_mark = api.trims.sync(since=mark, year=2019, make="BMW")
        async with make_async(emu.url) as aapi:
            df, new_mark = await aapi.trims.sync(since=mark, year=2019, make="BMW")
            assert sorted(df["id"].tolist()) == sorted([inside, after])
            pd = pytest.importorskip("pandas")
            pd.testing.assert_frame_equal(df, expected)
            assert new_mark == expected_mark == df["modified"].max()
            # the watermark positionally, a condition beside it: as the sync client
            df2, mark2 = await aapi.trims.sync(mark.isoformat(), vd.F("trim_id") == inside, year=2019)
            assert df2["id"].tolist() == [inside] and mark2 == df2["modified"].max()
            # records served without modified: the watermark is when the sync started
            started = datetime.now(timezone.utc).replace(microsecond=0)
            bodies, bmark = await aapi.bodies.sync(year=2019, make="BMW")
            assert len(bodies) == len(api.bodies.search(year=2019, make="BMW").to_pandas())
            assert bmark >= pd.Timestamp(started) - pd.Timedelta(seconds=1)
            with pytest.raises(vd.QueryError, match="no modified field to sync on"):
                await aapi.makes.sync(since=None)
            with pytest.raises(vd.QueryError, match="since must be"):
                await aapi.trims.sync(since="yesterday")


# ---- vehicles: the four crawls on the engine, vehicledata.vehicles' join -----------------------------
@pytest.mark.asyncio
async def test_vehicles_search_and_get_give_the_sync_clients(emulator: Emulator, api: vd.Client):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    conds = (vd.F("body.type") == "SUV", vd.F("msrp") < 40_000, vd.F("mileage.combined_mpg") > 25)
    expected = api.vehicles.search(*conds, year=2020).to_pandas()
    async with make_async(emulator.url, max_parallel=4) as aapi:
        assert aapi.vehicles.fields == api.vehicles.fields and aapi.vehicles.filters == api.vehicles.filters
        df = await aapi.vehicles.search(*conds, year=2020).to_pandas()
        assert len(df) > 0 and (df["type"] == "SUV").all() and (df["combined_mpg"] > 25).all()
        pd.testing.assert_frame_equal(df, expected, check_exact=True)
        table = await aapi.vehicles.search(year=2020, make="Toyota", limit=50).to_arrow()  # several pages each
        assert table.equals(api.vehicles.search(year=2020, make="Toyota", limit=50).to_arrow())
        assert table.num_rows == len(set(table.column("id").to_pylist())) > 50
        trim_id = int(df["id"].iloc[0])
        car = await aapi.vehicles.get(trim_id)
        assert car.to_dict(json_safe=True) == api.vehicles.get(trim_id).to_dict(json_safe=True)
        assert car["id"] == trim_id and "combined_mpg" in car.to_dict()
        with pytest.raises(vd.NotFoundError, match="no trim with id 999999999"):
            await aapi.vehicles.get(999999999)
        with pytest.raises(vd.QueryError, match="integer trim id"):
            await aapi.vehicles.get("abc")  # type: ignore[arg-type]
        with pytest.raises(vd.QueryError, match="unknown vehicles condition field"):
            aapi.vehicles.search(vd.F("engine.colour") == "red")  # before any request
        with pytest.raises(vd.QueryError, match="unknown filter"):
            aapi.vehicles.search(colour="red")
