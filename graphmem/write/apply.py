"""Apply once: the one step by which checked statements and retractions reach the store, with the
view rows of every subject they touch brought up to date in the same transaction.

``apply`` serves assert, end, retract, extraction ``--apply`` and an import's row-by-row case;
``Writer`` holds the single-write operations built on it. An import's bulk cases (a statement file
streamed while reading, a view bulk-loaded for many subjects) use ``append`` and ``touch`` from here
and load the view their own way (``graphmem.transfer.importer._write``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from graphmem.errors import BadInput, GraphmemError
from graphmem.model import Entity, Interval, Statement, fact_ref
from graphmem.model.scopes import in_scopes
from graphmem.model.times import format_instant, now_us
from graphmem.results import WriteResult
from graphmem.view.temporal import attached_sources, view_for_subject
from graphmem.write.inputs import parse_fact_ref
from graphmem.write.validate import Checks, check_retraction, not_attached

if TYPE_CHECKING:
    from graphmem.evidence.extraction import Extraction
    from graphmem.model.records import Record
    from graphmem.ontology.schema import Registry
    from graphmem.store import StatementBatch, StorageEngine

Marks = Iterable[tuple[int, int, str | None]]  # (fact id, retracted at, reason)


def touched_by(stmts: Iterable[Statement]) -> dict[str, set[str]]:
    """The predicates each subject of ``stmts`` has statements for."""
    touched: dict[str, set[str]] = defaultdict(set)
    for s in stmts:
        touched[s.subject].add(s.predicate)
    return touched


def touch(store: StorageEngine, marks: Marks, touched: dict[str, set[str]], new: dict[int, Statement] | None = None,
          first_new: int | None = None) -> None:
    """Add the subject and predicate of each retracted fact to ``touched``: a stored fact is looked up, one
    in ``new`` is not; an id from ``first_new`` on is one of the caller's new facts, touched already."""
    for fid, _, _ in marks:
        if first_new is not None and fid >= first_new:
            continue
        st = (new or {}).get(fid) or store.statement(fid)
        if st is None:
            raise BadInput(f"unknown fact {fact_ref(fid)!r}")
        touched[st.subject].add(st.predicate)


def append(store: StorageEngine, stmts: list[Statement] | StatementBatch, marks: Marks, next_id: int | None,
           retractions: dict[int, tuple[int, str | None]] | None = None) -> None:
    """Append statements (a list, or a bulk file an import wrote as it read) and set retractions on
    stored statements; the next fact id moves past ``next_id`` (default: past the last statement).
    ``retractions`` (fact id -> when, reason): of statements in the bulk file, set in their rows as they
    load where the batch can, else with ``marks``."""
    if isinstance(stmts, list):
        if stmts:
            store.bulk_add_statements(stmts)
        if next_id is None and stmts:
            next_id = max(s.id for s in stmts) + 1
    else:
        left = dict(retractions or {})
        stmts.load(left)
        marks = [*marks, *((fid, at, reason) for fid, (at, reason) in sorted(left.items()))]
    if next_id is not None and next_id > store.next_fact_id():
        store.set_next_fact_id(next_id)
    same: dict[tuple[int, str | None], list[int]] = defaultdict(list)  # many facts retracted together: one query
    for fid, at, reason in marks:
        same[(at, reason)].append(fid)
    for (at, reason), fids in same.items():
        store.mark_retracted_many(fids, at, reason)


def refresh(store: StorageEngine, registry: Registry, touched: dict[str, set[str]], stmts: list[Statement],
            marks: Marks, name_of: Callable[[str], str | None], logs: dict[str, list[Statement]] | None = None) -> None:
    """Write the log, view and edges of each touched subject: its stored log with the retractions set and
    the new statements added (``write_subject`` replaces the edges of the touched predicates only).
    ``logs``: subjects' logs as this process last wrote them (``Known``), read instead of the store's and
    given the logs written now."""
    retracted = {fid: (at, reason) for fid, at, reason in marks}
    new: dict[str, list[Statement]] = defaultdict(list)
    for s in stmts:
        new[s.subject].append(s)
    rows = []
    for subj, preds in touched.items():
        kept = logs.get(subj) if logs is not None else None
        log = list(kept) if kept is not None else store.subject_log(subj)
        log.extend(new.get(subj, ()))
        if retracted:
            log = [s._replace(retracted_at=retracted[s.id][0], retract_reason=retracted[s.id][1])
                   if s.id in retracted else s for s in log]
        rows.append((subj, name_of(subj) or subj, log, view_for_subject(log, registry), preds))
    store.write_subjects(rows)  # the rows of many subjects in one query
    if logs is not None:
        for subj, _, log, _, _ in rows:
            logs[subj] = log


