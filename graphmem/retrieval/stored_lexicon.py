"""The lexicon as the store keeps it, read back: ``stored_lexicon`` gives the stored one read part by part
(``StoredLexicon``) when no entity was written since it was stored, else the stored one patched, else one
built afresh; ``fresh_lexicon`` is what ``rebuild`` stores and ``rebuild --check`` compares with.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload

import numpy as np

from graphmem.bulk import gc_paused
from graphmem.model import Entity
from graphmem.retrieval.lexicon import _CHUNK, _LEMMAS, _NAMES, _REFS, _ROWS, _TERMS, Lexicon, _bucket, _head

if TYPE_CHECKING:
    from graphmem.model.textindex import Postings


class StoredLexicon(Lexicon):
    """A lexicon read from the store part by part, as lookups need them (``Lexicon.to_parts``): a fresh
    process that links one text reads a few dozen small parts instead of the whole lexicon.

    Only for a stored lexicon with no entity written since (``stored_lexicon``); the store must not change
    while it is used (its owner drops it on an entity write).
    """

    def __init__(self, read: Callable[[list[int] | None], dict[int, bytes]], head: tuple[Any, ...]) -> None:
        self._read = read
        self._loaded: dict[int, Any] = {}
        _, self.n_docs, self.n_tokens, self.longest, _ = head
        self.names = _Lazy(self, _NAMES)  # type: ignore[assignment]
        self.lemmas = _Lazy(self, _LEMMAS)  # type: ignore[assignment]
        self._refs = _Lazy(self, _REFS)
        self.postings = _LazyPostings(self)  # type: ignore[assignment]
        self.index = _LazyIndex(self)  # type: ignore[assignment]
        self.entities = _LazyEntities(self)  # type: ignore[assignment]
        self.by_ref = _LazyByRef(self)  # type: ignore[assignment]

    def _part(self, i: int) -> Any:
        if i not in self._loaded:
            self._fetch([i])
        return self._loaded[i]

    def _fetch(self, ids: Iterable[int]) -> None:
        """Read and decode the parts ``ids`` not read yet. The garbage collector is paused meanwhile
        (``gc_paused``, which leaves what it made in the oldest generation): the parts of a few dozen refs
        hold tens of thousands of tuples, and making them set off collections of the whole heap, each a
        walk over every object of a process that has imported numpy (at 100,000 entities: 20-28 ms for the
        57 parts one ``recommend`` reads, against 4-6 ms paused)."""
        want = sorted({i for i in ids if i not in self._loaded})
        if want:
            got = self._read(want)
            with gc_paused():
                for i in want:
                    self._loaded[i] = marshal.loads(got[i]) if i in got else ({} if i < _ROWS else [])

    def prefetch(self, names: Iterable[str] = (), lemmas: Iterable[str] = (), refs: Iterable[str] = (),
                 terms: Iterable[str] = (), positions: Iterable[int] = ()) -> None:
        self._fetch([*(_bucket(_NAMES, k) for k in names), *(_bucket(_LEMMAS, k) for k in lemmas),
                     *(_bucket(_REFS, k) for k in refs), *(_bucket(_TERMS, k) for k in terms),
                     *(_ROWS + int(i) // _CHUNK for i in positions)])

    def full(self) -> Lexicon:
        """The whole lexicon, read at once."""
        lx = Lexicon.from_parts(self._read(None))
        assert lx is not None
        return lx

    def state(self) -> tuple[Any, ...]:
        return self.full().state()

    def to_parts(self) -> dict[int, bytes]:
        return self.full().to_parts()

    def patched(self, changed: dict[str, Entity | None]) -> Lexicon:
        return self.full().patched(changed)


class _Lazy(Mapping[str, Any]):
    """One kind of keyed part of a stored lexicon (names, lemmas, refs), a bucket read when first needed."""

    def __init__(self, lx: StoredLexicon, base: int) -> None:
        self._lx, self._base = lx, base

    def __getitem__(self, key: str) -> Any:
        return self._lx._part(_bucket(self._base, key))[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._lx._part(_bucket(self._base, key))

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a stored lexicon is not listed whole: Lexicon.from_parts reads it all")

    def __len__(self) -> int:
        raise TypeError("a stored lexicon is not counted whole")


class _LazyIndex(_Lazy):
    """Ref to position, from the refs' parts (which hold the position first)."""

    def __init__(self, lx: StoredLexicon) -> None:
        super().__init__(lx, _REFS)

    def __getitem__(self, key: str) -> Any:
        return super().__getitem__(key)[0]


