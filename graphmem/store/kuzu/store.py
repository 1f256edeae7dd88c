"""The one module that speaks Cypher: graphmem's data in an embedded Kuzu database.

Tables (labels come from the validated ontology, never from user text):
- ``Meta``: schema version, the ontology and registry the store was built with, counters.
- one node table per entity type (``Project``, ``Tool``, ...), keyed by ref.
- ``Name``: lower-cased names and aliases to refs, for resolution.
- ``Assertion``: the append-only statements (the authority), keyed by INT64 id; its times
  are INT64 microseconds since 1970 (whole-store reads then skip converting them).
- ``Subject`` and one rel table per edge type: the materialized fact view. A
  subject's row holds its statements and intervals as compact JSON, so reading a
  subject's truth is one primary-key lookup; entity-valued intervals are also
  typed edges (``(p:Project)-[e:USES]->(t:Tool)``) with their interval and ids.

Kuzu trap (SPEC 12): a parameterized lookup on an INT64 key scans the table,
while string keys and integer literals use the index. Integer literals are only
ever produced by ``_int``, which accepts nothing but ints.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime
import json
import os
import tempfile
import threading
import warnings
import zlib
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import kuzu
import orjson

from graphmem.errors import StoreUnavailable
from graphmem.model import Entity, Interval, Statement, Value
from graphmem.model.text import check_text, find_bad_text
from graphmem.model.times import from_datetime
from graphmem.ontology.schema import RECORD_TYPE, Ontology, Registry

if TYPE_CHECKING:  # numpy loads with the first search or ingest, not with every command
    import numpy as np

    from graphmem.evidence.textindex import Postings

SCHEMA_VERSION = 3  # 2: records keyed by their "rec:N" ref, graphmem's own full-text index; 3: statement times as INT64 microseconds
DB_FILE = "graph.kuzu"
MIGRATION_MARK = "migrating.json"  # an upgrade of the layout is under way (graphmem/store/kuzu/migrations.py)
COMMIT_MARK = "commit-pending.json"  # a bulk write is between its commit and its checkpoint (Store.transaction)


def sync_dir(path: Path) -> None:
    """Make a file created or removed in ``path`` durable (the directory entry itself)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_mark(path: Path, doc: dict[str, Any]) -> None:
    """A small JSON file that must survive a crash once this returns (written aside, synced, renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(dumps(doc))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    sync_dir(path.parent)


def remove_mark(path: Path) -> None:
    """Remove a file written by ``write_mark``, durably (nothing when it is not there)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
        sync_dir(path.parent)


def open_database(path: Path, pool_bytes: int = 0) -> kuzu.Database:
    """The Kuzu database of the store at ``path``; a store another process holds, or one Kuzu cannot
    open, is StoreUnavailable naming the holder or the reason."""
    try:
        return kuzu.Database(str(path / DB_FILE), buffer_pool_size=pool_bytes)
    except RuntimeError as e:
        msg = str(e).splitlines()[0]
        if "lock" in msg.lower():
            from graphmem.config import server_holding
            holder = server_holding(path)
            raise StoreUnavailable(f"store {str(path)!r} is in use by "
                                   f"{holder or 'another process'} (Kuzu lets one process open it)") from None
        raise StoreUnavailable(f"store {str(path)!r} cannot be opened: {msg}") from None
    except OSError as e:
        raise StoreUnavailable(f"store {str(path)!r} cannot be opened: {e}") from None


def _int(n: int) -> str:
    """The audited way to put an integer into Cypher (see the module docstring)."""
    if type(n) is not int:  # noqa: E721  (bool is not an id)
        raise TypeError(f"expected int, got {type(n).__name__}")
    return str(n)


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


def _tsv(rows: list[list[Any]]) -> tuple[str, bool]:
    """Rows as tab-separated lines for COPY, and whether a value holds a line break.

    The fast form joins the values as they are; it is kept only when its tab and line counts
    show that no value holds a tab or line break, no value starts with a quote and none can be
    None (written as "", like a CSV writer does).
    """
    text = "\n".join(["\t".join(map(str, r)) for r in rows]) + "\n"
    tabs = sum(len(r) - 1 for r in rows)
    if (text.count("\t") == tabs and text.count("\n") == len(rows) and "\r" not in text
            and not text.startswith('"') and '\t"' not in text and '\n"' not in text and "None" not in text):
        return text, False
    text = "\n".join(["\t".join(map(_tsv_field, r)) for r in rows]) + "\n"
    return text, any(("\n" in v or "\r" in v) for r in rows for v in r if type(v) is str)


_CHUNK = 4096
_PK_PROBES = 2000  # primary-key lookups per table in a check (an even spread of a larger table's keys): a table a
# killed checkpoint left unsound misses 0.5-9% of its keys (measured), so 2,000 find it; 5,000 took 2 s at 100k
_REWRITE = "_rewrite"  # the suffix of a table's copy while a repair writes the table again
WAL_ROWS = 2000  # statements written row by row (logged, so a crash keeps or drops them with their transaction)
# A primary-key lookup query costs about what scanning this many node rows does (Kuzu 0.11, measured at 1M)
_LOOKUP_ROWS = 3000


class _BulkFile:
    """A temporary tab-separated file for COPY, written a chunk of rows at a time.

    A field is quoted only when it must be (a tab, a line break or a leading quote), which
    ``_tsv`` checks for a whole chunk at once: quoting every JSON column, as a CSV writer
    does, costs more than the load itself.
    """

    def __init__(self, tmpdir: Path, breaks: bool = False, keep: bool = False) -> None:
        tmpdir.mkdir(exist_ok=True)
        fd, self.name = tempfile.mkstemp(suffix=".csv", dir=tmpdir)
        self._f = os.fdopen(fd, "w", encoding="utf-8")
        self.rows = 0
        self.breaks = breaks
        self.keep = keep  # left in place on exit, for a load elsewhere (see ``discard``)

    def write(self, rows: list[list[Any]]) -> None:
        text, breaks = _tsv(rows)
        self._f.write(text)
        self.rows += len(rows)
        self.breaks = self.breaks or breaks

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
        return {"name": self.name, "rows": self.rows, "breaks": self.breaks, "keep": self.keep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._f = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  (closed by close or discard)

    def __enter__(self) -> _BulkFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()
        if not self.keep:
            os.unlink(self.name)


class FactEdge(NamedTuple):
    """A typed fact edge: the interval of an entity-valued predicate, from subject to object."""

    label: str
    src: str
    dst: str
    predicate: str
    valid_from: int
    valid_to: int | None
    assertions: tuple[int, ...]
    conflicts: tuple[int, ...] = ()


@dataclasses.dataclass
class ViewFiles:
    """The bulk files of (part of) the view, written by ``Store.write_view_files``."""

    subjects: _BulkFile
    edges: dict[tuple[str, str, str], _BulkFile]  # (label, from type, to type)
    counts: dict[str, int]

    def discard(self) -> None:
        for f in [self.subjects, *self.edges.values()]:
            f.discard()


@dataclasses.dataclass
class WriteUndo:
    """What one transaction added to or changed in the authority tables, so that a repair can take
    an interrupted bulk write back whole (``Store.roll_back``). Kept in memory as the write goes and
    written into the commit mark before its COMMIT: new rows are named by the first id or ref this
    write gave, changed rows by their value before the write."""

    facts_from: int | None = None  # the first fact id of this write (every id from it on is this write's)
    records_from: int | None = None  # the same for record ids
    entities: list[str] = dataclasses.field(default_factory=list)  # refs this write created
    entities_before: dict[str, list[Any]] = dataclasses.field(default_factory=dict)  # ref -> [aliases, description]
    retracted_before: dict[int, list[Any]] = dataclasses.field(default_factory=dict)  # fact id -> [at, reason]
    records_before: dict[int, list[Any]] = dataclasses.field(default_factory=dict)  # rec id -> [extracted_at, mentions]
    counters: dict[str, int] = dataclasses.field(default_factory=dict)  # next_fact, next_record at the commit

    def fact(self, fact_id: int) -> None:
        if self.facts_from is None or fact_id < self.facts_from:
            self.facts_from = fact_id

    def new_record(self, rec_id: int) -> bool:
        return self.records_from is not None and rec_id >= self.records_from

    def to_json(self) -> dict[str, Any]:
        return {"facts_from": self.facts_from, "records_from": self.records_from, "entities": self.entities,
                "entities_before": self.entities_before,
                "retracted_before": {str(k): v for k, v in self.retracted_before.items()},
                "records_before": {str(k): v for k, v in self.records_before.items()}, "counters": self.counters}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> WriteUndo:
        return cls(doc.get("facts_from"), doc.get("records_from"), list(doc.get("entities") or []),
                   dict(doc.get("entities_before") or {}),
                   {int(k): v for k, v in (doc.get("retracted_before") or {}).items()},
                   {int(k): v for k, v in (doc.get("records_before") or {}).items()}, dict(doc.get("counters") or {}))


_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)


def _sources_json(sources: tuple[str, ...]) -> str:
    """A source list as JSON; one plain source (most statements) skips the JSON encoder."""
    if not sources:
        return "[]"
    if len(sources) == 1:
        src = sources[0]
        if '"' not in src and "\\" not in src and src.isprintable():
            return '["' + src + '"]'
    return dumps(list(sources))


def _sources(text: str | None) -> tuple[str, ...]:
    """A stored source list; no sources or one plain source (most statements) skip the JSON parser."""
    if not text or text == "[]":
        return ()
    if text.count('"') == 2 and text.startswith('["') and text.endswith('"]') and "\\" not in text:
        return (text[2:-2],)
    return tuple(loads(text))


def _ts(us: int | None) -> str:
    """An instant as Kuzu TIMESTAMP text for CSV bulk loads (the C isoformat: a hot path)."""
    if us is None:
        return ""
    return (_EPOCH_NAIVE + datetime.timedelta(microseconds=us)).isoformat(" ")


def kuzu_time_text(us: int) -> str:
    """An instant as Kuzu casts a TIMESTAMP to STRING: ``_ts``, with the fraction's trailing zeros
    dropped (``2021-01-09 00:00:00.5``)."""
    text = _ts(us)
    return text.rstrip("0") if "." in text else text


def _ts_param(us: int | None) -> Any:
    from graphmem.model.times import to_datetime
    return to_datetime(us)


def _object(text: str, otype: str) -> tuple[Value | None, str]:
    """A stored object and its ``object_type`` back as the statement's value and kind."""
    if otype == "entity":
        return text, "entity"
    if otype:
        return decode_literal(text, otype), "literal"
    return None, ""


def encode_literal(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def decode_literal(text: str, literal_type: str) -> Value:
    if literal_type == "int":
        return int(text)
    if literal_type == "float":
        return float(text)
    if literal_type == "bool":
        return text == "true"
    return text


# Compact JSON rows of the Subject table -------------------------------------------

def _stmt_row(s: Statement) -> tuple[Any, ...]:
    """A statement as a row of its subject's log: without its subject and its object's name
    (id, op, predicate, object, kind, from, to, recorded, retracted, reason, sources, by, trust)."""
    return s[:2] + s[3:14]


def _stmt_from_row(subject: str, r: list[Any], name_of: Any) -> Statement:
    """A log row back as a statement; ``name_of(ref)`` names entity objects. Rows written before the
    log dropped names carry the name as a 14th item."""
    name = (r[13] if len(r) > 13 else name_of(r[3])) if r[4] == "entity" else None
    return Statement(r[0], r[1], subject, r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], tuple(r[10] or ()),
                     r[11], r[12], name)


def statements_from_log(subject: str, text: str, name_of: Any) -> tuple[list[Statement], bool]:
    """A log as read by ``Store.subject_logs`` (or stored), and whether its rows came in id order.
    (A hot path of rebuild and lint: a million rows, each made into a statement without ``_make``.)"""
    new = tuple.__new__
    out: list[Statement] = []
    append = out.append
    last = -1
    ordered = True
    for r in loads(text):
        if len(r) != 13:
            append(_stmt_from_row(subject, r, name_of))
            ordered = False  # an older row form: rewritten by the next rebuild
            continue
        i, op, pred, obj, kind, vf, vt, rec, retr, reason, srcs, by, trust = r
        if i <= last:
            ordered = False
        last = i
        append(new(Statement, (i, op, subject, pred, obj, kind, vf, vt, rec, retr, reason,
                               tuple(srcs) if srcs else (), by, trust,
                               name_of(obj) if kind == "entity" else None)))
    if not ordered:
        out.sort()
    return out, ordered


_PACK_MIN = 256  # shorter texts are stored as they are


def pack(text: str) -> str:
    """A subject's log as stored: JSON, or above ``_PACK_MIN`` characters its zlib compression in
    base64 (a quarter of the size: at 1M statements the logs shrink from 150 MB to about 45 MB, which
    loads, commits and checkpoints faster and in less memory). Views stay JSON: ``current`` reads
    them on its hot path, and a rebuild compares them without unpacking."""
    if len(text) < _PACK_MIN:
        return text
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 1)).decode("ascii")


