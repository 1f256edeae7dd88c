"""Memory's entities: look them up and add them."""

from __future__ import annotations

from collections.abc import Iterable

from graphmem.documents import EntityDoc, EntityList, OntologyDoc, RegistryDoc, StoreInfo
from graphmem.memory.base import MemoryBase
from graphmem.model import Entity
from graphmem.results import WriteResult


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
        """Add an entity; its ref is ``type:slug``. For an existing entity of that type and name, the
        aliases it lacks are added (and a different description replaces its own), recorded as an
        ``alias-add`` event; an existing entity given nothing new is bad input.

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
        >>> m.add_entity("Tool", "Kuzu", aliases=["kz"]).to_dict()["updated"]
        ['tool:kuzu']
        >>> m.close()
        """
        return self._entities.add_entity(type_name, name, aliases, description)

    def rename_entity(self, ref: str, name: str) -> WriteResult:
        """Give an entity another name; its ref stays (``graphmem entity rename``).

        Parameters
        ----------
        ref : str
            The entity: a ref, name or alias.
        name : str
            The new name.

        Returns
        -------
        WriteResult
            ``refs`` holds the event's ref (``event:N``); ``detail["entity"]`` the entity renamed.

        Raises
        ------
        UnknownEntity, AmbiguousEntity
            ``ref`` names no entity, or several.
        BadInput
            A name without letters or digits, or the name it has already; nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas")
        >>> m.rename_entity("atlas", "Atlas Platform").to_dict()["entity"]["name"]
        'Atlas Platform'
        >>> m.entity("atlas platform").ref
        'project:atlas'
        >>> m.close()
        """
        return self._entities.rename(ref, name)

    def add_aliases(self, ref: str, aliases: Iterable[str]) -> WriteResult:
        """Add aliases to an entity; those it has already are left as they are (``entity alias add``).

        Parameters
        ----------
        ref : str
            The entity: a ref, name or alias.
        aliases : iterable of str
            The aliases to add.

        Returns
        -------
        WriteResult
            ``detail["added"]`` and ``detail["unchanged"]``; ``refs`` holds the event's ref when one was added.

        Raises
        ------
        UnknownEntity, AmbiguousEntity
            ``ref`` names no entity, or several.
        BadInput
            An empty alias, or none given.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas")
        >>> m.add_aliases("atlas", ["atlas-app"]).to_dict()["added"]
        ['atlas-app']
        >>> m.entity("ATLAS-APP").ref
        'project:atlas'
        >>> m.close()
        """
        return self._entities.add_aliases(ref, aliases)

    def remove_aliases(self, ref: str, aliases: Iterable[str]) -> WriteResult:
        """Take aliases off an entity (``entity alias remove``); each must be one of its aliases.

        Parameters
        ----------
        ref : str
            The entity: a ref, name or alias.
        aliases : iterable of str
            The aliases to remove (case-insensitive).

        Returns
        -------
        WriteResult
            ``detail["removed"]``; ``refs`` holds the event's ref.

        Raises
        ------
        UnknownEntity, AmbiguousEntity
            ``ref`` names no entity, or several.
        BadInput
            An alias the entity does not have, or its name; nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"])
        >>> m.remove_aliases("atlas", ["atlas-app"]).to_dict()["entity"]["aliases"]
        []
        >>> m.close()
        """
        return self._entities.remove_aliases(ref, aliases)

    def merge_entities(self, into: str, merged: str) -> WriteResult:
        """Merge the entity ``merged`` into ``into`` (``graphmem entity merge``): its statements, the
        statements naming it and its mentions are carried over by new statements recorded now, the
        originals retracted; from now on ``merged`` resolves to ``into`` (docs/entities.md).

        Parameters
        ----------
        into : str
            The entity that stays: a ref, name or alias.
        merged : str
            The entity merged into it, of the same type.

        Returns
        -------
        WriteResult
            ``refs`` holds the new statements; ``detail["event"]`` the merge, with each fact carried
            and its copy.

        Raises
        ------
        UnknownEntity, AmbiguousEntity
            Either names no entity, or several.
        BadInput
            The same entity twice, two types, or an entity merged already; nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu"), m.add_entity("Tool", "KuzuDB"), m.add_entity("Project", "Atlas")
        >>> _ = m.assert_("Atlas", "uses", "KuzuDB", valid_from="2024-01-01")
        >>> m.merge_entities("Kuzu", "KuzuDB").refs
        ('fact:2',)
        >>> [f.object for f in m.current("Atlas").facts], m.entity("kuzudb").ref
        (['tool:kuzu'], 'tool:kuzu')
        >>> m.close()
        """
        return self._entities.merge(into, merged)

    def unmerge_entity(self, merged: str) -> WriteResult:
        """Take back the merge of ``merged`` (``graphmem entity unmerge``): the copies the merge made are
        retracted and the originals copied back, recorded now (docs/entities.md).

        Parameters
        ----------
        merged : str
            The entity that was merged: its ref, name or alias (not followed to the other entity).

        Returns
        -------
        WriteResult
            ``refs`` holds the statements copied back; ``detail["event"]`` the unmerge.

        Raises
        ------
        UnknownEntity, AmbiguousEntity
            ``merged`` names no entity, or several.
        BadInput
            The entity is not merged; nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu"), m.add_entity("Tool", "KuzuDB")
        >>> _ = m.merge_entities("Kuzu", "KuzuDB")
        >>> m.unmerge_entity("tool:kuzudb").to_dict()["unmerged"]["ref"], m.entity("kuzudb").ref
        ('tool:kuzudb', 'tool:kuzudb')
        >>> m.close()
        """
        return self._entities.unmerge(merged)

    # the documents of the other read commands (entity show and list, init, ontology, predicates, export)

    def show_entity(self, text: str) -> EntityDoc:
        """The document of ``graphmem entity show``: one entity, resolved from ``text``, with its events;
        a merged entity is shown itself, with the entity it resolves to (``merged_into``).

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
        return self._entities.show(text)

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
        """The store's folder or address, its engine and layout, and how many statements, entities and records it holds.

        Returns
        -------
        StoreInfo

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> info = m.info()
        >>> info.statements, info.entities, info.records, info.engine
        (0, 1, 0, 'kuzu')
        >>> m.close()
        """
        from graphmem.store.engines import describe
        where = self.address
        engine, version, layout = describe(self.store)
        return StoreInfo(str(where.folder) if where.folder is not None else where.display, self.store.statement_count(),
                         self.store.entity_count(), engine, version, layout, self.store.record_count(), where.display)

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
