"""Evidence records (``record``, keyed by id, its idempotence key unique), the entities they mention
(``mention``) and the events of records after they were stored (``record_event``: use and lifecycle)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from graphmem.ontology.schema import RECORD_TYPE
from graphmem.store.common.codecs import dumps
from graphmem.store.common.events import STATE_OPS, USE_OPS, archived_from, use_from
from graphmem.store.postgres.views import PgViews
from graphmem.store.values import RecordFacets

if TYPE_CHECKING:
    import numpy as np

_RCOLS = ("id, key, text, ts, kind, source, scope, importance, meta, original_sha256, original_chars, truncated, "
          "redactions, ingested_at")
_HIT = tuple[str, int, str, str | None, str | None, float]


class PgRecords(PgViews):
    """Records, mentions and record events."""

    _archived: tuple[int, np.ndarray] | None = None

    def next_record_id(self) -> int:
        self._ticket()
        return self._counter("next_record")

    def record_ids_for_keys(self, keys: Iterable[str]) -> dict[str, int]:
        keys = list(keys)
        if not keys:
            return {}
        return {k: int(i) for k, i in self._q("SELECT key, id FROM record WHERE key = ANY(%s)", (keys,))}

    def all_record_keys(self) -> dict[str, int]:
        return {k: int(i) for k, i in self._q("SELECT key, id FROM record")}

    def _mentionable(self, ref: str) -> bool:
        etype = self.ontology.type_for_prefix(ref.partition(":")[0])
        return etype is not None and (RECORD_TYPE, etype) in self.ontology.edge_types["MENTIONS"].pairs

    def add_records(self, records: list[Any], names: dict[int, list[str]] | None = None) -> None:
        if not records:
            return
        if self._undo.records_from is None or records[0].id < self._undo.records_from:
            self._undo.records_from = records[0].id
        rows = [(r.id, r.key, r.text, r.ts_us, r.kind, r.source, r.scope, r.importance, dumps(r.meta or {}),
                 r.original_sha256, r.original_chars, bool(r.truncated), dumps(r.redactions or {}), r.ingested_us)
                for r in records]
        if len(rows) > 50:
            self._copy("record", _RCOLS, rows)
        else:
            self._many(f"INSERT INTO record({_RCOLS}) VALUES ({', '.join(['%s'] * 14)})", rows)
        top = records[-1].id + 1
        if top > self._counter("next_record"):
            self._set_meta("next_record", str(top))
        plans = [r.id for r in records if r.kind == "plan"]
        if plans:
            self._set_meta("plan_records", dumps(sorted({*self.plan_record_ids(), *plans})))
        self._index_texts([(r.id, r.text) for r in records], names)

    def record_facets(self) -> RecordFacets:
        """Every record's id, ts, kind, source and scope as columns: read once, then only the records
        added since (by any process: records are appended with rising ids)."""
        top = int(self._facets.ids[-1]) if self._facets is not None and len(self._facets.ids) else 0
        rows = self._q("SELECT id, ts, kind, source, scope FROM record WHERE id > %s ORDER BY id", (top,))
        if self._facets is None or rows:
            self._facets = RecordFacets.of(rows, self._facets)
        return self._facets

    def records_mentioning(self, refs: Iterable[str]) -> np.ndarray:
        import numpy as np
        refs = [r for r in dict.fromkeys(refs) if self._mentionable(r)]
        if not refs:
            return np.zeros(0, np.int64)
        rows = self._q("SELECT DISTINCT rec_id FROM mention WHERE ref = ANY(%s) ORDER BY rec_id", (refs,))
        return np.array([r[0] for r in rows], np.int64)

    @staticmethod
    def _record_from_row(r: tuple[Any, ...]) -> Any:
        from graphmem.model.records import Record
        rid, key, text, ts, kind, src, scope, imp, meta, sha, n, tr, red, at = r
        return Record(rid, key, text, ts, kind, src or None, scope or None, imp, json.loads(meta or "{}"), sha, n,
                      bool(tr), json.loads(red or "{}"), at)

    def record(self, rec_id: int) -> Any:
        rows = self._q(f"SELECT {_RCOLS} FROM record WHERE id = %s", (rec_id,))
        return self._record_from_row(rows[0]) if rows else None

    def records_between(self, lo: int, hi: int) -> dict[int, Any]:
        return {r[0]: self._record_from_row(r) for r in self._q(f"SELECT {_RCOLS} FROM record WHERE id BETWEEN %s AND %s",
                                                                 (lo, hi))}

    def pending_record_ids(self, limit: int | None = None) -> list[int]:
        sql = "SELECT id FROM record WHERE extracted_at IS NULL ORDER BY id"
        return [r[0] for r in (self._q(sql + " LIMIT %s", (limit,)) if limit else self._q(sql))]

    def all_records(self) -> Iterator[Any]:
        for r in self._iter(f"SELECT {_RCOLS} FROM record ORDER BY id"):
            yield self._record_from_row(r)

    def record_count(self) -> int:
        return int(self._q("SELECT count(*) FROM record")[0][0])

    def record_times(self) -> dict[str, int]:
        return {f"rec:{i}": ts for i, ts in self._q("SELECT id, ts FROM record")}

    def record_hit(self, rec_id: int) -> _HIT | None:
        return self.record_hits([rec_id]).get(rec_id)

    def record_hits(self, rec_ids: list[int]) -> dict[int, _HIT]:
        if not rec_ids:
            return {}
        return {rid: (text, ts, kind, src or None, scope or None, imp) for rid, text, ts, kind, src, scope, imp in self._q(
            "SELECT id, text, ts, kind, source, scope, importance FROM record WHERE id = ANY(%s)", (list(rec_ids),))}

    def record_metas(self, rec_ids: list[int]) -> dict[int, dict[str, Any]]:
        if not rec_ids:
            return {}
        return {rid: json.loads(m or "{}") for rid, m in self._q("SELECT id, meta FROM record WHERE id = ANY(%s)",
                                                                  (list(rec_ids),))}

    def _remember_records(self, rec_ids: list[int]) -> None:
        undo = self._undo
        ids = [i for i in dict.fromkeys(rec_ids) if i not in undo.records_before and not undo.new_record(i)]
        if not ids:
            return
        for rid, at in self._q("SELECT id, extracted_at FROM record WHERE id = ANY(%s)", (ids,)):
            undo.records_before[rid] = [at, list[Any]()]
        for rid, ref, a, b, rule in self._q("SELECT rec_id, ref, span_start, span_end, rule FROM mention "
                                            "WHERE rec_id = ANY(%s)", (ids,)):
            if rid in undo.records_before:
                undo.records_before[rid][1].append([ref, a, b, rule])

    def add_mentions(self, rec_id: int, mentions: Iterable[tuple[str, int, int, str]]) -> int:
        """The record's mentions, replaced by these: (ref, span start, span end, rule); the count kept
        (a mention of an entity that does not exist is not stored, as in the Kuzu store)."""
        return self.replace_mentions([(rec_id, list(mentions))])

    def replace_mentions(self, items: list[tuple[int, list[tuple[str, int, int, str]]]]) -> int:
        if not items:
            return 0
        self._remember_records([rid for rid, _ in items])
        self._w("DELETE FROM mention WHERE rec_id = ANY(%s)", ([rid for rid, _ in items],))
        rows = [(rid, ref, a, b, rule) for rid, ms in items for ref, a, b, rule in ms if self._mentionable(ref)]
        if rows:
            self._many("INSERT INTO mention(rec_id, ref, span_start, span_end, rule) SELECT %s, %s, %s, %s, %s "
                       "WHERE EXISTS (SELECT 1 FROM record WHERE id = %s) AND EXISTS (SELECT 1 FROM entity WHERE ref = %s)",
                       [(*r, r[0], r[1]) for r in rows])
        return len(rows)

    def all_mentions(self) -> dict[int, list[tuple[str, int, int, str]]]:
        out: dict[int, list[tuple[str, int, int, str]]] = {}
        for rid, ref, a, b, rule in self._iter("SELECT rec_id, ref, span_start, span_end, rule FROM mention "
                                               "ORDER BY rec_id, span_start, ref"):
            out.setdefault(rid, []).append((ref, a, b, rule))
        return out

    def mark_extracted_many(self, rec_ids: list[int], at: int) -> None:
        if rec_ids:
            self._remember_records(rec_ids)
            self._w("UPDATE record SET extracted_at = %s WHERE id = ANY(%s)", (at, list(rec_ids)))

    def mentioned_by(self, rec_ids: list[int]) -> dict[int, list[str]]:
        out: dict[int, set[str]] = {i: set() for i in rec_ids}
        if rec_ids:
            for rid, ref in self._q("SELECT rec_id, ref FROM mention WHERE rec_id = ANY(%s)", (list(out),)):
                out[rid].add(ref)
        return {i: sorted(refs) for i, refs in out.items()}

    def mentions_naming(self, ref: str) -> dict[int, list[tuple[str, int, int, str]]]:
        if not self._mentionable(ref):
            return {}
        return self.mentions_of_records([r[0] for r in self._q("SELECT DISTINCT rec_id FROM mention WHERE ref = %s",
                                                                (ref,))])

    def mentions_of_records(self, rec_ids: list[int]) -> dict[int, list[tuple[str, int, int, str]]]:
        out: dict[int, list[tuple[str, int, int, str]]] = {i: [] for i in rec_ids}
        if rec_ids:
            for rid, ref, a, b, rule in self._q("SELECT rec_id, ref, span_start, span_end, rule FROM mention "
                                                "WHERE rec_id = ANY(%s)", (list(out),)):
                out[rid].append((ref, a, b, rule))
        for ms in out.values():
            ms.sort(key=lambda m: (m[1], m[0]))
        return out

    # record events (docs/lifecycle.md) ----------------------------------------------------

    def next_record_event_id(self) -> int:
        self._ticket()
        return int(self._q("SELECT coalesce(max(id), 0) + 1 FROM record_event")[0][0])

    def add_record_event(self, op: str, rec_ids: Iterable[int], detail: dict[str, Any], at: int) -> int:
        assert op in USE_OPS + STATE_OPS, op
        self.check_writable()
        with self.transaction():  # the id is taken under the store's lock
            i = self.next_record_event_id()
            self._w("INSERT INTO record_event(id, op, recs, detail, recorded_at) VALUES (%s, %s, %s, %s, %s)",
                    (i, op, dumps([int(r) for r in rec_ids]), dumps(detail), at))
        return i

    def record_events(self, ops: Iterable[str] | None = None, until: int | None = None
                      ) -> list[tuple[int, str, list[int], dict[str, Any], int]]:
        where: list[str] = ["true"]
        params: list[Any] = []
        if ops is not None:
            where.append("op = ANY(%s)")
            params.append([o for o in ops if o in USE_OPS + STATE_OPS])
        if until is not None:
            where.append("recorded_at <= %s")
            params.append(until)
        return [(i, op, json.loads(recs), json.loads(d or "{}"), at) for i, op, recs, d, at in self._q(
            f"SELECT id, op, recs, detail, recorded_at FROM record_event WHERE {' AND '.join(where)} ORDER BY id", params)]

    def archived_at(self, until: int | None = None) -> dict[int, int]:
        return archived_from(self.record_events(STATE_OPS, until))

    def archived_record_ids(self) -> np.ndarray:
        """The ids of the records archived now, rising (kept while no process adds an archive or revive)."""
        import numpy as np
        top = int(self._q("SELECT coalesce(max(id), 0) FROM record_event WHERE op = ANY(%s)", (list(STATE_OPS),))[0][0])
        if self._archived is None or self._archived[0] != top:
            self._archived = (top, np.array(sorted(self.archived_at()), np.int64))
        return self._archived[1]

    def rebuild_archive_state(self, check: bool) -> bool:
        """Nothing to make again: PostgreSQL reads the archived records from the events by an index."""
        return False

    def record_use(self, until: int | None = None) -> dict[int, list[int | None]]:
        return use_from(self.record_events(USE_OPS + ("revive",), until))

    def lifecycle_rows(self) -> list[tuple[int, str, float | None, int, int, str]]:
        """Every record's id, kind, importance, time and ingest time (to the millisecond, as Kuzu reads them) and meta."""
        return [(i, k, imp, ts // 1000 * 1000, (at or 0) // 1000 * 1000, meta or "{}") for i, k, imp, ts, at, meta in
                self._q("SELECT id, kind, importance, ts, ingested_at, meta FROM record ORDER BY id")]

    def plan_record_ids(self) -> list[int]:
        return [int(i) for i in json.loads(self.meta("plan_records") or "[]")]

    def plans_mentioning(self, ref: str) -> list[tuple[int, str, int, str]]:
        ids = self.plan_record_ids()
        if not ids:
            return []
        rows = self._q("SELECT r.id, r.text, r.ts, r.meta FROM record r WHERE r.id = ANY(%s) AND EXISTS "
                       "(SELECT 1 FROM mention m WHERE m.rec_id = r.id AND m.ref = %s) ORDER BY r.id", (ids, ref))
        return [(i, text, ts // 1000 * 1000, meta or "{}") for i, text, ts, meta in rows]