def unpack(stored: str | None) -> str:
    """The JSON text of a stored log (JSON starts with "[", base64 never does)."""
    if not stored:
        return "[]"
    if stored[0] == "[":
        return stored
    return zlib.decompress(base64.b64decode(stored)).decode("utf-8")


def view_text(view: list[Interval]) -> str:
    """A subject's intervals in their stored form (orjson: the view is written once per subject on every
    bulk path). Floats may be spelt otherwise than by the standard encoder (``1e-5`` for ``1e-05``), so
    two views are the same when ``same_view`` says so, not only when their texts are equal."""
    try:
        return orjson.dumps([_iv_row(iv) for iv in view]).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits, a lone surrogate
        return dumps([_iv_row(iv) for iv in view])


def same_view(stored: str | None, text: str) -> bool:
    """Whether a stored view holds what ``text`` (a ``view_text``) holds."""
    if stored == text:
        return True
    if not stored:
        return False
    try:
        return bool(loads(stored) == loads(text))
    except ValueError:
        return False


def decode_log(subject: str, text: str, name_of: Any) -> tuple[list[Statement], str]:
    """A log as read by ``Store.subject_logs``, and its stored form: the same text when its rows came
    in id order, else the statements written again in id order."""
    log, ordered = statements_from_log(subject, text, name_of)
    return log, text if ordered else log_text(log)


def log_text(log: list[Statement]) -> str:
    """A subject's log in its stored form (the form ``Store.subject_logs`` reads from Kuzu)."""
    return dumps([_stmt_row(s) for s in log])


def _iv_row(iv: Interval) -> tuple[Any, ...]:
    """An interval without its subject (predicate, object, kind, from, to, assertions, sources, conflicts, name)."""
    return iv[1:]


def _iv_from_row(subject: str, r: list[Any]) -> Interval:
    return Interval(subject, r[0], r[1], r[2], r[3], r[4], tuple(r[5]), tuple(r[6]), tuple(r[7]), r[8])


def _int_list(ids: tuple[int, ...]) -> str:
    """A list of ids as JSON (the form COPY reads for INT64[]), without the JSON encoder (most lists
    of an interval hold one id or none)."""
    if len(ids) == 1:
        return f"[{ids[0]}]"
    return "[" + ",".join(map(str, ids)) + "]" if ids else "[]"


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def loads(text: str | bytes) -> Any:
    """JSON read by orjson (about six times faster than the standard parser on the bulk paths);
    what orjson refuses (NaN, integers beyond 64 bits, lone surrogates) goes to the standard parser,
    which accepts it or raises its own ``json.JSONDecodeError``, so results and errors are the standard ones."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            return json.loads(text)
        except RecursionError:  # deeper than the standard parser goes (orjson stops at 1024 levels)
            doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
            raise json.JSONDecodeError("nested too deeply", doc, 0) from None


_SUBJECT_DDL = "CREATE NODE TABLE Subject(ref STRING PRIMARY KEY, name STRING, log STRING, view STRING)"
_RECORD_DDL = (
    "CREATE NODE TABLE Record(ref STRING PRIMARY KEY, id INT64, key STRING, ts TIMESTAMP, kind STRING, source STRING, "
    "scope STRING, importance DOUBLE, meta STRING, text STRING, original_sha256 STRING, original_chars INT64, "
    "truncated BOOLEAN, redactions STRING, ingested_at TIMESTAMP, extracted_at TIMESTAMP)")
_NAME_DDL = "CREATE NODE TABLE Name(key STRING PRIMARY KEY, refs STRING)"
_RECORD_KEY_DDL = "CREATE NODE TABLE RecordKey(key STRING PRIMARY KEY, id INT64)"
_INDEX_DDL = ("CREATE NODE TABLE Term(term STRING PRIMARY KEY, blocks STRING)",
              "CREATE NODE TABLE Posting(key STRING PRIMARY KEY, data STRING)")
_INDEX_BATCH = 50_000  # records indexed at once when the whole index is made again
_POSTINGS_HELD_MAX = 8_000_000  # decoded postings kept in memory (8 bytes each)
_SET_META = "MERGE (m:Meta {key: $k}) SET m.value = $v"
_TERM = "MATCH (t:Term {term: $t}) RETURN t.blocks"
_POSTING = "MATCH (p:Posting {key: $k}) RETURN p.data"
_INDEX_WRITES = {
    "Term": ("CREATE (:Term {term: $k, blocks: $v})", "MATCH (x:Term {term: $k}) SET x.blocks = $v"),
    "Posting": ("CREATE (:Posting {key: $k, data: $v})", "MATCH (x:Posting {key: $k}) SET x.data = $v"),
}
_POSTING_DROP = "MATCH (p:Posting {key: $k}) DELETE p"
_RCOLS = ("r.id, r.key, r.text, r.ts, r.kind, r.source, r.scope, r.importance, r.meta, r.original_sha256, "
          "r.original_chars, r.truncated, r.redactions, r.ingested_at")
_RECORD = f"MATCH (r:Record {{ref: $r}}) RETURN {_RCOLS}"
_RECORD_HIT = "MATCH (r:Record {ref: $r}) RETURN r.text, r.ts, r.kind, r.source, r.scope, r.importance"
_RECORD_KEY = "MATCH (k:RecordKey {key: $k}) RETURN k.id"
_SUBJECT_VIEW = "MATCH (s:Subject {ref: $r}) RETURN s.name, s.view"
_SUBJECT_LOG_VIEW = "MATCH (s:Subject {ref: $r}) RETURN s.name, s.log, s.view"
_NAME = "MATCH (n:Name {key: $k}) RETURN n.refs"


def _json_int(col: str) -> str:
    return f"coalesce(CAST({col} AS STRING), 'null')"


# A statement as its log row (see _stmt_row), written as JSON text by Kuzu. Text is concatenated rather
# than built with to_json per item (which took twice as long: 3 s against 1.4 s at 1M). Free text goes
# through to_json; op, asserted_by and trust come from closed sets that never need escaping; int, float and
# bool objects are stored as Python writes them (str of the value, "true"/"false"), which is their JSON.
# (No CAST to a number: Kuzu evaluates a CASE branch on every row, and a cast of other rows' text fails.)
_LOG_ROW = ("concat('[', CAST(a.id AS STRING), ',\"', a.op, '\",', CAST(to_json(a.predicate) AS STRING), ',', "
            "coalesce(CASE WHEN a.object_type IN ['int', 'float', 'bool'] THEN a.object "
            "ELSE CAST(to_json(a.object) AS STRING) END, 'null'), "
            "CASE WHEN a.object_type = 'entity' THEN ',\"entity\",' "
            "WHEN a.object_type IS NULL OR a.object_type = '' THEN ',\"\",' ELSE ',\"literal\",' END, "
            f"{_json_int('a.valid_from')}, ',', {_json_int('a.valid_to')}, ',', {_json_int('a.recorded_at')}, ',', "
            f"{_json_int('a.retracted_at')}, ',', coalesce(CAST(to_json(a.retract_reason) AS STRING), 'null'), ',', "
            "a.sources, ',\"', a.asserted_by, '\",\"', a.trust, '\"]')")


class StatementFile:
    """Statements written to bulk files as they come, then loaded into ``Assertion`` in one COPY."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._done: list[_BulkFile] = []  # files before the current one, in id order
        self._bulk = _BulkFile(store.path / "tmp")
        self._pending: list[list[Any]] = []
        self._otypes: dict[tuple[str, str], str] = {}
        self._first: int | None = None  # ids rise: the first is this write's lowest

    def add(self, s: Statement) -> None:
        if self._first is None:
            self._first = s.id
            self._store._undo.fact(s.id)
        obj = "" if s.object is None else (s.object if s.object_kind == "entity" else encode_literal(s.object))
        otype = self._otypes.get((s.predicate, s.object_kind))
        if otype is None:
            otype = self._otypes[(s.predicate, s.object_kind)] = self._store._object_type(s) or ""
        vt, retracted = s.valid_to, s.retracted_at
        self._pending.append([s.id, s.op, s.subject, s.predicate, obj, otype, s.valid_from, "" if vt is None else vt,
                              s.recorded_at, "" if retracted is None else retracted, s.retract_reason or "",
                              _sources_json(s.sources), s.asserted_by, s.trust])
        if len(self._pending) == _CHUNK:
            self._bulk.write(self._pending)
            self._pending = []

    def finish(self) -> _BulkFile:
        """Write what is pending and close: the file, to hand to another process's ``adopt``."""
        if self._pending:
            self._bulk.write(self._pending)
            self._pending = []
        self._bulk.close()
        return self._bulk

    def adopt(self, other: _BulkFile) -> None:
        """Take a file of statements another process wrote; they come after this file's statements."""
        self._done += [self.finish(), other]
        self._bulk = _BulkFile(self._store.path / "tmp")

    def statements(self, subjects: Container[str], retractions: dict[int, tuple[int, str | None]],
                   name_of: Callable[[str], str | None]) -> Iterator[Statement]:
        """The statements of ``subjects`` read back from the files (after ``finish``), in id order, with
        ``retractions`` (fact id -> when, reason) applied and entity objects named by ``name_of``: a
        large import computes its view from them instead of reading the rows back from Kuzu. Pure
        Python over closed files, so forked children can read them."""
        import csv  # only large imports read bulk files back

        if self._pending or not self._bulk.closed:
            raise RuntimeError("StatementFile.statements() needs finish() first")
        new = tuple.__new__
        for f in [*self._done, self._bulk]:
            with open(f.name, newline="", encoding="utf-8") as fh:
                if f.breaks:  # a value holds a line break: rows are not lines
                    rows: Iterable[list[str]] = (r for r in csv.reader(fh, delimiter="\t", strict=True)
                                                 if r[2] in subjects)
                else:  # a row is a line; its first three fields (id, op, subject) are never quoted, and a
                    # field is quoted only when it starts with a quote (``_tsv_field``)
                    rows = (line.rstrip("\n").split("\t") if '\t"' not in line else
                            next(csv.reader([line], delimiter="\t", strict=True))
                            for line in fh if line.split("\t", 3)[2] in subjects)
                for fid, op, subject, predicate, obj, otype, vf, vt, rec, retr, reason, sources, by, trust in rows:
                    value, kind = _object(obj, otype)
                    name = name_of(obj) if kind == "entity" else None
                    i = int(fid)
                    retracted = retractions.get(i)
                    at, why = retracted if retracted else (int(retr) if retr else None, reason or None)
                    yield new(Statement, (i, op, subject, predicate, value, kind, int(vf), int(vt) if vt else None,
                                          int(rec), at, why, _sources(sources), by, trust, name))

    def load(self) -> int:
        """COPY the statements (in the caller's transaction) and remove the files; the row count."""
        files = [*self._done, self.finish()]
        try:
            self._store._load(files, "Assertion")
            return sum(f.rows for f in files)
        finally:
            self.discard()

    def discard(self) -> None:
        for f in [*self._done, self._bulk]:
            f.discard()


