"""The database file of an embedded store (Kuzu, or LadybugDB with the same API): the engine's module,
opening it with graphmem's own lock beside the engine's, the marks a write leaves beside it, who holds it,
closing it at the end of a process (``leave_open_until_exit``), and the engine's address-space budget for
an open database (``BudgetGuard``)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

from graphmem.config import ENGINE_FILES, ENGINE_NAMES
from graphmem.errors import StoreUnavailable
from graphmem.store.common.codecs import dumps

DB_FILE = ENGINE_FILES["kuzu"]  # a Kuzu store's database; a LadybugDB store's is ENGINE_FILES["ladybug"]
DRIVERS = {"kuzu": "kuzu", "ladybug": "ladybug"}  # engine -> the Python module that drives it (the same API)
ENGINE_LOCK = "graphmem.lock"  # graphmem's own lock on a store: readers shared, a writer alone (_hold_lock)
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


def driver(engine: str = "kuzu") -> Any:
    """The Python module of an embedded engine (``kuzu`` or ``ladybug``), imported on first use, so a
    process loads only the engine it opens. Kuzu's and LadybugDB's modules register the same native
    type names, so one process cannot load both: the second is StoreUnavailable (``graphmem copy``
    runs each engine in its own process)."""
    name = DRIVERS[engine]
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    other = next((o for o, m in DRIVERS.items() if o != engine and m in sys.modules), None)
    if other is not None:  # importing the second would fail, and leave the process to crash at exit
        raise StoreUnavailable(f"cannot open a {ENGINE_NAMES[engine]} store: this process has loaded "
                               f"{ENGINE_NAMES[other]}, and the two engines' modules cannot share a process "
                               "(graphmem copy moves a store between them)")
    try:
        return importlib.import_module(name)
    except (ImportError, RuntimeError) as e:
        raise StoreUnavailable(f"cannot open a {ENGINE_NAMES[engine]} store: its module {name!r} cannot be "
                               f"loaded: {str(e).splitlines()[0]}") from None


def engine_version(engine: str) -> str:
    """The version of an embedded engine's module (``kuzu.__version__``)."""
    return str(driver(engine).__version__)


# graphmem's lock files this process holds, by the store's resolved path: [open file, readers, writers]. One
# file a store: POSIX locks belong to the process, so a second descriptor's close would let go of them all
_HELD: dict[Path, list[Any]] = {}
_HELD_GUARD = threading.Lock()


class StoreLock:
    """One open database's hold on graphmem's lock of its store (``_hold_lock``). The holds of one process
    on one store share its lock file: the lock is exclusive while any of them writes, shared while they
    only read, and let go when the last is closed (``close``, or when the hold is freed)."""

    def __init__(self, where: Path, write: bool) -> None:
        self.where, self.write, self.held = where, write, True

    def close(self) -> None:
        with _HELD_GUARD:
            if not self.held:
                return
            self.held = False
            entry = _HELD.get(self.where)
            if entry is None:
                return
            entry[2 if self.write else 1] -= 1
            if entry[1] == entry[2] == 0:
                del _HELD[self.where]
                entry[0].close()
            elif self.write and entry[2] == 0:  # the readers left keep it shared
                import fcntl
                with contextlib.suppress(OSError):
                    fcntl.lockf(entry[0], fcntl.LOCK_SH | fcntl.LOCK_NB)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # (at the interpreter's teardown: the exit lets go of the lock)
            self.close()


