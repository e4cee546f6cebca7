"""Incremental sync: ``api.<resource>.sync(*conditions, since=mark)`` on every search whose records
carry ``modified``.

    df, mark = api.engines.sync(since=None)                              # first run: everything
    df, mark = api.engines.sync(vd.F("horsepower_hp") > 300, since=mark)  # later: what changed since

The service keeps ``modified`` as US Eastern wall-clock text with its offset and compares it as
text.  Across the fall-back hour that order is not the order of instants: with a watermark of
01:45 EDT, a record changed at 01:15 EST (30 minutes later) compares as earlier.  So a watermark
that a fall-back follows within the hour asks the server from an hour before it (the ambiguous
hour is read again), and every answer is filtered here by instant (``modified > since``) with
duplicate ids dropped (the latest ``modified`` kept).  The spring-forward gap keeps the text order.

Most searches filter on ``modified`` but answer without it (bodies, engines, mileages, colours,
models...): there the new watermark is the time the sync started (this machine's clock, to the
second) and nothing can be filtered by instant, so a record may come again in the next run (never
lost: the server compares with ``>=``).
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from . import _core
from .errors import QueryError, excerpt, quoted

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .client import SearchResource

_HOUR = timedelta(hours=1)


#: The instants a watermark may be (UTC): those of the frames' ``modified`` (pandas' nanosecond
#: timestamps, ``pd.Timestamp.min`` .. ``.max``, to the microsecond), which the server's comparison
#: (an hour either side, in US Eastern time) can also express.
EARLIEST = datetime(1677, 9, 22, tzinfo=timezone.utc)
LATEST = datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=timezone.utc)


def watermark(since: Any) -> Optional[datetime]:
    """``since`` as an aware UTC datetime (None stays None); QueryError for what is not a time.

    Takes a datetime or ``pd.Timestamp`` (naive: UTC, as the frames' timestamps), a date (its
    midnight UTC), ``np.datetime64`` (UTC) or ISO 8601 text; ``NaT``, numbers and other text
    (``"yesterday"``) raise QueryError, and so does a time outside ``EARLIEST`` .. ``LATEST``
    (``datetime.max``: no ``modified`` can be compared with it)."""
    mark = _watermark(since)
    if mark is not None and not EARLIEST <= mark <= LATEST:
        raise QueryError(f"since {mark.isoformat()} is outside the times a sync compares with modified "
                         f"({EARLIEST.isoformat()} to {LATEST.isoformat()}, pandas' timestamps): pass None to fetch "
                         "everything, or the previous watermark", field="since")
    return mark


def _watermark(since: Any) -> Optional[datetime]:
    if since is None:
        return None
    if type(since).__name__ == "NaTType" or (type(since).__name__ == "datetime64" and since != since):
        raise QueryError("since is NaT (not a time): pass None to fetch everything, or the previous watermark")
    if isinstance(since, str):
        text = since.strip()
        try:
            value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            raise QueryError(f"since must be a datetime, pd.Timestamp, np.datetime64 or ISO 8601 text such as "
                             f"'2023-06-29T21:01:06-04:00', not {quoted(since)}", field="since") from None
        return _watermark(value)
    try:
        if type(since).__name__ == "datetime64":
            import numpy as np

            micros = int(since.astype("datetime64[us]").astype(np.int64))
            return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=micros)
        if isinstance(since, datetime):
            if hasattr(since, "to_pydatetime"):  # pd.Timestamp: nanoseconds dropped, never a warning
                since = since.to_pydatetime(warn=False)
            return since.replace(tzinfo=timezone.utc) if since.tzinfo is None else since.astimezone(timezone.utc)
    except OverflowError:  # an aware datetime.max / min, a datetime64 past Python's years
        raise QueryError(f"since {excerpt(str(since))} is outside the times a sync compares with modified "
                         f"({EARLIEST.isoformat()} to {LATEST.isoformat()}, pandas' timestamps)",
                         field="since") from None
    if isinstance(since, date):
        return datetime(since.year, since.month, since.day, tzinfo=timezone.utc)
    raise QueryError(f"since must be None, a datetime, pd.Timestamp, np.datetime64 or ISO 8601 text, "
                     f"not {type(since).__name__} {excerpt(repr(since))}", field="since")


def _offset(text: str) -> int:
    """Minutes east of UTC of the service's timestamp text (``...-04:00`` -> -240)."""
    sign = -1 if text[-6] == "-" else 1
    return sign * (int(text[-5:-3]) * 60 + int(text[-2:]))


def server_bound(mark: datetime) -> datetime:
    """The instant whose Eastern text is at or below that of every instant after ``mark``: ``mark``,
    or an hour before it when the clocks fall back within the hour after it."""
    here, later = _core.query.service_time(mark), _core.query.service_time(mark + _HOUR)
    return mark - _HOUR if _offset(later) < _offset(here) else mark


