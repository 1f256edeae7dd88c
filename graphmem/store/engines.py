"""The one place a store address becomes an engine: a folder is Kuzu's or LadybugDB's embedded
database (``store/kuzu/``: the same Cypher and Python API, the driver module chosen per engine), and a
``postgresql://`` address is the PostgreSQL engine (``store/postgres/``). ``Memory``, ``graphmem.open``,
``migrate``, the CLI, the service and MCP all open stores through ``open_store`` (docs/engines.md)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphmem.config import ENGINE_NAMES, NewStore, StoreAddress, store_address
from graphmem.errors import StoreUnavailable
from graphmem.ontology.schema import Ontology, Registry
from graphmem.reports import MigrateReport
from graphmem.store.roles import StorageEngine

POSTGRES_MODULE = "graphmem.store.postgres"


def _postgres() -> Any:
    """The PostgreSQL engine's package, or StoreUnavailable when this build has none."""
    try:
        return importlib.import_module(POSTGRES_MODULE + ".store")  # PgStore (store/postgres/store.py)
    except ModuleNotFoundError as e:
        if e.name is not None and POSTGRES_MODULE.startswith(e.name):
            raise StoreUnavailable("the PostgreSQL engine is not in this build") from None
        raise StoreUnavailable(f"the PostgreSQL engine cannot be loaded: {e}") from None


def open_store(address: str | Path | StoreAddress, ontology: Ontology, registry: Registry, *, create: bool = False,
               buffer_pool_mb: int | None = None, repair: bool = False, read_only: bool = False) -> StorageEngine:
    """The store at ``address``, opened by its engine (see ``graphmem.config.StoreAddress``).

    Parameters
    ----------
    address : str, Path or StoreAddress
        A folder (Kuzu, or the engine whose database the folder holds), ``ladybug:PATH`` or ``postgresql://...``.
    ontology, registry : Ontology, Registry
        The types and predicates the store is used with.
    create, buffer_pool_mb, repair, read_only
        As for ``graphmem.open``.

    Returns
    -------
    StorageEngine

    Raises
    ------
    StoreUnavailable
        No store there (without ``create``), held by another process, or an engine this build lacks.

    Examples
    --------
    >>> import tempfile
    >>> from graphmem.ontology.schema import load_ontology, load_registry
    >>> ont = load_ontology(())
    >>> s = open_store(tempfile.mkdtemp(), ont, load_registry(ont, ()), create=True)
    >>> s.engine, s.layout_version() > 0
    ('kuzu', True)
    >>> s.close()
    """
    where = store_address(address)
    if where.engine == "postgresql":
        assert where.url is not None
        pg: StorageEngine = _postgres().PgStore(where.url, ontology, registry, create=create, repair=repair,
                                                read_only=read_only, buffer_pool_mb=buffer_pool_mb)
        return pg
    from graphmem.store.kuzu.store import Store
    return Store(where, ontology, registry, create=create, buffer_pool_mb=buffer_pool_mb, repair=repair,
                 read_only=read_only)


@contextmanager
def cleanup_on_failure(address: str | Path | StoreAddress) -> Iterator[None]:
    """Run the block; if it raises, take back the store it created at ``address`` (a folder's new files, or
    on PostgreSQL the new schema), then re-raise: a command that creates a store and then fails leaves no
    empty store behind. A store that was there before is never touched.

    Examples
    --------
    >>> import graphmem, tempfile
    >>> target = Path(tempfile.mkdtemp()) / "store"
    >>> try:
    ...     with cleanup_on_failure(target), graphmem.open(target, create=True) as m:
    ...         m.assert_("nobody", "status", "active")
    ... except graphmem.BadInput:
    ...     pass
    >>> target.exists()
    False
    """
    where = store_address(address)
    undo: Callable[[], None] | None
    if where.url is not None:
        schemas, url = importlib.import_module(POSTGRES_MODULE + ".schemas"), where.url
        undo = None if schemas.schema_exists(url) else lambda: schemas.drop_schema(url)
    else:
        undo = NewStore(where).remove
    try:
        yield
    except BaseException:
        if undo is not None:
            undo()
        raise


def migrate_store(address: str | Path | StoreAddress,
                  finish: Callable[[StoreAddress, Any], MigrateReport]) -> MigrateReport:
    """``graphmem migrate`` for the store at ``address``: its engine's named layout migrations, then ``finish``
    (handed the address and the engine's upgrade) makes the derived data again.

    Examples
    --------
    >>> import tempfile
    >>> migrate_store(tempfile.mkdtemp(), lambda a, up: None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.StoreUnavailable: no store at '...'; expected the folder of a graphmem store
    """
    where = store_address(address)
    if where.engine == "postgresql":
        report: MigrateReport = _postgres().migrate_layout(where, finish)
        return report
    from graphmem.store.kuzu.migrations import migrate
    assert where.folder is not None
    return migrate(where.folder, lambda _path, up: finish(where, up), where.engine)


def describe(store: Any) -> tuple[str, str, int]:
    """What an open store's engine says of itself: its name (``kuzu``, ``ladybug``, ``postgresql``), its
    version (without the engine's name) and the store's layout version (``graphmem info``).

    Examples
    --------
    >>> import tempfile
    >>> from graphmem.ontology.schema import load_ontology, load_registry
    >>> ont = load_ontology(())
    >>> s = open_store(tempfile.mkdtemp(), ont, load_registry(ont, ()), create=True)
    >>> describe(s)[0], describe(s)[2] > 0
    ('kuzu', True)
    >>> s.close()
    """
    engine = str(store.engine)
    version = store.engine_version
    version = str(version() if callable(version) else version)
    version = version.removeprefix(ENGINE_NAMES.get(engine, "")).strip()
    if hasattr(store, "layout_version"):
        layout = int(store.layout_version())
    else:  # an engine opens only a store of its own layout (PostgreSQL: store/postgres/base.py)
        layout = int(importlib.import_module(POSTGRES_MODULE + ".base").SCHEMA_VERSION)
    return engine, version, layout


def engine_name(engine: str) -> str:
    """How an engine is called in messages (``Kuzu``, ``LadybugDB``, ``PostgreSQL``).

    Examples
    --------
    >>> engine_name("ladybug")
    'LadybugDB'
    """
    return ENGINE_NAMES[engine]