def _hold_lock(path: Path, engine: str, read_only: bool) -> StoreLock | None:
    """graphmem's own lock on a store (``ENGINE_LOCK``): shared by readers, held alone by the writer, Kuzu's
    rule. LadybugDB takes no lock for a read-only open, so without it a writer and readers could hold a
    store at once; on Kuzu it keeps the store the writer's while its database is closed and opened again
    (``BudgetGuard._renew``), when Kuzu's own lock is let go. None when there is no lock to take: a folder
    graphmem cannot write to (no writer can be there either), or a Kuzu store that no graphmem writer has
    opened since it gained the file (a Kuzu reader does not make it: Kuzu's own lock keeps writers out)."""
    import fcntl
    lock = path / ENGINE_LOCK
    where = lock.resolve()
    with _HELD_GUARD:
        entry = _HELD.get(where)
        if entry is None:
            try:
                f = open(lock, "r+b" if read_only and engine == "kuzu" else "a+b")  # noqa: SIM115  (held)
            except OSError:
                return None
            entry = [f, 0, 0]
        if not read_only and entry[2]:
            # two databases of one file in one process each keep their own pages and log: each commits over
            # the other's writes (both acknowledged, one kept), where Kuzu's own lock sees one process
            raise StoreUnavailable(f"store {str(path)!r} is open to write already in this process: close that open "
                                   "first, or write through it (graphmem lets one open write to a store)")
        if not read_only and entry[2] == 0 or entry[1] == entry[2] == 0:
            try:
                fcntl.lockf(entry[0], (fcntl.LOCK_SH if read_only else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            except OSError:
                if entry[1] == entry[2] == 0:
                    entry[0].close()
                from graphmem.config import server_holding
                holder = server_holding(path) or lock_holder(lock) or "another process"
                raise StoreUnavailable(f"store {str(path)!r} is in use by {holder} (graphmem lets one process "
                                       "write to a store, or several read it at once)") from None
        entry[1 if read_only else 2] += 1
        _HELD[where] = entry
        return StoreLock(where, not read_only)


# Set by ``leave_open_until_exit``: the engine objects of the stores closed since, each with its store's
# path, left for the process's end to free (``keep_until_exit``)
_LEFT: list[tuple[Path, tuple[Any, ...]]] | None = None


def leave_open_until_exit() -> None:
    """Let every store this process closes from now on leave its database to the process's end: the
    process ends right after (the command line, whose ``main`` ends with ``os._exit``). A writer's close
    folds its write-ahead log into the database first, as the engine's close does; then the engine's
    objects are kept, not torn down one by one (8-11 ms at 1M; a cold ``current`` 6 ms faster, docs/benchmarks.md,
    "What a cold process pays for the engine itself"). Opening the same store again in this process closes
    them first."""
    global _LEFT
    if _LEFT is None:
        _LEFT = []


def ends_with_process() -> bool:
    """Whether ``leave_open_until_exit`` was called: a store's close then calls ``keep_until_exit``."""
    return _LEFT is not None


def keep_until_exit(path: Path, objects: tuple[Any, ...]) -> None:
    """Keep a closed store's engine objects (its connections, then its database) for the process's end."""
    assert _LEFT is not None
    _LEFT.append((path.resolve(), objects))


def _close_left(path: Path) -> None:
    """Close for real what a store at ``path`` left open (``leave_open_until_exit``), before it opens again."""
    if not _LEFT:
        return
    where = path.resolve()
    for item in [x for x in _LEFT if x[0] == where]:
        _LEFT.remove(item)
        conns, db = item[1][:-1], item[1][-1]
        with contextlib.suppress(Exception):
            for c in conns:
                c.close()
            db.close()
        release_lock(db)


def release_lock(db: Any) -> None:
    """Let go of graphmem's lock held with ``db`` (``_hold_lock``), once the database is closed."""
    lock = getattr(db, "_graphmem_lock", None)
    if lock is not None:
        lock.close()


# The engine's address-space budget for each open database (``max_db_size``): None is the engine's own,
# 8 TiB. Kuzu 0.11 spends some of it at every checkpoint and gives none back until the database is closed;
# tests set a small one to reach its end (docs/engines.md)
DB_BUDGET: int | None = None
ENGINE_BUDGET = 1 << 43  # Kuzu's own budget (8 TiB)
PAGE_GROUP = 4 << 20  # what Kuzu takes of it at a time: a group of 1,024 pages of 4 KiB for one of its files
# A Kuzu store open to write is closed and opened again, which gives the whole budget back, before a write
# once the most it may have spent passes this share of its budget (``BudgetGuard._renew``; None: never)
RENEW_AT: float | None = 0.25
# What Kuzu says when that budget is spent: the checkpoint failed, and closing the database now (its own
# checkpoint at close, at the latest when the process ends) would leave the file unreadable
BUDGET_SPENT = "No more frame groups can be added to the allocator"


def budget_spent(error: BaseException) -> bool:
    """Whether ``error`` is the engine's: the open database's address-space budget is spent (``BUDGET_SPENT``)."""
    return BUDGET_SPENT in str(error)


def never_free(*objects: Any) -> None:
    """Keep the engine's objects (a spent database and its connections) until the process ends, and past
    the interpreter's own teardown: freeing them runs the engine's close, whose checkpoint cannot succeed
    on a spent budget and leaves the database file unreadable (measured on Kuzu 0.11.3, docs/service.md).
    Left alone, the file stays as the last commit left it, and the next process opens it whole."""
    import ctypes
    for o in objects:
        if o is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(o))


class BudgetGuard:
    """An embedded store's open database and the engine's address-space budget for it (``DB_BUDGET``).

    Kuzu 0.11 takes a ``PAGE_GROUP`` of the budget each time one of its files grows past a multiple of 4
    MiB, and never gives one back while the database is open; every checkpoint writes its shadow pages
    into a file it empties afterwards, so each checkpoint spends anew (read in Kuzu's ``FileHandle`` and
    ``ShadowFile``, v0.11). The store counts the most that can have been spent (``_count``): a checkpoint
    shadows each page of the database file at most once, so it takes at most the file's size and two
    groups, and the file's growth takes its own. Before a write, once that passes ``RENEW_AT`` of the
    budget, the database is closed and opened again (``_renew``), which gives it all back.

    Should the budget run out all the same (``budget_spent``), nothing reaches the engine again in this
    process and its objects are never freed (``never_free``). The store checks ``_spent`` before every
    query and calls ``_give_up`` (or ``_mark_spent``, on a path that is raising already) when the engine
    says so."""

    path: Path
    engine: str
    read_only: bool
    _driver: Any
    _db: Any
    _main: tuple[Any, dict[str, Any]]
    _all_conns: list[Any]
    _threads: threading.local | None
    _pool_bytes = 0  # the buffer pool the database was opened with
    _spent = False  # the budget is spent: no query runs (_give_up)
    _used = 0  # the most of the budget the open database can have spent (_count)
    _size = 0  # the database file's size when last counted
    _streams = 0  # results being read row by row (StoreBase._iter): the database is not opened again under them
    renewals = 0  # times the database was closed and opened again (_renew)

    def _counts(self) -> bool:
        """Whether this store counts its budget: Kuzu open to write (LadybugDB gives it back at each
        checkpoint; a reader writes no checkpoint)."""
        return self.engine == "kuzu" and not self.read_only

    def _count(self, checkpoint: bool) -> None:
        """Add to ``_used`` the database file's growth since it was last counted and, after a checkpoint,
        the file's size and two groups (the shadow pages, and the shadow file's first page)."""
        try:
            size = (self.path / DB_FILE).stat().st_size
        except OSError:
            return
        self._used += max(0, size - self._size) + (size + 2 * PAGE_GROUP if checkpoint else 0)
        self._size = max(self._size, size)

    def _count_open(self) -> None:
        """What opening the database took: a group per 4 MiB of its file, and a checkpoint (a log left
        by a process that ended without one is folded in at open)."""
        self._used, self._size = 0, 0
        if self._counts():
            self._count(True)

    def _count_commit(self) -> None:
        """After a commit that wrote: Kuzu folded its log into the database by itself when the log is gone
        (its checkpoint when the log passes 16 MB)."""
        if self._counts():
            self._count(not (self.path / (DB_FILE + ".wal")).exists())

    def _count_checkpoint(self) -> None:
        if self._counts():
            self._count(True)

    def _count_copy(self, files: list[Path]) -> None:
        """After a COPY: the rows Kuzu set aside for it on disk when its memory ran short (its spill file
        grows the same way), at most twice the files' text."""
        if self._counts():
            self._used += 2 * sum(f.stat().st_size for f in files if f.exists())

    def _renew_if_due(self, alone: bool = False) -> None:
        """Before a write (``transaction``): ``_renew`` once ``_used`` passes ``RENEW_AT`` of the budget, no
        result is being read row by row, and this thread holds the store alone: the store has one connection,
        or ``alone`` says so. With a connection per thread (the service) other threads may be reading, and a
        write may be one of theirs (the use events a search writes), so the service renews between its
        writes instead (``renew_if_due``)."""
        if (RENEW_AT is not None and self._used > RENEW_AT * (DB_BUDGET or ENGINE_BUDGET) and not self._streams
                and (alone or self._threads is None) and self._counts() and not self._spent):
            self._renew()

    def renew_if_due(self) -> None:
        """Open the database again if its budget is due to be given back (``_renew``); the caller holds the
        store alone: no transaction under way, no other thread using it (the service's write lock)."""
        self._renew_if_due(alone=True)

    def _renew(self) -> None:
        """Fold the log into the database, close it and open it again, which gives the engine's whole
        budget back; graphmem's lock on the store (``_hold_lock``) is held throughout, so no other
        graphmem process can take the store while Kuzu's own lock is let go. The caller holds the store
        alone (no transaction, no other thread reading). Opened again, every connection and plan is new."""
        conn = self._main[0]
        try:
            conn.execute("CHECKPOINT")  # the close finds nothing more to fold in (its own could not be guarded)
        except RuntimeError as e:
            self._given_up_by(e)
            return  # (another transaction open, say): not now; a later write tries again
        lock = getattr(self._db, "_graphmem_lock", None)
        with contextlib.suppress(Exception):
            for c in [*self._all_conns, conn]:
                c.close()
            self._db.close()
        self._all_conns = []
        self._main = (None, {})
        if self._threads is not None:
            self._threads = threading.local()  # each thread makes its connection again
        try:
            self._db = open_database(self.path, self._pool_bytes, False, self.engine, lock=lock)
        except StoreUnavailable:  # another program took Kuzu's lock meanwhile: this one cannot go on
            self._db = None
            self._spent = True
            if lock is not None:
                lock.close()
            raise
        self._main = (self._driver.Connection(self._db), {})
        self.renewals += 1
        self._count_open()

    def _mark_spent(self) -> None:
        """The engine's address-space budget for this open database is spent (Kuzu 0.11 spends some at
        every checkpoint and gives none back, docs/engines.md): its checkpoint failed, and any further
        checkpoint, the one at close included, would leave the file unreadable. So nothing reaches the
        engine again in this process and its objects are never freed (``never_free``); the file stays as
        the last commit left it."""
        if not self._spent:
            self._spent = True
            never_free(*self._all_conns, self._main[0], self._db)

    def _give_up(self) -> None:
        """``_mark_spent``, then StoreUnavailable saying to open the store again in a new process."""
        self._mark_spent()
        raise StoreUnavailable(f"store {str(self.path)!r}: the database engine has used up what it sets aside for "
                               "this open store (Kuzu spends some at every checkpoint and gives it back only when the "
                               "store is closed); what was committed is kept: end this process and open the store "
                               "again (restart the server)")

    def _given_up_by(self, error: BaseException) -> None:
        """``_give_up`` when the engine's ``error`` says the budget is spent (else nothing)."""
        if budget_spent(error):
            self._give_up()

    def _unless_spent(self, conn: Any, statement: str) -> None:
        """Run ``statement`` (a rollback's) on ``conn`` unless the budget is spent, any failure passed over;
        one that says the budget is spent marks it so (the error under way is the one raised)."""
        if self._spent:
            return
        try:
            conn.execute(statement)
        except Exception as e:
            if budget_spent(e):
                self._mark_spent()


def open_database(path: Path, pool_bytes: int = 0, read_only: bool = False, engine: str = "kuzu",
                  repair: bool = False, lock: Any = None) -> Any:
    """The database of the store at ``path`` (Kuzu's, or LadybugDB's with ``engine="ladybug"``); a store
    another process holds, or one the engine cannot open, is StoreUnavailable naming the holder or the
    reason. Kuzu lets one process open a store to write, or several open it read-only at once (a lock
    on the database file).

    A process killed while it wrote a large transaction's log can leave the log's last record cut short.
    Kuzu 0.11 replays the log up to it; LadybugDB checks each record's checksum and refuses the whole
    database. With ``repair`` (``graphmem rebuild``), LadybugDB is told to replay up to that record too
    (``throw_on_wal_replay_failure=False``): what follows it is the unfinished write, which was never
    acknowledged (docs/engines.md, "Differences between Kuzu and LadybugDB").

    ``lock`` is graphmem's lock on the store, held already (a database opened again: ``BudgetGuard._renew``)."""
    db_file = path / ENGINE_FILES[engine]
    mod = driver(engine)
    _close_left(path)
    held = lock if lock is not None else _hold_lock(path, engine, read_only)
    extra: dict[str, Any] = {"throw_on_wal_replay_failure": False} if repair and engine == "ladybug" else {}
    if DB_BUDGET is not None:
        extra["max_db_size"] = DB_BUDGET
    try:
        db = mod.Database(str(db_file), buffer_pool_size=pool_bytes, read_only=read_only, **extra)
        if held is not None:
            db._graphmem_lock = held  # released with the database object (Store.close drops it)
        return db
    except RuntimeError as e:
        if held is not None and lock is None:
            held.close()
        msg = str(e).splitlines()[0]
        if read_only and "shadow pages" in str(e):
            # a write was cut short and left its log, which Kuzu replays only in a writable open: open
            # writable this once (graphmem itself still writes nothing: the Store stays read-only)
            return open_database(path, pool_bytes, read_only=False, engine=engine, repair=repair)
        if "mmap for size" in msg.lower():
            # each open database reserves the engine's largest database size (8 TiB) of the process's 128 TiB
            # of address space; the default stays: Kuzu 0.11 also spends it on every checkpoint (docs/engines.md)
            raise StoreUnavailable(f"store {str(path)!r} cannot be opened: this process holds as many stores open "
                                   f"as it can (15); close one first ({msg})") from None
        if "wal file is corrupted" in msg.lower():
            raise StoreUnavailable(f"store {str(path)!r} cannot be opened: its write-ahead log ends in a write "
                                   f"that was cut short ({msg}); run 'graphmem rebuild' to open it without that "
                                   "unfinished write") from None
        if "lock" in msg.lower():
            from graphmem.config import server_holding
            holder = server_holding(path) or lock_holder(db_file) or "another process"
            raise StoreUnavailable(f"store {str(path)!r} is in use by {holder} (Kuzu lets one process write "
                                   "to a store, or several read it at once)") from None
        raise StoreUnavailable(f"store {str(path)!r} cannot be opened: {msg}") from None
    except OSError as e:
        if held is not None and lock is None:
            held.close()
        raise StoreUnavailable(f"store {str(path)!r} cannot be opened: {e}") from None


def lock_holder(db_file: Path) -> str | None:
    """'process N (its command line), reading' or '..., writing': a process holding Kuzu's lock on
    ``db_file`` (Linux, where ``fcntl`` names the holder of a lock), else None."""
    import struct
    import sys
    if sys.platform != "linux" or struct.calcsize("l") != 8:
        return None  # struct flock is laid out differently elsewhere
    import fcntl
    layout = "hhqqi4x"  # l_type, l_whence, l_start, l_len, l_pid
    try:
        fd = os.open(db_file, os.O_RDONLY)
        try:
            got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(layout, fcntl.F_WRLCK, 0, 0, 0, 0))
        finally:
            os.close(fd)
        kind, _, _, _, pid = struct.unpack(layout, got)
    except (OSError, struct.error):
        return None
    if kind == fcntl.F_UNLCK or pid <= 0:
        return None
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        command = " ".join(a.decode("utf-8", "replace") for a in argv if a)
    except OSError:
        command = ""
    if len(command) > 80:
        command = command[:77] + "..."
    return (f"process {pid}" + (f" ({command})" if command else "")
            + (", reading" if kind == fcntl.F_RDLCK else ", writing"))
