"""The Python API: everything the command line does, as methods of ``Memory``.

``Memory`` is a facade: each method hands its call to the part that owns it: ``graphmem.write``
(validate once, apply once), ``graphmem.view`` (reads, rebuild, lint), ``graphmem.evidence``,
``graphmem.transfer`` and ``graphmem.retrieval``.

>>> import graphmem, tempfile
>>> m = graphmem.open(tempfile.mkdtemp())
>>> m.add_entity("Project", "Atlas").refs
('project:atlas',)
>>> m.close()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from graphmem.bulk import gc_paused
from graphmem.config import store_location
from graphmem.errors import BadInput, check_int
from graphmem.evidence.query import search_terms, snippet
from graphmem.model import Entity, Interval, Statement
from graphmem.model.text import check_text
from graphmem.model.times import now_us, parse_instant
from graphmem.ontology.schema import Ontology, Registry, load_ontology, load_registry
from graphmem.results import (
    CurrentResult,
    EntityDoc,
    EntityList,
    ExportDoc,
    ExtractResult,
    FactsResult,
    ImportReport,
    LintReport,
    MigrateReport,
    OntologyDoc,
    RebuildReport,
    RegistryDoc,
    SearchHit,
    SearchResult,
    StoreInfo,
    TimelineResult,
    WhyResult,
    WriteResult,
)
from graphmem.store import Store, ViewFiles
from graphmem.view import rebuild as view_rebuild
from graphmem.view.reads import Reads
from graphmem.write.apply import Writer
from graphmem.write.inputs import instant, parse_fact_ref, parse_record_ref
from graphmem.write.validate import Checks, slug

if TYPE_CHECKING:
    import networkx as nx

    from graphmem.evidence.extraction import Extractor
    from graphmem.evidence.ingest import IngestReport
    from graphmem.evidence.records import Record
    from graphmem.retrieval.linking import Lexicon, Seed
    from graphmem.retrieval.packing import PackResult
    from graphmem.retrieval.recommend import PathResult, RecommendResult

# names other modules import from here
__all__ = ["EXTRACT_MAX_CHARS", "Memory", "open", "parse_fact_ref", "parse_record_ref", "schema_dirs",
           "search_terms", "slug", "snippet"]

R = TypeVar("R")
EXTRACT_MAX_CHARS = 100_000  # text extracted from at once (spaCy's own limit is 1,000,000, and its memory grows with it)


def schema_dirs(path: str | Path | None, ontology_dirs: Iterable[str | Path] = (),
                predicate_dirs: Iterable[str | Path] = ()) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The ontology and predicate folders a store is used with, after the defaults: the store's own
    ``ontology/`` and ``predicates/`` folders if it has them, then the given folders."""
    ont_dirs = tuple(Path(d) for d in ontology_dirs)
    pred_dirs = tuple(Path(d) for d in predicate_dirs)
    if path is not None and (Path(path) / "ontology").is_dir():
        ont_dirs = (Path(path) / "ontology", *ont_dirs)
    if path is not None and (Path(path) / "predicates").is_dir():
        pred_dirs = (Path(path) / "predicates", *pred_dirs)
    return ont_dirs, pred_dirs


