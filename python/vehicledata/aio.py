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
from typing import (TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Coroutine, Dict, Generator, Generic,
                    Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union, cast)

from . import _core, _names, checkpoint, frames, schema
from ._fetcher import finish_download, on_the_wire, progress_bar
from ._targets import check_target, warn_demo_empty
from .client import (SEARCH_NAMES, Client, Conditions, SearchRequests, VehicleAttributes, YearsResource, core_log,
                     search_resource)
from .errors import NotFoundError, VehicleDataError
from .feed import DOWNLOAD_TIMEOUT, MAX_DOWNLOAD_BYTES, MAX_MEMBER_BYTES, MAX_TOTAL_BYTES
from .options import DEFAULT, ClientOptions, options_of
from .pager import Page, PageWalk, Record, records_of
from .schema import BoundEndpoint, Kind

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from ._resources import VehicleRecord
    from .vin import VinResult


T = TypeVar("T")


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

    def build() -> Tuple[Any, List[str]]:
        with frames.deferred_notes() as notes:  # said below, at the caller's line (not the worker's)
            return convert(*args), notes

    value, notes = await _in_thread(_FRAMES[0], build)
    if notes:  # (a warning's few microseconds: the frame work itself stayed off the loop)
        frames.say_notes(notes)
    return value


async def _in_thread(executor: Any, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` on a thread of ``executor`` (None: the loop's default one, as
    ``asyncio.to_thread``), awaited.  Once the interpreter is exiting, ``concurrent.futures`` takes
    no more work ("cannot schedule new futures after interpreter shutdown"): a crawl still running
    then (in a thread the program has not joined yet) goes on in a thread of its own; when not even
    a thread can start (only daemon threads are left, frozen next), the call waits for ever
    (:func:`_parked`) rather than print a traceback at exit."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    try:
        started = loop.run_in_executor(executor, call)
    except RuntimeError as exc:
        if "cannot schedule new futures" not in str(exc):
            raise
        return await _own_thread(loop, call)
    return await started


async def _own_thread(loop: asyncio.AbstractEventLoop, call: Callable[[], Any]) -> Any:
    future: asyncio.Future[Any] = loop.create_future()

    def run() -> None:
        try:
            value, error = call(), None
        except BaseException as exc:  # handed to the awaiting task
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(_settle, future, value, error)
        except RuntimeError:  # the loop closed meanwhile: nobody waits any more
            pass

    try:
        threading.Thread(target=run, name="vehicledata-exit", daemon=True).start()
    except RuntimeError:  # finalizing: no new thread
        return await _parked(loop)
    return await future


def _exiting() -> bool:
    """True once the interpreter is exiting: the main thread has ended (only the threads not
    joined yet, and daemon threads, still run Python)."""
    return not threading.main_thread().is_alive()


def _parked(loop: asyncio.AbstractEventLoop) -> "asyncio.Future[Any]":
    """A future nobody settles: what a request awaits in a daemon thread once the interpreter is
    exiting and the client's engine was closed at exit (weakref.finalize), so that the thread is
    frozen quietly with the interpreter, not failed with a traceback printed at exit."""
    return loop.create_future()


class InterpreterExit(SystemExit):
    """What a client attribute that needs the engine (``stats()``, ...) raises in a daemon thread
    once the interpreter is exiting and the engine was closed at exit: a ``SystemExit``, so that a
    plain thread ends quietly (``threading`` prints no traceback for it) and its ``finally`` blocks
    run.  Requests do not raise it: they wait (:func:`_parked`) until the thread is frozen."""

    def __init__(self) -> None:
        super().__init__("vehicledata.AsyncClient: the interpreter is exiting (the client's engine is closed)")


class AsyncFetcher:
    """What an :class:`AsyncPager` and the async resources need from their client: jobs on its
    engine, awaited.  The asyncio counterpart of ``vehicledata._fetcher.Fetcher``."""

    def __init__(self, core: Callable[[], Any], *, base_url: str, max_parallel: int) -> None:
        self._core = core
        self.base_url = base_url
        self.max_parallel = max_parallel
        self.progress: Optional[bool] = None  # the client's default for progress bars (None: only in Jupyter)
        self._pending: "weakref.WeakSet[asyncio.Future[Any]]" = weakref.WeakSet()
        self._credentials: Optional[bool] = None

    def fail_pending(self, error: BaseException) -> None:
        """End every request still awaited with ``error`` (the client was closed under it)."""
        for future in list(self._pending):
            if not future.done():
                future.get_loop().call_soon_threadsafe(_settle, future, None, error)

    @property
    def authenticated(self) -> bool:
        if self._credentials is None:  # (constant: read once, so that it answers at exit too)
            self._credentials = bool(self._core().has_credentials)
        return self._credentials

    def _job(self, start: Callable[[Any, Any, Callable[..., None]], int]) -> "asyncio.Future[Any]":
        """A job on the engine, awaited: ``start(engine, loop, settle)`` queues it and returns its id;
        cancelling the future drops the job (its transfers leave the multi handle at once)."""
        loop = asyncio.get_running_loop()
        try:
            engine = self._core()
        except InterpreterExit:
            return _parked(loop)
        future: asyncio.Future[Any] = loop.create_future()
        job = start(engine, loop, functools.partial(_settle, future))

        def cancelled(f: "asyncio.Future[Any]") -> None:
            if f.cancelled() and not engine.closed:
                engine.cancel(job)

        future.add_done_callback(cancelled)
        self._pending.add(future)
        return future

    def _submit(self, pages: Sequence[BoundEndpoint], verbose: bool = False, first: Any = None,
                first_number: int = 1, numbers: Optional[Sequence[int]] = None, collect: bool = False,
                single: bool = False, fields: Optional[Sequence[str]] = None) -> "asyncio.Future[Any]":
        targets, record, shape = on_the_wire(pages)
        return self._job(lambda engine, loop, settle: engine.submit(
            loop, settle, targets, record, shape, verbose, first, first_number,
            None if numbers is None else list(numbers), collect, single, None if fields is None else list(fields)))

    async def get(self, target: str) -> Dict[str, Any]:
        """A raw GET of ``target`` (auth, retries, the rate limit; not decoded): the core's
        {status, url, content_type, http_version, body}, as ``Client.get``'s."""
        return dict(await self._job(lambda engine, loop, settle: engine.get(loop, settle, target)))

    async def download(self, page: BoundEndpoint, dest: str, resume: bool,
                       on_progress: Optional[Callable[[int, int], None]], timeout: float = 0.0,
                       max_bytes: int = 0) -> Dict[str, Any]:
        """Stream ``page.target`` into the file ``dest`` on the engine (the sync Fetcher.download's
        rules: resume, total ``timeout``, ``max_bytes``); ``on_progress(done, total)`` runs on the loop."""
        result: Dict[str, Any] = dict(await self._job(lambda engine, loop, settle: engine.download(
            loop, settle, page.target, dest, resume, on_progress, timeout, max_bytes)))
        return finish_download(result, on_progress)

    def progress_bar(self, progress: Optional[bool], total: Optional[int], desc: str, unit: str,
                     probe: bool = False) -> Any:
        """A tqdm bar when asked (None: the client's ``progress``, by default only in Jupyter), else None."""
        return progress_bar(progress if progress is not None else self.progress, total, desc, unit, probe)

    async def get_page(self, page: BoundEndpoint, verbose: bool = False,
                       fields: Optional[Sequence[str]] = None) -> Any:
        """One core page of ``page`` (the sync Fetcher's get_page, awaited; ``fields``: its decode projection)."""
        return await self._submit([page], verbose, single=True, fields=fields)

    async def get_pages(self, pages: Sequence[BoundEndpoint], verbose: bool = False, first: Any = None,
                        first_number: int = 1, numbers: Optional[Sequence[int]] = None,
                        fields: Optional[Sequence[str]] = None) -> List[Any]:
        """Several core pages of one endpoint fetched concurrently, in the order asked (checked against ``first``)."""
        if not pages:
            return []
        return list(await self._submit(pages, verbose, first, first_number, numbers, fields=fields))

    async def collect_pages(self, first: Any, pages: Sequence[BoundEndpoint], verbose: bool = False,
                            first_number: int = 1, numbers: Optional[Sequence[int]] = None,
                            fields: Optional[Sequence[str]] = None) -> Any:
        """``first`` with ``pages`` appended in order in C++ (the merged core page)."""
        return await self._submit(pages, verbose, first, first_number, numbers, collect=True, fields=fields)

    async def fetch_pages_settled(self, pages: Sequence[BoundEndpoint], parallel: int,
                                  on_done: Callable[[int, Any, Optional[int], Optional[str]], None]) -> None:
        """The sync Fetcher's ``fetch_pages_settled`` on the engine, awaited: ``pages`` fetched at most
        ``parallel`` at once (inside the engine's ``max_parallel``, the rate limit, the retries per
        page); ``on_done(index, page, None, None)`` runs on the loop as each page arrives, or
        ``on_done(index, None, status, message)`` for one the server refuses for itself (the batch
        goes on); what else fails ends the batch and is raised."""
        if pages:
            targets, record, shape = on_the_wire(pages)
            await self._job(lambda engine, loop, settle: engine.fetch_pages_settled(
                loop, settle, targets, record, shape, False, parallel, on_done))

    async def one(self, page: BoundEndpoint, verbose: bool = False) -> Record:
        """The single record an object-shaped endpoint answers."""
        return records_of(await self.get_page(page.at(check_target(page.target)), verbose))[0]

    def url_for(self, target: str) -> str:
        return str(self._core().url_for(target))


class _OnAwait(Generic[T]):
    """``await pager.total``: the coroutine starts when awaited, so reading the attribute alone
    starts nothing (no task, no "Task exception was never retrieved" for a failure not awaited)."""

    __slots__ = ("_start",)

    def __init__(self, start: Callable[[], Coroutine[Any, Any, T]]) -> None:
        self._start = start

    def __await__(self) -> Generator[Any, None, T]:
        return self._start().__await__()


class _WholeFrames:
    """``await to_pandas()`` / ``to_arrow()`` / ``to_polars()`` of a whole result: ``_whole(page_size)``
    gives it as one core page (pages of ``page_size`` records, default 1000, as the sync pager's);
    the frame is built on the worker thread (``_off_loop``)."""

    async def _whole(self, page_size: Optional[int]) -> Any:
        raise NotImplementedError

    async def to_pandas(self, page_size: Optional[int] = None) -> "pd.DataFrame":
        """Every record in one DataFrame (as the sync pager's ``to_pandas``)."""
        return await _off_loop(frames.page_to_pandas, await self._whole(page_size))

    async def to_arrow(self, page_size: Optional[int] = None) -> "pa.Table":
        """Every record in one Arrow table."""
        return await _off_loop(frames.page_to_arrow, await self._whole(page_size))

    async def to_polars(self, page_size: Optional[int] = None) -> "pl.DataFrame":
        """Every record in one polars DataFrame."""
        return await _off_loop(frames.page_to_polars, await self._whole(page_size))


class AsyncPager(_WholeFrames, PageWalk):
    """The asyncio face of :class:`vehicledata.Pager`: the same query, fetched by awaiting.

    ``async for record in pager``, ``async for page in pager.pages``, ``await pager.total``,
    ``await pager.page_count``, ``await pager.synthetic``, ``await pager.to_list()``,
    ``await pager.first(n)``, ``await pager.to_pandas()`` / ``to_arrow()`` / ``to_polars()`` /
    ``to_parquet(path)``, ``async for df in pager.iter_pandas()``; ``arrow_schema()`` and the
    attributes (``path``, ``params``, ``verbose``, ``parallel``, ``progress``, ``fields``...) as
    the sync pager's.  The steps that send nothing are ``vehicledata.pager.PageWalk``'s, shared with
    ``Pager``: only the requests are awaited here.  Pages after the first are fetched concurrently
    on the client's engine and checked against the first page in C++ as they arrive
    (PaginationError).  ``progress`` (the search's, else the client's; None: only in Jupyter) shows
    a bar of the pages, as ``Pager``'s.
    """

    _fetcher: AsyncFetcher

    def __init__(self, fetcher: AsyncFetcher, path: str, record: str, params: Sequence[Tuple[str, Any]],
                 *, start_page: int = 1, parallel: bool = True, progress: Optional[bool] = None,
                 fields: Optional[Sequence[str]] = None, names: Any = None) -> None:
        super().__init__(fetcher, path, record, params, start_page=start_page, parallel=parallel, progress=progress,
                         fields=fields)
        # (check, lists) of vehicledata._names: the search's year/make/model, checked (awaited)
        # before its first request; None once passed or when there is nothing to check.
        self._names: Any = names

    def _copy(self, **changes: Any) -> "AsyncPager":
        pager = super()._copy(**changes)
        pager._names = self._names
        return pager

    # ---- first page ----------------------------------------------------------------
    async def _check_names(self) -> None:
        if self._names is not None:
            check, lists = self._names
            await _names.check_async(check, lists, self._fetcher.get_page)
            self._names = None

    async def _first_page(self) -> Page:
        if self._first is None:
            await self._check_names()
            try:
                core = await self._fetcher.get_page(**self._first_request())
            except NotFoundError as e:
                if not self._past_the_end(e):
                    raise
                core = self._empty_page(await self._fetcher.get_page(**self._page_one_request()))
            first, new = self._took_first(core)
            if new:
                warn_demo_empty(self._fetcher.authenticated, self.path, self.params, first.total)
            return first
        return self._first

    async def _total(self) -> int:
        known = self._known()
        return known[0] if known is not None else (await self._first_page()).total

    async def _page_count(self) -> int:
        return (await self._first_page()).pages

    async def _synthetic(self) -> List[str]:
        return (await self._first_page()).synthetic

    @property
    def total(self) -> Awaitable[int]:
        """``await pager.total``: the number of matching records (fetches the first page once)."""
        return _OnAwait(self._total)

    @property
    def page_count(self) -> Awaitable[int]:
        """``await pager.page_count``: the number of pages of the result."""
        return _OnAwait(self._page_count)

    @property
    def synthetic(self) -> Awaitable[List[str]]:
        """``await pager.synthetic``: the fields the emulator labels synthetic (as ``Pager.synthetic``)."""
        return _OnAwait(self._synthetic)

    # ---- iteration -------------------------------------------------------------------------
    async def _core_pages(self, max_pages: Optional[int] = None, ramp: bool = True) -> AsyncIterator[Page]:
        """The pages in order, as Pager._core_pages: batches of 1, 2, 4 ... up to 2 * max_parallel
        pages fetched concurrently (``ramp=False``: full batches)."""
        first = await self._first_page()
        yield first
        numbers = self._rest(first, max_pages)
        if not numbers:
            return
        if not self.parallel:
            async for page in self._follow_next(first, numbers[-1]):
                yield page
            return
        with self._crawl_bar(len(numbers)) as bar:
            for batch in self._batches(numbers, ramp):
                for page in self._arrived(await self._fetcher.get_pages(**self._crawl_request(first, batch)), batch,
                                          bar):
                    yield page

    async def _follow_next(self, first: Page, last: int) -> AsyncIterator[Page]:
        seen = {first.url}
        page = first
        while page.number < last and (link := self._next_link(page, seen)) is not None:
            page = self._followed(await self._fetcher.get_page(**self._link_request(link[0])), link[1], first)
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
        if n > 0:
            async for page in self._core_pages(max_pages=self._pages_needed(await self._first_page(), n), ramp=False):
                if self._fill(out, page, n):
                    break
        return out

    async def _each(self, page_size: Optional[int], convert: Callable[[Page], Any]) -> AsyncIterator[Any]:
        with self._absorbed(self._bulk(page_size)) as bulk:
            async for page in bulk._core_pages():
                yield convert(page)

    def iter_pandas(self, page_size: Optional[int] = None) -> AsyncIterator["pd.DataFrame"]:
        """One DataFrame per page (bounded memory)."""
        return self._each(page_size, Page.to_pandas)

    def iter_arrow(self, page_size: Optional[int] = None) -> AsyncIterator["pa.Table"]:
        """One Arrow table per page."""
        return self._each(page_size, Page.to_arrow)

    # ---- whole results ---------------------------------------------------------------------
    async def _collected(self) -> Any:
        """Every page as one core page: the rest fetched concurrently and appended in order in C++
        (on the engine thread), each checked against the first as it arrives."""
        first = await self._first_page()
        numbers = self._rest(first)
        if not numbers:
            return self._core_of(first)
        if self._by_pages():  # (a bar: page by page, as Pager._collected)
            return await _off_loop(self._merged, [p async for p in self._core_pages(ramp=False)], first)
        merged = await self._fetcher.collect_pages(**self._crawl_request(first, numbers))
        self.pages_fetched += len(numbers)
        return merged

    async def _bulk_collected(self, page_size: Optional[int]) -> Any:
        with self._absorbed(self._bulk(page_size)) as bulk:
            return await bulk._collected()

    _whole = _bulk_collected

    async def to_parquet(self, path: Any, partition_cols: Optional[Sequence[str]] = None,
                         page_size: Optional[int] = None, *, mode: str = "refresh",
                         rows_per_file: int = checkpoint.ROWS_PER_FILE,
                         checkpoint_pages: int = checkpoint.CHECKPOINT_PAGES) -> Any:
        """As ``Pager.to_parquet`` (the same checkpoint, resumable with either client): the pages
        are fetched on the engine as above; the Parquet files are written by one worker thread
        (disk writes stay off the event loop), which takes each page from the loop as it needs it."""
        with self._absorbed(self._bulk(page_size)) as bulk:
            return await bulk._write_dataset(path, partition_cols, mode, rows_per_file, checkpoint_pages)

    async def _write_dataset(self, path: Any, partition_cols: Optional[Sequence[str]], mode: str,
                             rows_per_file: int, checkpoint_pages: int) -> Any:
        from . import sync as _sync

        await self._check_names()
        loop = asyncio.get_running_loop()
        stop = threading.Event()

        def pages_from(number: int, since: Optional[datetime] = None) -> Iterator[Page]:
            params = self.params if since is None else _sync.changed_params(self.path, self.params, since)
            with self._absorbed(self._resumed(number, params)) as resumed:
                pages = resumed._core_pages()

                async def following() -> Optional[Page]:
                    try:
                        return await pages.__anext__()
                    except StopAsyncIteration:
                        return None

                while not stop.is_set():
                    page = asyncio.run_coroutine_threadsafe(following(), loop).result()
                    if page is None:
                        return
                    yield page

        try:
            return await _in_thread(None, checkpoint.write_dataset, path, **self._dataset(), pages_from=pages_from,
                                    partition_cols=partition_cols, mode=mode, rows_per_file=rows_per_file,
                                    checkpoint_pages=checkpoint_pages, refreshable=_sync.refreshable(self.path))
        finally:
            stop.set()


class AsyncSearchResource(SearchRequests):
    """A search endpoint of an :class:`AsyncClient`: ``search()`` gives an :class:`AsyncPager`,
    ``await get(id)`` one record, ``await sync(since=...)`` what changed.  Filters, conditions, their
    checks and the attributes (``filters``, ``json_fields``, ``sort_keys``, ``fields``, ``path``...)
    are :class:`vehicledata.client.SearchRequests`', shared with ``vd.Client``'s resources."""

    _client: "_EngineClient"

    def search(self, *conditions: Conditions, where: Conditions = None, sort: Optional[str] = None,
               direction: Optional[str] = None, limit: Optional[int] = None, start_page: int = 1,
               verbose: Optional[bool] = None, legacy: bool = False, parallel: bool = True,
               progress: Optional[bool] = None, start_token: Optional[str] = None, **filters: Any) -> AsyncPager:
        """A lazy :class:`AsyncPager` over the matching records (arguments as ``vd.Client``'s search)."""
        path, record, params, start_page = self._query(conditions, where, sort, direction, limit, start_page, verbose,
                                                       legacy, start_token, filters)
        return AsyncPager(self._client.fetcher, path, record, params, start_page=start_page, parallel=parallel,
                          progress=progress, names=self._client.name_check(path, params))

    __call__ = search

    async def sync(self, *conditions: Conditions, since: Any = None, page_size: Optional[int] = None,
                   **filters: Any) -> Tuple["pd.DataFrame", Any]:
        """Incremental sync, awaited: ``(frame, watermark)`` as ``vd.Client``'s ``api.<search>.sync``
        (the same rules, ``vehicledata.sync``): ``df, mark = await api.trims.sync(since=mark)``."""
        from . import sync as _sync

        conds, since = _sync.arguments(self, conditions, since)  # type: ignore[arg-type]  # (SearchRequests')
        run = _sync.Run(conds, since)
        return run.result(await self.search(*run.conditions, **filters).to_pandas(page_size=page_size))

    async def get(self, key: Union[int, str], *, verbose: Optional[bool] = None, legacy: bool = False) -> Record:
        """One record by id (trims: the trim with bodies, engines, mileages and colours)."""
        request = self._detail(key, verbose, legacy)
        try:
            return await self._client.fetcher.one(request, bool(verbose))
        except NotFoundError as exc:
            self._not_found_hint(exc)
            raise


class AsyncVehiclePager(_WholeFrames):
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
        return await _in_thread(None, vehicles.join_pages, cores[0], parts, self._after)

    _whole = _joined

    async def iter_arrow(self, page_size: Optional[int] = None) -> AsyncIterator["pa.Table"]:
        """One joined table per trims page (as ``VehiclePager.iter_arrow``): the parts are fetched whole
        first (concurrently), then the trims page by page; each join runs on a worker thread."""
        from . import vehicles

        tables = await asyncio.gather(*(self._pagers[res].to_arrow(page_size) for _, res in vehicles.PARTS))
        parts = {rec: t for (rec, _), t in zip(vehicles.PARTS, tables)}
        async for table in self._pagers["trims"].iter_arrow(page_size):
            yield await _in_thread(None, vehicles.join, table, parts, self._after)

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

        return await _in_thread(None, checkpoint.write_dataset, path, query=digest, target=target, first_page=1,
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

    async def get(self, trim_id: int) -> "VehicleRecord":
        """One vehicle by trim id: the columns of a row of ``search()`` (NotFoundError if no trim has it),
        typed ``VehicleRecord`` for type checkers, as ``vd.Client``'s."""
        from .vehicles import id_condition, vehicle_of

        return cast("VehicleRecord", vehicle_of(await self.search(id_condition(trim_id)).to_arrow(), trim_id))

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
        from .feed import LAST_UPDATED_ENDPOINT

        return str((await self._fetcher.one(LAST_UPDATED_ENDPOINT.bind()))["last_updated"])

    async def download(self, path: Union[str, "os.PathLike[str]"], *, resume: bool = True,
                       progress: Optional[bool] = None, timeout: float = DOWNLOAD_TIMEOUT,
                       max_bytes: int = MAX_DOWNLOAD_BYTES) -> "Path":
        """Stream the feed to ``path``, awaited (the arguments, errors and rules of ``DataFeed.download``:
        resumable, verified, renamed atomically).  Cancelling the task stops the transfer at once and
        keeps the ``.part`` file for a resume."""
        from .feed import DOWNLOAD_ENDPOINT, FeedDownload

        dl = FeedDownload(self._fetcher, path, resume, progress, timeout, max_bytes)
        while True:
            on_progress = dl.begin()
            try:
                result = await self._fetcher.download(DOWNLOAD_ENDPOINT.bind(), str(dl.part), dl.resume, on_progress,
                                                      dl.timeout, dl.max_bytes)
            except BaseException as exc:
                dl.failed(exc)
                raise
            target = await _in_thread(None, dl.finish, result)  # reads the whole file (the ZIP check)
            if target is not None:
                return target

    async def load(self, path: Union[str, "os.PathLike[str]", None] = None, *, tables: Optional[Iterable[str]] = None,
                   engine: str = "pyarrow", progress: Optional[bool] = None, max_member_bytes: int = MAX_MEMBER_BYTES,
                   max_total_bytes: int = MAX_TOTAL_BYTES) -> Dict[str, "pd.DataFrame"]:
        """The feed's tables as DataFrames (``DataFeed.load``'s arguments), read on a worker thread;
        downloads first (awaited) when no ``path``."""
        return await self._local(self._sync.load, path, dict(tables=tables, engine=engine, progress=progress,
                                                             max_member_bytes=max_member_bytes,
                                                             max_total_bytes=max_total_bytes))

    async def to_parquet(self, directory: Union[str, "os.PathLike[str]"],
                         path: Union[str, "os.PathLike[str]", None] = None, *, tables: Optional[Iterable[str]] = None,
                         progress: Optional[bool] = None, max_member_bytes: int = MAX_MEMBER_BYTES,
                         max_total_bytes: int = MAX_TOTAL_BYTES) -> Dict[str, "Path"]:
        """Each feed table to ``directory/<table>.parquet`` (``DataFeed.to_parquet``), on a worker thread."""
        return await self._local(functools.partial(self._sync.to_parquet, directory), path,
                                 dict(tables=tables, progress=progress, max_member_bytes=max_member_bytes,
                                      max_total_bytes=max_total_bytes))

    async def _local(self, read: Callable[..., Any], path: Any, options: Dict[str, Any]) -> Any:
        if path is not None:
            return await _in_thread(None, read, path, **options)
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            archive = await self.download(Path(tmp) / "feed.zip", progress=options.get("progress"))
            return await _in_thread(None, read, archive, **options)


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

        return VinResult.of(await self._client._fetcher.one(self._client._client.vin_request(vin, verbose, all_trims)))

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
        if batch.requests:
            try:
                await fetcher.fetch_pages_settled(batch.requests, batch.concurrency, batch.on_done)
            finally:
                batch.finish()
        return await _off_loop(batch.table)

    def __repr__(self) -> str:
        return "<AsyncVinAccessor: await api.vin(vin), await api.vin.decode_many(vins)>"


class AsyncAccount:
    """``api.account`` of an :class:`AsyncClient`: usage counters, awaited (as ``vd.Client``'s ``api.account``)."""

    __slots__ = ("_fetcher",)

    def __init__(self, fetcher: AsyncFetcher) -> None:
        self._fetcher = fetcher

    async def requests(self) -> List[Record]:
        """Requests per day since last month: records (date, count)."""
        return records_of(await self._fetcher.get_page(schema.endpoint_for(Kind.ACCOUNT_REQUESTS).bind()))

    async def requests_today(self) -> int:
        return int((await self._fetcher.one(schema.endpoint_for(Kind.ACCOUNT_TODAY).bind()))["count"])

    def __repr__(self) -> str:
        return "<AsyncAccount account>"


class _EngineClient(Client):
    """The options, checks and request builders of ``vd.Client`` over an Engine (no I/O of its own):
    what an :class:`AsyncClient` and its resources take from ``vd.Client``, asked here (no module
    reaches into another's private members)."""

    _fetcher: AsyncFetcher

    def _new_core(self, options: Any) -> Any:
        return _core.client.Engine(options, core_log)

    @property
    def fetcher(self) -> AsyncFetcher:
        return self._fetcher

    @property
    def _core(self) -> Any:
        """The Engine: VehicleDataError once the client is closed; InterpreterExit once the engine
        was closed at exit (weakref.finalize) under a daemon thread still using it."""
        core = super()._core
        if core.closed:
            raise InterpreterExit() if _exiting() else VehicleDataError("the client is closed")
        return core

    @property
    def engine(self) -> Any:
        """The Engine (VehicleDataError once the client is closed)."""
        return self._core

    def close(self) -> None:
        """Stop the engine; requests still awaited raise VehicleDataError("the client is closed"). Idempotent."""
        core = self._core_client
        if core is not None:
            core.close()
            self._fetcher.fail_pending(VehicleDataError("the client is closed"))
        self._core_client = None

    @property
    def authenticated(self) -> bool:
        return self._fetcher.authenticated

    def name_check(self, path: str, params: List[Tuple[str, Any]]) -> Any:
        """(check, lists) of ``vehicledata._names`` for a search, awaited before its first request
        (None: nothing to check, or a closed client, which says so when the search is fetched)."""
        check = _names.plan(schema.endpoint(path), params, self.authenticated) if self._core_client else None
        return None if check is None else (check, self._lists)

    def vin_request(self, vin: str, verbose: Optional[bool], all_trims: Optional[bool]) -> BoundEndpoint:
        return self._vin_request(vin, verbose, all_trims)

    def plate_request(self, country_code: str, lookup: str, region: Optional[str]) -> BoundEndpoint:
        return self._plate_request(country_code, lookup, region)

    def _new_fetcher(self, base_url: str, progress: Optional[bool]) -> Any:
        # (self._core: the check above, at each request)
        fetcher = AsyncFetcher(lambda: self._core, base_url=base_url, max_parallel=self.max_parallel)
        fetcher.progress = progress
        return fetcher


def _close_engine(engine: Any) -> None:
    if not engine.closed:
        engine.close()


def _option(name: str, doc: str) -> Any:
    """A read-only attribute of the AsyncClient: the option ``name`` of its vd.Client (the same checks made it)."""
    return property(lambda self: getattr(self._client, name), doc=doc)


class AsyncClient:
    """A client of the Vehicle Data Service for asyncio: the options of :class:`vehicledata.Client`
    (``vd.AsyncClient(api_token, api_secret, base_url, timeout=..., rate_limit=..., max_parallel=...)``,
    or ``vd.AsyncClient(options=vd.ClientOptions(...))``: the same object ``vd.Client`` takes).

    Every request is awaited: ``await api.trims.get(id)``, ``await api.vin(v)``,
    ``async for r in api.trims.search(...)``, ``await api.trims.search(...).to_pandas()``.
    Concurrent requests of one client (tasks, ``asyncio.gather``) share its connections, its token
    bucket (``rate_limit``) and its JWT; at most ``max_parallel`` transfers run at once.  Use it as
    ``async with vd.AsyncClient() as api`` or call ``await api.aclose()``; a client works on any
    running loop (``asyncio.run``, Jupyter's, uvloop).  See docs/async.md.
    """

    def __init__(self, api_token: Optional[str] = DEFAULT, api_secret: Optional[str] = DEFAULT,
                 base_url: Optional[str] = DEFAULT, *, options: Optional[ClientOptions] = None,
                 **settings: Any) -> None:
        opts = options_of(type(self).__name__, options,
                          dict(api_token=api_token, api_secret=api_secret, base_url=base_url, **settings))
        self._client = _EngineClient(options=opts)
        self._fetcher: AsyncFetcher = self._client.fetcher
        self._accessors: Dict[str, AsyncSearchResource] = {}
        # Pagers and resources keep the inner client alive: its engine stops when the last goes (or at exit).
        weakref.finalize(self._client, _close_engine, self._client.engine)

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self._client.base_url

    @property
    def authenticated(self) -> bool:
        return self._client.authenticated

    def close(self) -> None:
        """Stop the engine; requests still awaited raise VehicleDataError("the client is closed"). Idempotent."""
        self._client.close()

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
        return self._client.stats()

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
        if name.startswith("_") or name not in SEARCH_NAMES:
            hint = " (vd.Client has it; not offered by AsyncClient yet: docs/async.md)" \
                if not name.startswith("_") and hasattr(Client, name) else ""
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}{hint}")
        res = self._accessors.get(name)
        if res is None:
            res = self._accessors[name] = search_resource(self._client, name, AsyncSearchResource)
        return res

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(SEARCH_NAMES))

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
        return await self._fetcher.one(self._client.plate_request(country_code, lookup, region))

    async def years(self, *conditions: Conditions, where: Conditions = None, legacy: bool = False,
                    **filters: Any) -> List[int]:
        """Model years, newest first (as ``vd.Client.years``)."""
        resource: YearsResource = self._client.years
        return YearsResource.values(await self._fetcher.get_page(resource.request(conditions, where, legacy, filters)))

    async def powersports_years(self, *conditions: Conditions, where: Conditions = None, legacy: bool = False,
                                **filters: Any) -> List[int]:
        """Street motorcycles' model years; pass ``type="street_motorcycle"`` (as ``vd.Client.powersports_years``)."""
        resource: YearsResource = self._client.powersports_years
        return YearsResource.values(await self._fetcher.get_page(resource.request(conditions, where, legacy, filters)))

    async def vehicle_attributes(self, attribute: str) -> List[str]:
        """The valid values of an attribute (as ``vd.Client.vehicle_attributes``)."""
        resource: VehicleAttributes = self._client.vehicle_attributes
        return VehicleAttributes.values(await self._fetcher.get_page(resource.request(attribute)))

    @property
    def account(self) -> AsyncAccount:
        """Usage counters of the account: ``await api.account.requests()``, ``await api.account.requests_today()``."""
        return AsyncAccount(self._fetcher)

    async def account_requests(self) -> List[Record]:
        """Deprecated: ``await api.account.requests()`` (the name of ``vd.Client``'s)."""
        import warnings

        warnings.warn("AsyncClient.account_requests() is api.account.requests()", DeprecationWarning, stacklevel=2)
        return await self.account.requests()

    async def account_requests_today(self) -> int:
        """Deprecated: ``await api.account.requests_today()`` (the name of ``vd.Client``'s)."""
        import warnings

        warnings.warn("AsyncClient.account_requests_today() is api.account.requests_today()", DeprecationWarning,
                      stacklevel=2)
        return await self.account.requests_today()

    # ---- the options (as vd.Client's attributes) -----------------------------------------
    retry = _option("retry", "The retry policy (a ``vd.Retry``).")
    timeout = _option("timeout", "The total time of one transfer, in seconds.")
    rate_limit = _option("rate_limit", "Requests per minute (0: no client-side limit).")
    max_parallel = _option("max_parallel", "The most transfers at once.")
    progress = _option("progress", "The default of the progress bars (None: only in Jupyter).")
    options = _option("options", "The settings the client was made from (a ``vd.ClientOptions``).")


__all__ = ["AsyncClient", "AsyncPager", "AsyncSearchResource", "AsyncFetcher", "AsyncVehiclesResource", "AsyncAccount",
           "AsyncVehiclePager", "AsyncDataFeed", "AsyncVinAccessor", "InterpreterExit"]
