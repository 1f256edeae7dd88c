"""Entity events (``EntityEvent``): the append-only record of renames, alias changes, merges and
unmerges, each with its record time, and the redirects that merges make (a merged ref resolves to
the entity it was merged into, from the merge's record time until an unmerge)."""

from __future__ import annotations

import json

from graphmem.model import EntityEvent
from graphmem.store.common.codecs import dumps
from graphmem.store.common.events import Redirects, redirects_from
from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.schema import Schema

_EVENT_COLS = "e.id, e.op, e.ref, e.other, e.detail, e.recorded_at"


class EntityEventTables(Schema):
    """Entity events and the merge redirects read from them."""

    _redirects: Redirects | None = None

    def next_event_id(self) -> int:
        rows = self._q("MATCH (e:EntityEvent) RETURN max(e.id)")
        return int(rows[0][0] or 0) + 1

    def add_entity_event(self, ev: EntityEvent) -> None:
        if self._undo.events_from is None or ev.id < self._undo.events_from:
            self._undo.events_from = ev.id
        self._redirects = None
        self._q(f"CREATE (:EntityEvent {{id: {_int(ev.id)}, op: $op, ref: $r, other: $o, detail: $d, "
                f"recorded_at: {_int(ev.recorded_at)}}})",
                {"op": ev.op, "r": ev.ref, "o": ev.other, "d": dumps(ev.detail)})

    def entity_events(self, ref: str | None = None) -> list[EntityEvent]:
        """Every event about ``ref`` (as the entity changed or the one merged into it), or every
        event, in the order they were recorded."""
        where, params = ("WHERE e.ref = $r OR e.other = $r ", {"r": ref}) if ref is not None else ("", None)
        rows = self._q(f"MATCH (e:EntityEvent) {where}RETURN {_EVENT_COLS} ORDER BY e.id", params)
        return [EntityEvent(i, op, r, o, json.loads(d or "{}"), at) for i, op, r, o, d, at in rows]

    def entity_event(self, event_id: int) -> EntityEvent | None:
        rows = self._q(f"MATCH (e:EntityEvent {{id: {_int(event_id)}}}) RETURN {_EVENT_COLS}")
        return next((EntityEvent(i, op, r, o, json.loads(d or "{}"), at) for i, op, r, o, d, at in rows), None)

    def redirects(self) -> Redirects:
        """Each merged ref with the entity it resolves to and over which record times (read once,
        kept until this store writes an event)."""
        if self._redirects is None:
            self._redirects = redirects_from(self._q(
                "MATCH (e:EntityEvent) WHERE e.op = 'merge' OR e.op = 'unmerge' "
                "RETURN e.id, e.op, e.ref, e.other, e.detail, e.recorded_at ORDER BY e.id"))
        return self._redirects

    def forget_redirects(self) -> None:
        self._redirects = None
