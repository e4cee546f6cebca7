"""The asyncio client: ``vd.AsyncClient``, the same client on an event loop.

    import vehicledata as vd

    async with vd.AsyncClient() as api:
        detail = await api.trims.get(9366)
        async for trim in api.trims.search(year=2019, make="BMW"):
            print(trim.id, trim.description)
        df = await api.engines.search(year=2020).to_pandas()
        total = await api.trims.search(year=2019).total

One implementation of every rule: the options, filters, conditions and errors are those of
:class:`vehicledata.Client` (the requests are built and checked by the same code), and the I/O runs
in the same C++ core.  An ``AsyncClient`` owns one I/O engine (``_core.client.Engine``): a C++
thread driving one libcurl multi handle, with the client's connection pool, token bucket, retry
policy and JWT.  Each request is a job queued to it; transfers, waits and decoding run there
without the GIL, and the result (decoded pages, or the exception) comes back to the event loop with
``loop.call_soon_threadsafe``.  Cancelling the awaiting task removes the job's transfers from the
multi handle at once.  No thread per request, no executor around a request; a whole result's
frame (``to_pandas``/``to_arrow``/``to_polars``) is built on one worker thread, off the loop.
See docs/async.md.
"""
from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import weakref
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _core, _names, checkpoint, frames, schema
from ._fetcher import finish_download, progress_bar
from ._targets import build_target, check_target, warn_demo_empty
from .client import Client, Conditions, SearchResource, VehicleAttributes, YearsResource, _SEARCHES, _log
from .errors import NotFoundError, PaginationError, VehicleDataError
from .feed import DOWNLOAD_TIMEOUT, MAX_DOWNLOAD_BYTES
from .pager import Page, Pager, Record, _core_decode, _query_digest, batches, page_number, records_of
from ._core import envelope as _envelope

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from .vin import VinResult


def _settle(future: "asyncio.Future[Any]", value: Any, error: Optional[BaseException]) -> None:
    """Run on the loop (scheduled by the engine thread): the job's result into its future."""
    if future.done():  # cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


_FRAMES: List[Any] = []  # the one worker thread that builds whole-result frames (made on first use)


async def _off_loop(convert: Callable[..., Any], *args: Any) -> Any:
    """``convert(*args)`` (a whole result's frame or concat: milliseconds to tens of ms of CPU) on
    one worker thread, so the loop keeps running its other tasks meanwhile (the work itself is the
    sync client's step, unchanged: this is not a second implementation).  One thread for every
    client and loop, not one per call: the frames are built one after the other, as they were on
    the loop, so peak memory stays that of one build at a time (and of one more malloc arena)."""
    if not _FRAMES:
        from concurrent.futures import ThreadPoolExecutor

        _FRAMES.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="vehicledata-frames"))
    return await asyncio.get_running_loop().run_in_executor(
        _FRAMES[0], functools.partial(contextvars.copy_context().run, convert, *args))


