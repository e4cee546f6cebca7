"""The Python client: ``vd.Client`` and one accessor per resource.

    import vehicledata as vd
    with vd.Client() as api:                         # VEHICLEDATA_API_TOKEN/SECRET/BASE_URL, or arguments
        for trim in api.trims.search(year=2019, make="BMW"):
            print(trim.id, trim.description, trim.msrp)
        df = api.engines.search(vd.F("horsepower_hp") >= 300, year=2020).to_pandas()
        detail = api.trims.get(9366)                 # trim with bodies, engines, mileages, colours

Without credentials the client works on the demo data-set (model years
2015-2020), as the service does.  Transfers, retries, the JWT and decoding run
in the C++ core (``vehicledata._core.client``) with the GIL released.
"""
from __future__ import annotations

import logging
import numbers
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union
from urllib.parse import parse_qsl

from . import _core, _names, _tls, _values, schema
from ._targets import build_target, check_target, endpoint_path, strip_userinfo
from ._fetcher import Fetcher
from ._readable import readable
from .auth import credentials, jwt_cache_path, mask
from .errors import NotFoundError, QueryError, VehicleDataError
from .options import DEFAULT, ClientOptions, options_of
from .options import NAMES as OPTION_NAMES
from .pager import Page, Pager, Record, records_of
from .retry import Retry
from .schema import Kind

if TYPE_CHECKING:  # pragma: no cover
    from ._resources import (MakesResource, ModelsResource, SubmodelsResource, TrimsResource,
                             BodiesResource, EnginesResource, MileagesResource, ExteriorColorsResource,
                             InteriorColorsResource, ObdCodesResource, VehiclesResource)
    from .feed import DataFeed
    from .vin import VinResult
    from .vin_online import VinAccessor

logger = logging.getLogger("vehicledata")

def core_log(level: int, message: str) -> None:
    """The C++ core's log lines (the sync core's and vehicledata.aio's Engine's), with a request's
    ``json`` condition shown decoded (``_readable``).
    A long wait (WARNING: a sleep over 2 s) is also shown on the progress bars open at the time."""
    if level >= logging.WARNING:
        _show_wait(message)
    if logger.isEnabledFor(level):
        logger.log(level, readable(message))


def _show_wait(message: str) -> None:
    """``waiting 60 s: HTTP 503 (Retry-After 60)`` as the postfix of every open tqdm bar."""
    import re

    tqdm = sys.modules.get("tqdm")
    if tqdm is None:
        return
    m = re.search(r" in ([\d.]+) s \(retry \d+ of \d+\) after (.*)$", message) or \
        re.search(r"waiting ([\d.]+) s (for .*)$", message)
    text = f"waiting {float(m.group(1)):.0f} s: {m.group(2)}" if m else message
    for bar in list(getattr(tqdm.tqdm, "_instances", ())):
        try:
            bar.set_postfix_str(text[:80])
        except Exception:  # pragma: no cover - a closed bar
            continue


DEFAULT_BASE_URL: str = _core.client.DEFAULT_BASE_URL
USER_AGENT: str = _core.client.USER_AGENT


def _paths(kind: Kind) -> Dict[str, Tuple[str, Optional[str]]]:
    """accessor -> (path, the deprecated path it replaces or None) of a kind, from the schema table."""
    out: Dict[str, Tuple[str, Optional[str]]] = {}
    for resource in schema.resources(kind):
        ep = schema.endpoint_for(kind, resource)
        out[resource] = (ep.path, ep.deprecates or None)
    return out


_SEARCHES = _paths(Kind.SEARCH)
#: The accessors of the searches of the schema table (``api.trims``...): vd.Client's and vd.AsyncClient's.
SEARCH_NAMES: Tuple[str, ...] = tuple(_SEARCHES)
_DETAILS = _paths(Kind.DETAIL)
_DIRECTIONS = ("asc", "desc")

Conditions = Any  # Condition, list of Conditions, dicts or JSON text (see vehicledata.query)


def _deprecated(path: str, replacement: str) -> None:
    warnings.warn(f"{path} is deprecated by the service; use {replacement}", DeprecationWarning, stacklevel=4)


_unknown = _values.unknown_name  # the message for an unknown name (its home: _values.py)


def _encode_conditions(conditions: Sequence[Any], where: Any, path: str) -> Optional[str]:
    """The ``json`` text of a search: its conditions, then ``where`` (JSON text joins as is,
    parsed by the core), checked against ``path`` and encoded in one call into the C++ core."""
    items: List[Any] = []
    for c in conditions:
        if isinstance(c, (list, tuple)):
            items.extend(c)
        else:
            items.append(c)
    if where is not None:
        if isinstance(where, (list, tuple)):
            items.extend(where)
        else:
            items.append(where)
    if not items:
        return None
    from . import query

    try:
        text = query.encode(items, endpoint=path)
    except QueryError as exc:
        valid = schema.endpoint(path).json_field_names()
        name = getattr(exc, "field", None)
        if name and valid and name not in valid and "unknown json field" in exc.message:
            raise QueryError(_unknown("json field", name, valid, path), field=name,
                             op=getattr(exc, "op", None)) from None
        raise
    return None if text == "[]" else text  # only empty where= text: no json parameter, as without one


