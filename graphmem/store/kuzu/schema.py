"""The Kuzu store's tables and what it keeps about itself: their creation, the check that a store
opens with the ontology and predicates it was built with, and the ``Meta`` table."""

from __future__ import annotations

import json
from typing import Any

from graphmem.errors import StoreReadOnly, StoreUnavailable
from graphmem.ontology.schema import RECORD_TYPE
from graphmem.store.common.codecs import dumps
from graphmem.store.kuzu.base import SCHEMA_VERSION, StoreBase

_SUBJECT_DDL = "CREATE NODE TABLE Subject(ref STRING PRIMARY KEY, name STRING, log STRING, view STRING)"
# a subject's intervals of one predicate, open and ended apart, with their time bounds (FACETS_LAYOUT; codecs.facet_rows)
_FACET_DDL = ("CREATE NODE TABLE SubjectFacet(key STRING PRIMARY KEY, ref STRING, predicate STRING, open STRING, "
              "since INT64, ended STRING, first INT64, last INT64)")
_RECORD_DDL = (
    "CREATE NODE TABLE Record(ref STRING PRIMARY KEY, id INT64, key STRING, ts TIMESTAMP, kind STRING, source STRING, "
    "scope STRING, importance DOUBLE, meta STRING, text STRING, original_sha256 STRING, original_chars INT64, "
    "truncated BOOLEAN, redactions STRING, ingested_at TIMESTAMP, extracted_at TIMESTAMP)")
_NAME_DDL = "CREATE NODE TABLE Name(key STRING PRIMARY KEY, refs STRING)"
_RECORD_KEY_DDL = "CREATE NODE TABLE RecordKey(key STRING PRIMARY KEY, id INT64)"
_INDEX_DDL = ("CREATE NODE TABLE Term(term STRING PRIMARY KEY, blocks STRING)",
              "CREATE NODE TABLE Posting(key STRING PRIMARY KEY, data STRING)")
_EVENT_DDL = ("CREATE NODE TABLE EntityEvent(id INT64 PRIMARY KEY, op STRING, ref STRING, other STRING, detail STRING, "
              "recorded_at INT64)")
_RECORD_EVENT_DDL = ("CREATE NODE TABLE RecordEvent(id INT64 PRIMARY KEY, op STRING, recs STRING, detail STRING, "
                     "recorded_at INT64)")
# the entities changed since the linking lexicon was stored (LEXICON_LAYOUT; store/kuzu/lexicon.py)
_LEXICON_DDL = ("CREATE NODE TABLE LexiconChange(ref STRING PRIMARY KEY)",)
_SET_META = "MERGE (m:Meta {key: $k}) SET m.value = $v"


