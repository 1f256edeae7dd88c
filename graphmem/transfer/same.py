"""What an import finds the store holds already: a statement line equal to a stored statement writes
nothing and is counted as unchanged (docs/formats.md, "Importing again").

Equal means the same op, subject, predicate, object, interval (an end's time, a cite's assertion) and
sources (as a set), and, when the line carries an ``id``, that very statement; record time, asserter
and trust are not compared, and a retracted statement still counts as held.
"""

from __future__ import annotations

from collections.abc import Iterable

from graphmem.model import Statement
from graphmem.store import Store

Key = tuple[object, ...]


def key(s: Statement) -> Key:
    """What makes a statement line equal to a stored one (``type`` keeps 1 and True apart)."""
    return (s.op, s.predicate, type(s.object).__name__, s.object, s.object_kind, s.valid_from, s.valid_to,
            frozenset(s.sources))


class Held:
    """The stored statements by subject, as keys, read a subject at a time or (``preload``) all at once."""

    def __init__(self, store: Store, preload: bool) -> None:
        self.store = store
        self.subjects: dict[str, tuple[dict[Key, int], dict[int, Key]]] = {}
        self.complete = False
        if preload:
            none = _no_name
            for ref, text in store.subject_logs():
                self._add(ref, store.statements_from_log(ref, text, none)[0])
            self.complete = True

    def _add(self, ref: str, log: Iterable[Statement]) -> tuple[dict[Key, int], dict[int, Key]]:
        by_key: dict[Key, int] = {}
        by_id: dict[int, Key] = {}
        for s in log:
            k = key(s)
            by_key.setdefault(k, s.id)
            by_id[s.id] = k
        self.subjects[ref] = (by_key, by_id)
        return by_key, by_id

    def _of(self, ref: str) -> tuple[dict[Key, int], dict[int, Key]]:
        got = self.subjects.get(ref)
        if got is None:
            got = ({}, {}) if self.complete else self._add(ref, self.store.subject_log(ref))
        return got

    def match(self, s: Statement, declared: int | None) -> int | None:
        """The id of the stored statement ``s`` equals (the one named ``declared``, if given), else None."""
        by_key, by_id = self._of(s.subject)
        if not by_id:
            return None
        k = key(s)
        if declared is not None:
            return declared if by_id.get(declared) == k else None
        return by_key.get(k)


def held(store: Store, preload: bool) -> Held | None:
    """What the store holds, or None for a store without statements (nothing can be equal)."""
    return Held(store, preload) if store.statement_count() else None


def _no_name(ref: str) -> None:
    return None