class Store:
    """An open graphmem store: one Kuzu database in ``path/graph.kuzu``."""

    _HOT = frozenset({_SET_META, _SUBJECT_VIEW, _SUBJECT_LOG_VIEW, _NAME, _RECORD_KEY, _RECORD, _RECORD_HIT, _TERM, _POSTING,
                      _POSTING_DROP, *(q for pair in _INDEX_WRITES.values() for q in pair)})

    def __init__(self, path: Path, ontology: Ontology, registry: Registry, *, create: bool = True,
                 buffer_pool_mb: int | None = None, repair: bool = False) -> None:
        """``repair`` opens a store that holds the mark of an interrupted migration or bulk commit
        (``migrate`` and ``rebuild`` do, to make it whole); anything else refuses it."""
        self.path = Path(path)
        self._undo = WriteUndo()  # what the transaction under way added or changed (roll_back)
        self.ontology = ontology
        self.registry = registry
        db_path = self.path / DB_FILE
        if not db_path.exists() and not create:
            raise StoreUnavailable(f"no store at {str(self.path)!r}; run 'graphmem init' (or 'graphmem demo') first")
        if self.path.exists() and not self.path.is_dir():
            raise StoreUnavailable(f"store path {str(self.path)!r} is a file; expected a directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreUnavailable(f"store {str(self.path)!r} cannot be opened: {e}") from None
        # Kuzu's default pool is 80% of RAM, and setting it up costs about 1.3 ms per GiB at open
        self._db = open_database(self.path, 0 if buffer_pool_mb is None else buffer_pool_mb * 2**20)
        self._main: tuple[Any, dict[str, Any]] = (kuzu.Connection(self._db), {})  # a connection and its prepared plans
        self._in_tx = False
        self._bulk_written = False
        self._threads: threading.local | None = None  # set by per_thread_connections()
        self._plan_generation = 0  # bumped when tables are recreated: every connection's plans are stale
        self._all_conns: list[Any] = []
        self._node_refs: dict[int, list[str]] = {}  # entity table id -> ref by node offset (see _ref_of)
        self._node_refs_by_type: dict[str, list[str]] = {}
        self._pairs: set[tuple[str, str, str]] | None = None  # (edge label, from type, to type) with an edge
        self.entity_writes = 0  # entities written through this object (what caches of entities key on)
        # decoded postings by term, with the block sizes they were read at; a write drops what it touches
        self._postings: dict[str, tuple[str, Postings, tuple[int, int], np.ndarray]] = {}
        self._postings_held = 0
        self._index_stats: tuple[int, int] | None = None
        self._edge_labels: dict[tuple[str, str, str], str | None] = {}  # (subject type, predicate, object prefix)
        self._time_texts: dict[int, str] = {}  # instant -> its Kuzu TIMESTAMP text (edge keys; times repeat)
        self._clear_bulk_files()
        if not repair:
            self._refuse_interrupted()
        self._repairing = self.interrupted_commit()  # the mark stays until the repair is done (clear_commit_mark)
        self._ensure_schema()

    def _refuse_interrupted(self) -> None:
        """Refuse a store whose migration or bulk commit was cut short (see ``repair``)."""
        where = f"--store {self.path} "
        if (self.path / MIGRATION_MARK).exists():
            raise StoreUnavailable(f"store {str(self.path)!r}: an upgrade of its layout was interrupted; "
                                   f"run 'graphmem {where}migrate' to finish it")
        if (self.path / COMMIT_MARK).exists():
            raise StoreUnavailable(
                f"store {str(self.path)!r}: a bulk write was interrupted while it was being committed, and part of "
                f"it may be missing; run 'graphmem {where}rebuild' to check and repair the store, then repeat the write")

    def _mark_commit(self) -> None:
        """Say on disk that a bulk write is committing: Kuzu 0.11 writes COPY's rows to the database file
        only at the checkpoint after the commit, outside its log, so a kill in between can lose some tables
        of a committed transaction and keep others. The mark is removed once the checkpoint is done."""
        self._undo.counters = {"next_fact": self.next_fact_id(), "next_record": self.next_record_id()}
        write_mark(self.path / COMMIT_MARK, {"pid": os.getpid(), "at": datetime.datetime.now(datetime.UTC).isoformat(),
                                             "undo": self._undo.to_json()})

    def clear_commit_mark(self) -> None:
        self._repairing = False
        remove_mark(self.path / COMMIT_MARK)

    def interrupted_commit(self) -> bool:
        """Whether the store holds the mark of a bulk commit that did not reach its checkpoint."""
        return (self.path / COMMIT_MARK).exists()

    def interrupted_write(self) -> WriteUndo | None:
        """What the interrupted bulk write added and changed, from its mark (None: a mark written by
        a graphmem that did not record it, or no mark)."""
        try:
            doc = json.loads((self.path / COMMIT_MARK).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        undo = doc.get("undo") if isinstance(doc, dict) else None
        return WriteUndo.from_json(undo) if isinstance(undo, dict) else None

    def _clear_bulk_files(self) -> None:
        """Remove bulk files a killed or interrupted process left in ``tmp/``. Only the process that
        holds Kuzu's lock on the store writes there, and that is now this one."""
        tmp = self.path / "tmp"
        if tmp.is_dir():
            for f in tmp.glob("tmp*.csv"):
                with contextlib.suppress(OSError):
                    f.unlink()

    # plumbing -------------------------------------------------------------------

    def per_thread_connections(self) -> None:
        """From now on each thread gets its own Kuzu connection (and plans), so reads from several
        threads run at once (the service). The caller keeps writes exclusive: one at a time, and no
        read while one runs, since the in-process caches are not locked."""
        self._threads = threading.local()

    def _current(self) -> tuple[Any, dict[str, Any]]:
        if self._threads is None:
            return self._main
        mine: tuple[Any, dict[str, Any]] | None = getattr(self._threads, "conn", None)
        if mine is None:
            mine = self._threads.conn = (kuzu.Connection(self._db), {})
            self._all_conns.append(mine[0])
        return mine

    @property
    def _conn(self) -> Any:
        return self._current()[0]

    @property
    def _plans(self) -> dict[str, Any]:
        plans = self._current()[1]
        if plans.get("\0generation") != self._plan_generation:  # tables were recreated since these were made
            plans.clear()
            plans["\0generation"] = self._plan_generation
        return plans

    def close(self) -> None:
        with contextlib.suppress(Exception):
            for c in [*self._all_conns, self._main[0]]:
                c.close()
            self._db.close()

    def _prepared(self, query: str) -> Any:
        """Kuzu plans a parameterized query on every call; reads on the hot path reuse the plan."""
        ps = self._plans.get(query)
        if ps is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                ps = self._plans[query] = self._conn.prepare(query)
        return ps

    def _q(self, query: str, params: dict[str, Any] | None = None, hot: bool = False) -> list[list[Any]]:
        """Run one query; a ``hot`` one (or one of ``_HOT``) reuses its plan."""
        try:
            if params and (hot or query in self._HOT):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    result = self._conn.execute(self._prepared(query), params)
            else:
                result = self._conn.execute(query, params or {})
        except RuntimeError as e:
            self._refuse_bad_text(params)
            raise StoreUnavailable(f"store {str(self.path)!r}: database error: {str(e).splitlines()[0]}") from None
        assert not isinstance(result, list)
        rows: list[list[Any]] = result.get_all()
        return rows

    def _iter(self, query: str, params: dict[str, Any] | None = None, conn: kuzu.Connection | None = None) -> Iterator[
            list[Any]]:
        """Stream the rows of a large result instead of materializing them all, read from Kuzu's
        result object directly (the Python wrapper's checks on each row cost a third of the read)."""
        try:
            result = (conn or self._conn).execute(query, params or {})
            assert not isinstance(result, list)
            raw = getattr(result, "_query_result", None)
            if raw is None:
                yield from result  # type: ignore[misc]
                return
            has_next, get_next = raw.hasNext, raw.getNext
            while has_next():
                yield get_next()
        except RuntimeError as e:
            self._refuse_bad_text(params)
            raise StoreUnavailable(f"store {str(self.path)!r}: database error: {str(e).splitlines()[0]}") from None

    @staticmethod
    def _refuse_bad_text(params: dict[str, Any] | None) -> None:
        """Kuzu cannot take text that is not valid Unicode (a lone surrogate, say from an undecodable
        byte of a command-line argument): that is bad input, named as such, not a database error."""
        bad = find_bad_text(list((params or {}).values()))
        if bad is not None:
            check_text(bad, "text")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside happen together or not at all."""
        if self._in_tx:
            yield
            return
        self._q("BEGIN TRANSACTION")
        self._in_tx = True
        self._undo = WriteUndo()
        try:
            yield
        except BaseException:
            self._in_tx = False
            self._bulk_written = False  # the rollback's own checkpoint follows
            with contextlib.suppress(Exception):
                self._conn.execute("ROLLBACK")
            # Kuzu 0.11.3 keeps version marks of rolled-back updates, and the next update of the same row
            # then fails with a write-write conflict (or crashes); a checkpoint clears them
            with contextlib.suppress(Exception):
                self._conn.execute("CHECKPOINT")
            self.forget_postings()
            self._index_stats = None
            raise
        self._in_tx = False
        if not self._bulk_written:
            self._q("COMMIT")
            return
        # rows bulk-loaded by COPY reach the database file only at a checkpoint (and are read much slower
        # until then: search at 100k records, 6.6 ms p50 before, 4.2 ms after); Kuzu does not run one on its own
        self._bulk_written = False
        if self._repairing:  # the store already carries the mark; only the finished repair removes it
            self._q("COMMIT")
            self._q("CHECKPOINT")
            return
        self._mark_commit()
        self._q("COMMIT")
        self._q("CHECKPOINT")
        self.clear_commit_mark()

    def _copy(self, table: str, rows: Iterable[list[Any]], options: str = "", multiline: bool | None = None) -> int:
        """Bulk-load rows through a temporary tab-separated file (Kuzu's fastest path).

        Values are written as ``str(v)``; ``""`` loads as NULL. ``multiline`` says a value may
        hold a line break (None: find out); such files are read serially.
        """
        with _BulkFile(self.path / "tmp", bool(multiline)) as bulk:
            for chunk in _chunks(rows, _CHUNK):
                bulk.write(chunk)
            self._load(bulk, table, options)
            return bulk.rows

    def _load(self, bulk: _BulkFile | list[_BulkFile], table: str, options: str = "") -> None:
        """COPY one or more bulk files into ``table``: one COPY per table, as a second COPY into a
        table loaded in the same transaction makes the commit many times slower (54 s at 1M)."""
        files = bulk if isinstance(bulk, list) else [bulk]
        for f in files:
            f.close()
        files = [f for f in files if f.rows]
        if files:
            self._bulk_written = True
            # explicit dialect: Kuzu's sniffer guesses from the first lines and can miss later quotes;
            # Kuzu's parallel reader cannot split quoted newlines, so those files are read serially
            opts = "HEADER=false, AUTO_DETECT=false, DELIM='\t', QUOTE='\"', ESCAPE='\"'" + (
                ", PARALLEL=false" if any(f.breaks for f in files) else "") + (", " + options if options else "")
            names = ", ".join(f"'{f.name}'" for f in files)
            self._q(f"COPY {table} FROM [{names}] ({opts})")

    # schema and meta --------------------------------------------------------------

    def _tables(self) -> set[str]:
        return {r[0] for r in self._q("CALL show_tables() RETURN name")}

    def _ensure_schema(self) -> None:
        tables = self._tables()
        fresh = "Meta" not in tables
        if fresh:
            with self.transaction():
                self._q("CREATE NODE TABLE Meta(key STRING PRIMARY KEY, value STRING)")
                self._q(_NAME_DDL)
                self._q(
                    "CREATE NODE TABLE Assertion(id INT64 PRIMARY KEY, op STRING, subject STRING, "
                    "predicate STRING, object STRING, object_type STRING, valid_from INT64, "
                    "valid_to INT64, recorded_at INT64, retracted_at INT64, "
                    "retract_reason STRING, sources STRING, asserted_by STRING, trust STRING)"
                )
                self._q(_SUBJECT_DDL)
                self._q(_RECORD_DDL)
                self._q(_RECORD_KEY_DDL)
                for ddl in _INDEX_DDL:
                    self._q(ddl)
                self._set_meta("schema_version", str(SCHEMA_VERSION))
                self._set_meta("next_fact", "1")
                self._set_meta("next_record", "1")
                self._set_meta("ontology", dumps(self.ontology.fingerprint()))
                self._set_meta("registry", dumps(self.registry.fingerprint()))
            tables = self._tables()
        else:
            self._meta_cache = {k: v for k, v in self._q("MATCH (m:Meta) RETURN m.key, m.value")}
            version = self._meta_cache.get("schema_version")
            if version != str(SCHEMA_VERSION):
                if version is not None and version.isdigit() and int(version) < SCHEMA_VERSION:
                    raise StoreUnavailable(
                        f"store {str(self.path)!r} has layout {version}; this graphmem reads layout {SCHEMA_VERSION}: "
                        f"run 'graphmem --store {self.path} migrate' (it copies the store aside first)")
                raise StoreUnavailable(
                    f"store {str(self.path)!r} has layout {version}; this graphmem reads layout {SCHEMA_VERSION}: "
                    "upgrade graphmem to read it")
            recorded = self._check_compatible()
            self._meta_cache = {}
            added = {k: v for k, v in self.registry.fingerprint().items() if k not in recorded}
            if added:  # predicates new to this store are recorded, so a later change to one is caught
                with self.transaction():
                    self._set_meta("registry", dumps(recorded | added))
        self._create_type_tables(tables)

    def _check_compatible(self) -> dict[str, Any]:
        """Refuse an ontology or registry that contradicts the one the store was built with; the
        predicate signatures on record."""
        old_ont = json.loads(self._meta_cache.get("ontology") or "{}")
        new_ont = self.ontology.fingerprint()
        for t in old_ont.get("entity_types", []):
            if t not in new_ont["entity_types"]:
                raise StoreUnavailable(
                    f"store {str(self.path)!r} was built with entity type {t!r}, which the loaded ontology lacks; "
                    "load the ontology directory it was built with (--ontology)"
                )
        for e, pairs in old_ont.get("edge_types", {}).items():
            if e not in new_ont["edge_types"] or any(p not in new_ont["edge_types"][e] for p in pairs):
                raise StoreUnavailable(
                    f"store {str(self.path)!r} was built with edge type {e!r} and its pairs {pairs}, which the loaded "
                    "ontology does not keep; load the ontology directory it was built with (--ontology)"
                )
        old_reg: dict[str, Any] = json.loads(self._meta_cache.get("registry") or "{}")
        for name, sig in self.registry.fingerprint().items():
            if name in old_reg and old_reg[name] != sig:
                raise StoreUnavailable(
                    f"predicate {name!r} is defined differently (cardinality, object or edge) from the registry "
                    f"store {str(self.path)!r} was built with; load the predicates it was built with (--predicates)"
                )
        return old_reg

    def _create_type_tables(self, tables: set[str]) -> None:
        """Create tables for entity and edge types the store does not have yet (a migration)."""
        changed = False
        missing = [t for t in self.ontology.entity_types if t not in tables] + [
            e for e in self.ontology.edge_types if e not in tables and self._edge_ddl(e)]
        if not missing:
            return
        with self.transaction():
            for t in self.ontology.entity_types:
                if t not in tables:
                    self._q(
                        f"CREATE NODE TABLE {t}(ref STRING PRIMARY KEY, name STRING, aliases STRING, "
                        "description STRING, created_at TIMESTAMP)"
                    )
                    changed = True
            for e in self.ontology.edge_types.values():
                if e.name not in tables:
                    ddl = self._edge_ddl(e.name)
                    if ddl:
                        self._q(ddl)
                        changed = True
            if changed:
                self._set_meta("ontology", dumps(self.ontology.fingerprint()))
                old = json.loads(self.meta("registry") or "{}")
                old.update(self.registry.fingerprint())
                self._set_meta("registry", dumps(old))

    def _edge_ddl(self, name: str) -> str | None:
        pairs = self.ontology.edge_types[name].pairs
        froms = ", ".join(f"FROM {a} TO {b}" for a, b in pairs)
        if all(a == RECORD_TYPE for a, _ in pairs):  # evidence edges: where in the record, found by which rule
            return f"CREATE REL TABLE {name}({froms}, span_start INT64, span_end INT64, rule STRING)"
        if any(RECORD_TYPE in p for p in pairs):
            return None  # mixing evidence and fact edges is refused at load; nothing to create
        return (f"CREATE REL TABLE {name}({froms}, predicate STRING, valid_from TIMESTAMP, valid_to TIMESTAMP, "
                "assertions INT64[], conflicts INT64[])")

    def is_fact_edge(self, name: str) -> bool:
        return not any(RECORD_TYPE in p for p in self.ontology.edge_types[name].pairs)

    def meta(self, key: str) -> str | None:
        rows = self._q("MATCH (m:Meta {key: $k}) RETURN m.value", {"k": key})
        return rows[0][0] if rows else None

    def _set_meta(self, key: str, value: str) -> None:
        self._q(_SET_META, {"k": key, "v": value})

    # entities -------------------------------------------------------------------

    def entity(self, ref: str) -> Entity | None:
        prefix, _, _ = ref.partition(":")
        etype = self.ontology.type_for_prefix(prefix)
        if etype is None:
            return None
        rows = self._q(f"MATCH (e:{etype} {{ref: $r}}) RETURN e.name, e.aliases, e.description", {"r": ref}, hot=True)
        if not rows:
            return None
        name, aliases, desc = rows[0]
        return Entity(ref, etype, name, tuple(json.loads(aliases or "[]")), desc or "")

    def refs_named(self, key: str) -> list[str]:
        rows = self._q(_NAME, {"k": key.lower()})
        return json.loads(rows[0][0]) if rows else []

    def names_containing(self, text: str, limit: int = 5) -> list[str]:
        rows = self._q("MATCH (n:Name) WHERE n.key CONTAINS $t RETURN n.refs ORDER BY n.key LIMIT " + _int(limit),
                       {"t": text.lower()})
        out: list[str] = []
        for (refs,) in rows:
            for r in json.loads(refs):
                if r not in out:
                    out.append(r)
        return out[:limit]

    def all_names(self) -> dict[str, list[str]]:
        return {k: json.loads(v) for k, v in self._q("MATCH (n:Name) RETURN n.key, n.refs")}

    def entities(self, etype: str | None = None, match: str | None = None) -> list[Entity]:
        out: list[Entity] = []
        for t in ([etype] if etype else sorted(self.ontology.entity_types)):
            where, params = "", {}
            if match:
                where = "WHERE lower(e.name) CONTAINS $m OR lower(e.aliases) CONTAINS $m OR e.ref CONTAINS $m "
                params = {"m": match.lower()}
            rows = self._q(f"MATCH (e:{t}) {where}RETURN e.ref, e.name, e.aliases, e.description ORDER BY e.ref",
                           params)
            out.extend(Entity(r, t, n, tuple(json.loads(a or "[]")), d or "") for r, n, a, d in rows)
        return out

    def add_entity(self, e: Entity, created_at: int) -> None:
        self.entity_writes += 1
        self._undo.entities.append(e.ref)
        self._q(f"CREATE (:{e.type} {{ref: $r, name: $n, aliases: $a, description: $d, created_at: $c}})",
                {"r": e.ref, "n": e.name, "a": dumps(list(e.aliases)), "d": e.description,
                 "c": _ts_param(created_at)})
        self._index_names(e, e.aliases)

    def add_aliases(self, e: Entity, new_aliases: tuple[str, ...], description: str | None) -> None:
        self.entity_writes += 1
        aliases = list(e.aliases) + [a for a in new_aliases if a not in e.aliases]
        if e.ref not in self._undo.entities:
            self._undo.entities_before.setdefault(e.ref, [list(e.aliases), e.description])
        params: dict[str, Any] = {"r": e.ref, "a": dumps(aliases)}
        sets = "e.aliases = $a"
        if description:
            sets += ", e.description = $d"
            params["d"] = description
        self._q(f"MATCH (e:{e.type} {{ref: $r}}) SET {sets}", params)
        self._index_names(e, tuple(a for a in new_aliases if a not in e.aliases), with_name=False)

    def _index_names(self, e: Entity, aliases: Iterable[str], with_name: bool = True) -> None:
        keys = ([e.name] if with_name else []) + list(aliases)
        for key in dict.fromkeys(k.lower() for k in keys):
            refs = self.refs_named(key)
            if e.ref not in refs:
                refs.append(e.ref)
                self._q("MERGE (n:Name {key: $k}) SET n.refs = $v", {"k": key, "v": dumps(sorted(refs))})

    def bulk_add_entities(self, entities: list[Entity], created_at: int) -> None:
        """Many new entities at once (refs must be new): COPY, then merge the name index. Up to
        WAL_ROWS go row by row, through Kuzu's log (see bulk_add_statements)."""
        self.entity_writes += 1
        if len(entities) <= WAL_ROWS:
            for e in entities:
                self.add_entity(e, created_at)
            return
        by_type: dict[str, list[Entity]] = {}
        for e in entities:
            by_type.setdefault(e.type, []).append(e)
        self._undo.entities.extend(e.ref for e in entities)
        ts = _ts(created_at)
        for t, es in by_type.items():
            self._copy(t, ([e.ref, e.name, dumps(list(e.aliases)), e.description, ts] for e in es))
        existing = self.all_names()
        fresh: dict[str, list[str]] = {}
        for e in entities:
            for key in dict.fromkeys(k.lower() for k in (e.name, *e.aliases)):
                target = existing.setdefault(key, []) if key in existing else fresh.setdefault(key, [])
                if e.ref not in target:
                    target.append(e.ref)
        for key, refs in existing.items():
            if refs != sorted(refs) or any(r in {e.ref for e in entities} for r in refs):
                self._q("MERGE (n:Name {key: $k}) SET n.refs = $v", {"k": key, "v": dumps(sorted(refs))})
        self._copy("Name", ([k, dumps(sorted(v))] for k, v in fresh.items()))

    def entity_count(self) -> int:
        return sum(self._q(f"MATCH (e:{t}) RETURN count(e)")[0][0] for t in self.ontology.entity_types)

    def all_entities(self) -> Iterator[Entity]:
        for t in sorted(self.ontology.entity_types):
            rows = self._q(f"MATCH (e:{t}) RETURN e.ref, e.name, e.aliases, e.description, e.created_at "
                           "ORDER BY e.created_at, e.ref")
            for r, n, a, d, _ in rows:
                yield Entity(r, t, n, tuple(json.loads(a or "[]")), d or "")


    # statements -----------------------------------------------------------------

    def next_fact_id(self) -> int:
        return int(self.meta("next_fact") or "1")

    def set_next_fact_id(self, n: int) -> None:
        self._set_meta("next_fact", str(n))

    def _assertion_params(self, s: Statement) -> dict[str, Any]:
        return {
            "op": s.op, "s": s.subject, "p": s.predicate,
            "o": None if s.object is None else (s.object if s.object_kind == "entity" else encode_literal(s.object)),
            "ot": self._object_type(s), "vf": s.valid_from, "vt": s.valid_to,
            "rec": s.recorded_at, "src": dumps(list(s.sources)), "by": s.asserted_by, "tr": s.trust,
        }

    def _object_type(self, s: Statement) -> str | None:
        if s.object_kind == "entity":
            return "entity"
        if s.object_kind == "literal":
            p = self.registry.predicates.get(s.predicate)
            return p.literal_type if p and p.literal_type else "string"
        return None

    def add_statement(self, s: Statement) -> None:
        self._undo.fact(s.id)
        self._q(
            f"CREATE (:Assertion {{id: {_int(s.id)}, op: $op, subject: $s, predicate: $p, object: $o, "
            "object_type: $ot, valid_from: $vf, valid_to: $vt, recorded_at: $rec, sources: $src, "
            "asserted_by: $by, trust: $tr})",
            self._assertion_params(s),
        )

    def bulk_add_statements(self, stmts: Iterable[Statement]) -> int:
        """Many statements at once. Up to WAL_ROWS go row by row: Kuzu 0.11 writes COPY's rows past its
        write-ahead log, so a process killed between the commit and the checkpoint that follows loses
        them while the rest of the transaction survives (docs/semantics.md, crash safety)."""
        stmts = stmts if isinstance(stmts, list) else list(stmts)
        if len(stmts) <= WAL_ROWS:
            for st in stmts:
                self.add_statement(st)
                if st.retracted_at is not None:
                    self.mark_retracted(st.id, st.retracted_at, st.retract_reason)
            return len(stmts)
        out = self.statement_file()
        for st in stmts:
            out.add(st)
        return out.load()

    def statement_file(self) -> StatementFile:
        """A bulk file that takes statements one at a time, then loads them (large imports hold none)."""
        return StatementFile(self)

    def mark_retracted(self, fact_id: int, at: int, reason: str | None) -> None:
        if fact_id not in self._undo.retracted_before and (self._undo.facts_from is None
                                                           or fact_id < self._undo.facts_from):
            rows = self._q(f"MATCH (a:Assertion {{id: {_int(fact_id)}}}) RETURN a.retracted_at, a.retract_reason")
            if rows:
                self._undo.retracted_before[fact_id] = list(rows[0])
        self._q(f"MATCH (a:Assertion {{id: {_int(fact_id)}}}) SET a.retracted_at = $t, a.retract_reason = $r",
                {"t": at, "r": reason})

    def statement(self, fact_id: int) -> Statement | None:
        rows = self._q(f"MATCH (a:Assertion {{id: {_int(fact_id)}}}) RETURN a.subject")
        if not rows:
            return None
        for s in self.subject_log(rows[0][0]):
            if s.id == fact_id:
                return s
        return None

    _COLS = ("a.id, a.op, a.subject, a.predicate, a.object, a.object_type, a.valid_from, a.valid_to, "
             "a.recorded_at, a.retracted_at, a.retract_reason, a.sources, a.asserted_by, a.trust")

    def all_statements(self) -> list[Statement]:
        """Every statement in id order, object names not filled (export reads them this way;
        whole-store checks read them grouped by subject, ``subject_logs``).

        Rows come straight from Kuzu (times are stored as microseconds), and the common
        source lists skip the JSON parser.
        """
        stmts: list[Statement] = []
        append = stmts.append
        for fid, op, subj, pred, obj, otype, vf, vt, rec, retr, reason, src, by, trust in self._iter(
                f"MATCH (a:Assertion) RETURN {self._COLS}"):
            value, kind = _object(obj, otype)
            append(Statement(fid, op, subj, pred, value, kind, vf, vt, rec, retr, reason, _sources(src), by, trust))
        # statements are appended with rising ids, so the scan order is normally id order
        if any(a.id > b.id for a, b in zip(stmts, stmts[1:], strict=False)):  # noqa: SIM110
            stmts.sort()
        return stmts

    def subject_ranges(self, parts: int) -> list[tuple[str | None, str | None]]:
        """About ``parts`` ranges of subject refs with similar numbers of subjects, for ``subject_logs``."""
        refs = sorted(r for (r,) in self._iter("MATCH (a:Assertion) RETURN DISTINCT a.subject"))
        if parts <= 1 or len(refs) < parts:
            return [(None, None)]
        bounds: list[str | None] = [None, *(refs[i * len(refs) // parts] for i in range(1, parts)), None]
        return list(zip(bounds, bounds[1:], strict=False))

    def subject_logs(self, lo: str | None = None, hi: str | None = None,
                     refs: list[str] | None = None) -> Iterator[tuple[str, str]]:
        """Each subject's log, grouped and written as JSON by Kuzu: (ref, log text).

        Rebuild, lint and large imports read the statements this way: Kuzu groups a million
        rows and writes their JSON in C++, so Python decodes one string per subject instead
        of building a row object per statement. ``lo``/``hi`` bound the subject refs (a range
        read keeps Kuzu's grouping small), ``refs`` lists them.
        """
        # no ORDER BY: sorting a million rows first costs more than sorting the few logs that come out of order
        conditions = (("a.subject >= $lo", "lo", lo), ("a.subject < $hi", "hi", hi), ("a.subject IN $refs", "refs", refs))
        where = " AND ".join(w for w, _, v in conditions if v is not None)
        params = {k: v for _, k, v in conditions if v is not None}
        query = (f"MATCH (a:Assertion) {'WHERE ' + where if where else ''} WITH a.subject AS ref, "
                 f"concat('[', list_to_string(',', collect({_LOG_ROW})), ']') AS log ")
        yield from self._iter(query + "RETURN ref, log", params)  # type: ignore[misc]

    def entity_names(self) -> dict[str, str]:
        """Every entity's ref and name."""
        return self.entity_names_and_types()[0]

    def entity_names_and_types(self) -> tuple[dict[str, str], dict[str, str]]:
        """Every entity's ref with its name, and with its type (one scan of each entity table)."""
        names: dict[str, str] = {}
        types: dict[str, str] = {}
        for t in sorted(self.ontology.entity_types):
            for r, n in self._iter(f"MATCH (e:{t}) RETURN e.ref, e.name"):
                names[r] = n
                types[r] = t
        return names, types

    def stored_view_rows(self) -> Callable[[], tuple[dict[str, tuple[str, str, str]], dict[str, list[str]]]]:
        """Every stored subject row (ref -> name, log as stored, view) and every stored fact edge as
        ``edge_keys`` writes it, sorted, by the ref of its subject.

        The two reads start at once, each on its own connection in a thread, so Kuzu runs them beside
        the grouped statement read (at 1M: 1.8 s + 4.4 s became 5 s with one thread for both); call the
        result to wait for them. Only outside a write transaction, whose rows another connection does not see.
        """
        assert not self._in_tx
        labels = [e for e in sorted(self.ontology.edge_types) if e in self._tables() and self.is_fact_edge(e)]
        # times as Kuzu writes a TIMESTAMP (``kuzu_time_text``): at 1M about 1 s of CPU less than microseconds
        key = ("concat(label(e), ' ', o.ref, ' ', e.predicate, ' ', CAST(e.valid_from AS STRING), ' ', "
               "coalesce(CAST(e.valid_to AS STRING), ''), ' ', CAST(e.assertions AS STRING), ' ', "
               "CAST(e.conflicts AS STRING))")
        edge_query = f"MATCH (s)-[e:{'|'.join(labels)}]->(o) WITH s.ref AS ref, {key} AS k RETURN ref, list_sort(collect(k))"
        subjects: dict[str, tuple[str, str, str]] = {}
        edges: dict[str, list[str]] = {}
        failed: list[BaseException] = []

        def read(query: str, into: dict[str, Any]) -> None:
            try:
                conn = kuzu.Connection(self._db)
                try:
                    # by ref: the subject row's (name, log, view), or the edge keys' list
                    into.update((row[0], row[1] if len(row) == 2 else tuple(row[1:]))
                                for row in self._iter(query, conn=conn))
                finally:
                    conn.close()
            except BaseException as e:  # handed to the caller
                failed.append(e)

        reads: list[tuple[str, dict[str, Any]]] = [("MATCH (s:Subject) RETURN s.ref, s.name, s.log, s.view", subjects)]
        if labels:
            reads.append((edge_query, edges))
        threads = [threading.Thread(target=read, args=r, daemon=True) for r in reads]
        for t in threads:
            t.start()

        def wait() -> tuple[dict[str, tuple[str, str, str]], dict[str, list[str]]]:
            for t in threads:
                t.join()
            if failed:
                raise failed[0]
            return subjects, edges
        return wait

    def edge_keys(self, ref: str, view: list[Interval]) -> list[str]:
        """The fact edges ``view`` makes for subject ``ref``, as ``stored_view_rows`` reads them, sorted."""
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return []
        out = []
        texts = self._time_texts
        if len(texts) > 100_000:  # bounded: most stores' times repeat, a few have one per edge
            texts.clear()
        for iv in view:
            if iv.object_kind == "entity":
                label = self._edge_label(stype, iv)
                if label is not None:
                    vf, vt = iv.valid_from, iv.valid_to
                    start = texts.get(vf) or texts.setdefault(vf, kuzu_time_text(vf))
                    end = "" if vt is None else texts.get(vt) or texts.setdefault(vt, kuzu_time_text(vt))
                    out.append(f"{label} {iv.object} {iv.predicate} {start} {end} "
                               f"{_int_list(iv.assertions)} {_int_list(iv.conflicts)}")
        out.sort()
        return out

    def _edge_label(self, stype: str, iv: Interval) -> str | None:
        """``_edge_for``'s label, looked up once per (subject type, predicate, object prefix)."""
        key = (stype, iv.predicate, str(iv.object).partition(":")[0])
        label = self._edge_labels.get(key, "")
        if label == "":
            edge = self._edge_for(stype, iv)
            label = self._edge_labels[key] = edge[0] if edge else None
        return label

    def statement_count(self) -> int:
        return int(self._q("MATCH (a:Assertion) RETURN count(a)")[0][0])

    # the materialized view ----------------------------------------------------------

    def subject_log(self, ref: str) -> list[Statement]:
        return self.subject_log_and_view(ref)[0]

    def subject_view(self, ref: str) -> list[Interval]:
        return self.subject_name_and_view(ref)[1]

    def subject_name_and_view(self, ref: str) -> tuple[str | None, list[Interval]]:
        """The subject's name and intervals in one key lookup (None, [] when it has no statements)."""
        rows = self._q(_SUBJECT_VIEW, {"r": ref})
        if not rows:
            return None, []
        name, view = rows[0]
        return name, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def subject_log_and_view(self, ref: str) -> tuple[list[Statement], list[Interval]]:
        _, log, view = self.subject_name_log_and_view(ref)
        return log, view

    def subject_name_log_and_view(self, ref: str) -> tuple[str | None, list[Statement], list[Interval]]:
        rows = self._q(_SUBJECT_LOG_VIEW, {"r": ref})
        if not rows:
            return None, [], []
        name, log, view_text = rows[0]
        view = [_iv_from_row(ref, r) for r in loads(view_text or "[]")]
        names: dict[Any, str | None] = {iv.object: iv.object_name for iv in view if iv.object_kind == "entity"}

        def name_of(obj: str) -> str | None:  # objects the view does not show (retracted, say) are looked up
            if obj not in names:
                e = self.entity(obj)
                names[obj] = e.name if e else None
            return names[obj]
        return name, statements_from_log(ref, unpack(log), name_of)[0], view

    def all_subject_rows(self, prefix: str | None = None) -> Iterator[tuple[str, str | None, list[Interval]]]:
        """Every subject's ref, name and intervals (those whose ref starts with ``prefix``)."""
        where, params = ("WHERE starts_with(s.ref, $p) ", {"p": prefix}) if prefix else ("", None)
        for ref, name, view in self._iter(f"MATCH (s:Subject) {where}RETURN s.ref, s.name, s.view", params):
            yield ref, name, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def all_subject_views(self) -> Iterator[tuple[str, list[Interval]]]:
        for ref, view in self._iter("MATCH (s:Subject) RETURN s.ref, s.view"):
            yield ref, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def write_subject(self, ref: str, name: str, log: list[Statement], view: list[Interval],
                      predicates: Iterable[str]) -> None:
        """Replace one subject's materialized rows and its edges for ``predicates``."""
        self._put_subject(ref, name, log_text(log), view, set(predicates))

    def rewrite_subject(self, ref: str, name: str, log: str, view: list[Interval]) -> None:
        """Replace one subject's materialized rows and all its fact edges (``log`` in its stored form)."""
        self._put_subject(ref, name, log, view, None)

    def drop_subject(self, ref: str) -> None:
        """Remove the materialized rows of a subject that has no statements, and its fact edges."""
        self._q("MATCH (s:Subject {ref: $r}) DELETE s", {"r": ref})
        self._drop_edges(ref, None)

    def _drop_edges(self, ref: str, predicates: set[str] | None) -> None:
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return
        if predicates is None:
            tables = self._tables()
            for label in sorted(e for e in self.ontology.edge_types if e in tables and self.is_fact_edge(e)):
                if any(a == stype for a, _ in self.ontology.edge_types[label].pairs):
                    self._q(f"MATCH (s:{stype} {{ref: $r}})-[e:{label}]->() DELETE e", {"r": ref})
            return
        for pred in sorted(predicates):
            p = self.registry.predicates.get(pred)
            if p is None or p.edge is None:
                continue
            self._q(f"MATCH (s:{stype} {{ref: $r}})-[e:{p.edge}]->() WHERE e.predicate = $p DELETE e",
                    {"r": ref, "p": pred})

    def _put_subject(self, ref: str, name: str, log: str, view: list[Interval], predicates: set[str] | None) -> None:
        """Write a subject's row and its edges for ``predicates`` (None: all of them, old ones dropped)."""
        self._q("MERGE (s:Subject {ref: $r}) SET s.name = $n, s.log = $l, s.view = $v",
                {"r": ref, "n": name, "l": pack(log), "v": view_text(view)})
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return
        self._drop_edges(ref, predicates)
        for iv in view:
            if (predicates is not None and iv.predicate not in predicates) or iv.object_kind != "entity":
                continue
            edge = self._edge_for(stype, iv)
            if edge is None:
                continue
            label, otype = edge
            if self._pairs is not None:
                self._pairs.add((label, stype, otype))
            self._q(
                f"MATCH (s:{stype} {{ref: $r}}), (o:{otype} {{ref: $o}}) CREATE (s)-[:{label} {{predicate: $p, "
                "valid_from: $vf, valid_to: $vt, assertions: $a, conflicts: $c}]->(o)",
                {"r": ref, "o": iv.object, "p": iv.predicate, "vf": _ts_param(iv.valid_from),
                 "vt": _ts_param(iv.valid_to), "a": list(iv.assertions), "c": list(iv.conflicts)},
            )

    def _edge_for(self, stype: str, iv: Interval) -> tuple[str, str] | None:
        p = self.registry.predicates.get(iv.predicate)
        if p is None or p.edge is None:
            return None
        otype = self.ontology.type_for_prefix(str(iv.object).partition(":")[0])
        if otype is None or (stype, otype) not in self.ontology.edge_types[p.edge].pairs:
            return None
        return p.edge, otype

    def write_view_files(self, subjects: Iterable[tuple[str, str, str, list[Interval]]]) -> ViewFiles:
        """Write the view's rows to bulk files for ``load_view`` (pure Python, no database: large
        rebuilds and imports write two sets of files at once in two processes)."""
        counts = {"subjects": 0, "intervals": 0, "edges": 0}
        ts_text: dict[int | None, str] = {}
        # edge rows go to their files a chunk at a time, so a large view is never held whole
        edge_files: dict[tuple[str, str, str], tuple[_BulkFile, list[list[Any]]]] = {}

        def ts(us: int | None) -> str:
            text = ts_text.get(us)
            if text is None:
                text = ts_text[us] = _ts(us)
            return text

        def subject_rows() -> Iterator[list[Any]]:
            for ref, name, log, view in subjects:
                counts["subjects"] += 1
                counts["intervals"] += len(view)
                stype = self.ontology.type_for_prefix(ref.partition(":")[0])
                for iv in view:
                    if iv.object_kind != "entity" or stype is None:
                        continue
                    label = self._edge_label(stype, iv)
                    if label is None:
                        continue
                    target = (label, stype, self.ontology.type_for_prefix(str(iv.object).partition(":")[0]) or "")
                    if target not in edge_files:
                        edge_files[target] = (_BulkFile(self.path / "tmp", keep=True), [])
                    bulk, pending = edge_files[target]
                    pending.append([ref, iv.object, iv.predicate, ts(iv.valid_from), ts(iv.valid_to),
                                    _int_list(iv.assertions), _int_list(iv.conflicts)])
                    if len(pending) == _CHUNK:
                        bulk.write(pending)
                        pending.clear()
                yield [ref, name, pack(log), view_text(view)]

        subject_file = _BulkFile(self.path / "tmp", keep=True)
        try:
            for chunk in _chunks(subject_rows(), _CHUNK):
                subject_file.write(chunk)
            subject_file.close()
            for bulk, pending in edge_files.values():
                if pending:
                    bulk.write(pending)
                bulk.close()
        except BaseException:
            for f in [subject_file, *(b for b, _ in edge_files.values())]:
                f.discard()
            raise
        counts["edges"] = sum(b.rows for b, _ in edge_files.values())
        return ViewFiles(subject_file, {k: b for k, (b, _) in edge_files.items()}, counts)

    def load_view(self, parts: list[ViewFiles]) -> dict[str, int]:
        """Drop the view's tables and bulk-load them from ``parts`` (the files are removed)."""
        self._pairs = None
        self._plan_generation += 1  # prepared plans may name the tables dropped here
        try:
            tables = self._tables()
            self._q("DROP TABLE Subject")
            self._q(_SUBJECT_DDL)
            for e in [e for e in self.ontology.edge_types if e in tables and self.is_fact_edge(e)]:
                self._q(f"DROP TABLE {e}")
                ddl = self._edge_ddl(e)
                if ddl:
                    self._q(ddl)
            self._load([part.subjects for part in parts], "Subject")
            for label, a, b in sorted({k for part in parts for k in part.edges}):
                self._load([part.edges[(label, a, b)] for part in parts if (label, a, b) in part.edges], label,
                           f"from='{a}', to='{b}'")
        finally:
            for part in parts:
                part.discard()
        return {k: sum(part.counts[k] for part in parts) for k in ("subjects", "intervals", "edges")}

    # integrity: what rebuild --check verifies beyond the view ------------------------------

    def integrity_problems(self, entity_refs: Container[str], limit: int = 50) -> list[dict[str, Any]]:
        """What is wrong with the tables the view does not cover: statements naming entities that do not
        exist, id counters behind the ids in use, record keys and the full-text index out of step with
        the records, and times no reader can hold. Each problem: ``code``, ``message`` and what it is
        about; at most ``limit`` of a kind."""
        from graphmem.evidence.textindex import terms
        from graphmem.model.times import MAX_US, MIN_US

        out: list[dict[str, Any]] = []

        def add(code: str, message: str, **about: Any) -> None:
            if sum(1 for p in out if p["code"] == code) < limit:
                out.append({"code": code, "message": message, **about})

        for (ref,) in self._iter("MATCH (a:Assertion) RETURN DISTINCT a.subject ORDER BY a.subject"):
            if ref not in entity_refs:
                add("dangling_subject", f"statements of {ref!r}, which is not an entity", subject=ref)
        for (ref,) in self._iter("MATCH (a:Assertion) WHERE a.object_type = 'entity' RETURN DISTINCT a.object "
                                 "ORDER BY a.object"):
            if ref not in entity_refs:
                add("dangling_object", f"statements name {ref!r} as their object, which is not an entity", object=ref)
        times = " OR ".join(f"{c} < {_int(MIN_US)} OR {c} > {_int(MAX_US)}"
                            for c in ("a.valid_from", "a.valid_to", "a.recorded_at", "a.retracted_at"))
        for (fid,) in self._q(f"MATCH (a:Assertion) WHERE {times} RETURN a.id ORDER BY a.id LIMIT {_int(limit)}"):
            add("time_out_of_range", f"fact:{fid} holds a time outside the years 1-9999 (export cannot write it "
                "so that import reads it back); retract it and assert it again", fact=f"fact:{fid}")
        top = self._q("MATCH (a:Assertion) RETURN max(a.id)")[0][0]
        if top is not None and top >= self.next_fact_id():
            add("counter_behind", f"the next fact id is {self.next_fact_id()}, but fact:{top} exists", counter="next_fact")
        records = {k: i for k, i in self._iter("MATCH (r:Record) RETURN r.key, r.id")}
        top = max(records.values(), default=None)
        if top is not None and top >= self.next_record_id():
            add("counter_behind", f"the next record id is {self.next_record_id()}, but rec:{top} exists",
                counter="next_record")
        keys = self.all_record_keys()
        for key in sorted(set(records) ^ set(keys) | {k for k in records if keys.get(k, records[k]) != records[k]}):
            add("record_key_mismatch", f"record key {key!r}: the records say {records.get(key)}, the key index says "
                f"{keys.get(key)}", key=key)
        docs = tokens = 0
        df: dict[str, int] = {}
        for (text,) in self._iter("MATCH (r:Record) RETURN r.text"):
            words = terms(text)
            docs += 1
            tokens += len(words)
            for t in set(words):
                df[t] = df.get(t, 0) + 1
        counted = (int(self.meta("index_docs") or 0), int(self.meta("index_terms") or 0))  # as stored, not cached
        if (docs, tokens) != counted:
            add("index_stats_mismatch", f"the full-text index counts {counted[0]} records of {counted[1]} terms; "
                f"the records are {docs} of {tokens}")
        stored = {t: sum(int(n) for n in b.split(",") if n) for t, b in self._iter("MATCH (t:Term) RETURN t.term, t.blocks")}
        for t in sorted(set(df) | set(stored)):
            if df.get(t, 0) != stored.get(t, 0):
                add("index_term_mismatch", f"term {t!r} is in {df.get(t, 0)} records but the index lists "
                    f"{stored.get(t, 0)}", term=t)
        for table in self.node_tables():
            looked, missed = self.pk_index_misses(table)
            if missed:
                add("pk_index_mismatch", f"table {table}: {missed} of {looked} keys read from its rows are not found "
                    "by a primary-key lookup (its index is out of step with its rows, as a process killed during a "
                    "checkpoint can leave it); run 'graphmem rebuild' to write the table again", table=table)
        return out

    # repair: tables made again from the ones they derive from ---------------------------

    def node_tables(self) -> list[str]:
        return sorted(name for name, kind in self._q("CALL show_tables() RETURN name, type") if kind == "NODE")

    def pk_index_misses(self, table: str, probes: int = _PK_PROBES) -> tuple[int, int]:
        """Keys of ``table`` read by a scan (all of them, or an even spread of about ``probes`` in a larger
        table) and looked up by primary key, which reads the table's hash index: (looked up, not found).
        A sound table finds every one (Kuzu 0.11: about 0.06 ms a lookup)."""
        info = self._q(f"CALL table_info('{table}') RETURN name, type, `primary key`")
        pk, ktype = next((n, t) for n, t, is_pk in info if is_pk)
        n = int(self._q(f"MATCH (x:{table}) RETURN count(x)")[0][0])
        step = max(1, n // probes)
        # the spread is picked by Kuzu (13 ms over 1M rows, against 0.8 s to hand every key to Python)
        keys = [k for (k,) in self._q(f"MATCH (x:{table}) WHERE offset(id(x)) % {_int(step)} = 0 RETURN x.{pk}")]
        by_param = f"MATCH (x:{table} {{{pk}: $k}}) RETURN 1"
        missed = 0
        for k in keys:  # a parameterized INT64 key would scan the table instead (module docstring)
            missed += not (self._q(f"MATCH (x:{table} {{{pk}: {_int(k)}}}) RETURN 1") if ktype == "INT64"
                           else self._q(by_param, {"k": k}, hot=True))
        return len(keys), missed

    def tables_to_rewrite(self, undo: WriteUndo | None) -> list[str]:
        """The node tables a repair writes again (``rewrite_node_table``): those an interrupted bulk write
        inserted into and no later step of the repair makes again (the name index, record keys and
        full-text index are), and any whose rewrite a kill cut short. Without the write's own account of
        itself (an older mark), every table a bulk write inserts into."""
        kinds = dict(self._q("CALL show_tables() RETURN name, type"))
        out = {t[:-len(_REWRITE)] for t, kind in kinds.items() if kind == "NODE" and t.endswith(_REWRITE)}
        if undo is None or undo.records_from is not None:
            out.add(RECORD_TYPE)
        if undo is None or undo.facts_from is not None:
            out |= {"Assertion", "Subject"}
        if undo is None:
            out |= set(self.ontology.entity_types)
        else:
            out |= {t for ref in undo.entities if (t := self.ontology.type_for_prefix(ref.partition(":")[0]))}
        return sorted(t for t in out if kinds.get(t) == "NODE")

    def rewrite_node_table(self, table: str) -> int:
        """Write a node table again from a scan of its rows, with the rel tables that reach it; its rows.
        Outside a transaction: two commits, each with its checkpoint. The first loads copies
        (``<table>_rewrite`` and ``<rel>_rewrite``, by COPY from a scan of the originals), whose row count is
        then checked; the second, DDL only (logged whole, so a kill leaves the old tables or the new), drops
        the originals and gives the copies their names. Copies a kill left behind are made again.

        A process killed while Kuzu 0.11.3 checkpoints a commit that inserted into a node table can leave
        that table's primary-key hash index out of step with its rows, and opening the store (the WAL
        replay) does not mend it: keys of rows the table holds are not found, looking up some absent keys
        crashes the process, and the checkpoint after a later insert of a few thousand keys crashes
        (exit 139). A scan does not read the index; a table made again has a new one."""
        assert not self._in_tx
        new = table + _REWRITE
        info = self._q(f"CALL table_info('{table}') RETURN name, type, `primary key`")
        pk = next(n for n, _, is_pk in info if is_pk)
        kinds = dict(self._q("CALL show_tables() RETURN name, type"))
        rels: dict[str, list[list[str]]] = {}  # rel table -> its (from, to, from key, to key), when it reaches the table
        for name, kind in sorted(kinds.items()):
            if kind == "REL" and not name.endswith(_REWRITE):
                conns = self._q(f"CALL show_connection('{name}') RETURN *")
                if any(table in c[:2] for c in conns):
                    rels[name] = conns

        def swap(t: str) -> str:
            return new if t == table else t

        self._plan_generation += 1  # prepared plans may name the tables dropped here
        with self.transaction():
            for name in sorted(t for t, kind in kinds.items() if kind == "REL" and t.endswith(_REWRITE)):
                self._q(f"DROP TABLE {name}")
            if new in kinds:
                self._q(f"DROP TABLE {new}")
            self._q(f"CREATE NODE TABLE {new}({', '.join(f'{n} {t}' for n, t, _ in info)}, PRIMARY KEY({pk}))")
            self._q(f"COPY {new} FROM (MATCH (x:{table}) RETURN {', '.join(f'x.{n}' for n, _, _ in info)})")
            for rel, conns in rels.items():
                props = self._q(f"CALL table_info('{rel}') RETURN name, type")
                pairs = ", ".join(f"FROM {swap(a)} TO {swap(b)}" for a, b, _, _ in conns)
                self._q(f"CREATE REL TABLE {rel}{_REWRITE}({pairs}{''.join(f', {n} {t}' for n, t in props)})")
                for a, b, ka, kb in conns:
                    self._q(f"COPY {rel}{_REWRITE} FROM (MATCH (x:{a})-[e:{rel}]->(y:{b}) RETURN x.{ka}, y.{kb}"
                            f"{''.join(f', e.{n}' for n, _ in props)}) (from='{swap(a)}', to='{swap(b)}')")
            self._bulk_written = True  # a checkpoint follows the commit
        rows = int(self._q(f"MATCH (x:{table}) RETURN count(x)")[0][0])
        copied = int(self._q(f"MATCH (x:{new}) RETURN count(x)")[0][0])
        if copied != rows:
            raise StoreUnavailable(f"store {str(self.path)!r}: writing table {table} again copied {copied} of its "
                                   f"{rows} rows; nothing was replaced")
        # Edges are not counted: an edge is copied when both its ends are rows of the copies, which every
        # row is. Kuzu can keep edges of an interrupted write whose nodes it lost, joined to the wrong rows
        # (seen: 2,500 fact edges of a killed import pointing at the 15 tools that were there before);
        # those are not copied, and the fact edges, which the view derives, are compared and made again
        # by the rebuild that follows.
        self._plan_generation += 1
        with self.transaction():
            for rel in rels:
                self._q(f"DROP TABLE {rel}")
            self._q(f"DROP TABLE {table}")
            self._q(f"ALTER TABLE {new} RENAME TO {table}")
            for rel in rels:
                self._q(f"ALTER TABLE {rel}{_REWRITE} RENAME TO {rel}")
            self._bulk_written = True
        self._pairs = None
        self._node_refs.clear()
        self._node_refs_by_type.clear()
        self.forget_postings()
        return rows

    def roll_back(self, undo: WriteUndo) -> dict[str, int]:
        """Take back what an interrupted bulk write left of itself (in the caller's transaction), so the
        authority tables hold the store as it was before that write: its statements, records and
        entities removed, the rows it changed given their old values. The id counters keep the higher
        value, so an id the lost write took is never given again. The rows removed, by kind."""
        out = {"statements": 0, "records": 0, "entities": 0}
        if undo.facts_from is not None:
            out["statements"] = self._q(f"MATCH (a:Assertion) WHERE a.id >= {_int(undo.facts_from)} "
                                        "RETURN count(a)")[0][0]
            self._q(f"MATCH (a:Assertion) WHERE a.id >= {_int(undo.facts_from)} DELETE a")
        for fid, (at, reason) in sorted(undo.retracted_before.items()):
            self._q(f"MATCH (a:Assertion {{id: {_int(fid)}}}) SET a.retracted_at = $t, a.retract_reason = $r",
                    {"t": at, "r": reason})
        if undo.records_from is not None:
            out["records"] = self._q(f"MATCH (r:Record) WHERE r.id >= {_int(undo.records_from)} RETURN count(r)")[0][0]
            self._q(f"MATCH (r:Record) WHERE r.id >= {_int(undo.records_from)} DETACH DELETE r")
        for rid, (at, mentions) in sorted(undo.records_before.items()):
            self._q("MATCH (r:Record {ref: $r}) SET r.extracted_at = $t", {"r": f"rec:{_int(rid)}", "t": _ts_param(at)})
            self.add_mentions(rid, [(ref, a, b, rule) for ref, a, b, rule in mentions])
        by_type: dict[str, list[str]] = {}
        for ref in undo.entities:
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is not None:
                by_type.setdefault(etype, []).append(ref)
        for etype, refs in sorted(by_type.items()):
            out["entities"] += self._q(f"MATCH (e:{etype}) WHERE e.ref IN $r RETURN count(e)", {"r": refs})[0][0]
            self._q(f"MATCH (e:{etype}) WHERE e.ref IN $r DETACH DELETE e", {"r": refs})
        for ref, (aliases, description) in sorted(undo.entities_before.items()):
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is not None:
                self._q(f"MATCH (e:{etype} {{ref: $r}}) SET e.aliases = $a, e.description = $d",
                        {"r": ref, "a": dumps(list(aliases)), "d": description})
        if undo.entities or undo.entities_before:
            self.entity_writes += 1
        if undo.counters.get("next_fact", 0) > self.next_fact_id():
            self.set_next_fact_id(undo.counters["next_fact"])
        if undo.counters.get("next_record", 0) > self.next_record_id():
            self._set_meta("next_record", str(undo.counters["next_record"]))
        return out

    def rebuild_names(self) -> int:
        """Make the name index again from the entities (in the caller's transaction); the keys written."""
        names: dict[str, set[str]] = {}
        for e in self.all_entities():
            for key in (e.name, *e.aliases):
                names.setdefault(key.lower(), set()).add(e.ref)
        self._plan_generation += 1  # prepared plans may name the table dropped here
        self._q("DROP TABLE Name")
        self._q(_NAME_DDL)
        self._copy("Name", ([k, dumps(sorted(v))] for k, v in sorted(names.items())),
                   multiline=any("\n" in k or "\r" in k for k in names))
        return len(names)

    def rebuild_record_index(self) -> int:
        """Make the record keys and the full-text index again from the records (in the caller's
        transaction); the records indexed."""
        self._plan_generation += 1
        self.forget_postings()
        for ddl in ("DROP TABLE RecordKey", _RECORD_KEY_DDL, "DROP TABLE Term", "DROP TABLE Posting", *_INDEX_DDL):
            self._q(ddl)
        self._q("COPY RecordKey FROM (MATCH (r:Record) RETURN r.key, r.id)")
        self._bulk_written = True
        self._set_meta("index_docs", "0")
        self._set_meta("index_terms", "0")
        self._index_stats = (0, 0)
        texts = [(i, t) for i, t in self._iter("MATCH (r:Record) RETURN r.id, r.text ORDER BY r.id")]
        for at in range(0, len(texts), _INDEX_BATCH):
            self._index_texts(texts[at:at + _INDEX_BATCH])
        return len(texts)

    # evidence records ---------------------------------------------------------------

    def next_record_id(self) -> int:
        return int(self.meta("next_record") or "1")

    def record_ids_for_keys(self, keys: Iterable[str]) -> dict[str, int]:
        """The records already stored under these idempotence keys."""
        out: dict[str, int] = {}
        for k in keys:
            rows = self._q(_RECORD_KEY, {"k": k})
            if rows:
                out[k] = rows[0][0]
        return out

    def all_record_keys(self) -> dict[str, int]:
        return {k: i for k, i in self._iter("MATCH (k:RecordKey) RETURN k.key, k.id")}

    def add_records(self, records: list[Any]) -> None:
        """Append records (ids already assigned, rising) with their keys; the full-text index follows."""
        if not records:
            return
        if self._undo.records_from is None or records[0].id < self._undo.records_from:
            self._undo.records_from = records[0].id
        if len(records) > 50:
            breaks = any(any("\n" in v or "\r" in v for v in (r.text, r.key, r.kind, r.source or "", r.scope or ""))
                         for r in records)
            at = _ts(records[0].ingested_at)  # one ingest, one time
            self._copy("Record", ([r.ref, r.id, r.key, _ts(r.ts), r.kind, r.source or "", r.scope or "", r.importance,
                                   dumps(r.meta) if r.meta else "{}", r.text, r.original_sha256, r.original_chars,
                                   "true" if r.truncated else "false", dumps(r.redactions) if r.redactions else "{}",
                                   at if r.ingested_at == records[0].ingested_at else _ts(r.ingested_at), ""]
                                  for r in records), multiline=breaks)
            self._copy("RecordKey", ([r.key, r.id] for r in records), multiline=breaks)
        else:
            for r in records:
                self._q(
                    f"CREATE (:Record {{ref: $ref, id: {_int(r.id)}, key: $key, ts: $ts, kind: $kind, source: $src, scope: $scope, "
                    "importance: $imp, meta: $meta, text: $text, original_sha256: $sha, original_chars: $n, "
                    "truncated: $tr, redactions: $red, ingested_at: $at})",
                    {"ref": r.ref, "key": r.key, "ts": _ts_param(r.ts), "kind": r.kind, "src": r.source, "scope": r.scope,
                     "imp": r.importance, "meta": dumps(r.meta), "text": r.text, "sha": r.original_sha256,
                     "n": r.original_chars, "tr": r.truncated, "red": dumps(r.redactions),
                     "at": _ts_param(r.ingested_at)})
                self._q("CREATE (:RecordKey {key: $k, id: $i})", {"k": r.key, "i": r.id})
        self._set_meta("next_record", str(records[-1].id + 1))
        self._index_texts([(r.id, r.text) for r in records])

    # full-text index (graphmem/evidence/textindex.py) -------------------------------------------

    def _index_texts(self, records: list[tuple[int, str]]) -> None:
        """Add records (rising ids, above every indexed one) to the full-text index, in the caller's transaction.

        A term's postings are blocks ``Posting {key: "<term> <i>"}``; ``Term.blocks`` lists their sizes.
        Each batch appends one block per term it holds, merged with the last blocks as
        ``textindex.merge_plan`` says, so a term keeps about log2(postings) blocks.
        """
        from graphmem.evidence.textindex import Postings, merge_plan, postings_of
        added, docs, tokens = postings_of(records)
        old = self._term_blocks(list(added))
        new_terms: list[list[str]] = []
        changed_terms: list[list[str]] = []
        new_blocks: list[list[str]] = []
        changed_blocks: list[list[str]] = []
        dropped: list[str] = []
        for term, p in added.items():
            self._forget(term)
            sizes_before = old.get(term, [])
            sizes, first = merge_plan(sizes_before, len(p))
            parts = [self._block(term, i) for i in range(first, len(sizes_before))]
            data = Postings.concat([*parts, p]).encode()
            if first < len(sizes_before):
                changed_blocks.append([f"{term} {first}", data])
            else:
                new_blocks.append([f"{term} {first}", data])
            dropped.extend(f"{term} {i}" for i in range(first + 1, len(sizes_before)))
            blocks = ",".join(map(str, sizes))
            if sizes_before:
                changed_terms.append([term, blocks])
            else:
                new_terms.append([term, blocks])
        self._put_rows("Term", new_terms)
        self._put_rows("Posting", new_blocks)
        self._set_rows("Term", changed_terms)
        self._set_rows("Posting", changed_blocks)
        for key in dropped:
            self._q(_POSTING_DROP, {"k": key})
        n_docs, n_tokens = self.index_stats()
        self._set_meta("index_docs", str(n_docs + docs))
        self._set_meta("index_terms", str(n_tokens + tokens))
        self._index_stats = (n_docs + docs, n_tokens + tokens)  # a rollback forgets it

    def _put_rows(self, table: str, rows: list[list[str]]) -> None:
        """New index rows (key, value): plain text (terms and hex: no tabs, quotes or line breaks)."""
        if len(rows) > 50:
            self._copy(table, rows, multiline=False)
            return
        for k, v in rows:
            self._q(_INDEX_WRITES[table][0], {"k": k, "v": v})

    def _set_rows(self, table: str, rows: list[list[str]]) -> None:
        """New values for existing index rows (key, value)."""
        key = "term" if table == "Term" else "key"
        col = "blocks" if table == "Term" else "data"
        if len(rows) > 50:  # one join beats many lookups
            self._q(f"UNWIND $rows AS r MATCH (x:{table} {{{key}: r.k}}) SET x.{col} = r.v",
                    {"rows": [{"k": k, "v": v} for k, v in rows]})
            return
        for k, v in rows:
            self._q(_INDEX_WRITES[table][1], {"k": k, "v": v})

    def _term_blocks(self, terms: list[str]) -> dict[str, list[int]]:
        """Block sizes of the terms already indexed (a scan when there are many to look up)."""
        if len(terms) > 300:
            want = set(terms)
            rows: Iterable[list[Any]] = (r for r in self._iter("MATCH (t:Term) RETURN t.term, t.blocks") if r[0] in want)
        else:
            rows = ([t, r[0][0]] for t in terms if (r := self._q(_TERM, {"t": t})))
        return {t: [int(x) for x in b.split(",")] for t, b in rows}

    def _block(self, term: str, i: int) -> Postings:
        from graphmem.evidence.textindex import Postings
        rows = self._q(_POSTING, {"k": f"{term} {i}"})
        if not rows:
            raise StoreUnavailable(f"store {str(self.path)!r}: full-text index block {term!r} {i} is missing")
        return Postings.decode(rows[0][0])

    def _forget(self, term: str) -> None:
        held = self._postings.pop(term, None)
        if held is not None:
            self._postings_held -= len(held[1])

    def term_postings(self, term: str) -> tuple[Postings, np.ndarray] | None:
        """A term's postings and their BM25 weights now; both are kept until a write touches the term."""
        from graphmem.evidence.textindex import Postings, weights
        rows = self._q(_TERM, {"t": term})
        if not rows:
            return None
        blocks = rows[0][0]
        stats = self.index_stats()
        held = self._postings.get(term)
        if held is None or held[0] != blocks:
            p = Postings.concat([self._block(term, i) for i in range(blocks.count(",") + 1)])
            self._forget(term)
            if self._postings_held + len(p) > _POSTINGS_HELD_MAX:
                self.forget_postings()
            held = (blocks, p, stats, weights(p, *stats))
            self._postings_held += len(p)
        elif held[2] != stats:
            held = (blocks, held[1], stats, weights(held[1], *stats))
        self._postings[term] = held
        return held[1], held[3]

    def forget_postings(self) -> None:
        """Drop every decoded posting list held in memory (the next search reads them from the store)."""
        self._postings.clear()
        self._postings_held = 0

    def index_stats(self) -> tuple[int, int]:
        """Records in the full-text index and terms in them."""
        if self._index_stats is None:
            self._index_stats = (int(self.meta("index_docs") or 0), int(self.meta("index_terms") or 0))
        return self._index_stats

    def record(self, rec_id: int) -> Any:
        from graphmem.evidence.records import Record
        rows = self._q(_RECORD, {"r": f"rec:{_int(rec_id)}"})
        if not rows:
            return None
        return self._record_from_row(rows[0], Record)

    def records_between(self, lo: int, hi: int) -> dict[int, Any]:
        """Records with ids in [lo, hi], in one scan (cheaper than many key lookups for a batch)."""
        from graphmem.evidence.records import Record
        rows = self._q(f"MATCH (r:Record) WHERE r.id >= {_int(lo)} AND r.id <= {_int(hi)} RETURN {_RCOLS}")
        return {r[0]: self._record_from_row(r, Record) for r in rows}

    @staticmethod
    def _record_from_row(r: list[Any], cls: Any) -> Any:
        rid, key, text, ts, kind, src, scope, imp, meta, sha, n, tr, red, at = r
        return cls(rid, key, text, from_datetime(ts), kind, src or None, scope or None, imp, json.loads(meta or "{}"),
                   sha, n, bool(tr), json.loads(red or "{}"), from_datetime(at))

    def pending_record_ids(self, limit: int | None = None) -> list[int]:
        lim = f" LIMIT {_int(limit)}" if limit else ""
        return [r[0] for r in self._q(f"MATCH (r:Record) WHERE r.extracted_at IS NULL RETURN r.id ORDER BY r.id{lim}")]

    def all_records(self) -> Iterator[Any]:
        from graphmem.evidence.records import Record
        for r in self._iter(f"MATCH (r:Record) RETURN {_RCOLS} ORDER BY r.id"):
            yield self._record_from_row(r, Record)

    def record_count(self) -> int:
        return int(self._q("MATCH (r:Record) RETURN count(r)")[0][0])

    def record_times(self) -> dict[str, int]:
        """Every record's ref and time (microseconds)."""
        return {ref: from_datetime(ts) or 0 for ref, ts in self._iter("MATCH (r:Record) RETURN r.ref, r.ts")}

    def rank_records(self, terms: list[str], limit: int) -> list[tuple[int, float]]:
        """BM25-ranked record ids (ties by record number) for distinct index terms: (id, score), best first."""
        from graphmem.evidence.textindex import bm25_top
        found = [self.term_postings(t) for t in terms]
        return bm25_top([(p.ids, w) for p, w in filter(None, found)], limit)

    def record_hit(self, rec_id: int) -> tuple[str, int, str, str | None, str | None, float] | None:
        """A record's text, ts, kind, source, scope and importance, by key."""
        rows = self._q(_RECORD_HIT, {"r": f"rec:{_int(rec_id)}"})
        if not rows:
            return None
        text, ts, kind, src, scope, imp = rows[0]
        ts_us = from_datetime(ts)
        assert ts_us is not None
        return text, ts_us, kind, src or None, scope or None, imp

    def search_records(self, terms: list[str], limit: int) -> list[tuple[Any, ...]]:
        """BM25-ranked records (ties by record number) for distinct index terms:
        (id, score, text, ts, kind, source, scope, importance), best first."""
        return [(i, score, *hit) for i, score in self.rank_records(terms, limit)
                if (hit := self.record_hit(i)) is not None]

    def _remember_records(self, rec_ids: list[int]) -> None:
        """Keep the extraction state (when extracted, mentions) of stored records this write is about
        to change, for ``roll_back``."""
        undo = self._undo
        ids = [i for i in dict.fromkeys(rec_ids) if i not in undo.records_before and not undo.new_record(i)]
        if not ids:
            return
        query = ("OPTIONAL MATCH (r)-[m:MENTIONS]->(e) RETURN r.id, r.extracted_at, e.ref, m.span_start, m.span_end, "
                 "m.rule")
        if len(ids) <= 20:  # key lookups; the list form scans every record
            rows = [row for i in ids for row in self._q("MATCH (r:Record {ref: $r}) " + query, {"r": f"rec:{_int(i)}"})]
        else:
            rows = self._q("MATCH (r:Record) WHERE r.id IN [" + ", ".join(_int(i) for i in ids) + "] " + query)
        for rid, at, ref, start, end, rule in rows:
            before = undo.records_before.setdefault(rid, [from_datetime(at), []])
            if ref is not None:
                before[1].append([ref, start, end, rule])

    def add_mentions(self, rec_id: int, mentions: Iterable[tuple[str, int, int, str]]) -> int:
        """The record's MENTIONS edges, replaced by these: (ref, span start, span end, rule)."""
        self._remember_records([rec_id])
        self._q("MATCH (r:Record {ref: $r})-[m:MENTIONS]->() DELETE m", {"r": f"rec:{_int(rec_id)}"})
        n = 0
        for ref, start, end, rule in mentions:
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is None or (RECORD_TYPE, etype) not in self.ontology.edge_types["MENTIONS"].pairs:
                continue
            self._q(f"MATCH (r:Record {{ref: $r}}), (e:{etype} {{ref: $e}}) "
                    "CREATE (r)-[:MENTIONS {span_start: $s, span_end: $t, rule: $rule}]->(e)",
                    {"r": f"rec:{_int(rec_id)}", "e": ref, "s": start, "t": end, "rule": rule})
            n += 1
        return n

    def all_mentions(self) -> dict[int, list[tuple[str, int, int, str]]]:
        out: dict[int, list[tuple[str, int, int, str]]] = {}
        for rid, ref, a, b, rule in self._iter("MATCH (r:Record)-[m:MENTIONS]->(e) RETURN r.id, e.ref, m.span_start, "
                                               "m.span_end, m.rule ORDER BY r.id, m.span_start, e.ref"):
            out.setdefault(rid, []).append((ref, a, b, rule))
        return out

    def replace_mentions(self, items: list[tuple[int, list[tuple[str, int, int, str]]]]) -> int:
        """MENTIONS of many records at once (their old ones removed), bulk-loaded; returns the edge count."""
        if len(items) <= 20:
            return sum(self.add_mentions(rid, ms) for rid, ms in items)
        self._remember_records([rid for rid, _ in items])
        ids = ", ".join(_int(rid) for rid, _ in items)
        self._q(f"MATCH (r:Record)-[m:MENTIONS]->() WHERE r.id IN [{ids}] DELETE m")
        pairs = self.ontology.edge_types["MENTIONS"].pairs
        by_type: dict[str, list[list[Any]]] = {}
        for rid, ms in items:
            for ref, start, end, rule in ms:
                etype = self.ontology.type_for_prefix(ref.partition(":")[0])
                if etype is not None and (RECORD_TYPE, etype) in pairs:
                    by_type.setdefault(etype, []).append([f"rec:{_int(rid)}", ref, start, end, rule])
        return sum(self._copy("MENTIONS", rows, f"from='{RECORD_TYPE}', to='{t}'") for t, rows in sorted(by_type.items()))

    def mark_extracted_many(self, rec_ids: list[int], at: int) -> None:
        if rec_ids:
            self._remember_records(rec_ids)
            ids = ", ".join(_int(i) for i in rec_ids)
            self._q(f"MATCH (r:Record) WHERE r.id IN [{ids}] SET r.extracted_at = $t", {"t": _ts_param(at)})

    def mentioned_by(self, rec_ids: list[int]) -> dict[int, list[str]]:
        """The entities each record mentions (sorted refs): a key lookup per record for a few, one list
        query (a scan of the records) for many."""
        out: dict[int, set[str]] = {i: set() for i in rec_ids}
        if len(rec_ids) <= 20:  # one primary-key lookup each beats the list query's scan of every record
            for i in rec_ids:
                rows = self._q("MATCH (r:Record {ref: $r})-[m:MENTIONS]->(e) RETURN id(e)", {"r": f"rec:{_int(i)}"},
                               hot=True)
                out[i].update(self._ref_of(node) for node, in rows)
        else:
            rows = self._q("MATCH (r:Record)-[m:MENTIONS]->(e) WHERE r.ref IN $r RETURN r.id, id(e)",
                           {"r": [f"rec:{_int(i)}" for i in rec_ids]}, hot=True)
            for rid, node in rows:
                out[rid].add(self._ref_of(node))
        return {i: sorted(refs) for i, refs in out.items()}

    def mentions_of(self, rec_id: int) -> list[str]:
        rows = self._q("MATCH (r:Record {ref: $r})-[m:MENTIONS]->(e) RETURN DISTINCT e.ref ORDER BY e.ref",
                       {"r": f"rec:{_int(rec_id)}"}, hot=True)
        return [r[0] for r in rows]

    # graph reads ------------------------------------------------------------------

    def edges(self, as_of: int | None = None) -> Iterator[tuple[str, str, str, str, Interval]]:
        """Typed edges (label, from ref, to ref, predicate, interval), optionally valid at ``as_of``."""
        where, params = "", {}
        if as_of is not None:
            where = "WHERE e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t) "
            params = {"t": _ts_param(as_of)}
        for label in sorted(self.ontology.edge_types):
            if not self.is_fact_edge(label) or self._edge_ddl(label) is None:
                continue
            rows = self._q(f"MATCH (a)-[e:{label}]->(b) {where}RETURN a.ref, b.ref, e.predicate, e.valid_from, "
                           "e.valid_to, e.assertions, e.conflicts, b.name ORDER BY a.ref, b.ref, e.valid_from", params)
            for a, b, pred, vf, vt, ids, conf, bname in rows:
                vf_us = from_datetime(vf)
                assert vf_us is not None
                yield label, a, b, pred, Interval(a, pred, b, "entity", vf_us, from_datetime(vt), tuple(ids), (),
                                                   tuple(conf), bname)

    def edges_into(self, ref: str, predicate: str, edge: str, as_of: int | None) -> list[Interval]:
        """Intervals whose object is ``ref`` along one edge type (reverse traversal from the object)."""
        otype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if otype is None or self._edge_ddl(edge) is None:
            return []
        if not any(b == otype for _, b in self.ontology.edge_types[edge].pairs):
            return []
        where = "WHERE e.predicate = $p"
        params: dict[str, Any] = {"r": ref, "p": predicate}
        if as_of is not None:
            where += " AND e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)"
            params["t"] = _ts_param(as_of)
        rows = self._q(f"MATCH (a)-[e:{edge}]->(b:{otype} {{ref: $r}}) {where} RETURN a.ref, e.valid_from, "
                       "e.valid_to, e.assertions, e.conflicts, b.name ORDER BY a.ref, e.valid_from", params)
        out = []
        for a, vf, vt, ids, conf, bname in rows:
            vf_us = from_datetime(vf)
            assert vf_us is not None
            out.append(Interval(a, predicate, ref, "entity", vf_us, from_datetime(vt), tuple(ids), (), tuple(conf),
                                bname))
        return out

    def fact_edges_at(self, refs: Iterable[str], as_of: int, other_type: str | None = None) -> list[FactEdge]:
        """The fact edges valid at ``as_of`` with an end among ``refs`` (both directions), each once.

        ``other_type`` keeps only edges whose other end has that entity type. Per entity type and
        direction, only the edge labels the ontology allows there and that have an edge at all (an
        unlabelled pattern would also walk MENTIONS). Kuzu answers ``ref IN $list`` by scanning the
        node table, and a primary-key pattern by a lookup: a few refs are read one query each, many
        with one list query (docs/recommend.md has the figures).
        """
        by_type: dict[str, list[str]] = {}
        for ref in sorted(set(refs)):
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is not None:
                by_type.setdefault(etype, []).append(ref)
        found: dict[tuple[str, str, str, int], FactEdge] = {}
        pairs = self._edge_pairs()
        for etype, group in sorted(by_type.items()):
            for outward in (True, False):
                ends = [(label, a, b) if outward else (label, b, a) for label, a, b in pairs]  # (label, near, far)
                labels = sorted({label for label, near, far in ends if near == etype and other_type in (None, far)})
                if not labels:
                    continue
                per_ref = len(group) * _LOOKUP_ROWS <= self._node_count(etype)
                for a, node, label, pred, vf, vt, ids, conf in self._edges_from(etype, group, labels, outward,
                                                                              other_type, as_of, per_ref):
                    b = self._ref_of(node)
                    src, dst = (a, b) if outward else (b, a)
                    vf_us = from_datetime(vf)
                    assert vf_us is not None
                    found[(label, src, dst, vf_us)] = FactEdge(label, src, dst, pred, vf_us, from_datetime(vt),
                                                               tuple(ids), tuple(conf))
        return [found[k] for k in sorted(found)]

    def _edges_from(self, etype: str, refs: list[str], labels: list[str], outward: bool, other_type: str | None,
                    as_of: int, per_ref: bool) -> Iterator[list[Any]]:
        other = f"b:{other_type}" if other_type else "b"
        arrow = f"-[e:{'|'.join(labels)}]->" if outward else f"<-[e:{'|'.join(labels)}]-"
        valid = "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)"
        # id(b), not b.ref: reading the far node's properties makes Kuzu join a scan of its whole table
        cols = "a.ref, id(b), label(e), e.predicate, e.valid_from, e.valid_to, e.assertions, e.conflicts"
        t = _ts_param(as_of)
        if per_ref:
            query = f"MATCH (a:{etype} {{ref: $r}}){arrow}({other}) WHERE {valid} RETURN {cols}"
            for ref in refs:
                yield from self._q(query, {"r": ref, "t": t}, hot=True)
        else:
            yield from self._q(f"MATCH (a:{etype}){arrow}({other}) WHERE a.ref IN $refs AND {valid} RETURN {cols}",
                               {"refs": refs, "t": t}, hot=True)

    def _edge_pairs(self) -> set[tuple[str, str, str]]:
        """(label, from type, to type) of the fact edges the store holds at least one of: read once
        (a LIMIT 1 query per pair the ontology allows), kept up to date by this object's writes."""
        if self._pairs is None:
            tables = self._tables()
            self._pairs = {
                (label, a, b)
                for label, et in sorted(self.ontology.edge_types.items())
                if label in tables and self.is_fact_edge(label)
                for a, b in sorted(et.pairs)
                if a in tables and b in tables and self._q(f"MATCH (:{a})-[e:{label}]->(:{b}) RETURN 1 LIMIT 1")}
        return self._pairs

    def _node_count(self, etype: str) -> int:
        """Nodes of an entity type, as of this object's last read of them."""
        if not self._node_refs_by_type:
            self._read_node_refs()
        return len(self._node_refs_by_type.get(etype, ()))

    def _ref_of(self, node: dict[str, int]) -> str:
        """The ref of an entity node by its internal id. Entity nodes are never deleted, so their offsets
        stay put: each table's refs are read once, and again when a node added since is met."""
        refs = self._node_refs.get(node["table"])
        if refs is None or node["offset"] >= len(refs):
            self._read_node_refs()
            refs = self._node_refs[node["table"]]
        return refs[node["offset"]]

    def _read_node_refs(self) -> None:
        tables = self._tables()
        for etype in sorted(self.ontology.entity_types):
            if etype in tables:
                rows = self._q(f"MATCH (b:{etype}) RETURN id(b), b.ref")
                if rows:
                    column = [""] * (max(i["offset"] for i, _ in rows) + 1)
                    for i, ref in rows:
                        column[i["offset"]] = ref
                    self._node_refs[rows[0][0]["table"]] = column
                    self._node_refs_by_type[etype] = column

    def subjects_naming(self, refs: list[str]) -> list[str]:
        """Subjects of any statement (retracted, ended or superseded included) whose object is one of ``refs``."""
        rows = self._q("MATCH (a:Assertion) WHERE a.object IN $refs RETURN DISTINCT a.subject", {"refs": sorted(refs)})
        return sorted(r[0] for r in rows)

    def cypher(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Run a caller's read query (for notebooks and benchmarks; never user text from the CLI)."""
        return self._q(query, params)
