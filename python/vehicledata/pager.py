"""Lazy pagers over search endpoints, their pages and records.

    pager = api.trims.search(year=2019, make="BMW")
    for trim in pager: ...            # records across every page, fetched lazily
    pager.total                       # from the first page's collection block
    for page in pager.pages: ...      # Page objects (one request each)
    df = pager.to_pandas()            # every page, straight from the C++ columns
    for df in pager.iter_pandas(): ...   # one DataFrame per page (ETL)

After the first page gives ``pages``, whole-result collection (``to_pandas``,
``to_arrow``) fetches the rest concurrently (libcurl multi interface, inside
the client's token bucket), in order.  Lazy iteration (``for r in pager``,
``pages``, ``iter_pandas``) fetches ahead in batches that start at one page and
double up to ``2 * max_parallel``, so breaking out early costs at most about as
many extra pages as were consumed; ``first(n)`` fetches only the pages that
can hold n records.  A ``next`` link
that repeats a page or contradicts the page count raises ``PaginationError``.
A pager has no ``__len__``: use ``.total``.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple, TypeVar

from . import _core, checkpoint, frames, schema
from ._core import envelope as _envelope
from ._targets import build_target, check_target, warn_demo_empty
from .errors import NotFoundError, PaginationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from ._fetcher import Fetcher


#: The checkpoint file of ``Pager.to_parquet`` (in the dataset directory; ``vehicledata.checkpoint``).
CHECKPOINT_NAME = checkpoint.CHECKPOINT_NAME

#: Page size of whole-result methods (to_pandas, to_arrow, iter_pandas, the CLI's --all) unless told.
BULK_PAGE_SIZE = 1000

# Scalar fields shown in a record's one-line repr, in this order.
_REPR_KEYS = ("id", "code", "year", "make", "model", "submodel", "trim", "name", "description")


def _text(v: Any) -> str:
    """A value as shown in reprs: timestamps as ISO text, nested lists as a count."""
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, list):
        return f"[{len(v)} records]" if v and isinstance(v[0], Record) else repr(v)
    if isinstance(v, Record):
        return v._short()
    return repr(v)


if TYPE_CHECKING:  # pragma: no cover
    from ._core import _RecordBase
else:
    _RecordBase = _core.client.RecordBase


class Record(_RecordBase, Mapping):  # type: ignore[type-arg]
    """One record: attribute access (``r.make``), key access (``r["make"]``) and a dict view.

    ``repr`` is one short line (id, year, make, model, trim and the field count, then the fields
    the emulator labels synthetic: ``synthetic: msrp, invoice``; a nested one as ``engines.*``); in Jupyter ``_repr_html_`` shows
    every field, a synthetic one marked "(synthetic)".  ``synthetic_fields`` lists them.  Nested lists (``detail.engines``) become typed DataFrames
    with ``frame("engines")``; ``to_dict(json_safe=True)`` is ready for ``json.dumps``.
    """

    # The records of a page are views over its decoded columns (``_core.client.RecordBase``, in
    # C++): reading ``r.make`` makes that one value, nothing is built for the fields not read.
    # ``Record(data, record)`` makes a dict-backed record (nested records, unpickled ones).  Field
    # names are looked up before methods, so a field would shadow a method of the same name; no
    # record of the schema has a field named like one (keys, items, values, get, to_dict, frame).
    __slots__ = ()

    def _no_field(self, name: str) -> Any:
        """Called by the base type for a name that is neither a field nor a method."""
        from ._values import did_you_mean

        hint = did_you_mean(name, list(self))
        raise AttributeError(f"record has no field {name!r}{hint} Fields: {', '.join(self)}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return bool(self._data == other._data)
        if isinstance(other, Mapping):
            return bool(self._data == dict(other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def synthetic_fields(self) -> List[str]:
        """This record's fields the emulator's ``X-Emulator-Synthetic`` header names (values with no
        public source; nested members as ``field.member``), in the header's order; [] from the live
        service."""
        return [f for f in self._synthetic if f.split(".", 1)[0] in self]

    def _short(self) -> str:
        parts = [f"{k}={_text(self._data[k])}" for k in _REPR_KEYS
                 if k in self._data and not isinstance(self._data[k], (list, Record))][:6]
        kind = f" {self._kind}" if self._kind else ""
        syn: List[str] = []
        for f in self.synthetic_fields:  # nested members once per field: "engines.*"
            name = f if "." not in f else f.split(".", 1)[0] + ".*"
            if name not in syn:
                syn.append(name)
        note = f"; synthetic: {', '.join(syn)}" if syn else ""
        return f"<Record{kind} {' '.join(parts)} ({len(self._data)} fields{note})>".replace("  ", " ")

    def __repr__(self) -> str:
        return self._short()

    def _repr_html_(self) -> str:
        from html import escape

        syn = set(self.synthetic_fields)
        members = {f.split(".", 1)[0] for f in syn if "." in f}

        def mark(k: str) -> str:
            return " <i>(synthetic)</i>" if k in syn else " <i>(synthetic members)</i>" if k in members else ""

        rows = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>"
                       f"{escape(_text(v) if not isinstance(v, str) else v)}{mark(k)}</td></tr>"
                       for k, v in self._data.items())
        kind = escape(self._kind or "record")
        return f"<div><b>{kind}</b> ({len(self._data)} fields)<table>{rows}</table></div>"

    def __dir__(self) -> List[str]:
        return list(self) + ["to_dict", "frame", "keys", "items", "values", "get", "synthetic_fields"]

    def __reduce__(self) -> Any:
        return (type(self), (self._data, self._kind, self._synthetic))

    def to_dict(self, json_safe: bool = False) -> Dict[str, Any]:
        """A plain dict (nested records become dicts too); ``json_safe``: timestamps and dates as ISO
        text (with the offset as served), NaN as None, so that ``json.dumps`` takes it."""
        return {k: _plain(v, json_safe) for k, v in self._data.items()}

    def frame(self, name: str) -> "pd.DataFrame":
        """A nested list (``detail.frame("engines")``) as a DataFrame with the dtypes of ``to_pandas()``."""
        value = self._data.get(name)
        ftype, nested = _field_types(self._kind).get(name, ("", "")) if self._kind else ("", "")
        if not isinstance(value, list) or not nested:
            nested_names = [k for k, v in self._data.items() if isinstance(v, list)]
            raise KeyError(f"{name!r} is not a nested list of this record; nested lists: {', '.join(nested_names)}")
        body = json.dumps([_plain(v, True) for v in value]).encode()
        return frames.page_to_pandas(_core.client.decode(body, nested, schema.Shape.ARRAY.value, ""))


def _plain(v: Any, json_safe: bool = False) -> Any:
    if isinstance(v, Record):
        return v.to_dict(json_safe)
    if isinstance(v, list):
        return [_plain(x, json_safe) for x in v]
    if json_safe:
        if isinstance(v, (datetime, date)):
            return v.isoformat()
        if isinstance(v, float) and v != v:
            return None
    return v


def _typed(value: Any, ftype: str) -> Any:
    """A nested JSON value with the schema's type: decimal strings -> float, timestamps -> datetime."""
    if value is None or not isinstance(value, str):
        return value
    if ftype in ("decimal", "float"):
        try:
            return float(value) if value != "" else None
        except ValueError:
            return value
    if ftype == "timestamp":
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


