"""Names and years of a search checked against the service's own lists, before the search is sent
(issue 40): a typo or an impossible year is a ``QueryError`` with a "did you mean", not an empty
result without a word.

    api.trims.search(year=2019, make="Toyta")    # QueryError: unknown make 'Toyta'; did you mean 'Toyota'? ...
    api.trims.search(make="Toyota", model="Camri")  # ... unknown model 'Camri' of make 'Toyota'; did you mean 'Camry'?
    api.trims.search(year=2035)                  # ... year 2035 is outside the service's model years 1984-2026

What is checked, on the searches of cars (not powersports), by keyword filter:

- ``year`` against ``/api/years/v2`` (the model years the client can see: without credentials the
  demo data-set's 2015-2020, and the message says so);
- ``make`` against ``/api/makes/v2`` (every make, one page of up to 1000);
- ``model``, when ``make`` is given as a name (no LIKE wildcard), against ``/api/models/v2?make=``:
  every model of that make, in any year (a model in a year it was not made is a legitimate empty
  result, not a typo);
- ``submodel``, when ``make`` and ``model`` are names, against ``/api/submodels/v2?make=&model=``.
  ``trim`` is not checked (its list would be the search itself).

Names compare as the service compares them: a value filter (``V`` in the schema table: trims v2,
bodies, engines ... v2) equal to a listed name with ASCII case ignored (the emulator's ``COLLATE
NOCASE``, the service's MySQL collation); a like filter (the deprecated endpoints, the makes and
models searches) a pattern that matches at least one listed name (SQL LIKE, case ignored).  A
search does not check the name it lists itself (``api.makes.search(make=...)``,
``api.models.search(model=...)``).

Each list is requested once per client (``Lists``: the sync client and the async client's inner
one hold one each) and kept for the client's life; a list that cannot be fetched (no network, a
401/403, a page that does not hold the whole list) is remembered as unknown and its check skipped:
the search goes on as before.  The plan and the checks are here, shared by both clients; only the
I/O differs (``check_now`` for ``vd.Client.search``, ``check_async`` awaited by ``AsyncPager``
before its first request).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from . import schema
from ._targets import build_target
from ._values import _like, did_you_mean
from .errors import QueryError, VehicleDataError, quoted

#: At most this many names are listed in a message (else their number only).
LIST_NAMES = 60
_PAGE = schema.MAX_LIMIT

Key = Tuple[str, ...]


@dataclass(frozen=True)
class Want:
    """A list a check needs: its cache key and the request that fetches it."""

    key: Key
    request: schema.BoundEndpoint  # the years (an array), or a search's one page (an envelope)
    column: str  # the column of the answer holding the values


class Lists:
    """The service's lists one client has fetched: key -> values (None: could not be fetched)."""

    def __init__(self) -> None:
        self._values: Dict[Key, Optional[List[Any]]] = {}
        self.pending: Dict[Key, Any] = {}  # key -> asyncio.Future of the async client's request in flight
        self._lock = threading.Lock()

    def __contains__(self, key: Key) -> bool:
        with self._lock:
            return key in self._values

    def get(self, key: Key) -> Optional[List[Any]]:
        with self._lock:
            return self._values.get(key)

    def store(self, key: Key, values: Optional[List[Any]]) -> None:
        with self._lock:
            self._values.setdefault(key, values)

    def keys(self) -> List[Key]:
        with self._lock:
            return list(self._values)


def values_of(want: Want, page: Any) -> Optional[List[Any]]:
    """The values of a list's answer (a core page); None when the page does not hold the whole list."""
    cols = page.to_lists()
    values = list(cols.get(want.column) or [])
    if want.request.shape is schema.Shape.ENVELOPE and int(dict(page.collection).get("total", page.rows)) > len(values):
        return None  # (more than one page: not the whole list)
    if want.key[0] == "years":
        return [int(v) for v in values if v is not None]
    return [str(v) for v in values if v is not None]


def _fold(text: str) -> str:
    """ASCII case folded, as SQLite's NOCASE (and LIKE) compare."""
    return "".join(c.lower() if c.isascii() else c for c in text)


def _wildcard(text: str) -> bool:
    return "%" in text or "_" in text


def _listed(kind: str, names: Sequence[str]) -> str:
    if len(names) <= LIST_NAMES:
        return f" Valid: {', '.join(sorted(names, key=_fold))}."
    return f" The service lists {len(names)} {kind}s (api.{kind}s.search())."