def _warn_demo_years(client: "Client", filters: Dict[str, Any], conditions: Sequence[Any], path: str) -> None:
    """DemoDataWarning when an anonymous client names a model year outside the demo data-set in a
    condition (a ``year=`` keyword of a car search is a QueryError of ``vehicledata._names``)."""
    if client.authenticated:
        return
    lo, hi = schema.DEMO_YEARS
    years: List[Any] = []
    if "year" in filters and filters["year"] is not None and not _names.covers(schema.endpoint(path)):
        years.append(filters["year"])
    for c in conditions:
        for item in (c if isinstance(c, (list, tuple)) else [c]):
            d = item.to_dict() if hasattr(item, "to_dict") else item
            if isinstance(d, dict) and d.get("field") == "year" and d.get("op") in ("=", "in", ">", ">=", "<", "<="):
                val = d.get("val")
                bad_side = {"=": None, "in": None, ">": "hi", ">=": "hi", "<": "lo", "<=": "lo"}[d["op"]]
                for v in (val if isinstance(val, (list, tuple)) else [val]):
                    try:
                        y = int(v)
                    except (TypeError, ValueError):
                        continue
                    if bad_side == "hi" and y < hi:
                        continue
                    if bad_side == "lo" and y > lo:
                        continue
                    years.append(y)
    outside = []
    for y in years:
        try:
            if not lo <= int(y) <= hi:
                outside.append(int(y))
        except (TypeError, ValueError):
            continue
    if outside:
        from .errors import DemoDataWarning

        warnings.warn(f"{path}: without a subscription (no api_token/api_secret) the service serves only the "
                      f"demo model years {lo}-{hi}; year {outside[0]} gives no rows", DemoDataWarning, stacklevel=5)


def _cache_dir(cache: Any) -> Optional[Path]:
    """The response cache's directory: None (off) for None/False, ``$VEHICLEDATA_HOME/responses`` for True."""
    from .auth import data_home

    if cache is None or cache is False:
        return None
    if cache is True:
        return data_home() / "responses"
    if isinstance(cache, (str, os.PathLike)) and str(cache).strip():
        return Path(cache).expanduser()
    raise ValueError(f"cache must be True, False/None or a directory, not {cache!r}")


def _cache_ttl(ttl: Optional[float]) -> float:
    """``cache_ttl`` in seconds for the core (0: no expiry, for None)."""
    if ttl is None:
        return 0.0
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
        raise ValueError(f"cache_ttl must be a number of seconds > 0 (None: until evicted), not {ttl!r}")
    return float(ttl)


def _with_max_wait(policy: Retry, max_wait: Optional[float]) -> Retry:
    """``policy`` with another ``max_wait`` (Retry is immutable)."""
    if max_wait is None:
        return policy
    if isinstance(max_wait, bool) or not isinstance(max_wait, (int, float)) or max_wait < 0:
        raise ValueError(f"max_wait must be a number of seconds >= 0, not {max_wait!r}")
    return Retry(total=policy.total, backoff_factor=policy.backoff_factor, backoff_max=policy.backoff_max,
                 backoff_jitter=policy.backoff_jitter, status_forcelist=set(policy.status_forcelist),
                 respect_retry_after=policy.respect_retry_after, max_wait=float(max_wait),
                 retry_transport_errors=policy.retry_transport_errors)


class _Resource:
    """Base of the accessors: knows the client and builds requests."""

    def __init__(self, client: "Client", name: str) -> None:
        self._client = client
        self._name = name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._name}>"


