"""Export: the whole store as JSONL (re-importable), or the graph at a time as GraphML.

Each function receives the store, typed by the whole-store reads it makes (``ExportStore``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import networkx as nx

from graphmem.errors import BadInput
from graphmem.model import Entity, Interval, Statement, fact_ref
from graphmem.model.times import format_instant, now_us, parse_instant
from graphmem.write.validate import slug

if TYPE_CHECKING:
    from graphmem.model.records import Record

FORMATS = ("jsonl", "graphml")


class ExportStore(Protocol):
    """The store methods export calls: every entity, record, mention and statement, and the edges at a time."""

    def all_entities(self) -> Iterable[Entity]: ...

    def all_mentions(self) -> dict[int, list[tuple[str, int, int, str]]]: ...

    def all_records(self) -> Iterable[Record]: ...

    def all_statements(self) -> list[Statement]: ...

    def edges(self, as_of: int | None = None) -> Iterator[tuple[str, str, str, str, Interval]]: ...


def export(store: ExportStore, fmt: str = "jsonl", as_of: str | None = None) -> str:
    if fmt not in FORMATS:
        raise BadInput(f"bad format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt == "graphml":
        buf = io.BytesIO()
        nx.write_graphml(to_networkx(store, as_of), buf)
        return buf.getvalue().decode("utf-8")
    if as_of is not None:
        raise BadInput("--as-of applies to graphml; a jsonl export is the whole history")
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in export_lines(store))


def export_lines(store: ExportStore) -> list[dict[str, Any]]:
    """Entities (by type, then ref: an import writes them at one time, so the copy of a store exports as it
    did), then evidence records, then statements in id order, then retractions in record-time order."""
    out: list[dict[str, Any]] = [entity_line(e) for e in sorted(store.all_entities(), key=lambda e: (e.type, e.ref))]
    mentions = store.all_mentions()
    for r in store.all_records():
        out.append({"op": "record", "ref": r.ref, "key": r.key, "text": r.text, "ts": format_instant(r.ts_us),
                    "kind": r.kind, "source": r.source, "scope": r.scope, "importance": r.importance,
                    "meta": r.meta, "original_sha256": r.original_sha256, "original_chars": r.original_chars,
                    "truncated": r.truncated, "redactions": r.redactions,
                    "mentions": [list(x) for x in mentions.get(r.id, [])]})
    stmts = store.all_statements()
    retracted: list[Statement] = []
    for s in stmts:
        line: dict[str, Any] = {"op": s.op, "id": s.ref, "subject": s.subject, "predicate": s.predicate}
        if s.op == "assert":
            line.update({"object": s.object, "valid_from": format_instant(s.valid_from),
                         "valid_to": format_instant(s.valid_to)})
        elif s.op == "cite":
            line.update({"fact": fact_ref(s.valid_from), "note": s.object})
        else:
            if s.object is not None:
                line["object"] = s.object
            line["at"] = format_instant(s.valid_from)
        line.update({"sources": list(s.sources), "recorded_at": format_instant(s.recorded_at),
                     "asserted_by": s.asserted_by})
        if s.scope is not None:  # unscoped lines are written as before
            line["scope"] = s.scope
        out.append(line)
        if s.retracted_at is not None:
            retracted.append(s)
    for s in sorted(retracted, key=lambda s: (s.retracted_at or 0, s.id)):
        out.append({"op": "retract", "fact": s.ref, "reason": s.retract_reason, "at": format_instant(s.retracted_at)})
    return out


def entity_line(e: Entity) -> dict[str, Any]:
    """An entity's export line; ``ref`` only when its name no longer spells it (renamed since it was made)."""
    line: dict[str, Any] = {"op": "entity", "type": e.type, "name": e.name, "aliases": list(e.aliases),
                            "description": e.description}
    if e.ref.split(":", 1)[-1] != slug(e.name):
        line["ref"] = e.ref
    return line


def to_networkx(store: ExportStore, as_of: str | None = None) -> nx.MultiDiGraph:
    """Entities as nodes and the typed edges valid at ``as_of`` (default now) as edges."""
    t = parse_instant(as_of, what="as_of") if as_of is not None else now_us()
    g = nx.MultiDiGraph(as_of=format_instant(t))
    for e in store.all_entities():
        g.add_node(e.ref, type=e.type, name=e.name, description=e.description)
    for label, a, b, pred, iv in store.edges(t):
        g.add_edge(a, b, key=f"{label}:{','.join(map(str, iv.assertions))}", label=label, predicate=pred,
                   valid_from=format_instant(iv.valid_from) or "", valid_to=format_instant(iv.valid_to) or "",
                   assertions=" ".join(fact_ref(i) for i in iv.assertions))
    return g
