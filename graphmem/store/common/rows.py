"""Pure functions over rows every engine reads alike: the name index made from the entities, subject
refs cut into ranges for a grouped read, and a statement as a batch reads it back."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from graphmem.model import Entity, Statement


def name_index(entities: Iterable[Entity]) -> dict[str, set[str]]:
    """The name index of ``entities``: each lower-cased name and alias with the refs it names."""
    names: dict[str, set[str]] = {}
    for e in entities:
        for key in (e.name, *e.aliases):
            names.setdefault(key.lower(), set()).add(e.ref)
    return names


def ranges_of(refs: list[str], parts: int) -> list[tuple[str | None, str | None]]:
    """About ``parts`` ranges (from, to: None at either end) of the sorted ``refs``, with similar numbers
    of refs in each; one range holding all when there are fewer refs than parts."""
    if parts <= 1 or len(refs) < parts:
        return [(None, None)]
    bounds: list[str | None] = [None, *(refs[i * len(refs) // parts] for i in range(1, parts)), None]
    return list(zip(bounds, bounds[1:], strict=False))


def read_back(st: Statement, name_of: Callable[[str], str | None],
              retractions: dict[int, tuple[int, str | None]]) -> Statement:
    """A statement as ``StatementBatch.statements`` hands it back: an entity object's name from ``name_of``
    (None for any other object), its retraction from ``retractions`` (fact id -> when, reason) set.

    >>> from graphmem.model import Statement
    >>> st = Statement(7, "assert", "project:atlas", "uses", "tool:kuzu", "entity", 1, None, 2, None, None,
    ...                (), "operator", None, "old name", None)
    >>> b = read_back(st, {"tool:kuzu": "Kuzu"}.get, {7: (3, "typo")})
    >>> b.object_name, b.retracted_at, b.retract_reason
    ('Kuzu', 3, 'typo')
    """
    if st[5] == "entity":
        name = name_of(str(st[4]))  # (an entity object is its ref)
        if name != st[14]:
            st = st._replace(object_name=name)
    elif st[14] is not None:
        st = st._replace(object_name=None)
    if retractions and st[0] in retractions:
        at, why = retractions[st[0]]
        st = st._replace(retracted_at=at, retract_reason=why)
    return st
