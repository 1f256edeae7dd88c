"""The stored linking lexicon (layout ``base.LEXICON_LAYOUT``): the lexicon ``retrieval/linking.py`` builds from every entity, kept
with the store so that a fresh process reads it instead of building it again (at 100,000 entities, about
2 s of work against some 50 ms of reading).

Two tables: ``LexiconPart`` holds the lexicon as the bytes ``Lexicon.to_bytes`` writes, in parts of at most
``_PART`` characters of base64; ``LexiconChange`` holds the ref of every entity written since those bytes
were stored. Every entity write of the store adds its ref in its own transaction, so the stored lexicon
and the changes always say together what the entities are: a reader patches the stored lexicon with the
changed entities (``Lexicon.patched``), and a writer stores the patched lexicon and clears the changes in
one transaction (``store_lexicon``). A bulk write of entities drops the stored lexicon instead (it is
built again whole). ``rebuild`` builds it again; ``rebuild --check`` compares the stored one with a fresh one.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

from graphmem.store.kuzu.schema import Schema

_PART = 4_000_000  # characters of base64 per row
_TOUCH = "MERGE (c:LexiconChange {ref: $r})"


class LexiconTables(Schema):
    """The stored lexicon and the entities changed since it was stored."""

    def stored_lexicon(self) -> tuple[bytes | None, list[str]]:
        """The stored lexicon's bytes (None: none is stored) and the refs of the entities written since,
        sorted."""
        parts = self._q("MATCH (l:LexiconPart) RETURN l.id, l.data ORDER BY l.id")
        changed = sorted(r[0] for r in self._q("MATCH (c:LexiconChange) RETURN c.ref"))
        if not parts or [r[0] for r in parts] != list(range(len(parts))):
            return None, changed
        return base64.b64decode("".join(r[1] for r in parts)), changed

    def store_lexicon(self, data: bytes | None) -> None:
        """Replace the stored lexicon with ``data`` (None: drop it) and forget the changes, in one transaction."""
        with self.transaction():
            self._q("MATCH (l:LexiconPart) DELETE l")
            self._q("MATCH (c:LexiconChange) DELETE c")
            if data is not None:
                text = base64.b64encode(data).decode("ascii")
                for i in range(0, max(len(text), 1), _PART):
                    self._q(f"CREATE (:LexiconPart {{id: {i // _PART}, data: $d}})", {"d": text[i:i + _PART]})

    def _lexicon_touch(self, refs: Iterable[str]) -> None:
        """Note entities written (inside the write's transaction): the stored lexicon no longer shows them."""
        for ref in dict.fromkeys(refs):
            self._q(_TOUCH, {"r": ref}, hot=True)

    def _lexicon_drop(self) -> None:
        """Drop the stored lexicon (a bulk write of entities): the next one is built whole."""
        self._q("MATCH (l:LexiconPart) DELETE l")
        self._q("MATCH (c:LexiconChange) DELETE c")
