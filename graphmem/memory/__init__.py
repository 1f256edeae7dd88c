"""The Python API: everything the command line does, as methods of ``Memory``.

``Memory`` is a facade: each method hands its call to the part that owns it: ``graphmem.write``
(validate once, apply once), ``graphmem.view`` (reads, rebuild, lint), ``graphmem.evidence``,
``graphmem.transfer`` and ``graphmem.retrieval``.

>>> import graphmem, tempfile
>>> m = graphmem.open(tempfile.mkdtemp(), create=True)
>>> m.add_entity("Project", "Atlas").refs
('project:atlas',)
>>> m.close()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphmem.config import StoreAddress, store_address
from graphmem.evidence.query import search_terms, snippet
from graphmem.evidence.runs import EXTRACT_MAX_CHARS
from graphmem.memory.base import schema_dirs
from graphmem.memory.entities import EntityFacade
from graphmem.memory.evidence import EvidenceFacade
from graphmem.memory.lifecycle import LifecycleFacade
from graphmem.memory.query import QueryFacade
from graphmem.memory.reads import ReadFacade
from graphmem.memory.retrieval import RetrievalFacade
from graphmem.memory.writes import WriteFacade
from graphmem.reports import MigrateReport
from graphmem.write.inputs import parse_fact_ref, parse_record_ref
from graphmem.write.validate import slug

# names other modules import from here
__all__ = ["EXTRACT_MAX_CHARS", "Memory", "migrate", "open", "parse_fact_ref", "parse_record_ref",
           "schema_dirs", "search_terms", "slug", "snippet"]


class Memory(EntityFacade, WriteFacade, ReadFacade, QueryFacade, EvidenceFacade, RetrievalFacade, LifecycleFacade):
    """An open store with its ontology and predicate registry.

    ``buffer_pool_mb`` sizes Kuzu's page cache (default: Kuzu's own, 80% of RAM). A smaller pool opens
    faster (Kuzu sets the pool up at open, about 1.3 ms per GiB) and suits a process that looks up a few
    subjects; whole-store work (import, rebuild, lint) needs the default.

    Attributes
    ----------
    path : Path or str
        The store's folder; for a PostgreSQL store, its address as written (a ``str``,
        ``postgresql://...``, a password shown as ``***``).
    ontology : Ontology
        The entity and edge types in force (``graphmem.ontology``).
    registry : Registry
        The predicates in force.
    store : StorageEngine
        The storage engine (the roles of ``graphmem.store.roles``, whichever engine it is); the methods
        below are the public way in.
    read_only : bool
        Whether the store was opened read-only (``graphmem.open(path, read_only=True)``).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> with graphmem.open(tempfile.mkdtemp(), create=True) as m:
    ...     _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    ...     _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    ...     [f.object for f in m.current("Atlas").facts]
    ['tool:kuzu']
    """


def open(path: str | Path | StoreAddress | None = None, *, create: bool = False,  # noqa: A001  (graphmem.open, like sqlite3.connect)
         read_only: bool = False, **kwargs: Any) -> Memory:
    """Open the store at ``path``; ``create=True`` makes it when the path holds none.

    Without a path, the store the CLI uses by default (``GRAPHMEM_STORE``, else the platform user
    data directory: ``graphmem.config.default_store``).

    Parameters
    ----------
    path : str, Path or StoreAddress, optional
        The store's folder, or an address naming its engine: ``ladybug:PATH``, ``postgresql://...``
        (docs/engines.md).
    create : bool, default False
        Make the store when ``path`` holds none (``graphmem init`` does the same); without it, a
        path that holds no store is StoreUnavailable.
    read_only : bool, default False
        Open for reading only: several processes can then hold the store at once (a notebook and
        the CLI's read commands, say), none of them writing; a write raises StoreReadOnly. A process
        that writes needs the store to itself.
    **kwargs
        Passed to ``Memory``: ``ontology_dirs``, ``predicate_dirs``, ``buffer_pool_mb``, ``repair``.

    Returns
    -------
    Memory

    Raises
    ------
    StoreUnavailable
        No store at ``path`` (without ``create``), or it is locked by another process, of another
        layout version, or damaged.
    ConfigError
        An ontology or predicate file is invalid.
    BadInput
        A bad option (``read_only`` with ``create`` or ``repair``).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> path = tempfile.mkdtemp()
    >>> graphmem.open(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.StoreUnavailable: no store at '...': expected one made by 'graphmem init' ...
    >>> with graphmem.open(path, create=True) as m:
    ...     m.add_entity("Project", "Atlas").refs
    ('project:atlas',)
    >>> with graphmem.open(path, read_only=True) as m:
    ...     m.entity("atlas").ref
    'project:atlas'
    """
    return Memory(store_address(path), create=create, read_only=read_only, **kwargs)


def migrate(path: str | Path | StoreAddress, **memory_options: Any) -> MigrateReport:
    """Upgrade the store at ``path`` written in an older layout, in place (``graphmem migrate``).

    The engine's named migrations run after a copy aside, then the view and full-text index are made
    again by this version. A store of the current layout is left alone.

    Parameters
    ----------
    path : str, Path or StoreAddress
        The store's folder or address.
    **memory_options
        Passed to ``Memory`` (ontology and predicate folders).

    Returns
    -------
    MigrateReport
        The layout versions before and after, the steps run and where the copy is.

    Raises
    ------
    StoreUnavailable
        No store there, a layout newer than this version, another migration running, or a step that failed.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> path = tempfile.mkdtemp()
    >>> graphmem.open(path, create=True).close()
    >>> graphmem.migrate(path).steps
    ()
    """
    from graphmem.store import migrate_store

    def finish(where: StoreAddress, up: Any) -> MigrateReport:
        with Memory(where, create=False, repair=True, **memory_options) as m:
            return m.finish_migration(up)

    return migrate_store(path, finish)
