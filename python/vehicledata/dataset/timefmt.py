"""Timestamps in the service's style: ISO 8601 with the America/New_York offset."""
from __future__ import annotations

import datetime as _dt

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


def _us_eastern_offset(utc: _dt.datetime) -> _dt.timedelta:
    """US Eastern offset at a UTC moment (rules since 2007: DST from the second Sunday of
    March 02:00 local to the first Sunday of November 02:00 local)."""
    year = utc.year

    def nth_sunday(month: int, n: int) -> _dt.date:
        first = _dt.date(year, month, 1)
        return first + _dt.timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))

    start = _dt.datetime.combine(nth_sunday(3, 2), _dt.time(7))   # 02:00 EST in UTC
    end = _dt.datetime.combine(nth_sunday(11, 1), _dt.time(6))    # 02:00 EDT in UTC
    naive = utc.replace(tzinfo=None)
    return _dt.timedelta(hours=-4 if start <= naive < end else -5)


def eastern_now(now: "_dt.datetime | None" = None) -> _dt.datetime:
    """The current time in US Eastern time (naive, local clock)."""
    utc = now or _dt.datetime.now(_dt.timezone.utc)
    try:
        from zoneinfo import ZoneInfo

        return utc.astimezone(ZoneInfo("America/New_York")).replace(tzinfo=None)
    except Exception:  # no tz database on this machine
        return (utc + _us_eastern_offset(utc)).replace(tzinfo=None)


def eastern_stamp(now: "_dt.datetime | None" = None) -> str:
    """"YYYY-MM-DD HH:MM:SS" in US Eastern time (the data feed's last_updated style)."""
    return eastern_now(now).strftime("%Y-%m-%d %H:%M:%S")
