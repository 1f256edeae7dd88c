"""The stored linking lexicon (layout ``base.LEXICON_LAYOUT``): the lexicon ``retrieval/linking.py`` builds
from every entity, kept with the store so that a fresh process reads the few parts a text needs instead of
building it again (at 100,000 entities, about 2 s of work).

The parts (``Lexicon.to_parts``: numbered byte strings) are kept in one file beside ``graph.kuzu``,
``lexicon-<hash>.bin``, which ``Meta`` names (key ``lexicon``); a reader maps the file and reads only the
parts it asks for (Kuzu scans a table's whole text column to find a few rows: 15 ms a lookup at 1M,
against microseconds here). The ``LexiconChange`` table holds the ref of every entity written since
that file was stored: every entity write of the store adds its ref in its own transaction, so the file and
the changes always say together what the entities are, and a reader patches the one with the other.

Crash safety (docs/recommend.md "The stored lexicon"): a new file is written whole under a new name (its
content's hash), flushed, renamed into place, and only then named in ``Meta`` in the transaction that
clears the changes; the file named before stays until that commit. A crash at any point leaves ``Meta``
naming a whole file that matches the changes, or naming none (then readers build the lexicon). A file
that is missing or unreadable counts as none. ``rebuild`` writes it again; ``rebuild --check`` compares.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import mmap
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphmem.store.kuzu.schema import Schema

_MAGIC = b"graphmem-lexicon-1\n"
_TOUCH = "MERGE (c:LexiconChange {ref: $r})"


class LexiconTables(Schema):
    """The stored lexicon's file and the entities changed since it was stored."""

    _lexicon_file: tuple[str, Any, dict[int, tuple[int, int]]] | None = None  # name, map, part -> (offset, size)

    def _lexicon_map(self) -> tuple[Any, dict[int, tuple[int, int]]] | None:
        name = self.meta("lexicon")
        if not name:
            return None
        if self._lexicon_file is not None and self._lexicon_file[0] == name:
            return self._lexicon_file[1], self._lexicon_file[2]
        try:
            with open(self.path / name, "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            if data[:len(_MAGIC)] != _MAGIC:
                return None
            size = int.from_bytes(data[len(_MAGIC):len(_MAGIC) + 8], "little")
            start = len(_MAGIC) + 8
            index = marshal.loads(data[start:start + size])
        except (OSError, ValueError, EOFError, TypeError):
            return None
        base = start + size
        self._lexicon_file = (name, data, {i: (base + off, n) for i, (off, n) in index.items()})
        return data, self._lexicon_file[2]

    def lexicon_parts(self, ids: list[int] | None) -> dict[int, bytes]:
        """The stored lexicon's parts ``ids`` that exist (None: every part), by number; {} when none is stored."""
        found = self._lexicon_map()
        if found is None:
            return {}
        data, index = found
        return {i: bytes(data[index[i][0]:index[i][0] + index[i][1]]) for i in (index if ids is None else ids)
                if i in index}

    def lexicon_changes(self) -> list[str]:
        """The refs of the entities written since the lexicon was stored, sorted."""
        return sorted(r[0] for r in self._q("MATCH (c:LexiconChange) RETURN c.ref"))

    def store_lexicon(self, parts: dict[int, bytes] | None) -> None:
        """Store ``parts`` as the lexicon (None: none) and forget the changes: the file first, then ``Meta``
        names it in one transaction with the changes cleared; older files go after the commit."""
        self.check_writable("store the linking lexicon")
        name = ""
        if parts:
            index, offset = {}, 0
            for i, d in sorted(parts.items()):
                index[i] = (offset, len(d))
                offset += len(d)
            head = marshal.dumps(index)
            blob = b"".join([_MAGIC, len(head).to_bytes(8, "little"), head, *(d for _, d in sorted(parts.items()))])
            name = f"lexicon-{hashlib.sha256(blob).hexdigest()[:16]}.bin"
            _write_whole(self.path / name, blob)
        with self.transaction():
            self._q("MATCH (c:LexiconChange) DELETE c")
            self._set_meta("lexicon", name)
        if not self._in_tx:
            self._drop_lexicon_files(keep=name)

    def _drop_lexicon_files(self, keep: str) -> None:
        drop_older(self.path, "lexicon-*.bin", keep)

    def _lexicon_touch(self, refs: Iterable[str]) -> None:
        """Note entities written (inside the write's transaction): the stored lexicon no longer shows them."""
        for ref in dict.fromkeys(refs):
            self._q(_TOUCH, {"r": ref}, hot=True)

    def _lexicon_drop(self) -> None:
        """Stop naming the stored lexicon (a bulk write of entities): the next one is built whole."""
        self._set_meta("lexicon", "")
        self._q("MATCH (c:LexiconChange) DELETE c")


def drop_older(folder: Path, pattern: str, keep: str) -> None:
    """Remove the files of ``folder`` matching ``pattern`` but ``keep`` (a derived file's older copies)."""
    for p in folder.glob(pattern):
        if p.name != keep:
            with contextlib.suppress(OSError):
                p.unlink()


def _write_whole(path: Path, blob: bytes) -> None:
    """Write ``blob`` to ``path`` so that ``path`` is never seen part-written: a temporary file, flushed,
    renamed into place, the folder flushed."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
