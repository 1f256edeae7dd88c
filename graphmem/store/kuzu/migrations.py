"""Upgrading a store written in an older layout, in place (``graphmem migrate``).

A layout is what ``SCHEMA_VERSION`` numbers: the tables and columns the store keeps. Each change
of layout has one named function here that takes a Kuzu connection to a store of layout N and
leaves it at layout N+1 in one transaction, moving the authority tables (statements, records,
their evidence edges) with Kuzu's own ``COPY ... FROM (MATCH ...)``, so no row passes through
Python. What is derived from them (subject views, fact edges, the full-text index) is then
recomputed by the current code (``Memory.finish_migration``), so a migration never has to know
how a layout derived them.

Before the first change the store is copied aside (``<store>.layout<N>-backup``) and a marker,
``<store>/migrating.json``, names the copy; it is removed when the store is whole again. A
store holding the marker is refused by every command but ``migrate``, which puts the copy back and
starts again: a migration killed at any moment loses nothing.

Like the store's table modules beside it, this module speaks Cypher; it is the only other place
that does, because it alone knows the old layouts. Their DDL is written out here as it was, never
taken from ``schema.py`` and the table modules, which describe only the current layout.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.config import ENGINE_FILES
from graphmem.errors import StoreUnavailable
from graphmem.reports import MigrateReport
from graphmem.store.kuzu.base import FACETS_LAYOUT, LEXICON_LAYOUT, SCHEMA_VERSION, SCOPES_LAYOUT
from graphmem.store.kuzu.database import COMMIT_MARK, MIGRATION_MARK, driver, open_database, release_lock, write_mark

MARKER = MIGRATION_MARK


def _tables(conn: Any, kind: str | None = None) -> list[str]:
    return [r[0] for r in conn.execute("CALL show_tables() RETURN name, type").get_all() if kind in (None, r[1])]


def _q(conn: Any, query: str) -> list[list[Any]]:
    return conn.execute(query).get_all()  # type: ignore[no-any-return]


def _set_version(conn: Any, version: int) -> None:
    conn.execute("MERGE (m:Meta {key: 'schema_version'}) SET m.value = $v", {"v": str(version)})


# layout 1 -> 2 ---------------------------------------------------------------------------

_RECORD_V2 = (
    "CREATE NODE TABLE Record(ref STRING PRIMARY KEY, id INT64, key STRING, ts TIMESTAMP, kind STRING, "
    "source STRING, scope STRING, importance DOUBLE, meta STRING, text STRING, original_sha256 STRING, "
    "original_chars INT64, truncated BOOLEAN, redactions STRING, ingested_at TIMESTAMP, extracted_at TIMESTAMP)")
_RECORD_V1_COLS = ("key", "ts", "kind", "source", "scope", "importance", "meta", "text", "original_sha256",
                   "original_chars", "truncated", "redactions", "ingested_at", "extracted_at")


def records_keyed_by_ref(conn: Any) -> None:
    """Layout 2: records keyed by their ``rec:N`` ref (layout 1 keyed them by number and searched them
    with Kuzu's full-text index over a ``search`` column), graphmem's own full-text index (``Term``,
    ``Posting``; filled afterwards). The evidence edges from records are moved to the new keys.
    A store made before records existed gets the record tables."""
    tables = set(_tables(conn))
    if "Record" in tables:
        indexes = {(r[0], r[1]) for r in _q(conn, "CALL show_indexes() RETURN *") if len(r) > 1}
        if ("Record", "record_text") in indexes:
            _q(conn, "CALL DROP_FTS_INDEX('Record', 'record_text')")  # only outside a transaction
    evidence = [t for t in _tables(conn, "REL")
                if {r[0] for r in _q(conn, f"CALL show_connection('{t}') RETURN *")} == {"Record"}]
    _q(conn, "BEGIN TRANSACTION")
    if "Record" in tables:
        _q(conn, "ALTER TABLE Record RENAME TO Record_v1")
        for e in evidence:
            _q(conn, f"ALTER TABLE {e} RENAME TO {e}_v1")
    _q(conn, _RECORD_V2)
    if "RecordKey" not in tables:
        _q(conn, "CREATE NODE TABLE RecordKey(key STRING PRIMARY KEY, id INT64)")
        _q(conn, "MERGE (m:Meta {key: 'next_record'}) SET m.value = '1'")
    if "Record" in tables:
        cols = ", ".join(f"r.{c}" for c in _RECORD_V1_COLS)
        _q(conn, f"COPY Record FROM (MATCH (r:Record_v1) RETURN 'rec:' + CAST(r.id AS STRING), r.id, {cols})")
        for e in evidence:
            targets = [r[1] for r in _q(conn, f"CALL show_connection('{e}_v1') RETURN *")]
            _q(conn, f"CREATE REL TABLE {e}({', '.join(f'FROM Record TO {b}' for b in targets)}, "
                     "span_start INT64, span_end INT64, rule STRING)")
            for target in targets:
                _q(conn, f"COPY {e} FROM (MATCH (r:Record_v1)-[m:{e}_v1]->(x:{target}) RETURN "
                         "'rec:' + CAST(r.id AS STRING), x.ref, m.span_start, m.span_end, m.rule) "
                         f"(from='Record', to='{target}')")
            _q(conn, f"DROP TABLE {e}_v1")
        _q(conn, "DROP TABLE Record_v1")
    _q(conn, "CREATE NODE TABLE Term(term STRING PRIMARY KEY, blocks STRING)")
    _q(conn, "CREATE NODE TABLE Posting(key STRING PRIMARY KEY, data STRING)")
    _set_version(conn, 2)
    _q(conn, "COMMIT")


# layout 2 -> 3 ---------------------------------------------------------------------------

_ASSERTION_V3 = (
    "CREATE NODE TABLE Assertion(id INT64 PRIMARY KEY, op STRING, subject STRING, predicate STRING, "
    "object STRING, object_type STRING, valid_from INT64, valid_to INT64, recorded_at INT64, "
    "retracted_at INT64, retract_reason STRING, sources STRING, asserted_by STRING, trust STRING)")


def _microseconds(col: str) -> str:
    """A TIMESTAMP column as microseconds since 1970, floored (``to_epoch_ms`` rounds toward zero)."""
    return (f"(to_epoch_ms({col}) - CASE WHEN {col} < timestamp('1970-01-01') AND "
            f"date_part('microsecond', {col}) % 1000 > 0 THEN 1 ELSE 0 END) * 1000 "
            f"+ date_part('microsecond', {col}) % 1000")


def statement_times_as_microseconds(conn: Any) -> None:
    """Layout 3: a statement's four times are INT64 microseconds since 1970 (layout 2 kept them as
    Kuzu TIMESTAMPs, converted on every whole-store read)."""
    _q(conn, "BEGIN TRANSACTION")
    _q(conn, "ALTER TABLE Assertion RENAME TO Assertion_v2")
    _q(conn, _ASSERTION_V3)
    times = ", ".join(_microseconds(f"a.{c}") for c in ("valid_from", "valid_to", "recorded_at", "retracted_at"))
    _q(conn, "COPY Assertion FROM (MATCH (a:Assertion_v2) RETURN a.id, a.op, a.subject, a.predicate, a.object, "
             f"a.object_type, {times}, a.retract_reason, a.sources, a.asserted_by, a.trust)")
    _q(conn, "DROP TABLE Assertion_v2")
    _set_version(conn, 3)
    _q(conn, "COMMIT")


# layout 3 -> 4 ---------------------------------------------------------------------------

_ENTITY_EVENT_V4 = ("CREATE NODE TABLE EntityEvent(id INT64 PRIMARY KEY, op STRING, ref STRING, other STRING, "
                    "detail STRING, recorded_at INT64)")


def entity_events(conn: Any) -> None:
    """Layout 4: the ``EntityEvent`` table, the record of renames, alias changes and merges (a store of
    layout 3 had none; its entities are kept as they are)."""
    _q(conn, "BEGIN TRANSACTION")
    _q(conn, _ENTITY_EVENT_V4)
    _set_version(conn, 4)
    _q(conn, "COMMIT")


# layout 4 -> 5 ---------------------------------------------------------------------------

RECORD_EVENTS_LAYOUT = 5  # the layout that adds RecordEvent (the one number to change if layouts are renumbered)
_RECORD_EVENT_V5 = ("CREATE NODE TABLE RecordEvent(id INT64 PRIMARY KEY, op STRING, recs STRING, detail STRING, "
                    "recorded_at INT64)")


def record_events(conn: Any) -> None:
    """The ``RecordEvent`` table: records' use (packed, searched) and lifecycle (archive, revive)
    events (an earlier store had none: no record was used or archived); ``Meta`` lists the records
    of kind plan."""
    _q(conn, "BEGIN TRANSACTION")
    _q(conn, _RECORD_EVENT_V5)
    plans = [r[0] for r in _q(conn, "MATCH (r:Record) WHERE r.kind = 'plan' RETURN r.id ORDER BY r.id")]
    if plans:  # the plan records, which current looks up (docs/lifecycle.md)
        conn.execute("MERGE (m:Meta {key: 'plan_records'}) SET m.value = $v", {"v": json.dumps(plans)})
    _set_version(conn, RECORD_EVENTS_LAYOUT)
    _q(conn, "COMMIT")


# layout LEXICON_LAYOUT - 1 -> LEXICON_LAYOUT ------------------------------------------------

_LEXICON_TABLES = ("CREATE NODE TABLE LexiconChange(ref STRING PRIMARY KEY)",)


def stored_lexicon(conn: Any) -> None:
    """Layout ``LEXICON_LAYOUT``: the table of entities changed since the linking lexicon was stored
    (``store/kuzu/lexicon.py``), empty; ``finish_migration`` then stores the lexicon."""
    _q(conn, "BEGIN TRANSACTION")
    for ddl in _LEXICON_TABLES:
        _q(conn, ddl)
    _set_version(conn, LEXICON_LAYOUT)
    _q(conn, "COMMIT")


# layout SCOPES_LAYOUT - 1 -> SCOPES_LAYOUT ------------------------------------------------


def statement_scopes(conn: Any) -> None:
    """Layout ``SCOPES_LAYOUT``: a statement may carry a scope (``Assertion.scope``; the statements of
    earlier layouts carry none, so they stay unscoped, docs/scopes.md)."""
    _q(conn, "BEGIN TRANSACTION")
    _q(conn, "ALTER TABLE Assertion ADD scope STRING")
    _set_version(conn, SCOPES_LAYOUT)
    _q(conn, "COMMIT")


# layout FACETS_LAYOUT - 1 -> FACETS_LAYOUT ------------------------------------------------

_FACET_TABLES = ("CREATE NODE TABLE SubjectFacet(key STRING PRIMARY KEY, ref STRING, predicate STRING, open STRING, "
                 "since INT64, ended STRING, first INT64, last INT64)",)


def view_facets(conn: Any) -> None:
    """Layout ``FACETS_LAYOUT``: the ``SubjectFacet`` table, each subject's view kept a predicate at a
    time too (the predicate scan reads it), empty; ``finish_migration`` then rebuilds the view, which fills it."""
    _q(conn, "BEGIN TRANSACTION")
    for ddl in _FACET_TABLES:
        _q(conn, ddl)
    _set_version(conn, FACETS_LAYOUT)
    _q(conn, "COMMIT")


MIGRATIONS: dict[int, Callable[[Any], None]] = {1: records_keyed_by_ref, 2: statement_times_as_microseconds,
                                                3: entity_events, RECORD_EVENTS_LAYOUT - 1: record_events,
                                                LEXICON_LAYOUT - 1: stored_lexicon,
                                                SCOPES_LAYOUT - 1: statement_scopes,
                                                FACETS_LAYOUT - 1: view_facets}
"""The function that takes a store of layout N to layout N+1, by N."""

assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION)), "one migration per layout change"


# the driver --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Upgrade:
    """What ``upgrade_layout`` did: the layout it found, the functions it ran, and the copy it kept."""

    path: Path
    from_version: int
    steps: tuple[str, ...]
    backup: Path | None
    restarted: bool  # an interrupted migration was put back from its copy first

    @property
    def mark(self) -> Path | None:
        """The mark that says the migration is under way, removed once the derived data is made."""
        return self.path / MARKER

    @property
    def reindex(self) -> bool:
        """The full-text index must be built from the records (it did not exist before layout 2)."""
        return self.from_version < 2


def marker(path: Path) -> dict[str, Any] | None:
    """The interrupted migration's marker in a store, if any."""
    try:
        doc = json.loads((path / MARKER).read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"from": None, "backup": None}
    return doc if isinstance(doc, dict) else {"from": None, "backup": None}


