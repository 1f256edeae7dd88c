"""The read side of the fact view: what holds for a subject (``current``), its history (``timeline``),
field filters over the whole view (``facts``) and the receipts of one statement (``why``). Reads take
the stored view, and recompute a subject's view from its statements only to answer as known in the past."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphmem.bulk import gc_paused
from graphmem.errors import BadInput
from graphmem.model import Entity, EntityEvent, Interval, Statement, fact_ref
from graphmem.model.facts import Fact
from graphmem.model.scopes import in_scopes, scope_list
from graphmem.model.times import format_instant, utc
from graphmem.model.words import moment
from graphmem.ontology.schema import Ontology, Registry
from graphmem.results import CurrentResult, FactsResult, TimelineResult, WhyResult
from graphmem.store import StorageEngine
from graphmem.view.temporal import cites_of, holding, intervals_for, view_for_subject
from graphmem.write.inputs import parse_fact_ref, parse_record_ref, when
from graphmem.write.validate import Checks, literal


class Reads:
    """The view's read operations over one store, resolving names and types through ``checks``."""

    def __init__(self, store: StorageEngine, ontology: Ontology, registry: Registry, checks: Checks) -> None:
        self.store, self.ontology, self.registry, self.checks = store, ontology, registry, checks
        self.resolve = checks.resolve

    def current(self, subject: str, *, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None, scope: str | Iterable[str] | None = None) -> CurrentResult:
        """What holds for ``subject`` at ``as_of`` as known at ``known_at`` (each defaults to now, SPEC 4:
        given only ``known_at``, the answer is what we believed then about now); with ``scopes``, the
        fact view of the subject's statements of those scopes (docs/scopes.md)."""
        t = when(as_of, known_at)
        pred = self.checks.predicate(predicate).name if predicate else None
        scopes = scope_list(scope)
        e, view = self._subject_and_view(subject, t.known_at if t.past else None)
        message = None
        if scopes is not None:
            view = view_for_subject(self._scoped_log(e.ref, scopes), self.registry, t.known_at if t.past else None)
        if t.past:
            log = self._scoped_log(e.ref, scopes)
            view = view_for_subject(log, self.registry, t.known_at)
            e = self._named_as_known(e, t.known)
            first = min((s.recorded_at for s in log), default=None)
            if first is not None and first > t.known:
                message = (f"nothing about {e.ref} was recorded by {moment(t.known)}: its first statement was "
                           f"recorded at {format_instant(first)}")
        facts = [iv for iv in holding(view, t.as_of) if pred is None or iv.predicate == pred]
        return CurrentResult(e, utc(t.as_of), utc(t.known), tuple(facts), message, scopes=scopes)

    def _scoped_log(self, ref: str, scopes: tuple[str, ...] | None) -> list[Statement]:
        """The subject's statements, only those of ``scopes`` when given."""
        log = self.store.subject_log(ref)
        return log if scopes is None else [s for s in log if in_scopes(s.scope, scopes)]

    def _subject_and_view(self, text: str, at: int | None = None) -> tuple[Entity, list[Interval]]:
        """The subject and its stored view; a ref with statements takes one key lookup (the hot path).
        A merged ref resolves to the entity it was merged into as known at ``at`` (default now)."""
        ref = str(text).strip().lower()
        if ":" in ref and ref not in self.store.redirects():
            name, view = self.store.subject_name_and_view(ref)
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if name is not None and etype is not None:
                return Entity(ref, etype, name), view
        e = self.resolve(text, role="subject", at=at)
        return e, self.store.subject_view(e.ref)

    def _named_as_known(self, e: Entity, known_at: int) -> Entity:
        """``e`` with the name it had at ``known_at``: the name before its first rename recorded later."""
        later = [ev for ev in self.store.entity_events(e.ref)
                 if ev.op == "rename" and ev.ref == e.ref and ev.recorded_at > known_at]
        return e if not later else Entity(e.ref, e.type, later[0].detail["from"], e.aliases, e.description)

    def _subject_log_and_view(self, text: str, at: int | None = None) -> tuple[Entity, list[Statement], list[Interval]]:
        ref = str(text).strip().lower()
        if ":" in ref and ref not in self.store.redirects():
            name, log, view = self.store.subject_name_log_and_view(ref)
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if name is not None and etype is not None:
                return Entity(ref, etype, name), log, view
        e = self.resolve(text, role="subject", at=at)
        return (e, *self.store.subject_log_and_view(e.ref))

    def timeline(self, subject: str, *, predicate: str | None = None, known_at: str | None = None,
                 scope: str | Iterable[str] | None = None) -> TimelineResult:
        """Every interval of ``subject`` (by predicate, then start) and the events behind them (with
        ``scopes``: of the statements of those scopes)."""
        t = when(None, known_at)
        pred = self.checks.predicate(predicate).name if predicate else None
        scopes = scope_list(scope)
        e, log, view = self._subject_log_and_view(subject, t.known_at if t.past else None)
        if scopes is not None:
            log = [s for s in log if in_scopes(s.scope, scopes)]
            view = view_for_subject(log, self.registry)
        if t.past:
            view = view_for_subject(log, self.registry, t.known_at)
            e = self._named_as_known(e, t.known)
        kk = t.known
        intervals = [iv for iv in view if pred is None or iv.predicate == pred]
        events: list[tuple[int, int, str, Statement]] = []
        for s in log:
            if pred is not None and s.predicate != pred:
                continue
            if s.recorded_at <= kk:
                if s.retracted_at is not None and s.retracted_at > kk:  # not yet retracted as known at kk
                    s = s._replace(retracted_at=None, retract_reason=None)
                events.append((s.recorded_at, s.id, s.op, s))
            if s.retracted_at is not None and s.retracted_at <= kk:
                events.append((s.retracted_at, s.id, "retract", s))
        events.sort(key=lambda x: (x[0], x[1], x[2] == "retract"))
        mine = tuple(ev for ev in self.store.entity_events(e.ref) if ev.recorded_at <= kk)  # renames, merges
        return TimelineResult(e, utc(kk), tuple(intervals), tuple((ev, s) for _, _, ev, s in events), mine, scopes)

    def facts(self, *, predicate: str | None = None, object: str | None = None, subject_type: str | None = None,
              as_of: str | None = None, scope: str | Iterable[str] | None = None) -> FactsResult:
        """Field filters over the view at ``as_of`` (default now), ordered by subject, predicate, start;
        with ``scopes``, over the fact view of the statements of those scopes (each subject recomputed)."""
        a = when(as_of).as_of
        scopes = scope_list(scope)
        p = self.checks.predicate(predicate) if predicate else None
        stype = self.checks.entity_type(subject_type) if subject_type else None
        filters: dict[str, Any] = {"predicate": p.name if p else None, "object": None, "subject_type": stype}
        rows: list[tuple[str, Interval]] = []
        names: dict[str, str | None] = {}
        views: dict[str, list[Interval]] = {}
        prefix = self.ontology.entity_types[stype].prefix + ":" if stype else None
        if scopes is not None:
            value: Any = None
            if object is not None and (p is None or p.entity_valued):
                value = self.resolve(object, role="object").ref
            elif object is not None and p is not None:
                value = literal(p, object)
            if object is not None:
                filters["object"] = value
            every = self.store.entity_names()  # one read of every name beats a lookup per subject and object
            for ref, view in self._scoped_views(scopes, prefix, every):
                names[ref] = every.get(ref, ref)
                rows.extend((ref, iv) for iv in holding(view, a)
                            if (p is None or iv.predicate == p.name) and (object is None or iv.object == value))
        elif object is not None and (p is None or p.entity_valued):
            o = self.resolve(object, role="object")
            filters["object"] = o.ref
            preds = [p] if p else [q for q in self.registry.predicates.values() if q.entity_valued]
            for q in preds:
                assert q.edge is not None
                for edge_iv in self.store.edges_into(o.ref, q.name, q.edge, a):
                    ref = edge_iv.subject
                    if prefix and not ref.startswith(prefix):
                        continue
                    if ref not in views:  # the edge carries interval and ids; the subject's row has sources too
                        name, views[ref] = self.store.subject_name_and_view(ref)
                        names[ref] = name or ref
                    full = next((x for x in views[ref] if x.key()[:7] == edge_iv.key()[:7]), edge_iv)
                    rows.append((ref, full))
        else:
            value = literal(p, object) if (object is not None and p is not None) else None
            if object is not None:
                filters["object"] = value
            return self._scan(a, p.name if p else None, prefix, object is not None, value, filters)
        return self._exact(a, rows, names, filters, scopes)

    def _exact(self, a: int, rows: list[tuple[str, Interval]], names: dict[str, str | None], filters: dict[str, Any],
               scopes: tuple[str, ...] | None = None) -> FactsResult:
        """``facts`` from the view's intervals of each subject (ref, interval), kept in the result."""
        rows.sort(key=lambda r: (r[0], r[1].predicate, r[1].valid_from, str(r[1].object)))
        named = [(ref, names.get(ref)) for ref in dict.fromkeys(ref for ref, _ in rows)]
        ivs = tuple(iv for _, iv in rows)
        return FactsResult(utc(a), filters, Fact.many(ivs), tuple(named), dict(self.ontology.by_prefix), scopes, ivs)

    def _scan(self, a: int, predicate: str | None, prefix: str | None, by_object: bool, value: Any,
              filters: dict[str, Any]) -> FactsResult:
        """``facts`` over every subject's view (no scopes, no entity object): the store makes the facts
        straight from its rows, in the order ``facts`` gives them (``subject_facts_holding``)."""
        with gc_paused():  # a fact per row kept: no collections meanwhile
            read = self.store.subject_facts_holding(a, predicate, prefix)
            if read is None:  # a time a datetime cannot hold: the intervals, exact, from the whole views
                names: dict[str, str | None] = {}
                rows: list[tuple[str, Interval]] = []
                for ref, name, view in self.store.all_subject_rows(prefix):
                    names[ref] = name
                    rows += [(ref, iv) for iv in holding(view, a) if (predicate is None or iv.predicate == predicate)
                             and (not by_object or iv.object == value)]
                return self._exact(a, rows, names, filters)
            facts, named = read
            if by_object:
                facts = [f for f in facts if f.object == value]
                keep = {f.subject for f in facts}
                named = [(ref, name) for ref, name in named if ref in keep]
            return FactsResult(utc(a), filters, tuple(facts), tuple(named), dict(self.ontology.by_prefix))

    def _scoped_views(self, scopes: tuple[str, ...], prefix: str | None,
                      names: dict[str, str]) -> list[tuple[str, list[Interval]]]:
        """Each subject's fact view computed from its statements of ``scopes`` (Kuzu reads only those);
        ``names`` names entity objects."""
        name_of = names.get
        out = []
        for ref, text in self.store.subject_logs(scopes=list(scopes)):
            if prefix and not ref.startswith(prefix):
                continue
            log = self.store.statements_from_log(ref, text, name_of)[0]
            out.append((ref, view_for_subject(log, self.registry)))
        return out

    def asserted_by(self, facts: Iterable[str]) -> dict[str, str]:
        """Who asserted each statement (``fact:N`` to operator, agent, extractor or import); a fact that
        does not exist is left out, a bad ref is bad input."""
        ids = [parse_fact_ref(f) for f in facts]
        return {fact_ref(i): by for i, by in sorted(self.store.asserters(ids).items())}

    def why(self, fact: str, scope: str | Iterable[str] | None = None) -> WhyResult:
        """The receipts of one statement: sources, supersession, conflicts, ends, retraction (with
        ``scopes``: a statement of those scopes, read against their statements only)."""
        fid = parse_fact_ref(fact)
        scopes = scope_list(scope)
        st = self.store.statement(fid)
        if st is None:
            raise BadInput(f"unknown fact {fact!r}: no statement has that id")
        if not in_scopes(st.scope, scopes):
            raise BadInput(f"unknown fact {fact!r} in scope {', '.join(scopes or ())}: no statement of "
                           f"{'that scope' if len(scopes or ()) == 1 else 'those scopes'} has that id")
        log = [s for s in self._scoped_log(st.subject, scopes) if s.predicate == st.predicate]
        p = self.registry.predicates.get(st.predicate)
        ivs = intervals_for(log, p.cardinality, None) if p else []
        mine = [iv for iv in ivs if (st.cited if st.op == "cite" else fid) in iv.assertions]
        supersedes: set[int] = set()
        superseded_by: set[int] = set()
        conflicts: set[int] = set()
        if p is not None and p.cardinality == "one":
            for iv in mine:
                conflicts.update(iv.conflicts)
                for other in ivs:
                    if other.object == iv.object:
                        continue
                    if other.valid_to == iv.valid_from:
                        supersedes.update(other.assertions)
                    if iv.valid_to is not None and other.valid_from == iv.valid_to:
                        superseded_by.update(other.assertions)
        for iv in ivs:
            if fid in iv.conflicts:
                conflicts.update(iv.assertions)
        ended_by: list[int] = []
        if st.op == "assert":
            for iv in mine:
                for e in log:
                    if (e.op == "end" and e.retracted_at is None and e.valid_from == iv.valid_to
                            and (e.object is None or e.object == st.object)):
                        ended_by.append(e.id)
        cited_by = tuple(cites_of(log, fid)) if st.op == "assert" else ()
        subject = self.store.entity(st.subject)
        records = {src: self.store.record(parse_record_ref(src))
                   for s in (st, *cited_by) for src in s.sources if src.startswith("rec:")}

        def refs(ids: set[int]) -> tuple[str, ...]:
            return tuple(map(fact_ref, sorted(ids)))
        return WhyResult(st, subject, records, tuple(mine), refs(supersedes), refs(superseded_by),
                         refs(conflicts - {fid}), refs(set(ended_by)), cited_by,
                         self._events_of_fact(st), scopes)

    def _events_of_fact(self, st: Statement) -> tuple[EntityEvent, ...]:
        """The merges and unmerges that carried ``st`` away, made it as a copy, or retracted it."""
        refs = [st.subject] + ([str(st.object)] if st.object_kind == "entity" and st.object != st.subject else [])
        found: dict[int, EntityEvent] = {}
        for ref in refs:
            for ev in self.store.entity_events(ref):
                pairs = ev.detail.get("carried", []) + ev.detail.get("same", []) + ev.detail.get("restored", [])
                if any(st.id in p for p in pairs) or st.id in ev.detail.get("retracted", []):
                    found[ev.id] = ev
        return tuple(found[i] for i in sorted(found))