def arguments(resource: "SearchResource", conditions: Sequence[Any], since: Any) -> Tuple[Sequence[Any], Any]:
    """``(conditions, since)`` of a ``sync()`` call, checked: a watermark passed as the first positional
    argument is ``since``; QueryError on a search without ``modified`` (both clients' ``sync``)."""
    from . import schema

    if conditions and since is None and not isinstance(conditions[0], (list, tuple, dict)) and not (
            isinstance(conditions[0], str) and conditions[0].lstrip().startswith(("[", "{"))) and not hasattr(
            conditions[0], "to_dict"):
        since, conditions = conditions[0], conditions[1:]
    if "modified" not in resource.json_fields:
        able = [n for n in schema.resources(schema.Kind.SEARCH)
                if "modified" in schema.endpoint_for(schema.Kind.SEARCH, n).json_field_names()]
        raise QueryError(f"{resource.path} has no modified field to sync on; sync works on: {', '.join(able)}")
    return conditions, since


class Run:
    """One sync: the conditions to search with (:attr:`conditions`), then :meth:`result` of the
    search's frame.  Shared by ``SearchResource.sync`` and the asyncio client's (vehicledata.aio)."""

    def __init__(self, conditions: Sequence[Any], since: Any) -> None:
        import pandas as pd

        from .query import F

        self.since = since
        self.mark = watermark(since)
        self.conditions = list(conditions)
        if self.mark is not None:
            # The server's text comparison, from a bound no later instant sorts below; filtered by instant below.
            self.conditions.append(F("modified") >= server_bound(self.mark).replace(microsecond=0))
        self.started = pd.Timestamp(datetime.now(timezone.utc).replace(microsecond=0))

    def result(self, df: "pd.DataFrame") -> Tuple["pd.DataFrame", Any]:
        """``(frame, new watermark)`` from the frame of the search with :attr:`conditions`; the watermark
        is an aware UTC ``pd.Timestamp`` (``since`` as one when nothing changed), or None."""
        import pandas as pd

        mark = self.mark
        since = None if mark is None else pd.Timestamp(mark)
        if "modified" not in df.columns:
            # Records without their modified (bodies, engines... answer without it, though they filter
            # on it): the watermark is when this sync started, by this machine's clock; the server's
            # ">=" returns a record again rather than lose it.
            if "id" in df.columns:
                df = df.drop_duplicates("id", keep="last").reset_index(drop=True)
            return df, self.started
        if mark is not None and len(df):
            df = df[df["modified"] > pd.Timestamp(mark)]
        if "id" in df.columns and df["id"].duplicated().any():  # a record changed while the pages were read
            df = df.sort_values("modified", kind="stable").drop_duplicates("id", keep="last").sort_index()
        df = df.reset_index(drop=True)
        if len(df) and df["modified"].notna().any():
            return df, df["modified"].max()
        return df, since


def refreshable(path: str) -> bool:
    """Whether the search at ``path`` filters on ``modified`` (``to_parquet(mode="refresh")`` fetches
    only what changed; elsewhere it writes the dataset again)."""
    from . import schema

    try:
        return "modified" in schema.endpoint(path).json_field_names()
    except Exception:  # a path the schema table does not know: no refresh by modified
        return False


def changed_params(path: str, params: Sequence[Tuple[str, Any]], since: datetime) -> List[Tuple[str, Any]]:
    """The parameters of the search ``params`` at ``path`` narrowed to the records whose ``modified``
    is at or after :func:`server_bound` of ``since`` (its ``json`` conditions and the new one in one
    ``json`` parameter): the changes a ``to_parquet(mode="refresh")`` run fetches."""
    from . import query
    from .query import F

    bound = F("modified") >= server_bound(watermark(since)).replace(microsecond=0)  # type: ignore[arg-type]
    items: List[Any] = [v for k, v in params if k == "json"] + [bound]
    return [(k, v) for k, v in params if k != "json"] + [("json", query.encode(items, endpoint=path))]


def sync(resource: "SearchResource", conditions: Sequence[Any], since: Any, page_size: Optional[int],
         filters: Any) -> Tuple["pd.DataFrame", Any]:
    """``(frame, new watermark)`` of the records of ``resource`` changed after ``since`` (see the module)."""
    conditions, since = arguments(resource, conditions, since)
    run = Run(conditions, since)
    return run.result(resource.search(*run.conditions, **filters).to_pandas(page_size=page_size))


__all__ = ["sync", "arguments", "Run", "watermark", "server_bound", "refreshable", "changed_params"]
