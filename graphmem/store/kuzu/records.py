"""Evidence records (``Record``, keyed by their "rec:N" ref), their idempotence keys
(``RecordKey``) and the ``MENTIONS`` edges from records to the entities they name."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from graphmem.model.arrays import unique_ids
from graphmem.model.times import from_datetime
from graphmem.ontology.schema import RECORD_TYPE
from graphmem.store.common.codecs import dumps
from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.codecs import _ts, _ts_param
from graphmem.store.kuzu.recordfacets import _FACETS, RecordFacetFile
from graphmem.store.values import RecordFacets

if TYPE_CHECKING:
    import numpy as np

_RCOLS = ("r.id, r.key, r.text, r.ts, r.kind, r.source, r.scope, r.importance, r.meta, r.original_sha256, "
          "r.original_chars, r.truncated, r.redactions, r.ingested_at")
_RECORD = f"MATCH (r:Record {{ref: $r}}) RETURN {_RCOLS}"
_RECORD_HIT = "MATCH (r:Record {ref: $r}) RETURN r.text, r.ts, r.kind, r.source, r.scope, r.importance"
_HIT_COLS = "x.id, x.text, x.ts, x.kind, x.source, x.scope, x.importance"  # record_hits
_RECORD_KEY = "MATCH (k:RecordKey {key: $k}) RETURN k.id"
class RecordTables(RecordFacetFile):
    """Records, record keys and mentions."""

    def next_record_id(self) -> int:
        return int(self.meta("next_record") or "1")

    def record_ids_for_keys(self, keys: Iterable[str]) -> dict[str, int]:
        """The records already stored under these idempotence keys."""
        out: dict[str, int] = {}
        for k in keys:
            rows = self._q(_RECORD_KEY, {"k": k})
            if rows:
                out[k] = rows[0][0]
        return out

    def all_record_keys(self) -> dict[str, int]:
        return {k: i for k, i in self._iter("MATCH (k:RecordKey) RETURN k.key, k.id")}

    def add_records(self, records: list[Any], names: dict[int, list[str]] | None = None) -> None:
        """Append records (ids already assigned, rising) with their keys; the full-text index follows
        (``names``: each record's name terms, when the caller found them already)."""
        if not records:
            return
        if self._undo.records_from is None or records[0].id < self._undo.records_from:
            self._undo.records_from = records[0].id
        if len(records) > 50:
            breaks = any(any("\n" in v or "\r" in v for v in (r.text, r.key, r.kind, r.source or "", r.scope or ""))
                         for r in records)
            at = _ts(records[0].ingested_us)  # one ingest, one time
            self._copy("Record", ([r.ref, r.id, r.key, _ts(r.ts_us), r.kind, r.source or "", r.scope or "", r.importance,
                                   dumps(r.meta) if r.meta else "{}", r.text, r.original_sha256, r.original_chars,
                                   "true" if r.truncated else "false", dumps(r.redactions) if r.redactions else "{}",
                                   at if r.ingested_us == records[0].ingested_us else _ts(r.ingested_us), ""]
                                  for r in records), multiline=breaks)
            self._copy("RecordKey", ([r.key, r.id] for r in records), multiline=breaks)
        else:
            for r in records:
                self._q(
                    f"CREATE (:Record {{ref: $ref, id: {_int(r.id)}, key: $key, ts: $ts, kind: $kind, source: $src, scope: $scope, "
                    "importance: $imp, meta: $meta, text: $text, original_sha256: $sha, original_chars: $n, "
                    "truncated: $tr, redactions: $red, ingested_at: $at})",
                    {"ref": r.ref, "key": r.key, "ts": _ts_param(r.ts_us), "kind": r.kind, "src": r.source, "scope": r.scope,
                     "imp": r.importance, "meta": dumps(r.meta), "text": r.text, "sha": r.original_sha256,
                     "n": r.original_chars, "tr": r.truncated, "red": dumps(r.redactions),
                     "at": _ts_param(r.ingested_us)})
                self._q("CREATE (:RecordKey {key: $k, id: $i})", {"k": r.key, "i": r.id})
        self._set_meta("next_record", str(records[-1].id + 1))
        self._note_plans([r.id for r in records if r.kind == "plan"])  # docs/lifecycle.md
        self._index_texts([(r.id, r.text) for r in records], names)
        if self._facets is not None:  # a rollback drops them (forget_postings)
            self._facets = RecordFacets.of(((r.id, r.ts_us, r.kind, r.source, r.scope) for r in records), self._facets)

    def record_facets(self) -> RecordFacets:
        """Every record's id, ts, kind, source and scope as columns (read once, then kept up to date; a
        fresh process reads them from the file kept with the store and the records written after it)."""
        if self._facets is None:  # the file kept with the store, else the table (recordfacets.py)
            self._facets = self._stored_record_facets() or RecordFacets.of(self._iter(_FACETS))
        return self._facets

    def records_mentioning(self, refs: Iterable[str]) -> np.ndarray:
        """The ids of the records that mention any of these entities (MENTIONS edges), rising; each
        entity's are kept until mentions change."""
        import numpy as np
        wanted = list(dict.fromkeys(refs))
        by_type: dict[str, list[str]] = {}  # the entities not held, by type: one query per type (``_by_keys``)
        for ref in wanted:
            if ref not in self._mentioning:
                etype = self.ontology.type_for_prefix(ref.partition(":")[0])
                if etype is not None and (RECORD_TYPE, etype) in self.ontology.edge_types["MENTIONS"].pairs:
                    by_type.setdefault(etype, []).append(ref)
                else:
                    self._mentioning[ref] = np.zeros(0, np.int64)
        for etype, keys in sorted(by_type.items()):
            found: dict[str, list[int]] = {ref: [] for ref in keys}
            for ref, rid in self._by_keys(f"(x:{etype} {{k}})<-[:MENTIONS]-(r:Record)", "x.ref, r.id", keys):
                found[ref].append(rid)
            for ref, ids in found.items():
                self._mentioning[ref] = unique_ids(np.array(ids, np.int64))
        parts = [self._mentioning[ref] for ref in wanted]
        return unique_ids(np.concatenate(parts)) if len(parts) > 1 else parts[0] if parts else np.zeros(0, np.int64)

    def record(self, rec_id: int) -> Any:
        from graphmem.model.records import Record
        rows = self._q(_RECORD, {"r": f"rec:{_int(rec_id)}"})
        if not rows:
            return None
        return self._record_from_row(rows[0], Record)

    def records_between(self, lo: int, hi: int) -> dict[int, Any]:
        """Records with ids in [lo, hi], in one scan (cheaper than many key lookups for a batch)."""
        from graphmem.model.records import Record
        rows = self._q(f"MATCH (r:Record) WHERE r.id >= {_int(lo)} AND r.id <= {_int(hi)} RETURN {_RCOLS}")
        return {r[0]: self._record_from_row(r, Record) for r in rows}

    @staticmethod
    def _record_from_row(r: list[Any], cls: Any) -> Any:
        rid, key, text, ts, kind, src, scope, imp, meta, sha, n, tr, red, at = r
        return cls(rid, key, text, from_datetime(ts), kind, src or None, scope or None, imp, json.loads(meta or "{}"),
                   sha, n, bool(tr), json.loads(red or "{}"), from_datetime(at))

    def pending_record_ids(self, limit: int | None = None) -> list[int]:
        lim = f" LIMIT {_int(limit)}" if limit else ""
        return [r[0] for r in self._q(f"MATCH (r:Record) WHERE r.extracted_at IS NULL RETURN r.id ORDER BY r.id{lim}")]

    def all_records(self) -> Iterator[Any]:
        from graphmem.model.records import Record
        for r in self._iter(f"MATCH (r:Record) RETURN {_RCOLS} ORDER BY r.id"):
            yield self._record_from_row(r, Record)

    def record_count(self) -> int:
        return int(self._q("MATCH (r:Record) RETURN count(r)")[0][0])

    def record_times(self) -> dict[str, int]:
        """Every record's ref and time (microseconds)."""
        return {ref: from_datetime(ts) or 0 for ref, ts in self._iter("MATCH (r:Record) RETURN r.ref, r.ts")}

    def record_hit(self, rec_id: int) -> tuple[str, int, str, str | None, str | None, float] | None:
        """A record's text, ts, kind, source, scope and importance, by key."""
        rows = self._q(_RECORD_HIT, {"r": f"rec:{_int(rec_id)}"})
        if not rows:
            return None
        text, ts, kind, src, scope, imp = rows[0]
        ts_us = from_datetime(ts)
        assert ts_us is not None
        return text, ts_us, kind, src or None, scope or None, imp

    def record_hits(self, rec_ids: list[int]) -> dict[int, tuple[str, int, str, str | None, str | None, float]]:
        """``record_hit`` of each of these records (those that exist), in one query. When this process holds
        the records' facets (``record_facets``: search and pack read them first), a record's time, kind,
        source and scope come from them and only its text and importance from the table: fewer columns
        read (records are never changed in place; a record the facets do not hold is read whole)."""
        out: dict[int, tuple[str, int, str, str | None, str | None, float]] = {}
        wanted = list(dict.fromkeys(rec_ids))
        f = self._facets
        if f is not None and f.scope is not None and len(f.ids) and wanted:
            import numpy as np
            asked = np.array([int(_int(i)) for i in wanted], np.int64)
            at = np.minimum(np.searchsorted(f.ids, asked), len(f.ids) - 1)
            held = f.ids[at] == asked
            where = {int(i): int(a) for i, a, h in zip(asked.tolist(), at.tolist(), held.tolist(), strict=True) if h}
            for rid, text, imp in self._by_keys("(x:Record {k})", "x.id, x.text, x.importance",
                                                [f"rec:{i}" for i in where]):
                a = where[rid]
                src, scope = int(f.source[a]), int(f.scope[a])
                out[rid] = (text, int(f.ts[a]), f.kinds[int(f.kind[a])], f.sources[src] if src >= 0 else None,
                            f.scopes[scope] if scope >= 0 else None, imp)
            wanted = [i for i in wanted if int(i) not in where]
        refs = [f"rec:{_int(i)}" for i in wanted]
        for rid, text, ts, kind, src, scope, imp in (self._by_keys("(x:Record {k})", _HIT_COLS, refs) if refs else ()):
            ts_us = from_datetime(ts)
            assert ts_us is not None
            out[rid] = (text, ts_us, kind, src or None, scope or None, imp)
        return out

    def record_metas(self, rec_ids: list[int]) -> dict[int, dict[str, Any]]:
        """The ``meta`` of each of these records (those that exist), in one query (pack's trust policy)."""
        refs = [f"rec:{_int(i)}" for i in dict.fromkeys(rec_ids)]
        return {rid: json.loads(meta or "{}") for rid, meta in self._by_keys("(x:Record {k})", "x.id, x.meta", refs)}

    def _remember_records(self, rec_ids: list[int]) -> None:
        """Keep the extraction state (when extracted, mentions) of stored records this write is about
        to change, for ``roll_back``."""
        undo = self._undo
        ids = [i for i in dict.fromkeys(rec_ids) if i not in undo.records_before and not undo.new_record(i)]
        if not ids:
            return
        query = ("OPTIONAL MATCH (r)-[m:MENTIONS]->(e) RETURN r.id, r.extracted_at, e.ref, m.span_start, m.span_end, "
                 "m.rule")
        if len(ids) <= 20:  # key lookups; the list form scans every record
            rows = [row for i in ids for row in self._q("MATCH (r:Record {ref: $r}) " + query, {"r": f"rec:{_int(i)}"})]
        else:
            rows = self._q("MATCH (r:Record) WHERE r.id IN [" + ", ".join(_int(i) for i in ids) + "] " + query)
        for rid, at, ref, start, end, rule in rows:
            before = undo.records_before.setdefault(rid, [from_datetime(at), []])
            if ref is not None:
                before[1].append([ref, start, end, rule])

    def add_mentions(self, rec_id: int, mentions: Iterable[tuple[str, int, int, str]]) -> int:
        """The record's MENTIONS edges, replaced by these: (ref, span start, span end, rule)."""
        self._remember_records([rec_id])
        self._mentioning.clear()
        self._plan_mentions = None  # plans' mentions, read from these edges (recordevents.py)
        self._q("MATCH (r:Record {ref: $r})-[m:MENTIONS]->() DELETE m", {"r": f"rec:{_int(rec_id)}"})
        n = 0
        for ref, start, end, rule in mentions:
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is None or (RECORD_TYPE, etype) not in self.ontology.edge_types["MENTIONS"].pairs:
                continue
            self._q(f"MATCH (r:Record {{ref: $r}}), (e:{etype} {{ref: $e}}) "
                    "CREATE (r)-[:MENTIONS {span_start: $s, span_end: $t, rule: $rule}]->(e)",
                    {"r": f"rec:{_int(rec_id)}", "e": ref, "s": start, "t": end, "rule": rule})
            n += 1
        return n

    def all_mentions(self) -> dict[int, list[tuple[str, int, int, str]]]:
        out: dict[int, list[tuple[str, int, int, str]]] = {}
        for rid, ref, a, b, rule in self._iter("MATCH (r:Record)-[m:MENTIONS]->(e) RETURN r.id, e.ref, m.span_start, "
                                               "m.span_end, m.rule ORDER BY r.id, m.span_start, e.ref"):
            out.setdefault(rid, []).append((ref, a, b, rule))
        return out

    def replace_mentions(self, items: list[tuple[int, list[tuple[str, int, int, str]]]]) -> int:
        """MENTIONS of many records at once (their old ones removed), bulk-loaded; returns the edge count."""
        if len(items) <= 20:
            return sum(self.add_mentions(rid, ms) for rid, ms in items)
        self._remember_records([rid for rid, _ in items])
        self._mentioning.clear()
        self._plan_mentions = None
        ids = ", ".join(_int(rid) for rid, _ in items)
        self._q(f"MATCH (r:Record)-[m:MENTIONS]->() WHERE r.id IN [{ids}] DELETE m")
        pairs = self.ontology.edge_types["MENTIONS"].pairs
        by_type: dict[str, list[list[Any]]] = {}
        for rid, ms in items:
            for ref, start, end, rule in ms:
                etype = self.ontology.type_for_prefix(ref.partition(":")[0])
                if etype is not None and (RECORD_TYPE, etype) in pairs:
                    by_type.setdefault(etype, []).append([f"rec:{_int(rid)}", ref, start, end, rule])
        return sum(self._copy("MENTIONS", rows, f"from='{RECORD_TYPE}', to='{t}'") for t, rows in sorted(by_type.items()))

    def mark_extracted_many(self, rec_ids: list[int], at: int) -> None:
        if rec_ids:
            self._remember_records(rec_ids)
            ids = ", ".join(_int(i) for i in rec_ids)
            self._q(f"MATCH (r:Record) WHERE r.id IN [{ids}] SET r.extracted_at = $t", {"t": _ts_param(at)})

    def mentioned_by(self, rec_ids: list[int]) -> dict[int, list[str]]:
        """The entities each record mentions (sorted refs), in one query (``_by_keys``). The refs are read
        along the edges (``e.ref``): from records found by key Kuzu reads only the entities they reach,
        where ``id(e)`` and a second query for the refs of those ids (``_refs_of``) cost a fresh process
        10-20 ms more."""
        out: dict[int, set[str]] = {i: set() for i in rec_ids}
        for rid, ref in self._by_keys("(x:Record {k})-[m:MENTIONS]->(e)", "x.id, e.ref", [f"rec:{_int(i)}" for i in out]):
            out[rid].add(ref)
        return {i: sorted(refs) for i, refs in out.items()}

    def mentions_naming(self, ref: str) -> dict[int, list[tuple[str, int, int, str]]]:
        """Every mention (ref, span start, span end, rule) of each record that mentions ``ref``."""
        etype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if etype is None or (RECORD_TYPE, etype) not in self.ontology.edge_types["MENTIONS"].pairs:
            return {}
        rows = self._q(f"MATCH (r:Record)-[:MENTIONS]->(e:{etype} {{ref: $e}}) RETURN DISTINCT r.id", {"e": ref})
        return self.mentions_of_records([r[0] for r in rows])

    def mentions_of_records(self, rec_ids: list[int]) -> dict[int, list[tuple[str, int, int, str]]]:
        """Every mention (ref, span start, span end, rule) of each of these records, by span, in one query."""
        out: dict[int, list[tuple[str, int, int, str]]] = {i: [] for i in rec_ids}
        for rid, ref, a, b, rule in self._by_keys("(x:Record {k})-[m:MENTIONS]->(e)",
                                                  "x.id, e.ref, m.span_start, m.span_end, m.rule",
                                                  [f"rec:{_int(i)}" for i in out]):
            out[rid].append((ref, a, b, rule))
        for ms in out.values():
            ms.sort(key=lambda m: (m[1], m[0]))
        return out

    def mentions_of(self, rec_id: int) -> list[str]:
        rows = self._q("MATCH (r:Record {ref: $r})-[m:MENTIONS]->(e) RETURN DISTINCT e.ref ORDER BY e.ref",
                       {"r": f"rec:{_int(rec_id)}"}, hot=True)
        return [r[0] for r in rows]