class Memory:
    """An open store with its ontology and predicate registry.

    ``buffer_pool_mb`` sizes Kuzu's page cache (default: Kuzu's own, 80% of RAM). A smaller pool opens
    faster (Kuzu sets the pool up at open, about 1.3 ms per GiB) and suits a process that looks up a few
    subjects; whole-store work (import, rebuild, lint) needs the default.
    """

    def __init__(self, path: str | Path, *, ontology_dirs: Iterable[str | Path] = (),
                 predicate_dirs: Iterable[str | Path] = (), create: bool = True,
                 buffer_pool_mb: int | None = None, repair: bool = False) -> None:
        """``repair`` opens a store marked by an interrupted migration or bulk commit, for ``rebuild``
        and ``finish_migration`` to make it whole; without it such a store is refused (exit 3)."""
        self.path = Path(path)
        if buffer_pool_mb is not None and (type(buffer_pool_mb) is not int or buffer_pool_mb < 64):  # noqa: E721
            raise BadInput(f"bad buffer_pool_mb {buffer_pool_mb!r}: expected a whole number of MiB, at least 64")
        ont_dirs, pred_dirs = schema_dirs(self.path, ontology_dirs, predicate_dirs)
        self.ontology: Ontology = load_ontology(ont_dirs)
        self.registry: Registry = load_registry(self.ontology, pred_dirs)
        self.store = Store(self.path, self.ontology, self.registry, create=create, buffer_pool_mb=buffer_pool_mb,
                           repair=repair)
        self._checks = Checks(self.store, self.ontology, self.registry)
        self._writer = Writer(self.store, self.registry, self._checks)
        self._reads = Reads(self.store, self.ontology, self.registry, self._checks)
        self._extractor: Any = None
        self._extractor_entities = -1
        self._lexicon: tuple[int, Any] | None = None

    def close(self) -> None:
        """Close the store; the object cannot be used afterwards.

        Also done on leaving a ``with`` block.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> m.close()
        """
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _forget_lexicon(self) -> None:
        self._lexicon = None

    def _time(self, text: str | None, what: str, now: int) -> int | None:
        return instant(text, what, now)

    # entities ---------------------------------------------------------------------

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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"])
        >>> m.entity("atlas-app")
        Entity(ref='project:atlas', type='Project', name='Atlas', aliases=('atlas-app',), description='')
        >>> m.close()
        """
        return self._checks.resolve(text)

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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
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
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> m.registry_doc().registry.predicates["status"].cardinality
        'one'
        >>> m.close()
        """
        return RegistryDoc(self.registry)

    def export_doc(self, fmt: str = "jsonl", as_of: str | None = None) -> ExportDoc:
        """The document of ``graphmem export``: ``export``'s text with its format and ``as_of``.

        Parameters
        ----------
        fmt : {"jsonl", "graphml"}, default "jsonl"
            As for ``export``.
        as_of : str, optional
            As for ``export`` (graphml only).

        Returns
        -------
        ExportDoc

        Raises
        ------
        BadInput
            An unknown format, or ``as_of`` with jsonl.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> doc = m.export_doc()
        >>> doc.format, len(doc.text.splitlines())
        ('jsonl', 1)
        >>> m.close()
        """
        return ExportDoc(fmt, as_of, self.export(fmt, as_of))

    # writes (graphmem.write) ----------------------------------------------------------

    def assert_(self, subject: str, predicate: str, obj: Any, *, valid_from: str | None = None,
                valid_to: str | None = None, sources: Iterable[str] = (), by: str = "operator",
                recorded_at: str | None = None) -> WriteResult:
        """Record that ``subject predicate obj`` holds from ``valid_from`` (default: now).

        Parameters
        ----------
        subject : str
            The subject entity: a ref, name or alias.
        predicate : str
            A predicate of the registry (``status``, ``uses``, ...).
        obj : Any
            An entity (ref, name or alias) or a literal, as the predicate expects.
        valid_from, valid_to : str, optional
            When it starts and stops holding (ISO-8601 dates or datetimes); open-ended without ``valid_to``.
        sources : iterable of str, optional
            Record refs (``rec:N``) or URIs it is based on.
        by : str, default "operator"
            Who asserts it; with ``sources``, it sets the statement's trust.
        recorded_at : str, optional
            When it became known (default: now; not in the future).

        Returns
        -------
        WriteResult
            ``refs`` holds the new statement's ref (``fact:N``).

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            The predicate is not in the registry.
        TypeMismatch
            The subject or object is of a type the predicate does not allow.
        BadTime
            A time cannot be parsed, or the interval is impossible.
        BadInput
            Any other bad value (a literal, a source, the asserter); nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas")
        >>> w = m.assert_("Atlas", "status", "active", valid_from="2024-01-01")
        >>> w.action, w.refs
        ('assert', ('fact:1',))
        >>> m.assert_("Atlas", "status", "sleeping")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        graphmem.errors.BadInput: ...
        >>> m.close()
        """
        return self._writer.assert_(subject, predicate, obj, valid_from=valid_from, valid_to=valid_to,
                                    sources=sources, by=by, recorded_at=recorded_at)

    def end(self, subject: str, predicate: str, obj: Any = None, *, at: str, sources: Iterable[str] = (),
            by: str = "operator") -> WriteResult:
        """Close, at ``at``, what holds for (subject, predicate) or (subject, predicate, object).

        Parameters
        ----------
        subject : str
            The subject entity: a ref, name or alias.
        predicate : str
            A predicate of the registry.
        obj : Any, optional
            The object whose interval ends (default: whatever holds for the predicate).
        at : str
            When it stops holding (ISO-8601).
        sources : iterable of str, optional
            Record refs or URIs the end is based on.
        by : str, default "operator"
            Who records the end.

        Returns
        -------
        WriteResult
            ``refs`` holds the end statement's ref; ``detail["closed"]`` the intervals it closed.

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            The predicate is not in the registry.
        BadTime
            ``at`` cannot be parsed.
        BadInput
            Nothing holds at ``at`` to be ended, or another bad value.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> w = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
        >>> w.refs, [c["valid_from"] for c in w.detail["closed"]]
        (('fact:2',), ['2024-02-01T00:00:00Z'])
        >>> m.current("Atlas", as_of="2024-07-01").facts
        ()
        >>> m.close()
        """
        return self._writer.end(subject, predicate, obj, at=at, sources=sources, by=by)

    def retract(self, fact: str, reason: str | None = None) -> WriteResult:
        """Withdraw a statement from now on; it stays in the history.

        Parameters
        ----------
        fact : str
            The statement's ref, ``fact:N``.
        reason : str, optional
            Why it is withdrawn (kept with it).

        Returns
        -------
        WriteResult

        Raises
        ------
        BadInput
            A bad or unknown ref, or a statement already retracted.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> m.retract("fact:1", reason="entered by mistake").detail["reason"]
        'entered by mistake'
        >>> m.current("Atlas").facts
        ()
        >>> m.why("fact:1").statement.retract_reason
        'entered by mistake'
        >>> m.close()
        """
        return self._writer.retract(fact, reason)

    def import_jsonl(self, source: str | Path | Iterable[str], *, strict: bool = False) -> ImportReport:
        """Entities, records and statements from JSONL lines (SPEC 5), each line checked before any is written.

        Parameters
        ----------
        source : str, Path or iterable of str
            A file of JSON lines, or the lines themselves.
        strict : bool, default False
            Write nothing when any line is invalid (else the valid lines are written).

        Returns
        -------
        ImportReport
            Counts, the first and last new facts, and the invalid lines by number.

        Raises
        ------
        BadInput
            The file cannot be read.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> lines = ['{"op": "entity", "type": "Tool", "name": "Kuzu"}',
        ...          '{"op": "entity", "type": "Project", "name": "Atlas"}',
        ...          '{"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu"}']
        >>> r = m.import_jsonl(lines)
        >>> r.entities_created, r.statements, r.errors
        (2, 1, ())
        >>> m.close()
        """
        from graphmem.transfer.importer import import_lines
        self._lexicon = None  # an import may add aliases and descriptions
        with gc_paused():
            return import_lines(self.store, self._checks, source, strict=strict)

    # reads (graphmem.view.reads) -----------------------------------------------------------

    def current(self, subject: str, *, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None) -> CurrentResult:
        """What holds for ``subject`` at ``as_of`` as known at ``known_at``.

        Each defaults to now (SPEC 4: given only ``known_at``, the answer is what we believed then about now).

        Parameters
        ----------
        subject : str
            A ref, name or alias.
        as_of : str, optional
            The time the facts hold at (ISO-8601 or ``"now"``).
        known_at : str, optional
            The time of knowledge: statements recorded (or retracted) later are ignored.
        predicate : str, optional
            Only this predicate.

        Returns
        -------
        CurrentResult
            ``facts`` holds the intervals in force.

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            ``predicate`` is not in the registry.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(iv.predicate, iv.object) for iv in m.current("atlas-app").facts]
        [('uses', 'tool:kuzu')]
        >>> m.current("Atlas", as_of="2024-01-01").facts
        ()
        >>> m.close()
        """
        return self._reads.current(subject, as_of=as_of, known_at=known_at, predicate=predicate)

    def timeline(self, subject: str, *, predicate: str | None = None, known_at: str | None = None) -> TimelineResult:
        """Every interval of ``subject`` (by predicate, then start) and the events behind them.

        Parameters
        ----------
        subject : str
            A ref, name or alias.
        predicate : str, optional
            Only this predicate.
        known_at : str, optional
            The time of knowledge (default: now).

        Returns
        -------
        TimelineResult
            ``intervals`` and the statements (``events``) they come from.

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            ``predicate`` is not in the registry.
        BadTime
            ``known_at`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> _ = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
        >>> [(iv.object, iv.valid_to is not None) for iv in m.timeline("Atlas").intervals]
        [('tool:kuzu', True)]
        >>> [e["op"] for e in m.timeline("Atlas").events]
        ['assert', 'end']
        >>> m.close()
        """
        return self._reads.timeline(subject, predicate=predicate, known_at=known_at)

    def facts(self, *, predicate: str | None = None, object: str | None = None, subject_type: str | None = None,
              as_of: str | None = None) -> FactsResult:
        """Field filters over the view at ``as_of`` (default now), ordered by subject, predicate, start.

        Parameters
        ----------
        predicate : str, optional
            Only this predicate.
        object : str, optional
            Only this object (an entity ref, name or alias, or a literal value).
        subject_type : str, optional
            Only subjects of this entity type.
        as_of : str, optional
            The time the facts hold at (default: now).

        Returns
        -------
        FactsResult
            ``facts`` holds (subject, interval) pairs.

        Raises
        ------
        UnknownPredicate
            ``predicate`` is not in the registry.
        BadInput
            ``subject_type`` is not an entity type.
        BadTime
            ``as_of`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(s.ref, iv.object) for s, iv in m.facts(predicate="uses", object="Kuzu").facts]
        [('project:atlas', 'tool:kuzu')]
        >>> m.close()
        """
        return self._reads.facts(predicate=predicate, object=object, subject_type=subject_type, as_of=as_of)

    def why(self, fact: str) -> WhyResult:
        """The receipts of one statement: sources, supersession, conflicts, ends, retraction.

        Parameters
        ----------
        fact : str
            The statement's ref, ``fact:N``.

        Returns
        -------
        WhyResult

        Raises
        ------
        BadInput
            A bad or unknown ref.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> w = m.why("fact:1")
        >>> w.statement.predicate, w.subject.ref, w.supersedes
        ('uses', 'project:atlas', ())
        >>> m.close()
        """
        return self._reads.why(fact)

    # rebuild (graphmem.view.rebuild) ----------------------------------------------------------

    def rebuild(self, *, check: bool = False) -> RebuildReport:
        """Recompute the view from the statements; with ``check``, only compare (``view.rebuild.rebuild``).

        A store opened with ``repair=True`` after an interrupted bulk commit is made whole first.

        Parameters
        ----------
        check : bool, default False
            Only compare the stored view with a recomputation; write nothing.

        Returns
        -------
        RebuildReport
            ``drift`` lists the subjects whose stored rows differed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> r = m.rebuild(check=True)
        >>> r.checked_only, r.drift, r.counts["subjects"]
        (True, (), 1)
        >>> m.close()
        """
        return view_rebuild.rebuild(self.store, self.registry, check=check, forget=self._forget_lexicon)

    def finish_migration(self, up: view_rebuild.Upgrade) -> MigrateReport:
        """After ``migrations.upgrade_layout``: the derived data made by the current code, the mark removed.

        ``graphmem.migrate`` calls it; it is public for that use.

        Parameters
        ----------
        up : Upgrade
            What the layout upgrade did (``from_version``, ``steps``, ``backup``, ``restarted``,
            ``reindex``).

        Returns
        -------
        MigrateReport

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> import types
        >>> up = types.SimpleNamespace(from_version=2, steps=(), backup=None, restarted=False, reindex=True)
        >>> r = m.finish_migration(up)
        >>> r.from_version, r.counts
        (2, {'entities': 0, 'statements': 0, 'records': 0})
        >>> m.close()
        """
        return view_rebuild.finish_migration(self.store, self.registry, self.path, up)

    def compare_views(self, names: dict[str, str], content_only: bool,
                      each: Callable[[str, list[Statement], str, list[Interval], int, list[str]], R],
                      write_changed: bool = False) -> tuple[list[R], list[ViewFiles]]:
        """Every subject recomputed and compared with its stored rows (``view.rebuild.compare_views``).

        Parameters
        ----------
        names : dict of str to str
            Entity names by ref (``m.store.entity_names()``).
        content_only : bool
            Do not count a log stored in another form or order that holds the same statements.
        each : callable
            Called as ``each(ref, statements, log text, view, edge count, parts that differ)`` for every
            subject; it must not touch the store (the work is shared out between processes).
        write_changed : bool, default False
            Also write the rows of the subjects that differ to bulk files (returned).

        Returns
        -------
        results : list
            What ``each`` returned, subject by subject.
        files : list of ViewFiles
            The bulk files (empty without ``write_changed``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> m.compare_views(m.store.entity_names(), True, lambda ref, *rest: (ref, rest[-1]))
        ([('project:atlas', [])], [])
        >>> m.close()
        """
        return view_rebuild.compare_views(self.store, self.registry, names, content_only, each, write_changed)

    def drift_entry(self, ref: str, view: list[Interval], parts: list[str]) -> dict[str, Any]:
        """How the stored rows of ``ref`` differ from ``view`` (``view.rebuild.drift_entry``).

        Parameters
        ----------
        ref : str
            A subject's ref.
        view : list of Interval
            The recomputed intervals.
        parts : list of str
            The parts that differ (``name``, ``log``, ``view``, ``edges``).

        Returns
        -------
        dict
            ``subject``, ``stored_only`` and ``missing`` interval counts, and ``parts``.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> m.drift_entry("project:atlas", [], ["view"])
        {'subject': 'project:atlas', 'stored_only': 1, 'missing': 0, 'parts': ['view']}
        >>> m.close()
        """
        return view_rebuild.drift_entry(self.store, ref, view, parts)

    # evidence ---------------------------------------------------------------------

    def ingest(self, source: Any, *, redact: bool = True, extract: bool = False) -> IngestReport:
        """Store evidence records from JSONL lines (a path, a binary stream or byte lines).

        With ``extract``, also extract from the new records and apply it (the report's ``extraction``).

        Parameters
        ----------
        source : str, Path, binary file or iterable of bytes
            JSON lines, each a record with at least ``text``.
        redact : bool, default True
            Mask secrets (keys, tokens, passwords) in the text before storing it.
        extract : bool, default False
            Run extraction on the new records and write what it proposes.

        Returns
        -------
        IngestReport
            The refs stored, duplicates skipped and invalid lines.

        Raises
        ------
        BadInput
            The file cannot be read.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> r = m.ingest([b'{"text": "Atlas moved to Kuzu.", "ts": "2024-03-01", "kind": "note"}'])
        >>> r.stored, r.errors
        (('rec:1',), ())
        >>> m.close()
        """
        from graphmem.evidence.ingest import ingest
        report = ingest(self.store, source, redact=redact)
        if extract and report.stored:
            report = dataclasses.replace(report, extraction=self.extract_records(list(report.stored), apply=True))
        return report

    def record(self, ref: str) -> Record:
        """A stored evidence record by its ``rec:N`` ref.

        Parameters
        ----------
        ref : str
            ``rec:N``.

        Returns
        -------
        Record

        Raises
        ------
        BadInput
            A bad ref, or no record has it.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.ingest([b'{"text": "Atlas moved to Kuzu.", "ts": "2024-03-01"}'])
        >>> m.record("rec:1").text
        'Atlas moved to Kuzu.'
        >>> m.close()
        """
        rec: Record | None = self.store.record(parse_record_ref(ref))
        if rec is None:
            raise BadInput(f"unknown record {ref!r}: no record has that ref")
        return rec

    def search(self, query: str, *, limit: int = 10) -> SearchResult:
        """BM25-ranked records for the words of ``query`` (quotes and operators are taken as plain words).

        Parameters
        ----------
        query : str
            The words to look for.
        limit : int, default 10
            At most this many hits (1 to 1000).

        Returns
        -------
        SearchResult
            ``hits`` are SearchHit values, best first.

        Raises
        ------
        BadInput
            A bad ``limit`` or query text.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.ingest([b'{"text": "Atlas moved from SQLite to Kuzu."}', b'{"text": "Lunch at noon."}'])
        >>> [(h.ref, h.snippet) for h in m.search("kuzu").hits]
        [('rec:1', 'Atlas moved from SQLite to Kuzu.')]
        >>> m.close()
        """
        check_int(limit, "limit", 1, 1000)
        from graphmem.evidence.textindex import query_terms
        terms = search_terms(check_text(query, "query"))
        hits = self.store.search_records(query_terms(terms), limit)
        return SearchResult(query, tuple(terms), tuple(
            SearchHit(f"rec:{i}", score, snippet(text, terms), ts, kind, src, scope, imp)
            for i, score, text, ts, kind, src, scope, imp in hits))

    def extractor(self) -> Extractor:
        """The spaCy extractor for this store, built on first use and after entities change.

        Returns
        -------
        Extractor

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> m.extractor() is m.extractor()
        True
        >>> m.close()
        """
        from graphmem.evidence.extraction import Extractor
        count = self.store.entity_count()
        if self._extractor is None or self._extractor_entities != count:
            self._extractor = Extractor(self.ontology, self.registry, list(self.store.all_entities()))
            self._extractor_entities = count
        extractor: Extractor = self._extractor
        return extractor

    def extract_text(self, text: str, *, at: str | None = None, apply: bool = False) -> ExtractResult:
        """Proposals from free text; with ``apply``, the text is first stored as a record.

        Parameters
        ----------
        text : str
            At most ``EXTRACT_MAX_CHARS`` characters.
        at : str, optional
            The time the text speaks of (default: now); proposals start then.
        apply : bool, default False
            Store the text as a record and write the proposals, citing it.

        Returns
        -------
        ExtractResult

        Raises
        ------
        BadInput
            Empty or too long text.
        BadTime
            ``at`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> (_, ex), = m.extract_text("Atlas uses Kuzu.", at="2024-03-01").items
        >>> [(p.subject, p.predicate, p.object) for p in ex.assertions]
        [('project:atlas', 'uses', 'tool:kuzu')]
        >>> m.extract_text("Atlas uses Kuzu.", at="2024-03-01", apply=True).written
        ('fact:1',)
        >>> m.close()
        """
        if not isinstance(text, str) or not text.strip():
            raise BadInput("empty text: expected something to extract from")
        check_text(text, "text")
        if len(text) > EXTRACT_MAX_CHARS:
            raise BadInput(f"text of {len(text):,} characters is too long to extract from: expected at most "
                           f"{EXTRACT_MAX_CHARS:,} (ingest it as records, which are bounded, then extract --pending)")
        if apply:
            report = self.ingest([__import__("json").dumps({"text": text, "ts": at, "kind": "note"}).encode()])
            if report.errors:
                raise BadInput(report.errors[0][1])
            ref = report.stored[0] if report.stored else None
            if ref is None:  # the same text was stored before: extract from that record
                from graphmem.evidence.records import parse_record
                key = parse_record({"text": text, "ts": at, "kind": "note"}, now=now_us()).key
                ref = f"rec:{self.store.record_ids_for_keys([key])[key]}"
            return self.extract_records([ref], apply=True)
        when = parse_instant(at, what="at") if at else now_us()
        ex = self.extractor().extract(text, default_time=when)
        return ExtractResult((("text", ex),), False, ())

    def extract_records(self, refs: list[str], *, apply: bool = False) -> ExtractResult:
        """Proposals from stored records; with ``apply``, write mentions and assertions citing them.

        Parameters
        ----------
        refs : list of str
            Record refs, ``rec:N``.
        apply : bool, default False
            Write the mentions and proposed assertions.

        Returns
        -------
        ExtractResult

        Raises
        ------
        BadInput
            A bad ref, or no record has it.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> _ = m.ingest([b'{"text": "Atlas uses Kuzu.", "ts": "2024-03-01"}'])
        >>> r = m.extract_records(["rec:1"], apply=True)
        >>> r.written, m.why("fact:1").statement.sources
        (('fact:1',), ('rec:1',))
        >>> m.close()
        """
        ids = [parse_record_ref(r) for r in refs]
        batch = self.store.records_between(min(ids), max(ids)) if len(ids) > 20 else {}
        recs = [batch[i] if i in batch else self.record(f"rec:{i}") for i in ids]
        extractor = self.extractor()
        items = [(rec, extractor.extract(rec.text, default_time=rec.ts, evidence=rec.ref)) for rec in recs]
        written = self._writer.extractions(items) if apply else []
        return ExtractResult(tuple((rec.ref, ex) for rec, ex in items), apply, tuple(written))

    def extract_pending(self, *, apply: bool = False, limit: int | None = None) -> ExtractResult:
        """Proposals from the records not extracted from yet (``limit``: the first that many).

        Parameters
        ----------
        apply : bool, default False
            Write the mentions and proposed assertions.
        limit : int, optional
            Only the first that many pending records.

        Returns
        -------
        ExtractResult

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> _ = m.ingest([b'{"text": "Atlas uses Kuzu.", "ts": "2024-03-01"}'])
        >>> [ref for ref, _ in m.extract_pending(apply=True).items]
        ['rec:1']
        >>> m.extract_pending().items
        ()
        >>> m.close()
        """
        return self.extract_records([f"rec:{i}" for i in self.store.pending_record_ids(limit)], apply=apply)

    # export, lint ---------------------------------------------------------------------

    def export(self, fmt: str = "jsonl", as_of: str | None = None) -> str:
        """The store as text: the whole history as JSONL (which ``import_jsonl`` reads), or the graph at ``as_of`` as GraphML.

        Parameters
        ----------
        fmt : {"jsonl", "graphml"}, default "jsonl"
            The format.
        as_of : str, optional
            The time of the graph (graphml only; default: now).

        Returns
        -------
        str

        Raises
        ------
        BadInput
            An unknown format, or ``as_of`` with jsonl.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> print(m.export(), end="")
        {"op": "entity", "type": "Tool", "name": "Kuzu", "aliases": [], "description": ""}
        >>> m.close()
        """
        from graphmem.transfer.export import export
        return export(self.store, fmt, as_of)

    def lint(self) -> LintReport:
        """Check the store: statements without sources, conflicts, drift of the view and other issues.

        Returns
        -------
        LintReport
            ``issues`` are LintIssue values with a code, severity and message.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(i.code, i.fact) for i in m.lint().issues]
        [('missing_source', 'fact:1')]
        >>> m.close()
        """
        from graphmem.view.lint import LintParts, lint
        with gc_paused():
            return lint(LintParts(self.store, self.registry, self.compare_views, self.drift_entry))

    # recommendation ---------------------------------------------------------------

    def lexicon(self) -> Lexicon:
        """The entity side of linking (names, lemmas, descriptions), built on first use.

        It is kept until an entity is written through this object (Kuzu's lock means no other process
        writes meanwhile).

        Returns
        -------
        Lexicon

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> lex = m.lexicon()
        >>> m.lexicon() is lex
        True
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> m.lexicon() is lex
        False
        >>> m.close()
        """
        from graphmem.retrieval.linking import Lexicon
        writes = self.store.entity_writes
        if self._lexicon is None or self._lexicon[0] != writes:
            self._lexicon = (writes, Lexicon(self.store.all_entities()))
        return self._lexicon[1]

    def link(self, text: str, *, records: bool = True) -> tuple[Seed, ...]:
        """The entities ``text`` names or describes (``graphmem.retrieval.linking.Seed``), strongest match first.

        Parameters
        ----------
        text : str
            Free text (an idea, a question).
        records : bool, default True
            Also follow the records the text matches to the entities they mention.

        Returns
        -------
        tuple of Seed

        Raises
        ------
        BadInput
            Empty or invalid text.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(s.ref, s.match) for s in m.link("the atlas project on kuzu")]
        [('project:atlas', 'name'), ('tool:kuzu', 'name')]
        >>> m.close()
        """
        from graphmem.retrieval.linking import Linker, link
        from graphmem.retrieval.recommend import check_idea
        return link(Linker(self.lexicon, self.ontology, self.store), check_idea(text), records=records)

    def recommend(self, idea: str, *, top: int = 5, as_of: str | None = None, known_at: str | None = None,
                  max_hops: int = 3, paths: int = 3) -> RecommendResult:
        """The projects ``idea`` fits best at ``as_of`` (as known at ``known_at``).

        Each comes with the graph paths that carry its score (docs/recommend.md).

        Parameters
        ----------
        idea : str
            Free text describing the idea.
        top : int, default 5
            At most this many projects.
        as_of, known_at : str, optional
            The time of the graph and of knowledge (default: now).
        max_hops : int, default 3
            The longest path from the idea's entities to a project.
        paths : int, default 3
            The paths kept per project.

        Returns
        -------
        RecommendResult
            ``seeds`` (the entities the idea names) and ``results``, best first.

        Raises
        ------
        BadInput
            Empty idea text, or a bad number.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> r = m.recommend("something on kuzu")
        >>> [s.ref for s in r.seeds], [p.project.ref for p in r.results]
        (['tool:kuzu'], ['project:atlas'])
        >>> m.close()
        """
        from graphmem.retrieval.linking import Linker
        from graphmem.retrieval.recommend import GraphParts, recommend
        check_text(idea, "idea")
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return recommend(GraphParts(self.store, self.ontology, self.registry),
                         Linker(self.lexicon, self.ontology, self.store), idea, top=top,
                         as_of=now if a is None else a, known_at=k, now=now, max_hops=max_hops, paths=paths)

    def paths(self, src: str, dst: str, *, max_hops: int = 4, limit: int = 3, as_of: str | None = None,
             known_at: str | None = None) -> PathResult:
        """The shortest explained paths between two entities over the edges valid at ``as_of``.

        Parameters
        ----------
        src, dst : str
            The two entities: refs, names or aliases.
        max_hops : int, default 4
            The longest path.
        limit : int, default 3
            At most this many paths.
        as_of, known_at : str, optional
            The time of the graph and of knowledge (default: now).

        Returns
        -------
        PathResult
            ``paths``, shortest first, or a ``message`` saying why there is none.

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        BadInput
            A bad number.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> len(m.paths("Atlas", "Kuzu").paths)
        1
        >>> m.paths("Atlas", "Kuzu", as_of="2024-01-01").message
        'no path between project:atlas and tool:kuzu within 4 hops at as_of'
        >>> m.close()
        """
        from graphmem.retrieval.recommend import GraphParts, shortest_paths
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return shortest_paths(GraphParts(self.store, self.ontology, self.registry),
                              self.resolve(src, role="from"), self.resolve(dst, role="to"),
                              as_of=now if a is None else a, known_at=k, now=now, max_hops=max_hops, limit=limit)

    def pack(self, query: str, *, budget_tokens: int = 1000, max_items: int = 40, as_of: str | None = None,
             known_at: str | None = None, trace: bool = False, tokenizer: Any = None) -> PackResult:
        """A cited context bundle for ``query`` within ``budget_tokens`` (docs/packing.md).

        Parameters
        ----------
        query : str
            What the bundle is for.
        budget_tokens : int, default 1000
            The most tokens the bundle may use.
        max_items : int, default 40
            The most items it may hold.
        as_of, known_at : str, optional
            The time of the facts and of knowledge (default: now).
        trace : bool, default False
            Keep the candidates left out too, with why.
        tokenizer : callable, optional
            Any function from text to a token count (default: graphmem's ``chars4`` counter).

        Returns
        -------
        PackResult
            ``bundle_text`` and its ``citations``.

        Raises
        ------
        BadInput
            Empty query text, or a bad number.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.ingest([b'{"text": "Atlas moved from SQLite to Kuzu.", "ts": "2024-03-01", "kind": "note"}'])
        >>> print(m.pack("kuzu").bundle_text)
        Evidence:
        - 2024-03-01 note: Atlas moved from SQLite to Kuzu. [rec:1]
        >>> m.close()
        """
        from graphmem.retrieval.packing import PackParts, pack
        check_text(query, "query")
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return pack(PackParts(self.store, self.ontology, self.registry, self.lexicon), query,
                    budget_tokens=budget_tokens, max_items=max_items, as_of=now if a is None else a,
                    known_at=k, now=now, trace=trace, tokenizer=tokenizer)

    def graph(self, as_of: str | None = None) -> nx.MultiDiGraph:
        """The typed graph valid at ``as_of`` (default now) as a networkx MultiDiGraph.

        Parameters
        ----------
        as_of : str, optional
            The time the edges hold at.

        Returns
        -------
        networkx.MultiDiGraph
            Entities as nodes, facts between entities as edges.

        Raises
        ------
        BadTime
            ``as_of`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp())
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> g = m.graph()
        >>> g.number_of_nodes(), g.number_of_edges()
        (2, 1)
        >>> m.close()
        """
        from graphmem.transfer.export import to_networkx
        return to_networkx(self.store, as_of)


