"""Pure time functions: parse user input to UTC instants and format them back.

Instants are integers: microseconds since the Unix epoch, UTC. Integers make the
temporal logic cheap and exact; parsing and durations go through pendulum.
"""

from __future__ import annotations

import datetime as _dt
import re
import threading
import time
from functools import lru_cache
from typing import overload

from graphmem.errors import BadTime

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
# The canonical forms, which the standard library parses exactly as pendulum does, only faster.
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?$")
US = 1_000_000
# What an instant may be: years 1 to 9999 in UTC, the range every reader (Python's datetime, Kuzu's
# TIMESTAMP, ISO-8601 text) holds. A time with an offset can leave it (0001-01-01T00:00:00+01:00).
MIN_US = -62_135_596_800 * US  # 0001-01-01T00:00:00Z
MAX_US = 253_402_300_799 * US + 999_999  # 9999-12-31T23:59:59.999999Z


_last_now = [0]
_now_lock = threading.Lock()
_clock_offset = [0]  # microseconds added to the local clock (set_clock_offset)


def set_clock_offset(us: int) -> None:
    """Make ``now_us`` read the local clock moved by ``us`` microseconds.

    A store whose clock is a server's (PostgreSQL) sets the offset it measures, so every process that
    writes to it stamps record times from that one clock.

    Parameters
    ----------
    us : int
        The server's clock minus the local one, in microseconds.

    Examples
    --------
    >>> set_clock_offset(0)
    >>> now_us() > 0
    True
    """
    _clock_offset[0] = int(us)


def now_us() -> int:
    """The current instant, in microseconds since the epoch (UTC); within a process each call gives a
    later instant than the one before (one microsecond on, if the clock has not moved or went back), so
    the statements of a group commit keep distinct record times in the order they were made."""
    t = time.time_ns() // 1000 + _clock_offset[0]
    with _now_lock:
        if t <= _last_now[0]:
            t = _last_now[0] + 1
        _last_now[0] = t
    return t


