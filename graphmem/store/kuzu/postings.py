"""The tables of graphmem's full-text index (``Term`` and ``Posting``; the index itself is
``graphmem/model/textindex.py``): postings written as records come, and the queries through which
``common/postings.py`` reads and keeps them decoded for search and ranks them by BM25."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from graphmem.store.common.postings import PostingCache
from graphmem.store.kuzu.schema import Schema

if TYPE_CHECKING:  # numpy loads with the first search or ingest, not with every command

    from graphmem.model.textindex import Postings


_TERM = "MATCH (t:Term {term: $t}) RETURN t.blocks"
_POSTING = "MATCH (p:Posting {key: $k}) RETURN p.data"
_INDEX_WRITES = {
    "Term": ("CREATE (:Term {term: $k, blocks: $v})", "MATCH (x:Term {term: $k}) SET x.blocks = $v"),
    "Posting": ("CREATE (:Posting {key: $k, data: $v})", "MATCH (x:Posting {key: $k}) SET x.data = $v"),
}
_POSTING_DROP = "MATCH (p:Posting {key: $k}) DELETE p"


class PostingTables(PostingCache, Schema):
    """The full-text index's rows; the postings held in memory and BM25 over them are ``PostingCache``'s."""

    # full-text index (graphmem/model/textindex.py) -------------------------------------------

    def _index_texts(self, records: list[tuple[int, str]], names: dict[int, list[str]] | None = None) -> None:
        """Add records (rising ids, above every indexed one) to the full-text index, in the caller's transaction.

        A term's postings are blocks ``Posting {key: "<term> <i>"}``; ``Term.blocks`` lists their sizes.
        Each batch appends one block per term it holds, merged with the last blocks as
        ``textindex.merge_plan`` says, so a term keeps about log2(postings) blocks.
        """
        from graphmem.model.textindex import Postings, merge_plan, postings_of
        added, docs, tokens = postings_of(records, names)
        old = self._term_blocks(list(added))
        new_terms: list[list[str]] = []
        changed_terms: list[list[str]] = []
        new_blocks: list[list[str]] = []
        changed_blocks: list[list[str]] = []
        dropped: list[str] = []
        for term, p in added.items():
            self._forget(term)
            sizes_before = old.get(term, [])
            sizes, first = merge_plan(sizes_before, len(p))
            parts = [self._block(term, i) for i in range(first, len(sizes_before))]
            data = Postings.concat([*parts, p]).encode()
            if first < len(sizes_before):
                changed_blocks.append([f"{term} {first}", data])
            else:
                new_blocks.append([f"{term} {first}", data])
            dropped.extend(f"{term} {i}" for i in range(first + 1, len(sizes_before)))
            blocks = ",".join(map(str, sizes))
            if sizes_before:
                changed_terms.append([term, blocks])
            else:
                new_terms.append([term, blocks])
        self._put_rows("Term", new_terms)
        self._put_rows("Posting", new_blocks)
        self._set_rows("Term", changed_terms)
        self._set_rows("Posting", changed_blocks)
        for key in dropped:
            self._q(_POSTING_DROP, {"k": key})
        n_docs, n_tokens = self.index_stats()
        self._set_meta("index_docs", str(n_docs + docs))
        self._set_meta("index_terms", str(n_tokens + tokens))
        self._index_stats = (n_docs + docs, n_tokens + tokens)  # a rollback forgets it

    def _put_rows(self, table: str, rows: list[list[str]]) -> None:
        """New index rows (key, value): plain text (terms and hex: no tabs, quotes or line breaks)."""
        if len(rows) > 50:
            self._copy(table, rows, multiline=False)
            return
        for k, v in rows:
            self._q(_INDEX_WRITES[table][0], {"k": k, "v": v})

    def _set_rows(self, table: str, rows: list[list[str]]) -> None:
        """New values for existing index rows (key, value)."""
        key = "term" if table == "Term" else "key"
        col = "blocks" if table == "Term" else "data"
        if len(rows) > 50:  # one join beats many lookups
            self._q(f"UNWIND $rows AS r MATCH (x:{table} {{{key}: r.k}}) SET x.{col} = r.v",
                    {"rows": [{"k": k, "v": v} for k, v in rows]})
            return
        for k, v in rows:
            self._q(_INDEX_WRITES[table][1], {"k": k, "v": v})

    def _term_blocks(self, terms: list[str]) -> dict[str, list[int]]:
        """Block sizes of the terms already indexed (a scan when there are many to look up)."""
        if len(terms) > 300:
            want = set(terms)
            rows: Iterable[list[Any]] = (r for r in self._iter("MATCH (t:Term) RETURN t.term, t.blocks") if r[0] in want)
        else:
            rows = ([t, r[0][0]] for t in terms if (r := self._q(_TERM, {"t": t})))
        return {t: [int(x) for x in b.split(",")] for t, b in rows}

    def _block(self, term: str, i: int) -> Postings:
        from graphmem.model.textindex import Postings
        rows = self._q(_POSTING, {"k": f"{term} {i}"})
        if not rows:
            raise self._missing_block(term, i)
        return Postings.decode(rows[0][0])

    # the hooks of the postings held in memory (``common.postings``)
    def _term_sizes(self, terms: list[str]) -> dict[str, str]:
        return {t: b for t, b in self._by_keys("(x:Term {k})", "x.term, x.blocks", terms, key="term")}

    def _blocks(self, keys: list[str]) -> dict[str, Any]:
        return {k: d for k, d in self._by_keys("(x:Posting {k})", "x.key, x.data", keys, key="key")}

    def _store_name(self) -> str:
        return str(self.path)

    def forget_postings(self) -> None:
        """Drop every decoded posting list held in memory (the next search reads them from the store)."""
        self._forget_all()
        self._facets = None
        self._mentioning.clear()

    def index_stats(self) -> tuple[int, int]:
        """Records in the full-text index and terms in them."""
        if self._index_stats is None:
            self._index_stats = (int(self.meta("index_docs") or 0), int(self.meta("index_terms") or 0))
        return self._index_stats
