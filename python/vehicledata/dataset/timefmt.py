"""Timestamps in the service's style: ISO 8601 with the America/New_York offset."""
from __future__ import annotations

import datetime as _dt

from .. import _core

_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}
_ZONES = {"EST": "-05:00", "EDT": "-04:00"}


def epa_timestamp(value: str) -> str:
    """EPA's "Wed Jul 05 00:00:00 EDT 2017" -> "2017-07-05T00:00:00-04:00".

    EPA writes the US Eastern abbreviation of the moment, so its offset is kept as is.
    Raises ValueError naming the value when it is not in that form.
    """
    parts = value.split()
    if len(parts) != 6 or parts[1] not in _MONTHS or parts[4] not in _ZONES:
        raise ValueError(f"not an EPA timestamp: {value!r}")
    _, mon, day, clock, zone, year = parts
    return f"{int(year):04d}-{_MONTHS[mon]:02d}-{int(day):02d}T{clock}{_ZONES[zone]}"


def _epoch(now: "_dt.datetime | None") -> int:
    """``now`` (naive means UTC; None: the current time) as whole UTC epoch seconds."""
    moment = now or _dt.datetime.now(_dt.timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return int(moment.timestamp() // 1)


# The US Eastern rules are the C++ core's (vehicledata._core.format), the ones the emulator and
# the client's datetime conditions use: one rule set (docs/dataset.md).

def eastern_now(now: "_dt.datetime | None" = None) -> _dt.datetime:
    """The current time (or ``now``) in US Eastern time (naive, local clock, whole seconds)."""
    epoch = _epoch(now)
    return _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=epoch + _core.format.eastern_offset_seconds(epoch))


def eastern_stamp(now: "_dt.datetime | None" = None) -> str:
    """"YYYY-MM-DD HH:MM:SS" in US Eastern time (the data feed's last_updated style)."""
    return str(_core.format.eastern_datetime(_epoch(now)))