def apply(store: StorageEngine, registry: Registry, stmts: list[Statement], marks: Marks = (), *,
          touched: dict[str, set[str]] | None = None, name_of: Callable[[str], str | None] | None = None,
          next_id: int | None = None, logs: dict[str, list[Statement]] | None = None) -> None:
    """Append statements and retractions and bring the touched subjects' view up to date, in one
    transaction (the caller's, if one is open). ``touched`` given: the caller has touched the
    retracted facts' subjects already (``touch``). ``logs``: see ``refresh``."""
    marks = list(marks)
    if touched is None:
        touched = touched_by(stmts)
        touch(store, marks, touched, {s.id: s for s in stmts} if marks else None)
    with store.transaction():
        append(store, stmts, marks, next_id)
        refresh(store, registry, touched, stmts, marks, name_of or _stored_name(store), logs)


def _stored_name(store: StorageEngine) -> Callable[[str], str | None]:
    def name_of(ref: str) -> str | None:
        e = store.entity(ref)
        return e.name if e else None
    return name_of


KNOWN_SUBJECTS = 20_000  # subjects' logs ``Known`` keeps at most (then it starts again)
KNOWN_LOG = 1_000  # and only logs of at most this many statements


class Known:
    """What the write groups of a process that is its store's only writer (``store.sole_writer``: an
    embedded store, locked by it) remember between them: the entities their asserts resolved (by the
    text that named them) and the logs they wrote for their subjects. The store reads them again only
    when they may have changed: after any write that is not a group's (``store.writes_done`` moved
    since the last group committed), an entity change (``store.entity_writes``), a group that failed
    or was rolled back (``forget``), or, for the logs, a write of the group other than its asserts
    (an ``end``, ``retract``, ``cite`` or ``note``). docs/service.md, "Group commit"."""

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.logs: dict[str, list[Statement]] = {}
        self.committed = -1  # store.writes_done() when the last group committed
        self.flushed = -1  # store.writes_done() after the last flush wrote the logs
        self.entity_writes = -1

    def forget(self) -> None:
        self.entities.clear()
        self.logs.clear()
        self.committed = self.flushed = self.entity_writes = -1


