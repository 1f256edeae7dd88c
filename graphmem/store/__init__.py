"""Where graphmem's data lives: the storage interface the rest of the package uses, and one folder per
engine behind it (``kuzu/``, the only one today). Nothing outside this folder imports an engine or
knows an on-disk encoding beyond the names exported here."""

from graphmem.store.kuzu.store import (
    COMMIT_MARK,
    DB_FILE,
    MIGRATION_MARK,
    SCHEMA_VERSION,
    FactEdge,
    StatementFile,
    Store,
    ViewFiles,
    WriteUndo,
    decode_log,
    kuzu_time_text,
    loads,
    log_text,
    open_database,
    pack,
    remove_mark,
    same_view,
    statements_from_log,
    unpack,
    view_text,
    write_mark,
)

__all__ = ["COMMIT_MARK", "DB_FILE", "MIGRATION_MARK", "SCHEMA_VERSION", "FactEdge", "StatementFile", "Store",
           "ViewFiles", "WriteUndo", "decode_log", "kuzu_time_text", "loads", "log_text", "open_database", "pack",
           "remove_mark", "same_view", "statements_from_log", "unpack", "view_text", "write_mark"]