class Check:
    """The checks one search needs (``plan``): call ``step(lists)`` until it returns no list to
    fetch; it raises QueryError on the first name or year the fetched lists refuse."""

    def __init__(self, ep: schema.Endpoint, params: Sequence[Tuple[str, Any]], authenticated: bool) -> None:
        self.path = ep.path
        self.authenticated = authenticated
        match = dict(ep.filters)
        given = {k: v for k, v in params if k in ("year", "make", "model", "submodel")}
        self.year: Optional[int] = None
        if "year" in given:
            try:
                self.year = int(str(given["year"]).strip())
            except ValueError:
                self.year = None  # (the service answers 400 naming it)
        self.make = given.get("make") if ep.resource != "makes" and isinstance(given.get("make"), str) else None
        self.make_like = match.get("make") == "like"
        model = given.get("model") if ep.resource != "models" else None
        self.model = model if isinstance(model, str) and self.make is not None and not _wildcard(self.make) else None
        self.model_like = match.get("model") == "like"
        submodel = given.get("submodel") if ep.resource != "submodels" else None
        self.submodel = submodel if isinstance(submodel, str) and self.model is not None and \
            not _wildcard(self.model) else None
        self.submodel_like = match.get("submodel") == "like"

    def __bool__(self) -> bool:
        return self.year is not None or self.make is not None or self.model is not None

    # ---- the lists ------------------------------------------------------------------------
    @staticmethod
    def _years() -> Want:
        return Want(("years",), schema.endpoint_for(schema.Kind.YEARS, "years").bind(), "year")

    @staticmethod
    def _makes() -> Want:
        ep = schema.endpoint_for(schema.Kind.SEARCH, "makes")
        return Want(("makes",), ep.bind(build_target(ep.path, [("limit", _PAGE)])), "name")

    @staticmethod
    def _models(make: str) -> Want:
        ep = schema.endpoint_for(schema.Kind.SEARCH, "models")
        return Want(("models", _fold(make)), ep.bind(build_target(ep.path, [("make", make), ("limit", _PAGE)])),
                    "name")

    @staticmethod
    def _submodels(make: str, model: str) -> Want:
        ep = schema.endpoint_for(schema.Kind.SEARCH, "submodels")
        return Want(("submodels", _fold(make), _fold(model)),
                    ep.bind(build_target(ep.path, [("make", make), ("model", model), ("limit", _PAGE)])), "submodel")

    def step(self, lists: Lists) -> List[Want]:
        """The lists still to fetch (none: every check passed); QueryError for what a fetched list refuses."""
        wants: List[Want] = []
        for want, wanted in ((self._years(), self.year is not None), (self._makes(), self.make is not None)):
            if wanted and want.key not in lists:
                wants.append(want)
        if wants:
            return wants
        if self.year is not None:
            self._check_year(lists.get(("years",)))
        if self.make is not None:
            self._check_make(lists.get(("makes",)))
        if self.model is not None:
            assert self.make is not None
            want = self._models(self.make)
            if want.key not in lists:
                return [want]
            self._check_model(lists.get(want.key))
        if self.submodel is not None:
            assert self.make is not None and self.model is not None
            want = self._submodels(self.make, self.model)
            if want.key not in lists:
                return [want]
            self._check_submodel(lists.get(want.key))
        return []

    # ---- the checks -----------------------------------------------------------------------
    def _check_year(self, years: Optional[List[int]]) -> None:
        demo = not self.authenticated
        if not years:
            if not demo:
                return
            years = list(range(schema.DEMO_YEARS[0], schema.DEMO_YEARS[1] + 1))  # the service's demo range
        assert self.year is not None
        if self.year in years:
            return
        lo, hi = min(years), max(years)
        if demo:
            raise QueryError(f"year {self.year} for {self.path} is outside the demo data-set's model years {lo}-{hi}: "
                             f"without a subscription (no api_token/api_secret) the service serves only those",
                             field="year")
        if lo <= self.year <= hi:  # (a gap in the list)
            raise QueryError(f"year {self.year} for {self.path} is not one of the service's model years "
                             f"({lo}-{hi} without {self.year})", field="year")
        raise QueryError(f"year {self.year} for {self.path} is outside the service's model years {lo}-{hi}",
                         field="year")

    def _unknown(self, kind: str, value: str, names: List[str], of: str = "") -> QueryError:
        hint = did_you_mean(value, names, loose=True, fold=_fold, otherwise=".")
        demo = (f" Without a subscription (no api_token/api_secret) the service lists only the {kind}s of its "
                f"demo data-set, model years {schema.DEMO_YEARS[0]}-{schema.DEMO_YEARS[1]}.") \
            if not self.authenticated else ""
        return QueryError(f"unknown {kind} {quoted(value)}{of} for {self.path}{hint}{_listed(kind, names)}{demo}",
                          field=kind)

    @staticmethod
    def _matches(value: str, like: bool, names: List[str]) -> bool:
        if like:
            rx = _like(value)
            return any(rx.match(n) for n in names)
        folded = _fold(value)
        return any(_fold(n) == folded for n in names)

    def _check_make(self, makes: Optional[List[str]]) -> None:
        assert self.make is not None
        if makes and not self._matches(self.make, self.make_like, makes):
            raise self._unknown("make", self.make, makes)

    def _check_model(self, models: Optional[List[str]]) -> None:
        assert self.model is not None and self.make is not None
        if models is None:
            return
        if not self._matches(self.model, self.model_like, models):
            raise self._unknown("model", self.model, models, f" of make {quoted(self.make)}")

    def _check_submodel(self, submodels: Optional[List[str]]) -> None:
        assert self.submodel is not None and self.make is not None and self.model is not None
        if not submodels:  # (none listed, or not fetched: nothing to say)
            return
        if not self._matches(self.submodel, self.submodel_like, submodels):
            raise self._unknown("submodel", self.submodel, _distinct(submodels),
                                f" of {quoted(self.make)} {quoted(self.model)}")


