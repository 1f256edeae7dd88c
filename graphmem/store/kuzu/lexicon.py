"""The stored linking lexicon (layout ``base.LEXICON_LAYOUT``): the lexicon ``retrieval/linking.py`` builds from every entity, kept
with the store so that a fresh process reads it instead of building it again (at 100,000 entities, about
2 s of work against some 50 ms of reading).

Two tables: ``LexiconPart`` holds the lexicon as the numbered parts ``Lexicon.to_parts`` writes (base64),
each read alone by a process that needs only a few names, entities and terms; ``LexiconChange`` holds the ref of every entity written since those bytes
were stored. Every entity write of the store adds its ref in its own transaction, so the stored lexicon
and the changes always say together what the entities are: a reader patches the stored lexicon with the
changed entities (``Lexicon.patched``), and a writer stores the patched lexicon and clears the changes in
one transaction (``store_lexicon``). A bulk write of entities drops the stored lexicon instead (it is
built again whole). ``rebuild`` builds it again; ``rebuild --check`` compares the stored one with a fresh one.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.schema import Schema

_TOUCH = "MERGE (c:LexiconChange {ref: $r})"


class LexiconTables(Schema):
    """The stored lexicon and the entities changed since it was stored."""

    def lexicon_parts(self, ids: list[int] | None) -> dict[int, bytes]:
        """The stored lexicon's parts ``ids`` that exist (None: every part), by number."""
        if ids is None:
            rows = self._q("MATCH (l:LexiconPart) RETURN l.id, l.data")
        elif not ids:
            return {}
        else:  # literal ids: Kuzu scans the table for an INT64 key given as a parameter (SPEC 12)
            rows = self._q(f"MATCH (l:LexiconPart) WHERE l.id IN [{', '.join(_int(i) for i in ids)}] "
                           "RETURN l.id, l.data")
        return {int(i): base64.b64decode(data) for i, data in rows}

    def lexicon_changes(self) -> list[str]:
        """The refs of the entities written since the lexicon was stored, sorted."""
        return sorted(r[0] for r in self._q("MATCH (c:LexiconChange) RETURN c.ref"))

    def store_lexicon(self, parts: dict[int, bytes] | None) -> None:
        """Replace the stored lexicon with ``parts`` (None: drop it) and forget the changes, in one transaction."""
        with self.transaction():
            self._q("MATCH (l:LexiconPart) DELETE l")
            self._q("MATCH (c:LexiconChange) DELETE c")
            items = sorted((parts or {}).items())
            for lo in range(0, len(items), 500):
                self._q("UNWIND $rows AS r CREATE (:LexiconPart {id: r.id, data: r.data})",
                        {"rows": [{"id": i, "data": base64.b64encode(d).decode("ascii")} for i, d in items[lo:lo + 500]]})

    def _lexicon_touch(self, refs: Iterable[str]) -> None:
        """Note entities written (inside the write's transaction): the stored lexicon no longer shows them."""
        for ref in dict.fromkeys(refs):
            self._q(_TOUCH, {"r": ref}, hot=True)

    def _lexicon_drop(self) -> None:
        """Drop the stored lexicon (a bulk write of entities): the next one is built whole."""
        self._q("MATCH (l:LexiconPart) DELETE l")
        self._q("MATCH (c:LexiconChange) DELETE c")
