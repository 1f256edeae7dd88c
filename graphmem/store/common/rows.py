"""Pure functions over rows every engine reads alike: the name index made from the entities, and subject
refs cut into ranges for a grouped read."""

from __future__ import annotations

from collections.abc import Iterable

from graphmem.model import Entity


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
