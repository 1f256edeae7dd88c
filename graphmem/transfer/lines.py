"""The lines of an import file: read as text, and the parts of a line checked before its op's own checks
(a record line of an export, mentions, string lists, a statement's declared id)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphmem.errors import BadInput
from graphmem.evidence.records import parse_record
from graphmem.model.progress import EVERY, Progress, no_progress
from graphmem.model.records import Record
from graphmem.model.text import clean
from graphmem.write.inputs import parse_fact_ref


def decode(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "\x00not-utf8"


def file_lines(source: str | Path | Iterable[str] | Iterable[bytes], progress: Progress = no_progress) -> Iterator[str]:
    """Lines as text; a line that is not UTF-8 becomes a marker reported as bad input. ``progress`` hears
    of the bytes read of a file."""
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            with path.open("rb") as f:
                if progress is no_progress:
                    for raw in f:
                        yield decode(raw)
                    return
                size = os.fstat(f.fileno()).st_size
                for n, raw in enumerate(f):
                    if not n % EVERY:
                        progress(f"reading {path.name}", f.tell(), size)
                    yield decode(raw)
        except OSError as e:
            raise BadInput(f"cannot read import file {str(path)!r}: {e.strerror}") from None
    else:
        item: str | bytes
        for item in source:
            yield decode(item)


def record_line(obj: dict[str, Any], now: int) -> Record:
    """A ``record`` line of an export: stored as written (it was bounded when first ingested), under the
    same text rule as every write: what an export carries was redacted already and stays as it is."""
    rec = parse_record(obj, now=now, max_chars=10**9)
    key = obj.get("key")
    if key is not None and not isinstance(key, str):
        raise BadInput(f"bad key {key!r}: expected a string")
    fields: dict[str, Any] = {"key": clean(key, "key") if key else rec.key}
    for name, kind in (("original_sha256", str), ("original_chars", int), ("truncated", bool), ("redactions", dict)):
        if obj.get(name) is not None:
            if not isinstance(obj[name], kind):
                raise BadInput(f"bad {name} {obj[name]!r}: expected {kind.__name__}")
            fields[name] = obj[name]
    if rec.redactions:  # secrets the line still held are redacted now, and counted with the ones before
        fields["redactions"] = {k: fields.get("redactions", {}).get(k, 0) + rec.redactions.get(k, 0)
                                for k in sorted({*fields.get("redactions", {}), *rec.redactions})}
    return replace(rec, **fields)


def mention_list(obj: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    raw = obj.get("mentions") or []
    ok = isinstance(raw, list) and all(
        isinstance(x, list) and len(x) == 4 and isinstance(x[0], str) and isinstance(x[1], int)
        and isinstance(x[2], int) and isinstance(x[3], str) for x in raw)
    if not ok:
        raise BadInput(f"bad mentions {raw!r}: expected a list of [entity ref, start, end, rule]")
    return [(x[0], x[1], x[2], x[3]) for x in raw]



def str_list(obj: dict[str, Any], key: str) -> list[str]:
    v = obj.get(key) or []
    if not isinstance(v, list):
        raise BadInput(f"bad {key} {v!r}: expected a list of strings")
    return v


def declared_id(declared: object) -> int | None:
    """The id a statement line carries (``"id": "fact:N"``), if it is one."""
    if isinstance(declared, str):
        try:
            return parse_fact_ref(declared)
        except BadInput:
            return None
    return None


def counted(lines: list[str], progress: Progress) -> Iterator[tuple[int, str]]:
    """The lines numbered from 1, ``progress`` told every few thousand."""
    if progress is no_progress:
        yield from enumerate(lines, 1)
        return
    for n, line in enumerate(lines, 1):
        if n % EVERY == 1:
            progress("checking lines", n - 1, len(lines))
        yield n, line


# A line holding one of these is read in order, by this process: an op other than assert or end is
# spelt with one of the first three, an escape could spell anything, and a record ref as a source
# may need a look in the store.
_SPECIAL = (b'"entity"', b'"record"', b'"retract"', b'"cite"', b"\\u", b"rec:")
_SPECIAL_RE = {p: re.compile(re.escape(p)) for p in _SPECIAL}  # (found faster than by ``mmap.find``)


def _plain_run_of(path: Path, min_bytes: int) -> tuple[int, int, int] | None:
    """The longest run of lines that hold none of ``_SPECIAL`` (so only assert and end lines, or
    bad ones), split in two halves at a line start: (start, middle, end) byte offsets, or None when
    the run is shorter than ``min_bytes``. Such lines change nothing another line reads but
    the fact ids, which follow from the line count, so their halves can be read at once."""
    import mmap
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            hits = []
            backslash = mm.find(b"\\") >= 0  # (one byte is found faster than two: most files hold no escape)
            for pattern in _SPECIAL:
                if pattern == b"\\u" and not backslash:
                    continue
                for m in _SPECIAL_RE[pattern].finditer(mm):  # (and any hit overlapping it: ``"cite"cite"``)
                    i = m.start()
                    while i >= 0:
                        hits.append(i)
                        i = mm.find(pattern, i + 1, i + 2 * len(pattern) - 1)
            hits.sort()
            bounds = [-1, *hits, size]
            a, b = max(zip(bounds, bounds[1:], strict=False), key=lambda p: p[1] - p[0])
            start = 0 if a < 0 else mm.find(b"\n", a) + 1  # the line after the hit at a
            end = size if b >= size else mm.rfind(b"\n", 0, b) + 1  # the start of the line of the hit at b
            if start <= 0 and a >= 0 or end - start < max(min_bytes, 2):
                return None
            middle = mm.find(b"\n", (start + end) // 2) + 1
            if not start < middle < end:
                return None
            return start, middle, end


def _span(path: Path, start: int, end: int, first_line: int,
          report: Callable[[int], None] | None = None) -> Iterator[tuple[int, str]]:
    """The numbered lines of a file that start at byte offsets in [start, end); ``report`` is handed the
    offset reached every few thousand lines."""
    with path.open("rb") as f:
        f.seek(start)
        pos = start
        for lineno, raw in enumerate(f, first_line):
            if pos >= end:
                return
            if report is not None and not (lineno - first_line) % EVERY:
                report(pos)
            pos += len(raw)
            yield lineno, decode(raw)


# a line that starts with white space (or holds nothing) may be blank: ``_count`` then looks at each line
# (one expression: Python's regular expressions find a literal first byte fast, faster than six ``in``)
_BLANK_START = re.compile(b"\n[\n \t\r\x0b\x0c]")


def _count(path: Path, start: int, end: int, nonblank: bool = False) -> tuple[int, int]:
    """The line breaks in [start, end) of a file (which starts and ends at line starts), and with
    ``nonblank`` the lines there that hold more than ASCII white space (else 0).

    Lines whose first byte is not white space are not blank: when no line of the range starts with
    white space or is empty (no line break followed by one), each line is counted without being cut out.
    """
    if nonblank:
        counted = _count_unless_blank(path, start, end)
        if counted is not None:
            return counted
    breaks = filled = 0
    rest = b""  # a line cut by the end of a block
    for block in _blocks(path, start, end):
        breaks += block.count(b"\n")
        if nonblank:
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            filled += sum(1 for line in lines if line.strip())
    return breaks, filled + (1 if rest.strip() else 0)


def _blocks(path: Path, start: int, end: int) -> Iterator[bytes]:
    """The bytes of ``path`` from ``start`` to ``end``, 16 MB at a time."""
    with path.open("rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            block = f.read(min(left, 16 * 2**20))
            if not block:
                return
            left -= len(block)
            yield block


def _count_unless_blank(path: Path, start: int, end: int) -> tuple[int, int] | None:
    """``_count(path, start, end, nonblank=True)`` when no line there starts with white space or is empty
    (each line is then filled), found by a few byte searches; None when some line might be blank."""
    breaks = 0
    last = b"\n"  # the byte before the range: it starts at a line start
    for block in _blocks(path, start, end):
        if last == b"\n" and block[:1].isspace() or _BLANK_START.search(block):
            return None
        breaks += block.count(b"\n")
        last = block[-1:]
    return breaks, breaks + (0 if last == b"\n" else 1)
