"""The public forms of the view's values: what results give a Python user.

The fact view works on ``Interval`` and ``Statement`` tuples whose instants are integers (microseconds
since the epoch) and whose ids are integers: cheap for the hot paths. Results hand out ``Fact`` and
``Event`` instead, built on first access: times are timezone-aware UTC datetimes and ids are the
``fact:N`` refs every method accepts (``m.why(fact.assertions[0])``). ``to_dict`` gives the same JSON
as the internal value.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, NamedTuple

from graphmem.model import Interval, Statement, Value, fact_ref, object_json
from graphmem.model.times import _utc_cached as _utc
from graphmem.model.times import format_datetime, format_instant, parse_instant, short_instant, to_us, utc

_ref = lru_cache(maxsize=65536)(fact_ref)  # results of one store cite the same ids again and again


def fact_order(f: Fact) -> tuple[Any, ...]:
    """The order of one subject's facts in a read of many subjects (``Memory.facts``): predicate, start,
    object (as text).

    Returns
    -------
    tuple

    Examples
    --------
    >>> from graphmem.model import Interval
    >>> a, b = (Fact.of(Interval("project:atlas", "status", v, "literal", t, None, (1,))) for v, t in (("b", 5), ("a", 9)))
    >>> [f.object for f in sorted([b, a], key=fact_order)]
    ['b', 'a']
    """
    return f.predicate, f.valid_from, str(f.object)


def fact_parts() -> tuple[Any, Any]:
    """The two conversions a ``Fact`` makes of a view value, for a reader that makes many straight from
    its stored rows (``Store.subject_facts_holding``): an instant to its UTC datetime and a statement id to
    its ``fact:N`` ref, each remembering its last 65,536 answers (times and ids repeat across a store).

    Returns
    -------
    tuple
        ``(time, ref)``: two functions of one integer.

    Examples
    --------
    >>> time, ref = fact_parts()
    >>> time(0).isoformat(), ref(7)
    ('1970-01-01T00:00:00+00:00', 'fact:7')
    """
    return _utc, _ref


def object_text(kind: str, value: Value | None, name: str | None) -> str:
    """An object for people: ``Kuzu (tool:kuzu)``, a literal's value, or ``(every value)`` for an end of all."""
    if kind == "entity":
        return f"{name} ({value})" if name else str(value)
    return "(every value)" if value is None else str(value)


def _instant(t: _dt.datetime | str | int) -> int:
    if isinstance(t, _dt.datetime):
        return to_us(t)
    if isinstance(t, str):
        return parse_instant(t)
    return t


