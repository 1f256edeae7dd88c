"""Record events (``RecordEvent``): the append-only record of what happened to evidence records after
they were stored: their use (``packed``: included in a final pack bundle; ``searched``: returned by
search) and their lifecycle (``archive``, ``revive``). One row per event, naming its records as a JSON
list of ids, so a pack that includes ten records writes one row (docs/lifecycle.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from graphmem.store.common.codecs import dumps, loads
from graphmem.store.common.events import STATE_OPS, USE_OPS, archived_from, id_runs, ids_of_runs, use_from
from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.schema import Schema

if TYPE_CHECKING:
    import numpy as np

_COLS = "e.id, e.op, e.recs, e.detail, e.recorded_at"
# The records archived as of an event, kept in ``Meta`` beside the events so that a fresh process need not
# replay them (docs/lifecycle.md): ``_STATE`` is ``[M, runs]``, the ids archived after the events up to id M
# (``id_runs``), and ``_CHECKED`` is N, up to which no event after M archives or revives. Only a reading of the
# events beyond N is needed: a graphmem that does not know the keys leaves them behind, never wrong.
_STATE = "archive_state"
_CHECKED = "archive_checked"


class RecordEventTables(Schema):
    """Use and lifecycle events of records, and what is read from them: the archived records and each
    record's use."""

    _archived: np.ndarray | None = None
    _next_record_event: int | None = None
    _archive_checked: int | None = None  # ``_CHECKED`` as this object last wrote it (``_keep_archive_state``)
    _plan_ids: list[int] | None = None
    _plan_mentions: dict[str, list[int]] | None = None  # entity ref -> the plans mentioning it

    def next_record_event_id(self) -> int:
        if self._next_record_event is None:
            rows = self._q("MATCH (e:RecordEvent) RETURN max(e.id)")
            self._next_record_event = int(rows[0][0] or 0) + 1
        return self._next_record_event

    def add_record_event(self, op: str, rec_ids: Iterable[int], detail: dict[str, Any], at: int) -> int:
        """Append one event about these records; returns its id."""
        assert op in USE_OPS + STATE_OPS, op
        i = self.next_record_event_id()
        ids = [int(r) for r in rec_ids]
        self.check_writable()
        try:
            self._q(f"CREATE (:RecordEvent {{id: {_int(i)}, op: $op, recs: $recs, detail: $d, "
                    f"recorded_at: {_int(at)}}})", {"op": op, "recs": dumps(ids), "d": dumps(detail)})
        except BaseException:
            self._next_record_event = None
            raise
        self._next_record_event = i + 1
        if op in STATE_OPS:
            self._archived = None
        self._keep_archive_state(i, op)
        return i

    def _keep_archive_state(self, i: int, op: str) -> None:
        """``Meta``'s archived records brought up to event ``i``, just added (in its transaction)."""
        if op in USE_OPS:
            # (the keys as this object last wrote them, else as stored: the writer alone changes them)
            checked = self._archive_checked
            if checked is None:
                stored = self._stored_archive(i)
                checked = stored[1] if stored is not None else None
            if checked == i - 1:  # a use: the records archived are those of event i - 1
                self._set_meta(_CHECKED, str(i))
                self._archive_checked = i
                return
        ids, kept = self._archive_state()
        if not kept:
            self._set_meta(_STATE, dumps([i, id_runs(ids)]))
        self._set_meta(_CHECKED, str(i))
        self._archive_checked = i

    def _stored_archive(self, top: int) -> tuple[list[int], int] | None:
        """``Meta``'s archived ids and the event up to which they hold (``_CHECKED``), when its keys hold
        together for events up to ``top``."""
        try:
            through, runs = loads(self.meta(_STATE) or "")
            checked = int(self.meta(_CHECKED) or "")
            ids = ids_of_runs(runs)
            return (ids, checked) if 0 <= int(through) <= checked <= top else None
        except (TypeError, ValueError):
            return None

    def _archive_state(self) -> tuple[list[int], bool]:
        """The ids of the records archived now, rising, and whether ``Meta``'s ``_STATE`` holds them already:
        from ``Meta``'s keys and the events after ``_CHECKED`` (none, when they are current), else from every
        archive and revive event."""
        top = self.next_record_event_id() - 1
        if top == 0:  # no event at all
            return [], False
        stored = self._stored_archive(top)
        if stored is None:
            return sorted(self.archived_at()), False
        ids, checked = stored
        if checked == top:
            return ids, True
        later = self._events(f"WHERE e.id > {_int(checked)} ")
        if not any(op in STATE_OPS for _, op, *_ in later):
            return ids, True
        return sorted(archived_from(later, dict.fromkeys(ids, 0))), False

    def rebuild_archive_state(self, check: bool) -> bool:
        """``rebuild``: ``Meta``'s archived records made again from every archive and revive event (``check``:
        only compared); whether what they say differed from it (missing keys are no difference: readers
        replay the events then)."""
        self.forget_record_events()
        ids = sorted(self.archived_at())
        top = self.next_record_event_id() - 1
        # (no keys, or keys out of step, are no difference: readers replay every event then)
        differs = self._stored_archive(top) is not None and self._archive_state()[0] != ids
        if not check and top > 0:
            with self.transaction():
                self._set_meta(_STATE, dumps([top, id_runs(ids)]))
                self._set_meta(_CHECKED, str(top))
            self.forget_record_events()
        return differs

    def record_events(self, ops: Iterable[str] | None = None, until: int | None = None
                      ) -> list[tuple[int, str, list[int], dict[str, Any], int]]:
        """Events (id, op, record ids, detail, record time) in the order they were recorded; only of
        ``ops`` and recorded at or before ``until`` when given."""
        where = []
        if ops is not None:
            where.append("e.op IN [" + ", ".join(f"'{o}'" for o in ops if o in USE_OPS + STATE_OPS) + "]")
        if until is not None:
            where.append(f"e.recorded_at <= {_int(until)}")
        return self._events(f"WHERE {' AND '.join(where)} " if where else "")

    def _events(self, clause: str) -> list[tuple[int, str, list[int], dict[str, Any], int]]:
        return [(i, op, json.loads(recs), json.loads(d or "{}"), at)
                for i, op, recs, d, at in self._iter(f"MATCH (e:RecordEvent) {clause}RETURN {_COLS} ORDER BY e.id")]

    def archived_at(self, until: int | None = None) -> dict[int, int]:
        """Each archived record with the record time of its archiving: the archive and revive events
        replayed in order (those recorded at or before ``until``, when given)."""
        return archived_from(self.record_events(STATE_OPS, until))

    def archived_record_ids(self) -> np.ndarray:
        """The ids of the records archived now, rising (kept until an archive or revive event): from ``Meta``
        and the events after it (``_archive_state``)."""
        if self._archived is None:
            import numpy as np
            self._archived = np.array(self._archive_state()[0], np.int64)
        return self._archived

    def record_use(self, until: int | None = None) -> dict[int, list[int | None]]:
        """Each used record's [times packed, last packed, times returned by search, last returned,
        last revived] (record times in microseconds), from the events recorded at or before ``until``."""
        return use_from(self.record_events(USE_OPS + ("revive",), until))

    def forget_record_events(self) -> None:
        self._archived = None
        self._next_record_event = None
        self._archive_checked = None
        self._plan_ids = None
        self._plan_mentions = None

    def lifecycle_rows(self) -> list[tuple[int, str, float | None, int, int, str]]:
        """Every record's id, kind, importance, time and ingest time (microseconds, to the millisecond)
        and meta (JSON text): what the lifecycle policy reads, in one scan, by id."""
        return [(i, k, imp, int(ts) * 1000, int(at) * 1000, meta or "{}") for i, k, imp, ts, at, meta in self._iter(
            "MATCH (r:Record) RETURN r.id, r.kind, r.importance, to_epoch_ms(r.ts), to_epoch_ms(r.ingested_at), "
            "r.meta ORDER BY r.id")]

    def forget_postings(self) -> None:
        """After a rollback: what was read from the events may hold the rolled-back ones."""
        self.forget_record_events()
        super().forget_postings()

    def plan_record_ids(self) -> list[int]:
        """The ids of the records of kind ``plan`` (``Meta`` keeps them, as ingest adds them), rising."""
        if self._plan_ids is None:
            self._plan_ids = [int(i) for i in json.loads(self.meta("plan_records") or "[]")]
        return self._plan_ids

    def _note_plans(self, rec_ids: list[int]) -> None:
        """Records of kind ``plan`` just added (in the write's transaction)."""
        if rec_ids:
            self._plan_mentions = None
            self._plan_ids = sorted({*self.plan_record_ids(), *rec_ids})
            self._set_meta("plan_records", dumps(self._plan_ids))

    def plans_mentioning(self, ref: str) -> list[tuple[int, str, int, str]]:
        """The records of kind ``plan`` that mention ``ref`` (MENTIONS edges): id, text, time
        (microseconds, to the millisecond) and meta (JSON text), by id. A store without plans answers
        from ``Meta`` alone; otherwise the plans' mentions are read once (kept until mentions or
        records change), then each plan of ``ref`` by key."""
        ids = self.plan_record_ids()
        if not ids:
            return []
        if self._plan_mentions is None:
            index: dict[str, list[int]] = {}
            for rid, refs in sorted(self.mentioned_by(ids).items()):
                for r in refs:
                    index.setdefault(r, []).append(rid)
            self._plan_mentions = index
        rows = [row for i in self._plan_mentions.get(ref, ()) for row in self._q(
            "MATCH (r:Record {ref: $r}) RETURN r.id, r.text, to_epoch_ms(r.ts), r.meta", {"r": f"rec:{_int(i)}"},
            hot=True)]
        return [(i, text, int(ts) * 1000, meta or "{}") for i, text, ts, meta in rows]
