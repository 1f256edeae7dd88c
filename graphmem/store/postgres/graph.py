"""Graph reads over ``fact_edge`` (each walk's hop is one indexed join: ``fact_edge_src`` outward,
``fact_edge_dst`` inward), and what ``rebuild --check`` verifies and ``rebuild`` repairs on PostgreSQL."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from typing import Any

from graphmem.model import Interval
from graphmem.store.common.codecs import dumps
from graphmem.store.common.integrity import Problems
from graphmem.store.common.rows import name_index
from graphmem.store.postgres.base import TABLES
from graphmem.store.postgres.postings import PgPostings
from graphmem.store.values import FactEdge, WriteUndo

_VALID = "f.valid_from <= %s AND (f.valid_to IS NULL OR f.valid_to > %s)"
_INDEX_BATCH = 50_000


class PgGraph(PgPostings):
    """Reads along the fact edges, integrity checks and repairs."""

    def edges(self, as_of: int | None = None) -> Iterator[tuple[str, str, str, str, Interval]]:
        """Typed edges (label, from ref, to ref, predicate, interval), optionally valid at ``as_of``."""
        where, params = ("WHERE " + _VALID, (as_of, as_of)) if as_of is not None else ("", None)
        for label, a, b, pred, vf, vt, ids, conf, bname in self._q(
                "SELECT f.label, f.src, f.dst, f.predicate, f.valid_from, f.valid_to, f.assertions, f.conflicts, e.name "
                f"FROM fact_edge f JOIN entity e ON e.ref = f.dst {where} ORDER BY f.label, f.src, f.dst, f.valid_from",
                params):
            yield label, a, b, pred, Interval(a, pred, b, "entity", vf, vt, tuple(ids), (), tuple(conf), bname)

    def edges_into(self, ref: str, predicate: str, edge: str, as_of: int | None) -> list[Interval]:
        """Intervals whose object is ``ref`` along one edge type (the ``fact_edge_dst`` index)."""
        sql = ("SELECT f.src, f.valid_from, f.valid_to, f.assertions, f.conflicts, e.name FROM fact_edge f "
               "JOIN entity e ON e.ref = f.dst WHERE f.dst = %s AND f.predicate = %s AND f.label = %s")
        params: list[Any] = [ref, predicate, edge]
        if as_of is not None:
            sql += " AND " + _VALID
            params += [as_of, as_of]
        return [Interval(a, predicate, ref, "entity", vf, vt, tuple(ids), (), tuple(conf), name)
                for a, vf, vt, ids, conf, name in self._q(sql + " ORDER BY f.src, f.valid_from", params)]

    def fact_edges_at(self, refs: Iterable[str], as_of: int, other_type: str | None = None) -> list[FactEdge]:
        """The fact edges valid at ``as_of`` with an end among ``refs`` (both directions), each once; with
        ``other_type``, only those whose other end has that type. One query: the two index joins."""
        refs = sorted(set(refs))
        if not refs:
            return []
        cols = "f.label, f.src, f.dst, f.predicate, f.valid_from, f.valid_to, f.assertions, f.conflicts"
        other = ("", "") if other_type is None else (" AND f.dst_type = %s", " AND f.src_type = %s")
        params: list[Any] = [refs, as_of, as_of, *([other_type] if other_type else []),
                             refs, as_of, as_of, *([other_type] if other_type else [])]
        rows = self._q(f"SELECT {cols} FROM fact_edge f WHERE f.src = ANY(%s) AND {_VALID}{other[0]} UNION "
                       f"SELECT {cols} FROM fact_edge f WHERE f.dst = ANY(%s) AND {_VALID}{other[1]}", params)
        found = {(label, src, dst, vf): FactEdge(label, src, dst, pred, vf, vt, tuple(ids), tuple(conf))
                 for label, src, dst, pred, vf, vt, ids, conf in rows}
        return [found[k] for k in sorted(found)]

    # integrity: what rebuild --check verifies beyond the view ------------------------------

    def integrity_problems(self, entity_refs: Container[str], limit: int = 50) -> list[dict[str, Any]]:
        """Statements naming entities that do not exist, id counters behind the ids in use, times no reader
        can hold, and the full-text index out of step with the records. (Record keys cannot disagree with
        the records here: the key is a unique column of ``record``.)"""
        from graphmem.model.times import MAX_US, MIN_US

        found = Problems(limit)
        found.dangling(entity_refs, (ref for (ref,) in self._q("SELECT DISTINCT subject FROM assertion ORDER BY subject")),
                       (ref for (ref,) in self._q("SELECT DISTINCT object FROM assertion WHERE object_type = 'entity' "
                                                  "ORDER BY object")))
        bad = " OR ".join(f"{c} < %(lo)s OR {c} > %(hi)s" for c in ("valid_from", "valid_to", "recorded_at",
                                                                      "retracted_at"))
        found.out_of_range(fid for (fid,) in self._q(f"SELECT id FROM assertion WHERE {bad} ORDER BY id LIMIT %(n)s",
                                                     {"lo": MIN_US, "hi": MAX_US, "n": limit}))
        found.counter_behind("next_fact", self._q("SELECT max(id) FROM assertion")[0][0], self._counter("next_fact"))
        found.counter_behind("next_record", self._q("SELECT max(id) FROM record")[0][0], self._counter("next_record"))
        found.index((text for (text,) in self._iter("SELECT text FROM record")), self.meta("index_names") == "1",
                    self.index_stats(), self._q("SELECT term, blocks FROM term"))
        return found.found

    def node_tables(self) -> list[str]:
        """The store's tables (PostgreSQL has no node tables; every table answers ``pk_index_misses``)."""
        return sorted(TABLES)

    def pk_index_misses(self, table: str, probes: int = 2000) -> tuple[int, int]:
        """Keys of ``table`` read by a scan (an even spread of about ``probes``) and looked up through its
        primary-key index: (looked up, not found). A sound index finds every one."""
        if table not in TABLES:
            return 0, 0
        pk = self._q("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
                     "a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
                     (f"{self.schema}.{table}",))
        if not pk:
            return 0, 0
        col = pk[0][0]
        n = int(self._q(f"SELECT count(*) FROM {table}")[0][0])
        step = max(1, n // probes)
        keys = [k for (k,) in self._q(f"SELECT {col} FROM (SELECT {col}, row_number() OVER () AS i FROM {table}) x "
                                      "WHERE i %% %s = 0", (step,))]
        self._q("SET enable_seqscan = off")  # the lookups read the index, never the table
        try:
            missed = sum(not self._q(f"SELECT 1 FROM {table} WHERE {col} = %s", (k,)) for k in keys)
        finally:
            self._q("RESET enable_seqscan")
        return len(keys), missed

    def tables_to_rewrite(self, undo: WriteUndo | None) -> list[str]:
        """None: a PostgreSQL index is written through the server's WAL with its table."""
        return []

    def rewrite_node_table(self, table: str) -> int:
        """Rebuild the table's indexes (REINDEX); its rows."""
        if table not in TABLES:
            return 0
        self._w(f"REINDEX TABLE {table}")
        return int(self._q(f"SELECT count(*) FROM {table}")[0][0])

    def roll_back(self, undo: WriteUndo) -> dict[str, int]:
        """Take back what a write recorded in ``undo`` (in the caller's transaction); the rows removed, by kind.
        PostgreSQL never leaves a write half-committed, so ``rebuild`` does not call this here."""
        out = {"statements": 0, "records": 0, "entities": 0}
        if undo.facts_from is not None:
            out["statements"] = len(self._w("DELETE FROM assertion WHERE id >= %s RETURNING id", (undo.facts_from,)))
        if undo.retracted:
            self._w("UPDATE assertion SET retracted_at = NULL, retract_reason = NULL WHERE id = ANY(%s)",
                    (sorted(set(undo.retracted)),))
        if undo.records_from is not None:
            out["records"] = len(self._w("DELETE FROM record WHERE id >= %s RETURNING id", (undo.records_from,)))
            self._w("DELETE FROM mention WHERE rec_id >= %s", (undo.records_from,))
        for rid, (at, mentions) in sorted(undo.records_before.items()):
            self._w("UPDATE record SET extracted_at = %s WHERE id = %s", (at, rid))
            self.add_mentions(rid, [(ref, a, b, rule) for ref, a, b, rule in mentions])
        if undo.entities:
            out["entities"] = len(self._w("DELETE FROM entity WHERE ref = ANY(%s) RETURNING ref", (list(undo.entities),)))
        for ref, before in sorted(undo.entities_before.items()):
            self._w("UPDATE entity SET aliases = %s, description = %s WHERE ref = %s", (dumps(list(before[0])), before[1], ref))
            if len(before) > 2:
                self._w("UPDATE entity SET name = %s WHERE ref = %s", (before[2], ref))
        if undo.events_from is not None:
            self._w("DELETE FROM entity_event WHERE id >= %s", (undo.events_from,))
            self.forget_redirects()
        if undo.entities or undo.entities_before:
            self.entity_writes += 1
            self._lexicon_drop()
        if undo.counters.get("next_fact", 0) > self._counter("next_fact"):
            self.set_next_fact_id(undo.counters["next_fact"])
        if undo.counters.get("next_record", 0) > self._counter("next_record"):
            self._set_meta("next_record", str(undo.counters["next_record"]))
        self.forget_postings()
        return out

    def rebuild_names(self) -> int:
        """Make the name index again from the entities (in the caller's transaction); the keys written."""
        names = name_index(self.all_entities())
        self._w("DELETE FROM name")
        self._copy("name", "key, refs", ((k, dumps(sorted(v))) for k, v in sorted(names.items())))
        return len(names)

    def rebuild_record_index(self) -> int:
        """Make the full-text index again from the records (in the caller's transaction); the records indexed."""
        self.forget_postings()
        self._w("DELETE FROM term")
        self._w("DELETE FROM posting")
        for k in ("index_docs", "index_terms"):
            self._set_meta(k, "0")
        self._set_meta("index_names", "1")
        texts = [(i, t) for i, t in self._q("SELECT id, text FROM record ORDER BY id")]
        for at in range(0, len(texts), _INDEX_BATCH):
            self._index_texts(texts[at:at + _INDEX_BATCH])
        return len(texts)
