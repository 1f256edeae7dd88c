"""Result values returned by the Python API; each converts to the CLI's JSON.

A result keeps what the fact view computed (``view``: intervals with integer instants and ids, the form
``to_dict`` writes) and hands out its public form on first access: ``Fact`` and ``Event`` values, with
timezone-aware UTC datetimes and ``fact:N`` refs (``graphmem.model.facts``). Converting only what is
read keeps ``current`` and ``facts`` as fast as the view; ``to_dict`` and ``to_json`` are unchanged.
"""

from __future__ import annotations

import datetime as _dt
import gc
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import graphmem.notebook as nb
from graphmem.model import Entity, EntityEvent, Interval, Statement
from graphmem.model.times import format_datetime, format_instant
from graphmem.notebook import HtmlRepr

if TYPE_CHECKING:
    from graphmem.model.facts import Event, Fact


def _facts(view: Iterable[Interval]) -> tuple[Fact, ...]:
    """The public form of view intervals (graphmem.model.facts loads on first use: ``--json`` never needs it).
    The cyclic collector is paused meanwhile: a scan's result makes tens of thousands of acyclic tuples,
    and each collection would walk every live container (at 1M, 0.5 s of 0.7 s for 50k facts)."""
    from graphmem.model.facts import Fact
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return Fact.many(view)
    finally:
        if was_enabled:  # what was made goes to the oldest generation, so no young collection walks it all
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def scoped(scopes: tuple[str, ...] | None) -> dict[str, Any]:
    """What a document says of the scopes its read was limited to: ``{"scope": [...]}``, or nothing."""
    return {} if scopes is None else {"scope": list(scopes)}


@dataclass(frozen=True, repr=False)
class CurrentResult(HtmlRepr):
    """What holds for ``subject`` at ``as_of`` as known at ``known_at``: ``facts`` are Fact values.

    Attributes
    ----------
    subject : Entity
        Ref, type and name (aliases are not loaded).
    as_of, known_at : datetime
        The times asked about, UTC.
    facts : tuple of Fact
        The facts in force, by predicate then start.
    view : tuple of Interval
        The same facts as the view's intervals (what ``to_dict`` writes).
    message : str or None
        Why nothing holds, when the reason is worth saying (``known_at`` before any record).
    plans : tuple of dict
        Plans (records of kind ``plan``) that mention the subject, never facts: ``ref``, ``text``,
        ``ts``, ``due``, ``status`` (overdue, due, no_due), overdue and due first (docs/lifecycle.md).
    scopes : tuple of str or None
        The scopes the read was limited to (None: every scope; docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
    ('fact:1',)
    >>> r = m.current("Atlas", as_of="2024-03-01")
    >>> r.subject.ref, r.as_of.isoformat(), [(f.predicate, f.object) for f in r.facts]
    ('project:atlas', '2024-03-01T00:00:00+00:00', [('uses', 'tool:kuzu')])
    >>> m.close()
    """

    subject: Entity
    as_of: _dt.datetime
    known_at: _dt.datetime
    view: tuple[Interval, ...]
    message: str | None = None  # why nothing holds, when the reason is worth saying (known_at before any record)
    plans: tuple[dict[str, Any], ...] = ()  # plans mentioning the subject (docs/lifecycle.md), never facts
    scopes: tuple[str, ...] | None = None  # the scopes the read was limited to (None: every scope)

    @cached_property
    def facts(self) -> tuple[Fact, ...]:
        """The facts that hold, by predicate then start."""
        return _facts(self.view)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.current.v1", "subject": self.subject.brief(),
                "as_of": format_datetime(self.as_of), "known_at": format_datetime(self.known_at),
                "facts": [iv.to_dict() for iv in self.view], **({"message": self.message} if self.message else {}),
                **({"plans": list(self.plans)} if self.plans else {}), **scoped(self.scopes)}

    def _summary(self) -> str:
        return (f"{nb.who(self.subject)} as of {nb.day(self.as_of)}, known at {nb.day(self.known_at)}: "
                f"{nb.plural(len(self.view), 'fact')}")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return [nb.fact_line(f) for f in _facts(self.view[:limit])], len(self.view)

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return nb.FACT_COLUMNS, [nb.fact_row(f) for f in self.facts]


