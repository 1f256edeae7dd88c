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
from graphmem.evidence.textfiles import blocks, file_format, source_name
from graphmem.model.jsonio import loads
from graphmem.model.progress import EVERY, Progress, no_progress
from graphmem.model.records import Record
from graphmem.model.scopes import in_scopes, one_scope
from graphmem.model.times import format_instant, now_us
from graphmem.notebook import HtmlRepr, plural, rows_of

if TYPE_CHECKING:
    from graphmem.model.names import Name
    from graphmem.results import ExtractResult

MAX_LINE_BYTES = 4 * 1024 * 1024  # a longer line is reported, not parsed


class RecordStore(Protocol):
    """The store methods ingest calls: the records' idempotence keys and ids, and one write."""

    def all_record_keys(self) -> dict[str, int]: ...

    def record_ids_for_keys(self, keys: Iterable[str]) -> dict[str, int]: ...

    def next_record_id(self) -> int: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def add_records(self, records: list[Any], names: dict[int, list[str]] | None = None) -> None: ...

    def entity_count(self) -> int: ...

    def refs_named(self, key: str) -> list[str]: ...

    def all_names(self) -> dict[str, list[str]]: ...

    def replace_mentions(self, items: list[tuple[int, list[tuple[str, int, int, str]]]]) -> int: ...


NAME_RULE = "name"  # the rule of a MENTIONS edge ingest writes for a name an entity has
_NAME_LOOKUPS = 300  # more distinct names than this read the whole name index once
_FEW_NAMES = 8  # up to this many distinct names (a note) are looked up without counting the entities first


def name_links(store: RecordStore, found: list[tuple[int, list[Name]]]) -> list[tuple[int, list[tuple[str, int, int, str]]]]:
    """The MENTIONS of each record from its names (``model/names.py``) that name exactly one entity
    of the store (its name or an alias, any case, a possessive dropped): (record id, [(ref, span
    start, span end, rule)]). A name two entities share links to neither; extraction decides those.
    ``found``: each record's id and its names (``names``)."""
    keys = {n.key for _, ns in found for n in ns}
    if not keys or (len(keys) > _FEW_NAMES and store.entity_count() == 0):
        return []  # a few names are looked up at once: cheaper than counting the entities
    if len(keys) > _NAME_LOOKUPS:
        index = store.all_names()
        refs = {k: index.get(k, []) for k in keys}
    else:
        refs = {k: store.refs_named(k) for k in sorted(keys)}
    out = []
    for rid, ns in found:
        links = {}
        for n in ns:
            one = refs.get(n.key) or []
            if len(one) == 1 and one[0] not in links:
                links[one[0]] = (one[0], n.start, n.end, NAME_RULE)
        if links:
            out.append((rid, sorted(links.values(), key=lambda m: (m[1], m[0]))))
    return out


@dataclass(frozen=True, repr=False)
class IngestReport(HtmlRepr):
    """What ``ingest`` did: the refs ``stored``, ``duplicates`` skipped, bad lines (``errors``: line number and
    reason), secrets redacted by kind, texts ``truncated``.

    Attributes
    ----------
    lines, duplicates, truncated : int
        Lines read, records already stored, texts cut to the size limit.
    stored : tuple of str
        The ``rec:N`` refs stored.
    errors : tuple of (int, str)
        Each bad line's number and reason.
    redactions : dict of str to int
        Secrets redacted, by kind.
    seconds : float
        How long it took.
    extraction : ExtractResult or None
        With ``ingest(extract=True)``: what was extracted from the new records.
    format : str
        What the source was read as: ``jsonl``, ``markdown`` or ``text``.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> r = m.ingest([{"text": "Atlas stores its graph in Kuzu.", "ts": "2024-03-01"}, {"ts": "2024-03-02"}])
    >>> r.stored, r.lines, r.errors[0][0]
    (('rec:1',), 2, 2)
    >>> m.close()
    """

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

    def _summary(self) -> str:
        span = "" if not self.stored else f" ({self.stored[0]}{f' to {self.stored[-1]}' if len(self.stored) > 1 else ''})"
        return (f"{plural(self.lines, 'line')}: {len(self.stored):,} stored{span}, {plural(self.duplicates, 'duplicate')}, "
                f"{plural(len(self.errors), 'error')}")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return rows_of(self.errors, limit, lambda e: f"line {e[0]}: {e[1]}")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return ["line", "reason"], [[n, r] for n, r in self.errors]


Line = bytes | str | dict[str, Any]
Source = str | bytes | Path | dict[str, Any] | IO[bytes] | IO[str] | Iterable[Line]


def _raw_lines(source: Source, progress: Progress = no_progress) -> Iterable[Line]:
    """The lines of ``source`` (see ``ingest``), each JSON text or an already parsed record dict."""
    if isinstance(source, dict):
        yield source
    elif isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("{")):
        yield from source.splitlines()
    elif isinstance(source, str | Path):
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
            hint = "; a str is a JSONL file's path or records as JSON text ('{...}')" if isinstance(source, str) else ""
            raise BadInput(f"cannot read records file {str(source)!r}: {e.strerror}{hint}") from None
    else:
        yield from source


