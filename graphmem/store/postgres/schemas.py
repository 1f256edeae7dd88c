"""A PostgreSQL store's schema as a whole: whether one is there, and taking back one a failed first write
made (``store.engines.cleanup_on_failure``: a command that creates a store and then fails leaves none)."""

from __future__ import annotations

import contextlib

import psycopg

from graphmem.store.postgres.base import split_url


def schema_exists(url: str) -> bool:
    """Whether the schema ``url`` names exists (with or without graphmem's tables); False when the server
    cannot be reached (the open that follows says why)."""
    conninfo, schema = split_url(url)
    try:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            return conn.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s",
                                (schema,)).fetchone() is not None
    except psycopg.Error:
        return False


def drop_schema(url: str) -> None:
    """Remove the schema ``url`` names with everything in it (only ever one this process made); a server
    that cannot be reached now keeps it (the error being raised already says what failed)."""
    conninfo, schema = split_url(url)
    with contextlib.suppress(psycopg.Error), psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # a checked name (split_url)
