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

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import parse_qsl, urlencode, urlsplit, quote

from . import frames, schema
from .errors import NotFoundError, PaginationError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from .client import Client


class Record(Mapping):  # type: ignore[type-arg]
    """One record: attribute access (``r.make``), key access (``r["make"]``) and a dict view."""

    # The data dict is also the instance __dict__: `r.make` is a plain C-level attribute lookup (no
    # Python __getattr__ call per field read). Methods are non-data descriptors that a field of the
    # same name would shadow; no record of the schema has a field named like one (keys, items,
    # values, get, to_dict).
    __slots__ = ("_data", "__dict__")

    def __init__(self, data: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "__dict__", data)

    def __getattr__(self, name: str) -> Any:  # only for names that are neither fields nor methods
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(f"record has no field {name!r}; fields: {', '.join(self._data)}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("records are read-only")

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._data.items())
        return f"Record({inner})"

    def __dir__(self) -> List[str]:
        return list(self._data) + ["to_dict", "keys", "items", "values", "get"]

    def __getstate__(self) -> Dict[str, Any]:
        return self._data

    def __setstate__(self, state: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", state)
        object.__setattr__(self, "__dict__", state)

    def to_dict(self) -> Dict[str, Any]:
        """A plain dict (nested records become dicts too)."""
        return {k: _plain(v) for k, v in self._data.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, Record):
        return v.to_dict()
    if isinstance(v, list):
        return [_plain(x) for x in v]
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
    if rec.table:
        # Fields other records of the same table carry (the legacy trim detail
        # with verbose=yes holds trim_detail's nested arrays).
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
        return Record(out)
    if isinstance(v, list):
        return [_wrap(x, record) for x in v]
    return v


def records_of(core_page: Any) -> List[Record]:
    """Records of a core page (lists built in C++, nested values typed by the schema)."""
    lists = core_page.to_lists()
    names = list(lists)
    types = _field_types(core_page.record)
    nested = {name: types[name][1] for name in names if types.get(name, ("", ""))[0] == "nested"}
    if not nested:  # the common case: one dict per row, no per-field Python work
        return [Record(dict(zip(names, row))) for row in zip(*lists.values())]
    out = []
    for row in zip(*lists.values()):
        data = dict(zip(names, row))
        for name, rec in nested.items():
            data[name] = _wrap(data[name], rec)
        out.append(Record(data))
    return out


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
        self._records: Optional[List[Record]] = None

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

    def __repr__(self) -> str:
        return f"<Page {self.number} of {self.pages}: {self.count} records, total {self.total}>"


def page_number(link: str) -> Optional[int]:
    """The ``page`` parameter of a link (1 when absent), None for an empty link."""
    if not link:
        return None
    query = urlsplit(link).query
    for k, v in parse_qsl(query, keep_blank_values=True):
        if k == "page":
            try:
                return int(v)
            except ValueError:
                raise PaginationError(f"next link has a non-numeric page {v!r}", url=link) from None
    return 1


def build_target(path: str, params: Sequence[Tuple[str, Any]]) -> str:
    if not params:
        return path
    return path + "?" + urlencode([(k, _param_text(v)) for k, v in params], quote_via=quote, safe="")


def _param_text(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


class Pager:
    """Lazy iteration over every page of a search.  See the module docstring."""

    def __init__(self, client: "Client", path: str, record: str, params: Sequence[Tuple[str, Any]],
                 *, start_page: int = 1, parallel: bool = True, progress: Optional[bool] = None) -> None:
        if isinstance(start_page, bool) or not isinstance(start_page, int) or start_page < 1:
            from .errors import QueryError

            raise QueryError(f"start_page must be an integer >= 1, not {start_page!r}")
        self._client = client
        self.path = path
        self.record = record
        self.params: List[Tuple[str, Any]] = [(k, v) for k, v in params if k != "page"]
        self.verbose = any(k == "verbose" and v in ("yes", True) for k, v in self.params)
        self.start_page = start_page
        self.parallel = parallel
        self.progress = progress
        self._first: Optional[Page] = None

    # ---- first page ----------------------------------------------------------------
    def _target(self, page: int) -> str:
        from .client import check_target

        params = list(self.params)
        if page != 1:
            params.append(("page", page))
        return check_target(build_target(self.path, params))

    def _past_the_end(self) -> Any:
        """The empty page a start_page past the last stands for (the server answers it 404
        NotFoundException, as CakePHP's paginator): page 1's totals, no records, no next link."""
        import json

        first = self._client._core.get_page(self._target(1), self.record, "envelope", self.verbose)
        c = dict(first.collection)
        target = self._target(self.start_page)
        c.update(url=target, count=0, next="", prev=c.get("last") or c.get("first", ""))
        body = json.dumps({"collection": c, "data": []}).encode()
        return _core_decode(body, self.record, target, self.verbose)

    def _first_page(self) -> Page:
        if self._first is None:
            try:
                core = self._client._core.get_page(self._target(self.start_page), self.record, "envelope",
                                                   self.verbose)
            except NotFoundError as e:
                if self.start_page == 1 or e.exception != "NotFoundException":
                    raise
                core = self._past_the_end()
            page = Page(core, self.start_page)
            self._check(page, None)
            self._first = page
        return self._first

    @property
    def total(self) -> int:
        """Total number of matching records (from the first page fetched)."""
        return self._first_page().total

    @property
    def page_count(self) -> int:
        """Number of pages of the result."""
        return self._first_page().pages

    # ---- consistency ---------------------------------------------------------------------
    def _check(self, page: Page, first: Optional[Page]) -> None:
        self._check_info(page.number, page.count, page.collection, page.url, first)

    def _check_info(self, number: int, rows: int, c: Dict[str, Any], url: str, first: Optional[Page]) -> None:
        """Raise PaginationError when a page's block contradicts itself or the first page."""
        pages, total, nxt_link = int(c.get("pages", 1)), int(c.get("total", rows)), c.get("next", "")
        if rows != int(c.get("count", rows)):
            raise PaginationError(f"page {number} says count={c.get('count')} but holds {rows} records", url=url)
        if first is not None and (pages != first.pages or total != first.total):
            raise PaginationError(f"page {number} reports pages={pages}, total={total} but page "
                                  f"{first.number} reported pages={first.pages}, total={first.total}", url=url)
        nxt = page_number(nxt_link)
        if number < pages:
            if nxt is None:
                raise PaginationError(f"page {number} of {pages} has no next link", url=url)
            if nxt <= number:
                raise PaginationError(f"page {number}'s next link repeats page {nxt}: {nxt_link}", url=url)
            if nxt != number + 1:
                raise PaginationError(f"page {number}'s next link skips to page {nxt}: {nxt_link}", url=url)
        elif nxt is not None and pages > 0:
            if nxt <= number:
                raise PaginationError(f"last page {number}'s next link repeats page {nxt}: {nxt_link}", url=url)
            raise PaginationError(f"last page {number} of {pages} has a next link: {nxt_link}", url=url)

    # ---- iteration -------------------------------------------------------------------------
    def _core_pages(self, max_pages: Optional[int] = None, ramp: bool = True) -> Iterator[Page]:
        """The pages in order.  ``max_pages``: fetch no more than that many (first included);
        ``ramp``: batches grow 1, 2, 4 ... up to 2 * max_parallel (else full batches at once)."""
        first = self._first_page()
        yield first
        if first.number >= first.pages:
            return
        last = first.pages if max_pages is None else min(first.pages, first.number + max_pages - 1)
        if last <= first.number:
            return
        if not self.parallel:
            for page in self._follow_next(first):
                yield page
                if page.number >= last:
                    return
            return
        full = max(1, int(self._client.max_parallel)) * 2
        chunk = 1 if ramp else full
        numbers = list(range(first.number + 1, last + 1))
        bar = self._client._progress_bar(self.progress, total=len(numbers) + 1, desc=self.path, unit="page")
        if bar is not None:
            bar.update(1)
        try:
            i = 0
            while i < len(numbers):
                batch = numbers[i:i + chunk]
                i += len(batch)
                chunk = min(full, chunk * 2)
                cores = self._client._core.get_pages([self._target(n) for n in batch], self.record, "envelope",
                                                     self.verbose)
                for n, core in zip(batch, cores):
                    page = Page(core, n)
                    self._check(page, first)
                    if bar is not None:
                        bar.update(1)
                    yield page
        finally:
            if bar is not None:
                bar.close()

    def _follow_next(self, first: Page) -> Iterator[Page]:
        seen = {first.url}
        page = first
        while page.next:
            url = self._client._core.url_for(page.next)
            if url in seen or page.next in seen:
                raise PaginationError(f"next link repeats an already fetched page: {page.next}", url=page.url)
            seen.add(url)
            seen.add(page.next)
            number = page_number(page.next) or page.number + 1
            core = self._client._core.get_page(page.next, self.record, "envelope", self.verbose)
            page = Page(core, number)
            self._check(page, first)
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
        if n <= 0:
            return out
        first = self._first_page()
        per_page = max(1, first.count)
        needed = 1 + max(0, -(-(n - first.count) // per_page))  # pages that can hold n records
        for page in self._core_pages(max_pages=needed, ramp=False):
            for r in page.records:
                out.append(r)
                if len(out) >= n:
                    return out
        return out

    def iter_pandas(self) -> Iterator["pd.DataFrame"]:
        """One DataFrame per page (bounded memory for ETL jobs)."""
        for page in self._core_pages():
            yield page.to_pandas()

    def _collected(self) -> Any:
        """Every page as one core page: the rest fetched concurrently and appended in order in C++."""
        first = self._first_page()
        if first.number >= first.pages:
            return first._core
        if not self.parallel or self._wants_progress():
            # concat() empties its sources: the cached first page goes in as a copy.
            cores = [p._core.copy() if p is first else p._core for p in self._core_pages(ramp=False)]
            return frames.concat_or_empty(cores, self.record, self.verbose)
        numbers = list(range(first.number + 1, first.pages + 1))
        merged, infos = self._client._core.collect_pages(first._core, [self._target(n) for n in numbers],
                                                         self.record, "envelope", self.verbose)
        for n, info in zip(numbers, infos):
            self._check_info(n, info["rows"], info["collection"], info["url"], first)
        return merged

    def _wants_progress(self) -> bool:
        return self._client._progress_bar(self.progress, total=None, desc="", unit="page", probe=True) is not None

    def to_pandas(self) -> "pd.DataFrame":
        """Every page in one DataFrame (pages appended in C++ as they arrive, then wrapped without copies)."""
        return frames.page_to_pandas(self._collected())

    def to_arrow(self) -> "pa.Table":
        """Every page in one Arrow table (same path as to_pandas)."""
        return frames.page_to_arrow(self._collected())

    def __repr__(self) -> str:
        state = f"total={self._first.total}" if self._first is not None else "not fetched"
        return f"<Pager {build_target(self.path, self.params)} start_page={self.start_page} {state}>"


__all__ = ["Record", "Page", "Pager", "build_target", "page_number"]


def _core_decode(body: bytes, record: str, url: str, verbose: bool) -> Any:
    from . import _core

    return _core.client.decode(body, record, "envelope", url, verbose)
