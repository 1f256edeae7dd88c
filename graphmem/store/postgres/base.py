"""The plumbing under every table family of the PostgreSQL store: the store address, one connection
per thread, queries, transactions (with the store's write lock and the server's clock), the tables
and ``meta``.

One store is one schema of a database. Writers in several processes share it: a write transaction
holds the store's advisory lock (``pg_advisory_xact_lock``) from its BEGIN to its COMMIT, so writes
commit one after another; graphmem reads the fact, record and event ids a write takes inside its
transaction (a refused write's rollback releases the lock); an id read outside one (a caller of the
store's own methods) takes the lock at session level (``_ticket``) until the next transaction ends. Every
instant graphmem stamps while holding the lock (``now_us``) follows the server's clock: the store
measures its offset from the local one when it takes the lock and sets it in ``model.times``.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import urllib.parse
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from graphmem.errors import StoreReadOnly, StoreUnavailable
from graphmem.model import times
from graphmem.model.text import check_text, find_bad_text
from graphmem.ontology.schema import Ontology, Registry
from graphmem.store.values import RecordFacets, WriteUndo

if TYPE_CHECKING:
    import numpy as np

    from graphmem.model.textindex import Postings

SCHEMA_VERSION = 2  # the PostgreSQL layout (its own numbering; migrations.py moves older ones here; docs/engines.md)
DEFAULT_SCHEMA = "graphmem"
LOCK_WAIT_S = 120  # how long a write waits for the store's lock before it is refused (StoreUnavailable)
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# the tables (in the store's schema, the connection's search_path); docs/engines.md says why each index is there
_TABLE_DDL = (
    "CREATE TABLE meta(key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE entity(ref text PRIMARY KEY, type text NOT NULL, name text NOT NULL, aliases text NOT NULL, "
    "description text NOT NULL, created_at bigint NOT NULL)",
    "CREATE INDEX entity_type ON entity(type, created_at, ref)",
    "CREATE TABLE name(key text PRIMARY KEY, refs text NOT NULL)",
    "CREATE TABLE assertion(id bigint PRIMARY KEY, op text NOT NULL, subject text NOT NULL, predicate text NOT NULL, "
    "object text, object_type text, valid_from bigint, valid_to bigint, recorded_at bigint NOT NULL, "
    "retracted_at bigint, retract_reason text, sources text NOT NULL, asserted_by text NOT NULL, trust text NOT NULL, "
    "scope text)",
    "CREATE INDEX assertion_subject ON assertion(subject, id)",
    "CREATE INDEX assertion_object ON assertion(object) WHERE object_type = 'entity'",
    "CREATE TABLE subject(ref text PRIMARY KEY, name text, log text NOT NULL, view text NOT NULL)",
    "CREATE TABLE fact_edge(label text NOT NULL, src text NOT NULL, dst text NOT NULL, src_type text NOT NULL, "
    "dst_type text NOT NULL, predicate text NOT NULL, valid_from bigint NOT NULL, valid_to bigint, "
    "assertions bigint[] NOT NULL, conflicts bigint[] NOT NULL)",
    # each interval of the view again, one row each (its stored JSON), for the scans of one predicate;
    # ``pos`` counts within (subject, predicate), so a write replaces only its predicates' rows (layout 2)
    "CREATE TABLE view_interval(subject text NOT NULL, predicate text NOT NULL, pos integer NOT NULL, "
    "valid_from bigint NOT NULL, valid_to bigint, row text NOT NULL, PRIMARY KEY (subject, predicate, pos))",
    "CREATE INDEX view_interval_predicate ON view_interval(predicate, valid_from)",
    "CREATE INDEX fact_edge_src ON fact_edge(src, predicate)",
    "CREATE INDEX fact_edge_dst ON fact_edge(dst, predicate)",
    "CREATE TABLE record(id bigint PRIMARY KEY, key text NOT NULL UNIQUE, ts bigint NOT NULL, kind text NOT NULL, "
    "source text, scope text, importance double precision, meta text, text text NOT NULL, original_sha256 text, "
    "original_chars bigint, truncated boolean, redactions text, ingested_at bigint, extracted_at bigint)",
    "CREATE INDEX record_pending ON record(id) WHERE extracted_at IS NULL",
    "CREATE TABLE mention(rec_id bigint NOT NULL, ref text NOT NULL, span_start bigint, span_end bigint, rule text)",
    "CREATE INDEX mention_rec ON mention(rec_id)",
    "CREATE INDEX mention_ref ON mention(ref, rec_id)",
    "CREATE TABLE term(term text PRIMARY KEY, blocks text NOT NULL)",
    "CREATE TABLE posting(key text PRIMARY KEY, data text NOT NULL)",
    "CREATE TABLE entity_event(id bigint PRIMARY KEY, op text NOT NULL, ref text, other text, detail text, "
    "recorded_at bigint NOT NULL)",
    "CREATE TABLE record_event(id bigint PRIMARY KEY, op text NOT NULL, recs text NOT NULL, detail text, "
    "recorded_at bigint NOT NULL)",
    "CREATE INDEX record_event_op ON record_event(op, id)",
    "CREATE TABLE lexicon_change(ref text PRIMARY KEY)",
    "CREATE TABLE lexicon_part(part integer PRIMARY KEY, data bytea NOT NULL)",
)
_DDL = tuple(re.sub(r"(\w+) text\b", r'\1 text COLLATE "C"', ddl) for ddl in _TABLE_DDL)  # byte order, as Kuzu sorts
TABLES = ("meta", "entity", "name", "assertion", "subject", "view_interval", "fact_edge", "record", "mention", "term", "posting",
          "entity_event", "record_event", "lexicon_change", "lexicon_part")


def split_url(url: str) -> tuple[str, str]:
    """A ``postgresql://`` store address as (what psycopg connects with, the store's schema): graphmem's own
    query parameter ``schema`` names the schema (default ``graphmem``) and is taken off the address."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreUnavailable(f"bad store address {redact(url)!r}: expected postgresql://...")
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), DEFAULT_SCHEMA)
    if not _SCHEMA_NAME.fullmatch(schema):
        raise StoreUnavailable(f"bad schema {schema!r} in store address {redact(url)!r}: expected lower-case "
                               "letters, digits and _, not starting with a digit (at most 63)")
    rest = urllib.parse.urlencode([(k, v) for k, v in query if k != "schema"])
    return urllib.parse.urlunsplit(parts._replace(query=rest)), schema


