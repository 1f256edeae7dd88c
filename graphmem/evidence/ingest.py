"""``ingest``: evidence records from JSONL, fail-open and idempotent (SPEC 7).

``ingest`` receives the store, typed by the record methods it calls (``RecordStore``)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from graphmem.errors import BadInput, GraphmemError
from graphmem.evidence.records import MAX_CHARS, parse_record
from graphmem.model.jsonio import loads
from graphmem.model.progress import EVERY, Progress, no_progress
from graphmem.model.records import Record
from graphmem.model.times import now_us

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

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schema": "graphmem.ingest.v1", "ok": not self.errors, "lines": self.lines,
                               "stored": len(self.stored), "records": list(self.stored[:1000]),
                               "records_truncated_list": len(self.stored) > 1000, "duplicates": self.duplicates,
                               "errors": [{"line": n, "reason": r} for n, r in self.errors],
                               "redactions": dict(sorted(self.redactions.items())), "truncated": self.truncated,
                               "seconds": round(self.seconds, 3)}
        if self.extraction is not None:
            doc["extraction"] = self.extraction.to_dict()
        return doc


def _raw_lines(source: str | Path | IO[bytes] | Iterable[bytes], progress: Progress = no_progress) -> Iterable[bytes]:
    if isinstance(source, str | Path):
        try:
            with Path(source).open("rb") as f:
                if progress is no_progress:
                    yield from f
                    return
                size, task = os.fstat(f.fileno()).st_size, f"reading {Path(source).name}"
                for n, raw in enumerate(f):
                    if not n % EVERY:
                        progress(task, f.tell(), size)
                    yield raw
        except OSError as e:
            raise BadInput(f"cannot read records file {str(source)!r}: {e.strerror}") from None
    else:
        yield from source


def ingest(store: RecordStore, source: str | Path | IO[bytes] | Iterable[bytes], *, redact: bool = True,
           max_chars: int = MAX_CHARS, progress: Progress = no_progress) -> IngestReport:
    """Store every good line as a record; report bad lines; add nothing twice; ``progress`` hears how far
    it has got."""
    t0 = time.perf_counter()
    now = now_us()
    parsed: list[Record] = []
    errors: list[tuple[int, str]] = []
    n = 0
    for lineno, raw in enumerate(_raw_lines(source, progress), 1):
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        if not raw.strip():
            continue
        n += 1
        try:
            if len(raw) > MAX_LINE_BYTES:
                raise BadInput(f"line of {len(raw)} bytes is longer than the {MAX_LINE_BYTES} allowed")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise BadInput(f"not valid UTF-8 (byte {e.start})") from None
            try:
                obj = loads(text)
            except json.JSONDecodeError as e:
                raise BadInput(f"not valid JSON ({e.msg} at column {e.colno})") from None
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
    progress("writing records and their index", 0, None)
    with store.transaction():
        store.add_records(fresh)
    return IngestReport(n, tuple(r.ref for r in fresh), duplicates, tuple(errors), redactions,
                        sum(r.truncated for r in fresh), time.perf_counter() - t0)