class AsyncFetcher:
    """What an :class:`AsyncPager` and the async resources need from their client: jobs on its
    engine, awaited.  The asyncio counterpart of ``vehicledata._fetcher.Fetcher``."""

    def __init__(self, core: Callable[[], Any], *, base_url: str, max_parallel: int) -> None:
        self._core = core
        self.base_url = base_url
        self.max_parallel = max_parallel
        self.progress: Optional[bool] = None  # the client's default for progress bars (None: only in Jupyter)
        self._pending: "weakref.WeakSet[asyncio.Future[Any]]" = weakref.WeakSet()

    def fail_pending(self, error: BaseException) -> None:
        """End every request still awaited with ``error`` (the client was closed under it)."""
        for future in list(self._pending):
            if not future.done():
                future.get_loop().call_soon_threadsafe(_settle, future, None, error)

    @property
    def authenticated(self) -> bool:
        return bool(self._core().has_credentials)

    def _job(self, start: Callable[[Any, Any, Callable[..., None]], int]) -> "asyncio.Future[Any]":
        """A job on the engine, awaited: ``start(engine, loop, settle)`` queues it and returns its id;
        cancelling the future drops the job (its transfers leave the multi handle at once)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        engine = self._core()
        job = start(engine, loop, functools.partial(_settle, future))

        def cancelled(f: "asyncio.Future[Any]") -> None:
            if f.cancelled() and not engine.closed:
                engine.cancel(job)

        future.add_done_callback(cancelled)
        self._pending.add(future)
        return future

    def _submit(self, targets: Sequence[str], record: str, shape: str, verbose: bool = False, first: Any = None,
                first_number: int = 1, numbers: Optional[Sequence[int]] = None, collect: bool = False,
                single: bool = False, fields: Optional[Sequence[str]] = None) -> "asyncio.Future[Any]":
        return self._job(lambda engine, loop, settle: engine.submit(
            loop, settle, list(targets), record, shape, verbose, first, first_number,
            None if numbers is None else list(numbers), collect, single, None if fields is None else list(fields)))

    async def get(self, target: str) -> Dict[str, Any]:
        """A raw GET of ``target`` (auth, retries, the rate limit; not decoded): the core's
        {status, url, content_type, http_version, body}, as ``Client.get``'s."""
        return dict(await self._job(lambda engine, loop, settle: engine.get(loop, settle, target)))

    async def download(self, target: str, dest: str, resume: bool,
                       on_progress: Optional[Callable[[int, int], None]], timeout: float = 0.0,
                       max_bytes: int = 0) -> Dict[str, Any]:
        """Stream ``target`` into the file ``dest`` on the engine (the sync Fetcher.download's rules:
        resume, total ``timeout``, ``max_bytes``); ``on_progress(done, total)`` runs on the loop."""
        result: Dict[str, Any] = dict(await self._job(lambda engine, loop, settle: engine.download(
            loop, settle, target, dest, resume, on_progress, timeout, max_bytes)))
        return finish_download(result, on_progress)

    def progress_bar(self, progress: Optional[bool], total: Optional[int], desc: str, unit: str,
                     probe: bool = False) -> Any:
        """A tqdm bar when asked (None: the client's ``progress``, by default only in Jupyter), else None."""
        return progress_bar(progress if progress is not None else self.progress, total, desc, unit, probe)

    async def get_page(self, target: str, record: str, shape: str, verbose: bool = False,
                       fields: Optional[Sequence[str]] = None) -> Any:
        """One core page of ``target`` (the sync Fetcher's get_page, awaited; ``fields``: its decode projection)."""
        return await self._submit([target], record, shape, verbose, single=True, fields=fields)

    async def get_pages(self, targets: Sequence[str], record: str, shape: str, verbose: bool = False,
                        first: Any = None, first_number: int = 1, numbers: Optional[Sequence[int]] = None,
                        fields: Optional[Sequence[str]] = None) -> List[Any]:
        """Several core pages fetched concurrently, in the order asked (checked against ``first``)."""
        if not targets:
            return []
        return list(await self._submit(targets, record, shape, verbose, first, first_number, numbers, fields=fields))

    async def collect_pages(self, first: Any, targets: Sequence[str], record: str, shape: str, verbose: bool = False,
                            first_number: int = 1, numbers: Optional[Sequence[int]] = None,
                            fields: Optional[Sequence[str]] = None) -> Any:
        """``first`` with the pages of ``targets`` appended in order in C++ (the merged core page)."""
        return await self._submit(targets, record, shape, verbose, first, first_number, numbers, collect=True,
                                  fields=fields)

    async def fetch_pages_settled(self, targets: Sequence[str], record: str, shape: str, parallel: int,
                                  on_done: Callable[[int, Any, Optional[int], Optional[str]], None]) -> None:
        """The core client's ``fetch_pages_settled`` on the engine, awaited: ``targets`` fetched at most
        ``parallel`` at once (inside the engine's ``max_parallel``, the rate limit, the retries per
        target); ``on_done(index, page, None, None)`` runs on the loop as each page arrives, or
        ``on_done(index, None, status, message)`` for one the server refuses for itself (the batch
        goes on); what else fails ends the batch and is raised."""
        if targets:
            await self._job(lambda engine, loop, settle: engine.fetch_pages_settled(
                loop, settle, list(targets), record, shape, False, parallel, on_done))

    async def one(self, target: str, record: str, verbose: bool = False) -> Record:
        """The single record an object-shaped endpoint answers."""
        return records_of(await self.get_page(check_target(target), record, "object", verbose))[0]

    def url_for(self, target: str) -> str:
        return str(self._core().url_for(target))