def lock_key(schema: str) -> int:
    """The key of the advisory lock every write to the store in ``schema`` takes (and ``migrate``)."""
    return zlib.crc32(f"graphmem:{schema}".encode()) - 2**31


def redact(url: str) -> str:
    """The address without its password (for messages)."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def layout_refusal(where: str, version: str | None) -> str:
    """Why a store of another layout is not opened, and the way forward (as the Kuzu store says it)."""
    if version is not None and version.isdigit() and int(version) < SCHEMA_VERSION:
        return (f"store {where!r} has layout {version}; this graphmem reads layout {SCHEMA_VERSION}: "
                f"run 'graphmem --store \"{where}\" migrate' (one transaction: all of it or nothing)")
    return (f"store {where!r} has layout {version}; this graphmem reads layout {SCHEMA_VERSION}: "
            "upgrade graphmem to read it")


_NEEDS_ESCAPE = re.compile(r"[\\\t\n\r]").search
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(v: Any) -> str:
    """A value other than text in COPY's text format (NULL, booleans, bigint arrays, bytea, numbers)."""
    t = type(v)
    if t is int or t is float:
        return str(v)
    if v is None:
        return "\\N"
    if t is bool:
        return "t" if v else "f"
    if isinstance(v, list | tuple):
        return "{" + ",".join(map(str, v)) + "}"
    if isinstance(v, bytes | bytearray | memoryview):
        return "\\\\x" + bytes(v).hex()
    return str(v).translate(_COPY_ESCAPES)


def _copy_line(row: Any) -> str:
    """A row as a line of COPY's text format (text escaped; a hot path of every bulk load)."""
    return "\t".join([(v.translate(_COPY_ESCAPES) if _NEEDS_ESCAPE(v) else v) if type(v) is str else _copy_text(v)
                      for v in row])