class _LazyByRef(_Lazy):
    """Ref to entity, from the refs' parts (position, type, name, aliases, description)."""

    def __init__(self, lx: StoredLexicon) -> None:
        super().__init__(lx, _REFS)

    def __getitem__(self, key: str) -> Any:
        _, etype, name, aliases, description = super().__getitem__(key)
        return Entity(key, etype, name, tuple(aliases), description)


class _LazyPostings(_Lazy):
    def __init__(self, lx: StoredLexicon) -> None:
        super().__init__(lx, _TERMS)

    def __getitem__(self, term: str) -> Postings:
        from graphmem.model.textindex import Postings
        ids, tfs, dls = super().__getitem__(term)
        return Postings(np.frombuffer(ids, "<u4"), np.frombuffer(tfs, "<u2"), np.frombuffer(dls, "<u2"))


class _LazyEntities(Sequence[Entity]):
    def __init__(self, lx: StoredLexicon) -> None:
        self._lx = lx

    def __len__(self) -> int:
        return int(self._lx.n_docs)

    @overload
    def __getitem__(self, i: int) -> Entity: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Entity]: ...

    def __getitem__(self, i: int | slice) -> Entity | Sequence[Entity]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i) + (len(self) if i < 0 else 0)
        r = self._lx._part(_ROWS + i // _CHUNK)[i % _CHUNK]
        return Entity(r[0], r[1], r[2], tuple(r[3]), r[4])


class LexiconStore(Protocol):
    """The store methods the stored lexicon needs (``store/kuzu/lexicon.py``)."""

    read_only: bool

    def lexicon_parts(self, ids: list[int] | None) -> dict[int, bytes]: ...

    def lexicon_changes(self) -> list[str]: ...

    def store_lexicon(self, parts: dict[int, bytes] | None) -> None: ...

    def entity(self, ref: str) -> Entity | None: ...

    def all_entities(self) -> Iterator[Entity]: ...


PATCH_MAX = 5000  # more entities changed since the lexicon was stored than this: it is built again whole


def stored_lexicon(store: LexiconStore, *, keep: bool = False) -> tuple[Lexicon, bool]:
    """The store's lexicon: the stored one read part by part as needed (``StoredLexicon``) when no entity
    was written since it was stored; else the stored one patched with the entities written since
    (``Lexicon.patched``), or, when none is stored (or too many changed), one built from every entity.
    Also whether it is stored as it is. With ``keep`` (a store open for writing) a lexicon that is not is
    stored, and the changes forgotten, in one transaction.

    Returns
    -------
    (Lexicon, bool)
    """
    changed = store.lexicon_changes()
    head = _head(store.lexicon_parts([0]).get(0))
    if head is not None and not changed:
        return StoredLexicon(store.lexicon_parts, head), True
    lx: Lexicon | None = None
    if head is not None and len(changed) <= PATCH_MAX:
        whole = Lexicon.from_parts(store.lexicon_parts(None))
        if whole is not None:
            lx = whole.patched({ref: store.entity(ref) for ref in changed})
    if lx is None:
        lx = Lexicon(store.all_entities())
    if keep and not store.read_only:
        store.store_lexicon(lx.to_parts())
        return lx, True
    return lx, False


def fresh_lexicon(store: LexiconStore) -> Lexicon:
    """The lexicon built from every entity of the store (what ``rebuild`` stores and ``rebuild --check``
    compares the stored one with)."""
    return Lexicon(store.all_entities())



def rebuild_lexicon(store: LexiconStore, check: bool) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """``rebuild``: store a lexicon built from every entity; ``rebuild --check``: compare the stored one (with
    the entities changed since) with it, a difference being the problem ``lexicon_drift`` (none stored is
    not one: readers build it). The counts (``lexicon_entities``) and the problems.

    Returns
    -------
    (dict, list of dict)
    """
    fresh = fresh_lexicon(store)
    counts = {"lexicon_entities": fresh.n_docs}
    if not check:
        store.store_lexicon(fresh.to_parts())
        return counts, []
    parts = store.lexicon_parts(None)
    if not parts:
        return counts, []
    stored = Lexicon.from_parts(parts)
    if stored is not None:
        stored = stored.patched({ref: store.entity(ref) for ref in store.lexicon_changes()})
    if stored is None or stored.state() != fresh.state():
        return counts, [{"code": "lexicon_drift", "message": "the stored linking lexicon differs from one built "
                         "from the entities: run 'graphmem rebuild'"}]
    return counts, []
