"""Where graphmem's data lives: the storage interface the rest of the package uses, and one folder per
engine behind it (``kuzu/``, which also drives LadybugDB; ``postgres/``), chosen by the store address in
``engines.py``. Nothing outside this folder imports an engine or
knows an on-disk encoding beyond the names exported here.

The interface is a set of small roles (``roles.py``), each a typing Protocol listing what graphmem
calls on a store for one concern: ``EntityStore``, ``EntityEventStore``, ``StatementStore``, ``ViewStore``, ``RecordStore``,
``MentionStore``, ``PostingStore``, ``GraphStore``, ``TransactionStore`` and ``RepairStore``;
``StorageEngine`` is all of them, what ``Memory`` holds. The values handed across it that are not
the model's own are in ``values.py`` (``FactEdge``, ``WriteUndo``).

A second engine goes in its own folder, ``store/<engine>/``, with a class that implements every
role (``StorageEngine``): statements append-only with their fact ids, the view a subject at a time
and from bulk batches (``StatementBatch``, ``ViewBatch``), records with their keys, mentions and
full-text postings, graph reads along the fact edges, all-or-nothing ``transaction()`` with a
commit mark that ``interrupted_commit``/``interrupted_write`` read back, and the checks and
repairs of ``RepairStore``. It keeps its layout versions and migrations in that folder, and adds
a line to ``tests/test_store_roles.py``, which checks each role at run time.

The engine's stored forms (a subject's log and view text, ...) are reached through the store a caller
holds (``store.decode_log``, ``store.view_text``, ...), never through an engine's class (the Kuzu
``Store`` is exported for the store's own tests and tools): no name of an encoding is exported here.
What the engines' folders share (the forms both keep, the cache of posting blocks, what is read from
the events) is in ``common/``; an engine's folder imports that, never another engine's.
"""

from graphmem.store.common.rows import read_back
from graphmem.store.engines import migrate_store, open_store
from graphmem.store.kuzu.base import SCHEMA_VERSION
from graphmem.store.kuzu.bulkfiles import ViewFiles
from graphmem.store.kuzu.database import (
    COMMIT_MARK,
    DB_FILE,
    MIGRATION_MARK,
    leave_open_until_exit,
    open_database,
    remove_mark,
    write_mark,
)
from graphmem.store.kuzu.migrations import migrate as migrate_layout
from graphmem.store.kuzu.statements import StatementFile
from graphmem.store.kuzu.store import Store
from graphmem.store.roles import (
    CypherReads,
    EngineInfo,
    EntityEventStore,
    EntityStore,
    GraphStore,
    MentionStore,
    PostingStore,
    RecordEventStore,
    RecordStore,
    RepairStore,
    StatementBatch,
    StatementStore,
    StorageEngine,
    TransactionStore,
    ViewBatch,
    ViewStore,
)
from graphmem.store.values import FactEdge, WriteUndo

__all__ = ["COMMIT_MARK", "DB_FILE", "MIGRATION_MARK", "SCHEMA_VERSION", "CypherReads", "EngineInfo", "EntityEventStore", "EntityStore",
           "FactEdge", "GraphStore",
           "MentionStore", "PostingStore", "RecordEventStore", "RecordStore", "RepairStore", "StatementBatch", "StatementFile",
           "StatementStore", "StorageEngine", "Store", "TransactionStore", "ViewBatch", "ViewFiles", "ViewStore",
           "WriteUndo", "leave_open_until_exit", "migrate_layout", "migrate_store", "open_database", "open_store",
           "read_back", "remove_mark", "write_mark"]
