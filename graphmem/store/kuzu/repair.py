"""What ``rebuild --check`` verifies beyond the view, and the repairs: a node table written again
from a scan of its rows, an interrupted bulk write taken back (``WriteUndo``), the name index and
the record index made again from the tables they derive from."""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import Any

from graphmem.errors import StoreUnavailable
from graphmem.ontology.schema import RECORD_TYPE
from graphmem.store.common.codecs import dumps
from graphmem.store.common.integrity import Problems
from graphmem.store.common.rows import name_index
from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.codecs import _ts_param
from graphmem.store.kuzu.recordfacets import FACETS_META
from graphmem.store.kuzu.schema import _INDEX_DDL, _NAME_DDL, _RECORD_KEY_DDL, Schema
from graphmem.store.values import WriteUndo

_PK_PROBES = 2000  # primary-key lookups per table in a check (an even spread of a larger table's keys): a table a
# killed checkpoint left unsound misses 0.5-9% of its keys (measured), so 2,000 find it; 5,000 took 2 s at 100k
_REWRITE = "_rewrite"  # the suffix of a table's copy while a repair writes the table again
_INDEX_BATCH = 50_000  # records indexed at once when the whole index is made again


class Repair(Schema):
    """Integrity checks and repairs."""

    # integrity: what rebuild --check verifies beyond the view ------------------------------

    def integrity_problems(self, entity_refs: Container[str], limit: int = 50) -> list[dict[str, Any]]:
        """What is wrong with the tables the view does not cover: statements naming entities that do not
        exist, id counters behind the ids in use, record keys and the full-text index out of step with
        the records, and times no reader can hold. Each problem: ``code``, ``message`` and what it is
        about; at most ``limit`` of a kind."""
        from graphmem.model.times import MAX_US, MIN_US

        found = Problems(limit)
        found.dangling(entity_refs,
                       (ref for (ref,) in self._iter("MATCH (a:Assertion) RETURN DISTINCT a.subject ORDER BY a.subject")),
                       (ref for (ref,) in self._iter("MATCH (a:Assertion) WHERE a.object_type = 'entity' "
                                                     "RETURN DISTINCT a.object ORDER BY a.object")))
        times = " OR ".join(f"{c} < {_int(MIN_US)} OR {c} > {_int(MAX_US)}"
                            for c in ("a.valid_from", "a.valid_to", "a.recorded_at", "a.retracted_at"))
        found.out_of_range(fid for (fid,) in self._q(
            f"MATCH (a:Assertion) WHERE {times} RETURN a.id ORDER BY a.id LIMIT {_int(limit)}"))
        found.counter_behind("next_fact", self._q("MATCH (a:Assertion) RETURN max(a.id)")[0][0], self.next_fact_id())
        records: dict[str, int] = {}

        def texts() -> Iterator[str]:  # one scan for the keys' check and the index's
            for key, rid, text in self._iter("MATCH (r:Record) RETURN r.key, r.id, r.text"):
                records[key] = rid
                yield text

        counted = (int(self.meta("index_docs") or 0), int(self.meta("index_terms") or 0))  # as stored, not cached
        found.index(texts(), self.meta("index_names") == "1", counted,  # a store indexed before names has none
                    ((t, b) for t, b in self._iter("MATCH (t:Term) RETURN t.term, t.blocks")))
        found.counter_behind("next_record", max(records.values(), default=None), self.next_record_id())
        keys = self.all_record_keys()
        for key in sorted(set(records) ^ set(keys) | {k for k in records if keys.get(k, records[k]) != records[k]}):
            found.add("record_key_mismatch", f"record key {key!r}: the records say {records.get(key)}, the key index "
                      f"says {keys.get(key)}", key=key)
        for table in self.node_tables():
            looked, missed = self.pk_index_misses(table)
            if missed:
                found.add("pk_index_mismatch", f"table {table}: {missed} of {looked} keys read from its rows are not "
                          "found by a primary-key lookup (its index is out of step with its rows, as a process killed "
                          "during a checkpoint can leave it); run 'graphmem rebuild' to write the table again", table=table)
        return found.found

    # repair: tables made again from the ones they derive from ---------------------------

    def node_tables(self) -> list[str]:
        return sorted(name for name, kind in self._q("CALL show_tables() RETURN name, type") if kind == "NODE")

    def pk_index_misses(self, table: str, probes: int = _PK_PROBES) -> tuple[int, int]:
        """Keys of ``table`` read by a scan (all of them, or an even spread of about ``probes`` in a larger
        table) and looked up by primary key, which reads the table's hash index: (looked up, not found).
        A sound table finds every one (Kuzu 0.11: about 0.06 ms a lookup)."""
        info = self._q(f"CALL table_info('{table}') RETURN name, type, `primary key`")
        pk, ktype = next((n, t) for n, t, is_pk in info if is_pk)
        n = int(self._q(f"MATCH (x:{table}) RETURN count(x)")[0][0])
        step = max(1, n // probes)
        # the spread is picked by Kuzu (13 ms over 1M rows, against 0.8 s to hand every key to Python)
        keys = [k for (k,) in self._q(f"MATCH (x:{table}) WHERE offset(id(x)) % {_int(step)} = 0 RETURN x.{pk}")]
        by_param = f"MATCH (x:{table} {{{pk}: $k}}) RETURN 1"
        missed = 0
        for k in keys:  # a parameterized INT64 key would scan the table instead (module docstring)
            missed += not (self._q(f"MATCH (x:{table} {{{pk}: {_int(k)}}}) RETURN 1") if ktype == "INT64"
                           else self._q(by_param, {"k": k}, hot=True))
        return len(keys), missed

    def tables_to_rewrite(self, undo: WriteUndo | None) -> list[str]:
        """The node tables a repair writes again (``rewrite_node_table``): those an interrupted bulk write
        inserted into and no later step of the repair makes again (the name index, record keys and
        full-text index are), and any whose rewrite a kill cut short. Without the write's own account of
        itself (an older mark), every table a bulk write inserts into."""
        kinds = dict(self._q("CALL show_tables() RETURN name, type"))
        out = {t[:-len(_REWRITE)] for t, kind in kinds.items() if kind == "NODE" and t.endswith(_REWRITE)}
        if undo is None or undo.records_from is not None:
            out.add(RECORD_TYPE)
        if undo is None or undo.facts_from is not None:
            out |= {"Assertion", "Subject", "SubjectFacet"}
        if undo is None or undo.events_from is not None:
            out.add("EntityEvent")
        if undo is None:
            out |= set(self.ontology.entity_types)
        else:
            out |= {t for ref in undo.entities if (t := self.ontology.type_for_prefix(ref.partition(":")[0]))}
        return sorted(t for t in out if kinds.get(t) == "NODE")

    def rewrite_node_table(self, table: str) -> int:
        """Write a node table again from a scan of its rows, with the rel tables that reach it; its rows.
        Outside a transaction: two commits, each with its checkpoint. The first loads copies
        (``<table>_rewrite`` and ``<rel>_rewrite``, by COPY from a scan of the originals), whose row count is
        then checked; the second, DDL only (logged whole, so a kill leaves the old tables or the new), drops
        the originals and gives the copies their names. Copies a kill left behind are made again.

        A process killed while Kuzu 0.11.3 checkpoints a commit that inserted into a node table can leave
        that table's primary-key hash index out of step with its rows, and opening the store (the WAL
        replay) does not mend it: keys of rows the table holds are not found, looking up some absent keys
        crashes the process, and the checkpoint after a later insert of a few thousand keys crashes
        (exit 139). A scan does not read the index; a table made again has a new one."""
        assert not self._in_tx
        new = table + _REWRITE
        info = self._q(f"CALL table_info('{table}') RETURN name, type, `primary key`")
        pk = next(n for n, _, is_pk in info if is_pk)
        kinds = dict(self._q("CALL show_tables() RETURN name, type"))
        rels: dict[str, list[list[str]]] = {}  # rel table -> its (from, to, from key, to key), when it reaches the table
        for name, kind in sorted(kinds.items()):
            if kind == "REL" and not name.endswith(_REWRITE):
                conns = self._q(f"CALL show_connection('{name}') RETURN *")
                if any(table in c[:2] for c in conns):
                    rels[name] = conns

        def swap(t: str) -> str:
            return new if t == table else t

        self._plan_generation += 1  # prepared plans may name the tables dropped here
        with self.transaction():
            for name in sorted(t for t, kind in kinds.items() if kind == "REL" and t.endswith(_REWRITE)):
                self._q(f"DROP TABLE {name}")
            if new in kinds:
                self._q(f"DROP TABLE {new}")
            self._q(f"CREATE NODE TABLE {new}({', '.join(f'{n} {t}' for n, t, _ in info)}, PRIMARY KEY({pk}))")
            self._q(f"COPY {new} FROM (MATCH (x:{table}) RETURN {', '.join(f'x.{n}' for n, _, _ in info)})")
            for rel, conns in rels.items():
                props = self._q(f"CALL table_info('{rel}') RETURN name, type")
                pairs = ", ".join(f"FROM {swap(a)} TO {swap(b)}" for a, b, _, _ in conns)
                self._q(f"CREATE REL TABLE {rel}{_REWRITE}({pairs}{''.join(f', {n} {t}' for n, t in props)})")
                for a, b, ka, kb in conns:
                    self._q(f"COPY {rel}{_REWRITE} FROM (MATCH (x:{a})-[e:{rel}]->(y:{b}) RETURN x.{ka}, y.{kb}"
                            f"{''.join(f', e.{n}' for n, _ in props)}) (from='{swap(a)}', to='{swap(b)}')")
            self._bulk_written = True  # a checkpoint follows the commit
        rows = int(self._q(f"MATCH (x:{table}) RETURN count(x)")[0][0])
        copied = int(self._q(f"MATCH (x:{new}) RETURN count(x)")[0][0])
        if copied != rows:
            raise StoreUnavailable(f"store {str(self.path)!r}: writing table {table} again copied {copied} of its "
                                   f"{rows} rows; nothing was replaced")
        # Edges are not counted: an edge is copied when both its ends are rows of the copies, which every
        # row is. Kuzu can keep edges of an interrupted write whose nodes it lost, joined to the wrong rows
        # (seen: 2,500 fact edges of a killed import pointing at the 15 tools that were there before);
        # those are not copied, and the fact edges, which the view derives, are compared and made again
        # by the rebuild that follows.
        self._plan_generation += 1
        with self.transaction():
            for rel in rels:
                self._q(f"DROP TABLE {rel}")
            self._q(f"DROP TABLE {table}")
            self._q(f"ALTER TABLE {new} RENAME TO {table}")
            for rel in rels:
                self._q(f"ALTER TABLE {rel}{_REWRITE} RENAME TO {rel}")
            self._bulk_written = True
        self._pairs = None
        self._node_refs.clear()
        self._node_counts.clear()
        self._node_tables = None
        self.forget_postings()
        return rows

    def roll_back(self, undo: WriteUndo) -> dict[str, int]:
        """Take back what an interrupted bulk write left of itself (in the caller's transaction), so the
        authority tables hold the store as it was before that write: its statements, records and
        entities removed, the rows it changed given their old values. The id counters keep the higher
        value, so an id the lost write took is never given again. The rows removed, by kind."""
        out = {"statements": 0, "records": 0, "entities": 0}
        if undo.facts_from is not None:
            out["statements"] = self._q(f"MATCH (a:Assertion) WHERE a.id >= {_int(undo.facts_from)} "
                                        "RETURN count(a)")[0][0]
            self._q(f"MATCH (a:Assertion) WHERE a.id >= {_int(undo.facts_from)} DELETE a")
        for fid in sorted(set(undo.retracted)):  # a fact of this write is gone already; the match is then empty
            self._q(f"MATCH (a:Assertion {{id: {_int(fid)}}}) SET a.retracted_at = NULL, a.retract_reason = NULL")
        if undo.records_from is not None:
            out["records"] = self._q(f"MATCH (r:Record) WHERE r.id >= {_int(undo.records_from)} RETURN count(r)")[0][0]
            self._q(f"MATCH (r:Record) WHERE r.id >= {_int(undo.records_from)} DETACH DELETE r")
            self._set_meta(FACETS_META, "")  # the records' facets file may hold them (recordfacets.py)
        for rid, (at, mentions) in sorted(undo.records_before.items()):
            self._q("MATCH (r:Record {ref: $r}) SET r.extracted_at = $t", {"r": f"rec:{_int(rid)}", "t": _ts_param(at)})
            self.add_mentions(rid, [(ref, a, b, rule) for ref, a, b, rule in mentions])
        by_type: dict[str, list[str]] = {}
        for ref in undo.entities:
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is not None:
                by_type.setdefault(etype, []).append(ref)
        for etype, refs in sorted(by_type.items()):
            out["entities"] += self._q(f"MATCH (e:{etype}) WHERE e.ref IN $r RETURN count(e)", {"r": refs})[0][0]
            self._q(f"MATCH (e:{etype}) WHERE e.ref IN $r DETACH DELETE e", {"r": refs})
        for ref, before in sorted(undo.entities_before.items()):
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is not None:
                self._q(f"MATCH (e:{etype} {{ref: $r}}) SET e.aliases = $a, e.description = $d",
                        {"r": ref, "a": dumps(list(before[0])), "d": before[1]})
                if len(before) > 2:  # the name (marks written before renames existed hold two values)
                    self._q(f"MATCH (e:{etype} {{ref: $r}}) SET e.name = $n", {"r": ref, "n": before[2]})
        if undo.events_from is not None:
            self._q(f"MATCH (e:EntityEvent) WHERE e.id >= {_int(undo.events_from)} DELETE e")
            self.forget_redirects()
        if undo.entities or undo.entities_before:
            self.entity_writes += 1
            self._lexicon_drop()
        if undo.counters.get("next_fact", 0) > self.next_fact_id():
            self.set_next_fact_id(undo.counters["next_fact"])
        if undo.counters.get("next_record", 0) > self.next_record_id():
            self._set_meta("next_record", str(undo.counters["next_record"]))
        self.forget_postings()  # and the records' filter columns, which held the records taken back
        return out

    def rebuild_names(self) -> int:
        """Make the name index again from the entities (in the caller's transaction); the keys written."""
        names = name_index(self.all_entities())
        self._plan_generation += 1  # prepared plans may name the table dropped here
        self._q("DROP TABLE Name")
        self._q(_NAME_DDL)
        self._copy("Name", ([k, dumps(sorted(v))] for k, v in sorted(names.items())),
                   multiline=any("\n" in k or "\r" in k for k in names))
        return len(names)

    def rebuild_record_index(self) -> int:
        """Make the record keys and the full-text index again from the records (in the caller's
        transaction); the records indexed."""
        self._plan_generation += 1
        self.forget_postings()
        for ddl in ("DROP TABLE RecordKey", _RECORD_KEY_DDL, "DROP TABLE Term", "DROP TABLE Posting", *_INDEX_DDL):
            self._q(ddl)
        self._q("COPY RecordKey FROM (MATCH (r:Record) RETURN r.key, r.id)")
        self._bulk_written = True
        self._set_meta("index_docs", "0")
        self._set_meta("index_terms", "0")
        self._set_meta("index_names", "1")  # rebuilt with the records' names (model/names.py)
        self._index_stats = (0, 0)
        texts = [(i, t) for i, t in self._iter("MATCH (r:Record) RETURN r.id, r.text ORDER BY r.id")]
        for at in range(0, len(texts), _INDEX_BATCH):
            self._index_texts(texts[at:at + _INDEX_BATCH])
        return len(texts)