class SearchRequests(_Resource):
    """The request builders of a search endpoint (v2 by default; ``legacy=True`` for the deprecated
    one) and what it accepts: shared by :class:`SearchResource` and its asyncio twin
    ``vehicledata.aio.AsyncSearchResource``, which send what these build."""

    def __init__(self, client: "Client", name: str, path: str, legacy_path: Optional[str],
                 detail: Optional[str] = None, legacy_detail: Optional[str] = None) -> None:
        super().__init__(client, name)
        self.path = path
        self.legacy_path = legacy_path
        self.detail_path = detail
        self.legacy_detail_path = legacy_detail

    def _endpoint(self, legacy: bool) -> schema.Endpoint:
        if legacy:
            if not self.legacy_path:
                raise QueryError(f"{self._name} has no deprecated endpoint")
            _deprecated(self.legacy_path, self.path)
            return schema.endpoint(self.legacy_path)
        return schema.endpoint(self.path)

    @property
    def filters(self) -> List[str]:
        """Keyword filters accepted by the v2 search (from the schema table)."""
        return schema.endpoint(self.path).filter_names()

    @property
    def json_fields(self) -> List[str]:
        """Fields usable in conditions (``vd.F(name)``) on the v2 search (from the schema table)."""
        return schema.endpoint(self.path).json_field_names()

    @property
    def sort_keys(self) -> List[str]:
        """Values accepted by ``sort=`` on the v2 search (from the schema table)."""
        return list(schema.endpoint(self.path).sort_keys)

    @property
    def fields(self) -> List[str]:
        """Fields of the records the search returns."""
        return schema.record(schema.endpoint(self.path).record).field_names()

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | {"filters", "json_fields", "sort_keys", "fields", "search", "get"})

    @staticmethod
    def _start_page(ep: schema.Endpoint, params: List[Tuple[str, Any]], start_page: int,
                    start_token: Optional[str]) -> int:
        if start_token is None:
            return start_page
        from .pager import token_page

        return token_page(start_token, ep.path, params)

    def _query(self, conditions: Sequence[Any], where: Any, sort: Optional[str], direction: Optional[str],
               limit: Optional[int], start_page: int, verbose: Optional[bool], legacy: bool,
               start_token: Optional[str], filters: Dict[str, Any]) -> Tuple[str, str, List[Tuple[str, Any]], int]:
        """(path, record, params, start_page) of a search, checked as search() does (vehicledata.aio)."""
        ep = self._endpoint(legacy)
        params = self._client._params(ep, filters, conditions, where, sort, direction, limit, verbose)
        return ep.path, ep.record, params, self._start_page(ep, params, start_page, start_token)

    def _detail(self, key: Union[int, str], verbose: Optional[bool], legacy: bool) -> schema.BoundEndpoint:
        """The request of a detail, checked (shared with vehicledata.aio)."""
        path = self.legacy_detail_path if legacy else self.detail_path
        if not path:
            raise QueryError(f"{self._name} has no {'deprecated ' if legacy else ''}detail endpoint")
        if legacy:
            _deprecated(path, self.detail_path or self.path)
        ep = schema.endpoint(path)
        if isinstance(key, bool) or (not isinstance(key, int) and not (isinstance(key, str) and key.strip())):
            raise QueryError(f"{self._name}.get() needs an id, not {key!r}")
        if ep.parameter == "id" and not (isinstance(key, int) or str(key).isdigit()):
            raise QueryError(f"{self._name}.get() needs an integer id, not {key!r}")
        target = endpoint_path(ep, key)
        params: List[Tuple[str, Any]] = []
        if verbose is not None:
            if not ep.verbose:
                raise QueryError(f"{path} does not accept verbose")
            params.append(("verbose", "yes" if verbose else "no"))
        return ep.bind(build_target(target, params))

    def _not_found_hint(self, exc: NotFoundError) -> None:
        if self._name == "obd_codes" and not self._client.authenticated:
            exc.message += (" (hint: without a subscription the service serves only its demo OBD codes; "
                            "pass api_token/api_secret for the full list)")
            exc.args = (exc.message,)


class SearchResource(SearchRequests):
    """A search endpoint (v2 by default; ``legacy=True`` for the deprecated one)."""

    def search(self, *conditions: Conditions, where: Conditions = None, sort: Optional[str] = None,
               direction: Optional[str] = None, limit: Optional[int] = None, start_page: int = 1,
               verbose: Optional[bool] = None, legacy: bool = False, parallel: bool = True,
               progress: Optional[bool] = None, start_token: Optional[str] = None, **filters: Any) -> Pager:
        """A lazy :class:`Pager` over the matching records.

        Keyword filters are the endpoint's (``api.trims.filters``), checked
        against the schema table; ``conditions``/``where`` build the ``json``
        parameter (``vd.F("year") >= 2018``, dicts or JSON text); ``limit`` is
        the page size (1..1000); ``start_page`` resumes at a page, ``start_token`` at the page
        after the one whose ``resume_token`` it is (same query required; stable across processes).

        ``year``, ``make``, ``model`` and ``submodel`` are checked against the service's own lists
        (``/api/years/v2``, ``/api/makes/v2``, the make's ``/api/models/v2``, the model's
        ``/api/submodels/v2``; each fetched once per client, here, before the search is sent): a typo or a year the service does not have raises QueryError with a
        "did you mean" or the range of years (``vehicledata._names``); a list that cannot be
        fetched skips its check.
        """
        # (_params is called from here, not through _query: its warnings point at the caller's line)
        ep = self._endpoint(legacy)
        params = self._client._params(ep, filters, conditions, where, sort, direction, limit, verbose)
        self._client._check_names(ep, params)
        return Pager(self._client._fetcher, ep.path, ep.record, params,
                     start_page=self._start_page(ep, params, start_page, start_token), parallel=parallel,
                     progress=progress)

    __call__ = search

    def sync(self, *conditions: Conditions, since: Any = None, page_size: Optional[int] = None,
             **filters: Any) -> Tuple["Any", Any]:
        """Incremental sync: ``(frame, watermark)`` of the records matching the conditions and
        filters whose ``modified`` is after ``since`` (a datetime, pd.Timestamp, np.datetime64, ISO
        8601 text or the previous watermark; None: everything), and the new watermark (the largest
        ``modified`` seen, ``since`` when nothing changed; for records served without ``modified``
        the time the sync started).  On every search that filters on ``modified`` (QueryError
        elsewhere, and for a ``since`` that is not a time).

            df, mark = api.trims.sync(since=None)              # first run: everything
            df, mark = api.trims.sync(vd.F("year") >= 2019, since=mark)   # later: what changed since

        Times are compared as instants, also across the fall-back hour (``vehicledata.sync``); a
        record is returned once (its latest version).  The service keeps ``modified`` to the second:
        a record changed in the same second as the watermark, after the sync read it, is seen by
        neither run; overlap by a second (``since=mark - timedelta(seconds=1)``) if that matters.
        ``sync(mark)`` (the watermark as the first positional argument) is taken as ``since=mark``.
        """
        from . import sync as _sync

        return _sync.sync(self, conditions, since, page_size, filters)

    def get(self, key: Union[int, str], *, verbose: Optional[bool] = None, legacy: bool = False) -> Record:
        """One record by id (trims: the trim with bodies, engines, mileages and colours)."""
        request = self._detail(key, verbose, legacy)
        try:
            return self._client._one(request, verbose=bool(verbose))
        except NotFoundError as exc:
            self._not_found_hint(exc)
            raise