class Writer:
    """The single writes of the Python API, each checked by ``checks`` and applied by ``apply``."""

    def __init__(self, store: StorageEngine, registry: Registry, checks: Checks) -> None:
        self.store, self.registry, self.checks = store, registry, checks
        self._pending: list[Statement] | None = None  # a group's asserts, checked, not applied yet (grouped)
        self._names: dict[str, str] = {}  # the names of the entities the group's asserts resolved
        self._known = Known() if store.sole_writer else None

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Inside (and inside the caller's transaction), an assert is checked when it is called and
        applied with the others at ``flush``: at the end, or before any other write, which may read what
        they change. One ``apply`` for many asserts reads and writes each subject's row once."""
        known = self._known
        if known is not None and known.committed != self.store.writes_done():  # another write came between
            known.forget()
        self._pending = []
        try:
            yield
            self.flush()
        finally:
            self._pending = None
            self._names.clear()

    def committed(self) -> None:
        """The group has committed: what it wrote is the store's (``Known``)."""
        if self._known is not None:
            self._known.committed = self._known.flushed = self.store.writes_done()

    def forget(self) -> None:
        """The group failed or was rolled back: nothing it read or wrote is remembered (``Known``)."""
        if self._known is not None:
            self._known.forget()

    def flush(self) -> None:
        """Apply the asserts a group has checked and not applied yet (nothing outside a group)."""
        if self._pending:
            stmts, self._pending[:] = list(self._pending), []
            stored = _stored_name(self.store)
            known, logs = self._known, None
            if known is not None:
                if known.flushed != self.store.writes_done():  # the group wrote otherwise since: read again
                    known.logs.clear()
                if len(known.logs) >= KNOWN_SUBJECTS:
                    known.logs.clear()
                logs = known.logs
            apply(self.store, self.registry, stmts, name_of=lambda ref: self._names.get(ref) or stored(ref), logs=logs)
            if known is not None:
                for ref in [r for r, log in known.logs.items() if len(log) > KNOWN_LOG]:
                    del known.logs[ref]
                known.flushed = self.store.writes_done()

    def _resolve(self, text: str, role: str = "entity") -> Entity:
        """The resolver, noting each entity's name for the group's ``flush`` (which writes it beside the view);
        in a group of the store's only writer, an entity named by the same text as before is not read again."""
        known = self._known
        if known is None or not isinstance(text, str):
            e = self.checks.resolve(text, role=role)
        else:
            if known.entity_writes != self.store.entity_writes:
                known.entities.clear()
                known.entity_writes = self.store.entity_writes
            got = known.entities.get(text)
            if got is None:
                got = known.entities[text] = self.checks.resolve(text, role=role)
                if len(known.entities) > KNOWN_SUBJECTS:
                    known.entities.clear()
            e = got
        self._names[e.ref] = e.name
        return e

    def _next_fact_id(self) -> int:
        return self._pending[-1].id + 1 if self._pending else self.store.next_fact_id()

    # Each write numbers its statement inside its own transaction (a group's is the caller's), so the id
    # is read under the store's write lock and a write refused for bad input after reading it releases
    # the lock with its rollback: on a store several processes write (PostgreSQL) nothing is held past
    # a refusal (docs/engines.md, "Writes from several processes").

    def assert_(self, subject: str, predicate: str, obj: Any, *, valid_from: str | None, valid_to: str | None,
                sources: Iterable[str], by: str, recorded_at: str | None, scope: str | None = None) -> WriteResult:
        with self.store.transaction():
            st = self.checks.assertion(self._next_fact_id(), subject, predicate, obj, valid_from, valid_to,
                                       sources, by, recorded_at, now_us(), scope=scope,
                                       resolve=self._resolve if self._pending is not None else None)
            if self._pending is not None:
                self._pending.append(st)
            else:
                apply(self.store, self.registry, [st])
        return WriteResult("assert", (st.ref,), {"fact": st.to_dict()})

    def end(self, subject: str, predicate: str, obj: Any, *, at: str, sources: Iterable[str], by: str,
            scope: str | None = None) -> WriteResult:
        self.flush()
        with self.store.transaction():
            return self._end(subject, predicate, obj, at, sources, by, scope)

    def _end(self, subject: str, predicate: str, obj: Any, at: str, sources: Iterable[str], by: str,
             scope: str | None) -> WriteResult:
        st = self.checks.ending(self.store.next_fact_id(), subject, predicate, obj, at, sources, by, None, now_us(),
                                scope=scope)
        if st.scope is None:
            view = self.store.subject_view(st.subject)
        else:  # what holds in the end's own scope
            view = view_for_subject([s for s in self.store.subject_log(st.subject) if s.scope == st.scope],
                                    self.registry)
        held = _held(view, st)
        if not held:
            what = f"{st.subject} {st.predicate}" + ("" if st.object is None else f" {st.object}")
            raise BadInput(f"nothing holds for {what} at {format_instant(st.valid_from)}"
                           + ("" if st.scope is None else f" in scope {st.scope!r}")
                           + "; expected a value that holds then (see 'graphmem timeline')")
        apply(self.store, self.registry, [st])
        return WriteResult("end", (st.ref,), {"fact": st.to_dict(), "closed": [iv.to_dict() for iv in held]})

    def retract(self, fact: str, reason: str | None, scopes: tuple[str, ...] | None = None) -> WriteResult:
        self.flush()
        fid = parse_fact_ref(fact)
        now = now_us()
        st = self.store.statement(fid)
        if st is not None and not in_scopes(st.scope, scopes):
            raise BadInput(f"unknown fact {fact!r} in scope {', '.join(scopes or ())}: no statement of "
                           f"{'that scope' if len(scopes or ()) == 1 else 'those scopes'} has that id")
        r = check_retraction(fact, fid, None if st is None else st.recorded_at, None if st is None else st.retracted_at,
                             False, now, None, now, None if reason is None else str(reason))
        assert st is not None
        apply(self.store, self.registry, [], [r])
        return WriteResult("retract", (st.ref,), {"retracted_at": format_instant(r.at), "reason": r.reason})

    def cite(self, fact: str, sources: Iterable[str], note: str | None, by: str,
             scopes: tuple[str, ...] | None = None) -> WriteResult:
        self.flush()
        with self.store.transaction():
            return self._cite(fact, sources, note, by, scopes)

    def _cite(self, fact: str, sources: Iterable[str], note: str | None, by: str,
              scopes: tuple[str, ...] | None) -> WriteResult:
        fid = parse_fact_ref(fact)
        target = self.store.statement(fid)
        log = self.store.subject_log(target.subject) if target is not None else []
        st = self.checks.citation(self.store.next_fact_id(), fact, target, sources, note, by, None, now_us(),
                                  scopes=scopes)
        assert target is not None
        not_attached(fact, st, attached_sources(log, target))
        # the subject's row only: fact edges carry no sources, so a cite leaves them as they are
        apply(self.store, self.registry, [st], touched={st.subject: set()})
        return WriteResult("cite", (st.ref,), {"fact": st.to_dict(), "assertion": target.to_dict(),
                                               "sources": list(attached_sources([*log, st], target))})

    def extractions(self, items: list[tuple[Record, Extraction]]) -> list[str]:
        """MENTIONS edges, new assertions and ends (by the extractor, citing the record); known facts are
        skipped, so is an end of what does not hold at its time, and so is a proposal the store would refuse.
        Each statement carries the scope of the record it cites (what the whole view knows is still skipped,
        so a fact is not proposed again for each scope a record of it belongs to)."""
        self.flush()
        with self.store.transaction():  # the ids are read in the write's transaction (``assert_``)
            return self._extractions(items)

    def _extractions(self, items: list[tuple[Record, Extraction]]) -> list[str]:
        now = now_us()
        fid = self.store.next_fact_id()
        stmts: list[Statement] = []
        views: dict[str, list[Interval]] = {}

        def view_of(subject: str) -> list[Interval]:
            if subject not in views:
                views[subject] = self.store.subject_view(subject)
            return views[subject]
        entities: dict[str, Entity] = {}

        def resolved(text: str, role: str = "entity") -> Entity:  # the live resolver's wording, looked up once
            if text not in entities:
                entities[text] = self.checks.resolve(text, role=role)
            return entities[text]

        for rec, ex in items:
            for p in ex.assertions:
                if any(iv.predicate == p.predicate and iv.object == p.object and iv.contains(p.valid_from)
                       for iv in view_of(p.subject)):
                    continue
                if any(s.subject == p.subject and s.predicate == p.predicate and s.object == p.object for s in stmts):
                    continue
                try:  # the same checks and text rule as every other write
                    st = self.checks.assertion(fid, p.subject, p.predicate, p.object, format_instant(p.valid_from),
                                               None, (rec.ref,), "extractor", None, now, resolve=resolved,
                                               scope=rec.scope)
                except GraphmemError:
                    continue
                stmts.append(st)
                fid += 1
            for p in ex.ends:  # what the text says stopped holding, when the store holds it then
                if not any(iv.predicate == p.predicate and iv.object == p.object and iv.contains(p.valid_from)
                           for iv in view_of(p.subject)):
                    continue
                if any(s.op == "end" and s.subject == p.subject and s.predicate == p.predicate and s.object == p.object
                       for s in stmts):
                    continue
                try:
                    st = self.checks.ending(fid, p.subject, p.predicate, p.object, format_instant(p.valid_from),
                                            (rec.ref,), "extractor", None, now, resolve=resolved, scope=rec.scope)
                except GraphmemError:
                    continue
                stmts.append(st)
                fid += 1
        with self.store.transaction():
            follow = self.checks.resolve.follow_ref  # a merged entity's name is a mention of the one it joined
            self.store.replace_mentions([(rec.id, list(dict.fromkeys(
                (follow(mm.ref), mm.span[0], mm.span[1], "name-or-alias") for mm in ex.mentions)))
                for rec, ex in items])
            self.store.mark_extracted_many([rec.id for rec, _ in items], now)
            if stmts:
                apply(self.store, self.registry, stmts)
        return [s.ref for s in stmts]


def _held(view: list[Interval], end: Statement) -> list[Interval]:
    """The intervals an ``end`` closes: of its predicate (and object, if it names one) holding at its time."""
    return [iv for iv in view if iv.predicate == end.predicate and iv.contains(end.valid_from)
            and (end.object is None or iv.object == end.object)]
