"""``api.vehicles``: one row per trim with its body, engine and mileage, joined on the trim id in C++.

    suvs = api.vehicles.search(vd.F("body.type") == "SUV", vd.F("engine.drive_type") == "all wheel drive",
                               vd.F("msrp") < 40_000, vd.F("mileage.combined_mpg") > 25, year=2020).to_pandas()
    car = api.vehicles.get(9366)              # one vehicle: the same columns as a row of the frame

A search runs four crawls concurrently (trims, bodies, engines, mileages; each one the C++ core's
whole-result fetch, GIL released) with the same keyword filters, and joins the three parts to the
trims on ``trim_id``, keeping the trims' order: the C++ core finds each trim's part row (a hash
table of the part's trim ids) and gathers the columns into one page (:func:`join_pages`,
``_core.client.join``), which
takes the core's fast paths to pandas, Arrow and polars; page by page (``iter_arrow``) the join is
Arrow's ``take`` (:func:`join`).  Columns: the trim's, then each part's own fields; a name that two of the four records share
(``id``) is prefixed ``body_``, ``engine_`` or ``mileage_``; the parts' copies of the trim's
descriptive fields (year, make, model, ... trim_description) are dropped (not even decoded: the part
searches decode only the columns the join takes, ``Pager.fields``).  A trim without a part has
nulls in its columns; a trim with several (none in the catalogue) keeps the part with the lowest id.

Conditions name a trim field as is (``vd.F("msrp")``) and a part field with its record's name
(``vd.F("mileage.combined_mpg")``; the plural ``mileages.`` and a frame column without the prefix,
``combined_mpg``, are accepted too).  Where each one is applied is :func:`condition_table` (the table
in docs/client.md, "Vehicles"): a trim field goes to the trims search (and to the part searches when
the parts repeat it: ids, year, make, model, ...); a part field to its part's
search when that endpoint takes it, and also to the trims search when the trims endpoint takes it as
a related field (``bodies.type``, ``engines.drive_type``...), so fewer trims are fetched; every part
condition is then applied to the joined rows (Arrow compute, the service's rules: NULL matches no
comparison, LIKE is case-insensitive), the only place for a field no endpoint takes.

Labels: the fields the four searches label synthetic are the joined page's (``Page.synthetic``, as
vehicle columns: :func:`synthetic_columns`), so frames and Arrow tables carry them as a search's do;
the columns null on every row are named too (``frames.ALWAYS_NULL_ATTR``, a ``NullColumnWarning``
once per column: ``vehicledata.frames``).  Records are typed ``VehicleRecord`` (``_resources.py``).
"""
from __future__ import annotations

import concurrent.futures
import os
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, cast

from . import frames, query, schema
from ._values import did_you_mean
from .errors import NotFoundError, QueryError, excerpt, quoted

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from ._resources import VehicleRecord
    from .client import Client
    from .pager import Pager, Record

#: (record, resource) of the parts joined to a trim, in column order.
PARTS: Tuple[Tuple[str, str], ...] = (("body", "bodies"), ("engine", "engines"), ("mileage", "mileages"))

# Fields of a part that repeat its trim's (dropped from the vehicle row; trim_id is the join key).
_SHARED = ("make_id", "model_id", "submodel_id", "trim_id", "year", "make", "model", "series", "submodel",
           "trim", "trim_description")


def _part_fields(record: str) -> List[str]:
    return [f for f in schema.record(record).field_names() if f not in _SHARED]


def columns() -> Dict[str, Tuple[str, str]]:
    """Vehicle column -> (record, field), in frame order: the trim's fields, then each part's own ones,
    prefixed with the record's name where two of the four records share the name."""
    trim = schema.record("trim").field_names()
    names: Dict[str, int] = {}
    for f in trim:
        names[f] = names.get(f, 0) + 1
    for record, _ in PARTS:
        for f in _part_fields(record):
            names[f] = names.get(f, 0) + 1
    out: Dict[str, Tuple[str, str]] = {f: ("trim", f) for f in trim}
    for record, _ in PARTS:
        for f in _part_fields(record):
            out[f"{record}_{f}" if names[f] > 1 else f] = (record, f)
    return out


def _search_path(resource: str) -> str:
    return schema.endpoint_for(schema.Kind.SEARCH, resource).path


# Trim fields the parts repeat with the same values: their conditions also narrow the part crawls.
_PUSHED = ("trim_id", "year", "make", "model", "series", "submodel", "make_id", "model_id", "submodel_id", "trim")