class Fact(NamedTuple):
    """One interval of the fact view: ``object`` holds for ``subject`` over ``[valid_from, valid_to)``.

    ``subject`` is a ref; ``object`` is an entity ref (``object_kind`` "entity", its name in
    ``object_name``) or a literal value. Times are timezone-aware UTC datetimes, ``valid_to`` None is
    open. ``assertions`` (the statements behind it) and ``conflicts`` (competing statements) are
    ``fact:N`` refs; ``sources`` are the cited record refs or URIs. An immutable named tuple, like the
    view's own values: building one costs a fraction of a microsecond.

    Attributes
    ----------
    subject, predicate : str
        The subject's ref and the predicate.
    object : str, int, float or bool
        An entity ref or a literal value.
    object_kind : str
        ``entity`` or ``literal``.
    object_name : str or None
        An entity object's name.
    object_label : str
        The object for people: ``Kuzu (tool:kuzu)`` or the literal value.
    valid_from, valid_to : datetime or None
        When it holds, UTC; ``valid_to`` None is open.
    assertions, conflicts : tuple of str
        ``fact:N`` refs of the statements behind it and of those competing with it.
    sources : tuple of str
        The cited record refs or URIs.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01", valid_to="2024-06-01")
    >>> f = m.timeline("Atlas").intervals[0]
    >>> f.object_label, f.assertions, f.holds_at("2024-03-01"), f.holds_at("2024-06-01")
    ('Kuzu (tool:kuzu)', ('fact:1',), True, False)
    >>> m.close()
    """

    subject: str
    predicate: str
    object: Value
    object_kind: str
    valid_from: _dt.datetime
    valid_to: _dt.datetime | None
    assertions: tuple[str, ...]
    sources: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    object_name: str | None = None

    @classmethod
    def of(cls, iv: Interval) -> Fact:
        """The public form of a view interval.

        Returns
        -------
        Fact
        """
        return cls.many((iv,))[0]

    @classmethod
    def many(cls, view: Iterable[Interval]) -> tuple[Fact, ...]:
        """``of`` over many intervals in one loop (a scan makes tens of thousands: no call per fact).

        Returns
        -------
        tuple of Fact

        Examples
        --------
        >>> from graphmem.model import Interval
        >>> iv = Interval("project:atlas", "status", "active", "literal", 0, None, (7,), (), (), None)
        >>> Fact.many([iv]) == (Fact.of(iv),)
        True
        """
        new, u, r = tuple.__new__, _utc, _ref
        return tuple([new(cls, (iv[0], iv[1], iv[2], iv[3], u(iv[4]), None if iv[5] is None else u(iv[5]),
                                (r(iv[6][0]),) if len(iv[6]) == 1 else tuple(map(r, iv[6])), iv[7],
                                tuple(map(r, iv[8])) if iv[8] else (), iv[9])) for iv in view])

    def interval(self) -> Interval:
        """The view's own form of this fact (integer instants and ids): the inverse of ``of``.

        Returns
        -------
        Interval

        Examples
        --------
        >>> from graphmem.model import Interval
        >>> iv = Interval("project:atlas", "status", "active", "literal", 0, 10, (7,), ("rec:1",), (9,), None)
        >>> Fact.of(iv).interval() == iv
        True
        """
        return Interval(self.subject, self.predicate, self.object, self.object_kind, to_us(self.valid_from),
                        None if self.valid_to is None else to_us(self.valid_to),
                        tuple(int(a.partition(":")[2]) for a in self.assertions), self.sources,
                        tuple(int(c.partition(":")[2]) for c in self.conflicts), self.object_name)

    def holds_at(self, t: _dt.datetime | str | int) -> bool:
        """Whether the fact holds at ``t`` (a datetime, naive meaning UTC; ISO-8601 text; or an instant).

        Returns
        -------
        bool
            ``valid_from <= t < valid_to``.
        """
        us = _instant(t)
        return to_us(self.valid_from) <= us and (self.valid_to is None or us < to_us(self.valid_to))

    @property
    def object_label(self) -> str:
        """The object for people: ``Kuzu (tool:kuzu)`` or the literal value."""
        return object_text(self.object_kind, self.object, self.object_name)

    def to_dict(self, subject: dict[str, Any] | None = None) -> dict[str, Any]:
        """The fact object of the JSON documents (``current``, ``timeline``, ``facts``).

        Returns
        -------
        dict
            The same as the view interval's ``to_dict``.
        """
        d: dict[str, Any] = {} if subject is None else {"subject": subject}
        d.update({"predicate": self.predicate, "object": object_json(self.object_kind, self.object, self.object_name),
                  "valid_from": format_datetime(self.valid_from), "valid_to": format_datetime(self.valid_to),
                  "assertions": list(self.assertions), "sources": list(self.sources),
                  "conflicts": list(self.conflicts)})
        return d

    def __repr__(self) -> str:
        until = short_instant(self.valid_to) or "open"
        note = f", conflicts {' '.join(self.conflicts)}" if self.conflicts else ""
        return (f"Fact({self.subject} {self.predicate} {self.object_label}, {short_instant(self.valid_from)} to "
                f"{until}, {' '.join(self.assertions)}{note})")


def event_doc(event: str, st: Statement) -> dict[str, Any]:
    """A timeline event as the JSON document has it: ``st`` as asserted or ended, or its retraction."""
    if event == "retract":
        return {"event": "retract", "fact": st.ref, "predicate": st.predicate,
                "recorded_at": format_instant(st.retracted_at), "reason": st.retract_reason}
    d = st.to_dict()
    d["event"] = st.op
    return d


