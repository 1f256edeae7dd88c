"""graphmem's own full-text index in two tables (``term``: a term's block sizes; ``posting``: its blocks,
keyed ``"<term> <i>"``), written as records come, in the blocks ``model/textindex.py`` plans, and ranked
by the same BM25 (``textindex.bm25_top``) as on Kuzu: the same records get the same scores on every
engine. The decoded postings kept in memory, read again when a term's block sizes change (a write of
any process changes them), are ``common/postings.py``'s; this module has the queries."""

from __future__ import annotations

from typing import Any

from graphmem.store.common.postings import PostingCache
from graphmem.store.postgres.records import PgRecords


class PgPostings(PostingCache, PgRecords):
    """The full-text index's rows; the postings held in memory and BM25 over them are ``PostingCache``'s."""

    def _index_texts(self, records: list[tuple[int, str]], names: dict[int, list[str]] | None = None) -> None:
        """Add records (rising ids, above every indexed one) to the index, in the caller's transaction."""
        from graphmem.model.textindex import Postings, merge_plan, postings_of
        added, docs, tokens = postings_of(records, names)
        old = {t: [int(x) for x in b.split(",")] for t, b in self._term_sizes(list(added)).items()}
        want = [f"{t} {i}" for t, p in added.items() if t in old
                for i in range(merge_plan(old[t], len(p))[1], len(old[t]))]
        blocks = self._blocks(want) if want else {}
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
                    raise self._missing_block(term, i)
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

    # the hooks of the postings held in memory (``common.postings``)
    def _term_sizes(self, terms: list[str]) -> dict[str, str]:
        return dict(self._q("SELECT term, blocks FROM term WHERE term = ANY(%s)", (terms,)))

    def _blocks(self, keys: list[str]) -> dict[str, Any]:
        return dict(self._q("SELECT key, data FROM posting WHERE key = ANY(%s)", (keys,)))

    def _store_name(self) -> str:
        return self.where

    def forget_postings(self) -> None:
        """Drop every decoded posting list and derived column held in memory."""
        self._forget_all()
        self._facets = None
        self._archived = None
        self._redirects = None

    def index_stats(self) -> tuple[int, int]:
        """Records in the full-text index and terms in them (read from the store: other processes add records)."""
        rows = dict(self._q("SELECT key, value FROM meta WHERE key IN ('index_docs', 'index_terms')"))
        return int(rows.get("index_docs") or 0), int(rows.get("index_terms") or 0)