@lru_cache(maxsize=None)
def _field_types(record: str) -> Dict[str, Tuple[str, str]]:
    try:
        rec = schema.record(record)
    except KeyError:
        return {}
    out: Dict[str, Tuple[str, str]] = {}
    if rec.table and schema.record_quirk(record) == "legacy_trim_verbose":
        # The legacy trim's older verbose shape holds trim_detail's nested arrays
        # (bodies, engines, ...): typed by the other records of its table.
        for other in schema.records().values():
            if other.table == rec.table and other.name != rec.name:
                for f in other.fields:
                    out.setdefault(f.name, (f.type, f.nested))
    out.update({f.name: (f.type, f.nested) for f in rec.fields})
    return out


def _wrap(v: Any, record: str = "") -> Any:
    """Nested JSON values: dicts become Records (recursively), typed by the schema where it knows the record."""
    if isinstance(v, dict):
        types = _field_types(record) if record else {}
        out: Dict[str, Any] = {}
        for k, x in v.items():
            ftype, nested = types.get(k, ("", ""))
            out[k] = _wrap(x, nested) if ftype == "nested" or isinstance(x, (dict, list)) else _typed(x, ftype)
        return Record(out, record)
    if isinstance(v, list):
        return [_wrap(x, record) for x in v]
    return v


def _nested_value(record: str, name: str, text: str) -> Any:
    """A nested column's JSON text -> lists/Records typed by the schema (called by record views)."""
    return _wrap(json.loads(text), _field_types(record).get(name, ("", ""))[1])