@dataclass(frozen=True, repr=False)
class TimelineResult(HtmlRepr):
    """Every interval of ``subject`` (``intervals``, Fact values, by predicate then start) and the statements
    and retractions behind them (``events``, Event values, in record order), as known at ``known_at``.

    Attributes
    ----------
    subject : Entity
        Ref, type and name (aliases are not loaded).
    known_at : datetime
        The time of knowledge, UTC.
    intervals : tuple of Fact
        Every interval, past ones included.
    events : tuple of Event
        Each assertion, end and retraction, by record time.
    view, log : tuple
        The same as the view computed them (what ``to_dict`` writes).
    entity_events : tuple of EntityEvent
        The subject's renames, alias changes and merges, as known at ``known_at``.
    scopes : tuple of str or None
        The scopes the read was limited to (None: every scope; docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
    ('fact:1',)
    >>> _ = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
    >>> r = m.timeline("Atlas")
    >>> [(f.object, f.valid_to.date().isoformat()) for f in r.intervals], [e.op for e in r.events]
    ([('tool:kuzu', '2024-06-01')], ['assert', 'end'])
    >>> m.close()
    """

    subject: Entity
    known_at: _dt.datetime
    view: tuple[Interval, ...]
    log: tuple[tuple[str, Statement], ...]  # (event, statement): assert, end or retract, in record order
    entity_events: tuple[EntityEvent, ...] = ()  # the subject's renames, aliases and merges, as known at known_at
    scopes: tuple[str, ...] | None = None  # the scopes the read was limited to (None: every scope)

    @cached_property
    def intervals(self) -> tuple[Fact, ...]:
        """Every interval, past ones included."""
        return _facts(self.view)

    @cached_property
    def events(self) -> tuple[Event, ...]:
        """Each assertion, end and retraction, by record time."""
        from graphmem.model.facts import Event
        return tuple(Event.retraction(st) if ev == "retract" else Event.of(st) for ev, st in self.log)

    def plot(self, *, predicates: list[str] | None = None, ax: Any = None, now: _dt.datetime | None = None) -> Any:
        """The intervals as bars over time (only ``predicates``, if given); returns the matplotlib Axes.

        An open interval runs to ``now`` (default: the current time), drawn lighter. Needs matplotlib
        (``pip install 'graphmem[notebook]'``).

        Returns
        -------
        matplotlib.axes.Axes
            ``ax``, or a new figure's axes; one row per predicate and object.
        """
        facts = [f for f in self.intervals if predicates is None or f.predicate in predicates]
        return nb.plot_facts(facts, f"{nb.who(self.subject)} over time", ax=ax, now=now)

    def to_frame(self, events: bool = False) -> Any:
        """The intervals (or, with ``events``, the events) as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per interval (or event); times as UTC datetimes, ids as ``fact:N`` refs.
        """
        if not events:
            return super().to_frame()
        return nb.frame(nb.EVENT_COLUMNS, [nb.event_row(e) for e in self.events])

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.timeline.v1", "subject": self.subject.brief(),
                "known_at": format_datetime(self.known_at),
                "intervals": [iv.to_dict() for iv in self.view], "events": self._event_docs(), **scoped(self.scopes)}

    def _event_docs(self) -> list[dict[str, Any]]:
        """The statements' events and the entity's own, in record order (the entity's first at one instant)."""
        docs = [(st.retracted_at if ev == "retract" else st.recorded_at, st.id, ev == "retract", d)
                for (ev, st), d in zip(self.log, _event_docs(self.log), strict=True)]
        docs += [(ev.recorded_at, 0, False, {**ev.to_dict(), "event": f"entity-{ev.op}", "id": ev.event_ref})
                 for ev in self.entity_events]
        docs.sort(key=lambda x: (x[0], x[1], x[2]))
        return [d for *_, d in docs]

    def _summary(self) -> str:
        return (f"{nb.who(self.subject)}, known at {nb.day(self.known_at)}: {nb.plural(len(self.view), 'interval')}, "
                f"{nb.plural(len(self.log), 'event')}")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return [nb.fact_line(f) for f in _facts(self.view[:limit])], len(self.view)

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return nb.FACT_COLUMNS, [nb.fact_row(f) for f in self.intervals]