def _pushed_to_parts(field: str) -> List[str]:
    """The part searches a condition on a trim field is sent to as well (the field means the same there)."""
    if field not in _PUSHED:
        return []
    return [res for _, res in PARTS if field in schema.endpoint(_search_path(res)).json_field_names()]


def condition_table() -> List[Tuple[str, str]]:
    """(condition field, where it is applied) for every field a vehicles condition may name."""
    trims_json = set(schema.endpoint(_search_path("trims")).json_field_names())
    rows: List[Tuple[str, str]] = []
    for f in schema.record("trim").field_names():
        name = "trim_id" if f == "id" else f
        if name in trims_json:
            rows.append((f, "server: " + ", ".join(["trims"] + _pushed_to_parts(name))))
    for f in sorted(trims_json - set(schema.record("trim").field_names()) - {"trim_id"}):
        if "." not in f:
            rows.append((f, "server: trims"))
    for record, resource in PARTS:
        part_json = set(schema.endpoint(_search_path(resource)).json_field_names())
        for f in _part_fields(record):
            where = []
            if f"{resource}.{f}" in trims_json:
                where.append("trims")
            if f in part_json:
                where.append(resource)
            text = ("server: " + ", ".join(where) + "; " if where else "") + "after the join"
            rows.append((f"{record}.{f}", text))
    return rows


def condition_markdown() -> str:
    """The per-field table of docs/client.md ("Vehicles"), generated from the schema table."""
    lines = ["| condition field | applied |", "|---|---|"]
    lines += [f"| `{f}` | {w} |" for f, w in condition_table()]
    return "\n".join(lines)


class _Plan:
    """Conditions routed to the four searches and to the joined rows."""

    def __init__(self, conditions: Sequence[Any]) -> None:
        self.server: Dict[str, List[Dict[str, Any]]] = {r: [] for r in ("trims",) + tuple(r for _, r in PARTS)}
        self.after: List[Tuple[str, Dict[str, Any]]] = []  # (vehicle column, condition)
        self.inner: List[str] = []  # parts a condition requires to be present
        items: List[Any] = []
        for c in conditions:
            if isinstance(c, (list, tuple)):
                items.extend(c)
            elif c is not None:
                items.append(c)
        if not items:
            return
        trims_json = set(schema.endpoint(_search_path("trims")).json_field_names())
        cols = columns()
        by_part = {(rec, f): col for col, (rec, f) in cols.items()}
        for d in query.normalize(items):
            name = str(d.get("field", ""))
            record, field = self._resolve(name, cols)
            op = d.get("op")
            if record == "trim":
                sent = dict(d, field="trim_id" if field == "id" else field)
                self.server["trims"].append(sent)
                for resource in _pushed_to_parts(str(sent["field"])):
                    self.server[resource].append(sent)
                continue
            resource = dict(PARTS)[record]
            part_json = schema.endpoint(_search_path(resource)).json_field_names()
            if op not in ("is null",):  # an absent part also has nulls: decided after the join only
                if f"{resource}.{field}" in trims_json:
                    self.server["trims"].append(dict(d, field=f"{resource}.{field}"))
                if field in part_json:
                    self.server[resource].append(dict(d, field=field))
            self.after.append((by_part[(record, field)], d))

    @staticmethod
    def _resolve(name: str, cols: Dict[str, Tuple[str, str]]) -> Tuple[str, str]:
        trims_json = schema.endpoint(_search_path("trims")).json_field_names()
        head, dot, tail = name.partition(".")
        if dot:
            record = {r: r for r, _ in PARTS}.get(head) or {res: r for r, res in PARTS}.get(head)
            if record is not None and tail in _part_fields(record):
                return record, tail
            if record is None and head in ("trim", "trims") and tail in schema.record("trim").field_names():
                return "trim", tail
        elif name in cols:
            return cols[name]
        elif name in trims_json:
            return "trim", name
        valid = [c for c, _ in condition_table()]
        hint = did_you_mean(name, valid, otherwise=".")
        raise QueryError(f"unknown vehicles condition field {quoted(name)}{hint} Valid: a trim field (msrp), "
                         f"body.<field>, engine.<field> or mileage.<field> (api.vehicles.condition_fields)",
                         field=excerpt(name))


