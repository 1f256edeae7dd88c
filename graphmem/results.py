"""Result values returned by the Python API; each converts to the CLI's JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphmem.errors import BadInput, check_int
from graphmem.model import Entity, Interval, Statement, fact_ref
from graphmem.model.times import format_instant
from graphmem.notebook import HtmlRepr

if TYPE_CHECKING:
    from graphmem.ontology.schema import Ontology, Registry


@dataclass(frozen=True)
class CurrentResult(HtmlRepr):
    """What holds for one subject; ``subject`` carries ref, type and name (aliases are not loaded)."""

    subject: Entity
    as_of: int
    known_at: int
    facts: tuple[Interval, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.current.v1", "subject": self.subject.brief(),
                "as_of": format_instant(self.as_of), "known_at": format_instant(self.known_at),
                "facts": [iv.to_dict() for iv in self.facts]}


@dataclass(frozen=True)
class TimelineResult(HtmlRepr):
    subject: Entity
    known_at: int
    intervals: tuple[Interval, ...]
    events: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.timeline.v1", "subject": self.subject.brief(),
                "known_at": format_instant(self.known_at),
                "intervals": [iv.to_dict() for iv in self.intervals], "events": list(self.events)}


@dataclass(frozen=True)
class FactsResult(HtmlRepr):
    """Facts with their subjects; each subject carries ref, type and name (aliases are not loaded)."""

    as_of: int | None
    filters: dict[str, Any]
    facts: tuple[tuple[Entity, Interval], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.facts.v1", "as_of": format_instant(self.as_of), "filters": self.filters,
                "facts": [iv.to_dict(subject=e.brief()) for e, iv in self.facts]}


@dataclass(frozen=True)
class WhyResult(HtmlRepr):
    statement: Statement
    subject: Entity | None
    records: dict[str, Any]  # cited record ref -> Record, or None when it does not resolve
    intervals: tuple[Interval, ...]
    supersedes: tuple[int, ...]
    superseded_by: tuple[int, ...]
    conflicts: tuple[int, ...]
    ended_by: tuple[int, ...]
    cited_by: tuple[Statement, ...] = ()  # the cites of this assertion, retracted ones included

    def to_dict(self) -> dict[str, Any]:
        st = self.statement
        sources = [{**self._source(s), "attached_at": format_instant(st.recorded_at), "cite": None}
                   for s in st.sources]
        seen = set(st.sources)
        for c in sorted(self.cited_by):
            if c.retracted_at is None:
                for s in c.sources:
                    if s not in seen:
                        seen.add(s)
                        sources.append({**self._source(s), "attached_at": format_instant(c.recorded_at),
                                        "cite": c.ref, "note": c.object})
        return {
            "schema": "graphmem.why.v1", "fact": st.to_dict(),
            "subject": self.subject.brief() if self.subject else {"ref": st.subject},
            "sources": sources,
            "cited_by": [c.to_dict() for c in sorted(self.cited_by)],
            "in_view": [iv.to_dict() for iv in self.intervals],
            "supersedes": [fact_ref(i) for i in self.supersedes],
            "superseded_by": [fact_ref(i) for i in self.superseded_by],
            "conflicts": [fact_ref(i) for i in self.conflicts],
            "ended_by": [fact_ref(i) for i in self.ended_by],
            "retraction": None if st.retracted_at is None else {
                "at": format_instant(st.retracted_at), "reason": st.retract_reason},
        }


    def _source(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("rec:"):
            return {"ref": ref, "kind": "uri"}
        rec = self.records.get(ref)
        if rec is None:
            return {"ref": ref, "kind": "record", "resolved": False}
        return {"ref": ref, "kind": "record", "resolved": True, "ts": format_instant(rec.ts), "record_kind": rec.kind,
                "source": rec.source, "text": rec.text}


@dataclass(frozen=True)
class WriteResult(HtmlRepr):
    """What a write created: refs of entities and statements."""

    action: str
    refs: tuple[str, ...]
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": f"graphmem.{self.action}.v1", "created": list(self.refs), **self.detail}


@dataclass(frozen=True)
class ImportReport(HtmlRepr):
    lines: int
    entities_created: int
    entities_updated: int
    statements: int
    retractions: int
    first_fact: int | None
    last_fact: int | None
    errors: tuple[tuple[int, str], ...]
    written: bool
    seconds: float = 0.0
    unchanged: int = 0  # lines equal to what the store held: nothing written for them

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "graphmem.import.v1", "ok": self.ok, "written": self.written, "lines": self.lines,
            "entities_created": self.entities_created, "entities_updated": self.entities_updated,
            "statements": self.statements, "retractions": self.retractions, "unchanged": self.unchanged,
            "facts": None if self.first_fact is None else [fact_ref(self.first_fact), fact_ref(self.last_fact or 0)],
            "errors": [{"line": n, "reason": r} for n, r in self.errors],
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class LintIssue:
    code: str
    severity: str
    message: str
    fact: str | None = None
    subject: str | None = None
    record: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"code": self.code, "severity": self.severity, "message": self.message}
        for k in ("fact", "subject", "record"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d


SEVERITY_RANK = {"warning": 1, "error": 2}
# every code lint reports, with its severity (SPEC 6)
LINT_CODES = {"unknown_predicate": "error", "subject_type_mismatch": "error", "object_type_mismatch": "error",
              "dangling_entity": "error", "interval_invalid": "error", "single_value_conflict": "error",
              "dangling_source": "error", "view_drift": "error", "duplicate_assertion": "warning",
              "missing_source": "warning", "stale_fact": "warning", "future_fact": "warning"}


def check_fail_on(fail_on: str, what: str = "fail_on") -> str:
    """``fail_on`` if it is a severity a lint can fail on (error or warning), else BadInput naming both."""
    if fail_on not in SEVERITY_RANK:
        raise BadInput(f"bad {what} {fail_on!r}: expected error or warning")
    return fail_on


def check_lint_codes(codes: Iterable[str] | None, what: str = "code") -> tuple[str, ...] | None:
    """The lint codes asked for (None: every code), each checked; an unknown one is BadInput naming them all."""
    if codes is None:
        return None
    if isinstance(codes, str):
        codes = [codes]
    chosen: list[str] = []
    for c in codes:
        if c not in LINT_CODES:
            raise BadInput(f"unknown lint {what} {c!r}: expected one of {', '.join(sorted(LINT_CODES))}")
        if c not in chosen:
            chosen.append(c)
    return tuple(chosen)


@dataclass(frozen=True)
class LintReport(HtmlRepr):
    """Every issue lint found, errors first, then by code and what it is about; ``checked`` counts what was read."""

    issues: tuple[LintIssue, ...]
    checked: dict[str, int]

    def counts(self) -> dict[str, Any]:
        by_code: dict[str, int] = {}
        for i in self.issues:
            by_code[i.code] = by_code.get(i.code, 0) + 1
        return {"error": sum(i.severity == "error" for i in self.issues),
                "warning": sum(i.severity == "warning" for i in self.issues),
                "by_code": dict(sorted(by_code.items())), **self.checked}

    def summary(self) -> list[dict[str, Any]]:
        """One entry per code found: ``code``, ``severity``, ``count``; errors first, then the most frequent."""
        by_code: dict[str, list[Any]] = {}
        for i in self.issues:
            by_code.setdefault(i.code, [i.severity, 0])[1] += 1
        return [{"code": c, "severity": sev, "count": n} for c, (sev, n) in
                sorted(by_code.items(), key=lambda kv: (-SEVERITY_RANK[kv[1][0]], -kv[1][1], kv[0]))]

    def select(self, codes: Iterable[str] | None = None) -> tuple[LintIssue, ...]:
        """The issues of these codes (all with None); an unknown code is BadInput naming the known ones."""
        chosen = check_lint_codes(codes)
        return self.issues if chosen is None else tuple(i for i in self.issues if i.code in chosen)

    def fails(self, fail_on: str = "error", codes: Iterable[str] | None = None) -> bool:
        """Whether an issue (of ``codes``, if given) is at or above ``fail_on`` (error or warning; BadInput otherwise)."""
        rank = SEVERITY_RANK[check_fail_on(fail_on)]
        return any(SEVERITY_RANK[i.severity] >= rank for i in self.select(codes))

    def to_dict(self, fail_on: str = "error", *, codes: Iterable[str] | None = None,
                limit: int | None = None) -> dict[str, Any]:
        """The ``graphmem.lint.v1`` document: ``counts`` and ``summary`` cover every issue; ``issues`` holds
        those of ``codes`` (all with None), at most ``limit`` of them (all with None), and ``ok`` judges them;
        ``matched`` is how many there are and ``more`` how many ``limit`` left out."""
        chosen = check_lint_codes(codes)
        if limit is not None:
            check_int(limit, "limit", 0, 10**9)
        issues = self.select(chosen)
        shown = issues if limit is None else issues[:limit]
        return {"schema": "graphmem.lint.v1", "ok": not self.fails(fail_on, chosen), "fail_on": fail_on,
                "counts": self.counts(), "summary": self.summary(), "codes": None if chosen is None else list(chosen),
                "limit": limit, "matched": len(issues), "more": len(issues) - len(shown),
                "issues": [i.to_dict() for i in shown]}


@dataclass(frozen=True)
class RebuildReport(HtmlRepr):
    checked_only: bool
    drift: tuple[dict[str, Any], ...]
    counts: dict[str, int]
    seconds: float
    repaired: dict[str, int] | None = None  # after an interrupted bulk commit: name keys and records made again
    problems: tuple[dict[str, Any], ...] = ()  # with --check: what is wrong beyond the view (Store.integrity_problems)

    @property
    def ok(self) -> bool:
        return not self.drift and not self.problems

    def to_dict(self) -> dict[str, Any]:
        doc = {"schema": "graphmem.rebuild.v1", "check": self.checked_only, "ok": self.ok,
               "drift": list(self.drift), "problems": list(self.problems), "counts": self.counts,
               "seconds": round(self.seconds, 3)}
        if self.repaired is not None:
            doc["repaired"] = self.repaired
        return doc


@dataclass(frozen=True)
class MigrateReport(HtmlRepr):
    """What ``graphmem migrate`` did."""

    store: str
    from_version: int
    to_version: int
    steps: tuple[str, ...]
    backup: str | None
    restarted: bool
    counts: dict[str, int]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.migrate.v1", "store": self.store, "from": self.from_version,
                "to": self.to_version, "migrated": bool(self.steps), "steps": list(self.steps),
                "backup": self.backup, "restarted": self.restarted, "counts": self.counts,
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class SearchHit:
    """A ranked record: what a search shows of it (``Memory.record(ref)`` has the rest)."""

    ref: str
    score: float  # BM25
    snippet: str
    ts: int
    kind: str
    source: str | None
    scope: str | None
    importance: float

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "score": round(self.score, 6), "snippet": self.snippet, "ts": format_instant(self.ts),
                "kind": self.kind, "source": self.source, "scope": self.scope, "importance": self.importance}


@dataclass(frozen=True)
class SearchResult(HtmlRepr):
    query: str
    terms: tuple[str, ...]
    hits: tuple[SearchHit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.search.v1", "query": self.query, "terms": list(self.terms),
                "results": [h.to_dict() for h in self.hits]}


@dataclass(frozen=True)
class ExtractResult(HtmlRepr):
    """Proposals per source (a record ref, or "text"), and what was written with --apply."""

    items: tuple[tuple[str, Any], ...]  # (source, Extraction)
    writes_performed: bool
    written: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        mentions, entities, assertions, ends, skipped = [], [], [], [], []
        for source, ex in self.items:
            rec = source if source.startswith("rec:") else None
            mentions += [{**m.to_dict(), "record": rec} for m in ex.mentions]
            entities += [{**e.to_dict(), "record": rec} for e in ex.entities]
            assertions += [p.to_dict() for p in ex.assertions]
            ends += [p.to_dict() for p in ex.ends]
            skipped += [{**s, "would_propose": [list(k) for k in s["would_propose"]], "record": rec}
                        for s in ex.skipped]
        return {"schema": "graphmem.extract.v1", "writes_performed": self.writes_performed,
                "records": [s for s, _ in self.items if s.startswith("rec:")], "mentions": mentions,
                "entities": entities, "assertions": assertions, "ends": ends, "skipped": skipped,
                "written": list(self.written)}


@dataclass(frozen=True)
class EntityDoc(HtmlRepr):
    """One entity, as ``entity show`` prints it."""

    entity: Entity

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.entity.v1", "entity": self.entity.to_dict()}


@dataclass(frozen=True)
class EntityList(HtmlRepr):
    """Entities by type then ref, as ``entity list`` prints them."""

    entities: tuple[Entity, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.entities.v1", "entities": [e.to_dict() for e in self.entities]}


@dataclass(frozen=True)
class StoreInfo(HtmlRepr):
    """Where the store is and how much it holds (``init``)."""

    store: str
    statements: int
    entities: int

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.init.v1", "store": self.store, "statements": self.statements,
                "entities": self.entities}


@dataclass(frozen=True)
class OntologyDoc(HtmlRepr):
    """The loaded ontology (``ontology``)."""

    ontology: Ontology

    def to_dict(self) -> dict[str, Any]:
        ont = self.ontology
        return {"schema": "graphmem.ontology.v1",
                "entity_types": [{"name": t.name, "prefix": t.prefix, "description": t.description}
                                 for t in ont.entity_types.values()],
                "edge_types": [{"name": e.name, "description": e.description, "pairs": [list(p) for p in e.pairs]}
                               for e in ont.edge_types.values()]}


@dataclass(frozen=True)
class RegistryDoc(HtmlRepr):
    """The loaded predicate registry (``predicates``)."""

    registry: Registry

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.predicates.v1", "predicates": [
            {"name": p.name, "description": p.description, "subject_types": list(p.subject_types),
             "object": ({"entity_types": list(p.object_entity_types)} if p.entity_valued else
                        {"type": p.literal_type, **({"values": list(p.enum_values)} if p.enum_values else {})}),
             "cardinality": p.cardinality, "edge": p.edge, "aliases": list(p.aliases), "stale_after": p.stale_after}
            for p in self.registry.predicates.values()]}


@dataclass(frozen=True)
class ExportDoc(HtmlRepr):
    """An export (``export --json``): JSONL as a list of line objects, GraphML as text."""

    format: str
    as_of: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        body: Any = [json.loads(line) for line in self.text.splitlines()] if self.format == "jsonl" else self.text
        return {"schema": "graphmem.export.v1", "format": self.format, "as_of": self.as_of,
                "lines" if self.format == "jsonl" else "graphml": body}