def _json_lines(source: Source, progress: Progress) -> Iterable[tuple[int, Any]]:
    """Each non-blank line's number and its JSON value (a dict given as such stays one), or the
    BadInput that says why it has none."""
    for lineno, raw in enumerate(_raw_lines(source, progress), 1):
        if isinstance(raw, dict):
            yield lineno, raw
            continue
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


def _text_lines(source: Source, fmt: str, max_chars: int, progress: Progress) -> tuple[list[tuple[int, Any]], int]:
    """A Markdown or text file's records as ingest lines, by the number of their first line, and the
    number of non-blank lines read; a line that cannot be read refuses the record it is in, named by
    its own number."""
    lines: list[str | None] = []
    bad: dict[int, str] = {}
    for lineno, raw in enumerate(_raw_lines(source, progress), 1):
        if isinstance(raw, dict):
            raise BadInput(f"a record given as a dict cannot be read as {fmt}: expected text lines")
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


def _is_json_text(source: Source) -> bool:
    return isinstance(source, dict | bytes) or (isinstance(source, str) and source.lstrip().startswith("{"))


def ingest(store: RecordStore, source: Source, *, redact: bool = True, max_chars: int = MAX_CHARS,
           fmt: str = "auto", progress: Progress = no_progress, scope: str | None = None,
           scopes: tuple[str, ...] | None = None) -> IngestReport:
    """Store every good line as a record; report bad lines; add nothing twice; ``progress`` hears how far
    it has got.

    ``source`` is a JSONL, Markdown or text file (a ``Path``, or a ``str`` that does not start with
    ``{``), JSONL text (a ``str`` starting with ``{``, or ``bytes``), one record as a dict, or an iterable
    or stream of lines (``bytes``, ``str`` or dicts). Lines are numbered from 1 in that order. ``fmt``:
    jsonl, markdown or text, or auto (a path's extension: ``textfiles.file_format``; JSONL otherwise).
    ``scope`` is the scope of the records that carry none; with ``scopes``, a record of another scope
    (or none) is a bad line (docs/scopes.md)."""
    scope = one_scope(scope)
    t0 = time.perf_counter()
    now = now_us()
    form = "jsonl" if fmt == "auto" and _is_json_text(source) else file_format(source, fmt)
    parsed: list[Record] = []
    errors: list[tuple[int, str]] = []
    n = 0
    text_lines = 0
    if form == "jsonl":
        items: Iterable[tuple[int, Any]] = _json_lines(source, progress)
    else:
        items, text_lines = _text_lines(source, form, max_chars, progress)
    for lineno, obj in items:
        n += 1
        try:
            if isinstance(obj, GraphmemError):
                raise obj
            if scope is not None and isinstance(obj, dict) and obj.get("scope") is None:
                obj = {**obj, "scope": scope}
            rec = parse_record(obj, now=now, redact_secrets=redact, max_chars=max_chars)
            if not in_scopes(rec.scope, scopes):
                raise BadInput(f"scope {rec.scope!r} is outside the scopes this write may use: expected one of "
                               f"{', '.join(scopes or ())}")
            parsed.append(rec)
        except GraphmemError as e:
            errors.append((lineno, str(e)))
    keys = [r.key for r in parsed]
    known = store.all_record_keys() if len(keys) > 2000 else store.record_ids_for_keys(keys)
    with store.transaction():  # the ids are read in the write's transaction (write/apply.py's Writer)
        fresh = _number_and_write(store, parsed, known, progress)
    redactions: dict[str, int] = {}
    for r in fresh:
        for k, v in r.redactions.items():
            redactions[k] = redactions.get(k, 0) + v
    return IngestReport(text_lines or n, tuple(r.ref for r in fresh), len(parsed) - len(fresh), tuple(sorted(errors)),
                        redactions, sum(r.truncated for r in fresh), time.perf_counter() - t0, format=form)


def _number_and_write(store: RecordStore, parsed: list[Record], known: dict[str, int],
                      progress: Progress) -> list[Record]:
    """The records not stored yet (by key; the first of repeats), numbered and written with their index and
    links, in the caller's transaction."""
    next_id = store.next_record_id()
    fresh: list[Record] = []
    seen: set[str] = set()
    for r in parsed:
        if r.key in known or r.key in seen:
            continue
        seen.add(r.key)
        fresh.append(replace(r, id=next_id))
        next_id += 1
    progress("writing records and their index", 0, None)
    from graphmem.model.names import names, terms_of
    found = [(r.id, names(r.text)) for r in fresh]  # once, for the links and the index
    links = name_links(store, found)  # read before the write: the names the store has now
    store.add_records(fresh, {rid: terms_of(ns) for rid, ns in found})
    if links:
        store.replace_mentions(links)
    return fresh