class Schema(StoreBase):
    """Tables, layout checks and ``Meta``: what every table family stands on."""

    _meta_read: dict[str, str] | None = None  # Meta's rows as read at a read-only open (``meta``)

    def _tables(self) -> set[str]:
        return {r[0] for r in self._q("CALL show_tables() RETURN name")}

    def _ensure_schema(self) -> None:
        tables = self._tables()
        fresh = "Meta" not in tables
        if fresh and self.read_only:
            raise StoreUnavailable(f"store {str(self.path)!r} has no graphmem tables (its creation did not finish): "
                                   "expected a store made by 'graphmem init'; open it to write once to finish it")
        if fresh:
            with self.transaction():
                self._q("CREATE NODE TABLE Meta(key STRING PRIMARY KEY, value STRING)")
                self._q(_NAME_DDL)
                self._q(
                    "CREATE NODE TABLE Assertion(id INT64 PRIMARY KEY, op STRING, subject STRING, "
                    "predicate STRING, object STRING, object_type STRING, valid_from INT64, "
                    "valid_to INT64, recorded_at INT64, retracted_at INT64, "
                    "retract_reason STRING, sources STRING, asserted_by STRING, trust STRING, scope STRING)"
                )
                self._q(_SUBJECT_DDL)
                self._q(_FACET_DDL)
                self._q(_RECORD_DDL)
                self._q(_RECORD_KEY_DDL)
                for ddl in _INDEX_DDL:
                    self._q(ddl)
                self._q(_EVENT_DDL)
                self._q(_RECORD_EVENT_DDL)
                for ddl in _LEXICON_DDL:
                    self._q(ddl)
                self._set_meta("schema_version", str(SCHEMA_VERSION))
                self._set_meta("next_fact", "1")
                self._set_meta("next_record", "1")
                self._set_meta("index_names", "1")  # the full-text index posts records' names (model/names.py)
                self._set_meta("ontology", dumps(self.ontology.fingerprint()))
                self._set_meta("registry", dumps(self.registry.fingerprint()))
            tables = self._tables()
        else:
            self._meta_cache = {k: v for k, v in self._q("MATCH (m:Meta) RETURN m.key, m.value")}
            version = self._meta_cache.get("schema_version")
            if version != str(SCHEMA_VERSION):
                if version is not None and version.isdigit() and int(version) < SCHEMA_VERSION:
                    raise StoreUnavailable(
                        f"store {str(self.path)!r} has layout {version}; this graphmem reads layout {SCHEMA_VERSION}: "
                        f"run 'graphmem --store {self.path} migrate' (it copies the store aside first)")
                raise StoreUnavailable(
                    f"store {str(self.path)!r} has layout {version}; this graphmem reads layout {SCHEMA_VERSION}: "
                    "upgrade graphmem to read it")
            recorded = self._check_compatible()
            if self.read_only:  # nothing writes the store while it is open read-only: ``meta`` answers from these
                self._meta_read = self._meta_cache
            self._meta_cache = {}
            added = {k: v for k, v in self.registry.fingerprint().items() if k not in recorded}
            if added and not self.read_only:  # predicates new to this store are recorded, so a later change to one is caught
                with self.transaction():
                    self._set_meta("registry", dumps(recorded | added))
        self._create_type_tables(tables)

    def _check_compatible(self) -> dict[str, Any]:
        """Refuse an ontology or registry that contradicts the one the store was built with; the
        predicate signatures on record."""
        old_ont = json.loads(self._meta_cache.get("ontology") or "{}")
        new_ont = self.ontology.fingerprint()
        for t in old_ont.get("entity_types", []):
            if t not in new_ont["entity_types"]:
                raise StoreUnavailable(
                    f"store {str(self.path)!r} was built with entity type {t!r}, which the loaded ontology lacks; "
                    "load the ontology directory it was built with (--ontology)"
                )
        for e, pairs in old_ont.get("edge_types", {}).items():
            if e not in new_ont["edge_types"] or any(p not in new_ont["edge_types"][e] for p in pairs):
                raise StoreUnavailable(
                    f"store {str(self.path)!r} was built with edge type {e!r} and its pairs {pairs}, which the loaded "
                    "ontology does not keep; load the ontology directory it was built with (--ontology)"
                )
        old_reg: dict[str, Any] = json.loads(self._meta_cache.get("registry") or "{}")
        for name, sig in self.registry.fingerprint().items():
            if name in old_reg and old_reg[name] != sig:
                raise StoreUnavailable(
                    f"predicate {name!r} is defined differently (cardinality, object or edge) from the registry "
                    f"store {str(self.path)!r} was built with; load the predicates it was built with (--predicates)"
                )
        return old_reg

    def _create_type_tables(self, tables: set[str]) -> None:
        """Create tables for entity and edge types the store does not have yet (a migration)."""
        changed = False
        missing = [t for t in self.ontology.entity_types if t not in tables] + [
            e for e in self.ontology.edge_types if e not in tables and self._edge_ddl(e)]
        if not missing:
            return
        if self.read_only:
            raise StoreReadOnly(f"store {str(self.path)!r} has no table for {missing[0]!r} of the loaded ontology yet, "
                                "and it is open read-only: open it to write once (e.g. 'graphmem init' with the same "
                                "--ontology) to add the table")
        with self.transaction():
            for t in self.ontology.entity_types:
                if t not in tables:
                    self._q(
                        f"CREATE NODE TABLE {t}(ref STRING PRIMARY KEY, name STRING, aliases STRING, "
                        "description STRING, created_at TIMESTAMP)"
                    )
                    changed = True
            for e in self.ontology.edge_types.values():
                if e.name not in tables:
                    ddl = self._edge_ddl(e.name)
                    if ddl:
                        self._q(ddl)
                        changed = True
            if changed:
                self._set_meta("ontology", dumps(self.ontology.fingerprint()))
                old = json.loads(self.meta("registry") or "{}")
                old.update(self.registry.fingerprint())
                self._set_meta("registry", dumps(old))

    def _edge_ddl(self, name: str) -> str | None:
        pairs = self.ontology.edge_types[name].pairs
        froms = ", ".join(f"FROM {a} TO {b}" for a, b in pairs)
        if all(a == RECORD_TYPE for a, _ in pairs):  # evidence edges: where in the record, found by which rule
            return f"CREATE REL TABLE {name}({froms}, span_start INT64, span_end INT64, rule STRING)"
        if any(RECORD_TYPE in p for p in pairs):
            return None  # mixing evidence and fact edges is refused at load; nothing to create
        return (f"CREATE REL TABLE {name}({froms}, predicate STRING, valid_from TIMESTAMP, valid_to TIMESTAMP, "
                "assertions INT64[], conflicts INT64[])")

    def is_fact_edge(self, name: str) -> bool:
        return not any(RECORD_TYPE in p for p in self.ontology.edge_types[name].pairs)

    def meta(self, key: str) -> str | None:
        if self._meta_read is not None:
            return self._meta_read.get(key)
        rows = self._q("MATCH (m:Meta {key: $k}) RETURN m.value", {"k": key}, hot=True)
        return rows[0][0] if rows else None

    def _set_meta(self, key: str, value: str) -> None:
        self._q(_SET_META, {"k": key, "v": value})
