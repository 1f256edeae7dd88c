"""How messages name things: a count with the right plural, and the near matches of a mistyped name.

The one place that decides what "did you mean" offers: the entity resolver, the predicate check
and the command line's command names all ask ``near``, so the CLI, the service and Python give the
same suggestions.

>>> plural(1, "error"), plural(2, "error"), plural(0, "entity", "entities")
('1 error', '2 errors', '0 entities')
>>> near("atlsa", ["atlas", "anchor", "beacon"])
['atlas']
>>> near("Duck DB", ["duckdb", "docker"])
['duckdb']
>>> near("ownr", ["owner", "status", "uses"])
['owner']
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from graphmem.model.times import short_instant

_NOT_WORD = re.compile(r"[\W_]+")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1 (``many``: an irregular plural)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def moment(us: int) -> str:
    """An instant as a message names it: the date alone at midnight UTC, else the ISO-8601 instant."""
    return short_instant(us) or ""


def squash(text: str) -> str:
    """The form names are compared in: lower case, without spaces, dashes or other punctuation
    ("Duck DB", "duck-db" and "duckdb" are the same)."""
    return _NOT_WORD.sub("", text.lower())


def distance(a: str, b: str, limit: int) -> int:
    """The edit distance between ``a`` and ``b`` (insertions, deletions, substitutions and swaps of
    two neighbouring characters each cost 1: optimal string alignment), or ``limit + 1`` when it is
    more than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d = min(d, prev2[j - 2] + 1)
            cur[j] = d
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def max_distance(text: str) -> int:
    """How many edits a name of this length may be off and still be suggested: 1 up to four
    characters, 2 up to eight, then 3 (a typo or two, not another word)."""
    n = len(squash(text))
    return 0 if n < 2 else 1 if n <= 4 else 2 if n <= 8 else 3


def near(text: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``text`` by edit distance (compared as ``squash`` makes them),
    at most ``n``, closest first, ties in alphabetical order; none when nothing is within
    ``max_distance``. A candidate that starts with what was typed counts as near too."""
    key = squash(text)
    if not key:
        return []
    limit = max_distance(text)
    scored: dict[str, tuple[int, str]] = {}
    for c in candidates:
        k = squash(c)
        if not k:
            continue
        d = distance(key, k, limit)
        if d > limit and len(key) >= 3 and k.startswith(key):
            d = limit
        if d <= limit and (c not in scored or d < scored[c][0]):
            scored[c] = (d, c)
    return [c for d, c in sorted(scored.values())][:n]


def did_you_mean(options: list[str]) -> str:
    """``"did you mean X?"`` (or ``X or Y``) for a message, or ``""`` with no options."""
    if not options:
        return ""
    said = options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
    return f"did you mean {said}?"