def _rows_matching(pa: Any, pc: Any, col: Any, d: Dict[str, Any]) -> Any:
    """The boolean mask of one condition over a joined column (NULL where the service's SQL is NULL)."""
    op, val = d.get("op"), d.get("val")
    if op == "is null":
        return pc.is_null(col)
    if op == "not null":
        return pc.is_valid(col)
    if op in ("like", "not like"):
        m = pc.match_like(pc.cast(col, pa.large_string()), str(val), ignore_case=True)
        return pc.invert(m) if op == "not like" else m
    if op in ("in", "not in"):
        values = pa.array(list(val or ()), type=col.type)
        m = pc.is_in(col, value_set=values)
        m = pc.if_else(pc.is_null(col), pa.scalar(None, pa.bool_()), m)
        return pc.invert(m) if op == "not in" else m
    fn = {"=": pc.equal, "!=": pc.not_equal, ">": pc.greater, ">=": pc.greater_equal,
          "<": pc.less, "<=": pc.less_equal}[str(op)]
    return fn(col, pa.scalar(val).cast(col.type) if not isinstance(val, str) else pa.scalar(val))


def join(trims: "pa.Table", parts: Dict[str, "pa.Table"], after: Sequence[Tuple[str, Dict[str, Any]]] = ()
         ) -> "pa.Table":
    """The vehicle table: ``trims`` with each part of ``parts`` (record -> its search's table) joined on
    the trim id (left outer, trims' order kept; of several parts of a trim the first, lowest id, in the
    search's default order), then the ``after`` conditions applied.

    The join is Arrow's, in C++: ``index_in`` hashes each part's ``trim_id`` and finds every trim's
    row in it (the first occurrence; null where the trim has none), ``take`` gathers the part's columns
    in the trims' order: no sort, no Python loop over rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = columns()
    fields = list(trims.schema)
    arrays = list(trims.columns)
    for record, _ in PARTS:
        part = parts[record]
        rows = pc.index_in(trims["id"], value_set=part["trim_id"].combine_chunks()) if part.num_rows else None
        for col, (rec, f) in cols.items():
            if rec != record:
                continue
            fields.append(part.schema.field(f).with_name(col))  # (its origin label kept)
            if rows is None:
                arrays.append(pa.nulls(trims.num_rows, part.schema.field(f).type))
            else:
                arrays.append(part[f].take(rows))
    synthetic = synthetic_columns({"trim": _synthetic_of(trims), **{r: _synthetic_of(parts[r]) for r, _ in PARTS}})
    meta = {frames.SYNTHETIC_ATTR.encode(): ",".join(synthetic).encode()} if synthetic else None
    t = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta)).select(list(cols))
    if after and t.num_rows:
        mask = None
        for col, d in after:
            m = _rows_matching(pa, pc, t[col], d)
            mask = m if mask is None else pc.and_kleene(mask, m)
        t = t.filter(mask)  # NULL drops the row, as SQL's WHERE does
    # its null columns labelled, not said: a table of the page-by-page path (the whole results say it)
    return frames.with_null_columns(t, frames.null_columns(t), note=False)


def _synthetic_of(table: "pa.Table") -> List[str]:
    """The synthetic fields an Arrow table's schema metadata names (``frames.SYNTHETIC_ATTR``)."""
    text = (table.schema.metadata or {}).get(frames.SYNTHETIC_ATTR.encode())
    return text.decode().split(",") if text else []


def synthetic_columns(synthetic: Dict[str, Sequence[str]]) -> List[str]:
    """The vehicle columns (in column order) of the fields each record's search labelled synthetic
    (record -> its page's or table's list: the emulator's ``X-Emulator-Synthetic``)."""
    return [col for col, (record, f) in columns().items() if f in synthetic.get(record, ())]


@lru_cache(maxsize=1)
def _join_layout() -> Tuple[Tuple[List[str], List[str]], Dict[str, Tuple[List[str], List[str]]]]:
    """(fields, columns) of the trim and of each part in a vehicle row (from the schema table, once)."""
    cols = columns()

    def of(record: str) -> Tuple[List[str], List[str]]:
        return [f for rec, f in cols.values() if rec == record], [col for col, (rec, _) in cols.items() if rec == record]

    return of("trim"), {record: of(record) for record, _ in PARTS}


