"""Documents of what a store holds and how it is set up: one entity, a list of entities, the store's
size, its ontology and predicate registry, and an export. Each converts to the CLI's JSON (``to_dict``)
as every result does (``graphmem.notebook``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import graphmem.notebook as nb
from graphmem.model import Entity, EntityEvent
from graphmem.notebook import HtmlRepr

if TYPE_CHECKING:
    from graphmem.ontology.schema import Ontology, Registry


@dataclass(frozen=True, repr=False)
class EntityDoc(HtmlRepr):
    """One entity, as ``entity show`` prints it (``Memory.show_entity``).

    Attributes
    ----------
    entity : Entity
        Its ref, type, name, aliases and description.
    events : tuple of EntityEvent
        Its renames, alias changes, merges and unmerges, in order.
    merged_into : str or None
        The entity it resolves to, when it is merged into another.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"])
    >>> doc = m.show_entity("atlas-app")
    >>> doc.entity.ref, doc.to_dict()["schema"]
    ('project:atlas', 'graphmem.entity.v1')
    >>> m.close()
    """

    entity: Entity
    events: tuple[EntityEvent, ...] = ()  # its renames, alias changes, merges and unmerges, in order
    merged_into: str | None = None  # the entity it resolves to, when it is merged into another

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.entity.v1", "entity": self.entity.to_dict(), "merged_into": self.merged_into,
                "events": [ev.to_dict() for ev in self.events]}

    def _summary(self) -> str:
        e = self.entity
        return f"{e.type} {nb.who(e)}" + (f", aliases {', '.join(e.aliases)}" if e.aliases else "")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return _entity_frame((self.entity,))


@dataclass(frozen=True, repr=False)
class EntityList(HtmlRepr):
    """Entities by type then ref, as ``entity list`` prints them (``Memory.list_entities``).

    Attributes
    ----------
    entities : tuple of Entity
        The entities, by type then ref.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> [e.ref for e in m.list_entities().entities]
    ['project:atlas', 'tool:kuzu']
    >>> m.close()
    """

    entities: tuple[Entity, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.entities.v1", "entities": [e.to_dict() for e in self.entities]}

    def _summary(self) -> str:
        return nb.plural(len(self.entities), "entity", "entities")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return nb.rows_of(self.entities, limit, lambda e: f"{e.type} {nb.who(e)}")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return _entity_frame(self.entities)


def _entity_frame(entities: tuple[Entity, ...]) -> tuple[list[str], list[list[Any]]]:
    return ["ref", "type", "name", "aliases", "description"], [[e.ref, e.type, e.name, list(e.aliases), e.description]
                                                                for e in entities]


@dataclass(frozen=True, repr=False)
class StoreInfo(HtmlRepr):
    """Where the store is, which engine holds it and how much it holds (``init``, ``info``; ``Memory.info``).

    Attributes
    ----------
    store : str
        The store's folder (a PostgreSQL store: its address).
    statements, entities : int
        How many statements (assertions and ends) and entities it holds.
    engine : str
        The engine: ``kuzu``, ``ladybug`` or ``postgresql``.
    engine_version : str
        The engine's version (its Python module's for Kuzu and LadybugDB, the server's for PostgreSQL).
    layout : int
        The store's layout version (``graphmem migrate`` moves a store to this graphmem's).
    records : int
        How many evidence records it holds.
    address : str
        The address that names the store and its engine (``ladybug:PATH``, ``postgresql://...``; a Kuzu
        store's is its folder), docs/engines.md.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas")
    >>> m.info().entities, m.info().statements
    (1, 0)
    >>> m.close()
    """

    store: str
    statements: int
    entities: int
    engine: str = "kuzu"
    engine_version: str = ""
    layout: int = 0
    records: int = 0
    address: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.init.v1", "store": self.store, "statements": self.statements,
                "entities": self.entities, "records": self.records, "engine": self.engine,
                "engine_version": self.engine_version, "layout": self.layout, "address": self.address or self.store}

    def _summary(self) -> str:
        return (f"{self.address or self.store} ({self.engine} {self.engine_version}): {nb.plural(self.entities, 'entity', 'entities')}, "
                f"{nb.plural(self.statements, 'statement')}, {nb.plural(self.records, 'record')}")


@dataclass(frozen=True, repr=False)
class OntologyDoc(HtmlRepr):
    """The loaded ontology (``graphmem ontology``; ``Memory.ontology_doc``).

    Attributes
    ----------
    ontology : Ontology
        Its ``entity_types`` and ``edge_types`` by name.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> "Project" in m.ontology_doc().ontology.entity_types
    True
    >>> m.close()
    """

    ontology: Ontology

    def to_dict(self) -> dict[str, Any]:
        ont = self.ontology
        return {"schema": "graphmem.ontology.v1",
                "entity_types": [{"name": t.name, "prefix": t.prefix, "description": t.description}
                                 for t in ont.entity_types.values()],
                "edge_types": [{"name": e.name, "description": e.description, "pairs": [list(p) for p in e.pairs]}
                               for e in ont.edge_types.values()]}

    def _summary(self) -> str:
        return (f"{nb.plural(len(self.ontology.entity_types), 'entity type')}, "
                f"{nb.plural(len(self.ontology.edge_types), 'edge type')}")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return ["name", "prefix", "description"], [[t.name, t.prefix, t.description]
                                                   for t in self.ontology.entity_types.values()]


@dataclass(frozen=True, repr=False)
class RegistryDoc(HtmlRepr):
    """The loaded predicate registry (``graphmem predicates``; ``Memory.registry_doc``).

    Attributes
    ----------
    registry : Registry
        Its ``predicates`` by name.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> m.registry_doc().registry.predicates["uses"].cardinality
    'many'
    >>> m.close()
    """

    registry: Registry

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.predicates.v1", "predicates": [
            {"name": p.name, "description": p.description, "subject_types": list(p.subject_types),
             "object": ({"entity_types": list(p.object_entity_types)} if p.entity_valued else
                        {"type": p.literal_type, **({"values": list(p.enum_values)} if p.enum_values else {})}),
             "cardinality": p.cardinality, "edge": p.edge, "aliases": list(p.aliases), "stale_after": p.stale_after}
            for p in self.registry.predicates.values()]}

    def _summary(self) -> str:
        return nb.plural(len(self.registry.predicates), "predicate")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        cols = ["name", "description", "subject_types", "object", "cardinality", "edge", "aliases", "stale_after"]
        return cols, [[d[c] for c in cols] for d in self.to_dict()["predicates"]]


@dataclass(frozen=True, repr=False)
class ExportDoc(HtmlRepr):
    """An export (``export --json``; ``Memory.export_doc``): JSONL as a list of line objects, GraphML as text.

    Attributes
    ----------
    format : str
        ``jsonl`` or ``graphml``.
    as_of : str or None
        The time the export shows the facts at, as asked (None: now).
    text : str
        The export itself, as ``graphmem export`` writes it.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas")
    >>> doc = m.export_doc("jsonl")
    >>> doc.to_dict()["lines"][0]["name"], doc.text.count("\\n")
    ('Atlas', 1)
    >>> m.close()
    """

    format: str
    as_of: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        body: Any = [json.loads(line) for line in self.text.splitlines()] if self.format == "jsonl" else self.text
        return {"schema": "graphmem.export.v1", "format": self.format, "as_of": self.as_of,
                "lines" if self.format == "jsonl" else "graphml": body}

    def _summary(self) -> str:
        size = nb.plural(self.text.count("\n"), "line") if self.format == "jsonl" else nb.plural(len(self.text), "character")
        return f"{self.format}, {size}" + (f", as of {self.as_of}" if self.as_of else "")
