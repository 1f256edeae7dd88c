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
        """An entity by ref, exact name or alias (case-insensitive); errors list candidates."""
        return self._checks.resolve(text, role=role)

    def entity(self, text: str) -> Entity:
        return self._checks.resolve(text)

    def entities(self, type_name: str | None = None, match: str | None = None) -> list[Entity]:
        return self.store.entities(self._checks.entity_type(type_name) if type_name else None, match)

    def add_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> WriteResult:
        """Add an entity; its ref is ``type:slug``. An existing ref is bad input."""
        return self._writer.add_entity(type_name, name, aliases, description)

    # the documents of the other read commands (entity show and list, init, ontology, predicates, export)

    def show_entity(self, text: str) -> EntityDoc:
        return EntityDoc(self.resolve(text))

    def list_entities(self, type_name: str | None = None, match: str | None = None) -> EntityList:
        return EntityList(tuple(self.entities(type_name, match)))

    def info(self) -> StoreInfo:
        return StoreInfo(str(self.path), self.store.statement_count(), self.store.entity_count())

    def ontology_doc(self) -> OntologyDoc:
        return OntologyDoc(self.ontology)

    def registry_doc(self) -> RegistryDoc:
        return RegistryDoc(self.registry)

    def export_doc(self, fmt: str = "jsonl", as_of: str | None = None) -> ExportDoc:
        return ExportDoc(fmt, as_of, self.export(fmt, as_of))

    # writes (graphmem.write) ----------------------------------------------------------

    def assert_(self, subject: str, predicate: str, obj: Any, *, valid_from: str | None = None,
                valid_to: str | None = None, sources: Iterable[str] = (), by: str = "operator",
                recorded_at: str | None = None) -> WriteResult:
        """Record that ``subject predicate obj`` holds from ``valid_from`` (default: now)."""
        return self._writer.assert_(subject, predicate, obj, valid_from=valid_from, valid_to=valid_to,
                                    sources=sources, by=by, recorded_at=recorded_at)

    def end(self, subject: str, predicate: str, obj: Any = None, *, at: str, sources: Iterable[str] = (),
            by: str = "operator") -> WriteResult:
        """Close, at ``at``, what holds for (subject, predicate) or (subject, predicate, object)."""
        return self._writer.end(subject, predicate, obj, at=at, sources=sources, by=by)

    def retract(self, fact: str, reason: str | None = None) -> WriteResult:
        """Withdraw a statement from now on; it stays in the history."""
        return self._writer.retract(fact, reason)

    def import_jsonl(self, source: str | Path | Iterable[str], *, strict: bool = False) -> ImportReport:
        """Entities, records and statements from JSONL lines (SPEC 5), each line checked before any is written."""
        from graphmem.transfer.importer import import_lines
        self._lexicon = None  # an import may add aliases and descriptions
        with gc_paused():
            return import_lines(self.store, self._checks, source, strict=strict)

    # reads (graphmem.view.reads) -----------------------------------------------------------

    def current(self, subject: str, *, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None) -> CurrentResult:
        """What holds for ``subject`` at ``as_of`` as known at ``known_at`` (each defaults to now, SPEC 4:
        given only ``known_at``, the answer is what we believed then about now)."""
        return self._reads.current(subject, as_of=as_of, known_at=known_at, predicate=predicate)

    def timeline(self, subject: str, *, predicate: str | None = None, known_at: str | None = None) -> TimelineResult:
        """Every interval of ``subject`` (by predicate, then start) and the events behind them."""
        return self._reads.timeline(subject, predicate=predicate, known_at=known_at)

    def facts(self, *, predicate: str | None = None, object: str | None = None, subject_type: str | None = None,
              as_of: str | None = None) -> FactsResult:
        """Field filters over the view at ``as_of`` (default now), ordered by subject, predicate, start."""
        return self._reads.facts(predicate=predicate, object=object, subject_type=subject_type, as_of=as_of)

    def why(self, fact: str) -> WhyResult:
        """The receipts of one statement: sources, supersession, conflicts, ends, retraction."""
        return self._reads.why(fact)

    # rebuild (graphmem.view.rebuild) ----------------------------------------------------------

    def rebuild(self, *, check: bool = False) -> RebuildReport:
        """Recompute the view from the statements; with ``check``, only compare (``view.rebuild.rebuild``)."""
        return view_rebuild.rebuild(self.store, self.registry, check=check, forget=self._forget_lexicon)

    def finish_migration(self, up: view_rebuild.Upgrade) -> MigrateReport:
        """After ``migrations.upgrade_layout``: the derived data made by the current code, the mark removed."""
        return view_rebuild.finish_migration(self.store, self.registry, self.path, up)

    def compare_views(self, names: dict[str, str], content_only: bool,
                      each: Callable[[str, list[Statement], str, list[Interval], int, list[str]], R],
                      write_changed: bool = False) -> tuple[list[R], list[ViewFiles]]:
        """Every subject recomputed and compared with its stored rows (``view.rebuild.compare_views``)."""
        return view_rebuild.compare_views(self.store, self.registry, names, content_only, each, write_changed)

    def drift_entry(self, ref: str, view: list[Interval], parts: list[str]) -> dict[str, Any]:
        """How the stored rows of ``ref`` differ from ``view`` (``view.rebuild.drift_entry``)."""
        return view_rebuild.drift_entry(self.store, ref, view, parts)

    # evidence ---------------------------------------------------------------------

    def ingest(self, source: Any, *, redact: bool = True, extract: bool = False) -> IngestReport:
        """Store evidence records from JSONL lines (a path, a binary stream or byte lines); with
        ``extract``, also extract from the new records and apply it (the report's ``extraction``)."""
        from graphmem.evidence.ingest import ingest
        report = ingest(self.store, source, redact=redact)
        if extract and report.stored:
            report = dataclasses.replace(report, extraction=self.extract_records(list(report.stored), apply=True))
        return report

    def record(self, ref: str) -> Record:
        """A stored evidence record by its ``rec:N`` ref."""
        rec: Record | None = self.store.record(parse_record_ref(ref))
        if rec is None:
            raise BadInput(f"unknown record {ref!r}: no record has that ref")
        return rec

    def search(self, query: str, *, limit: int = 10) -> SearchResult:
        """BM25-ranked records for the words of ``query`` (quotes and operators are taken as plain words)."""
        check_int(limit, "limit", 1, 1000)
        from graphmem.evidence.textindex import query_terms
        terms = search_terms(check_text(query, "query"))
        hits = self.store.search_records(query_terms(terms), limit)
        return SearchResult(query, tuple(terms), tuple(
            SearchHit(f"rec:{i}", score, snippet(text, terms), ts, kind, src, scope, imp)
            for i, score, text, ts, kind, src, scope, imp in hits))

    def extractor(self) -> Extractor:
        """The spaCy extractor for this store, built on first use and after entities change."""
        from graphmem.evidence.extraction import Extractor
        count = self.store.entity_count()
        if self._extractor is None or self._extractor_entities != count:
            self._extractor = Extractor(self.ontology, self.registry, list(self.store.all_entities()))
            self._extractor_entities = count
        extractor: Extractor = self._extractor
        return extractor

    def extract_text(self, text: str, *, at: str | None = None, apply: bool = False) -> ExtractResult:
        """Proposals from free text; with ``apply``, the text is first stored as a record."""
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
        """Proposals from stored records; with ``apply``, write mentions and assertions citing them."""
        ids = [parse_record_ref(r) for r in refs]
        batch = self.store.records_between(min(ids), max(ids)) if len(ids) > 20 else {}
        recs = [batch[i] if i in batch else self.record(f"rec:{i}") for i in ids]
        extractor = self.extractor()
        items = [(rec, extractor.extract(rec.text, default_time=rec.ts, evidence=rec.ref)) for rec in recs]
        written = self._writer.extractions(items) if apply else []
        return ExtractResult(tuple((rec.ref, ex) for rec, ex in items), apply, tuple(written))

    def extract_pending(self, *, apply: bool = False, limit: int | None = None) -> ExtractResult:
        """Proposals from the records not extracted from yet (``limit``: the first that many)."""
        return self.extract_records([f"rec:{i}" for i in self.store.pending_record_ids(limit)], apply=apply)

    # export, lint ---------------------------------------------------------------------

    def export(self, fmt: str = "jsonl", as_of: str | None = None) -> str:
        from graphmem.transfer.export import export
        return export(self.store, fmt, as_of)

    def lint(self) -> LintReport:
        from graphmem.view.lint import LintParts, lint
        with gc_paused():
            return lint(LintParts(self.store, self.registry, self.compare_views, self.drift_entry))

    # recommendation ---------------------------------------------------------------

    def lexicon(self) -> Lexicon:
        """The entity side of linking (names, lemmas, descriptions), built on first use and kept until
        an entity is written through this object (Kuzu's lock means no other process writes meanwhile)."""
        from graphmem.retrieval.linking import Lexicon
        writes = self.store.entity_writes
        if self._lexicon is None or self._lexicon[0] != writes:
            self._lexicon = (writes, Lexicon(self.store.all_entities()))
        return self._lexicon[1]

    def link(self, text: str, *, records: bool = True) -> tuple[Seed, ...]:
        """The entities ``text`` names or describes (``graphmem.retrieval.linking.Seed``), strongest match first."""
        from graphmem.retrieval.linking import Linker, link
        from graphmem.retrieval.recommend import check_idea
        return link(Linker(self.lexicon, self.ontology, self.store), check_idea(text), records=records)

    def recommend(self, idea: str, *, top: int = 5, as_of: str | None = None, known_at: str | None = None,
                  max_hops: int = 3, paths: int = 3) -> RecommendResult:
        """The projects ``idea`` fits best at ``as_of`` (as known at ``known_at``), each with the graph
        paths that carry its score (docs/recommend.md)."""
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
        """The shortest explained paths between two entities over the edges valid at ``as_of``."""
        from graphmem.retrieval.recommend import GraphParts, shortest_paths
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return shortest_paths(GraphParts(self.store, self.ontology, self.registry),
                              self.resolve(src, role="from"), self.resolve(dst, role="to"),
                              as_of=now if a is None else a, known_at=k, now=now, max_hops=max_hops, limit=limit)

    def pack(self, query: str, *, budget_tokens: int = 1000, max_items: int = 40, as_of: str | None = None,
             known_at: str | None = None, trace: bool = False, tokenizer: Any = None) -> PackResult:
        """A cited context bundle for ``query`` within ``budget_tokens`` (docs/packing.md). ``tokenizer``:
        any function from text to a token count (default: graphmem's ``chars4`` counter)."""
        from graphmem.retrieval.packing import PackParts, pack
        check_text(query, "query")
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return pack(PackParts(self.store, self.ontology, self.registry, self.lexicon), query,
                    budget_tokens=budget_tokens, max_items=max_items, as_of=now if a is None else a,
                    known_at=k, now=now, trace=trace, tokenizer=tokenizer)

    def graph(self, as_of: str | None = None) -> nx.MultiDiGraph:
        """The typed graph valid at ``as_of`` (default now) as a networkx MultiDiGraph."""
        from graphmem.transfer.export import to_networkx
        return to_networkx(self.store, as_of)


def open(path: str | Path | None = None, **kwargs: Any) -> Memory:  # noqa: A001  (graphmem.open, like sqlite3.connect)
    """Open (creating if needed) the store at ``path``; without one, the store the CLI uses by default
    (``GRAPHMEM_STORE``, else the platform user data directory: ``graphmem.config.default_store``)."""
    return Memory(store_location(path), **kwargs)


def migrate(path: str | Path, **memory_options: Any) -> MigrateReport:
    """Upgrade the store at ``path`` written in an older layout, in place (``graphmem migrate``): the
    engine's named migrations run after a copy aside, then the view and full-text index are made
    again by this version. ``memory_options`` go to ``Memory`` (ontology and predicate folders)."""
    from graphmem.store import migrate_layout

    def finish(where: Path, up: Any) -> MigrateReport:
        with Memory(where, create=False, repair=True, **memory_options) as m:
            return m.finish_migration(up)

    return migrate_layout(Path(path), finish)
