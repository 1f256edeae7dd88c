"""Dates in text: the first explicit calendar date a sentence names (an extracted statement's
``valid_from``), and when a plan is due ("by 1 March", "in May"). Pure functions over text."""

from __future__ import annotations

import datetime as _dt
import re

from graphmem.model.times import to_us

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_MONTH_RE = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?"
             r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "ymd"),
    (re.compile(r"\b(\d{4})/(\d{2})/(\d{2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b"), "dmy"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH_RE}\.?,?\s+(\d{{4}})\b", re.I), "d_mon_y"),
    (re.compile(rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "mon_d_y"),
)


def find_date(text: str) -> tuple[str, int, int] | None:
    """The first explicit calendar date in ``text`` as (YYYY-MM-DD, start, end)."""
    found: list[tuple[int, int, str]] = []
    for pattern, form in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            g = m.groups()
            try:
                if form == "ymd":
                    d = _dt.date(int(g[0]), int(g[1]), int(g[2]))
                elif form == "dmy":
                    d = _dt.date(int(g[2]), int(g[1]), int(g[0]))
                elif form == "d_mon_y":
                    d = _dt.date(int(g[2]), _MONTHS[g[1][:3].lower()], int(g[0]))
                else:
                    d = _dt.date(int(g[2]), _MONTHS[g[0][:3].lower()], int(g[1]))
            except ValueError:
                continue
            found.append((m.start(), m.end(), d.isoformat()))
    if not found:
        return None
    start, end, iso = min(found)
    return iso, start, end


DUE_MONTH = re.compile(rf"\b(by|in|before|until)\s+(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+)?{_MONTH_RE}\b\.?"
                        rf"(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?\b)?", re.I)


def due_time(text: str, default_time: int) -> int | None:
    """When a plan is due: an explicit date in ``text``, else a month ("by 1 March": that day; "by June":
    its first day; "in May": its last day) in the year of ``default_time``, or the next year when that
    day is already past. None when the text names no date."""
    found = find_date(text)
    if found:
        return to_us(_dt.datetime.fromisoformat(found[0]).replace(tzinfo=_dt.UTC))
    m = DUE_MONTH.search(text)
    if m is None:
        return None
    word, day1, month_name, day2 = m.groups()
    month = _MONTHS[month_name[:3].lower()]
    base = _dt.datetime.fromtimestamp(default_time / 1e6, _dt.UTC).date()
    for year in (base.year, base.year + 1):
        try:
            if day1 or day2:
                d = _dt.date(year, month, int(day1 or day2))
            elif word.lower() == "in":
                d = (_dt.date(year + month // 12, month % 12 + 1, 1) - _dt.timedelta(days=1))
            else:
                d = _dt.date(year, month, 1)
        except ValueError:
            return None
        if d >= base:
            return to_us(_dt.datetime(d.year, d.month, d.day, tzinfo=_dt.UTC))
    return None