def to_us(dt: _dt.datetime) -> int:
    """A timezone-aware datetime as microseconds since the epoch."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.UTC)
    d = dt - _EPOCH  # exact integer arithmetic, cheaper than dividing by a timedelta
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def parse_instant(text: str, *, now: int | None = None, what: str = "time") -> int:
    """Parse an ISO-8601 date, a datetime with any offset, or ``now``.

    A date means 00:00 UTC; a datetime without offset is taken as UTC.
    Raises BadTime naming the value when it is malformed or impossible.

    >>> format_instant(parse_instant("2025-06-01"))
    '2025-06-01T00:00:00Z'
    """
    if not isinstance(text, str):
        raise BadTime(f"bad {what} {text!r}: expected an ISO-8601 date or datetime, or 'now'")
    stripped = text.strip()
    if len(stripped) == 3 and stripped.lower() == "now":
        return now if now is not None else now_us()
    return _parse_cached(stripped, what)


@lru_cache(maxsize=65536)
def _parse_cached(text: str, what: str) -> int:
    us = _parse(text, what)
    if not MIN_US <= us <= MAX_US:
        raise BadTime(f"bad {what} {text!r}: in UTC it falls outside the years 1 to 9999 "
                      "(expected 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z)")
    return us


def _parse(text: str, what: str) -> int:
    m = _DATE_RE.match(text)
    if m:
        try:
            d = _dt.datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=_dt.UTC)
        except ValueError:
            raise BadTime(f"bad {what} {text!r}: not a real calendar date") from None
        return to_us(d)
    if _ISO_RE.match(text):
        try:
            return to_us(_dt.datetime.fromisoformat(text))
        except ValueError:
            raise BadTime(f"bad {what} {text!r}: not a real calendar date or time") from None
    import pendulum  # only here and for durations: it costs 40 ms to import

    try:
        parsed = pendulum.parse(text, strict=True, tz="UTC")
    except Exception:  # pendulum raises several types for malformed text
        raise BadTime(
            f"bad {what} {text!r}: expected an ISO-8601 date (2025-06-01), "
            "datetime (2025-06-01T12:00:00+02:00) or 'now'"
        ) from None
    if isinstance(parsed, _dt.datetime):
        return to_us(parsed)
    if isinstance(parsed, _dt.date):
        return to_us(_dt.datetime(parsed.year, parsed.month, parsed.day, tzinfo=_dt.UTC))
    raise BadTime(f"bad {what} {text!r}: expected a date or datetime, not a duration or time")


def in_range(us: int) -> bool:
    """Whether an instant lies in the years 1 to 9999 (UTC), the range graphmem stores."""
    return MIN_US <= us <= MAX_US


def format_instant(us: int | None) -> str | None:
    """An instant as ISO-8601 UTC (``2025-06-01T00:00:00Z``); None stays None."""
    if us is None:
        return None
    return _format_cached(us)


_CYCLE_US = 146_097 * 86_400 * US  # 400 Gregorian years: the calendar repeats


@lru_cache(maxsize=65536)
def _format_cached(us: int) -> str:
    # An instant outside years 1-9999 is refused on input, but a store written before that check may
    # hold one: it is written with an expanded year (ISO 8601), so reading the store never fails.
    shift = 0
    while us < MIN_US:
        us, shift = us + _CYCLE_US, shift - 400
    while us > MAX_US:
        us, shift = us - _CYCLE_US, shift + 400
    dt = _EPOCH + _dt.timedelta(microseconds=us)
    year = f"{dt.year:04d}" if not shift else f"{dt.year + shift:+05d}"
    base = f"{year}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    return f"{base}.{dt.microsecond:06d}Z" if dt.microsecond else base + "Z"


@overload
def utc(us: int) -> _dt.datetime: ...
@overload
def utc(us: None) -> None: ...
def utc(us: int | None) -> _dt.datetime | None:
    """An instant as a timezone-aware UTC datetime, the form result objects carry; None stays None.

    An instant outside the years 1 to 9999 (only a store written before that check holds one) becomes
    the nearest datetime Python can hold.

    >>> utc(parse_instant("2025-06-01T12:30:00+02:00"))
    datetime.datetime(2025, 6, 1, 10, 30, tzinfo=datetime.timezone.utc)
    """
    if us is None:
        return None
    return _EPOCH + _dt.timedelta(microseconds=min(max(us, MIN_US), MAX_US))


_utc_cached = lru_cache(maxsize=65536)(utc)  # for the bounds of many intervals, which repeat (whole days)


def format_datetime(dt: _dt.datetime | None) -> str | None:
    """A datetime as the ISO-8601 UTC text of ``format_instant`` (naive means UTC); None stays None."""
    return None if dt is None else format_instant(to_us(dt))


def short_instant(value: str | int | _dt.datetime | None) -> str | None:
    """An instant for a table cell: the date alone when the time is midnight UTC, else the full ISO-8601 text.

    Takes the ISO text of a JSON document, an instant or a datetime; None stays None (the caller shows an
    open end its own way).

    >>> short_instant("2025-01-06T00:00:00Z"), short_instant("2025-01-06T09:30:00Z")
    ('2025-01-06', '2025-01-06T09:30:00Z')
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else (
        format_instant(value) if isinstance(value, int) else format_datetime(value))
    assert text is not None
    return text[:-10] if text.endswith("T00:00:00Z") else text


def to_datetime(us: int | None) -> _dt.datetime | None:
    """An instant as a naive UTC datetime, the form Kuzu's TIMESTAMP stores."""
    if us is None:
        return None
    return (_EPOCH + _dt.timedelta(microseconds=us)).replace(tzinfo=None)


def from_datetime(dt: _dt.datetime | None) -> int | None:
    """A naive UTC datetime read from Kuzu as an instant."""
    if dt is None:
        return None
    return to_us(dt.replace(tzinfo=_dt.UTC))


def parse_duration(text: str, *, what: str = "duration") -> int:
    """An ISO-8601 duration (``P90D``, ``P1Y2M``) as microseconds (pendulum: a year is 365 days, a month 30)."""
    import pendulum

    try:
        d = pendulum.parse(text, strict=True)
    except Exception:
        d = None
    if not isinstance(d, pendulum.Duration):
        raise BadTime(f"bad {what} {text!r}: expected an ISO-8601 duration such as P90D")
    return int(d.as_timedelta().total_seconds()) * US


def parse_date_value(text: str, *, what: str = "date") -> str:
    """A literal date value, canonical as ``YYYY-MM-DD``."""
    us = parse_instant(text, what=what)
    iso = format_instant(us)
    assert iso is not None
    if not iso.endswith("T00:00:00Z"):
        raise BadTime(f"bad {what} {text!r}: expected a date such as 2026-03-31")
    return iso[:10]