class Event(NamedTuple):
    """One statement, or a retraction, as results give it (``why``'s ``statement``, ``timeline``'s ``events``).

    ``op`` is ``assert``, ``end``, ``cite`` or (a timeline event) ``retract``; ``fact`` is its ``fact:N``.
    For an end, ``valid_from`` (also ``at``) is the instant it closes at and ``object`` None means every
    value. ``recorded_at`` is when it was recorded (for a retraction: when it was retracted);
    ``retracted_at`` and ``retract_reason`` say whether and why it was withdrawn. Times are
    timezone-aware UTC datetimes.

    Attributes
    ----------
    op : str
        ``assert``, ``end`` or ``retract``.
    fact : str
        Its ``fact:N``.
    subject, predicate : str
        The subject's ref and the predicate.
    object : str, int, float, bool or None
        An entity ref or a literal value (None: an end of every value, or a retraction).
    object_kind : str
        ``entity``, ``literal`` or ``""``.
    object_name : str or None
        An entity object's name.
    object_label : str
        The object for people.
    valid_from, valid_to, at : datetime or None
        When it holds; for an end, ``at`` (and ``valid_from``) is the instant it closes at.
    recorded_at, retracted_at : datetime or None
        When it was recorded (a retraction: retracted) and whether it was withdrawn since.
    retract_reason : str or None
        Why it was retracted.
    sources : tuple of str
        The cited record refs or URIs.
    asserted_by, trust : str or None
        Who asserted it and its trust tier.
    cites : str or None
        For a cite: the ``fact:N`` of the assertion it attaches its sources to.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> _ = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
    >>> [(e.op, e.fact, e.at and e.at.date().isoformat()) for e in m.timeline("Atlas").events]
    [('assert', 'fact:1', None), ('end', 'fact:2', '2024-06-01')]
    >>> m.close()
    """

    op: str
    fact: str
    subject: str
    predicate: str
    object: Value | None
    object_kind: str
    valid_from: _dt.datetime | None
    valid_to: _dt.datetime | None
    recorded_at: _dt.datetime
    retracted_at: _dt.datetime | None = None
    retract_reason: str | None = None
    sources: tuple[str, ...] = ()
    asserted_by: str | None = None
    trust: str | None = None
    object_name: str | None = None
    cites: str | None = None  # for a cite, the fact:N of the assertion it attaches its sources to

    @classmethod
    def of(cls, st: Statement) -> Event:
        """The public form of a stored statement.

        Returns
        -------
        Event
        """
        if st.op == "cite":  # its valid_from holds the cited assertion's id and its object the note
            return cls("cite", fact_ref(st.id), st.subject, st.predicate, st.object, st.object_kind, None, None,
                       utc(st.recorded_at), utc(st.retracted_at), st.retract_reason, st.sources, st.asserted_by,
                       st.trust, None, fact_ref(st.valid_from))
        return cls(st.op, fact_ref(st.id), st.subject, st.predicate, st.object, st.object_kind, utc(st.valid_from),
                   utc(st.valid_to), utc(st.recorded_at), utc(st.retracted_at), st.retract_reason, st.sources,
                   st.asserted_by, st.trust, st.object_name)

    @classmethod
    def retraction(cls, st: Statement) -> Event:
        """The withdrawal of ``st`` as a timeline event (``st.retracted_at`` is set).

        Returns
        -------
        Event
            ``op`` ``retract``, ``recorded_at`` the time of the retraction.
        """
        assert st.retracted_at is not None
        return cls("retract", fact_ref(st.id), st.subject, st.predicate, None, "", None, None, utc(st.retracted_at),
                   retract_reason=st.retract_reason)

    @property
    def at(self) -> _dt.datetime | None:
        """For an end, the instant it closes at (None for other events)."""
        return self.valid_from if self.op == "end" else None

    @property
    def object_label(self) -> str:
        """The object for people: ``Kuzu (tool:kuzu)``, the literal value, or ``(every value)``."""
        return object_text(self.object_kind, self.object, self.object_name)

    def _label(self) -> str:
        text = " ".join(self.object_label.split())
        return text if len(text) <= 60 else text[:59] + "…"

    def __repr__(self) -> str:
        when = short_instant(self.recorded_at)
        if self.op == "retract":
            why = f": {self.retract_reason}" if self.retract_reason else ""
            return f"Event(retract {self.fact} {self.predicate} at {when}{why})"
        if self.op == "cite":
            return f"Event(cite {self.fact} of {self.cites}: {' '.join(self.sources)}, recorded {when})"
        if self.op == "end":
            return (f"Event(end {self.fact} {self.subject} {self.predicate} {self._label()} at {short_instant(self.at)}, "
                    f"recorded {when})")
        span = f"{short_instant(self.valid_from)} to {short_instant(self.valid_to) or 'open'}"
        gone = f", retracted {short_instant(self.retracted_at)}" if self.retracted_at else ""
        return f"Event(assert {self.fact} {self.subject} {self.predicate} {self._label()}, {span}, recorded {when}{gone})"