def _open(path: Path, engine: str = "kuzu") -> tuple[Any, Any]:
    db = open_database(path, engine=engine)
    return db, driver(engine).Connection(db)


def _close(db: Any, conn: Any) -> None:
    """Close what ``_open`` opened, graphmem's lock with it (the next open to write in this process is then
    allowed: ``database._hold_lock``)."""
    try:
        conn.close()
        db.close()
    finally:
        release_lock(db)


def layout_version(conn: Any, path: Path) -> int:
    if "Meta" not in _tables(conn):
        raise StoreUnavailable(f"store {str(path)!r} holds no graphmem tables; expected a graphmem store")
    rows = _q(conn, "MATCH (m:Meta {key: 'schema_version'}) RETURN m.value")
    try:
        return int(rows[0][0])
    except (IndexError, TypeError, ValueError):
        raise StoreUnavailable(f"store {str(path)!r} has no readable layout version; "
                               "expected a graphmem store") from None


def _backup_path(path: Path, version: int) -> Path:
    base = path.with_name(f"{path.name}.layout{version}-backup")
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def _restore(path: Path, backup: Path, engine: str = "kuzu") -> None:
    """Put the copy taken before an interrupted migration back in place of the half-migrated store
    (with the mark of a bulk commit the migration's own rebuild may have left)."""
    db_file = ENGINE_FILES[engine]
    for name in (db_file, db_file + ".wal", db_file + ".shadow", COMMIT_MARK):
        with contextlib.suppress(FileNotFoundError):
            (path / name).unlink()
    for f in backup.iterdir():
        if f.name.startswith(db_file) and not f.name.endswith(".lock"):
            shutil.copy2(f, path / f.name)