def _event_docs(log: tuple[tuple[str, Statement], ...]) -> list[dict[str, Any]]:
    from graphmem.model.facts import event_doc
    return [event_doc(e, s) for e, s in log]


@dataclass(frozen=True, repr=False)
class FactsResult(HtmlRepr):
    """Facts with their subjects at ``as_of``: ``facts`` are Fact values (``fact.subject`` a ref), ``subjects``
    the Entity of each subject ref (ref, type and name; aliases are not loaded).

    Attributes
    ----------
    as_of : datetime
        The time asked about, UTC.
    filters : dict
        The filters asked for (``predicate``, ``object``, ``subject_type``), None where not given.
    facts : tuple of Fact
        The facts, by subject, predicate and start.
    subjects : dict of str to Entity
        Each subject of ``facts`` by its ref (made on first use).
    named : tuple of (str, str or None)
        Each subject's ref and name, in order (what ``subjects`` is made of).
    types : dict of str to str
        The entity type of each ref prefix (the ontology's; a prefix it lacks is ``?``).
    view : tuple
        (subject, interval) pairs: the facts in the view's own form (integer instants and ids), made
        on first use.
    intervals : tuple of Interval or None
        The view's intervals of ``facts`` when the read kept them (what ``view`` and ``to_dict`` then use).
    scopes : tuple of str or None
        The scopes the read was limited to (None: every scope; docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
    ('fact:1',)
    >>> r = m.facts(predicate="uses", as_of="2024-03-01")
    >>> [(f.subject, f.object) for f in r.facts], r.subjects["project:atlas"].name
    ([('project:atlas', 'tool:kuzu')], 'Atlas')
    >>> m.close()
    """

    as_of: _dt.datetime
    filters: dict[str, Any]
    facts: tuple[Fact, ...]  # a scan makes them straight from the stored rows (Store.subject_facts_holding)
    # each subject's ref and name (None: its ref), and the ontology's entity type of each ref prefix (others:
    # "?"): ``subjects`` is made of them on first use (a scan's 50,000 entities cost 20-25 ms that a reader of
    # ``facts`` never needs)
    named: tuple[tuple[str, str | None], ...] = field(repr=False)
    types: dict[str, str] = field(repr=False, compare=False)
    scopes: tuple[str, ...] | None = None  # the scopes the read was limited to (None: every scope)
    # the view's own intervals of ``facts``, one each, when the read has them (a time outside the years a
    # datetime holds, 1-9999, is exact only there); None: ``Fact.interval`` of each
    intervals: tuple[Interval, ...] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def subjects(self) -> dict[str, Entity]:
        """Each subject of ``facts`` by its ref."""
        entity, types = Entity.of, self.types
        return {ref: entity(ref, types.get(ref.partition(":")[0], "?"), name or ref) for ref, name in self.named}

    @cached_property
    def view(self) -> tuple[tuple[Entity, Interval], ...]:
        """(subject, interval) pairs: the facts in the view's own form."""
        subjects = self.subjects
        if self.intervals is not None:
            return tuple([(subjects[iv.subject], iv) for iv in self.intervals])
        return tuple([(subjects[f.subject], f.interval()) for f in self.facts])

    def to_dict(self) -> dict[str, Any]:
        subjects = self.subjects
        facts = self.facts if self.intervals is None else self.intervals
        return {"schema": "graphmem.facts.v1", "as_of": format_datetime(self.as_of), "filters": self.filters,
                "facts": [f.to_dict(subject=subjects[f.subject].brief()) for f in facts], **scoped(self.scopes)}

    def _summary(self) -> str:
        shown = {k: v for k, v in self.filters.items() if v is not None}
        where = "".join(f", {k}={v}" for k, v in shown.items())
        return f"{nb.plural(len(self.facts), 'fact')} as of {nb.day(self.as_of)}{where}"

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return [f"{f.subject} {nb.fact_line(f)}" for f in self.facts[:limit]], len(self.facts)

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        subjects = self.subjects
        return (["subject", "subject_name", "subject_type", *nb.FACT_COLUMNS],
                [[f.subject, subjects[f.subject].name, subjects[f.subject].type, *nb.fact_row(f)] for f in self.facts])