class PgBase:
    """One store in one schema of a PostgreSQL database, with the plumbing the table families share."""

    def __init__(self, url: str, ontology: Ontology, registry: Registry, *, create: bool = False,
                 repair: bool = False, read_only: bool = False, buffer_pool_mb: int | None = None) -> None:
        """``create`` makes the schema and its tables when the database has none (else StoreUnavailable).
        ``repair`` is accepted for the same calls as the Kuzu store (a PostgreSQL transaction is whole
        or absent, so no mark of an interrupted commit is ever left). ``read_only`` refuses every write
        (and the session is read-only on the server too). ``buffer_pool_mb`` is the server's business
        (shared_buffers) and is ignored."""
        self.url = str(url)
        self._conninfo, self.schema = split_url(self.url)
        self.where = redact(self.url)
        self.path = Path(self.where)  # TransactionStore.path: the store's name in messages
        self.read_only = read_only
        self.sole_writer = False  # other processes may write the same schema (serve --workers, the CLI)
        self.replica = False  # a hot standby's store (found on open below)
        self.ontology = ontology
        self.registry = registry
        self._undo = WriteUndo()
        self._in_tx = False
        self._writes = 0
        self._ticket_held = False
        self._threads: threading.local | None = None
        self._all_conns: list[psycopg.Connection[Any]] = []
        self._lock_key = lock_key(self.schema)  # the store's advisory lock
        self.entity_writes = 0
        self._postings: dict[str, tuple[str, Postings, tuple[int, int], np.ndarray]] = {}
        self._postings_held = 0
        self._facets: RecordFacets | None = None
        self._edge_labels: dict[tuple[str, str, str], str | None] = {}
        self._analyze: set[str] = set()  # tables bulk-loaded in the transaction under way (ANALYZE after its commit)
        self._main = self._connect()
        # a hot standby (a streaming replica) answers reads and refuses every write: the store is then
        # read-only whatever was asked, so nothing is tried that the server would refuse half-way
        self.replica = bool(self._q("SELECT pg_is_in_recovery()")[0][0])
        if self.replica:
            self.read_only = True
        version = self._main.info.server_version  # e.g. 150004
        self.engine = "postgresql"
        self._server_version = f"{version // 10000}.{version % 10000}"  # what `graphmem info` shows
        self._ensure_schema(create)

    def engine_version(self) -> str:
        """The server's version (``15.4``), a method as on the embedded engines (``graphmem info``)."""
        return self._server_version

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.Error as e:
            raise StoreUnavailable(f"store {self.where!r} cannot be opened: {str(e).strip().splitlines()[0]}") from None
        conn.execute(f"SET search_path TO {self.schema}")  # a checked name (split_url)
        conn.execute(f"SET lock_timeout = '{LOCK_WAIT_S}s'")  # a writer stuck holding the store's lock is named, not waited on forever
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")
        self._all_conns.append(conn)
        return conn

    # plumbing -------------------------------------------------------------------

    def per_thread_connections(self) -> None:
        """From now on each thread gets its own connection, so reads from several threads run at once."""
        self._threads = threading.local()

    def renew_if_due(self) -> None:
        """Nothing: PostgreSQL's server keeps no budget an open connection spends (the embedded stores'
        ``renew_if_due`` opens their database again)."""

    @property
    def _conn(self) -> psycopg.Connection[Any]:
        if self._threads is None:
            return self._main
        mine: psycopg.Connection[Any] | None = getattr(self._threads, "conn", None)
        if mine is None:
            mine = self._threads.conn = self._connect()
        return mine

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._release_ticket()
        for c in self._all_conns:
            with contextlib.suppress(Exception):
                c.close()

    def _fail(self, e: Exception, params: Any) -> StoreUnavailable:
        self._writes += 1  # a failed statement may have ended the transaction: counted as a write
        bad = find_bad_text(list(params) if isinstance(params, list | tuple) else params)
        if bad is not None:
            check_text(bad, "text")
        if isinstance(e, psycopg.errors.ReadOnlySqlTransaction):
            self.check_writable("run a statement that writes")
        if isinstance(e, psycopg.errors.UniqueViolation):
            return StoreUnavailable(f"store {self.where!r}: another process wrote the same key at the same time "
                                    f"({str(e).strip().splitlines()[-1].strip()}); nothing of this write was kept: "
                                    "try it again")
        if isinstance(e, psycopg.errors.LockNotAvailable):
            return StoreUnavailable(f"store {self.where!r}: another process has held the store's write lock for "
                                    f"{LOCK_WAIT_S} s; nothing was written: try again, or find the process in "
                                    "pg_stat_activity (application_name, pid) and end it")
        return StoreUnavailable(f"store {self.where!r}: database error: {str(e).strip().splitlines()[0]}")

    def _q(self, sql: str, params: Any = None, write: bool = False) -> list[tuple[Any, ...]]:
        """Run one statement; its rows (none for a statement that returns none)."""
        if write:
            self._writes += 1
        try:
            cur = self._conn.execute(sql, params)
            return cur.fetchall() if cur.description is not None else []
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise self._fail(e, params) from None

    def _w(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self._q(sql, params, write=True)

    def _many(self, sql: str, rows: list[Any]) -> None:
        """One statement for many parameter rows (pipelined by psycopg)."""
        if not rows:
            return
        self._writes += 1
        try:
            with self._conn.cursor() as cur:
                cur.executemany(sql, rows)
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise self._fail(e, rows[0]) from None

    def _copy(self, table: str, columns: str, rows: Any) -> int:
        """COPY rows into a table (the bulk path, COPY's text format written here: a third of the time of
        psycopg's row by row); the row count. A large load has the table analyzed after the commit."""
        self._writes += 1
        n = 0
        try:
            with self._conn.cursor() as cur, cur.copy(f"COPY {table}({columns}) FROM STDIN") as cp:
                chunk: list[str] = []
                for row in rows:
                    chunk.append(_copy_line(row))
                    if len(chunk) == 2000:
                        cp.write("\n".join(chunk) + "\n")
                        n += len(chunk)
                        chunk = []
                if chunk:
                    cp.write("\n".join(chunk) + "\n")
                    n += len(chunk)
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise self._fail(e, None) from None
        if n >= 5000:  # a temporary upsert_<table>'s rows end in <table> (and it is dropped at the commit)
            self._analyze.add(table.removeprefix("upsert_"))
        return n

    def _iter(self, sql: str, params: Any = None) -> Iterator[tuple[Any, ...]]:
        yield from self._q(sql, params)

    def check_writable(self, what: str = "write") -> None:
        """StoreReadOnly when the store was opened read-only or is a read-only replica."""
        if self.replica:
            raise StoreReadOnly(f"the store at {self.where!r} is a read-only replica (a PostgreSQL hot standby): "
                                f"cannot {what}; expected the primary server's address for writes")
        if self.read_only:
            raise StoreReadOnly(f"store {self.where!r} is open read-only: cannot {what}; open it without "
                                "read_only=True to write")

    def writes_done(self) -> int:
        """How many statements that write (or failed) this object has run."""
        return self._writes

    # the write lock and the server's clock ---------------------------------------------

    def _sync_clock(self) -> None:
        """Make ``model.times.now_us`` follow the server's clock (its offset measured over one round trip)."""
        t0 = time.time_ns() // 1000
        (server,) = self._q("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")[0]
        t1 = time.time_ns() // 1000
        times.set_clock_offset(int(server) - (t0 + t1) // 2)

    def _ticket(self) -> None:
        """An id is being read to number a write that has not opened its transaction yet: take the store's
        lock now (session level) so no other process takes the same id; the transaction releases it."""
        if self._in_tx or self.read_only or self._ticket_held:
            return
        self._q("SELECT pg_advisory_lock(%s)", (self._lock_key,))
        self._ticket_held = True
        self._sync_clock()

    def _release_ticket(self) -> None:
        if self._ticket_held:
            self._ticket_held = False
            self._q("SELECT pg_advisory_unlock(%s)", (self._lock_key,))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside happen together or not at all; write transactions of every process that
        shares the store commit one after another (the store's advisory lock)."""
        if self._in_tx:
            yield
            return
        self.check_writable()
        conn = self._conn
        self._q("BEGIN")
        self._in_tx = True
        self._undo = WriteUndo()
        try:
            self._q("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            if not self._ticket_held:
                self._sync_clock()
            yield
        except BaseException:
            self._in_tx = False
            self._analyze.clear()
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
            with contextlib.suppress(Exception):
                self._release_ticket()
            self.forget_postings()
            raise
        self._in_tx = False
        try:
            self._q("COMMIT")
        finally:
            self._release_ticket()
        analyze, self._analyze = sorted(self._analyze), set()
        for table in analyze:  # planner statistics for the rows just loaded (autovacuum would come later)
            self._q(f"ANALYZE {table}")

    # what a Kuzu store marks on disk; a PostgreSQL commit is whole or absent --------------

    def interrupted_commit(self) -> bool:
        """Never: a PostgreSQL transaction is committed whole (its WAL) or not at all."""
        return False

    def interrupted_write(self) -> WriteUndo | None:
        return None

    def clear_commit_mark(self) -> None:
        """Nothing to clear (see ``interrupted_commit``)."""

    # the schema and meta --------------------------------------------------------------

    def _ensure_schema(self, create: bool) -> None:
        from graphmem.store.common.codecs import dumps
        exists = bool(self._q("SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'meta'",
                              (self.schema,)))
        if not exists:
            if create and self.replica:
                self.check_writable("create a store")
            if not create or self.read_only:
                raise StoreUnavailable(f"no store at {self.where!r} (schema {self.schema} holds no graphmem tables): "
                                       "expected one made by 'graphmem init' (or graphmem.open(address, create=True))")
            with self.transaction():
                self._w(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                for ddl in _DDL:
                    self._w(ddl)
                for k, v in (("schema_version", str(SCHEMA_VERSION)), ("next_fact", "1"), ("next_record", "1"),
                             ("index_names", "1"), ("index_docs", "0"), ("index_terms", "0"),
                             ("ontology", dumps(self.ontology.fingerprint())),
                             ("registry", dumps(self.registry.fingerprint()))):
                    self._set_meta(k, v)
            return
        meta = dict(self._q("SELECT key, value FROM meta"))
        version = meta.get("schema_version")
        if version != str(SCHEMA_VERSION):
            raise StoreUnavailable(layout_refusal(self.where, version))
        self._check_compatible(meta)

    def _check_compatible(self, meta: dict[str, str]) -> None:
        import json

        from graphmem.store.common.codecs import dumps
        old_ont = json.loads(meta.get("ontology") or "{}")
        new_ont = self.ontology.fingerprint()
        for t in old_ont.get("entity_types", []):
            if t not in new_ont["entity_types"]:
                raise StoreUnavailable(f"store {self.where!r} was built with entity type {t!r}, which the loaded "
                                       "ontology lacks; load the ontology directory it was built with (--ontology)")
        old_reg: dict[str, Any] = json.loads(meta.get("registry") or "{}")
        for name, sig in self.registry.fingerprint().items():
            if name in old_reg and old_reg[name] != sig:
                raise StoreUnavailable(f"predicate {name!r} is defined differently (cardinality, object or edge) from "
                                       f"the registry store {self.where!r} was built with; load the predicates it was "
                                       "built with (--predicates)")
        added = {k: v for k, v in self.registry.fingerprint().items() if k not in old_reg}
        if (added or new_ont != old_ont) and not self.read_only:
            with self.transaction():
                self._set_meta("registry", dumps(old_reg | added))
                self._set_meta("ontology", dumps(new_ont))

    def meta(self, key: str) -> str | None:
        rows = self._q("SELECT value FROM meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def _set_meta(self, key: str, value: str) -> None:
        self._w("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, value))

    def _counter(self, key: str) -> int:
        return int(self.meta(key) or "1")

    if TYPE_CHECKING:  # defined by the table families (``PgStore`` has them all)
        def forget_postings(self) -> None: ...
        def _index_texts(self, records: list[tuple[int, str]], names: dict[int, list[str]] | None = None) -> None: ...
