"""The plumbing under every table family of the Kuzu store: the store object over its database
(``database.py`` opens it), one connection per thread with its prepared plans, queries, transactions with
the commit mark and the ``WriteUndo`` they keep, and COPY through bulk files.

Kuzu trap (SPEC 12): a parameterized lookup on an INT64 key scans the table,
while string keys and integer literals use the index. Integer literals are only
ever produced by ``_int``, which accepts nothing but ints.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import threading
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.config import ENGINE_FILES, StoreAddress, require_store
from graphmem.errors import StoreReadOnly, StoreUnavailable
from graphmem.model.text import check_text, find_bad_text
from graphmem.ontology.schema import Ontology, Registry
from graphmem.store.kuzu.bulkfiles import _CHUNK, _BulkFile, _chunks
from graphmem.store.kuzu.database import (
    COMMIT_MARK,
    DRIVERS,
    MIGRATION_MARK,
    BudgetGuard,
    budget_spent,
    driver,
    ends_with_process,
    keep_until_exit,
    open_database,
    release_lock,
    remove_mark,
    write_mark,
)
from graphmem.store.values import RecordFacets, WriteUndo

if TYPE_CHECKING:  # numpy loads with the first search or ingest, not with every command
    import kuzu
    import numpy as np

    from graphmem.model import Entity, Statement
    from graphmem.model.textindex import Postings


LEXICON_LAYOUT = 6  # the layout that stores the linking lexicon (store/kuzu/lexicon.py)
SCOPES_LAYOUT = 7  # the layout whose statements carry a scope (docs/scopes.md)
FACETS_LAYOUT = 8  # the layout that keeps each subject's view a predicate at a time too (SubjectFacet)
SCHEMA_VERSION = 8  # 2: records keyed by their "rec:N" ref, graphmem's own full-text index; 3: statement times as INT64 microseconds;
# 4: entity events (rename, aliases, merge); 5: record events (use, archive, revive); LEXICON_LAYOUT: the stored
# linking lexicon; SCOPES_LAYOUT: statements carry a scope; FACETS_LAYOUT: the view's rows by subject and predicate
def _int(n: int) -> str:
    """The audited way to put an integer into Cypher (see the module docstring)."""
    if type(n) is not int:  # noqa: E721  (bool is not an id)
        raise TypeError(f"expected int, got {type(n).__name__}")
    return str(n)


def _all_rows(result: Any) -> list[list[Any]]:
    """Every row of a query result, read from the driver's result object directly: the Python
    wrapper's ``get_all`` checks the result is open twice per row, which costs about a third of
    reading a large result (50,000 rows of 3 columns: 55 ms against 70 ms, Kuzu 0.11)."""
    raw = getattr(result, "_query_result", None)
    if raw is None or not hasattr(raw, "getNumTuples"):
        return result.get_all()  # type: ignore[no-any-return]
    get_next = raw.getNext
    return [get_next() for _ in range(raw.getNumTuples())]


# a query that changes the database (``writes_done`` counts them); a read that matches only costs a group a replay
_WRITING = re.compile(r"\b(CREATE|MERGE|SET|DELETE|COPY|DROP|ALTER)\b", re.I)

BY_KEYS_LOOKUPS = 16  # _by_keys: keys looked up in one query (one primary-key lookup each)
WAL_ROWS = 2000  # statements written row by row (logged, so a crash keeps or drops them with their transaction)


class StoreBase(BudgetGuard):
    """One Kuzu database in ``path/graph.kuzu`` (or LadybugDB's in ``path/graph.lbug``: the same Cypher and
    Python API), opened, with the plumbing the table families share (``schema.py`` and the modules beside
    it add the tables; ``store.Store`` puts them together)."""

    _HOT: frozenset[str] = frozenset()  # queries whose plans are kept (Store names them)

    def __init__(self, path: Path | StoreAddress, ontology: Ontology, registry: Registry, *, create: bool = False,
                 buffer_pool_mb: int | None = None, repair: bool = False, read_only: bool = False) -> None:
        """``create`` makes the store when ``path`` holds none (else that is StoreUnavailable).
        ``repair`` opens a store that holds the mark of an interrupted migration or bulk commit
        (``migrate`` and ``rebuild`` do, to make it whole); anything else refuses it. ``read_only``
        opens Kuzu read-only: other read-only processes may hold the store at the same time, and
        nothing is written, not even the store's own upkeep at open (see ``check_writable``)."""
        self.engine = path.engine if isinstance(path, StoreAddress) else "kuzu"
        if self.engine not in DRIVERS:
            raise StoreUnavailable(f"store {str(path)!r}: the {self.engine} engine is not an embedded one")
        self.address = path if isinstance(path, StoreAddress) else StoreAddress("kuzu", Path(path))
        assert self.address.folder is not None
        self.path = self.address.folder
        self._driver = driver(self.engine)
        self.read_only = read_only
        # the one process that writes the store while it is open (Kuzu's lock): what it wrote stays true
        self.sole_writer = not read_only
        self._undo = WriteUndo()  # what the transaction under way added or changed (roll_back)
        self.ontology = ontology
        self.registry = registry
        db_path = self.path / ENGINE_FILES[self.engine]
        if self.path.exists() and not self.path.is_dir():
            raise StoreUnavailable(f"store path {str(self.path)!r} is a file; expected a directory")
        if not db_path.exists() and (read_only or not create):
            require_store(self.address)
        if not read_only:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreUnavailable(f"store {str(self.path)!r} cannot be opened: {e}") from None
        if not repair:  # before Kuzu opens it: a store cut short in a bulk commit may not open read-only
            self._refuse_interrupted()
        # Kuzu's default pool is 80% of RAM, and setting it up costs about 1.3 ms per GiB at open
        self._pool_bytes = 0 if buffer_pool_mb is None else buffer_pool_mb * 2**20
        self._db = open_database(self.path, self._pool_bytes, read_only, self.engine, repair)
        self._count_open()
        self._main: tuple[Any, dict[str, Any]] = (self._driver.Connection(self._db), {})  # a connection and its prepared plans
        self._in_tx = False
        self._bulk_written = False
        self._writes = 0  # queries that wrote or failed (writes_done)
        self._writing: dict[str, bool] = {}  # query text -> whether it writes
        self._threads: threading.local | None = None  # set by per_thread_connections()
        self._plan_generation = 0  # bumped when tables are recreated: every connection's plans are stale
        self._all_conns: list[Any] = []
        self._node_refs: dict[int, dict[int, str]] = {}  # entity table id -> node offset -> ref (see _refs_of)
        self._node_counts: dict[str, int] = {}
        self._node_tables: dict[int, str] | None = None
        self._pairs: set[tuple[str, str, str]] | None = None  # (edge label, from type, to type) with an edge
        self._probed: set[tuple[str, str, str]] = set()  # the pairs asked about since _pairs was last None
        self._allowed: list[tuple[str, str, str]] = []  # the pairs the ontology allows, between tables the store has
        self.entity_writes = 0  # entities written through this object (what caches of entities key on)
        # decoded postings by term, with the block sizes they were read at; a write drops what it touches
        self._postings: dict[str, tuple[str, Postings, tuple[int, int], np.ndarray]] = {}
        self._postings_held = 0
        self._index_stats: tuple[int, int] | None = None
        self._facets: RecordFacets | None = None  # the records' filter columns (records.py), dropped with the postings
        self._mentioning: dict[str, np.ndarray] = {}  # entity ref -> ids of the records mentioning it (records.py)
        self._edge_labels: dict[tuple[str, str, str], str | None] = {}  # (subject type, predicate, object prefix)
        self._time_texts: dict[int, str] = {}  # instant -> its Kuzu TIMESTAMP text (edge keys; times repeat)
        if not read_only:  # a reader leaves tmp/ alone: it is not the one process that may write there
            self._clear_bulk_files()
        self._repairing = self.interrupted_commit()  # the mark stays until the repair is done (clear_commit_mark)
        self._ensure_schema()

    def engine_version(self) -> str:
        """The version of the engine's Python module (Kuzu's or LadybugDB's)."""
        return str(self._driver.__version__)

    def layout_version(self) -> int:
        """The store's layout (schema) version, as its ``Meta`` table says."""
        rows = self._q("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value")
        return int(rows[0][0]) if rows else SCHEMA_VERSION

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
                                             "undo": self._undo.to_dict()})

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
            for f in [*tmp.glob("tmp*.csv"), *tmp.glob("tmp*.marshal")]:  # (the statements' side files)
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
            mine = self._threads.conn = (self._driver.Connection(self._db), {})
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
        if self._spent:  # its objects are kept to the process's end, untouched (_give_up)
            return
        if self._db is not None and ends_with_process() and self._leave_open():
            return
        with contextlib.suppress(Exception):
            for c in [*self._all_conns, self._main[0]]:
                c.close()
            self._db.close()
        if self.engine == "kuzu":
            release_lock(self._db)
        else:  # (graphmem's lock goes with the database object, after LadybugDB's own)
            # LadybugDB releases the store's lock only when its objects are freed, not at close: drop them
            # (connections, prepared plans, the database), so another process may open the store at once
            self._main[1].clear()
            self._main = (None, {})
            self._all_conns = []
            self._threads = None
            self._db = None

    def _leave_open(self) -> bool:
        """``close`` when the process ends right after (``leave_open_until_exit``): a writer's log folded
        into the database (``CHECKPOINT``, what the engine's close does), then the engine's objects kept for
        the process's end. False when the checkpoint fails (then the store is closed as usual)."""
        if not self.read_only:
            try:
                self._main[0].execute("CHECKPOINT")
            except RuntimeError as e:
                if budget_spent(e):  # what the command committed is in the log, which the next open replays
                    self._mark_spent()
                    return True
                return False
        keep_until_exit(self.path, (*self._all_conns, self._main[0], self._db))
        self._main = (None, {})
        self._all_conns = []
        self._threads = None
        self._db = None
        return True

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
        writes = self._writing.get(query)
        if writes is None:
            if len(self._writing) >= 10_000:  # queries with literals inlined: keep the memo bounded
                self._writing.clear()
            writes = self._writing[query] = bool(_WRITING.search(query))
        if writes:
            self._writes += 1
        if self._spent:
            self._give_up()
        try:
            if params and (hot or query in self._HOT):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    result = self._conn.execute(self._prepared(query), params)
            else:
                result = self._conn.execute(query, params or {})
        except RuntimeError as e:
            self._writes += 1  # a failed query may have ended the transaction: count it as a write
            self._given_up_by(e)
            self._refuse_bad_text(params)
            if self.read_only and "read-only" in str(e):  # a write that did not come through check_writable
                self.check_writable("run a query that writes")
            raise StoreUnavailable(f"store {str(self.path)!r}: database error: {str(e).splitlines()[0]}") from None
        if writes and not self._in_tx:  # committed on its own
            self._count_commit()
        assert not isinstance(result, list)
        return _all_rows(result)

    def _by_keys(self, match: str, returns: str, keys: list[Any], *, key: str = "ref") -> list[list[Any]]:
        """The rows of ``match`` (a pattern over a node ``x`` keyed by its primary key ``key``, one
        ``{k}`` where the key goes) for every key in ``keys``: ``RETURN returns``, rows in no set order
        (return the key to tell them apart). One query per ``BY_KEYS_LOOKUPS`` keys, each one
        primary-key lookup per key joined by ``UNION ALL`` (its plan kept per number of keys): Kuzu
        plans a list (``x.ref IN $keys``) as a scan of every node, 10-16 ms at 100,000 records and more
        with a longer list, against 0.1-0.2 ms a lookup; a lookup costs more in a query of more branches
        (100 hits: 24 ms in queries of 16, 28 of 32, 33 of 64)."""
        rows: list[list[Any]] = []
        for at in range(0, len(keys), BY_KEYS_LOOKUPS):
            part = keys[at:at + BY_KEYS_LOOKUPS]
            query = " UNION ALL ".join(f"MATCH {match.replace('{k}', '{' + key + ': $k' + str(i) + '}')} RETURN {returns}"
                                       for i in range(len(part)))
            rows += self._q(query, {f"k{i}": k for i, k in enumerate(part)}, hot=True)
        return rows

    def _iter(self, query: str, params: dict[str, Any] | None = None, conn: kuzu.Connection | None = None) -> Iterator[
            list[Any]]:
        """Stream the rows of a large result instead of materializing them all, read from Kuzu's
        result object directly (the Python wrapper's checks on each row cost a third of the read)."""
        if self._spent:
            self._give_up()
        self._streams += 1  # the database is not opened again under the result (_renew_if_due)
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
            self._writes += 1
            self._given_up_by(e)
            self._refuse_bad_text(params)
            raise StoreUnavailable(f"store {str(self.path)!r}: database error: {str(e).splitlines()[0]}") from None
        finally:
            self._streams -= 1

    @staticmethod
    def _refuse_bad_text(params: dict[str, Any] | None) -> None:
        """Kuzu cannot take text that is not valid Unicode (a lone surrogate, say from an undecodable
        byte of a command-line argument): that is bad input, named as such, not a database error."""
        bad = find_bad_text(list((params or {}).values()))
        if bad is not None:
            check_text(bad, "text")

    def check_writable(self, what: str = "write") -> None:
        """StoreReadOnly when the store was opened read-only: every write of graphmem comes here first
        (``transaction``, and the bulk files a large import or rebuild writes before its transaction)."""
        if self.read_only:
            raise StoreReadOnly(f"store {str(self.path)!r} is open read-only: cannot {what}; open it without "
                                "read_only=True to write")

    def writes_done(self) -> int:
        """How many queries that write (or that failed) this store has run: unchanged across a call, the
        call wrote nothing, so a write refused as bad input inside a shared transaction leaves it whole."""
        return self._writes

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside happen together or not at all."""
        if self._in_tx:
            yield
            return
        self.check_writable()
        self._renew_if_due()
        self._q("BEGIN TRANSACTION")
        self._in_tx = True
        self._undo = WriteUndo()
        written = self._writes
        try:
            yield
        except BaseException:
            self._in_tx = False
            self._bulk_written = False  # the rollback's own checkpoint follows
            if self._spent:  # nothing more may reach the engine (_mark_spent); the next process rolls it back
                raise
            self._unless_spent(self._conn, "ROLLBACK")
            if self._writes == written:  # refused before it wrote (bad input): nothing to clear
                raise
            # Kuzu 0.11.3 keeps version marks of rolled-back updates, and the next update of the same row
            # then fails with a write-write conflict (or crashes); a checkpoint clears them
            self._unless_spent(self._conn, "CHECKPOINT")
            self._count_checkpoint()
            self.forget_postings()
            self._index_stats = None
            raise
        self._in_tx = False
        if not self._bulk_written:
            self._q("COMMIT")
            if self._writes != written:
                self._count_commit()
            return
        # rows bulk-loaded by COPY reach the database file only at a checkpoint (and are read much slower
        # until then: search at 100k records, 6.6 ms p50 before, 4.2 ms after); Kuzu 0.11 runs one at the
        # commit of a COPY, the explicit one makes sure of it (LadybugDB, later Kuzu); each is counted
        self._bulk_written = False
        if not self._repairing:  # a store under repair carries the mark already; the finished repair removes it
            self._mark_commit()
        self._q("COMMIT")
        self._count_commit()
        self._q("CHECKPOINT")
        self._count_checkpoint()
        if not self._repairing:
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
            self._count_copy([Path(f.name) for f in files])

    if TYPE_CHECKING:  # defined by the table families (``Store`` has them all); declared here for the others
        def _ensure_schema(self) -> None: ...
        def next_fact_id(self) -> int: ...
        def set_next_fact_id(self, n: int) -> None: ...
        def next_record_id(self) -> int: ...
        def forget_postings(self) -> None: ...
        def _index_texts(self, records: list[tuple[int, str]], names: dict[int, list[str]] | None = None) -> None: ...
        def entity(self, ref: str) -> Entity | None: ...
        def all_entities(self) -> Iterator[Entity]: ...
        def subject_log(self, ref: str) -> list[Statement]: ...
        def record_hit(self, rec_id: int) -> tuple[str, int, str, str | None, str | None, float] | None: ...
        def record_hits(self, rec_ids: list[int]) -> dict[int, tuple[str, int, str, str | None, str | None, float]]: ...
        def all_record_keys(self) -> dict[str, int]: ...
        def add_mentions(self, rec_id: int, mentions: Iterable[tuple[str, int, int, str]]) -> int: ...
        def _ref_of(self, node: dict[str, int]) -> str: ...
        def _refs_of(self, nodes: list[dict[str, int]]) -> list[str]: ...
        def _lexicon_drop(self) -> None: ...
        def forget_redirects(self) -> None: ...
        def _note_plans(self, rec_ids: list[int]) -> None: ...
        _plan_mentions: dict[str, list[int]] | None
        def mentioned_by(self, rec_ids: list[int]) -> dict[int, list[str]]: ...
