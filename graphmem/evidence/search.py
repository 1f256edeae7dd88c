"""Search over evidence records with filters (docs/evidence.md): which records a filter allows, and
BM25 ranking within them.

A filter is kind, source, scope (docs/scopes.md), record time (the record's ``ts``) and the entities a record mentions;
values of one field are alternatives (any of them), fields combine (all of them). The full-text
index ranks only the records the filter allows, so a filter never returns fewer hits than there
are matching records (post-filtering a top-k would).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from graphmem.errors import BadInput
from graphmem.evidence.query import search_terms, snippet
from graphmem.model.scopes import scope_list
from graphmem.model.text import check_text
from graphmem.model.times import format_instant, parse_instant, utc
from graphmem.results import SearchHit, SearchResult

if TYPE_CHECKING:
    import numpy as np

    from graphmem.model import Entity
    from graphmem.store.values import RecordFacets

_KIND = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
SOURCE_BOUNDARIES = "#/:?"  # a source filter matches a source that goes on after one of these
MEMO_FILTERS = 32  # the filters whose records are kept with the records' columns (each up to 8 bytes a record)


class FilterStore(Protocol):
    """The store methods a filter reads: the records' filter columns, and the records mentioning entities."""

    def record_facets(self) -> RecordFacets: ...

    def records_mentioning(self, refs: Iterable[str]) -> Any: ...  # numpy int64 ids, rising


class SearchStore(FilterStore, Protocol):
    def search_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[Any, ...]]: ...


@dataclass(frozen=True)
class RecordFilter:
    """Which records a search or a pack's evidence may use; empty, every record."""

    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    since: int | None = None  # record time (ts), inclusive
    until: int | None = None  # record time (ts), exclusive
    about: tuple[str, ...] = ()  # entity refs
    scopes: tuple[str, ...] | None = None  # None: every scope; else only records of these (unscoped left out)

    def __bool__(self) -> bool:
        return (bool(self.kinds or self.sources or self.about) or self.since is not None or self.until is not None
                or self.scopes is not None)

    def to_dict(self) -> dict[str, Any]:
        """The filter as given (normalized), for the documents that were filtered."""
        d = {"kind": list(self.kinds), "source": list(self.sources), "since": format_instant(self.since),
             "until": format_instant(self.until), "about": list(self.about)}
        if self.scopes is not None:
            d["scope"] = list(self.scopes)
        return d

    def within(self, store: FilterStore) -> np.ndarray | None:
        """The ids of the records this filter allows (rising), or None when it allows every record.

        The part read from the records' columns is kept with them (filters repeat: an agent searches
        one kind or source many times); the records that mention an entity come from the store."""
        if not self:
            return None
        import numpy as np
        if (self.about and not (self.kinds or self.sources) and self.since is None and self.until is None
                and self.scopes is None):
            only: np.ndarray = store.records_mentioning(self.about)  # no need for the records' columns
            return only
        f = store.record_facets()
        key = (self.kinds, self.sources, self.since, self.until, self.scopes)
        ids: np.ndarray | None = f.memo.get(key)
        if ids is None:
            keep = np.ones(len(f.ids), bool)
            if self.kinds:
                keep &= np.isin(np.arange(len(f.kinds)), [i for i, k in enumerate(f.kinds) if k in self.kinds])[f.kind]
            if self.sources:
                wanted = f.memo.get(self.sources)  # the distinct sources can be many: matched once per value
                if wanted is None:
                    wanted = np.zeros(len(f.sources) + 1, bool)  # the last entry: no source (code -1)
                    wanted[[i for i, s in enumerate(f.sources) if any(source_matches(s, p) for p in self.sources)]] = True
                    f.memo[self.sources] = wanted
                keep &= wanted[f.source]
            if self.scopes is not None:
                wanted_scopes = np.zeros(len(f.scopes) + 1, bool)  # the last entry: no scope (code -1), left out
                wanted_scopes[[i for i, s in enumerate(f.scopes) if s in self.scopes]] = True
                keep &= wanted_scopes[f.scope]
            if self.since is not None:
                keep &= f.ts >= self.since
            if self.until is not None:
                keep &= f.ts < self.until
            ids = f.ids if keep.all() else f.ids[keep]
            if len(f.memo) >= MEMO_FILTERS:
                f.memo.clear()
            f.memo[key] = ids
        if self.about:
            mentioning: np.ndarray = store.records_mentioning(self.about)
            if len(ids) == len(f.ids):
                return mentioning
            top = int(max(ids[-1] if len(ids) else 0, mentioning[-1] if len(mentioning) else 0)) + 1
            allowed = np.zeros(top, bool)
            allowed[ids] = True
            both: np.ndarray = mentioning[allowed[mentioning]]
            return both
        return ids


def source_matches(source: str, wanted: str) -> bool:
    """A record's ``source`` matches a filter value when it equals it, or begins with it and goes on
    after a boundary: ``file:notes.md`` matches ``file:notes.md#L12``, ``slack:`` every Slack source,
    and ``rec:1`` does not match ``rec:12``."""
    if not source.startswith(wanted):
        return False
    return len(source) == len(wanted) or wanted[-1] in SOURCE_BOUNDARIES or source[len(wanted)] in SOURCE_BOUNDARIES


def _values(value: str | Iterable[str] | None, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    for v in items:
        if not isinstance(v, str) or not v.strip():
            raise BadInput(f"bad {what} {v!r}: expected non-empty text")
        check_text(v, what)
    return tuple(dict.fromkeys(items))


def record_filter(*, kind: str | Iterable[str] | None = None, source: str | Iterable[str] | None = None,
                  since: str | None = None, until: str | None = None, about: str | Iterable[str] | None = None,
                  resolve: Callable[..., Entity], scope: str | Iterable[str] | None = None) -> RecordFilter:
    """A filter from what a user gave (each of kind, source and about: one value or several); entity
    names and aliases in ``about`` are resolved to refs by ``resolve``. Bad values raise BadInput."""
    kinds = _values(kind, "kind")
    for k in kinds:
        if not _KIND.match(k):
            raise BadInput(f"bad kind {k!r}: expected a short lower-case word such as message, note, doc")
    lo = parse_instant(since, what="since") if since is not None else None
    hi = parse_instant(until, what="until") if until is not None else None
    if lo is not None and hi is not None and hi <= lo:
        raise BadInput(f"bad until {until!r}: expected a time after since {since!r}")
    refs = tuple(dict.fromkeys(resolve(a, role="about").ref for a in _values(about, "about")))
    return RecordFilter(kinds, _values(source, "source"), lo, hi, refs, scope_list(scope))


def search(store: SearchStore, query: str, *, limit: int, where: RecordFilter) -> SearchResult:
    """The ``limit`` best records for the words of ``query`` among those ``where`` allows."""
    from graphmem.model.textindex import query_terms
    terms = search_terms(check_text(query, "query"))
    hits = store.search_records(query_terms(terms), limit, where.within(store))
    return SearchResult(query, tuple(terms), tuple(
        SearchHit(f"rec:{i}", score, snippet(text, terms), utc(ts), kind, src, scope, imp)
        for i, score, text, ts, kind, src, scope, imp in hits), where.to_dict() if where else {})
