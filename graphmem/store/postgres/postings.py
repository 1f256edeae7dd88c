"""graphmem's own full-text index in two tables (``term``: a term's block sizes; ``posting``: its blocks,
keyed ``"<term> <i>"``), written as records come, in the blocks ``model/textindex.py`` plans, and ranked
by the same BM25 (``textindex.bm25_top``) as on Kuzu: the same records get the same scores on every
engine. Decoded postings are kept in memory and read again when a term's block sizes change (a write of
any process changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.errors import StoreUnavailable
from graphmem.store.postgres.records import PgRecords

if TYPE_CHECKING:
    import numpy as np

    from graphmem.model.textindex import Postings

_POSTINGS_HELD_MAX = 8_000_000


class PgPostings(PgRecords):
    """The full-text index's rows, the postings held in memory, and BM25 over them."""

    def _index_texts(self, records: list[tuple[int, str]], names: dict[int, list[str]] | None = None) -> None:
        """Add records (rising ids, above every indexed one) to the index, in the caller's transaction."""
        from graphmem.model.textindex import Postings, merge_plan, postings_of
        added, docs, tokens = postings_of(records, names)
        old = {t: [int(x) for x in b.split(",")] for t, b in self._q("SELECT term, blocks FROM term WHERE term = ANY(%s)",
                                                                       (list(added),))}
        want = [f"{t} {i}" for t, p in added.items() if t in old
                for i in range(merge_plan(old[t], len(p))[1], len(old[t]))]
        blocks = dict(self._q("SELECT key, data FROM posting WHERE key = ANY(%s)", (want,))) if want else {}
        terms: list[tuple[str, str]] = []
        postings: list[tuple[str, str]] = []
        dropped: list[str] = []
        for term, p in added.items():
            self._forget(term)
            before = old.get(term, [])
            sizes, first = merge_plan(before, len(p))
            parts = []
            for i in range(first, len(before)):
                if f"{term} {i}" not in blocks:
                    raise StoreUnavailable(f"store {self.where!r}: full-text index block {term!r} {i} is missing")
                parts.append(Postings.decode(blocks[f"{term} {i}"]))
            postings.append((f"{term} {first}", Postings.concat([*parts, p]).encode()))
            dropped.extend(f"{term} {i}" for i in range(first + 1, len(before)))
            terms.append((term, ",".join(map(str, sizes))))
        if dropped:
            self._w("DELETE FROM posting WHERE key = ANY(%s)", (dropped,))
        self._upsert("term", "term", "blocks", terms)
        self._upsert("posting", "key", "data", postings)
        n_docs, n_tokens = self.index_stats()
        self._set_meta("index_docs", str(n_docs + docs))
        self._set_meta("index_terms", str(n_tokens + tokens))

    def _upsert(self, table: str, key: str, col: str, rows: list[tuple[str, str]]) -> None:
        if len(rows) > 200:  # COPY into a temporary table, then one upsert
            self._w(f"CREATE TEMPORARY TABLE IF NOT EXISTS upsert_{table}(k text, v text) ON COMMIT DROP")
            self._copy(f"upsert_{table}", "k, v", rows)
            self._w(f"INSERT INTO {table}({key}, {col}) SELECT k, v FROM upsert_{table} "
                    f"ON CONFLICT ({key}) DO UPDATE SET {col} = EXCLUDED.{col}")
            self._w(f"TRUNCATE upsert_{table}")
            return
        self._many(f"INSERT INTO {table}({key}, {col}) VALUES (%s, %s) ON CONFLICT ({key}) DO UPDATE "
                   f"SET {col} = EXCLUDED.{col}", rows)

    def _forget(self, term: str) -> None:
        held = self._postings.pop(term, None)
        if held is not None:
            self._postings_held -= len(held[1])

    def term_postings(self, term: str) -> tuple[Postings, np.ndarray] | None:
        return self.terms_postings([term])[0]

    def terms_postings(self, terms: list[str]) -> list[tuple[Postings, np.ndarray] | None]:
        """Each term's postings and their BM25 weights now (None: not in the index): the terms' rows in one
        query, and the blocks of those not held (or changed since) in one more."""
        from graphmem.model.textindex import Postings, weights
        terms = list(dict.fromkeys(terms))
        found = dict(self._q("SELECT term, blocks FROM term WHERE term = ANY(%s)", (terms,))) if terms else {}
        stats = self.index_stats()
        stale = [t for t in terms if t in found and ((held := self._postings.get(t)) is None or held[0] != found[t])]
        keys = [f"{t} {i}" for t in stale for i in range(found[t].count(",") + 1)]
        data = dict(self._q("SELECT key, data FROM posting WHERE key = ANY(%s)", (keys,))) if keys else {}
        for k in keys:
            if k not in data:
                term, _, i = k.rpartition(" ")
                raise StoreUnavailable(f"store {self.where!r}: full-text index block {term!r} {i} is missing")
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
                if self._postings_held + len(p) > _POSTINGS_HELD_MAX:
                    self.forget_postings()
                held = (blocks, p, stats, weights(p, *stats))
                self._postings_held += len(p)
            elif held[2] != stats:
                held = (blocks, held[1], stats, weights(held[1], *stats))
            self._postings[term] = held
            out.append((held[1], held[3]))
        return out

    def forget_postings(self) -> None:
        """Drop every decoded posting list and derived column held in memory."""
        self._postings.clear()
        self._postings_held = 0
        self._facets = None
        self._archived = None
        self._redirects = None

    def index_stats(self) -> tuple[int, int]:
        """Records in the full-text index and terms in them (read from the store: other processes add records)."""
        rows = dict(self._q("SELECT key, value FROM meta WHERE key IN ('index_docs', 'index_terms')"))
        return int(rows.get("index_docs") or 0), int(rows.get("index_terms") or 0)

    def rank_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[int, float]]:
        from graphmem.model.textindex import allowed_mask, bm25_top
        if within is not None and len(within) == 0:
            return []
        found = [(p.ids, w) for p, w in filter(None, self.terms_postings(terms))]
        return bm25_top(found, limit, None if within is None else allowed_mask(within, found))

    def search_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[Any, ...]]:
        ranked = self.rank_records(terms, limit, within)
        hits = self.record_hits([i for i, _ in ranked])
        return [(i, score, *hits[i]) for i, score in ranked if i in hits]