def records_of(core_page: Any) -> List[Record]:
    """Records of a core page: views over its columns (a field is made when read; nested values are
    parsed and typed by the schema on first read)."""
    return _core.client.records(core_page, Record, _nested_value)


class Page:
    """One page of a search: its records, its collection block, and frames of it."""

    def __init__(self, core_page: Any, number: int) -> None:
        self._core = core_page
        self.number = number
        c = core_page.collection
        self.collection: Dict[str, Any] = c
        self.total: int = int(c.get("total", core_page.rows))
        self.pages: int = int(c.get("pages", 1))
        self.count: int = core_page.rows
        self.next: str = c.get("next", "")
        self.url: str = core_page.url
        #: The fields the emulator's ``X-Emulator-Synthetic`` header named for this page (no public
        #: source; nested members as ``field.member``); [] from the live service.
        self.synthetic: List[str] = list(core_page.synthetic)
        self._records: Optional[List[Record]] = None
        self._query: Optional[Tuple[str, List[Tuple[str, Any]]]] = None  # set by the pager

    @property
    def resume_token(self) -> str:
        """An opaque token that resumes the same search after this page, in this or another
        process: ``api.trims.search(..., start_token=token)`` (the same query, else QueryError)."""
        if self._query is None:
            return ""
        return make_token(self._query[0], self._query[1], self.number + 1)

    @property
    def records(self) -> List[Record]:
        if self._records is None:
            self._records = records_of(self._core)
        return self._records

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return self.count

    def to_pandas(self) -> "pd.DataFrame":
        return frames.page_to_pandas(self._core)

    def to_arrow(self) -> "pa.Table":
        return frames.page_to_arrow(self._core)

    def to_polars(self) -> "pl.DataFrame":
        """This page as a polars DataFrame (``frames.page_to_polars``: the Arrow export, numbers not copied)."""
        return frames.page_to_polars(self._core)

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule protocol: ``pa.record_batch(page)`` (the C++ columns, not copied)."""
        return self._core.__arrow_c_array__(requested_schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream protocol: ``pa.table(page)``, ``polars.DataFrame(page)``..."""
        return self._core.__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"<Page {self.number} of {self.pages}: {self.count} records, total {self.total}>"

    def _repr_html_(self) -> str:
        from html import escape

        head = escape(repr(self))
        try:
            table = str(getattr(self.to_pandas().head(10), "_repr_html_")())
        except ImportError:  # pragma: no cover - without pandas
            table = "".join(f"<div>{escape(repr(r))}</div>" for r in self.records[:10])
        more = f"<div>... {self.count - 10} more on this page</div>" if self.count > 10 else ""
        return f"<div>{head}{table}{more}</div>"


def _query_digest(path: str, params: Sequence[Tuple[str, Any]]) -> str:
    import hashlib

    return hashlib.sha256(build_target(path, [(k, v) for k, v in params if k != "page"]).encode()).hexdigest()[:16]


def make_token(path: str, params: Sequence[Tuple[str, Any]], page: int) -> str:
    """``vd1.<page>.<digest of the query>``: stable across processes (no secrets, no clock)."""
    return f"vd1.{int(page)}.{_query_digest(path, params)}"


def token_page(token: str, path: str, params: Sequence[Tuple[str, Any]]) -> int:
    """The page a resume token points at; QueryError if it is malformed or from another query."""
    from .errors import QueryError

    parts = token.split(".") if isinstance(token, str) else []
    if (len(parts) != 3 or parts[0] != "vd1" or not (parts[1].isascii() and parts[1].isdigit())
            or len(parts[1]) > 19 or not 1 <= int(parts[1]) < 1 << 63):
        raise QueryError(f"not a resume token (vd1.<page from 1 to 2**63-1>.<digest>): {token!r}"[:300])
    if parts[2] != _query_digest(path, params):
        raise QueryError("the resume token belongs to another query (path, filters, conditions, sort and page "
                         "size must be the same)")
    return int(parts[1])


def page_number(link: str) -> Optional[int]:
    """The ``page`` parameter of a link (1 when absent), None for an empty link
    (PaginationError when it is not a number; C++: ``link_page``)."""
    number: Optional[int] = _core.client.link_page(link)
    return number



def batches(numbers: Sequence[int], max_parallel: int, ramp: bool) -> Iterator[List[int]]:
    """The page numbers of a crawl in the batches fetched together: 1, 2, 4 ... up to
    ``2 * max_parallel`` (``ramp=False``: full batches at once).  Pager's and AsyncPager's."""
    full = max(1, int(max_parallel)) * 2
    chunk = 1 if ramp else full
    i = 0
    while i < len(numbers):
        batch = list(numbers[i:i + chunk])
        i += len(batch)
        chunk = min(full, chunk * 2)
        yield batch