def join_pages(trims: Any, parts: Dict[str, Any], after: Sequence[Tuple[str, Dict[str, Any]]] = ()) -> Any:
    """:func:`join` on the C++ core's pages (whole-result crawls): the vehicle rows as one core Page.

    The core joins in one call, GIL released (``_core.client.join``): a hash table of each part's
    ``trim_id`` finds every trim's row (the first one; none: nulls), and each column is gathered
    once into the result page; the ``after`` conditions then select its rows (Arrow compute on the
    page's zero-copy export, then a second gather).  The result takes the core's fast paths to
    pandas, Arrow and polars, as a search's own pages do."""
    from . import _core

    (trim_names, trim_as), layout = _join_layout()
    rights = [(parts[record], "trim_id") + layout[record] for record, _ in PARTS]
    joined = _core.client.join(trims, "id", trim_names, trim_as, rights, "vehicle")
    if after and joined.rows:
        import pyarrow as pa
        import pyarrow.compute as pc

        t = pa.record_batch(joined)  # (the page's export, no labels: the rows are not final yet)
        mask = None
        for col, d in after:
            m = _rows_matching(pa, pc, t.column(col), d)
            mask = m if mask is None else pc.and_kleene(mask, m)
        keep = pc.indices_nonzero(pc.fill_null(mask, False)).cast(pa.int64()).to_numpy()  # NULL drops the row
        names = list(columns())
        joined = _core.client.gather([(joined, keep, names, names)], len(keep), "vehicle")
    # the fields the searches labelled synthetic, as vehicle columns: frames and Arrow tables label them
    joined.synthetic = synthetic_columns({"trim": trims.synthetic, **{r: parts[r].synthetic for r, _ in PARTS}})
    return joined


def dataset_key(pagers: Dict[str, Any], after: Sequence[Tuple[str, Dict[str, Any]]],
                page_size: Optional[int]) -> Tuple[str, str]:
    """The checkpoint's query digest and target of a vehicles search's Parquet dataset (the sync and
    the async ``to_parquet``: one dataset, resumable with either client)."""
    import hashlib

    from ._targets import build_target
    from .pager import _query_digest

    trims = pagers["trims"]
    text = "\n".join(["vehicles", repr(page_size), repr(list(after))] +
                     [_query_digest(p.path, p.params) for p in pagers.values()])
    return hashlib.sha256(text.encode()).hexdigest()[:16], "vehicles " + build_target(trims.path, trims.params)


class Whole:
    """The joined vehicles as the one page of a run of ``checkpoint.write_dataset``."""

    number = pages = 1

    def __init__(self, core: Any) -> None:
        self._core = core
        self.total = int(core.rows)

    def to_arrow(self) -> "pa.Table":
        return frames.page_to_arrow(self._core)