def migrate(path: Path, finish: Callable[[Path, Upgrade], MigrateReport], engine: str = "kuzu") -> MigrateReport:
    """``graphmem migrate``: the store at ``path`` upgraded to the current layout, then ``finish``
    makes its derived data again with the current code (``graphmem.memory.migrate`` hands it the
    view and full-text index rebuild, so the engine needs nothing above it). The whole run holds
    ``<store>/migrate.lock``, so a second one cannot put the copy back under it."""
    path = Path(path)
    if not (path / ENGINE_FILES[engine]).exists():
        raise StoreUnavailable(f"no store at {str(path)!r}; expected the folder of a graphmem store")
    with _exclusive(path, engine):
        up = upgrade_layout(path, engine)
        if not up.steps and not up.restarted:
            return MigrateReport(str(path), up.from_version, SCHEMA_VERSION, (), None, False, {}, 0.0)
        return finish(path, up)


@contextlib.contextmanager
def _exclusive(path: Path, engine: str = "kuzu") -> Iterator[None]:
    """Hold ``<store>/migrate.lock``, and make sure no other process holds the store."""
    import fcntl
    with open(path / "migrate.lock", "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise StoreUnavailable(f"store {str(path)!r} is being migrated by another process") from None
        try:
            db, conn = _open(path, engine)  # Kuzu's own lock: refused when a command or server holds the store
            _close(db, conn)
        except StoreUnavailable as e:
            if "in use by" in str(e):
                raise
        yield


def upgrade_layout(path: Path, engine: str = "kuzu") -> Upgrade:
    """Run the migrations from the store's layout to the current one, with ``migrate.lock`` held (see
    ``migrate``); the derived data is left to ``Memory.finish_migration``. A current store is left alone."""
    pending = marker(path)
    backup = Path(pending["backup"]) if pending and pending.get("backup") else None  # the copy an interrupted run took
    if pending is not None:
        if backup is None or not (backup / ENGINE_FILES[engine]).exists():
            raise StoreUnavailable(f"store {str(path)!r}: a migration was interrupted and the copy it took "
                                   f"({backup}) is gone; restore the store from a backup")
        _restore(path, backup, engine)
    restarted = backup is not None
    db, conn = _open(path, engine)
    try:
        version = layout_version(conn, path)
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(f"store {str(path)!r} has layout {version}, newer than this graphmem "
                                   f"(layout {SCHEMA_VERSION}); upgrade graphmem to read it")
        if version == SCHEMA_VERSION and not restarted:
            return Upgrade(path, version, (), None, False)
        _q(conn, "CHECKPOINT")  # the copy is then the database file alone
    finally:
        _close(db, conn)
    if backup is None:
        backup = _backup_path(path, version)
        shutil.copytree(path, backup, ignore=shutil.ignore_patterns("tmp", "*.lock", "server.json", MARKER, COMMIT_MARK))
        write_mark(path / MARKER, {"from": version, "backup": str(backup)})
    db, conn = _open(path, engine)
    steps = []
    try:
        for v in range(version, SCHEMA_VERSION):
            step = MIGRATIONS[v]
            try:
                step(conn)
            except RuntimeError as e:
                with contextlib.suppress(RuntimeError):
                    _q(conn, "ROLLBACK")
                raise StoreUnavailable(f"store {str(path)!r}: migration {step.__name__} (layout {v} to {v + 1}) "
                                       f"failed: {str(e).splitlines()[0]}; the store before it is at {str(backup)!r}")\
                    from None
            _q(conn, "CHECKPOINT")
            steps.append(step.__name__)
    finally:
        _close(db, conn)
    return Upgrade(path, version, tuple(steps), backup, restarted)