W = TypeVar("W", bound="PageWalk")


class PageWalk:
    """The steps of walking a search's pages that send nothing: the one home of the page walk,
    shared by :class:`Pager` and its asyncio twin ``vehicledata.aio.AsyncPager``.

    Each of the two writes only its I/O (the requests, sent or awaited) and calls these steps in
    the same order: the targets and request arguments, the first page taken (or the empty page a
    start past the last stands for), the plan of the pages after it and their batches, the checks
    of ``next`` links, the progress bar, the bulk pager of whole-result methods and its counts, the
    dataset key of ``to_parquet``'s checkpoint, and the frames of the schema table.  The attributes
    (``path``, ``record``, ``params``, ``verbose``, ``start_page``, ``parallel``, ``progress``,
    ``fields``, ``pages_fetched``) and ``arrow_schema()`` are the same on both pagers.
    """

    def __init__(self, fetcher: Any, path: str, record: str, params: Sequence[Tuple[str, Any]],
                 *, start_page: int = 1, parallel: bool = True, progress: Optional[bool] = None,
                 fields: Optional[Sequence[str]] = None) -> None:
        if isinstance(start_page, bool) or not isinstance(start_page, int) or not 1 <= start_page < 1 << 63:
            from .errors import QueryError

            raise QueryError(f"start_page must be an integer from 1 to 2**63-1, not {start_page!r}")
        self._fetcher = fetcher
        self.path = path
        self.record = record
        # The endpoint the walk's requests are bound to (its shape: an envelope of pages).
        self._endpoint = _search_endpoint(path, record)
        self.params: List[Tuple[str, Any]] = [(k, v) for k, v in params if k != "page"]
        self.verbose = any(k == "verbose" and v in ("yes", True) for k, v in self.params)
        self.start_page = start_page
        self.parallel = parallel
        self.progress = progress
        # A decode projection: only these fields of the record become columns (None: all of them).
        # Set by api.vehicles on its part searches (it joins a few columns of wide pages).
        self.fields: Optional[List[str]] = list(fields) if fields is not None else None
        self._first: Optional[Page] = None
        self.pages_fetched = 0
        self._seen: Optional[Tuple[int, int]] = None  # (total, pages) of a bulk fetch made for this pager

    # ---- requests: the arguments of the fetcher's calls (a Fetcher's, or an AsyncFetcher's awaited) ----
    def _target(self, page: int) -> str:
        params = list(self.params)
        if page != 1:
            params.append(("page", page))
        return check_target(build_target(self.path, params))

    def _bound(self, page: int) -> schema.BoundEndpoint:
        """The request of page ``page`` (the endpoint bound to its target)."""
        return self._endpoint.bind(self._target(page))

    def _first_request(self) -> Dict[str, Any]:
        """``get_page`` of the first page (``start_page``)."""
        return dict(page=self._bound(self.start_page), verbose=self.verbose, fields=self.fields)

    def _page_one_request(self) -> Dict[str, Any]:
        """``get_page`` of page 1, whose totals a start past the last page stands on."""
        return dict(page=self._bound(1), verbose=self.verbose)

    def _link_request(self, link: str) -> Dict[str, Any]:
        """``get_page`` of a ``next`` link (``parallel=False``)."""
        return dict(page=self._endpoint.bind(link), verbose=self.verbose, fields=self.fields)

    def _crawl_request(self, first: Page, numbers: Sequence[int]) -> Dict[str, Any]:
        """``get_pages`` / ``collect_pages`` of the pages ``numbers`` after ``first``: each checked
        against ``first`` in C++ as it arrives."""
        return dict(pages=[self._bound(n) for n in numbers], verbose=self.verbose, first=first._core,
                    first_number=first.number, numbers=list(numbers), fields=self.fields)

    # ---- answers ------------------------------------------------------------------------
    def _page(self, core: Any, number: int) -> Page:
        page = Page(core, number)
        page._query = (self.path, self.params)
        return page

    def _check(self, page: Page, first: Optional[Page]) -> None:
        """PaginationError when a page's block contradicts itself or the first page (checked in
        C++, cpp/client/paging.cpp; batches are checked there as they arrive)."""
        if first is None:
            _core.client.check_paging(page._core, page.number)
        else:
            _core.client.check_paging(page._core, page.number, first._core, first.number)

    def _past_the_end(self, error: NotFoundError) -> bool:
        """True when the first page's 404 means a ``start_page`` past the last (the server answers
        it NotFoundException, as CakePHP's paginator); the walk then fetches page 1."""
        return self.start_page != 1 and error.exception == _envelope.NOT_FOUND

    def _empty_page(self, page_one: Any) -> Any:
        """The empty page a start_page past the last stands for: page 1's totals, no records, no next link."""
        c = dict(page_one.collection)
        target = self._target(self.start_page)
        c.update(url=target, count=0, next="", prev=c.get("last") or c.get("first", ""))
        body = json.dumps({"collection": c, "data": []}).encode()
        return _core_decode(body, self.record, target, self.verbose)

    def _took_first(self, core: Any) -> Tuple[Page, bool]:
        """The first page from its answer, checked; (the first page, True when this answer is it:
        two tasks of the async pager may have asked at once, the first answer wins)."""
        page = self._page(core, self.start_page)
        self._check(page, None)
        if self._first is not None:
            return self._first, False
        self._first = page
        self.pages_fetched += 1
        return page, True

    def _rest(self, first: Page, max_pages: Optional[int] = None) -> List[int]:
        """The numbers of the pages after ``first`` a walk fetches (``max_pages``: no more than that
        many, the first included)."""
        last = first.pages if max_pages is None else min(first.pages, first.number + max_pages - 1)
        return list(range(first.number + 1, last + 1))

    def _batches(self, numbers: Sequence[int], ramp: bool) -> Iterator[List[int]]:
        return batches(numbers, self._fetcher.max_parallel, ramp)

    @contextmanager
    def _crawl_bar(self, following: int) -> Iterator[Any]:
        """The bar of a crawl's pages (the first one counted; None: no bar), closed at the end."""
        bar = self._fetcher.progress_bar(self.progress, total=following + 1, desc=self.path, unit="page")
        if bar is not None:
            bar.update(1)
        try:
            yield bar
        finally:
            if bar is not None:
                bar.close()

    def _arrived(self, cores: Sequence[Any], numbers: Sequence[int], bar: Any) -> Iterator[Page]:
        """The pages of a batch (checked in C++ on arrival), counted and shown on the bar."""
        self.pages_fetched += len(numbers)
        for n, core in zip(numbers, cores):
            if bar is not None:
                bar.update(1)
            yield self._page(core, n)

    def _next_link(self, page: Page, seen: Set[str]) -> Optional[Tuple[str, int]]:
        """(the link, its page number) to follow after ``page``; None at the end; PaginationError
        for a link to a page already fetched (``seen``: the URLs and links so far)."""
        if not page.next:
            return None
        url = self._fetcher.url_for(page.next)
        if url in seen or page.next in seen:
            raise PaginationError(f"next link repeats an already fetched page: {page.next}", url=page.url)
        seen.update((url, page.next))
        return page.next, page_number(page.next) or page.number + 1

    def _followed(self, core: Any, number: int, first: Page) -> Page:
        """A page reached by a ``next`` link, counted and checked against the first."""
        self.pages_fetched += 1
        page = self._page(core, number)
        self._check(page, first)
        return page

    @staticmethod
    def _pages_needed(first: Page, n: int) -> int:
        """The pages (the first included) that can hold n records."""
        return 1 + max(0, -(-(n - first.count) // max(1, first.count)))

    @staticmethod
    def _fill(out: List[Record], page: Page, n: int) -> bool:
        """``out`` topped up from ``page`` to at most n records; True once it holds n."""
        out.extend(page.records[:n - len(out)])
        return len(out) >= n

    # ---- whole results ------------------------------------------------------------------
    def _by_pages(self) -> bool:
        """A whole result taken page by page (a bar, or ``parallel=False``) rather than merged in C++."""
        if not self.parallel:
            return True
        return self._fetcher.progress_bar(self.progress, total=None, desc="", unit="page", probe=True) is not None

    def _merged(self, pages: Sequence[Page], first: Page) -> Any:
        """The pages as one core page (concat() empties its sources: the kept first page goes in as a copy)."""
        cores = [p._core.copy() if p is first else p._core for p in pages]
        return frames.concat_or_empty(cores, self.record, self.verbose)

    @staticmethod
    def _core_of(page: Page) -> Any:
        return page._core

    def _copy(self: W, **changes: Any) -> W:
        """This walk with other ``params``/``start_page`` (a new pager of the same class, unfetched)."""
        return type(self)(self._fetcher, self.path, self.record, changes.get("params", self.params),
                          start_page=changes.get("start_page", 1), parallel=self.parallel, progress=self.progress,
                          fields=self.fields)

    def _bulk(self: W, page_size: Optional[int]) -> W:
        """The pager whole-result methods use: this one when it fixes its page size (``limit=``) or
        resumes at a page, else the same query with ``page_size`` (default BULK_PAGE_SIZE) records a page."""
        if any(k == "limit" for k, _ in self.params) or self.start_page != 1:
            if page_size is not None and self.start_page == 1:
                return self._with_limit(page_size)
            return self
        return self._with_limit(page_size or BULK_PAGE_SIZE)

    def _with_limit(self: W, page_size: int) -> W:
        if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= schema.MAX_LIMIT:
            from .errors import QueryError

            raise QueryError(f"page_size must be an integer from 1 to {schema.MAX_LIMIT}, not {page_size!r}")
        return self._copy(params=[(k, v) for k, v in self.params if k != "limit"] + [("limit", page_size)])

    def _resumed(self: W, number: int, params: Optional[Sequence[Tuple[str, Any]]] = None) -> W:
        """This (bulk) walk from page ``number``: ``to_parquet``'s run after its checkpoint (``params``:
        the query of a refresh, this one's with a ``modified`` condition; default this walk's)."""
        return self._copy(start_page=number, params=self.params if params is None else params)

    @contextmanager
    def _absorbed(self: W, other: W) -> Iterator[W]:
        """``other`` (a bulk or resumed pager made for this one), its fetches counted here at the end."""
        try:
            yield other
        finally:
            if other is not self:
                self.pages_fetched += other.pages_fetched
                if other._first is not None:
                    self._seen = (other._first.total, other._first.pages)

    def _dataset(self) -> Dict[str, Any]:
        """The checkpoint key of ``to_parquet`` (``checkpoint.write_dataset``'s query, target, first_page)."""
        return dict(query=_query_digest(self.path, self.params), target=build_target(self.path, self.params),
                    first_page=self.start_page)

    def arrow_schema(self) -> "pa.Schema":
        """The Arrow schema of this search's tables (from the schema table; nothing is fetched)."""
        return frames.page_to_arrow(frames.empty_page(self.record, self.verbose)).schema

    # ---- reprs ------------------------------------------------------------------------
    def _known(self) -> Optional[Tuple[int, int]]:
        return (self._first.total, self._first.pages) if self._first is not None else self._seen

    def __repr__(self) -> str:
        known = self._known()
        fetched = f"{self.pages_fetched} page{'' if self.pages_fetched == 1 else 's'} fetched"
        state = f"total={known[0]}, {fetched}" if known is not None else "not fetched"
        start = f" start_page={self.start_page}" if self.start_page != 1 else ""
        return f"<{type(self).__name__} {build_target(self.path, self.params)}{start} {state}>"

    def _repr_html_(self) -> str:
        from html import escape

        known = self._known()
        return f"<div><b>{type(self).__name__}</b> <code>{escape(build_target(self.path, self.params))}</code><br>" \
            + escape(f"total {known[0]} record{'' if known[0] == 1 else 's'}, {self.pages_fetched} "
                     f"page{'' if self.pages_fetched == 1 else 's'} fetched"
                     if known is not None else "not fetched yet (.total, iteration or .to_pandas() fetch it)") \
            + "</div>"


class Pager(PageWalk):
    """Lazy iteration over every page of a search.  See the module docstring.

    Its steps without I/O are :class:`PageWalk`'s; this class sends the requests (its asyncio twin,
    ``vehicledata.aio.AsyncPager``, awaits the same ones)."""

    _fetcher: "Fetcher"

    # ---- first page ----------------------------------------------------------------
    def _first_page(self, budget: Any = None) -> Page:
        """The first page (fetched once); ``budget``: the wait budget of the call fetching it."""
        if self._first is None:
            try:
                core = self._fetcher.get_page(**self._first_request(), budget=budget)
            except NotFoundError as e:
                if not self._past_the_end(e):
                    raise
                core = self._empty_page(self._fetcher.get_page(**self._page_one_request(), budget=budget))
            first, new = self._took_first(core)
            if new:
                warn_demo_empty(self._fetcher.authenticated, self.path, self.params, first.total)
            return first
        return self._first

    @property
    def total(self) -> int:
        """Total number of matching records (from the first page fetched: this pager's, or the one a
        whole-result method such as ``to_pandas()`` fetched, so asking after it sends no request)."""
        known = self._known()
        return known[0] if known is not None else self._first_page().total

    @property
    def page_count(self) -> int:
        """Number of pages of the result."""
        return self._first_page().pages

    @property
    def synthetic(self) -> List[str]:
        """The fields the emulator labels synthetic in this search's records (its ``X-Emulator-Synthetic``
        header on the first page; nested members as ``field.member``); [] from the live service."""
        return self._first_page().synthetic

    # ---- iteration -------------------------------------------------------------------------
    def _core_pages(self, max_pages: Optional[int] = None, ramp: bool = True, budget: Any = None) -> Iterator[Page]:
        """The pages in order.  ``max_pages``: fetch no more than that many (first included);
        ``ramp``: batches grow 1, 2, 4 ... up to 2 * max_parallel (else full batches at once).
        One iteration is one call: its requests' retry sleeps share one wait budget (``max_wait``)."""
        if budget is None:
            budget = self._fetcher.wait_budget()
        first = self._first_page(budget)
        yield first
        numbers = self._rest(first, max_pages)
        if not numbers:
            return
        if not self.parallel:
            yield from self._follow_next(first, numbers[-1], budget)
            return
        with self._crawl_bar(len(numbers)) as bar:
            for batch in self._batches(numbers, ramp):
                yield from self._arrived(self._fetcher.get_pages(**self._crawl_request(first, batch), budget=budget),
                                         batch, bar)

    def _follow_next(self, first: Page, last: int, budget: Any = None) -> Iterator[Page]:
        """The pages after ``first`` by their ``next`` links, up to page ``last``."""
        seen = {first.url}
        page = first
        while page.number < last:
            link = self._next_link(page, seen)
            if link is None:
                return
            page = self._followed(self._fetcher.get_page(**self._link_request(link[0]), budget=budget), link[1], first)
            yield page

    @property
    def pages(self) -> Iterator[Page]:
        """The pages, lazily (one request each; the rest concurrently after the first)."""
        return self._core_pages()

    def __iter__(self) -> Iterator[Record]:
        for page in self._core_pages():
            yield from page.records

    def to_list(self) -> List[Record]:
        return list(self)

    def first(self, n: int) -> List[Record]:
        """At most n records, fetching only the pages needed."""
        out: List[Record] = []
        if n > 0:
            for page in self._core_pages(max_pages=self._pages_needed(self._first_page(), n), ramp=False):
                if self._fill(out, page, n):
                    break
        return out

    def _each(self, page_size: Optional[int], convert: Any, bulk: Optional["Pager"] = None) -> Iterator[Any]:
        """``convert(page)`` of each page of the bulk pager (iter_pandas, iter_arrow; ``bulk``: the one made)."""
        with self._absorbed(bulk if bulk is not None else self._bulk(page_size)) as bulk:
            for page in bulk._core_pages():
                yield convert(page)

    def iter_pandas(self, page_size: Optional[int] = None) -> Iterator["pd.DataFrame"]:
        """One DataFrame per page (bounded memory for ETL jobs); pages of ``page_size`` records
        (default BULK_PAGE_SIZE = 1000 unless the search set ``limit=`` or ``start_page=``)."""
        return self._each(page_size, Page.to_pandas)

    def iter_arrow(self, page_size: Optional[int] = None) -> Iterator["pa.Table"]:
        """One Arrow table per page (pages of ``page_size``, as iter_pandas)."""
        return self._each(page_size, Page.to_arrow)

    # ---- whole results ---------------------------------------------------------------------
    def _collected(self) -> Any:
        """Every page as one core page: the rest fetched concurrently and appended in order in C++.
        One call: the retry sleeps of all its requests share one wait budget (``max_wait``)."""
        budget = self._fetcher.wait_budget()
        first = self._first_page(budget)
        numbers = self._rest(first)
        if not numbers:
            return self._core_of(first)
        if self._by_pages():
            return self._merged(list(self._core_pages(ramp=False, budget=budget)), first)
        merged = self._fetcher.collect_pages(**self._crawl_request(first, numbers), budget=budget)
        self.pages_fetched += len(numbers)
        return merged

    def _bulk_collected(self, page_size: Optional[int]) -> Any:
        """The whole result of the bulk pager, as one core page (the frames below, and api.vehicles' join)."""
        with self._absorbed(self._bulk(page_size)) as bulk:
            return bulk._collected()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream protocol: ``pa.table(pager)``, ``polars.from_arrow(pager)``,
        DuckDB... read the result page by page (1000-record pages, each page's columns exported by
        the C++ decoder as one record batch) without a DataFrame in between."""
        bulk = self._bulk(None)
        schema_page = frames.empty_page(self.record, self.verbose)
        schema_page.synthetic = bulk._first_page().synthetic  # the schema's origin labels (fetched once)
        stream = frames.ArrowStream(schema_page, self._each(None, self._core_of, bulk))
        return stream.__arrow_c_stream__(requested_schema)

    def to_parquet(self, path: Any, partition_cols: Optional[Sequence[str]] = None,
                   page_size: Optional[int] = None, *, mode: str = "refresh",
                   rows_per_file: int = checkpoint.ROWS_PER_FILE,
                   checkpoint_pages: int = checkpoint.CHECKPOINT_PAGES) -> Any:
        """Write the result as a (Hive-partitioned) Parquet dataset under ``path``; returns the directory.

        ``mode``: ``"refresh"`` (default, the nightly job) finishes an interrupted run, and after a
        finished one fetches the records changed since (by ``modified``), replacing their old
        rows, so every id is there once; rows deleted upstream are found by the row count and the
        dataset is then written again (a search without ``modified``: written again every time);
        ``"resume"`` finishes an interrupted run and fetches nothing after a finished one (it says
        so: one ``CheckpointWarning``); ``"overwrite"`` deletes the dataset's files and writes it
        again; ``"append"`` adds a run's files beside those of the finished runs.  A run writes one
        file per partition per ``rows_per_file`` records with row groups of at least 64k rows, and
        every ``checkpoint_pages`` pages (or 30 s) stages the pages fetched and replaces
        ``path/_vehicledata_checkpoint.json`` atomically.  After a crash the same call deletes the
        files past the checkpoint and fetches the pages after it again (at most
        ``checkpoint_pages`` pages), so no record is lost or doubled.  A checkpoint of another
        query raises QueryError, a malformed one DecodeError (before anything is deleted).  See
        ``vehicledata.checkpoint``.
        """
        from . import sync

        bulk = self._bulk(page_size)

        def pages_from(number: int, since: Optional[datetime] = None) -> Iterator[Page]:
            params = bulk.params if since is None else sync.changed_params(bulk.path, bulk.params, since)
            with self._absorbed(bulk._resumed(number, params)) as resumed:
                yield from resumed._core_pages()

        return checkpoint.write_dataset(path, **bulk._dataset(), pages_from=pages_from,
                                        partition_cols=partition_cols, mode=mode, rows_per_file=rows_per_file,
                                        checkpoint_pages=checkpoint_pages, refreshable=sync.refreshable(bulk.path))

    def to_pandas(self, page_size: Optional[int] = None) -> "pd.DataFrame":
        """Every page in one DataFrame (pages appended in C++ as they arrive, then wrapped without copies).

        Fetched in pages of ``page_size`` records (default BULK_PAGE_SIZE = 1000, ten times fewer
        requests than the service's 100) unless the search set ``limit=`` or ``start_page=``."""
        return frames.page_to_pandas(self._bulk_collected(page_size))

    def to_arrow(self, page_size: Optional[int] = None) -> "pa.Table":
        """Every page in one Arrow table (same path and page size as to_pandas)."""
        return frames.page_to_arrow(self._bulk_collected(page_size))

    def to_polars(self, page_size: Optional[int] = None) -> "pl.DataFrame":
        """Every page in one polars DataFrame (same path and page size as to_pandas; the types of
        ``frames.page_to_polars``). Needs polars: ``pip install 'pyvehicledata[polars]'``."""
        return frames.page_to_polars(self._bulk_collected(page_size))


__all__ = ["Record", "Page", "PageWalk", "Pager", "build_target", "page_number", "BULK_PAGE_SIZE", "make_token",
           "token_page"]


def _core_decode(body: bytes, record: str, url: str, verbose: bool) -> Any:
    from . import _core

    return _core.client.decode(body, record, schema.Shape.ENVELOPE.value, url, verbose)


def _search_endpoint(path: str, record: str) -> schema.Endpoint:
    """The endpoint of a walk over ``path``'s pages, decoded as ``record`` (the endpoint's own record)."""
    ep = schema.endpoint(path)
    if ep.shape is not schema.Shape.ENVELOPE or ep.record != record:
        raise ValueError(f"{path} is not a search of {record!r} records (it answers {ep.record!r} as {ep.shape})")
    return ep
