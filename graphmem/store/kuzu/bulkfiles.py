"""Bulk files for Kuzu's COPY: rows written to temporary tab-separated files a chunk at a time
(``_BulkFile``), and the files of (part of) the view (``ViewFiles``). The statements' own bulk file,
``StatementFile``, is in ``statements.py``."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def _chunks(rows: Iterable[list[Any]], size: int) -> Iterator[list[list[Any]]]:
    chunk: list[list[Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _tsv_field(v: Any) -> str:
    s = "" if v is None else str(v)
    if "\t" in s or "\n" in s or "\r" in s or s.startswith('"'):
        return '"' + s.replace('"', '""') + '"'
    return s


def _tsv(rows: list[list[Any]], nones: bool = True) -> tuple[str, bool]:
    """Rows as tab-separated lines for COPY, and whether a value holds a line break.

    The fast form joins the values as they are; it is kept only when its tab and line counts
    show that no value holds a tab or line break, no value starts with a quote and none can be
    None (written as "", like a CSV writer does).
    """
    text = "\n".join(["\t".join(map(str, r)) for r in rows]) + "\n"
    values = sum(len(r) for r in rows)
    # long values (a view's JSON, a log): their first characters are looked at, not the whole text
    # searched for a quote after a tab or line break (two slow searches: JSON holds quotes throughout)
    quoted = None if len(text) < _LONG * values else any(str(v)[:1] == '"' for r in rows for v in r)
    if not quoted and _plain(text, len(rows), values - len(rows), nones, starts_checked=quoted is not None):
        return text, False
    text = "\n".join(["\t".join(map(_tsv_field, r)) for r in rows]) + "\n"
    return text, any(("\n" in v or "\r" in v) for r in rows for v in r if type(v) is str)


# a value that starts with a quote (Python's regular expressions find a literal first character faster
# than ``in`` does)
_TAB_QUOTE, _BREAK_QUOTE = re.compile('\t"'), re.compile('\n"')
_LONG = 64  # characters a value, on average, from which ``_tsv`` looks at each value's first character


def _plain(text: str, rows: int, tabs: int, nones: bool = True, starts_checked: bool = False) -> bool:
    """Whether ``rows`` rows joined as they are (``tabs`` tabs between their values) can be loaded as they
    are: no value holds a tab or line break, none starts with a quote (``starts_checked``: the caller
    looked at each value's first character), none was None (``nones``: rows that may hold None, so the
    text must not say "None"; a packed log may, by chance)."""
    return (text.count("\t") == tabs and text.count("\n") == rows and "\r" not in text
            and (starts_checked or not text.startswith('"') and not _TAB_QUOTE.search(text)
                 and not _BREAK_QUOTE.search(text))
            and (not nones or "None" not in text))


_CHUNK = 4096


class _BulkFile:
    """A temporary tab-separated file for COPY, written a chunk of rows at a time.

    A field is quoted only when it must be (a tab, a line break or a leading quote), which
    ``_tsv`` checks for a whole chunk at once: quoting every JSON column, as a CSV writer
    does, costs more than the load itself.
    """

    def __init__(self, tmpdir: Path, breaks: bool = False, keep: bool = False, nones: bool = True) -> None:
        tmpdir.mkdir(exist_ok=True)
        fd, self.name = tempfile.mkstemp(suffix=".csv", dir=tmpdir)
        self._f = os.fdopen(fd, "w", encoding="utf-8")
        self.rows = 0
        self.breaks = breaks
        self.keep = keep  # left in place on exit, for a load elsewhere (see ``discard``)
        self.nones = nones  # whether a row may hold None (written as "")

    def write(self, rows: list[list[Any]]) -> None:
        text, breaks = _tsv(rows, self.nones)
        self._f.write(text)
        self.rows += len(rows)
        self.breaks = self.breaks or breaks

    def write_plain(self, text: str, rows: int, columns: int) -> bool:
        """Write ``rows`` rows of ``columns`` values joined as they are (each line ending in a line break) when
        ``_plain`` allows it; False (nothing written) when they need ``write``'s quoting."""
        if not _plain(text, rows, rows * (columns - 1), nones=False):
            return False
        self._f.write(text)
        self.rows += rows
        return True

    def tell(self) -> int:
        """The file's length so far, in bytes (where the next row starts)."""
        return self._f.tell()

    def close(self) -> None:
        self._f.close()

    @property
    def closed(self) -> bool:
        return self._f.closed

    def discard(self) -> None:
        self._f.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)

    def __getstate__(self) -> dict[str, Any]:  # handed from a child process: the closed file's name and counts
        return {"name": self.name, "rows": self.rows, "breaks": self.breaks, "keep": self.keep, "nones": self.nones}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._f = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  (closed by close or discard)

    def __enter__(self) -> _BulkFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()
        if not self.keep:
            os.unlink(self.name)


@dataclasses.dataclass
class ViewFiles:
    """The bulk files of (part of) the view, written by ``Store.write_view_files``."""

    subjects: _BulkFile
    edges: dict[tuple[str, str, str], _BulkFile]  # (label, from type, to type)
    counts: dict[str, int]
    facets: _BulkFile | None = None  # the SubjectFacet rows (a subject and predicate each)

    def discard(self) -> None:
        for f in [self.subjects, *self.edges.values(), *([self.facets] if self.facets else [])]:
            f.discard()
