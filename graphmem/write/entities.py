"""Entity upkeep: rename, aliases added and removed, merge and unmerge. Each is checked first, then
written in one transaction with an ``EntityEvent`` holding its record time and what it changed;
nothing is deleted (docs/entities.md).

A merge carries the merged entity's statements, and the statements naming it as their object, over
to the entity it is merged into as new statements recorded at the merge, and retracts the originals
at the same instant; its records' mentions move too. Read as known before the merge, both entities
are as they were; from the merge on, the merged ref, name and aliases resolve to the other entity.
An unmerge takes a merge back the same way: the copies are retracted and the originals copied back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from graphmem.documents import EntityDoc
from graphmem.errors import BadInput
from graphmem.model import Entity, EntityEvent, Statement
from graphmem.model.times import now_us
from graphmem.results import WriteResult
from graphmem.view.temporal import view_for_subject
from graphmem.write.apply import apply, touched_by
from graphmem.write.validate import Checks, alias_text, entity_name

if TYPE_CHECKING:
    from graphmem.ontology.schema import Registry
    from graphmem.store import StorageEngine


class EntityEditor:
    """The upkeep of stored entities, checked by ``checks`` and written with their events."""

    def __init__(self, store: StorageEngine, registry: Registry, checks: Checks) -> None:
        self.store, self.registry, self.checks = store, registry, checks

    def show(self, text: str) -> EntityDoc:
        """An entity (a merged one itself, not followed), its events, and what it is merged into."""
        e = self.checks.resolve(text, follow=False)
        into = self.checks.resolve.follow(e)
        return EntityDoc(e, tuple(self.store.entity_events(e.ref)), None if into.ref == e.ref else into.ref)

    def _event(self, op: str, ref: str, other: str | None, detail: dict[str, Any], at: int) -> EntityEvent:
        return EntityEvent(self.store.next_event_id(), op, ref, other, detail, at)

    def add_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> WriteResult:
        """A new entity; for an existing one (same ref, type and name) the aliases it lacks are added and
        a different description replaces its own (as an import's ``entity`` line does). An existing
        entity given nothing new is bad input."""
        e = self.checks.make_entity(type_name, name, aliases, description)
        have = self.store.entity(e.ref) or self._named(e.type, e.name)
        if have is None:
            with self.store.transaction():
                self.store.add_entity(e, now_us())
            return WriteResult("entity", (e.ref,), {"entity": e.to_dict()})
        if have.type != e.type or have.name.lower() != e.name.lower():
            raise BadInput(f"entity {e.ref!r} already exists as {have.type} {have.name!r}")
        e = replace(e, ref=have.ref)
        extra = _new_aliases(have, e.aliases)
        desc = e.description if e.description and e.description != have.description else None
        if not extra and desc is None:
            raise BadInput(f"entity {e.ref!r} already exists")
        detail: dict[str, Any] = {"aliases": list(extra)}
        if desc is not None:
            detail["description"] = [have.description, desc]
        with self.store.transaction():  # the event's id is read in the write's transaction (write/apply.py)
            ev = self._event("alias-add", have.ref, None, detail, now_us())
            self.store.add_aliases(have, extra, desc)
            self.store.add_entity_event(ev)
        after = replace(have, aliases=have.aliases + extra, description=desc or have.description)
        return WriteResult("entity", (), {"updated": [have.ref], "entity": after.to_dict(), "event": ev.to_dict()})

    def rename(self, text: str, new_name: str) -> WriteResult:
        """Give an entity another name; its ref stays, and the views that show its name follow."""
        e = self.checks.resolve(text)
        name = entity_name(new_name)
        if name == e.name:
            raise BadInput(f"entity {e.ref!r} is already named {name!r}; expected a different name")
        other = self._named(e.type, name)
        if other is not None and other.ref != e.ref:
            raise BadInput(f"{e.type} {other.ref!r} is named {other.name!r} already; expected a name no other "
                           f"{e.type} has (or merge the two: 'graphmem entity merge')")
        with self.store.transaction():
            ev = self._event("rename", e.ref, None, {"from": e.name, "to": name}, now_us())
            naming = [r for r in self.store.subjects_naming([e.ref]) if r != e.ref]
            self.store.rename_entity(e, name)
            self.store.add_entity_event(ev)
            for subj in [e.ref, *naming]:
                self._rewrite_names(subj, e.ref, name)
        after = replace(e, name=name)
        return WriteResult("entity-rename", (ev.event_ref,), {"entity": after.to_dict(), "event": ev.to_dict()})

    def _named(self, etype: str, name: str) -> Entity | None:
        """The entity of type ``etype`` whose name is ``name`` (case-insensitive), if any."""
        for ref in self.store.refs_named(name):
            e = self.store.entity(ref)
            if e is not None and e.type == etype and e.name.lower() == name.lower():
                return e
        return None

    def _rewrite_names(self, subj: str, ref: str, name: str) -> None:
        """A subject's stored rows again, with ``ref``'s new name (its own, or as an object)."""
        log = [s._replace(object_name=name) if s.object_kind == "entity" and s.object == ref else s
               for s in self.store.subject_log(subj)]
        if not log:
            return
        own = self.store.entity(subj)
        self.store.write_subject(subj, name if subj == ref else (own.name if own else subj), log,
                                 view_for_subject(log, self.registry), ())

    def add_aliases(self, text: str, aliases: Iterable[str]) -> WriteResult:
        """Aliases added to an entity; those it has already (or its name) are left as they are."""
        e = self.checks.resolve(text)
        given = _checked_aliases(aliases)
        extra = _new_aliases(e, given)
        unchanged = [a for a in given if a not in extra]
        if not extra:
            return WriteResult("entity-alias-add", (), {"entity": e.to_dict(), "added": [], "unchanged": unchanged,
                                                        "event": None})
        with self.store.transaction():
            ev = self._event("alias-add", e.ref, None, {"aliases": list(extra)}, now_us())
            self.store.add_aliases(e, extra, None)
            self.store.add_entity_event(ev)
        after = replace(e, aliases=e.aliases + extra)
        return WriteResult("entity-alias-add", (ev.event_ref,), {"entity": after.to_dict(), "added": list(extra),
                                                                "unchanged": unchanged, "event": ev.to_dict()})

    def remove_aliases(self, text: str, aliases: Iterable[str]) -> WriteResult:
        """Aliases taken off an entity; each must be one of its aliases (case-insensitive)."""
        e = self.checks.resolve(text)
        given = _checked_aliases(aliases)
        by_key = {a.lower(): a for a in e.aliases}
        gone: list[str] = []
        for a in given:
            if a.lower() == e.name.lower():
                raise BadInput(f"{a!r} is the name of {e.ref!r}, not an alias; expected one of its aliases "
                               "(use 'graphmem entity rename' to change the name)")
            if a.lower() not in by_key:
                have = ", ".join(e.aliases) if e.aliases else "none"
                raise BadInput(f"entity {e.ref!r} has no alias {a!r}; its aliases: {have}")
            if by_key[a.lower()] not in gone:
                gone.append(by_key[a.lower()])
        with self.store.transaction():
            ev = self._event("alias-remove", e.ref, None, {"aliases": gone}, now_us())
            self.store.remove_aliases(e, tuple(gone))
            self.store.add_entity_event(ev)
        after = replace(e, aliases=tuple(a for a in e.aliases if a not in gone))
        return WriteResult("entity-alias-remove", (ev.event_ref,), {"entity": after.to_dict(), "removed": gone,
                                                                   "event": ev.to_dict()})

    def merge(self, into_text: str, merged_text: str) -> WriteResult:
        """Merge the entity ``merged_text`` names into the one ``into_text`` names (module docstring)."""
        a = self.checks.resolve(into_text, role="entity to merge into")
        b_raw = self.checks.resolve(merged_text, role="entity to merge", follow=False)
        b = self.checks.resolve.follow(b_raw)
        if b.ref == a.ref:
            if b_raw.ref != a.ref:
                raise BadInput(f"entity {b_raw.ref!r} is merged into {a.ref!r} already")
            raise BadInput(f"cannot merge entity {a.ref!r} with itself; expected two different entities")
        if a.type != b.type:
            raise BadInput(f"cannot merge {b.ref!r} (a {b.type}) into {a.ref!r} (a {a.type}); expected two "
                           "entities of the same type")
        with self.store.transaction():  # the ids are read in the write's transaction (write/apply.py)
            return self._merge(a, b)

    def _merge(self, a: Entity, b: Entity) -> WriteResult:
        now = now_us()
        event_id = self.store.next_event_id()
        # in the order they were recorded, so that among the copies (all recorded now) a tie between two
        # values of a single-valued predicate goes the way it went between the originals
        originals = sorted(self._statements_about(b.ref), key=lambda s: (s.recorded_at, s.id))
        own = {_same_key(s): s.id for s in self.store.subject_log(a.ref) if s.retracted_at is None}
        fid = self.store.next_fact_id()
        new: list[Statement] = []
        carried: list[list[int]] = []
        same: list[list[int]] = []
        now_id: dict[int, int] = {}  # an original's id -> the statement that says it on A (for cites)
        for s in originals:
            moved = _moved(s, b.ref, a)
            if moved.op == "cite":  # a cite goes with the copy of what it cites (recorded after it)
                target = now_id.get(int(moved.valid_from))
                if target is None:
                    continue
                moved = moved._replace(valid_from=target)
            key = _same_key(moved)
            p = self.registry.predicates.get(moved.predicate)
            # a statement A has already, of a many-valued predicate, is not written twice (it changes no
            # interval); of a single-valued one it is, as its record time can decide a tie
            if moved.subject == a.ref and key in own and moved.op == "assert" and p and p.cardinality == "many":
                same.append([s.id, own[key]])
                now_id[s.id] = own[key]
                continue
            now_id[s.id] = fid
            new.append(moved._replace(id=fid, recorded_at=now, retracted_at=None, retract_reason=None))
            carried.append([s.id, fid])
            if moved.subject == a.ref:
                own[key] = fid
            fid += 1
        reason = f"merged into {a.ref} (event:{event_id})"
        marks = [(s.id, now, reason) for s in sorted(originals)]
        mentions = self._moved_mentions(b.ref, a.ref)
        detail = {"carried": carried, "same": same, "mentions": [[rid, x, y] for rid, spans in mentions for x, y in spans]}
        ev = EntityEvent(event_id, "merge", a.ref, b.ref, detail, now)
        touched = touched_by(new)
        for s in originals:
            touched.setdefault(s.subject, set()).add(s.predicate)
        with self.store.transaction():
            apply(self.store, self.registry, new, marks, touched=touched)
            self._replace_mentions(mentions, b.ref, a.ref)
            self.store.add_entity_event(ev)
        return WriteResult("entity-merge", tuple(s.ref for s in new),
                           {"entity": a.to_dict(), "merged": b.to_dict(), "retracted": [s.ref for s in sorted(originals)],
                            "event": ev.to_dict()})

    def unmerge(self, merged_text: str) -> WriteResult:
        """Take back the merge of the entity ``merged_text`` names: the copies the merge made (those still
        standing) are retracted and the originals behind them copied back; its mentions move back.
        Statements written about the entity merged into after the merge stay with it."""
        b = self.checks.resolve(merged_text, role="merged entity", follow=False)
        live = [(into, at) for into, at, until in self.store.redirects().get(b.ref, []) if until is None]
        if not live:
            raise BadInput(f"entity {b.ref!r} is not merged into another entity; expected a merged entity "
                           "(see 'graphmem entity show')")
        merge = next(ev for ev in reversed(self.store.entity_events(b.ref)) if ev.op == "merge" and ev.other == b.ref)
        a = self.store.entity(merge.ref)
        assert a is not None
        with self.store.transaction():  # the ids are read in the write's transaction (write/apply.py)
            return self._unmerge(a, b, merge)

    def _unmerge(self, a: Entity, b: Entity, merge: EntityEvent) -> WriteResult:
        now = now_us()
        event_id = self.store.next_event_id()
        reason = f"unmerged from {a.ref} (event:{event_id})"
        carried = merge.detail.get("carried", [])
        same = merge.detail.get("same", [])
        stored = self.store.statements([i for pair in carried + same for i in pair])
        retract: list[Statement] = []
        back: list[int] = [old for old, _ in same]
        for old, copy in carried:
            st = stored.get(copy)
            if st is not None and st.retracted_at is None:
                retract.append(st)
                back.append(old)
        fid = self.store.next_fact_id()
        new: list[Statement] = []
        restored: list[list[int]] = []
        now_id: dict[int, int] = {}  # an original's id -> its copy made now (for cites)
        for old in sorted(back):
            st = stored.get(old)
            if st is None:
                continue
            if st.op == "cite":  # a cite goes with the copy of what it cites
                target = now_id.get(int(st.valid_from))
                if target is None:
                    continue
                st = st._replace(valid_from=target)
            now_id[old] = fid
            new.append(st._replace(id=fid, recorded_at=now, retracted_at=None, retract_reason=None))
            restored.append([old, fid])
            fid += 1
        spans: dict[int, list[tuple[int, int]]] = {}
        for rid, x, y in merge.detail.get("mentions", []):
            spans.setdefault(rid, []).append((x, y))
        detail = {"merge": merge.id, "retracted": [s.id for s in retract], "restored": restored,
                  "mentions": [[rid, x, y] for rid, ss in spans.items() for x, y in ss]}
        ev = EntityEvent(event_id, "unmerge", a.ref, b.ref, detail, now)
        touched = touched_by(new)
        for s in retract:
            touched.setdefault(s.subject, set()).add(s.predicate)
        with self.store.transaction():
            apply(self.store, self.registry, new, [(s.id, now, reason) for s in retract], touched=touched)
            self._replace_mentions(sorted(spans.items()), a.ref, b.ref)
            self.store.add_entity_event(ev)
        return WriteResult("entity-unmerge", tuple(s.ref for s in new),
                           {"entity": a.to_dict(), "unmerged": b.to_dict(), "retracted": [s.ref for s in retract],
                            "event": ev.to_dict()})

    def _statements_about(self, ref: str) -> list[Statement]:
        """The standing (unretracted) statements with ``ref`` as subject or as object, by id."""
        out = {s.id: s for s in self.store.subject_log(ref) if s.retracted_at is None}
        for subj in self.store.subjects_naming([ref]):
            if subj != ref:
                out.update((s.id, s) for s in self.store.subject_log(subj)
                           if s.retracted_at is None and s.object_kind == "entity" and s.object == ref)
        return [out[i] for i in sorted(out)]

    def _moved_mentions(self, old: str, new: str) -> list[tuple[int, list[tuple[int, int]]]]:
        """The records that mention ``old``, with the spans where they do."""
        return [(rid, [(x, y) for ref, x, y, _ in ms if ref == old])
                for rid, ms in sorted(self.store.mentions_naming(old).items())]

    def _replace_mentions(self, items: list[tuple[int, list[tuple[int, int]]]], old: str, new: str) -> None:
        """In these records, the mentions of ``old`` at these spans become mentions of ``new``."""
        if not items:
            return
        current = self.store.mentions_of_records([rid for rid, _ in items])
        out: list[tuple[int, list[tuple[str, int, int, str]]]] = []
        for rid, spans in items:
            at = set(spans)
            ms: list[tuple[str, int, int, str]] = []
            for ref, x, y, rule in current.get(rid, []):
                m = (new if ref == old and (x, y) in at else ref, x, y, rule)
                if m not in ms:
                    ms.append(m)
            out.append((rid, ms))
        self.store.replace_mentions(out)


def _checked_aliases(aliases: Iterable[str]) -> list[str]:
    if isinstance(aliases, str):
        aliases = [aliases]
    out: list[str] = []
    for a in aliases:
        a = alias_text(a)
        if a not in out:
            out.append(a)
    if not out:
        raise BadInput("no alias given: expected one or more aliases")
    return out


def _new_aliases(e: Entity, given: Iterable[str]) -> tuple[str, ...]:
    """Of ``given``, those that are neither ``e``'s name nor one of its aliases (case-insensitive)."""
    have = {e.name.lower(), *(a.lower() for a in e.aliases)}
    out: list[str] = []
    for a in given:
        if a.lower() not in have:
            have.add(a.lower())
            out.append(a)
    return tuple(out)


def _moved(s: Statement, old: str, into: Entity) -> Statement:
    """``s`` with ``old`` made ``into`` wherever it is the subject or the object."""
    if s.subject == old:
        s = s._replace(subject=into.ref)
    if s.object_kind == "entity" and s.object == old:
        s = s._replace(object=into.ref, object_name=into.name)
    return s


def _same_key(s: Statement) -> tuple[Any, ...]:
    """What makes two statements say the same (ids, record times and asserters aside)."""
    return (s.op, s.subject, s.predicate, s.object_kind, str(s.object), s.valid_from, s.valid_to, s.sources)