def _wrapped(text: str, width: int = 92, indent: str = "    ") -> str:
    import textwrap

    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ")


def _resource_doc(name: str) -> str:
    """The docstring of ``api.<name>``: its endpoint, filters, json fields, sort keys and fields."""
    path, legacy = _SEARCHES[name]
    ep = schema.endpoint(path)
    lines = [f"``api.{name}``: search {path}" + (f" (deprecated: {legacy})" if legacy else "") + ".", ""]
    lines.append(_wrapped("Keyword filters: " + (", ".join(ep.filter_names()) or "none") + "."))
    lines.append(_wrapped("json fields (vd.F(...)): " + (", ".join(ep.json_field_names()) or "none") + "."))
    lines.append(_wrapped("sort keys: " + (", ".join(ep.sort_keys) or "none") + "."))
    lines.append(_wrapped("record fields: " + ", ".join(schema.record(ep.record).field_names()) + "."))
    return "\n".join(lines)


_RESOURCE_CLASSES: Dict[Tuple[str, type], type] = {}


def resource_class(name: str, base: type) -> type:
    """A subclass of ``base`` (SearchResource, or vehicledata.aio's AsyncSearchResource) per
    resource whose class and ``search`` docstrings list what it accepts."""
    cls = _RESOURCE_CLASSES.get((name, base))
    if cls is None:
        import functools

        doc = _resource_doc(name)
        members: Dict[str, Any] = {"__doc__": doc, "__module__": base.__module__}
        if base is SearchResource:  # (the async search keeps its own frame count: its warnings' stacklevel)
            @functools.wraps(SearchResource.search)
            def search(self: SearchResource, *args: Any, **kwargs: Any) -> Pager:
                return SearchResource.search(self, *args, **kwargs)

            search.__doc__ = (SearchResource.search.__doc__ or "") + "\n" + doc
            members.update(search=search, __call__=search)
        camel = "".join(part.capitalize() for part in name.split("_"))
        prefix = "" if base is SearchResource else "Async"
        cls = _RESOURCE_CLASSES[(name, base)] = type(f"{prefix}{camel}Resource", (base,), members)
    return cls


def search_resource(client: "Client", name: str, base: type) -> Any:
    """``api.<name>`` of ``client``: the ``base`` class's resource of that search (vd.Client's and vd.AsyncClient's)."""
    path, legacy = _SEARCHES[name]
    detail, legacy_detail = _DETAILS.get(name, (None, None))
    return resource_class(name, base)(client, name, path, legacy, detail, legacy_detail)


class YearsResource(_Resource):
    """``api.years(make="BMW")`` -> list of years, newest first
    (``api.powersports_years(type="street_motorcycle")``: street motorcycles)."""

    def __init__(self, client: "Client", name: str) -> None:
        super().__init__(client, name)
        ep = schema.endpoint_for(Kind.YEARS, name)
        self.path: str = ep.path
        self.legacy_path: Optional[str] = ep.deprecates or None

    def __call__(self, *conditions: Conditions, where: Conditions = None, legacy: bool = False,
                 **filters: Any) -> List[int]:
        return self.values(self._client._fetcher.get_page(self.request(conditions, where, legacy, filters)))

    @staticmethod
    def values(page: Any) -> List[int]:
        """The years of an answer (a core page)."""
        return [int(y) for y in page.to_lists()["year"]]

    def request(self, conditions: Sequence[Any], where: Any, legacy: bool,
                filters: Dict[str, Any]) -> schema.BoundEndpoint:
        """The request of the years, checked (shared with vehicledata.aio)."""
        path = self.path
        if legacy:
            if self.legacy_path is None:
                raise TypeError(f"{self.path} has no legacy endpoint")
            _deprecated(self.legacy_path, self.path)
            path = self.legacy_path
        ep = schema.endpoint(path)
        params = self._client._params(ep, filters, conditions, where, None, None, None, None)
        return ep.bind(check_target(build_target(ep.path, params)))

    list = __call__