def covers(ep: schema.Endpoint) -> bool:
    """Whether searches of ``ep`` have their names and ``year`` checked here."""
    return ep.kind is schema.Kind.SEARCH and not ep.resource.startswith("powersports") and ep.resource != "obd_codes"


def _distinct(names: List[str]) -> List[str]:
    seen: Dict[str, str] = {}
    for n in names:
        seen.setdefault(_fold(n), n)
    return list(seen.values())


def plan(ep: schema.Endpoint, params: Sequence[Tuple[str, Any]], authenticated: bool) -> Optional[Check]:
    """The checks a search of ``ep`` with ``params`` needs, or None (nothing to check)."""
    if not covers(ep):
        return None
    check = Check(ep, params, authenticated)
    return check if check else None


def check_now(check: Optional[Check], lists: Lists, get_page: Callable[[schema.BoundEndpoint], Any]) -> None:
    """Run ``check`` with the sync client's ``get_page(request)`` (its Fetcher's)."""
    if check is None:
        return
    while True:
        wants = check.step(lists)
        if not wants:
            return
        for want in wants:
            lists.store(want.key, _fetched(want, lambda: get_page(want.request)))


async def check_async(check: Optional[Check], lists: Lists,
                      get_page: Callable[[schema.BoundEndpoint], Awaitable[Any]]) -> None:
    """Run ``check`` with the async client's ``get_page``, awaited (the same steps as check_now).
    Concurrent checks of one client (``api.vehicles``' four searches) share each list's request."""
    import asyncio

    if check is None:
        return
    loop = asyncio.get_running_loop()
    while True:
        wants = check.step(lists)
        if not wants:
            return
        for want in wants:
            pending = lists.pending.get(want.key)
            if pending is not None and pending.get_loop() is loop:
                await asyncio.shield(pending)
                continue
            future: "asyncio.Future[None]" = loop.create_future()
            lists.pending[want.key] = future
            try:
                try:
                    page: Any = await get_page(want.request)
                except VehicleDataError:
                    page = None
                lists.store(want.key, _fetched(want, lambda: page))
            finally:
                lists.pending.pop(want.key, None)
                if not future.done():
                    future.set_result(None)


def _fetched(want: Want, fetch: Callable[[], Any]) -> Optional[List[Any]]:
    try:
        page = fetch()
        return None if page is None else values_of(want, page)
    except VehicleDataError:  # no network, no permission...: the check is skipped, the search goes on
        return None


__all__ = ["Check", "covers", "Lists", "Want", "plan", "check_now", "check_async", "values_of"]
