"""Values: entities, statements (assertions and ends), intervals of the fact view.

Frozen dataclasses; identity and storage live in the store module. Instants are
integers (microseconds since the epoch, UTC; see ``timeparse``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from graphmem.model.times import format_instant

TRUST_TIERS = ("low", "medium", "high")
TRUST_RANK = {t: i for i, t in enumerate(TRUST_TIERS)}
ASSERTERS = ("operator", "agent", "extractor", "import")
DEFAULT_TRUST = {"operator": "high", "agent": "medium", "extractor": "low", "import": "medium"}

Value = str | int | float | bool


def fact_ref(n: int) -> str:
    return f"fact:{n}"


@dataclass(frozen=True, slots=True)
class Entity:
    """A thing facts are about: a project, a tool, a person (the types come from the ontology).

    Attributes
    ----------
    ref : str
        ``type-prefix:slug``, e.g. ``project:atlas``; what every method accepts, as do the name and aliases.
    type, name : str
        Its ontology type and its name.
    aliases : tuple of str
        Other names it is found by.
    description : str
        Free text (searched by linking).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"])
    >>> e = m.entity("atlas-app")
    >>> e.ref, e.type, e.aliases
    ('project:atlas', 'Project', ('atlas-app',))
    >>> m.close()
    """

    ref: str
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    description: str = ""

    @classmethod
    def of(cls, ref: str, type: str, name: str) -> Entity:
        """An entity with no aliases and no description, made without the frozen dataclass's
        ``__init__`` (a scan makes one per subject: 0.2 µs against 0.4 µs).

        Returns
        -------
        Entity

        Examples
        --------
        >>> Entity.of("project:atlas", "Project", "Atlas") == Entity("project:atlas", "Project", "Atlas")
        True
        """
        e = _new_object(cls)
        _set_ref(e, ref)
        _set_type(e, type)
        _set_name(e, name)
        _set_aliases(e, ())
        _set_description(e, "")
        return e

    def to_dict(self) -> dict[str, Any]:
        """The entity as the JSON documents give it.

        Returns
        -------
        dict
            ``ref``, ``type``, ``name``, ``aliases`` and ``description``.
        """
        return {"ref": self.ref, "type": self.type, "name": self.name,
                "aliases": list(self.aliases), "description": self.description}

    def brief(self) -> dict[str, Any]:
        """The entity as a result's ``subject`` (``graphmem current --json``).

        Returns
        -------
        dict
            ``ref``, ``type`` and ``name``.
        """
        return {"ref": self.ref, "type": self.type, "name": self.name}


_new_object = object.__new__  # Entity.of: the slots' own setters, as the frozen dataclass forbids setattr
_set_ref, _set_type, _set_name, _set_aliases, _set_description = (
    vars(Entity)[k].__set__ for k in ("ref", "type", "name", "aliases", "description"))


class Statement(NamedTuple):
    """One append-only statement: ``op`` is ``assert``, ``end`` or ``cite``.

    For an end, ``valid_from`` is the instant it closes at and ``object`` may be
    None (every value of the predicate). A cite attaches its ``sources`` to an
    earlier assertion of the same subject and predicate: its ``valid_from`` holds
    that assertion's id and its ``object`` the cite's note (a literal) or None. An immutable named tuple rather than a
    frozen dataclass: imports build millions and a tuple is five times cheaper. Results give its public
    form, ``Event`` (datetimes and ``fact:N`` refs); ``WhyResult.stored`` is the statement as stored.

    Attributes
    ----------
    id : int
        N of its ``fact:N``.
    ref : str
        ``fact:N``.
    op : str
        ``assert``, ``end`` or ``cite``.
    cited : int or None
        For a cite: the id of the assertion it attaches its sources to.
    subject, predicate : str
        The subject's ref and the predicate.
    object : str, int, float, bool or None
        An entity ref or a literal value (None: an end of every value).
    object_kind : str
        ``entity``, ``literal`` or ``""`` for an end of every value.
    object_name : str or None
        An entity object's name.
    valid_from, valid_to : int or None
        When it holds, in microseconds since the epoch (UTC); ``valid_to`` None is open.
    recorded_at, retracted_at : int or None
        When it was recorded and (if it was) retracted, in microseconds.
    retract_reason : str or None
        Why it was retracted.
    sources : tuple of str
        The cited record refs or URIs.
    asserted_by, trust : str
        Who asserted it (operator, agent, extractor, import) and its trust tier (low, medium, high).
    scope : str or None
        The scope it belongs to (a user, an agent, a project, a session); None: unscoped (docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> st = m.why("fact:1").stored
    >>> st.ref, st.op, st.object, st.valid_from
    ('fact:1', 'assert', 'tool:kuzu', 1706745600000000)
    >>> m.close()
    """

    id: int
    op: str
    subject: str
    predicate: str
    object: Value | None
    object_kind: str  # "entity", "literal" or "" for an end of every value
    valid_from: int
    valid_to: int | None
    recorded_at: int
    retracted_at: int | None = None
    retract_reason: str | None = None
    sources: tuple[str, ...] = ()
    asserted_by: str = "operator"
    trust: str = "high"
    object_name: str | None = None
    scope: str | None = None

    @property
    def ref(self) -> str:
        """``fact:N``."""
        return fact_ref(self.id)

    @property
    def cited(self) -> int | None:
        """The id of the assertion a cite attaches its sources to (None for other statements)."""
        return self.valid_from if self.op == "cite" else None

    def visible_at(self, known_at: int | None) -> bool:
        """Counts at record time K iff recorded by K and not retracted at or before K.

        Returns
        -------
        bool
            With ``known_at`` None: whether it is not retracted.
        """
        if known_at is None:
            return self.retracted_at is None
        return self.recorded_at <= known_at and (self.retracted_at is None or self.retracted_at > known_at)

    def object_json(self) -> dict[str, Any] | None:
        """The object as the JSON documents give it.

        Returns
        -------
        dict or None
            ``{"kind": "entity", "ref", "name"}`` or ``{"kind": "literal", "value"}``; None for an end of every value.
        """
        return object_json(self.object_kind, self.object, self.object_name)

    def to_dict(self) -> dict[str, Any]:
        """The statement as the JSON documents give it (``why``'s ``fact``, a timeline's events).

        Returns
        -------
        dict
            Its fields with times as ISO-8601 text and ids as ``fact:N`` (an end has ``at``).
        """
        d: dict[str, Any] = {
            "fact": self.ref, "op": self.op, "subject": self.subject, "predicate": self.predicate,
            "object": self.object_json(),
        }
        if self.op == "cite":
            d["object"] = None
            d["cites"] = fact_ref(self.valid_from)
            d["note"] = self.object
        elif self.op == "end":
            d["at"] = format_instant(self.valid_from)
        else:
            d["valid_from"] = format_instant(self.valid_from)
            d["valid_to"] = format_instant(self.valid_to)
        d.update({
            "recorded_at": format_instant(self.recorded_at),
            "retracted_at": format_instant(self.retracted_at),
            "retract_reason": self.retract_reason,
            "sources": list(self.sources), "asserted_by": self.asserted_by, "trust": self.trust,
        })
        if self.scope is not None:
            d["scope"] = self.scope
        return d


def object_json(kind: str, value: Value | None, name: str | None) -> dict[str, Any] | None:
    if kind == "entity":
        return {"kind": "entity", "ref": value, "name": name}
    if kind == "literal":
        return {"kind": "literal", "value": value}
    return None


class Interval(NamedTuple):
    """A value holding for a subject and predicate over ``[valid_from, valid_to)`` (immutable).

    The fact view's own form (integer instants and ids); results hand out ``Fact`` built from it and keep
    it in ``view``.

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
    valid_from, valid_to : int or None
        Microseconds since the epoch (UTC); ``valid_to`` None is open.
    assertions, conflicts : tuple of int
        Ids of the statements behind it and of those competing with it.
    sources : tuple of str
        The cited record refs or URIs.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> iv = m.current("Atlas").view[0]
    >>> iv.object, iv.assertions, iv.contains(iv.valid_from), iv.to_dict()["valid_from"]
    ('tool:kuzu', (1,), True, '2024-02-01T00:00:00Z')
    >>> m.close()
    """

    subject: str
    predicate: str
    object: Value
    object_kind: str
    valid_from: int
    valid_to: int | None
    assertions: tuple[int, ...]
    sources: tuple[str, ...] = ()
    conflicts: tuple[int, ...] = ()
    object_name: str | None = None

    def contains(self, t: int) -> bool:
        """Whether the interval holds at instant ``t`` (microseconds since the epoch).

        Returns
        -------
        bool
        """
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    def key(self) -> tuple[Any, ...]:
        """Everything that makes two views equal (used by ``rebuild --check``).

        Returns
        -------
        tuple
        """
        return (self.subject, self.predicate, self.object_kind, str(self.object), self.valid_from,
                self.valid_to, self.assertions, self.sources, self.conflicts)

    def to_dict(self, subject: dict[str, Any] | None = None) -> dict[str, Any]:
        """The fact object of the JSON documents (``current``, ``timeline``, ``facts``).

        Returns
        -------
        dict
            Times as ISO-8601 text, ids as ``fact:N``; ``subject`` first when given.
        """
        d: dict[str, Any] = {}
        if subject is not None:
            d["subject"] = subject
        d.update({
            "predicate": self.predicate,
            "object": object_json(self.object_kind, self.object, self.object_name),
            "valid_from": format_instant(self.valid_from),
            "valid_to": format_instant(self.valid_to),
            "assertions": [fact_ref(a) for a in self.assertions],
            "sources": list(self.sources),
            "conflicts": [fact_ref(c) for c in self.conflicts],
        })
        return d


ENTITY_EVENT_OPS = ("rename", "alias-add", "alias-remove", "merge", "unmerge")


@dataclass(frozen=True, slots=True)
class EntityEvent:
    """One recorded change of an entity (append-only, like statements): ``op`` is one of
    ``ENTITY_EVENT_OPS``; ``other`` is the entity merged into ``ref`` (merge, unmerge); ``detail``
    holds what changed (names before and after, aliases, the facts carried over and their copies)."""

    id: int
    op: str
    ref: str
    other: str | None
    detail: dict[str, Any]
    recorded_at: int

    @property
    def event_ref(self) -> str:
        return f"event:{self.id}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"event": self.event_ref, "op": self.op, "entity": self.ref}
        if self.other is not None:
            d["merged"] = self.other
        d.update(self.detail)
        if "carried" in d:
            d["carried"] = [[fact_ref(a), fact_ref(b)] for a, b in d["carried"]]
        if "restored" in d:
            d["restored"] = [[fact_ref(a), fact_ref(b)] for a, b in d["restored"]]
        if "retracted" in d:
            d["retracted"] = [fact_ref(a) for a in d["retracted"]]
        if "mentions" in d:
            d["mentions"] = [[f"rec:{r}", x, y] for r, x, y in d["mentions"]]  # the spans moved
        if "merge" in d:
            d["merge"] = f"event:{d['merge']}"
        d["recorded_at"] = format_instant(self.recorded_at)
        return d
