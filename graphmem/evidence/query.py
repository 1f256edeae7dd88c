"""The words of a search query, and the snippet a hit shows of a record.

Pure functions, shared by search, linking and packing (none of which needs the others for them).
"""

from __future__ import annotations

import re

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
