"""The PostgreSQL store put together: ``PgStore`` is the table families (``entities``, ``statements``,
``views``, ``records``, ``postings``, ``graph``) over the plumbing (``base``). It is an engine behind
the roles in ``graphmem/store/roles.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.store.postgres.graph import PgGraph
from graphmem.store.postgres.migrations import migrate_layout

__all__ = ["PgStore", "migrate_layout"]  # migrate_layout: ``graphmem migrate`` (store/engines.py)

if TYPE_CHECKING:
    from graphmem.store.roles import StorageEngine


class PgStore(PgGraph):
    """An open graphmem store in one schema of a PostgreSQL database (every role of ``StorageEngine``).

    ``PgStore(url, ontology, registry, create=False, repair=False, read_only=False, buffer_pool_mb=None)``:
    ``url`` is ``postgresql://[user[:password]@][host][:port]/database[?schema=NAME&...]`` (libpq's
    parameters pass through; ``schema`` is graphmem's own, default ``graphmem``).
    """


def _satisfies_roles(store: PgStore) -> StorageEngine:
    """Never called: mypy checks here that ``PgStore`` has every role of the storage interface."""
    return store
