"""What every part of the facade shares: the open store, its ontology and registry, the parts of
graphmem a method hands its call to, and entity resolution."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from graphmem.config import StoreAddress, store_address
from graphmem.errors import BadInput, GraphmemError
from graphmem.evidence.runs import ExtractorCache
from graphmem.model import Entity
from graphmem.ontology.schema import Ontology, Registry, load_ontology, load_registry
from graphmem.store import StorageEngine, open_store
from graphmem.view.reads import Reads
from graphmem.write.apply import Writer
from graphmem.write.entities import EntityEditor
from graphmem.write.validate import Checks


def schema_dirs(path: str | Path | StoreAddress | None, ontology_dirs: Iterable[str | Path] = (),
                predicate_dirs: Iterable[str | Path] = ()) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The ontology and predicate folders a store is used with, after the defaults: the store's own
    ``ontology/`` and ``predicates/`` folders if it has them, then the given folders."""
    if path is not None:
        path = store_address(path).folder  # a server engine's store has no folder of its own
    ont_dirs = tuple(Path(d) for d in ontology_dirs)
    pred_dirs = tuple(Path(d) for d in predicate_dirs)
    if path is not None and (Path(path) / "ontology").is_dir():
        ont_dirs = (Path(path) / "ontology", *ont_dirs)
    if path is not None and (Path(path) / "predicates").is_dir():
        pred_dirs = (Path(path) / "predicates", *pred_dirs)
    return ont_dirs, pred_dirs


class MemoryBase:
    """The open store and the parts the facade's methods delegate to."""

    def __init__(self, path: str | Path | StoreAddress, *, ontology_dirs: Iterable[str | Path] = (),
                 predicate_dirs: Iterable[str | Path] = (), create: bool = False,
                 buffer_pool_mb: int | None = None, repair: bool = False, read_only: bool = False) -> None:
        """``create`` makes the store when ``path`` holds none (else StoreUnavailable). ``read_only``
        opens it for reading only: other read-only processes may open it at the same time, and a
        write raises StoreReadOnly. ``repair`` opens a store marked by an interrupted migration or
        bulk commit, for ``rebuild`` and ``finish_migration`` to make it whole; without it such a
        store is refused (exit 3). The engine is the one ``path`` names (``graphmem.config.StoreAddress``:
        a folder, ``ladybug:PATH``, ``postgresql://...``; ``store/engines.py`` opens it)."""
        self.address = store_address(path)
        # the store's folder; a PostgreSQL store has none: its address stands in, as written (``postgresql://``,
        # which a Path would fold to ``postgresql:/``), its password shown as ***
        self.path: Path | str = self.address.folder if self.address.folder is not None else self.address.display
        if buffer_pool_mb is not None and (type(buffer_pool_mb) is not int or buffer_pool_mb < 64):  # noqa: E721
            raise BadInput(f"bad buffer_pool_mb {buffer_pool_mb!r}: expected a whole number of MiB, at least 64")
        if read_only and (create or repair):
            raise BadInput(f"read_only=True with {'create' if create else 'repair'}=True: expected one of them, "
                           "since a store opened read-only is never written")
        ont_dirs, pred_dirs = schema_dirs(self.address, ontology_dirs, predicate_dirs)
        self.ontology: Ontology = load_ontology(ont_dirs)
        self.registry: Registry = load_registry(self.ontology, pred_dirs)
        # every engine has the roles of StorageEngine (store/roles.py); the facade calls nothing else
        self.store: StorageEngine = open_store(self.address, self.ontology, self.registry, create=create,
                                               buffer_pool_mb=buffer_pool_mb, repair=repair, read_only=read_only)
        self._checks = Checks(self.store, self.ontology, self.registry)
        self._writer = Writer(self.store, self.registry, self._checks)
        self._entities = EntityEditor(self.store, self.registry, self._checks)
        self._reads = Reads(self.store, self.ontology, self.registry, self._checks)
        self._extractors = ExtractorCache()
        self._lexicon: tuple[int, Any] | None = None

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only (``graphmem.open(path, read_only=True)``)."""
        return self.store.read_only

    if TYPE_CHECKING:  # LifecycleFacade's (memory/lifecycle.py): a pack's or search's use, kept to be written
        def _track(self, op: str, rec_ids: list[int], now: int) -> tuple[str, ...]: ...

    def close(self) -> None:
        """Close the store; the object cannot be used afterwards.

        Also done on leaving a ``with`` block.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> m.close()
        """
        if not self.store.read_only and self.store.entity_writes:
            self._keep_lexicon()
            self.store.entity_writes = 0
        self.store.close()

    def _keep_lexicon(self) -> None:
        """Store the linking lexicon as the entities now are, when this object wrote entities (the stored
        one and its changes stay as they were if that fails: a reader patches them, ``rebuild`` makes it)."""
        from graphmem.retrieval.linking import stored_lexicon
        with contextlib.suppress(GraphmemError):
            stored_lexicon(self.store, keep=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _forget_lexicon(self) -> None:
        self._lexicon = None

    def resolve(self, text: str, *, role: str = "entity") -> Entity:
        """An entity by ref, exact name or alias (case-insensitive); errors list candidates.

        Parameters
        ----------
        text : str
            A ref (``project:atlas``), a name or an alias.
        role : str, default "entity"
            How the value is named in an error message (``subject``, ``from``, ...).

        Returns
        -------
        Entity

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Person", "Ada Lovelace", aliases=["Ada"])
        >>> m.resolve("ada").ref
        'person:ada-lovelace'
        >>> m.resolve("Grace", role="owner")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        graphmem.errors.UnknownEntity: unknown owner 'Grace'...
        >>> m.close()
        """
        return self._checks.resolve(text, role=role)

    def entity(self, text: str) -> Entity:
        """The entity a ref, exact name or alias names (``resolve`` with the default role).

        Parameters
        ----------
        text : str
            A ref, a name or an alias (case-insensitive).

        Returns
        -------
        Entity

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"])
        >>> m.entity("atlas-app")
        Entity(ref='project:atlas', type='Project', name='Atlas', aliases=('atlas-app',), description='')
        >>> m.close()
        """
        return self._checks.resolve(text)