class AsyncPager:
    """The asyncio face of :class:`vehicledata.Pager`: the same query, fetched by awaiting.

    ``async for record in pager``, ``async for page in pager.pages``, ``await pager.total``,
    ``await pager.page_count``, ``await pager.to_list()``, ``await pager.first(n)``,
    ``await pager.to_pandas()`` / ``to_arrow()`` / ``to_polars()`` / ``to_parquet(path)``,
    ``async for df in pager.iter_pandas()``.  Pages after the first are fetched concurrently on the
    client's engine and checked against the first page in C++ as they arrive (PaginationError).
    ``progress`` (the search's, else the client's; None: only in Jupyter) shows a bar of the pages,
    as ``Pager``'s.
    """

    def __init__(self, fetcher: AsyncFetcher, query: Pager, names: Any = None) -> None:
        self._fetcher = fetcher
        self._query = query  # targets, checks and page-size rules of the sync pager (it does no I/O here)
        # (check, lists) of vehicledata._names: the search's year/make/model, checked (awaited)
        # before its first request; None once passed or when there is nothing to check.
        self._names: Any = names
        self._first: Optional[Page] = None
        self.pages_fetched = 0

    @property
    def path(self) -> str:
        return self._query.path

    @property
    def record(self) -> str:
        return self._query.record

    @property
    def params(self) -> List[Tuple[str, Any]]:
        return self._query.params

    @property
    def start_page(self) -> int:
        return self._query.start_page

    @property
    def fields(self) -> Optional[List[str]]:
        """The search's decode projection (``Pager.fields``: None decodes every field of the record)."""
        return self._query.fields

    @fields.setter
    def fields(self, fields: Optional[Sequence[str]]) -> None:
        self._query.fields = list(fields) if fields is not None else None

    def _page(self, core: Any, number: int) -> Page:
        page = Page(core, number)
        page._query = (self.path, self.params)
        return page

    # ---- first page ----------------------------------------------------------------
    async def _check_names(self) -> None:
        if self._names is not None:
            check, lists = self._names
            await _names.check_async(check, lists, self._fetcher.get_page)
            self._names = None

    async def _first_page(self) -> Page:
        if self._first is None:
            await self._check_names()
            q = self._query
            try:
                core = await self._fetcher.get_page(q._target(q.start_page), q.record, "envelope", q.verbose, q.fields)
            except NotFoundError as e:
                if q.start_page == 1 or e.exception != _envelope.NOT_FOUND:
                    raise
                core = await self._past_the_end()
            page = self._page(core, q.start_page)
            q._check(page, None)
            if self._first is None:  # (two tasks may have asked at once: the first answer wins)
                self._first = page
                self.pages_fetched += 1
                warn_demo_empty(self._fetcher.authenticated, self.path, self.params, page.total)
        return self._first

    async def _past_the_end(self) -> Any:
        """As Pager._past_the_end: the empty page a start_page past the last stands for."""
        import json

        q = self._query
        first = await self._fetcher.get_page(q._target(1), q.record, "envelope", q.verbose)
        c = dict(first.collection)
        target = q._target(q.start_page)
        c.update(url=target, count=0, next="", prev=c.get("last") or c.get("first", ""))
        return _core_decode(json.dumps({"collection": c, "data": []}).encode(), q.record, target, q.verbose)

    async def _total(self) -> int:
        return (await self._first_page()).total

    async def _page_count(self) -> int:
        return (await self._first_page()).pages

    @property
    def total(self) -> "asyncio.Future[int]":
        """``await pager.total``: the number of matching records (fetches the first page once)."""
        return asyncio.ensure_future(self._total())

    @property
    def page_count(self) -> "asyncio.Future[int]":
        """``await pager.page_count``: the number of pages of the result."""
        return asyncio.ensure_future(self._page_count())

    # ---- iteration -------------------------------------------------------------------------
    async def _core_pages(self, max_pages: Optional[int] = None, ramp: bool = True) -> AsyncIterator[Page]:
        """The pages in order, as Pager._core_pages: batches of 1, 2, 4 ... up to 2 * max_parallel
        pages fetched concurrently (``ramp=False``: full batches)."""
        q = self._query
        first = await self._first_page()
        yield first
        if first.number >= first.pages:
            return
        last = first.pages if max_pages is None else min(first.pages, first.number + max_pages - 1)
        if last <= first.number:
            return
        if not q.parallel:
            async for page in self._follow_next(first):
                yield page
                if page.number >= last:
                    return
            return
        numbers = list(range(first.number + 1, last + 1))
        bar = q._pages_bar(len(numbers))
        try:
            for batch in batches(numbers, self._fetcher.max_parallel, ramp):
                cores = await self._fetcher.get_pages([q._target(n) for n in batch], q.record, "envelope", q.verbose,
                                                      first._core, first.number, batch, q.fields)
                self.pages_fetched += len(batch)
                for n, core in zip(batch, cores):
                    if bar is not None:
                        bar.update(1)
                    yield self._page(core, n)
        finally:
            if bar is not None:
                bar.close()

    async def _follow_next(self, first: Page) -> AsyncIterator[Page]:
        seen = {first.url}
        page = first
        while page.next:
            url = self._fetcher.url_for(page.next)
            if url in seen or page.next in seen:
                raise PaginationError(f"next link repeats an already fetched page: {page.next}", url=page.url)
            seen.add(url)
            seen.add(page.next)
            number = page_number(page.next) or page.number + 1
            core = await self._fetcher.get_page(page.next, self.record, "envelope", self._query.verbose,
                                                self._query.fields)
            self.pages_fetched += 1
            page = self._page(core, number)
            self._query._check(page, first)
            yield page

    @property
    def pages(self) -> AsyncIterator[Page]:
        """``async for page in pager.pages``: the pages, lazily (the rest concurrently after the first)."""
        return self._core_pages()

    async def __aiter__(self) -> AsyncIterator[Record]:
        async for page in self._core_pages():
            for record in page.records:
                yield record

    async def to_list(self) -> List[Record]:
        return [r async for r in self]

    async def first(self, n: int) -> List[Record]:
        """At most n records, fetching only the pages needed."""
        out: List[Record] = []
        if n <= 0:
            return out
        first = await self._first_page()
        per_page = max(1, first.count)
        needed = 1 + max(0, -(-(n - first.count) // per_page))
        async for page in self._core_pages(max_pages=needed, ramp=False):
            for r in page.records:
                out.append(r)
                if len(out) >= n:
                    return out
        return out

    # ---- whole results ---------------------------------------------------------------------
    def _bulk(self, page_size: Optional[int]) -> "AsyncPager":
        bulk = self._query._bulk(page_size)
        return self if bulk is self._query else AsyncPager(self._fetcher, bulk, self._names)

    async def _collected(self) -> Any:
        """Every page as one core page: the rest fetched concurrently and appended in order in C++
        (on the engine thread), each checked against the first as it arrives."""
        q = self._query
        first = await self._first_page()
        if first.number >= first.pages:
            return first._core
        if not q.parallel or q._wants_progress():  # (a bar: page by page, as Pager._collected)
            cores = [p._core.copy() if p is first else p._core async for p in self._core_pages(ramp=False)]
            return await _off_loop(frames.concat_or_empty, cores, q.record, q.verbose)
        numbers = list(range(first.number + 1, first.pages + 1))
        merged = await self._fetcher.collect_pages(first._core, [q._target(n) for n in numbers], q.record,
                                                   "envelope", q.verbose, first.number, numbers, q.fields)
        self.pages_fetched += len(numbers)
        return merged

    async def _bulk_collected(self, page_size: Optional[int]) -> Any:
        bulk = self._bulk(page_size)
        try:
            return await bulk._collected()
        finally:
            if bulk is not self:
                self.pages_fetched += bulk.pages_fetched

    async def to_pandas(self, page_size: Optional[int] = None) -> "pd.DataFrame":
        """Every page in one DataFrame (pages of ``page_size``, default 1000, as Pager.to_pandas)."""
        return await _off_loop(frames.page_to_pandas, await self._bulk_collected(page_size))

    async def to_arrow(self, page_size: Optional[int] = None) -> "pa.Table":
        """Every page in one Arrow table."""
        return await _off_loop(frames.page_to_arrow, await self._bulk_collected(page_size))

    async def to_polars(self, page_size: Optional[int] = None) -> "pl.DataFrame":
        """Every page in one polars DataFrame."""
        return await _off_loop(frames.page_to_polars, await self._bulk_collected(page_size))

    async def iter_pandas(self, page_size: Optional[int] = None) -> AsyncIterator["pd.DataFrame"]:
        """One DataFrame per page (bounded memory)."""
        bulk = self._bulk(page_size)
        try:
            async for page in bulk._core_pages():
                yield page.to_pandas()
        finally:
            if bulk is not self:
                self.pages_fetched += bulk.pages_fetched

    async def iter_arrow(self, page_size: Optional[int] = None) -> AsyncIterator["pa.Table"]:
        """One Arrow table per page."""
        bulk = self._bulk(page_size)
        try:
            async for page in bulk._core_pages():
                yield page.to_arrow()
        finally:
            if bulk is not self:
                self.pages_fetched += bulk.pages_fetched

    async def to_parquet(self, path: Any, partition_cols: Optional[Sequence[str]] = None,
                         page_size: Optional[int] = None, *, mode: str = "refresh",
                         rows_per_file: int = checkpoint.ROWS_PER_FILE,
                         checkpoint_pages: int = checkpoint.CHECKPOINT_PAGES) -> Any:
        """As ``Pager.to_parquet`` (the same checkpoint, resumable with either client): the pages
        are fetched on the engine as above; the Parquet files are written by one worker thread
        (disk writes stay off the event loop), which takes each page from the loop as it needs it."""
        from . import sync as _sync

        bulk = self._bulk(page_size)
        await bulk._check_names()
        loop = asyncio.get_running_loop()
        stop = threading.Event()

        def pages_from(number: int, since: Optional[datetime] = None) -> Iterator[Page]:
            params = bulk.params if since is None else _sync.changed_params(bulk.path, bulk.params, since)
            resumed = AsyncPager(self._fetcher, Pager(self._fetcher, bulk.path, bulk.record, params,  # type: ignore[arg-type]
                                                      start_page=number, parallel=bulk._query.parallel,
                                                      progress=bulk._query.progress, fields=bulk.fields))
            pages = resumed._core_pages()

            async def following() -> Optional[Page]:
                try:
                    return await pages.__anext__()
                except StopAsyncIteration:
                    return None

            try:
                while not stop.is_set():
                    page = asyncio.run_coroutine_threadsafe(following(), loop).result()
                    if page is None:
                        return
                    yield page
            finally:
                self.pages_fetched += resumed.pages_fetched

        try:
            return await asyncio.to_thread(
                checkpoint.write_dataset, path, query=_query_digest(bulk.path, bulk.params),
                target=build_target(bulk.path, bulk.params), first_page=bulk.start_page, pages_from=pages_from,
                partition_cols=partition_cols, mode=mode, rows_per_file=rows_per_file,
                checkpoint_pages=checkpoint_pages, refreshable=_sync.refreshable(bulk.path))
        finally:
            stop.set()

    def __repr__(self) -> str:
        fetched = f"{self.pages_fetched} page{'' if self.pages_fetched == 1 else 's'} fetched"
        state = f"total={self._first.total}, {fetched}" if self._first is not None else "not fetched"
        start = f" start_page={self.start_page}" if self.start_page != 1 else ""
        return f"<AsyncPager {build_target(self.path, self.params)}{start} {state}>"


class AsyncSearchResource:
    """A search endpoint of an :class:`AsyncClient`: ``search()`` gives an :class:`AsyncPager`,
    ``await get(id)`` one record.  Filters, conditions and their checks are
    :class:`vehicledata.client.SearchResource`'s."""

    def __init__(self, client: "AsyncClient", resource: SearchResource) -> None:
        self._client = client
        self._resource = resource
        self.__doc__ = resource.__doc__

    @property
    def filters(self) -> List[str]:
        return self._resource.filters

    @property
    def json_fields(self) -> List[str]:
        return self._resource.json_fields

    @property
    def sort_keys(self) -> List[str]:
        return self._resource.sort_keys

    @property
    def fields(self) -> List[str]:
        return self._resource.fields

    def search(self, *conditions: Conditions, where: Conditions = None, sort: Optional[str] = None,
               direction: Optional[str] = None, limit: Optional[int] = None, start_page: int = 1,
               verbose: Optional[bool] = None, legacy: bool = False, parallel: bool = True,
               start_token: Optional[str] = None, progress: Optional[bool] = None, **filters: Any) -> AsyncPager:
        """A lazy :class:`AsyncPager` over the matching records (arguments as ``vd.Client``'s search)."""
        path, record, params, start_page = self._resource._query(conditions, where, sort, direction, limit,
                                                                 start_page, verbose, legacy, start_token, filters)
        fetcher = self._client._fetcher
        query = Pager(fetcher, path, record, params, start_page=start_page, parallel=parallel,  # type: ignore[arg-type]
                      progress=progress)
        inner = self._client._client
        check = _names.plan(schema.endpoint(path), params, inner.authenticated) if inner._core_client else None
        return AsyncPager(fetcher, query, None if check is None else (check, inner._lists))

    __call__ = search

    async def sync(self, *conditions: Conditions, since: Any = None, page_size: Optional[int] = None,
                   **filters: Any) -> Tuple["pd.DataFrame", Any]:
        """Incremental sync, awaited: ``(frame, watermark)`` as ``vd.Client``'s ``api.<search>.sync``
        (the same rules, ``vehicledata.sync``): ``df, mark = await api.trims.sync(since=mark)``."""
        from . import sync as _sync

        conds, since = _sync.arguments(self._resource, conditions, since)
        run = _sync.Run(conds, since)
        return run.result(await self.search(*run.conditions, **filters).to_pandas(page_size=page_size))

    async def get(self, key: Union[int, str], *, verbose: Optional[bool] = None, legacy: bool = False) -> Record:
        """One record by id (trims: the trim with bodies, engines, mileages and colours)."""
        target, record = self._resource._detail(key, verbose, legacy)
        try:
            return await self._client._fetcher.one(target, record, bool(verbose))
        except NotFoundError as exc:
            self._resource._not_found_hint(exc)
            raise

    def __repr__(self) -> str:
        return f"<Async{type(self._resource).__name__} {self._resource._name}>"


class AsyncVehiclePager:
    """The asyncio face of ``vehicledata.vehicles.VehiclePager``: the four crawls (trims, bodies,
    engines, mileages) run concurrently on the client's engine, then the same join
    (``vehicles.join_pages``: the trims' order, the conditions applied after the join)."""

    def __init__(self, pagers: Dict[str, AsyncPager], after: Sequence[Tuple[str, Dict[str, Any]]]) -> None:
        self._pagers = pagers
        self._after = list(after)

    @property
    def trims(self) -> AsyncPager:
        """The trims search of the join (its ``total`` is an upper bound when a condition is applied after it)."""
        return self._pagers["trims"]

    async def _joined(self, page_size: Optional[int]) -> Any:
        from . import vehicles

        resources = ["trims"] + [res for _, res in vehicles.PARTS]
        cores = await asyncio.gather(*(self._pagers[res]._bulk_collected(page_size) for res in resources))
        parts = {rec: core for (rec, _), core in zip(vehicles.PARTS, cores[1:])}
        # The join off the loop (Arrow compute and the core's gather release the GIL; the first one
        # also imports pyarrow.compute): one worker thread, as to_parquet's writes.
        return await asyncio.to_thread(vehicles.join_pages, cores[0], parts, self._after)

    async def to_arrow(self, page_size: Optional[int] = None) -> "pa.Table":
        """Every vehicle in one Arrow table (the four crawls in pages of ``page_size``, default 1000)."""
        return await _off_loop(frames.page_to_arrow, await self._joined(page_size))

    async def to_pandas(self, page_size: Optional[int] = None) -> "pd.DataFrame":
        """Every vehicle in one DataFrame (as ``VehiclePager.to_pandas``)."""
        return await _off_loop(frames.page_to_pandas, await self._joined(page_size))

    async def to_polars(self, page_size: Optional[int] = None) -> "pl.DataFrame":
        """Every vehicle in one polars DataFrame."""
        return await _off_loop(frames.page_to_polars, await self._joined(page_size))

    async def iter_arrow(self, page_size: Optional[int] = None) -> AsyncIterator["pa.Table"]:
        """One joined table per trims page (as ``VehiclePager.iter_arrow``): the parts are fetched whole
        first (concurrently), then the trims page by page; each join runs on a worker thread."""
        from . import vehicles

        tables = await asyncio.gather(*(self._pagers[res].to_arrow(page_size) for _, res in vehicles.PARTS))
        parts = {rec: t for (rec, _), t in zip(vehicles.PARTS, tables)}
        async for table in self._pagers["trims"].iter_arrow(page_size):
            yield await asyncio.to_thread(vehicles.join, table, parts, self._after)

    async def iter_pandas(self, page_size: Optional[int] = None) -> AsyncIterator["pd.DataFrame"]:
        """One DataFrame per trims page (see iter_arrow)."""
        async for table in self.iter_arrow(page_size):
            yield frames.arrow_to_pandas(table)

    async def to_parquet(self, path: Any, partition_cols: Optional[Sequence[str]] = None,
                         page_size: Optional[int] = None, *, mode: str = "refresh") -> Any:
        """As ``VehiclePager.to_parquet`` (the same dataset and checkpoint, resumable with either
        client): the join awaited on the loop, the files written by one worker thread."""
        from .vehicles import Whole, dataset_key

        digest, target = dataset_key(self._pagers, self._after, page_size)
        loop = asyncio.get_running_loop()

        def pages_from(number: int) -> Iterator[Any]:
            if number == 1:  # (resume after a finished run: nothing fetched)
                yield Whole(asyncio.run_coroutine_threadsafe(self._joined(page_size), loop).result())

        return await asyncio.to_thread(checkpoint.write_dataset, path, query=digest, target=target, first_page=1,
                                       pages_from=pages_from, partition_cols=partition_cols, mode=mode)

    def __repr__(self) -> str:
        return f"<AsyncVehiclePager {self._pagers['trims'].path} + bodies, engines, mileages: {len(self._after)} " \
               f"condition(s) after the join>"


class AsyncVehiclesResource:
    """``api.vehicles`` of an :class:`AsyncClient`: trims joined with their body, engine and mileage
    (``vehicledata.vehicles``: the same searches, conditions and join as ``vd.Client``'s)."""

    def __init__(self, client: "AsyncClient") -> None:
        from .vehicles import VehiclesResource

        self._client = client
        self._sync = VehiclesResource(client._client)  # filters, fields, condition_fields (no I/O)

    @property
    def filters(self) -> List[str]:
        return self._sync.filters

    @property
    def fields(self) -> List[str]:
        return self._sync.fields

    @property
    def condition_fields(self) -> Dict[str, str]:
        return self._sync.condition_fields

    def search(self, *conditions: Any, where: Any = None, sort: Optional[str] = None,
               direction: Optional[str] = None, limit: Optional[int] = None, progress: Optional[bool] = None,
               **filters: Any) -> AsyncVehiclePager:
        """The vehicles of a search (arguments as ``vd.Client``'s ``api.vehicles.search``)."""
        from .vehicles import searches

        return AsyncVehiclePager(*searches(self._client.__getattr__, conditions, where, sort, direction, limit,
                                           filters, progress=progress))

    __call__ = search

    async def get(self, trim_id: int) -> Record:
        """One vehicle by trim id: the columns of a row of ``search()`` (NotFoundError if no trim has it)."""
        from .vehicles import id_condition, vehicle_of

        return vehicle_of(await self.search(id_condition(trim_id)).to_arrow(), trim_id)

    def __repr__(self) -> str:
        return "<AsyncVehiclesResource vehicles: trims + bodies + engines + mileages>"


class AsyncDataFeed:
    """``api.data_feed`` of an :class:`AsyncClient`: ``await last_updated()``, ``await download(path)``,
    ``await load(path)``, ``await to_parquet(directory)``.  The download runs on the client's engine
    with ``vd.Client``'s steps (``feed.FeedDownload``: the checks, the ``.part`` resume, the total
    ``timeout``, ``max_bytes``, the ZIP check, the atomic rename); the ZIP check and the reading of
    the archive run on a worker thread, off the loop."""

    def __init__(self, fetcher: AsyncFetcher) -> None:
        from .feed import DataFeed

        self._fetcher = fetcher
        self._sync = DataFeed(fetcher)  # type: ignore[arg-type]  # its reading of a local archive (no I/O of the client)

    def __repr__(self) -> str:
        return repr(self._sync).replace("<DataFeed", "<AsyncDataFeed", 1)

    async def last_updated(self) -> str:
        """When the feed was last rebuilt (as ``DataFeed.last_updated``)."""
        from . import schema
        from .feed import LAST_UPDATED_PATH

        ep = schema.endpoint(LAST_UPDATED_PATH)
        return str((await self._fetcher.one(LAST_UPDATED_PATH, ep.record))["last_updated"])

    async def download(self, path: Union[str, "os.PathLike[str]"], *, resume: bool = True,
                       progress: Optional[bool] = None, timeout: float = DOWNLOAD_TIMEOUT,
                       max_bytes: int = MAX_DOWNLOAD_BYTES) -> "Path":
        """Stream the feed to ``path``, awaited (the arguments, errors and rules of ``DataFeed.download``:
        resumable, verified, renamed atomically).  Cancelling the task stops the transfer at once and
        keeps the ``.part`` file for a resume."""
        from .feed import DOWNLOAD_PATH, FeedDownload

        dl = FeedDownload(self._fetcher, path, resume, progress, timeout, max_bytes)
        while True:
            on_progress = dl.begin()
            try:
                result = await self._fetcher.download(DOWNLOAD_PATH, str(dl.part), dl.resume, on_progress, dl.timeout,
                                                      dl.max_bytes)
            except BaseException as exc:
                dl.failed(exc)
                raise
            target = await asyncio.to_thread(dl.finish, result)  # reads the whole file (the ZIP check)
            if target is not None:
                return target

    async def load(self, path: Union[str, "os.PathLike[str]", None] = None, **options: Any) -> Dict[str, "pd.DataFrame"]:
        """The feed's tables as DataFrames (``DataFeed.load``'s options), read on a worker thread;
        downloads first (awaited) when no ``path``."""
        return await self._local(self._sync.load, path, options)

    async def to_parquet(self, directory: Union[str, "os.PathLike[str]"],
                         path: Union[str, "os.PathLike[str]", None] = None, **options: Any) -> Dict[str, "Path"]:
        """Each feed table to ``directory/<table>.parquet`` (``DataFeed.to_parquet``), on a worker thread."""
        return await self._local(functools.partial(self._sync.to_parquet, directory), path, options)

    async def _local(self, read: Callable[..., Any], path: Any, options: Dict[str, Any]) -> Any:
        if path is not None:
            return await asyncio.to_thread(read, path, **options)
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            archive = await self.download(Path(tmp) / "feed.zip", progress=options.get("progress"))
            return await asyncio.to_thread(read, archive, **options)


class AsyncVinAccessor:
    """``api.vin`` of an :class:`AsyncClient`: ``await api.vin(v)`` decodes one VIN,
    ``await api.vin.decode_many(vins)`` a batch (as ``vd.Client``'s ``api.vin``)."""

    __slots__ = ("_client",)

    def __init__(self, client: "AsyncClient") -> None:
        self._client = client

    async def __call__(self, vin: str, *, verbose: Optional[bool] = None,
                       all_trims: Optional[bool] = None) -> "VinResult":
        """Decode a VIN (as ``vd.Client``'s ``api.vin(vin)``)."""
        from .vin import VinResult

        target, record = self._client._client._vin_request(vin, verbose, all_trims)
        return VinResult.of(await self._client._fetcher.one(target, record))

    async def decode_many(self, vins: Any, *, concurrency: Optional[int] = None,
                          checkpoint: Union[None, str, "os.PathLike[str]"] = None,
                          progress: Optional[bool] = None) -> "pa.Table":
        """``vd.Client``'s ``api.vin.decode_many``, awaited: the same arguments, table, checkpoint,
        progress bar and errors (its steps, ``vin_online.VinBatch``).  The requests run on the
        client's engine, ``concurrency`` at once (default and at most the client's ``max_parallel``,
        which the engine holds across all of the client's requests), inside its rate limit and
        retries; each answer is taken on the loop as it arrives (its row, the checkpoint line, the
        bar).  Reading the input and the checkpoint and building the table run on a worker thread
        (``_off_loop``).  Cancelling the task stops the requests at once; the checkpoint keeps the
        answers taken before, for a resume."""
        from .vin_online import VinBatch

        fetcher = self._client._fetcher
        batch = await _off_loop(VinBatch, fetcher, vins, concurrency, checkpoint, progress)
        if batch.targets:
            try:
                await fetcher.fetch_pages_settled(batch.targets, batch.record, "object", batch.concurrency,
                                                  batch.on_done)
            finally:
                batch.finish()
        return await _off_loop(batch.table)

    def __repr__(self) -> str:
        return "<AsyncVinAccessor: await api.vin(vin), await api.vin.decode_many(vins)>"


class _EngineClient(Client):
    """The options, checks and request builders of ``vd.Client`` over an Engine (no I/O of its own)."""

    def _new_core(self, options: Any) -> Any:
        return _core.client.Engine(options, _log)

    def _new_fetcher(self, base_url: str, progress: Optional[bool]) -> Any:
        fetcher = AsyncFetcher(lambda: self._core, base_url=base_url, max_parallel=self.max_parallel)
        fetcher.progress = progress
        return fetcher


def _close_engine(engine: Any) -> None:
    if not engine.closed:
        engine.close()


class AsyncClient:
    """A client of the Vehicle Data Service for asyncio: the options of :class:`vehicledata.Client`
    (``vd.AsyncClient(api_token, api_secret, base_url, timeout=..., rate_limit=..., max_parallel=...)``).

    Every request is awaited: ``await api.trims.get(id)``, ``await api.vin(v)``,
    ``async for r in api.trims.search(...)``, ``await api.trims.search(...).to_pandas()``.
    Concurrent requests of one client (tasks, ``asyncio.gather``) share its connections, its token
    bucket (``rate_limit``) and its JWT; at most ``max_parallel`` transfers run at once.  Use it as
    ``async with vd.AsyncClient() as api`` or call ``await api.aclose()``; a client works on any
    running loop (``asyncio.run``, Jupyter's, uvloop).  See docs/async.md.
    """

    def __init__(self, api_token: Optional[str] = None, api_secret: Optional[str] = None,
                 base_url: Optional[str] = None, **options: Any) -> None:
        self._client = _EngineClient(api_token, api_secret, base_url, **options)
        self._fetcher: AsyncFetcher = self._client._fetcher
        self._accessors: Dict[str, AsyncSearchResource] = {}
        # Pagers and resources keep the inner client alive: its engine stops when the last goes (or at exit).
        weakref.finalize(self._client, _close_engine, self._client._core)

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self._client.base_url

    @property
    def authenticated(self) -> bool:
        return self._client.authenticated

    def close(self) -> None:
        """Stop the engine; requests still awaited raise VehicleDataError("the client is closed"). Idempotent."""
        core = self._client._core_client
        if core is not None:
            core.close()
            self._fetcher.fail_pending(VehicleDataError("the client is closed"))
        self._client._core_client = None

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._client).replace("<vehicledata.Client", "<vehicledata.AsyncClient", 1)

    def stats(self) -> Dict[str, Any]:
        """Requests sent, retries, logins, bytes received, seconds waited for the rate limit, and
        ``cache_hits``: the answers served from the response cache (``cache=``) without a request."""
        return dict(self._client._core.stats())

    @property
    def cache_dir(self) -> Optional[Path]:
        """The response cache's directory (``cache=``), None when it is off."""
        return self._client.cache_dir

    def clear_cache(self) -> int:
        """Delete the response cache's answers (as ``vd.Client.clear_cache``); the number of files deleted."""
        return self._client.clear_cache()

    # ---- accessors ----------------------------------------------------------------------
    def __getattr__(self, name: str) -> AsyncSearchResource:
        """``api.trims``, ``api.engines``...: every search of the schema table (as on ``vd.Client``)."""
        if name.startswith("_") or name not in _SEARCHES:
            hint = " (vd.Client has it; not offered by AsyncClient yet: docs/async.md)" \
                if not name.startswith("_") and hasattr(Client, name) else ""
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}{hint}")
        res = self._accessors.get(name)
        if res is None:
            res = self._accessors[name] = AsyncSearchResource(self, self._client._search(name))
        return res

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(_SEARCHES))

    @property
    def vehicles(self) -> AsyncVehiclesResource:
        """Trims joined with their body, engine and mileage: ``await api.vehicles.search(...).to_pandas()``."""
        return AsyncVehiclesResource(self)

    @property
    def data_feed(self) -> AsyncDataFeed:
        """The data feed: ``await api.data_feed.download(path)`` (as ``vd.Client.data_feed``)."""
        return AsyncDataFeed(self._fetcher)

    async def get_json(self, path: str, **params: Any) -> Any:
        """Raw GET of any path (auth, retries and rate limit applied), awaited: the parsed JSON body
        (as ``vd.Client.get_json``; ``params`` are merged with a query string already in ``path``)."""
        from .client import json_of, json_target

        return json_of(await self._fetcher.get(json_target(path, params)))

    @property
    def vin(self) -> AsyncVinAccessor:
        """``await api.vin(vin)`` decodes a VIN (``VinResult``); ``await api.vin.decode_many(vins,
        concurrency=, checkpoint=, progress=)`` a batch into the offline decoder's table (as
        ``vd.Client.vin``; docs/vin.md)."""
        return AsyncVinAccessor(self)

    async def license_plate(self, country_code: str, lookup: str, region: Optional[str] = None) -> Record:
        """Look up a licence plate (as ``vd.Client.license_plate``)."""
        target, record = self._client._plate_request(country_code, lookup, region)
        return await self._fetcher.one(target, record)

    async def years(self, *conditions: Conditions, where: Conditions = None, legacy: bool = False,
                    **filters: Any) -> List[int]:
        """Model years, newest first (as ``vd.Client.years``)."""
        resource: YearsResource = self._client.years
        target, record = resource._request(conditions, where, legacy, filters)
        return YearsResource.values(await self._fetcher.get_page(target, record, "array"))

    async def powersports_years(self, *conditions: Conditions, where: Conditions = None,
                                **filters: Any) -> List[int]:
        """Street motorcycles' model years; pass ``type="street_motorcycle"``."""
        resource: YearsResource = self._client.powersports_years
        target, record = resource._request(conditions, where, False, filters)
        return YearsResource.values(await self._fetcher.get_page(target, record, "array"))

    async def vehicle_attributes(self, attribute: str) -> List[str]:
        """The valid values of an attribute (as ``vd.Client.vehicle_attributes``)."""
        resource: VehicleAttributes = self._client.vehicle_attributes
        target, record = resource._request(attribute)
        return VehicleAttributes.values(await self._fetcher.get_page(target, record, "array"))

    async def account_requests(self) -> List[Record]:
        """Requests per day since last month (as ``vd.Client.account.requests()``)."""
        from . import schema

        ep = schema.endpoint_for("account_requests")
        return records_of(await self._fetcher.get_page(ep.path, ep.record, "array"))

    async def account_requests_today(self) -> int:
        """Requests counted today (as ``vd.Client.account.requests_today()``)."""
        from . import schema

        ep = schema.endpoint_for("account_today")
        return int((await self._fetcher.one(ep.path, ep.record))["count"])


__all__ = ["AsyncClient", "AsyncPager", "AsyncSearchResource", "AsyncFetcher", "AsyncVehiclesResource",
           "AsyncVehiclePager", "AsyncDataFeed", "AsyncVinAccessor"]
