"""Memory's entities: look them up and add them."""

from __future__ import annotations

from collections.abc import Iterable

from graphmem.memory.base import MemoryBase
from graphmem.model import Entity
from graphmem.results import (
    EntityDoc,
    EntityList,
    OntologyDoc,
    RegistryDoc,
    StoreInfo,
    WriteResult,
)


class EntityFacade(MemoryBase):
    """Looking entities up and adding them."""

    def entities(self, type_name: str | None = None, match: str | None = None) -> list[Entity]:
        """The entities, optionally of one type and whose name contains ``match``.

        Parameters
        ----------
        type_name : str, optional
            An entity type of the ontology (``Project``, ``Tool``, ...).
        match : str, optional
            Text the name must contain.

        Returns
        -------
        list of Entity
            Ordered by ref.

        Raises
        ------
        BadInput
            ``type_name`` is not an entity type of the ontology.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu"), m.add_entity("Tool", "SQLite"), m.add_entity("Project", "Atlas")
        >>> [e.ref for e in m.entities("Tool")]
        ['tool:kuzu', 'tool:sqlite']
        >>> m.close()
        """
        return self.store.entities(self._checks.entity_type(type_name) if type_name else None, match)

    def add_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> WriteResult:
        """Add an entity; its ref is ``type:slug``. An existing ref is bad input.

        Parameters
        ----------
        type_name : str
            An entity type of the ontology.
        name : str
            The display name; the ref's slug is made from it.
        aliases : iterable of str, optional
            Other names that resolve to this entity.
        description : str, optional
            A sentence about it (linking and recommendation read it).

        Returns
        -------
        WriteResult
            ``refs`` holds the new entity's ref, ``detail["entity"]`` the entity as written.

        Raises
        ------
        BadInput
            An unknown type, a name without letters or digits, or a ref that already exists.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> m.add_entity("Tool", "Kuzu", description="Embedded graph database.").refs
        ('tool:kuzu',)
        >>> m.add_entity("Tool", "kuzu")
        Traceback (most recent call last):
        graphmem.errors.BadInput: entity 'tool:kuzu' already exists
        >>> m.close()
        """
        return self._writer.add_entity(type_name, name, aliases, description)

    # the documents of the other read commands (entity show and list, init, ontology, predicates, export)

    def show_entity(self, text: str) -> EntityDoc:
        """The document of ``graphmem entity show``: one entity, resolved from ``text``.

        Parameters
        ----------
        text : str
            A ref, a name or an alias.

        Returns
        -------
        EntityDoc

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
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> m.show_entity("kuzu").entity.ref
        'tool:kuzu'
        >>> m.close()
        """
        return EntityDoc(self.resolve(text))

    def list_entities(self, type_name: str | None = None, match: str | None = None) -> EntityList:
        """The document of ``graphmem entity list``: the entities ``entities`` returns.

        Parameters
        ----------
        type_name : str, optional
            An entity type of the ontology.
        match : str, optional
            Text the name must contain.

        Returns
        -------
        EntityList

        Raises
        ------
        BadInput
            ``type_name`` is not an entity type of the ontology.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu"), m.add_entity("Tool", "SQLite")
        >>> [e.name for e in m.list_entities("Tool", match="kuz").entities]
        ['Kuzu']
        >>> m.close()
        """
        return EntityList(tuple(self.entities(type_name, match)))

    def info(self) -> StoreInfo:
        """The store's folder and how many statements and entities it holds.

        Returns
        -------
        StoreInfo

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> info = m.info()
        >>> info.statements, info.entities
        (0, 1)
        >>> m.close()
        """
        return StoreInfo(str(self.path), self.store.statement_count(), self.store.entity_count())

    def ontology_doc(self) -> OntologyDoc:
        """The document of ``graphmem ontology``: the entity and edge types in use.

        Returns
        -------
        OntologyDoc

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> "Project" in m.ontology_doc().ontology.entity_types
        True
        >>> m.close()
        """
        return OntologyDoc(self.ontology)

    def registry_doc(self) -> RegistryDoc:
        """The document of ``graphmem predicates``: the predicate registry in use.

        Returns
        -------
        RegistryDoc

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> m.registry_doc().registry.predicates["status"].cardinality
        'one'
        >>> m.close()
        """
        return RegistryDoc(self.registry)
