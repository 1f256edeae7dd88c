"""Values the storage interface hands over, whatever the engine: a fact edge as graph reads return
it, and the account a write keeps of itself so that a repair can take it back."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple


class FactEdge(NamedTuple):
    """A typed fact edge: the interval of an entity-valued predicate, from subject to object."""

    label: str
    src: str
    dst: str
    predicate: str
    valid_from: int
    valid_to: int | None
    assertions: tuple[int, ...]
    conflicts: tuple[int, ...] = ()


@dataclasses.dataclass
class WriteUndo:
    """What one transaction added to or changed in the authority tables, so that a repair can take
    an interrupted bulk write back whole (``Store.roll_back``). Kept in memory as the write goes and
    written into the commit mark before its COMMIT: new rows are named by the first id or ref this
    write gave, changed rows by their value before the write."""

    facts_from: int | None = None  # the first fact id of this write (every id from it on is this write's)
    records_from: int | None = None  # the same for record ids
    entities: list[str] = dataclasses.field(default_factory=list)  # refs this write created
    # ref -> [aliases, description, name] (a mark written before renames existed holds the first two)
    entities_before: dict[str, list[Any]] = dataclasses.field(default_factory=dict)
    # facts this write retracted: none was retracted before (write.validate.check_retraction refuses that),
    # so taking the retraction back leaves the fact unretracted
    retracted: list[int] = dataclasses.field(default_factory=list)
    records_before: dict[int, list[Any]] = dataclasses.field(default_factory=dict)  # rec id -> [extracted_at, mentions]
    counters: dict[str, int] = dataclasses.field(default_factory=dict)  # next_fact, next_record at the commit
    events_from: int | None = None  # the first entity event id of this write

    def fact(self, fact_id: int) -> None:
        if self.facts_from is None or fact_id < self.facts_from:
            self.facts_from = fact_id

    def new_record(self, rec_id: int) -> bool:
        return self.records_from is not None and rec_id >= self.records_from

    def to_dict(self) -> dict[str, Any]:
        return {"facts_from": self.facts_from, "records_from": self.records_from, "entities": self.entities,
                "entities_before": self.entities_before,
                "retracted": self.retracted,
                "records_before": {str(k): v for k, v in self.records_before.items()}, "counters": self.counters,
                "events_from": self.events_from}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> WriteUndo:
        return cls(doc.get("facts_from"), doc.get("records_from"), list(doc.get("entities") or []),
                   dict(doc.get("entities_before") or {}),
                   [int(i) for i in doc.get("retracted") or []],
                   {int(k): v for k, v in (doc.get("records_before") or {}).items()}, dict(doc.get("counters") or {}),
                   doc.get("events_from"))


@dataclasses.dataclass(frozen=True)
class RecordFacets:
    """The fields search filters look at, for every record, as columns in id order: ids, times
    (microseconds), kinds, sources and scopes (each an index into the distinct values; source or scope -1: none).
    Built from the store's records once and extended as records are added (``Store.record_facets``)."""

    ids: Any  # numpy int64, rising
    ts: Any  # numpy int64
    kind: Any  # numpy int32, index into kinds
    source: Any  # numpy int32, index into sources, -1 for none
    kinds: tuple[str, ...]
    sources: tuple[str, ...]
    scope: Any = None  # numpy int32, index into scopes, -1 for none
    scopes: tuple[str, ...] = ()
    memo: dict[Any, Any] = dataclasses.field(default_factory=dict, compare=False)  # what readers derive from them

    @classmethod
    def of(cls, rows: Any, base: RecordFacets | None = None) -> RecordFacets:
        """The facets of ``base`` (if any) followed by ``rows``: (id, ts, kind, source or None, scope or
        None), ids rising."""
        import numpy as np
        kinds = {k: i for i, k in enumerate(base.kinds)} if base else {}
        sources = {s: i for i, s in enumerate(base.sources)} if base else {}
        scopes = {s: i for i, s in enumerate(base.scopes)} if base else {}
        ids: list[int] = []
        ts: list[int] = []
        kind: list[int] = []
        source: list[int] = []
        scope: list[int] = []
        for rid, t, k, s, sc in rows:
            ids.append(rid)
            ts.append(t)
            kind.append(kinds.setdefault(k, len(kinds)))
            source.append(sources.setdefault(s, len(sources)) if s else -1)
            scope.append(scopes.setdefault(sc, len(scopes)) if sc else -1)
        cols = (np.array(ids, np.int64), np.array(ts, np.int64), np.array(kind, np.int32), np.array(source, np.int32),
                np.array(scope, np.int32))
        if base is not None:
            cols = tuple(np.concatenate([old, new]) for old, new in zip(  # type: ignore[assignment]
                (base.ids, base.ts, base.kind, base.source, base.scope), cols, strict=True))
        return cls(*cols[:4], tuple(kinds), tuple(sources), cols[4], tuple(scopes))
