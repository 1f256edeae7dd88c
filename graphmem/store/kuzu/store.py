"""The Kuzu store put together: ``Store`` is the table families (``entities``, ``events``, ``statements``,
``views``, ``records``, ``postings``, ``graph``, ``repair``) over the schema and the plumbing
(``schema``, ``base``). It is the engine behind the roles in ``graphmem/store/roles.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.store.kuzu.adhoc import AdhocQueries
from graphmem.store.kuzu.entities import _NAME, EntityTables
from graphmem.store.kuzu.events import EntityEventTables
from graphmem.store.kuzu.graph import GraphReads
from graphmem.store.kuzu.postings import _INDEX_WRITES, _POSTING, _POSTING_DROP, _TERM, PostingTables
from graphmem.store.kuzu.recordevents import RecordEventTables
from graphmem.store.kuzu.records import _RECORD, _RECORD_HIT, _RECORD_KEY, RecordTables
from graphmem.store.kuzu.repair import Repair
from graphmem.store.kuzu.schema import _SET_META
from graphmem.store.kuzu.statements import StatementTables
from graphmem.store.kuzu.views import _SUBJECT_LOG_VIEW, _SUBJECT_VIEW, ViewTables

if TYPE_CHECKING:
    from graphmem.store.roles import CypherReads, StorageEngine


class Store(EntityTables, EntityEventTables, StatementTables, ViewTables, RecordTables, RecordEventTables, PostingTables,
            GraphReads, Repair, AdhocQueries):
    """An open graphmem store: one Kuzu database in ``path/graph.kuzu`` (every role of ``StorageEngine``,
    and ``CypherReads``)."""

    _HOT = frozenset({_SET_META, _SUBJECT_VIEW, _SUBJECT_LOG_VIEW, _NAME, _RECORD_KEY, _RECORD, _RECORD_HIT, _TERM, _POSTING,
                      _POSTING_DROP, *(q for pair in _INDEX_WRITES.values() for q in pair)})


def _satisfies_roles(store: Store) -> StorageEngine:
    """Never called: mypy checks here that ``Store`` has every role of the storage interface."""
    return store


def _reads_cypher(store: Store) -> CypherReads:
    """Never called: mypy checks here that ``Store`` runs a user's read-only Cypher."""
    return store