def open(path: str | Path | None = None, **kwargs: Any) -> Memory:  # noqa: A001  (graphmem.open, like sqlite3.connect)
    """Open (creating if needed) the store at ``path``.

    Without a path, the store the CLI uses by default (``GRAPHMEM_STORE``, else the platform user
    data directory: ``graphmem.config.default_store``).

    Parameters
    ----------
    path : str or Path, optional
        The store's folder.
    **kwargs
        Passed to ``Memory``: ``ontology_dirs``, ``predicate_dirs``, ``create``, ``buffer_pool_mb``,
        ``repair``.

    Returns
    -------
    Memory

    Raises
    ------
    StoreUnavailable
        The store is locked by another process, of another layout version, or damaged.
    ConfigError
        An ontology or predicate file is invalid.
    BadInput
        A bad option.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> with graphmem.open(tempfile.mkdtemp()) as m:
    ...     m.add_entity("Project", "Atlas").refs
    ('project:atlas',)
    """
    return Memory(store_location(path), **kwargs)


def migrate(path: str | Path, **memory_options: Any) -> MigrateReport:
    """Upgrade the store at ``path`` written in an older layout, in place (``graphmem migrate``).

    The engine's named migrations run after a copy aside, then the view and full-text index are made
    again by this version. A store of the current layout is left alone.

    Parameters
    ----------
    path : str or Path
        The store's folder.
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
    >>> graphmem.open(path).close()
    >>> graphmem.migrate(path).steps
    ()
    """
    from graphmem.store import migrate_layout

    def finish(where: Path, up: Any) -> MigrateReport:
        with Memory(where, create=False, repair=True, **memory_options) as m:
            return m.finish_migration(up)

    return migrate_layout(Path(path), finish)
