"""The words of a search query, and the snippet a hit shows of a record.

Pure functions, shared by search, linking and packing (none of which needs the others for them).
"""

from __future__ import annotations

import re
from typing import Any

from graphmem.errors import BadInput

_TERM_RE = re.compile(r"\w+")


def search_terms(query: str) -> list[str]:
    """The searchable words of a query, lower-cased, in order, without repeats."""
    if not isinstance(query, str):
        raise BadInput(f"bad query {query!r}: expected text")
    terms = list(dict.fromkeys(t.lower() for t in _TERM_RE.findall(query) if t.strip("_")))
    if not terms:
        raise BadInput(f"nothing searchable in query {query!r}: expected at least one word or number")
    return terms[:64]


def snippet(text: str, terms: list[str], width: int = 160) -> str:
    """A one-line window of ``text`` around the first query term it contains."""
    flat = " ".join(text.split())
    low = flat.lower()
    pos = min((i for i in (re.search(rf"\b{re.escape(t)}", low) for t in terms) if i), key=lambda m: m.start(),
              default=None)
    start = 0 if pos is None else max(0, pos.start() - width // 3)
    piece = flat[start:start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")


# Words a question is made of that say nothing about what it asks: question words, auxiliaries,
# pronouns, articles and prepositions. They are dropped from what a search or a pack looks up,
# unless nothing else is left (``the who`` still finds records with those words).
STOP_WORDS = frozenset("""
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me might more
    most my myself no nor not of off on once only or other our ours ourselves out over own s same shall
    she should so some such t than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom whose why
    will with would you your yours yourself yourselves ever kind kinds sort thing things likely
""".split())  # noqa: SIM905 (a list of words reads best as words)


def content_words(terms: list[str]) -> list[str]:
    """The words of a query worth looking up: ``terms`` without stop words, or all of them when
    every one is a stop word.

    >>> content_words(["when", "did", "caroline", "go", "to", "the", "support", "group"])
    ['caroline', 'go', 'support', 'group']
    >>> content_words(["who", "are", "you"])
    ['who', 'are', 'you']
    """
    kept = [t for t in terms if t not in STOP_WORDS]
    return kept or list(terms)


_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), 1)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_UNITS = {"day": 1, "week": 7, "weekend": 7, "month": 31, "year": 366}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_LAST_DAY = re.compile(rf"\blast\s+({'|'.join(_WEEKDAYS)})\b", re.I)
_RELATIVE = re.compile(r"\b(yesterday|today|tonight|last\s+(night|week(?:end)?|month|year)|"
                       r"this\s+(week(?:end)?|month|year)|(\d+|a|an|one|two|three|four|five|six)\s+"
                       r"(day|week|month|year)s?\s+ago)\b", re.I)
_ABSOLUTE = re.compile(rf"\b(?:(\d{{4}})-(\d{{2}})(?:-(\d{{2}}))?|(\d{{1,2}})\s+{_MONTH}\.?,?\s+(\d{{4}})|"
                       rf"{_MONTH}\.?\s+(?:(\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(\d{{4}})|(?:in|of|during|since)\s+(\d{{4}}))\b",
                       re.I)
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_DAY_US = 86_400_000_000


def _month(name: str) -> int:
    return next(i for m, i in _MONTHS.items() if m.startswith(name.lower()[:3]))


