"""What an import finds the store holds already: a statement line equal to a stored statement writes
nothing and is counted as unchanged (docs/formats.md, "Importing again").

Equal means the same op, subject, predicate, object, interval (an end's time, a cite's assertion) and
sources (as a set), and, when the line carries an ``id``, that very statement; the record time and the
asserter are compared when the line gives them (a line without ``recorded_at`` is recorded "now", which
is no claim), and a retracted statement still counts as held.
"""

from __future__ import annotations

from collections.abc import Iterable

from graphmem.model import Statement
from graphmem.store import StorageEngine

Key = tuple[object, ...]


def key(s: Statement) -> Key:
    """What makes a statement line equal to a stored one (``type`` keeps 1 and True apart)."""
    return (s.op, s.predicate, type(s.object).__name__, s.object, s.object_kind, s.valid_from, s.valid_to,
            frozenset(s.sources), s.scope)


class Held:
    """The stored statements by subject, as keys, read a subject at a time or (``preload``) all at once."""

    def __init__(self, store: StorageEngine, preload: bool) -> None:
        self.store = store
        self.subjects: dict[str, dict[Key, list[Statement]]] = {}
        self.complete = False
        if preload:
            none = _no_name
            for ref, text in store.subject_logs():
                self._add(ref, store.statements_from_log(ref, text, none)[0])
            self.complete = True

    def _add(self, ref: str, log: Iterable[Statement]) -> dict[Key, list[Statement]]:
        by_key: dict[Key, list[Statement]] = {}
        for s in log:
            by_key.setdefault(key(s), []).append(s)
        self.subjects[ref] = by_key
        return by_key

    def match(self, s: Statement, declared: int | None, recorded: bool, by: bool, default_from: bool) -> int | None:
        """The id of the stored statement ``s`` equals (the one named ``declared``, if given), else None;
        ``recorded`` and ``by``: the line gave its record time, its asserter; ``default_from``: it gave no
        ``valid_from`` (so it starts when it is recorded, and equals a statement that started when it was)."""
        by_key = self.subjects.get(s.subject)
        if by_key is None:
            by_key = {} if self.complete else self._add(s.subject, self.store.subject_log(s.subject))
        if default_from and not recorded:
            k = key(s)[:5] + key(s)[6:]
            candidates: Iterable[Statement] = (h for hs in by_key.values() for h in hs
                                               if h.valid_from == h.recorded_at and key(h)[:5] + key(h)[6:] == k)
        else:
            candidates = by_key.get(key(s), ())
        for h in candidates:
            if ((declared is None or h.id == declared) and (not recorded or h.recorded_at == s.recorded_at)
                    and (not by or h.asserted_by == s.asserted_by)):
                return h.id
        return None


def held(store: StorageEngine, preload: bool) -> Held | None:
    """What the store holds, or None for a store without statements (nothing can be equal)."""
    return Held(store, preload) if store.statement_count() else None


def _no_name(ref: str) -> None:
    return None