class VehicleAttributes(_Resource):
    """``api.vehicle_attributes("engines.fuel_type")`` -> list of valid values."""

    path = schema.endpoint_for(Kind.ATTRIBUTES).path

    def __call__(self, attribute: str) -> List[str]:
        return self.values(self._client._fetcher.get_page(self.request(attribute)))

    @staticmethod
    def values(page: Any) -> List[str]:
        """The values of an answer (a core page)."""
        return [str(v) for v in page.to_lists()["value"]]

    def request(self, attribute: str) -> schema.BoundEndpoint:
        """The request of an attribute's values, checked (shared with vehicledata.aio)."""
        known = schema.attributes()
        if attribute not in known:
            raise QueryError(_unknown("attribute", attribute, known, self.path))
        return schema.endpoint(self.path).bind(build_target(self.path, [("attribute", attribute)]))

    @property
    def names(self) -> List[str]:
        return schema.attributes()


class Account(_Resource):
    """Usage counters of the account."""

    def requests(self) -> List[Record]:
        """Requests per day since last month: records (date, count)."""
        return records_of(self._client._fetcher.get_page(schema.endpoint_for(Kind.ACCOUNT_REQUESTS).bind()))

    def requests_today(self) -> int:
        rec = self._client._one(schema.endpoint_for(Kind.ACCOUNT_TODAY).bind())
        return int(rec["count"])


def json_target(path: str, params: Dict[str, Any]) -> str:
    """The target of ``get_json(path, **params)``: ``params`` merged with a query string already in
    ``path`` (shared with vehicledata.aio)."""
    base, _, query = path.partition("?")
    merged = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in params]
    return check_target(build_target(base, merged + list(params.items())))


def json_of(r: Dict[str, Any]) -> Any:
    """The parsed JSON body of a raw answer (the core's ``get``), DecodeError when it is not JSON."""
    import json

    from .errors import DecodeError

    try:
        text = r["body"].decode("utf-8")
    except UnicodeDecodeError as e:
        raise DecodeError(f"response body is not valid UTF-8 at byte {e.start}", url=r["url"],
                          position=e.start) from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise DecodeError(f"malformed JSON: {e}", url=r["url"]) from None
    except RecursionError:
        raise DecodeError("malformed JSON: nested too deeply", url=r["url"]) from None