_POOL: Optional[concurrent.futures.ThreadPoolExecutor] = None
_POOL_LOCK = threading.Lock()


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    """The three threads the part crawls run on, kept between calls: a new thread per call would
    also allocate and page in its decoder's parser buffers (thread-local) for every call."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="vehicledata-join")
        return _POOL


def _forget_pool() -> None:  # a forked child has none of its parent's threads
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


class _PartCrawls:
    """The part crawls of one call (bodies, engines, mileages: ``crawl(resource)`` on the pool's threads),
    cancelled, not awaited, when the call fails or is interrupted: Ctrl-C (or any exception a signal
    handler raises, or a failed crawl) leaves the ``with`` block at once, and each crawl still running
    stops at its next interrupt check (at most 100 ms away: ``_core.client.CancelToken``) with
    ``concurrent.futures.CancelledError``, its requests and retry sleeps cut short."""

    def __init__(self, crawl: Callable[[str], Any]) -> None:
        from . import _core

        self._core = _core
        self.token = _core.client.CancelToken()
        pool = _pool()
        self.futures = {rec: pool.submit(self._run, crawl, res) for rec, res in PARTS}

    def _run(self, crawl: Callable[[str], Any], resource: str) -> Any:
        if self.token.cancelled:
            raise concurrent.futures.CancelledError("cancelled before it started")
        previous = self._core.client.set_thread_cancel(self.token)
        try:
            return crawl(resource)
        finally:
            self._core.client.set_thread_cancel(previous)

    def results(self) -> Dict[str, Any]:
        """Each part's result (record -> result), waited for; the first crawl to fail raises at once.

        Waited for in steps of 0.1 s: a wait without a timeout blocks in a lock that a signal delivered
        to another thread (os.kill picks any thread) never wakes, and Python runs its signal handlers
        only between the steps."""
        futures = list(self.futures.values())
        while True:
            done, running = concurrent.futures.wait(futures, timeout=0.1,
                                                    return_when=concurrent.futures.FIRST_EXCEPTION)
            for f in futures:
                if f in done and not f.cancelled() and f.exception() is not None:
                    raise f.exception()  # type: ignore[misc]
            if not running:
                return {rec: f.result() for rec, f in self.futures.items()}

    def cancel(self) -> None:
        self.token.cancel()
        for f in self.futures.values():
            f.cancel()  # one not started yet never starts

    def __enter__(self) -> "_PartCrawls":
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is not None:
            self.cancel()


class VehiclePager:
    """The vehicles of one search: four pagers joined on the trim id (see the module docstring)."""

    def __init__(self, pagers: Dict[str, "Pager"], after: Sequence[Tuple[str, Dict[str, Any]]]) -> None:
        self._pagers = pagers
        self._after = list(after)

    @property
    def trims(self) -> "Pager":
        """The trims search of the join (its ``total`` is an upper bound when a condition is applied after it)."""
        return self._pagers["trims"]

    def _joined(self, page_size: Optional[int]) -> Any:
        """The vehicles as one core page: the four whole-result crawls concurrently, then :func:`join_pages`."""
        with _PartCrawls(lambda res: self._pagers[res]._bulk_collected(page_size)) as crawls:
            trims = self._pagers["trims"]._bulk_collected(page_size)
            parts = crawls.results()
        return join_pages(trims, parts, self._after)

    def to_arrow(self, page_size: Optional[int] = None) -> "pa.Table":
        """Every vehicle in one Arrow table (the four crawls in pages of ``page_size``, default 1000)."""
        return frames.page_to_arrow(self._joined(page_size))

    def to_pandas(self, page_size: Optional[int] = None) -> "pd.DataFrame":
        """Every vehicle in one DataFrame (the dtypes of the other searches' frames; the core page's fast path)."""
        return frames.page_to_pandas(self._joined(page_size))

    def to_polars(self, page_size: Optional[int] = None) -> "pl.DataFrame":
        """Every vehicle in one polars DataFrame (the core page's Arrow export, numbers not copied)."""
        return frames.page_to_polars(self._joined(page_size))

    def iter_arrow(self, page_size: Optional[int] = None) -> Iterator["pa.Table"]:
        """One joined table per trims page: the parts are fetched whole first (concurrently), then the
        trims page by page."""
        parts = self._parts_only(page_size)
        for table in self._pagers["trims"].iter_arrow(page_size):
            yield join(table, parts, self._after)

    def _parts_only(self, page_size: Optional[int]) -> Dict[str, "pa.Table"]:
        with _PartCrawls(lambda res: self._pagers[res].to_arrow(page_size)) as crawls:
            return crawls.results()

    def iter_pandas(self, page_size: Optional[int] = None) -> Iterator["pd.DataFrame"]:
        """One DataFrame per trims page (see iter_arrow)."""
        for table in self.iter_arrow(page_size):
            yield frames.arrow_to_pandas(table)

    def to_parquet(self, path: Any, partition_cols: Optional[Sequence[str]] = None,
                   page_size: Optional[int] = None, *, mode: str = "refresh") -> Any:
        """Write the vehicles as a (Hive-partitioned) Parquet dataset under ``path``; returns the directory.

        The modes of ``Pager.to_parquet`` (``vehicledata.checkpoint``): ``"refresh"`` (default) writes
        the dataset again after a finished run (the join has no ``modified`` to fetch the changes
        by: a nightly snapshot, as ``"overwrite"``) and finishes an interrupted one; ``"resume"``
        fetches nothing after a finished run and says so (``CheckpointWarning``); ``"overwrite"``
        deletes the dataset's files and writes it again; ``"append"`` adds a run's files.  The
        join is one piece (the four crawls, then one page): a run writes one file per partition with
        row groups of at least 64k rows, then the checkpoint."""
        from . import checkpoint

        digest, target = dataset_key(self._pagers, self._after, page_size)

        def pages_from(number: int) -> Iterator[Any]:
            if number == 1:
                yield Whole(self._joined(page_size))

        return checkpoint.write_dataset(path, query=digest, target=target, first_page=1, pages_from=pages_from,
                                        partition_cols=partition_cols, mode=mode)

    def __iter__(self) -> Iterator["VehicleRecord"]:
        """The vehicles one by one (records typed ``VehicleRecord`` for type checkers), page by page."""
        from .pager import Record

        for table in self.iter_arrow():
            synthetic = _synthetic_of(table)
            for row in table.to_pylist():
                yield cast("VehicleRecord", Record(row, "vehicle", synthetic))

    def __repr__(self) -> str:
        return f"<VehiclePager {self._pagers['trims'].path} + bodies, engines, mileages: {len(self._after)} " \
               f"condition(s) after the join>"


class VehiclesResource:
    """``api.vehicles``: trims joined with their body, engine and mileage (see the module docstring)."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def __repr__(self) -> str:
        return "<VehiclesResource vehicles: trims + bodies + engines + mileages>"

    @property
    def filters(self) -> List[str]:
        """Keyword filters: the trims search's (each sent to all four searches)."""
        return self._client.trims.filters

    @property
    def fields(self) -> List[str]:
        """Columns of the vehicle rows, in order."""
        return list(columns())

    @property
    def condition_fields(self) -> Dict[str, str]:
        """Field a condition may name -> where it is applied (server: which searches; after the join)."""
        return dict(condition_table())

    def search(self, *conditions: Any, where: Any = None, sort: Optional[str] = None,
               direction: Optional[str] = None, limit: Optional[int] = None, progress: Optional[bool] = None,
               **filters: Any) -> VehiclePager:
        """The vehicles of a search: keyword filters as ``api.trims.search`` (sent to every crawl);
        conditions on trim fields and on ``body.``/``engine.``/``mileage.`` fields; ``sort`` and
        ``direction`` order the trims (so the rows); ``limit`` is the crawls' page size."""
        return VehiclePager(*searches(self._client._search, conditions, where, sort, direction, limit, filters,
                                      progress=progress))

    __call__ = search

    def get(self, trim_id: int) -> "VehicleRecord":
        """One vehicle by trim id: the columns of a row of ``search()`` (NotFoundError if no trim has it);
        typed ``VehicleRecord`` (``vehicledata._resources``) for type checkers: ``car.combined_mpg``."""
        return cast("VehicleRecord", vehicle_of(self.search(id_condition(trim_id)).to_arrow(), trim_id))


def searches(search_of: Callable[[str], Any], conditions: Sequence[Any], where: Any, sort: Optional[str],
             direction: Optional[str], limit: Optional[int], filters: Dict[str, Any], **options: Any
             ) -> Tuple[Dict[str, Any], List[Tuple[str, Dict[str, Any]]]]:
    """The four searches of a vehicles search (resource -> pager of ``search_of(resource)``: a sync
    or an async accessor, ``options`` passed to each) and the conditions applied after the join."""
    plan = _Plan(list(conditions) + ([where] if where is not None else []))
    pagers: Dict[str, Any] = {
        "trims": search_of("trims").search(plan.server["trims"], sort=sort, direction=direction, limit=limit,
                                           **options, **filters)}
    for record, resource in PARTS:
        pagers[resource] = search_of(resource).search(plan.server[resource], limit=limit, **options, **filters)
        # The part pages are decoded into the columns the join takes only (Pager.fields, which the
        # async pager passes to its engine): their copies of the trim's fields, most of their bytes,
        # are skipped by the decoder.
        pagers[resource].fields = _part_fields(record) + ["trim_id"]
    return pagers, plan.after


def id_condition(trim_id: Any) -> Any:
    """The condition of ``vehicles.get(trim_id)`` (QueryError for what is not an integer id)."""
    if isinstance(trim_id, bool) or not isinstance(trim_id, int):
        raise QueryError(f"vehicles.get() needs an integer trim id, not {trim_id!r}")
    return query.F("id") == trim_id


def vehicle_of(table: "pa.Table", trim_id: int) -> "Record":
    """The one vehicle of ``vehicles.get(trim_id)`` from its search's table (NotFoundError if none)."""
    from .pager import Record

    rows = table.slice(0, 1).to_pylist()
    if not rows:
        raise NotFoundError(f"no trim with id {trim_id}", status=404)
    return Record(rows[0], "vehicle", _synthetic_of(table))


__all__ = ["VehiclesResource", "VehiclePager", "PARTS", "columns", "condition_table", "condition_markdown", "join",
           "join_pages", "synthetic_columns", "searches", "id_condition", "vehicle_of", "dataset_key", "Whole"]