def query_times(query: str, now: int) -> list[tuple[int, int]]:
    """The spans of time a query names, as ``[start, end)`` in microseconds: dates (``2023-05-08``,
    ``8 May 2023``, ``May 2023``, ``in 2023``) and times relative to ``now`` (``yesterday``,
    ``last week``, ``last month``, ``last year``, ``this year``, ``3 days ago``, ``last Saturday``), each widened by a
    day either side (a record written the next morning is still about it). A soft preference for
    the records written then, never a filter: ``pack`` ranks them a little higher.

    >>> from graphmem.model.times import parse_instant, format_instant
    >>> now = parse_instant("2023-05-08T13:56:00Z")
    >>> [(format_instant(a)[:10], format_instant(b)[:10]) for a, b in query_times("What did she paint last year?", now)]
    [('2021-12-31', '2023-01-02')]
    >>> [(format_instant(a)[:10], format_instant(b)[:10]) for a, b in query_times("trip in May 2023", now)]
    [('2023-04-30', '2023-06-02')]
    >>> [(format_instant(a)[:10], format_instant(b)[:10]) for a, b in query_times("last Saturday", now)]
    [('2023-05-05', '2023-05-08')]
    >>> query_times("no dates here", now)
    []
    >>> query_times("what happened this year", parse_instant("9999-12-31T23:59:59Z"))  # past the calendar
    []
    """
    try:
        return _query_times(query, now)
    except (ValueError, OverflowError, OSError):  # a span at the calendar's ends: no preference
        return []


def _query_times(query: str, now: int) -> list[tuple[int, int]]:
    if not (_RELATIVE.search(query) or _LAST_DAY.search(query) or _ABSOLUTE.search(query)):
        return []  # most queries name no time: pendulum's import (15-20 ms of a fresh process) is not needed
    import pendulum
    at = pendulum.from_timestamp(now / 1e6, tz="UTC")
    spans: list[tuple[Any, Any]] = []
    for m in _RELATIVE.finditer(query):
        word = m.group(1).lower()
        if word in ("today", "tonight"):
            spans.append((at.start_of("day"), at.end_of("day")))
        elif word == "yesterday" or (m.group(2) or "").lower() == "night":
            d = at.subtract(days=1)
            spans.append((d.start_of("day"), d.end_of("day")))
        elif m.group(2):
            unit = m.group(2).lower().replace("weekend", "week")
            d = at.subtract(**{f"{unit}s": 1})
            spans.append((d.start_of(unit), d.end_of(unit)))
        elif m.group(3):
            unit = m.group(3).lower().replace("weekend", "week")
            spans.append((at.start_of(unit), at.end_of(unit)))
        else:
            n = _COUNT.get(m.group(4).lower()) or int(m.group(4))
            d = at.subtract(days=n * _UNITS[m.group(5).lower()])
            spans.append((d.start_of("day"), d.end_of("day")) if m.group(5).lower() == "day" else
                         (d.subtract(days=_UNITS[m.group(5).lower()] // 2), d.add(days=_UNITS[m.group(5).lower()] // 2)))
    for m in _LAST_DAY.finditer(query):  # the last such day before the day of ``now``
        back = (at.day_of_week - _WEEKDAYS.index(m.group(1).lower())) % 7 or 7  # pendulum: Monday 0
        d = at.subtract(days=back)
        spans.append((d.start_of("day"), d.end_of("day")))
    for m in _ABSOLUTE.finditer(query):
        iy, im, iday, dd, dmon, dy, mmon, mday, my, year = m.groups()
        try:
            if iy:
                start = pendulum.datetime(int(iy), int(im), int(iday or 1), tz="UTC")
                spans.append((start, start.end_of("day" if iday else "month")))
            elif dd:
                start = pendulum.datetime(int(dy), _month(dmon), int(dd), tz="UTC")
                spans.append((start, start.end_of("day")))
            elif mmon:
                start = pendulum.datetime(int(my), _month(mmon), int(mday or 1), tz="UTC")
                spans.append((start, start.end_of("day" if mday else "month")))
            elif year and 1900 <= int(year) <= 2200:
                start = pendulum.datetime(int(year), 1, 1, tz="UTC")
                spans.append((start, start.end_of("year")))
        except ValueError:  # 31 February: not a date, so no preference
            continue
    out = []
    for a, b in spans:
        lo = int(a.subtract(days=1).timestamp() * 1e6) // _DAY_US * _DAY_US
        hi = -(-int(b.add(days=1).timestamp() * 1e6) // _DAY_US) * _DAY_US
        out.append((lo, hi))
    return list(dict.fromkeys(out))
