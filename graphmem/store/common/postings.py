"""The full-text index's postings as every engine reads them: a term's posting blocks decoded and kept in
memory with their BM25 weights, checked against the term's block sizes on each read (a write, of this
process or another, changes them), and BM25 ranking over them (``model/textindex.py``). An engine keeps
its queries: the terms' block sizes, the blocks by key, and the index's counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.errors import StoreUnavailable

if TYPE_CHECKING:  # numpy loads with the first search or ingest, not with every command
    import numpy as np

    from graphmem.model.textindex import Postings

POSTINGS_HELD_MAX = 8_000_000  # decoded postings kept in memory (8 bytes each)

Held = tuple[str, "Postings", tuple[int, int], "np.ndarray"]  # block sizes, postings, index counts, weights


class PostingCache:
    """The decoded postings held in memory (``_postings``: term -> ``Held``; ``_postings_held``: how many
    postings in all), read through the engine's hooks below, and BM25 over them."""

    _postings: dict[str, Held]
    _postings_held: int

    if TYPE_CHECKING:  # the engine's own, each a query or two
        def _term_sizes(self, terms: list[str]) -> dict[str, str]: ...  # term -> its block sizes ("3,1")
        def _blocks(self, keys: list[str]) -> dict[str, Any]: ...  # "<term> <i>" -> the block's encoded postings
        def _store_name(self) -> str: ...  # the store in messages
        def index_stats(self) -> tuple[int, int]: ...
        def forget_postings(self) -> None: ...
        def record_hits(self, rec_ids: list[int]) -> dict[int, tuple[str, int, str, str | None, str | None, float]]: ...

    def _missing_block(self, term: str, i: int | str) -> StoreUnavailable:
        return StoreUnavailable(f"store {self._store_name()!r}: full-text index block {term!r} {i} is missing")

    def _forget(self, term: str) -> None:
        held = self._postings.pop(term, None)
        if held is not None:
            self._postings_held -= len(held[1])

    def _forget_all(self) -> None:
        self._postings.clear()
        self._postings_held = 0

    def term_postings(self, term: str) -> tuple[Postings, np.ndarray] | None:
        """A term's postings and their BM25 weights now; both are kept until a write touches the term."""
        return self.terms_postings([term])[0]

    def term_sizes(self, terms: list[str]) -> dict[str, str]:
        """The block sizes of each term in the index (``"3,1"``: how many records each of its blocks
        holds; their sum, how many records the term is in), from the terms' rows alone, in one query."""
        terms = list(dict.fromkeys(terms))
        return self._term_sizes(terms) if terms else {}

    def terms_postings(self, terms: list[str], sizes: dict[str, str] | None = None
                       ) -> list[tuple[Postings, np.ndarray] | None]:
        """Each term's postings and their BM25 weights now (None: not in the index): the terms' block sizes
        in one query (or ``sizes``, as ``term_sizes`` read them just before), and the blocks of those not held
        (or whose sizes changed since) in one more."""
        from graphmem.model.textindex import Postings, weights
        terms = list(dict.fromkeys(terms))
        found = ({t: sizes[t] for t in terms if t in sizes} if sizes is not None else
                 self._term_sizes(terms) if terms else {})
        stats = self.index_stats()
        stale = [t for t in terms if t in found and ((held := self._postings.get(t)) is None or held[0] != found[t])]
        keys = [f"{t} {i}" for t in stale for i in range(found[t].count(",") + 1)]
        data = self._blocks(keys) if keys else {}
        for k in keys:
            if k not in data:
                term, _, i = k.rpartition(" ")
                raise self._missing_block(term, i)
        out: list[tuple[Postings, np.ndarray] | None] = []
        for term in terms:
            blocks = found.get(term)
            if blocks is None:
                out.append(None)
                continue
            held = self._postings.get(term)
            if held is None or held[0] != blocks:
                p = Postings.concat([Postings.decode(data[f"{term} {i}"]) for i in range(blocks.count(",") + 1)])
                self._forget(term)
                if self._postings_held + len(p) > POSTINGS_HELD_MAX:
                    self.forget_postings()
                held = (blocks, p, stats, weights(p, *stats))
                self._postings_held += len(p)
            elif held[2] != stats:
                held = (blocks, held[1], stats, weights(held[1], *stats))
            self._postings[term] = held
            out.append((held[1], held[3]))
        return out

    def rank_records(self, terms: list[str], limit: int, within: np.ndarray | None = None) -> list[tuple[int, float]]:
        """BM25-ranked record ids (ties by record number) for distinct index terms: (id, score), best first;
        with ``within`` (record ids, rising), only those records are ranked (scores are unchanged)."""
        from graphmem.model.textindex import allowed_mask, bm25_top
        if within is not None and len(within) == 0:
            return []
        found = [(p.ids, w) for p, w in filter(None, self.terms_postings(terms))]
        return bm25_top(found, limit, None if within is None else allowed_mask(within, found))

    def search_records(self, terms: list[str], limit: int, within: np.ndarray | None = None) -> list[tuple[Any, ...]]:
        """BM25-ranked records (ties by record number) for distinct index terms:
        (id, score, text, ts, kind, source, scope, importance), best first (``within``: as for ``rank_records``).
        A constant number of queries whatever the limit: the terms' rows, the blocks not held, the hits' rows."""
        ranked = self.rank_records(terms, limit, within)
        hits = self.record_hits([i for i, _ in ranked])
        return [(i, score, *hits[i]) for i, score in ranked if i in hits]
