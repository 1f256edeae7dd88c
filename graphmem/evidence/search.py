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
from graphmem.evidence.hits import SearchHit, SearchResult
from graphmem.evidence.query import content_words, search_terms, snippet
from graphmem.model.arrays import unique_ids
from graphmem.model.scopes import scope_list
from graphmem.model.text import check_text
from graphmem.model.times import format_instant, parse_instant, utc

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

    def archived_record_ids(self) -> Any: ...  # numpy int64 ids, rising (docs/lifecycle.md)


class RankStore(FilterStore, Protocol):
    """The store methods a ranking reads: BM25 over the index, and a record's row."""

    def rank_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[int, float]]: ...

    def record_hit(self, rec_id: int) -> tuple[str, int, str, str | None, str | None, float] | None: ...


class SearchStore(RankStore, Protocol):
    def search_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[Any, ...]]: ...


@dataclass(frozen=True)
class RecordFilter:
    """Which records a search or a pack's evidence may use; empty, every record."""

    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    since: int | None = None  # record time (ts), inclusive
    until: int | None = None  # record time (ts), exclusive
    about: tuple[str, ...] = ()  # entity refs
    include_archived: bool = False  # archived records too (docs/lifecycle.md); by default they are left out
    scopes: tuple[str, ...] | None = None  # None: every scope; else only records of these (unscoped left out)

    def __bool__(self) -> bool:
        return (bool(self.kinds or self.sources or self.about) or self.since is not None or self.until is not None
                or self.scopes is not None)

    def to_dict(self) -> dict[str, Any]:
        """The filter as given (normalized), for the documents that were filtered."""
        doc = {"kind": list(self.kinds), "source": list(self.sources), "since": format_instant(self.since),
               "until": format_instant(self.until), "about": list(self.about)}
        if self.scopes is not None:
            doc["scope"] = list(self.scopes)
        return doc | {"include_archived": True} if self.include_archived else doc

    def within(self, store: FilterStore) -> np.ndarray | None:
        """The ids of the records this filter allows (rising), or None when it allows every record;
        archived records are left out unless ``include_archived``."""
        archived = None if self.include_archived else store.archived_record_ids()
        if archived is None or not len(archived):
            return self._within(store)
        import numpy as np
        ids = self._within(store)
        if ids is None:
            f = store.record_facets()
            key = ("live", hash(archived.tobytes()))
            live: np.ndarray | None = f.memo.get(key)
            if live is None:
                live = f.memo[key] = f.ids[~np.isin(f.ids, archived)]
            return live
        kept: np.ndarray = ids[~np.isin(ids, archived)]
        return kept

    def lenders(self, store: FilterStore) -> np.ndarray | None:
        """The records that may lend a record context in ranking (``rank_in_context``): those of the
        filter's scopes, archived or not (None: every record)."""
        return None if self.scopes is None else RecordFilter(scopes=self.scopes, include_archived=True).within(store)

    def _within(self, store: FilterStore) -> np.ndarray | None:
        """The ids the filter's fields allow, archived or not (None: every record).

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
                  resolve: Callable[..., Entity], include_archived: bool = False,
                  scope: str | Iterable[str] | None = None) -> RecordFilter:
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
    return RecordFilter(kinds, _values(source, "source"), lo, hi, refs, include_archived=bool(include_archived),
                        scopes=scope_list(scope))


CONTEXT_SHARE = 0.5  # a record's score gains this share of the best score of the turns around it in its session
CONTEXT_POOL = 50  # the records ranked by their own words whose session neighbours are ranked too


def session_key(source: str) -> str:
    """The session a record belongs to: its source up to the first ``#`` (``chat:team#m12`` and
    ``chat:team#m13`` are one session; ``conv-26/session_3`` is its own key).

    >>> session_key("chat:team#m12"), session_key("conv-26/session_3")
    ('chat:team', 'conv-26/session_3')
    """
    return source.split("#", 1)[0]


SESSION_KINDS = ("message",)  # the records that are turns of a conversation


def sessions(store: FilterStore) -> tuple[np.ndarray, np.ndarray]:
    """Every record's id (rising) and session number, kept with the records' columns: -1 for a record
    with no source or not of a kind in ``SESSION_KINDS`` (a note or a document section stands alone)."""
    import numpy as np
    f = store.record_facets()
    held = f.memo.get("sessions")
    if held is None or len(held) != len(f.ids):
        keys: dict[str, int] = {}
        per_source = np.array([keys.setdefault(session_key(s), len(keys)) for s in f.sources] + [-1], np.int64)
        turn = np.array([k in SESSION_KINDS for k in f.kinds] + [False], bool)
        held = np.where(turn[f.kind], per_source[f.source], -1)
        f.memo["sessions"] = held
    return f.ids, held


def rank_in_context(store: RankStore, terms: list[str], limit: int, within: Any = None,
                    lenders: Any = None, rows: dict[int, Any] | None = None, read: int | None = None,
                    ) -> list[tuple[int, float, float]]:
    """Records ranked by BM25 of their own words plus ``CONTEXT_SHARE`` x the best BM25 of the record just
    before or just after them in the same session (docs/evidence.md, "Query words and ranking"): a turn
    that answers the turn the query's words find ranks with it. Only messages with a source have a
    session (``sessions``); any other record scores its own BM25. A neighbour's BM25 is read whatever the
    filter, so a filter never changes a score, except a scope: ``lenders`` (the records of the scopes asked
    for, None for all) are the only records that may lend, so a scoped read learns nothing from other
    scopes. Then the best records' rare names lend a share of their score (``lend_names``; ``rows``, when
    given, receives the rows it reads: those of the ``read`` best (default ``limit``) at once, as a caller
    would). (id, score, the part of the score others lent), best first, ties
    by id."""
    import numpy as np
    pool = max(limit, CONTEXT_POOL)
    own = dict(store.rank_records(terms, pool, within))
    if not own:
        return []
    own_all = dict(store.rank_records(terms, pool, lenders)) if within is not None else own  # who may lend
    ids, sess = sessions(store)
    seeds = np.array(sorted(set(own) | set(own_all)), np.int64)
    at = np.searchsorted(ids, seeds)
    near: set[int] = set()
    for i, rid in zip(at.tolist(), seeds.tolist(), strict=True):
        if i >= len(ids) or ids[i] != rid or sess[i] < 0:
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(ids) and sess[j] == sess[i]:
                near.add(int(ids[j]))
    if lenders is not None:
        near &= {int(x) for x in lenders[np.isin(lenders, list(near))]}
    if not near:
        return lend_names(store, [(i, v, 0.0) for i, v in sorted(own.items(), key=lambda x: (-x[1], x[0]))],
                          within, rows, limit if read is None else read, terms)[:limit]
    every = sorted(near | set(own) | set(own_all))
    scored = dict(store.rank_records(terms, len(every), np.array(every, np.int64)))
    allowed = set(own) | ({int(x) for x in within[np.isin(within, every)]} if within is not None else near)
    out = []
    for rid in allowed:
        i = int(np.searchsorted(ids, rid))
        if i >= len(ids) or ids[i] != rid:
            continue
        ctx = max((scored.get(int(ids[j]), 0.0) for j in (i - 1, i + 1)
                   if sess[i] >= 0 and 0 <= j < len(ids) and sess[j] == sess[i]), default=0.0)
        score = scored.get(rid, 0.0) + CONTEXT_SHARE * ctx
        if score > 0:
            out.append((rid, score, CONTEXT_SHARE * ctx))
    out.sort(key=lambda x: (-x[1], x[0]))
    return lend_names(store, out, within, rows, limit if read is None else read, terms)[:limit]


NAME_HITS = 3  # the best records whose rare names lend a share of their score to other records naming them
NAME_SHARE = 0.4  # a record naming a rare name one of those hits names gains this share of the hit's score
RARE_NAME = 0.05  # a name in more records than this share of the index (and more than NAME_FLOOR) tells none apart
NAME_FLOOR = 3
NAME_LENDS = 10  # the records a hit lends to (a default result list): most shared names first, then the nearest in time


NAMES_HELD = 1_000_000  # record ids of rare names a process keeps with the records' columns (8 bytes each)


def rare_name_records(store: Any, terms: list[str]) -> dict[str, np.ndarray]:
    """For name terms of a text (``model/names.py``: ``name_terms``), the records that name each
    (``lookup_terms``: written as a name, or a sentence's first word for a name; ids rising), for the
    names in at least 2 records and at most ``RARE_NAME`` of the index (or ``NAME_FLOOR``): a name
    every other record names (a conversation's speakers) tells none apart.

    What a name gives is kept with the records' columns (their ``memo``, dropped when records are
    added), so a name asked about again costs no read; the rest is one read of the terms' sizes (a name
    too common by them is decided there: most names of a conversation's turns are, and their postings
    are the largest) and one postings read for the others."""
    import numpy as np

    from graphmem.model.names import lookup_terms
    terms = list(dict.fromkeys(terms))
    f = store.record_facets()
    stats = store.index_stats()
    held = f.memo.get("names")
    if held is None or held[0] != stats or held[1] > NAMES_HELD:
        held = f.memo["names"] = [stats, 0, {}]
    known: dict[str, np.ndarray | None] = held[2]
    todo = [t for t in terms if t not in known]
    looked = sorted({x for t in todo for x in lookup_terms(t)})
    cap = max(NAME_FLOOR, RARE_NAME * stats[0])
    # the terms' sizes first: a name too common by them (often most) has its postings never read
    sizes = store.term_sizes(looked) if looked else {}
    counts = {x: sum(int(n) for n in b.split(",")) for x, b in sizes.items()}
    for t in todo:
        parts_in = [counts[x] for x in lookup_terms(t) if x in counts]
        if not parts_in or max(parts_in) > cap:  # none, or common whatever its other part holds
            known[t] = None
    todo = [t for t in todo if t not in known]
    looked = sorted({x for t in todo for x in lookup_terms(t) if x in counts})
    if looked:
        found = {t: got[0].ids for t, got in zip(looked, store.terms_postings(looked, sizes), strict=True)
                 if got is not None}
        for t in todo:
            parts = [found[x] for x in lookup_terms(t) if x in found]
            union = unique_ids(np.concatenate(parts).astype(np.int64)) if parts else np.zeros(0, np.int64)
            known[t] = union if 1 < len(union) <= cap else None
            held[1] += len(union) if known[t] is not None else 0
    return {t: got for t in terms if (got := known.get(t)) is not None}


def lend_names(store: Any, ranked: list[tuple[int, float, float]], within: Any = None,
               rows: dict[int, Any] | None = None, read: int = NAME_HITS, query: Iterable[str] = (),
               ) -> list[tuple[int, float, float]]:
    """``ranked`` (best first) with the graph's names lent (docs/evidence.md, "Query words and ranking"):
    each of the ``NAME_HITS`` best records that is a turn of a conversation (``sessions``: a message with a
    source) lends ``NAME_SHARE`` of its score to turns (allowed by
    ``within``) that names a rare name it speaks of (``rare_name_records``; not its speaker, nor a name
    whose words are all among ``query``'s index terms: BM25 has counted those), the best
    such share per record, added to the record's own score; a record found only this way joins the
    ranking. The rows of the ``read`` best (at least ``NAME_HITS``) are read at once, into ``rows`` when
    given: a caller that shows them reads no row twice.
    Same form as ``rank_in_context``: (id, score, the part lent), best first, ties by id."""
    import numpy as np

    from graphmem.model.names import name_terms
    from graphmem.model.textindex import terms
    best = ranked[:NAME_HITS]
    if not best or not hasattr(store, "terms_postings"):
        return ranked
    n = NAME_HITS if rows is None else max(read, NAME_HITS)
    rows = {} if rows is None else rows
    wanted = [rid for rid, _, _ in ranked[:n] if rid not in rows]
    if wanted:
        many = getattr(store, "record_hits", None)
        rows.update(many(wanted) if many is not None else {i: store.record_hit(i) for i in wanted})
    asked = set(query)  # a name the query names is one of its words already: BM25 counts it, no lending twice
    names = {rid: [t for t in name_terms(row[0], speaker=False) if not set(terms(t[1:].replace("_", " "))) <= asked]
             for rid, _, _ in best if (row := rows.get(rid)) is not None}
    lists = rare_name_records(store, [t for ts in names.values() for t in ts])
    if not lists:
        return ranked
    lent: dict[int, float] = {}
    f = store.record_facets()  # the records' times, in memory: the nearest are found without reads
    _, sess = sessions(store)  # only turns of conversations lend and borrow: a document stands alone
    for rid, score, _ in best:
        mine = [lists[t] for t in names.get(rid, []) if t in lists]
        if not mine or not len(f.ids):
            continue
        me = int(np.searchsorted(f.ids, rid))
        if me >= len(f.ids) or f.ids[me] != rid or sess[me] < 0:
            continue
        ids, counts = np.unique(np.concatenate(mine), return_counts=True)
        keep = ids != rid
        if within is not None:
            keep &= np.isin(ids, within)
        ids, counts = ids[keep], counts[keep]
        at = np.minimum(np.searchsorted(f.ids, ids), len(f.ids) - 1)
        ok = (f.ids[at] == ids) & (sess[at] >= 0)
        ids, counts, at = ids[ok], counts[ok], at[ok]
        order = np.lexsort((ids, np.abs(f.ts[at] - rows[rid][1]), -counts))[:NAME_LENDS]
        for other in ids[order].tolist():
            lent[other] = max(lent.get(other, 0.0), NAME_SHARE * score)
    if not lent:
        return ranked
    out = [(rid, score + (share := lent.pop(rid, 0.0)), part + share) for rid, score, part in ranked]
    out.extend((rid, share, share) for rid, share in lent.items())
    out.sort(key=lambda x: (-x[1], x[0]))
    return out


def search(store: SearchStore, query: str, *, limit: int, where: RecordFilter) -> SearchResult:
    """The ``limit`` best records for the words of ``query`` among those ``where`` allows."""
    from graphmem.model.textindex import query_terms
    terms = search_terms(check_text(query, "query"))
    rows: dict[int, Any] = {}  # the best hits' rows, read while ranking (their names lend, ``lend_names``)
    ranked = rank_in_context(store, query_terms(content_words(terms)), limit, where.within(store), where.lenders(store),
                             rows)
    wanted = [i for i, _, _ in ranked if i not in rows]
    many = getattr(store, "record_hits", None)  # one read for all the hits where the store can
    if wanted:
        rows.update(many(wanted) if many is not None else {i: store.record_hit(i) for i in wanted})
    hits = [(i, score, *row) for i, score, _ in ranked if (row := rows.get(i)) is not None]
    return SearchResult(query, tuple(terms), tuple(
        SearchHit(f"rec:{i}", score, snippet(text, terms), utc(ts), kind, src, scope, imp)
        for i, score, text, ts, kind, src, scope, imp in hits), where.to_dict() if where or where.include_archived else {})
