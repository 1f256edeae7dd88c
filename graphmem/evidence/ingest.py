"""``ingest``: evidence records from JSONL, Markdown or plain text, fail-open and idempotent (SPEC 7).

``ingest`` receives the store, typed by the record methods it calls (``RecordStore``). Which files
are read as text, and how they are cut into records, is ``textfiles``'s."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from graphmem.errors import BadInput, GraphmemError
from graphmem.evidence.records import MAX_CHARS, parse_record
from graphmem.evidence.textfiles import blocks, file_format, source_name
from graphmem.model.jsonio import loads
from graphmem.model.records import Record
from graphmem.model.times import format_instant, now_us

if TYPE_CHECKING:
    from graphmem.results import ExtractResult

MAX_LINE_BYTES = 4 * 1024 * 1024  # a longer line is reported, not parsed


class RecordStore(Protocol):
    """The store methods ingest calls: the records' idempotence keys and ids, and one write."""

    def all_record_keys(self) -> dict[str, int]: ...

    def record_ids_for_keys(self, keys: Iterable[str]) -> dict[str, int]: ...

    def next_record_id(self) -> int: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def add_records(self, records: list[Any]) -> None: ...


@dataclass(frozen=True)
class IngestReport:
    lines: int
    stored: tuple[str, ...]
    duplicates: int
    errors: tuple[tuple[int, str], ...]
    redactions: dict[str, int]
    truncated: int
    seconds: float
    extraction: ExtractResult | None = None  # with ingest(extract=True): what was extracted from the new records
    format: str = "jsonl"  # what the source was read as: jsonl, markdown or text

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schema": "graphmem.ingest.v1", "ok": not self.errors, "lines": self.lines,
                               "stored": len(self.stored), "records": list(self.stored[:1000]),
                               "records_truncated_list": len(self.stored) > 1000, "duplicates": self.duplicates,
                               "errors": [{"line": n, "reason": r} for n, r in self.errors],
                               "redactions": dict(sorted(self.redactions.items())), "truncated": self.truncated,
                               "seconds": round(self.seconds, 3), "format": self.format}
        if self.extraction is not None:
            doc["extraction"] = self.extraction.to_dict()
        return doc


def _raw_lines(source: str | Path | IO[bytes] | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(source, str | Path):
        try:
            with Path(source).open("rb") as f:
                yield from f
        except OSError as e:
            raise BadInput(f"cannot read records file {str(source)!r}: {e.strerror}") from None
    else:
        yield from source


def _json_lines(source: str | Path | IO[bytes] | Iterable[bytes]) -> Iterable[tuple[int, Any]]:
    """Each non-blank line's number and its JSON value, or the BadInput that says why it has none."""
    for lineno, raw in enumerate(_raw_lines(source), 1):
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        if not raw.strip():
            continue
        try:
            yield lineno, loads(_decoded(raw))
        except json.JSONDecodeError as e:
            yield lineno, BadInput(f"not valid JSON ({e.msg} at column {e.colno})")
        except BadInput as e:
            yield lineno, e


def _decoded(raw: bytes) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raise BadInput(f"line of {len(raw)} bytes is longer than the {MAX_LINE_BYTES} allowed")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"not valid UTF-8 (byte {e.start})") from None


def _text_lines(source: str | Path | IO[bytes] | Iterable[bytes], fmt: str,
                max_chars: int) -> tuple[list[tuple[int, Any]], int]:
    """A Markdown or text file's records as ingest lines, by the number of their first line, and the
    number of non-blank lines read; a line that cannot be read refuses the record it is in, named by
    its own number."""
    lines: list[str | None] = []
    bad: dict[int, str] = {}
    for lineno, raw in enumerate(_raw_lines(source), 1):
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        try:
            text = _decoded(raw).rstrip("\r\n")
            lines.append(text.removeprefix("\ufeff") if lineno == 1 else text)
        except BadInput as e:
            bad[lineno] = str(e)
            lines.append(None)
    name = source_name(source)
    ts = None
    if isinstance(source, str | Path):  # a file's records are dated by its last change
        try:
            ts = format_instant(int(Path(source).stat().st_mtime * 1_000_000))
        except OSError as e:
            raise BadInput(f"cannot read records file {str(source)!r}: {e.strerror}") from None
    out: list[tuple[int, Any]] = []
    for b in blocks(lines, fmt, max_chars):
        refused = [n for n in range(b.first, b.last + 1) if n in bad]
        out.extend((n, BadInput(f"{bad[n]}; lines {b.first}-{b.last} were not stored")) for n in refused)
        if not refused:
            out.append((b.first, b.line(name, fmt, ts)))
    return out, sum(1 for t in lines if t is None or t.strip())


def ingest(store: RecordStore, source: str | Path | IO[bytes] | Iterable[bytes], *, redact: bool = True,
           max_chars: int = MAX_CHARS, fmt: str = "auto") -> IngestReport:
    """Store every good line as a record; report bad lines; add nothing twice.

    ``fmt``: jsonl, markdown or text, or auto (a path's extension: ``textfiles.file_format``)."""
    t0 = time.perf_counter()
    now = now_us()
    form = file_format(source, fmt)
    parsed: list[Record] = []
    errors: list[tuple[int, str]] = []
    n = 0
    text_lines = 0
    if form == "jsonl":
        items: Iterable[tuple[int, Any]] = _json_lines(source)
    else:
        items, text_lines = _text_lines(source, form, max_chars)
    for lineno, obj in items:
        n += 1
        try:
            if isinstance(obj, GraphmemError):
                raise obj
            parsed.append(parse_record(obj, now=now, redact_secrets=redact, max_chars=max_chars))
        except GraphmemError as e:
            errors.append((lineno, str(e)))
    keys = [r.key for r in parsed]
    known = store.all_record_keys() if len(keys) > 2000 else store.record_ids_for_keys(keys)
    next_id = store.next_record_id()
    fresh: list[Record] = []
    seen: set[str] = set()
    duplicates = 0
    for r in parsed:
        if r.key in known or r.key in seen:
            duplicates += 1
            continue
        seen.add(r.key)
        fresh.append(replace(r, id=next_id))
        next_id += 1
    redactions: dict[str, int] = {}
    for r in fresh:
        for k, v in r.redactions.items():
            redactions[k] = redactions.get(k, 0) + v
    with store.transaction():
        store.add_records(fresh)
    return IngestReport(text_lines or n, tuple(r.ref for r in fresh), duplicates, tuple(sorted(errors)), redactions,
                        sum(r.truncated for r in fresh), time.perf_counter() - t0, format=form)