class Client:
    """A client of the Vehicle Data Service (or of the local emulator).

    Arguments fall back to ``VEHICLEDATA_API_TOKEN``, ``VEHICLEDATA_API_SECRET``
    and ``VEHICLEDATA_BASE_URL`` (default https://carapi.app).  ``timeout`` is
    the total time of one transfer in seconds, ``connect_timeout`` that of the
    connection; ``retry`` a :class:`Retry`, an int or None; ``rate_limit`` and
    ``login_rate_limit`` are per minute (None or 0: no client-side limit, e.g.
    for the emulator); ``rate_limit_burst`` is how many requests go out at once
    before the rate applies (default: a tenth of ``rate_limit``, 60 at 600/min,
    so a short notebook query is not slowed; the refill rate is lowered by as much,
    so no 60-second window exceeds ``rate_limit``); ``jwt_cache=True`` (or a directory) keeps the JWT on
    disk between processes (mode 0600); ``progress`` shows tqdm bars on
    multi-page work (default: only in Jupyter); ``compress`` asks for gzip
    bodies (default: yes, except on the loopback interface).  Limits against
    hostile servers (docs/client.md, "Limits"; exceeding one raises
    :class:`LimitError`): ``max_body`` bytes on the wire and
    ``max_decompressed`` bytes after gzip for an answer kept in memory (256 MiB
    each), ``max_pages`` announced by an envelope (100,000); a transfer slower
    than ``low_speed_limit`` bytes/s for ``timeout`` seconds ends as a
    :class:`Timeout` (1024; 0: off).  ``max_wait`` (seconds; default the retry policy's, 120) caps the
    total a call (one request, or one crawl: ``to_pandas()``, an iteration) may sleep before its
    retries: past it the request's error is raised (a
    ``RateLimitError`` or ``ServiceUnavailableError`` with ``retry_after``) instead of sleeping.  A
    sleep over 2 s is logged at WARNING and shown on the open progress bars.

    ``cache`` (off by default; ``True``: ``$VEHICLEDATA_HOME/responses``, or a directory) keeps
    the answers of searches, details and the other data GETs on disk, so a re-run notebook spends
    no rate limit: for ``cache_ttl`` seconds (default 3600; None: until evicted) the same request
    by the same access tier (anonymous, or the same account) is answered from the file, with no
    request sent.  The directory holds at most ``cache_max_bytes`` (256 MiB; least recently used
    answers deleted past it); files are mode 0600, written atomically.  Downloads, logins and the
    account's usage are never cached.  docs/client.md, "Response cache".

    ``options``: all of these as one :class:`vehicledata.ClientOptions` (the keywords are a
    shorthand for its fields; a keyword left out, ``DEFAULT``, is that field's default), the same
    object ``vd.AsyncClient(options=...)`` takes.  Giving ``options`` and a keyword is a
    ``TypeError``.  ``api.options`` is the ClientOptions the client was made from.
    """

    def __init__(self, api_token: Optional[str] = DEFAULT, api_secret: Optional[str] = DEFAULT,
                 base_url: Optional[str] = DEFAULT, *, timeout: float = DEFAULT, connect_timeout: float = DEFAULT,
                 retry: Union[Retry, int, None] = DEFAULT, rate_limit: Optional[float] = DEFAULT,
                 login_rate_limit: Optional[float] = DEFAULT,
                 jwt_cache: Union[bool, str, "os.PathLike[str]"] = DEFAULT, max_parallel: int = DEFAULT,
                 verify: Union[bool, str] = DEFAULT, proxy: Optional[str] = DEFAULT, http2: bool = DEFAULT,
                 progress: Optional[bool] = DEFAULT, user_agent: Optional[str] = DEFAULT,
                 compress: Optional[bool] = DEFAULT, rate_limit_burst: Optional[float] = DEFAULT,
                 max_body: int = DEFAULT, max_decompressed: int = DEFAULT, max_pages: int = DEFAULT,
                 low_speed_limit: int = DEFAULT, max_wait: Optional[float] = DEFAULT,
                 cache: Union[bool, str, "os.PathLike[str]", None] = DEFAULT, cache_ttl: Optional[float] = DEFAULT,
                 cache_max_bytes: int = DEFAULT, options: Optional[ClientOptions] = None) -> None:
        given = dict(locals())  # (the keywords as given; DEFAULT: left out)
        #: The settings this client was made from (``options=``, or the keywords as a ClientOptions).
        self.options: ClientOptions = options_of(type(self).__name__, options, {n: given[n] for n in OPTION_NAMES})
        o = self.options
        token, secret = credentials(o.api_token, o.api_secret)
        url = strip_userinfo((o.base_url or os.environ.get("VEHICLEDATA_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"))
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, not {url!r}")
        if o.timeout is None or o.timeout <= 0 or o.connect_timeout is None or o.connect_timeout <= 0:
            raise ValueError("timeout and connect_timeout must be positive numbers of seconds (never infinite)")
        if o.max_parallel < 1:
            raise ValueError(f"max_parallel must be >= 1, not {o.max_parallel}")
        for name, value in (("max_body", o.max_body), ("max_decompressed", o.max_decompressed),
                            ("max_pages", o.max_pages), ("low_speed_limit", o.low_speed_limit)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0 (0: no limit), not {value!r}")
        self.cache_dir: Optional[Path] = _cache_dir(o.cache)
        ttl = _cache_ttl(o.cache_ttl)
        if isinstance(o.cache_max_bytes, bool) or not isinstance(o.cache_max_bytes, int) or o.cache_max_bytes < 0:
            raise ValueError(f"cache_max_bytes must be an integer >= 0 (0: no limit), not {o.cache_max_bytes!r}")
        self.retry = _with_max_wait(Retry.coerce(o.retry), o.max_wait)
        self.base_url = url
        self.timeout = float(o.timeout)
        self.rate_limit = o.rate_limit or 0
        self.max_parallel = int(o.max_parallel)
        self.progress = o.progress
        self._api_token = token
        core = _core.client.ClientOptions()
        core.base_url, core.api_token, core.api_secret = url, token, secret
        core.timeout, core.connect_timeout = float(o.timeout), float(o.connect_timeout)
        core.retry = self.retry
        core.rate_limit, core.login_rate_limit = float(o.rate_limit or 0), float(o.login_rate_limit or 0)
        core.rate_limit_burst = -1.0 if o.rate_limit_burst is None else float(o.rate_limit_burst)
        core.jwt_cache_path = jwt_cache_path(o.jwt_cache, token, url, secret)
        core.max_parallel = int(o.max_parallel)
        core.verify_tls = bool(o.verify)
        core.ca_bundle = o.verify if isinstance(o.verify, str) else (_tls.ca_bundle() if o.verify else "")
        core.proxy, core.http2, core.user_agent = o.proxy or "", o.http2, o.user_agent or ""
        core.compress = o.compress
        core.max_body, core.max_decompressed = int(o.max_body), int(o.max_decompressed)
        core.max_pages, core.low_speed_limit = int(o.max_pages), int(o.low_speed_limit)
        core.cache_dir = str(self.cache_dir) if self.cache_dir is not None else ""
        core.cache_ttl, core.cache_max_bytes = ttl, int(o.cache_max_bytes)
        self._core_client: Optional[Any] = self._new_core(core)
        self._fetcher = self._new_fetcher(url, o.progress)
        self._accessors: Dict[str, Any] = {}
        self._lists = _names.Lists()  # the service's years, makes, models: fetched once (vehicledata._names)

    def _new_core(self, options: Any) -> Any:
        """The C++ core doing this client's I/O (vehicledata.aio's client makes an Engine)."""
        return _core.client.Client(options, core_log)

    def _new_fetcher(self, base_url: str, progress: Optional[bool]) -> Any:
        return Fetcher(lambda: self._core, base_url=base_url, max_parallel=self.max_parallel, progress=progress,
                       records=records_of)

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def _core(self) -> Any:
        if self._core_client is None:
            raise VehicleDataError("the client is closed")
        return self._core_client

    def close(self) -> None:
        self._core_client = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        who = f"api_token={mask(self._api_token)}" if self._api_token else "anonymous (demo data)"
        state = "closed" if self._core_client is None else "open"
        return f"<vehicledata.Client {self.base_url} {who} {state}>"

    # ---- accessors ----------------------------------------------------------------------
    def _search(self, name: str) -> SearchResource:
        res = self._accessors.get(name)
        if res is None:
            res = self._accessors[name] = search_resource(self, name, SearchResource)
        return res

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(_SEARCHES) | {"vehicles"})

    @property
    def makes(self) -> "MakesResource":
        return self._search("makes")  # type: ignore[return-value]

    @property
    def models(self) -> "ModelsResource":
        return self._search("models")  # type: ignore[return-value]

    @property
    def submodels(self) -> "SubmodelsResource":
        return self._search("submodels")  # type: ignore[return-value]

    @property
    def trims(self) -> "TrimsResource":
        return self._search("trims")  # type: ignore[return-value]

    @property
    def bodies(self) -> "BodiesResource":
        return self._search("bodies")  # type: ignore[return-value]

    @property
    def engines(self) -> "EnginesResource":
        return self._search("engines")  # type: ignore[return-value]

    @property
    def mileages(self) -> "MileagesResource":
        return self._search("mileages")  # type: ignore[return-value]

    @property
    def exterior_colors(self) -> "ExteriorColorsResource":
        return self._search("exterior_colors")  # type: ignore[return-value]

    @property
    def interior_colors(self) -> "InteriorColorsResource":
        return self._search("interior_colors")  # type: ignore[return-value]

    @property
    def obd_codes(self) -> "ObdCodesResource":
        return self._search("obd_codes")  # type: ignore[return-value]

    @property
    def vehicles(self) -> "VehiclesResource":
        """Trims joined with their body, engine and mileage: one row per trim (``vehicledata.vehicles``)."""
        from .vehicles import VehiclesResource

        return VehiclesResource(self)  # type: ignore[return-value]  # (its typed face: _resources.VehiclesResource)

    @property
    def years(self) -> YearsResource:
        return YearsResource(self, "years")

    @property
    def powersports_years(self) -> YearsResource:
        """Street motorcycles' model years; pass ``type="street_motorcycle"`` (required)."""
        return YearsResource(self, "powersports_years")

    @property
    def powersports_makes(self) -> SearchResource:
        """Street motorcycle makes; pass ``type="street_motorcycle"`` (required)."""
        return self._search("powersports_makes")

    @property
    def powersports_models(self) -> SearchResource:
        """Street motorcycle models; pass ``type="street_motorcycle"`` (required)."""
        return self._search("powersports_models")

    @property
    def vehicle_attributes(self) -> VehicleAttributes:
        return VehicleAttributes(self, "vehicle_attributes")

    @property
    def account(self) -> Account:
        return Account(self, "account")

    @property
    def data_feed(self) -> "DataFeed":
        from .feed import DataFeed

        return DataFeed(self._fetcher)

    @property
    def vin(self) -> "VinAccessor":
        """``api.vin(vin)`` decodes a VIN (``VinResult``); ``api.vin.decode_many(vins, concurrency=,
        checkpoint=, progress=)`` decodes a batch through the service into the offline decoder's Arrow
        table (vehicledata.vin_online, docs/vin.md)."""
        from .vin_online import VinAccessor

        return VinAccessor(self)

    def _vin_one(self, vin: str, *, verbose: Optional[bool] = None, all_trims: Optional[bool] = None) -> "VinResult":
        from .vin import VinResult

        return VinResult.of(self._one(self._vin_request(vin, verbose, all_trims)))

    @staticmethod
    def _vin_request(vin: str, verbose: Optional[bool], all_trims: Optional[bool]) -> schema.BoundEndpoint:
        """The request of a VIN decode, checked (shared with vehicledata.aio)."""
        if not isinstance(vin, str) or not vin.strip():
            raise QueryError(f"vin must be a non-empty string, not {vin!r}")
        ep = schema.endpoint_for(Kind.VIN)
        params: List[Tuple[str, Any]] = []
        if verbose is not None:
            params.append(("verbose", "yes" if verbose else "no"))
        if all_trims is not None:
            params.append(("all_trims", "yes" if all_trims else "no"))
        return ep.bind(build_target(endpoint_path(ep, vin.strip()), params))

    def license_plate(self, country_code: str, lookup: str, region: Optional[str] = None) -> Record:
        """Look up a licence plate: year, make, model, body, vin, engine, assembled_in."""
        return self._one(self._plate_request(country_code, lookup, region))

    @staticmethod
    def _plate_request(country_code: str, lookup: str, region: Optional[str]) -> schema.BoundEndpoint:
        """The request of a licence plate look-up (shared with vehicledata.aio)."""
        ep = schema.endpoint_for(Kind.PLATE)
        params: List[Tuple[str, Any]] = [("country_code", country_code), ("lookup", lookup)]
        if region is not None:
            params.append(("region", region))
        return ep.bind(build_target(ep.path, params))

    # ---- plumbing ----------------------------------------------------------------------------
    def login(self) -> None:
        """Log in now (normally lazy).  Raises AuthenticationError on rejected credentials."""
        self._core.login()

    @property
    def authenticated(self) -> bool:
        return bool(self._core.has_credentials)

    def stats(self) -> Dict[str, Any]:
        """Requests sent, retries, logins, bytes received, seconds waited for the rate limit, and
        ``reorder_peak``: the most pages a whole-result crawl held at once while an earlier page was
        retried or slower (at most ``2 * max_parallel - 1``; docs/client.md), and ``cache_hits``: the
        answers served from the response cache (``cache=``) without a request."""
        return dict(self._core.stats())

    def get_json(self, path: str, **params: Any) -> Any:
        """Raw GET of any path (auth, retries and rate limit applied); the parsed JSON body.

        ``params`` are merged with a query string already in ``path``.
        """
        return json_of(self._fetcher.get(json_target(path, params)))

    def clear_cache(self) -> int:
        """Delete the response cache's answers (every tier's); the number of files deleted (0 without a cache)."""
        if self.cache_dir is None or not self.cache_dir.is_dir():
            return 0
        n = 0
        for f in self.cache_dir.glob("*.vdc"):
            try:
                f.unlink()
                n += 1
            except FileNotFoundError:  # pragma: no cover - another process evicted it
                continue
        return n

    def _check_names(self, ep: schema.Endpoint, params: List[Tuple[str, Any]]) -> None:
        """``year``, ``make``, ``model``, ``submodel`` of a search against the service's lists, fetched now (vehicledata._names)."""
        if self._core_client is None:  # (a closed client says so when the search is fetched)
            return
        _names.check_now(_names.plan(ep, params, self.authenticated), self._lists, self._fetcher.get_page)

    def _one(self, request: schema.BoundEndpoint, verbose: bool = False) -> Record:
        return self._fetcher.one(request, verbose)

    def _params(self, ep: schema.Endpoint, filters: Dict[str, Any], conditions: Sequence[Any], where: Any,
                sort: Optional[str], direction: Optional[str], limit: Optional[int],
                verbose: Optional[bool]) -> List[Tuple[str, Any]]:
        accepted = ep.filter_names()
        params: List[Tuple[str, Any]] = []
        for key, value in filters.items():
            if key not in accepted:
                raise QueryError(_unknown("filter", key, accepted, ep.path), field=key)
            if value is None:
                continue
            if isinstance(value, (list, tuple, set, dict)):
                raise QueryError(f"filter {key!r} takes one value, not {type(value).__name__}; "
                                 f"use a condition (vd.F({key!r}).isin(...)) for several", field=key)
            params.append((key, _values.check_filter(ep, key, value)))
        _warn_demo_years(self, filters, conditions, ep.path)
        json_text = _encode_conditions(conditions, where, ep.path)
        if json_text is not None:
            if not ep.json_fields:
                raise QueryError(f"{ep.path} does not accept conditions (json)")
            _values.check_conditions(ep, json_text)
            params.append(("json", json_text))
        if sort is not None:
            if not ep.sort_keys:
                raise QueryError(f"{ep.path} does not accept sort")
            params.append(("sort", _values.resolve_sort(ep, sort)))
        if direction is not None:
            if direction not in _DIRECTIONS:
                raise QueryError(f"direction must be 'asc' or 'desc', not {direction!r}")
            params.append(("direction", direction))
        if verbose is not None:
            if not ep.verbose:
                raise QueryError(f"{ep.path} does not accept verbose")
            params.append(("verbose", "yes" if verbose else "no"))
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= schema.MAX_LIMIT:
                raise QueryError(f"limit must be an integer from 1 to {schema.MAX_LIMIT}, not {limit!r}")
            params.append(("limit", limit))
        return params


# A search of the schema table without a typed property above is still an accessor:
# adding an endpoint is one edit in cpp/core/schema.cpp.
def _search_property(name: str) -> "property":
    def get(self: Client) -> SearchResource:
        return self._search(name)

    return property(get, doc=f"The {name} search (from the schema table).")


for _name in _SEARCHES:
    if not hasattr(Client, _name):
        setattr(Client, _name, _search_property(_name))


__all__ = ["Client", "ClientOptions", "Retry", "Pager", "Page", "Record", "DEFAULT_BASE_URL", "USER_AGENT"]