@dataclass(frozen=True, repr=False)
class WhyResult(HtmlRepr):
    """The receipts of one statement: ``statement`` (an Event), its ``subject``, the cited ``records``, the facts
    it is part of (``in_view``), and the ``fact:N`` refs it supersedes, is superseded by, conflicts with or is
    ended by.

    Attributes
    ----------
    statement : Event
        The statement asked about.
    subject : Entity or None
        Its subject (None if it no longer resolves).
    records : dict
        Each cited record ref to its Record (None when it does not resolve).
    in_view : tuple of Fact
        The facts of the view the statement is behind.
    supersedes, superseded_by, conflicts, ended_by : tuple of str
        ``fact:N`` refs of the statements related to it.
    stored, view : Statement, tuple of Interval
        The same as the store and the view hold them (what ``to_dict`` writes).
    entity_events : tuple of EntityEvent
        The merges and unmerges that carried this fact or made it.
    cited_by : tuple of Statement
        The cites of this assertion, retracted ones included.
    scopes : tuple of str or None
        The scopes the read was limited to (None: every scope; docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
    ('fact:1',)
    >>> _ = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
    >>> w = m.why("fact:1")
    >>> w.statement.op, w.ended_by, [f.valid_to.date().isoformat() for f in w.in_view]
    ('assert', ('fact:2',), ['2024-06-01'])
    >>> m.close()
    """

    stored: Statement
    subject: Entity | None
    records: dict[str, Any]  # cited record ref -> Record, or None when it does not resolve
    view: tuple[Interval, ...]
    supersedes: tuple[str, ...]
    superseded_by: tuple[str, ...]
    conflicts: tuple[str, ...]
    ended_by: tuple[str, ...]
    cited_by: tuple[Statement, ...] = ()  # the cites of this assertion, retracted ones included

    @cached_property
    def statement(self) -> Event:
        """The statement asked about."""
        from graphmem.model.facts import Event
        return Event.of(self.stored)

    @cached_property
    def in_view(self) -> tuple[Fact, ...]:
        """The facts of the view this statement is behind."""
        return _facts(self.view)
    entity_events: tuple[EntityEvent, ...] = ()  # the merges and unmerges that carried this fact or made it
    scopes: tuple[str, ...] | None = None  # the scopes the read was limited to (None: every scope)

    def to_dict(self) -> dict[str, Any]:
        st = self.stored
        sources = [{**self._source(s), "attached_at": format_instant(st.recorded_at), "cite": None}
                   for s in st.sources]
        seen = set(st.sources)
        for c in sorted(self.cited_by):
            if c.retracted_at is None:
                for s in c.sources:
                    if s not in seen:
                        seen.add(s)
                        sources.append({**self._source(s), "attached_at": format_instant(c.recorded_at),
                                        "cite": c.ref, "note": c.object})
        return {
            "schema": "graphmem.why.v1", "fact": st.to_dict(),
            "subject": self.subject.brief() if self.subject else {"ref": st.subject},
            "sources": sources,
            "cited_by": [c.to_dict() for c in sorted(self.cited_by)],
            "in_view": [iv.to_dict() for iv in self.view],
            "supersedes": list(self.supersedes),
            "superseded_by": list(self.superseded_by),
            "conflicts": list(self.conflicts),
            "ended_by": list(self.ended_by),
            "retraction": None if st.retracted_at is None else {
                "at": format_instant(st.retracted_at), "reason": st.retract_reason},
            "entity_events": [ev.to_dict() for ev in self.entity_events], **scoped(self.scopes),
        }

    def _source(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("rec:"):
            return {"ref": ref, "kind": "uri"}
        rec = self.records.get(ref)
        if rec is None:
            return {"ref": ref, "kind": "record", "resolved": False}
        return {"ref": ref, "kind": "record", "resolved": True, "ts": format_instant(rec.ts_us), "record_kind": rec.kind,
                "source": rec.source, "text": rec.text}

    def _summary(self) -> str:
        return repr(self.statement).removeprefix("Event(").removesuffix(")")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        lines = [f"in view: {nb.fact_line(f)}" for f in self.in_view]
        lines += [f"source: {s}" for s in self.stored.sources]
        for name in ("supersedes", "superseded_by", "conflicts", "ended_by"):
            if getattr(self, name):
                lines.append(f"{name.replace('_', ' ')}: {' '.join(getattr(self, name))}")
        return lines[:limit], len(lines)

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return nb.EVENT_COLUMNS, [nb.event_row(self.statement)]


@dataclass(frozen=True, repr=False)
class WriteResult(HtmlRepr):
    """What a write created: refs of entities and statements.

    Attributes
    ----------
    action : str
        The write: ``entity``, ``assert``, ``end`` or ``retract`` (the JSON schema is ``graphmem.<action>.v1``).
    refs : tuple of str
        The refs created (``project:atlas``, ``fact:N``).
    detail : dict
        More of the ``--json`` document (the statement written, ...).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> r = m.add_entity("Project", "Atlas")
    >>> r.refs, r.to_dict()["created"]
    (('project:atlas',), ['project:atlas'])
    >>> m.close()
    """

    action: str
    refs: tuple[str, ...]
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": f"graphmem.{self.action}.v1", "created": list(self.refs), **self.detail}

    def _summary(self) -> str:
        return f"{self.action}: {' '.join(self.refs) or 'nothing created'}"


@dataclass(frozen=True, repr=False)
class ExtractResult(HtmlRepr):
    """Proposals per source (a record ref, or "text"), and what was written with --apply.

    Attributes
    ----------
    items : tuple of (str, Extraction)
        Each source and what extraction proposed for it: ``mentions``, ``assertions``, ``ends``, ``entities``,
        ``plans`` (intended future work, never written as facts).
    writes_performed : bool
        Whether the proposals were applied.
    written : tuple of str
        The ``fact:N`` refs written.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> r = m.extract_text("Atlas uses Kuzu.", at="2024-03-01")
    >>> [(p.subject, p.predicate, p.object) for p in r.items[0][1].assertions], r.written
    ([('project:atlas', 'uses', 'tool:kuzu')], ())
    >>> m.close()
    """

    items: tuple[tuple[str, Any], ...]  # (source, Extraction)
    writes_performed: bool
    written: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        mentions, entities, assertions, ends, skipped, plans = [], [], [], [], [], []
        for source, ex in self.items:
            rec = source if source.startswith("rec:") else None
            mentions += [{**m.to_dict(), "record": rec} for m in ex.mentions]
            entities += [{**e.to_dict(), "record": rec} for e in ex.entities]
            assertions += [p.to_dict() for p in ex.assertions]
            ends += [p.to_dict() for p in ex.ends]
            plans += [p.to_dict() for p in getattr(ex, "plans", ())]
            skipped += [{**s, "would_propose": [list(k) for k in s["would_propose"]], "record": rec}
                        for s in ex.skipped]
        return {"schema": "graphmem.extract.v1", "writes_performed": self.writes_performed,
                "records": [s for s, _ in self.items if s.startswith("rec:")], "mentions": mentions,
                "entities": entities, "assertions": assertions, "ends": ends, "plans": plans, "skipped": skipped,
                "written": list(self.written)}

    def _summary(self) -> str:
        n = sum(len(ex.assertions) for _, ex in self.items)
        done = f"written {' '.join(self.written)}" if self.written else "nothing written"
        return f"{nb.plural(len(self.items), 'source')}, {nb.plural(n, 'proposed assertion')}: {done}"

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        rows = [p.to_dict() for _, ex in self.items for p in ex.assertions]
        cols = ["subject", "predicate", "object", "valid_from", "evidence", "span", "rule"]
        return cols, [[r.get(c) for c in cols] for r in rows]
