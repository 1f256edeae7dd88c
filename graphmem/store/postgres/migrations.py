"""Upgrading a PostgreSQL store written in an older layout, in place (``graphmem migrate``).

A layout is what ``base.SCHEMA_VERSION`` numbers (PostgreSQL's own numbering, apart from Kuzu's): the
tables, columns and keys of the store's schema. Each change of layout has one named function here that
takes a store of layout N to layout N+1 and ends by setting ``meta.schema_version`` to N+1.

``migrate_layout`` runs every step a store needs in ONE PostgreSQL transaction that first takes the
store's advisory lock (``base.lock_key``, the lock every write takes), so no writer runs while it does,
and a step that fails takes the whole migration back: PostgreSQL's DDL is transactional, so the store
is left at its old layout, whole, and nothing is copied aside (unlike the Kuzu store's migrations).
What is derived from the statements (the subject views, fact edges) is then compared with what the
current code makes and written again where it differs (``finish``: ``Memory.finish_migration``).

Like the table modules beside it, this module speaks SQL; it alone knows the old layouts, so their DDL
is written out here as it was, never taken from ``base._DDL``, which describes only the current layout.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from graphmem.config import StoreAddress
from graphmem.errors import StoreUnavailable
from graphmem.reports import MigrateReport
from graphmem.store.postgres.base import LOCK_WAIT_S, SCHEMA_VERSION, layout_refusal, lock_key, redact, split_url


def _set_version(cur: Any, version: int) -> None:
    cur.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(version),))


# layout 1 -> 2 ---------------------------------------------------------------------------

_VIEW_INTERVAL_V2 = (
    'CREATE TABLE view_interval(subject text COLLATE "C" NOT NULL, predicate text COLLATE "C" NOT NULL, '
    'pos integer NOT NULL, valid_from bigint NOT NULL, valid_to bigint, row text COLLATE "C" NOT NULL, '
    "PRIMARY KEY (subject, predicate, pos))",
    'CREATE INDEX view_interval_predicate ON view_interval(predicate, valid_from)',
)


def view_intervals_by_predicate(cur: Any) -> None:
    """Layout 2: a ``view_interval`` row's ``pos`` counts within its (subject, predicate), the table's primary
    key, so a write replaces only the rows of the predicates it touched (layout 1 counted it over the
    subject's whole view: a new interval moved every later one, and each write rewrote all of the
    subject's rows). The rows are renumbered in their order; the ``(subject, predicate)`` index goes (the
    primary key serves it)."""
    cur.execute("ALTER TABLE view_interval RENAME TO view_interval_v1")
    cur.execute("DROP INDEX view_interval_subject")
    cur.execute("ALTER INDEX view_interval_predicate RENAME TO view_interval_v1_predicate")
    cur.execute(_VIEW_INTERVAL_V2[0])
    cur.execute("INSERT INTO view_interval(subject, predicate, pos, valid_from, valid_to, row) "
                "SELECT subject, predicate, (row_number() OVER (PARTITION BY subject, predicate ORDER BY pos) - 1)::integer, "
                "valid_from, valid_to, row FROM view_interval_v1")
    cur.execute("DROP TABLE view_interval_v1")
    cur.execute(_VIEW_INTERVAL_V2[1])
    _set_version(cur, 2)


MIGRATIONS: dict[int, Callable[[Any], None]] = {1: view_intervals_by_predicate}
"""The function that takes a store of layout N to layout N+1, by N (each is handed a psycopg cursor
inside the migration's transaction, with the store's schema first on the search path)."""

assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION)), "one migration per layout change"


# the driver --------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Upgrade:
    """What ``upgrade_layout`` did: the layout it found and the steps it ran (in one transaction, so no
    copy was taken and none is ever put back)."""

    path: Path
    from_version: int
    steps: tuple[str, ...]
    backup: Path | None = None
    restarted: bool = False

    @property
    def mark(self) -> Path | None:
        """None: the steps ran in one transaction, so no mark says a migration is under way."""
        return None

    @property
    def reindex(self) -> bool:
        """Never: every PostgreSQL layout has graphmem's full-text index."""
        return False


def _connect(conninfo: str, schema: str, where: str) -> psycopg.Connection[Any]:
    try:
        conn = psycopg.connect(conninfo, autocommit=True)
    except psycopg.Error as e:
        raise StoreUnavailable(f"store {where!r} cannot be opened: {str(e).strip().splitlines()[0]}") from None
    conn.execute(f"SET search_path TO {schema}")  # a checked name (split_url)
    conn.execute(f"SET lock_timeout = '{LOCK_WAIT_S}s'")
    return conn


def _layout(cur: Any, schema: str, where: str) -> int:
    cur.execute("SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'meta'", (schema,))
    if cur.fetchone() is None:
        raise StoreUnavailable(f"no store at {where!r} (schema {schema} holds no graphmem tables): "
                               "expected one made by 'graphmem init' (or graphmem.open(address, create=True))")
    cur.execute("SELECT value FROM meta WHERE key = 'schema_version'")
    row = cur.fetchone()
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise StoreUnavailable(f"store {where!r} has no readable layout version; expected a graphmem store") from None


def upgrade_layout(url: str) -> Upgrade:
    """Run the steps from the store's layout to the current one in one transaction holding the store's
    lock; the derived data is left to ``Memory.finish_migration``. A current store is left alone."""
    conninfo, schema = split_url(url)
    where = redact(url)
    conn = _connect(conninfo, schema, where)
    steps: list[str] = []
    step_name, version = "", 0
    try:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema),))  # writers wait, then see layout 2
            version = _layout(cur, schema, where)
            if version > SCHEMA_VERSION:
                raise StoreUnavailable(layout_refusal(where, str(version)))
            for v in range(version, SCHEMA_VERSION):
                step = MIGRATIONS[v]
                step_name = f"migration {step.__name__} (layout {v} to {v + 1})"
                step(cur)
                steps.append(step.__name__)
    except psycopg.errors.LockNotAvailable:
        raise StoreUnavailable(f"store {where!r}: another process has held the store's write lock for {LOCK_WAIT_S} s; "
                               "nothing was migrated: try again when it is done") from None
    except psycopg.Error as e:
        failed = step_name or "the migration"
        raise StoreUnavailable(f"store {where!r}: {failed} failed: {str(e).strip().splitlines()[0]}; nothing was "
                               f"changed (one transaction): the store is still at layout {version}") from None
    finally:
        conn.close()
    return Upgrade(Path(where), version, tuple(steps))


def migrate_layout(where: StoreAddress, finish: Callable[[StoreAddress, Any], MigrateReport]) -> MigrateReport:
    """``graphmem migrate`` on PostgreSQL (``store.engines.migrate_store``): the store at ``where`` upgraded
    to the current layout in one transaction, then ``finish`` (``Memory.finish_migration``) makes the
    view again with the current code. A store already current is left alone (no ``finish``)."""
    assert where.url is not None
    t0 = time.perf_counter()
    up = upgrade_layout(where.url)
    shown = redact(where.url)
    if not up.steps:
        return MigrateReport(shown, up.from_version, SCHEMA_VERSION, (), None, False, {}, 0.0)
    report = finish(where, up)
    return dataclasses.replace(report, store=shown, to_version=SCHEMA_VERSION, backup=None,
                               seconds=time.perf_counter() - t0)
