"""The Python API: everything the command line does, as methods of ``Memory``.

>>> import graphmem, tempfile
>>> m = graphmem.open(tempfile.mkdtemp())
>>> m.add_entity("Project", "Atlas").refs
('project:atlas',)
>>> m.close()
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from graphmem.bulk import forked_map, gc_paused
from graphmem.config import store_location
from graphmem.errors import (
    AmbiguousEntity,
    BadInput,
    BadTime,
    GraphmemError,
    TypeMismatch,
    UnknownEntity,
    UnknownPredicate,
    check_int,
)
from graphmem.evidence.query import search_terms, snippet
from graphmem.model import ASSERTERS, DEFAULT_TRUST, TRUST_RANK, Entity, Interval, Statement, Value
from graphmem.model.text import check_text, clean
from graphmem.model.times import format_instant, now_us, parse_date_value, parse_instant
from graphmem.ontology.schema import Ontology, Predicate, Registry, load_ontology, load_registry
from graphmem.results import (
    CurrentResult,
    EntityDoc,
    EntityList,
    ExportDoc,
    FactsResult,
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
from graphmem.store import Store, ViewFiles, decode_log, same_view, statements_from_log, unpack, view_text
from graphmem.view.temporal import holding, intervals_for, view_for_subject

if TYPE_CHECKING:
    from graphmem.store.kuzu.migrations import Upgrade

_SLUG_RE = re.compile(r"[\W_]+")
_FACT_RE = re.compile(r"^fact:(\d{1,18})$")
_REC_RE = re.compile(r"^rec:(\d{1,18})$")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S+$")


def slug(name: str) -> str:
    """Lower-case, runs of non-alphanumerics become ``-``, trimmed: "Ada Lovelace" -> "ada-lovelace"."""
    return _SLUG_RE.sub("-", name.lower()).strip("-")


R = TypeVar("R")
_REWRITE_MAX = 2000  # a rebuild rewrites up to this many subjects one by one, more in one bulk load
_DRIFT_MAX = 50  # subjects listed in a drift report
# primary-key lookups per table a plain rebuild makes to find a table a killed checkpoint left unsound
# (rebuild --check makes 5,000; a repair writes the tables it suspects again without looking): about
# 0.2 s over every table
_PK_PROBES_REBUILD = 200
EXTRACT_MAX_CHARS = 100_000  # text extracted from at once (spaCy's own limit is 1,000,000, and its memory grows with it)
_RANGE_STATEMENTS = 250_000  # statements per grouped read when the whole view is reloaded


def parse_record_ref(text: str) -> int:
    m = _REC_RE.match(str(text).strip())
    if not m:
        raise BadInput(f"bad record ref {text!r}: expected rec:N")
    return int(m[1])


def _same_statements(ref: str, stored_log: str, log: list[Statement]) -> bool:
    """Whether a stored log (of any row form) holds the statements of ``log``, names aside."""
    stored, _ = statements_from_log(ref, stored_log, lambda _: None)
    return [s[:14] for s in stored] == [s[:14] for s in log]


def parse_fact_ref(text: str) -> int:
    m = _FACT_RE.match(str(text).strip())
    if not m:
        raise BadInput(f"bad fact ref {text!r}: expected fact:N")
    return int(m[1])


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
        self._known_records: set[int] = set()
        self._extractor: Any = None
        self._extractor_entities = -1
        self._lexicon: tuple[int, Any] | None = None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # resolution -----------------------------------------------------------------

    def entity_type(self, text: str) -> str:
        for t in self.ontology.entity_types:
            if t.lower() == str(text).strip().lower():
                return t
        raise BadInput(f"unknown entity type {text!r}; expected one of {', '.join(sorted(self.ontology.entity_types))}")

    def resolve(self, text: str, *, role: str = "entity") -> Entity:
        """An entity by ref, exact name or alias (case-insensitive); errors list candidates."""
        text = str(text).strip()
        if not text:
            raise UnknownEntity(f"empty {role}: expected an entity ref, name or alias")
        if ":" in text:
            e = self.store.entity(text.lower())
            if e is not None:
                return e
        refs = self.store.refs_named(text)
        if len(refs) == 1:
            e = self.store.entity(refs[0])
            if e is not None:
                return e
        if len(refs) > 1:
            raise AmbiguousEntity(f"{role} {text!r} is ambiguous; candidates: {', '.join(refs)}")
        near = self.store.names_containing(text.split(":")[-1] or text)
        hint = f"; did you mean: {', '.join(near)}" if near else "; expected an existing entity ref, name or alias"
        raise UnknownEntity(f"unknown {role} {text!r}{hint}")

    def predicate(self, text: str) -> Predicate:
        key = str(text).strip().lower()
        name = key if key in self.registry.predicates else self.registry.aliases.get(key)
        if name is None:
            raise UnknownPredicate(f"unknown predicate {text!r}; known: {', '.join(sorted(self.registry.predicates))}")
        return self.registry.predicates[name]

    def _time(self, text: str | None, what: str, now: int) -> int | None:
        if text is None:
            return None
        return parse_instant(text, now=now, what=what)

    def coerce_object(self, p: Predicate, subject: Entity, raw: Any) -> tuple[Value, str, str | None]:
        """Check an object against a predicate: (value, kind, entity name)."""
        if p.entity_valued:
            obj = self.resolve(str(raw), role=f"object of {p.name}")
            self.check_object_type(p, subject.type, obj.type, obj.ref)
            return obj.ref, "entity", obj.name
        return self.literal(p, raw), "literal", None

    def check_object_type(self, p: Predicate, stype: str, otype: str, oref: str) -> None:
        if otype not in p.object_entity_types:
            raise TypeMismatch(
                f"object {oref!r} is a {otype}; predicate {p.name!r} expects {p.object_description()}")
        assert p.edge is not None
        if (stype, otype) not in self.ontology.edge_types[p.edge].pairs:
            raise TypeMismatch(f"edge {p.edge} does not allow {stype} -> {otype} (object {oref!r})")

    def check_subject_type(self, p: Predicate, subject: Entity) -> None:
        if subject.type not in p.subject_types:
            raise TypeMismatch(f"subject {subject.ref!r} is a {subject.type}; predicate {p.name!r} expects a "
                               + " or ".join(p.subject_types))

    @staticmethod
    def literal(p: Predicate, raw: Any) -> Value:
        lt = p.literal_type
        bad = f"bad value {raw!r} for {p.name!r}: expected {p.object_description()}"
        if lt == "enum":
            v = str(raw).strip().lower() if isinstance(raw, str) else raw
            if v not in p.enum_values:
                raise BadInput(bad)
            return str(v)
        if lt == "int":
            if isinstance(raw, bool):
                raise BadInput(bad)
            try:
                return int(str(raw).strip())
            except ValueError:
                raise BadInput(bad) from None
        if lt == "float":
            if isinstance(raw, bool):
                raise BadInput(bad)
            try:
                f = float(str(raw).strip())
            except ValueError:
                raise BadInput(bad) from None
            if f != f or f in (float("inf"), float("-inf")):
                raise BadInput(bad)
            return f
        if lt == "bool":
            s = str(raw).strip().lower()
            if s in ("true", "yes", "1"):
                return True
            if s in ("false", "no", "0"):
                return False
            raise BadInput(bad)
        if lt == "date":
            return parse_date_value(str(raw), what=f"{p.name} date")
        if not isinstance(raw, str) or not raw.strip():
            raise BadInput(bad)
        text = clean(raw, f"value for {p.name!r}")
        if lt == "url":
            if not re.match(r"^https?://\S+$", text.strip()):
                raise BadInput(f"bad value {raw!r} for {p.name!r}: expected an http(s) URL")
            return text.strip()
        if lt == "string" and "\n" in text:
            raise BadInput(f"bad value {raw!r} for {p.name!r}: expected a single line (use a text predicate)")
        return text.strip() if lt == "string" else text

    def check_sources(self, sources: Iterable[str], pending: dict[str, int] | None = None) -> tuple[str, ...]:
        """Sources are record refs that exist (``rec:N``) or URIs.

        ``pending`` maps record refs written earlier in the same import to the ids they get.
        """
        out: list[str] = []
        known = self._known_records
        for s in sources:
            s = clean(str(s), "source").strip()
            if s.startswith("rec:") and pending and s in pending:
                s = f"rec:{pending[s]}"
            elif s.startswith("rec:"):
                rid = parse_record_ref(s)
                if rid not in known and self.store.record(rid) is not None:
                    known.add(rid)  # records are never deleted, so a hit stays true
                if rid not in known:
                    raise BadInput(f"unknown record {s!r}: expected the ref of an ingested record (see 'graphmem search')")
                s = f"rec:{rid}"
            elif not _URI_RE.match(s):
                raise BadInput(f"bad source {s!r}: expected a record ref (rec:N) or a URI such as https://...")
            if s not in out:
                out.append(s)
        return tuple(out)

    @staticmethod
    def trust_for(by: str, sources: tuple[str, ...]) -> str:
        """The asserter's default tier, capped by evidence (docs/semantics.md)."""
        tier = DEFAULT_TRUST[by]
        cap = "low" if not sources else ("high" if any(s.startswith("rec:") for s in sources) else "medium")
        return tier if TRUST_RANK[tier] <= TRUST_RANK[cap] else cap

    # entities -------------------------------------------------------------------

    def make_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> Entity:
        etype = self.entity_type(type_name)
        if not isinstance(name, str) or not name.strip():
            raise BadInput(f"bad entity name {name!r}: expected a non-empty name")
        name = " ".join(clean(name, "entity name").split())
        s = slug(name)
        if not s:
            raise BadInput(f"bad entity name {name!r}: it has no letters or digits to make a ref from")
        kept: list[str] = []
        for a in aliases:
            if not isinstance(a, str) or not a.strip():
                raise BadInput(f"bad alias {a!r}: expected a non-empty string")
            a = " ".join(clean(a, "alias").split())
            if a.lower() != name.lower() and a not in kept:
                kept.append(a)
        if not isinstance(description, str):
            raise BadInput(f"bad description {description!r}: expected text")
        description = clean(description, "description")
        return Entity(f"{self.ontology.entity_types[etype].prefix}:{s}", etype, name, tuple(kept), description)

    def add_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> WriteResult:
        """Add an entity; its ref is ``type:slug``. An existing ref is bad input."""
        e = self.make_entity(type_name, name, aliases, description)
        if self.store.entity(e.ref) is not None:
            raise BadInput(f"entity {e.ref!r} already exists")
        with self.store.transaction():
            self.store.add_entity(e, now_us())
        return WriteResult("entity", (e.ref,), {"entity": e.to_json()})

    def entity(self, text: str) -> Entity:
        return self.resolve(text)

    def entities(self, type_name: str | None = None, match: str | None = None) -> list[Entity]:
        return self.store.entities(self.entity_type(type_name) if type_name else None, match)

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

    # writes -----------------------------------------------------------------------

    def assert_(self, subject: str, predicate: str, obj: Any, *, valid_from: str | None = None,
                valid_to: str | None = None, sources: Iterable[str] = (), by: str = "operator",
                recorded_at: str | None = None) -> WriteResult:
        """Record that ``subject predicate obj`` holds from ``valid_from`` (default: now)."""
        now = now_us()
        st = self.build_assert(self.store.next_fact_id(), subject, predicate, obj, valid_from, valid_to,
                               sources, by, recorded_at, now)
        self._write([st])
        return WriteResult("assert", (st.ref,), {"fact": st.to_json()})

    def _head(self, subject: str, predicate: str, by: str, recorded_at: str | None, now: int,
              resolve: Any) -> tuple[int, Entity, Predicate]:
        """What every statement checks first: the asserter, the record time, the subject and the predicate."""
        if by not in ASSERTERS:
            raise BadInput(f"bad asserter {by!r}: expected one of {', '.join(ASSERTERS)}")
        rec = parse_instant(recorded_at, now=now, what="recorded_at") if recorded_at is not None else now
        if rec > now:
            raise BadTime(f"bad recorded_at {recorded_at!r}: it lies in the future")
        s = resolve(subject, role="subject")
        p = self.predicate(predicate)
        self.check_subject_type(p, s)
        return rec, s, p

    def build_assert(self, fid: int, subject: str, predicate: str, obj: Any, valid_from: str | None,
                     valid_to: str | None, sources: Iterable[str], by: str, recorded_at: str | None, now: int,
                     resolve: Any = None, records: dict[str, int] | None = None) -> Statement:
        resolve = resolve or self.resolve
        rec, s, p = self._head(subject, predicate, by, recorded_at, now, resolve)
        if p.entity_valued:
            o = resolve(str(obj), role=f"object of {p.name}")
            self.check_object_type(p, s.type, o.type, o.ref)
            value, kind, oname = o.ref, "entity", o.name
        else:
            value, kind, oname = self.literal(p, obj), "literal", None
        vf = rec if valid_from is None else parse_instant(valid_from, now=now, what="valid_from")
        vt = None if valid_to is None else parse_instant(valid_to, now=now, what="valid_to")
        if vt is not None and vt <= vf:
            raise BadTime(f"bad valid_to {format_instant(vt)}: expected a time after valid_from {format_instant(vf)}")
        srcs = self.check_sources(sources, records)
        return Statement(fid, "assert", s.ref, p.name, value, kind, vf, vt, rec, None, None, srcs, by,
                         self.trust_for(by, srcs), oname)

    def end(self, subject: str, predicate: str, obj: Any = None, *, at: str, sources: Iterable[str] = (),
            by: str = "operator") -> WriteResult:
        """Close, at ``at``, what holds for (subject, predicate) or (subject, predicate, object)."""
        now = now_us()
        st = self.build_end(self.store.next_fact_id(), subject, predicate, obj, at, sources, by, None, now)
        view = self.store.subject_view(st.subject)
        held = [iv for iv in view if iv.predicate == st.predicate and iv.contains(st.valid_from)
                and (st.object is None or iv.object == st.object)]
        if not held:
            what = f"{st.subject} {st.predicate}" + ("" if st.object is None else f" {st.object}")
            raise BadInput(f"nothing holds for {what} at {format_instant(st.valid_from)}; expected a value that "
                           "holds then (see 'graphmem timeline')")
        self._write([st])
        return WriteResult("end", (st.ref,), {"fact": st.to_json(), "closed": [iv.to_json() for iv in held]})

    def build_end(self, fid: int, subject: str, predicate: str, obj: Any, at: str | None,
                  sources: Iterable[str], by: str, recorded_at: str | None, now: int, resolve: Any = None,
                  records: dict[str, int] | None = None) -> Statement:
        resolve = resolve or self.resolve
        if at is None:
            raise BadTime("missing 'at': expected the time at which the value stops holding")
        rec, s, p = self._head(subject, predicate, by, recorded_at, now, resolve)
        value: Value | None = None
        kind, oname = "", None
        if obj is not None:
            if p.entity_valued:
                o = resolve(str(obj), role=f"object of {p.name}")
                value, kind, oname = o.ref, "entity", o.name
            else:
                value, kind = self.literal(p, obj), "literal"
        t = parse_instant(at, now=now, what="at")
        srcs = self.check_sources(sources, records)
        return Statement(fid, "end", s.ref, p.name, value, kind, t, None, rec, None, None, srcs, by,
                         self.trust_for(by, srcs), oname)

    def retract(self, fact: str, reason: str | None = None) -> WriteResult:
        """Withdraw a statement from now on; it stays in the history."""
        fid = parse_fact_ref(fact)
        now = now_us()
        st = self.store.statement(fid)
        if st is None:
            raise BadInput(f"unknown fact {fact!r}: no statement has that id")
        if st.retracted_at is not None:
            raise BadInput(f"fact {fact!r} is already retracted (at {format_instant(st.retracted_at)})")
        if reason is not None:
            reason = clean(str(reason), "reason")
        self._write([], [(fid, now, reason)])
        return WriteResult("retract", (st.ref,), {"retracted_at": format_instant(now), "reason": reason})

    def _write(self, stmts: list[Statement], retractions: Iterable[tuple[int, int, str | None]] = ()) -> None:
        """Append statements and retractions and bring the affected subjects' view up to date."""
        retractions = list(retractions)
        touched: dict[str, set[str]] = defaultdict(set)
        for s in stmts:
            touched[s.subject].add(s.predicate)
        retracted: dict[str, dict[int, tuple[int, str | None]]] = defaultdict(dict)
        for fid, at, reason in retractions:
            st = self.store.statement(fid) or next((s for s in stmts if s.id == fid), None)
            if st is None:
                raise BadInput(f"unknown fact 'fact:{fid}'")
            touched[st.subject].add(st.predicate)
            retracted[st.subject][fid] = (at, reason)
        with self.store.transaction():
            for s in stmts:
                self.store.add_statement(s)
            for fid, at, reason in retractions:
                self.store.mark_retracted(fid, at, reason)
            if stmts:
                self.store.set_next_fact_id(max(s.id for s in stmts) + 1)
            for subj, preds in touched.items():
                log = self.store.subject_log(subj)
                log.extend(s for s in stmts if s.subject == subj)
                marks = retracted.get(subj, {})
                log = [s._replace(retracted_at=marks[s.id][0], retract_reason=marks[s.id][1])
                       if s.id in marks else s for s in log]
                self.store.write_subject(subj, self.subject_name(subj), log, view_for_subject(log, self.registry), preds)

    def subject_name(self, ref: str) -> str:
        e = self.store.entity(ref)
        return e.name if e else ref

    def entity_names(self) -> dict[str, str]:
        return self.store.entity_names()

    # reads ------------------------------------------------------------------------

    def current(self, subject: str, *, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None) -> CurrentResult:
        """What holds for ``subject`` at ``as_of`` as known at ``known_at`` (each defaults to now, SPEC 4:
        given only ``known_at``, the answer is what we believed then about now)."""
        now = now_us()
        k = self._time(known_at, "known_at", now)
        a = self._time(as_of, "as_of", now)
        a = a if a is not None else now
        pred = self.predicate(predicate).name if predicate else None
        e, view = self._subject_and_view(subject)
        if k is not None and k < now:
            view = view_for_subject(self.store.subject_log(e.ref), self.registry, k)
        facts = [iv for iv in holding(view, a) if pred is None or iv.predicate == pred]
        return CurrentResult(e, a, k if k is not None else now, tuple(facts))

    def _subject_and_view(self, text: str) -> tuple[Entity, list[Interval]]:
        """The subject and its stored view; a ref with statements takes one key lookup (the hot path)."""
        ref = str(text).strip().lower()
        if ":" in ref:
            name, view = self.store.subject_name_and_view(ref)
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if name is not None and etype is not None:
                return Entity(ref, etype, name), view
        e = self.resolve(text, role="subject")
        return e, self.store.subject_view(e.ref)

    def _subject_log_and_view(self, text: str) -> tuple[Entity, list[Statement], list[Interval]]:
        ref = str(text).strip().lower()
        if ":" in ref:
            name, log, view = self.store.subject_name_log_and_view(ref)
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if name is not None and etype is not None:
                return Entity(ref, etype, name), log, view
        e = self.resolve(text, role="subject")
        return (e, *self.store.subject_log_and_view(e.ref))

    def timeline(self, subject: str, *, predicate: str | None = None, known_at: str | None = None) -> TimelineResult:
        """Every interval of ``subject`` (by predicate, then start) and the events behind them."""
        now = now_us()
        k = self._time(known_at, "known_at", now)
        pred = self.predicate(predicate).name if predicate else None
        e, log, view = self._subject_log_and_view(subject)
        if k is not None and k < now:
            view = view_for_subject(log, self.registry, k)
        kk = now if k is None else k
        intervals = [iv for iv in view if pred is None or iv.predicate == pred]
        events: list[tuple[int, int, dict[str, Any]]] = []
        for s in log:
            if pred is not None and s.predicate != pred:
                continue
            if s.recorded_at <= kk:
                d = s.to_json()
                d["event"] = s.op
                if s.retracted_at is not None and s.retracted_at > kk:
                    d["retracted_at"] = None
                    d["retract_reason"] = None
                events.append((s.recorded_at, s.id, d))
            if s.retracted_at is not None and s.retracted_at <= kk:
                events.append((s.retracted_at, s.id, {"event": "retract", "fact": s.ref, "predicate": s.predicate,
                                                       "recorded_at": format_instant(s.retracted_at),
                                                       "reason": s.retract_reason}))
        events.sort(key=lambda x: (x[0], x[1], x[2]["event"] == "retract"))
        return TimelineResult(e, kk, tuple(intervals), tuple(d for _, _, d in events))

    def facts(self, *, predicate: str | None = None, object: str | None = None, subject_type: str | None = None,
              as_of: str | None = None) -> FactsResult:
        """Field filters over the view at ``as_of`` (default now), ordered by subject, predicate, start."""
        now = now_us()
        a = self._time(as_of, "as_of", now)
        a = now if a is None else a
        p = self.predicate(predicate) if predicate else None
        stype = self.entity_type(subject_type) if subject_type else None
        filters: dict[str, Any] = {"predicate": p.name if p else None, "object": None, "subject_type": stype}
        rows: list[tuple[str, Interval]] = []
        names: dict[str, str] = {}
        views: dict[str, list[Interval]] = {}
        prefix = self.ontology.entity_types[stype].prefix + ":" if stype else None
        if object is not None and (p is None or p.entity_valued):
            o = self.resolve(object, role="object")
            filters["object"] = o.ref
            preds = [p] if p else [q for q in self.registry.predicates.values() if q.entity_valued]
            for q in preds:
                assert q.edge is not None
                for edge_iv in self.store.edges_into(o.ref, q.name, q.edge, a):
                    ref = edge_iv.subject
                    if prefix and not ref.startswith(prefix):
                        continue
                    if ref not in views:  # the edge carries interval and ids; the subject's row has sources too
                        name, views[ref] = self.store.subject_name_and_view(ref)
                        names[ref] = name or ref
                    full = next((x for x in views[ref] if x.key()[:7] == edge_iv.key()[:7]), edge_iv)
                    rows.append((ref, full))
        else:
            value = self.literal(p, object) if (object is not None and p is not None) else None
            if object is not None:
                filters["object"] = value
            for ref, name, view in self.store.all_subject_rows(prefix):
                names[ref] = name or ref
                rows.extend((ref, iv) for iv in holding(view, a)
                            if (p is None or iv.predicate == p.name) and (object is None or iv.object == value))
        out: list[tuple[Entity, Interval]] = []
        for ref, iv in sorted(rows, key=lambda r: (r[0], r[1].predicate, r[1].valid_from, str(r[1].object))):
            etype = self.ontology.type_for_prefix(ref.partition(":")[0]) or "?"
            out.append((Entity(ref, etype, names.get(ref, ref)), iv))
        return FactsResult(a, filters, tuple(out))

    def why(self, fact: str) -> WhyResult:
        """The receipts of one statement: sources, supersession, conflicts, ends, retraction."""
        fid = parse_fact_ref(fact)
        st = self.store.statement(fid)
        if st is None:
            raise BadInput(f"unknown fact {fact!r}: no statement has that id")
        log = [s for s in self.store.subject_log(st.subject) if s.predicate == st.predicate]
        p = self.registry.predicates.get(st.predicate)
        ivs = intervals_for(log, p.cardinality, None) if p else []
        mine = [iv for iv in ivs if fid in iv.assertions]
        supersedes: set[int] = set()
        superseded_by: set[int] = set()
        conflicts: set[int] = set()
        if p is not None and p.cardinality == "one":
            for iv in mine:
                conflicts.update(iv.conflicts)
                for other in ivs:
                    if other.object == iv.object:
                        continue
                    if other.valid_to == iv.valid_from:
                        supersedes.update(other.assertions)
                    if iv.valid_to is not None and other.valid_from == iv.valid_to:
                        superseded_by.update(other.assertions)
        for iv in ivs:
            if fid in iv.conflicts:
                conflicts.update(iv.assertions)
        ended_by: list[int] = []
        if st.op == "assert":
            for iv in mine:
                for e in log:
                    if (e.op == "end" and e.retracted_at is None and e.valid_from == iv.valid_to
                            and (e.object is None or e.object == st.object)):
                        ended_by.append(e.id)
        subject = self.store.entity(st.subject)
        records = {src: self.store.record(parse_record_ref(src)) for src in st.sources if src.startswith("rec:")}
        return WhyResult(st, subject, records, tuple(mine), tuple(sorted(supersedes)), tuple(sorted(superseded_by)),
                         tuple(sorted(conflicts - {fid})), tuple(sorted(set(ended_by))))

    # rebuild ----------------------------------------------------------------------

    def reload_view(self, names: dict[str, str]) -> dict[str, int]:
        """Recompute every subject's view from the store and bulk-load the whole view (in the caller's
        transaction). The subjects are read in ranges of about 250,000 statements, so Kuzu's grouping
        stays small (peak memory at 1M: 1.1 GB in one read, 0.5 GB in ranges), and each range is shared
        out between two processes, each writing its own bulk files."""
        get = names.get

        def chunk(part: list[tuple[str, str]]) -> ViewFiles:
            def subjects() -> Iterator[tuple[str, str, str, list[Interval]]]:
                for ref, text in part:
                    log, stored_form = decode_log(ref, text, get)
                    yield ref, get(ref, ref), stored_form, view_for_subject(log, self.registry)
            return self.store.write_view_files(subjects())

        files: list[ViewFiles] = []
        try:
            for lo, hi in self.store.subject_ranges(self.store.statement_count() // _RANGE_STATEMENTS + 1):
                files.extend(forked_map(chunk, list(self.store.subject_logs(lo=lo, hi=hi))))
        except BaseException:
            for f in files:
                f.discard()
            raise
        return self.store.load_view(files)

    def rebuild(self, *, check: bool = False) -> RebuildReport:
        """Recompute the view from the statements; with ``check``, only compare. A store marked by an
        interrupted bulk commit (opened with ``repair``) first has that write taken back whole (what
        Kuzu kept of it is removed, rows it changed get their old values), then gets its name index,
        record keys and full-text index made again from the entities and records, and loses the mark."""
        with gc_paused():
            if check:
                return self._rebuild(check)
            t0 = time.perf_counter()
            if not self.store.interrupted_commit():
                # a table whose primary-key index a killed checkpoint left out of step with its rows (one a
                # repair before this one did not write again, or whose rewrite was cut short)
                broken = [t for t in self.store.node_tables() if self.store.pk_index_misses(t, _PK_PROBES_REBUILD)[1]]
                rewritten = {f"rewritten_{t}": self.store.rewrite_node_table(t) for t in broken}
                report = self._rebuild(False)
                if not rewritten:
                    return report
                self._lexicon = None
                return dataclasses.replace(report, repaired=rewritten, seconds=time.perf_counter() - t0)
            undo = self.store.interrupted_write()
            # first the tables the interrupted write inserted into: a kill during its checkpoint can have
            # left their primary-key index out of step with their rows (Store.rewrite_node_table), and the
            # steps below look rows up by key
            rewritten = {f"rewritten_{t}": self.store.rewrite_node_table(t) for t in self.store.tables_to_rewrite(undo)}
            with self.store.transaction():
                taken_back = self.store.roll_back(undo) if undo is not None else {}
                repaired = {"names": self.store.rebuild_names(), "records": self.store.rebuild_record_index(),
                            **{f"removed_{k}": v for k, v in taken_back.items()}, **rewritten}
            report = self._rebuild(False)
            self.store.clear_commit_mark()
            self._lexicon = None
            return dataclasses.replace(report, repaired=repaired, seconds=time.perf_counter() - t0)

    def finish_migration(self, up: Upgrade) -> MigrateReport:
        """After ``migrations.upgrade_layout``: the full-text index (when the old layout had none) and
        the view made by the current code, then the migration's mark removed."""
        from graphmem.store import MIGRATION_MARK, SCHEMA_VERSION, remove_mark
        t0 = time.perf_counter()
        with gc_paused():
            if up.reindex:
                with self.store.transaction():
                    self.store.rebuild_record_index()
            self._rebuild(False)
        remove_mark(self.path / MIGRATION_MARK)
        counts = {"entities": self.store.entity_count(), "statements": self.store.statement_count(),
                  "records": self.store.record_count()}
        return MigrateReport(str(self.path), up.from_version, SCHEMA_VERSION, up.steps,
                             str(up.backup) if up.backup else None, up.restarted, counts,
                             time.perf_counter() - t0)

    def compare_views(self, names: dict[str, str], content_only: bool,
                      each: Callable[[str, list[Statement], str, list[Interval], int, list[str]], R],
                      write_changed: bool = False) -> tuple[list[R], list[ViewFiles]]:
        """Recompute every subject from its statements, compare it with its stored rows, and collect
        ``each(ref, statements, log text, view, edge count, parts that differ)``; then, for stored
        subjects or edges that have no statements, ``each(ref, [], "", [], 0, ["orphan"])``.

        Parts are ``name``, ``log``, ``view`` and ``edges``. ``content_only`` (checks) does not count
        a log stored in another row form or order that holds the same statements; a rebuild rewrites it.
        The subjects are shared out between two processes (``bulk.forked_map``), so ``each`` must not
        touch the store. With ``write_changed``, the rows of the subjects that differ also go to bulk
        files, returned for ``Store.load_view`` (a rebuild that finds every subject changed loads
        them instead of reading everything again); the caller discards them.
        """
        store = self.store
        stored_read = store.stored_view_rows()  # read beside the logs
        rows = list(store.subject_logs())
        stored, stored_edges = stored_read()
        get = names.get
        absent = (None, None, None)

        def chunk(part: list[tuple[str, str]]) -> tuple[list[R], ViewFiles | None]:
            out = []
            changed: list[tuple[str, str, str, list[Interval]]] = []
            for ref, text in part:
                stored_name, packed_log, stored_view = stored.get(ref, absent)
                log, text = decode_log(ref, text, get)  # Kuzu may group rows out of id order
                stored_log = unpack(packed_log)
                view = view_for_subject(log, self.registry)
                parts = []
                if stored_name != get(ref, ref):
                    parts.append("name")
                # a log stored in an older row form holds the same statements: a rebuild rewrites it, a check does not count it
                if stored_log != text and not (content_only and stored_log and _same_statements(ref, stored_log, log)):
                    parts.append("log")
                if not same_view(stored_view, view_text(view)):
                    parts.append("view")
                edges = store.edge_keys(ref, view)
                if edges != stored_edges.get(ref, []):
                    parts.append("edges")
                out.append(each(ref, log, text, view, len(edges), parts))
                if parts and write_changed:
                    changed.append((ref, get(ref, ref), text, view))
            return out, store.write_view_files(changed) if write_changed else None

        done = forked_map(chunk, rows)
        results = [r for part, _ in done for r in part]
        files = [f for _, f in done if f is not None]
        seen = {row[0] for row in rows}
        del rows
        for ref in sorted((set(stored) | set(stored_edges)) - seen):
            results.append(each(ref, [], "", [], 0, ["orphan"]))
        return results, files

    def _rebuild(self, check: bool) -> RebuildReport:
        """Recompute every subject's log, view and edges and compare them with the stored rows; then
        (unless checking) rewrite what differs: subject by subject when few do, else the whole view
        in one bulk load. Either way the view ends up as a full recomputation makes it.
        """
        t0 = time.perf_counter()
        store = self.store
        names = store.entity_names()

        def each(ref: str, log: list[Statement], text: str, view: list[Interval], n_edges: int,
                 parts: list[str]) -> tuple[str, int, int, list[str], tuple[str, list[Interval]] | None]:
            return ref, len(view) if log else -1, n_edges, parts, (text, view) if parts and log else None

        counts = {"subjects": 0, "intervals": 0, "edges": 0, "rewritten": 0}
        changed_subjects = 0  # rewritten subjects that have statements (not orphans)
        drift: list[dict[str, Any]] = []
        changed: dict[str, tuple[str, list[Interval]] | None] = {}  # None: no statements (drop its rows)
        results, files = self.compare_views(names, check, each, write_changed=not check)
        try:
            for ref, n_intervals, n_edges, parts, item in results:
                if n_intervals >= 0:
                    counts["subjects"] += 1
                    counts["intervals"] += n_intervals
                    counts["edges"] += n_edges
                if not parts:
                    continue
                counts["rewritten"] += 1
                changed_subjects += n_intervals >= 0
                if len(changed) < _REWRITE_MAX:
                    changed[ref] = item
                if len(drift) < _DRIFT_MAX:
                    drift.append(self.drift_entry(ref, item[1] if item else [], parts))
            if check:
                problems = tuple(store.integrity_problems(names))
                return RebuildReport(True, tuple(drift), counts, time.perf_counter() - t0, problems=problems)
            # a subject rewritten row by row costs about 25 ms, reloading the whole view about 0.6 ms a subject
            if counts["rewritten"] * 40 > counts["subjects"] + 320 or counts["rewritten"] > _REWRITE_MAX:
                with store.transaction():
                    if changed_subjects == counts["subjects"]:  # the compare wrote every subject's rows already
                        store.load_view(files)
                    else:
                        self.reload_view(names)
            elif changed:
                with store.transaction():
                    for ref, item in changed.items():
                        if item is None:
                            store.drop_subject(ref)
                        else:
                            store.rewrite_subject(ref, names.get(ref, ref), *item)
        finally:
            for f in files:
                f.discard()
        return RebuildReport(False, (), counts, time.perf_counter() - t0)

    def drift_entry(self, ref: str, view: list[Interval], parts: list[str]) -> dict[str, Any]:
        """How the stored rows of ``ref`` differ from ``view``: intervals stored only and missing, and which parts."""
        stored = {iv.key() for iv in self.store.subject_view(ref)}
        want = {iv.key() for iv in view}
        return {"subject": ref, "stored_only": len(stored - want), "missing": len(want - stored), "parts": parts}

    # evidence ---------------------------------------------------------------------

    def ingest(self, source: Any, *, redact: bool = True, extract: bool = False) -> Any:
        """Store evidence records from JSONL lines (a path, a binary stream or byte lines); with
        ``extract``, also extract from the new records and apply it (the report's ``extraction``)."""
        from graphmem.evidence.ingest import ingest
        report = ingest(self.store, source, redact=redact)
        if extract and report.stored:
            report = dataclasses.replace(report, extraction=self.extract_records(list(report.stored), apply=True))
        return report

    def record(self, ref: str) -> Any:
        rec = self.store.record(parse_record_ref(ref))
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

    def extractor(self) -> Any:
        """The spaCy extractor for this store, built on first use and after entities change."""
        from graphmem.evidence.extraction import Extractor
        count = self.store.entity_count()
        if self._extractor is None or self._extractor_entities != count:
            self._extractor = Extractor(self.ontology, self.registry, list(self.store.all_entities()))
            self._extractor_entities = count
        return self._extractor

    def extract_text(self, text: str, *, at: str | None = None, apply: bool = False) -> Any:
        """Proposals from free text; with ``apply``, the text is first stored as a record."""
        from graphmem.results import ExtractResult
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

    def extract_records(self, refs: list[str], *, apply: bool = False) -> Any:
        """Proposals from stored records; with ``apply``, write mentions and assertions citing them."""
        from graphmem.results import ExtractResult
        ids = [parse_record_ref(r) for r in refs]
        batch = self.store.records_between(min(ids), max(ids)) if len(ids) > 20 else {}
        recs = [batch[i] if i in batch else self.record(f"rec:{i}") for i in ids]
        extractor = self.extractor()
        items = [(rec, extractor.extract(rec.text, default_time=rec.ts, evidence=rec.ref)) for rec in recs]
        written: list[str] = []
        if apply:
            written = self._apply_extractions(items)
        return ExtractResult(tuple((rec.ref, ex) for rec, ex in items), apply, tuple(written))

    def extract_pending(self, *, apply: bool = False, limit: int | None = None) -> Any:
        return self.extract_records([f"rec:{i}" for i in self.store.pending_record_ids(limit)], apply=apply)

    def _apply_extractions(self, items: list[tuple[Any, Any]]) -> list[str]:
        """MENTIONS edges and new assertions (by the extractor, citing the record); known facts are skipped."""
        now = now_us()
        fid = self.store.next_fact_id()
        stmts: list[Statement] = []
        views: dict[str, list[Interval]] = {}
        entities: dict[str, Entity] = {}

        def resolve(text: str, role: str = "entity") -> Entity:
            if text not in entities:
                entities[text] = self.resolve(text, role=role)
            return entities[text]

        for rec, ex in items:
            for p in ex.assertions:
                if p.subject not in views:
                    views[p.subject] = self.store.subject_view(p.subject)
                view = views[p.subject]
                if any(iv.predicate == p.predicate and iv.object == p.object and iv.contains(p.valid_from)
                       for iv in view):
                    continue
                if any(s.subject == p.subject and s.predicate == p.predicate and s.object == p.object
                       for s in stmts):
                    continue
                try:  # the same checks and text rule as every other write
                    st = self.build_assert(fid, p.subject, p.predicate, p.object, format_instant(p.valid_from), None,
                                           (rec.ref,), "extractor", None, now, resolve=resolve)
                except GraphmemError:  # a proposal the store would refuse is not written
                    continue
                stmts.append(st)
                fid += 1
        with self.store.transaction():
            self.store.replace_mentions([(rec.id, [(mm.ref, mm.span[0], mm.span[1], "name-or-alias")
                                                   for mm in ex.mentions]) for rec, ex in items])
            self.store.mark_extracted_many([rec.id for rec, _ in items], now)
            if stmts:
                self._write(stmts)
        return [s.ref for s in stmts]

    # import, export, lint ---------------------------------------------------------

    def import_jsonl(self, source: str | Path | Iterable[str], *, strict: bool = False) -> Any:
        from graphmem.transfer.importer import import_lines
        self._lexicon = None  # an import may add aliases and descriptions
        with gc_paused():
            return import_lines(self, source, strict=strict)

    def export(self, fmt: str = "jsonl", as_of: str | None = None) -> str:
        from graphmem.transfer.export import export
        return export(self.store, fmt, as_of)

    def lint(self) -> Any:
        from graphmem.view.lint import LintParts, lint
        with gc_paused():
            return lint(LintParts(self.store, self.registry, self.compare_views, self.drift_entry))

    # recommendation ---------------------------------------------------------------

    def lexicon(self) -> Any:
        """The entity side of linking (names, lemmas, descriptions), built on first use and kept until
        an entity is written through this object (Kuzu's lock means no other process writes meanwhile)."""
        from graphmem.retrieval.linking import Lexicon
        writes = self.store.entity_writes
        if self._lexicon is None or self._lexicon[0] != writes:
            self._lexicon = (writes, Lexicon(self.store.all_entities()))
        return self._lexicon[1]

    def link(self, text: str, *, records: bool = True) -> tuple[Any, ...]:
        """The entities ``text`` names or describes (``graphmem.retrieval.linking.Seed``), strongest match first."""
        from graphmem.retrieval.linking import Linker, link
        from graphmem.retrieval.recommend import check_idea
        return link(Linker(self.lexicon, self.ontology, self.store), check_idea(text), records=records)

    def recommend(self, idea: str, *, top: int = 5, as_of: str | None = None, known_at: str | None = None,
                  max_hops: int = 3, paths: int = 3) -> Any:
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
             known_at: str | None = None) -> Any:
        """The shortest explained paths between two entities over the edges valid at ``as_of``."""
        from graphmem.retrieval.recommend import GraphParts, shortest_paths
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return shortest_paths(GraphParts(self.store, self.ontology, self.registry),
                              self.resolve(src, role="from"), self.resolve(dst, role="to"),
                              as_of=now if a is None else a, known_at=k, now=now, max_hops=max_hops, limit=limit)

    def pack(self, query: str, *, budget_tokens: int = 1000, max_items: int = 40, as_of: str | None = None,
             known_at: str | None = None, trace: bool = False, tokenizer: Any = None) -> Any:
        """A cited context bundle for ``query`` within ``budget_tokens`` (docs/packing.md). ``tokenizer``:
        any function from text to a token count (default: graphmem's ``chars4`` counter)."""
        from graphmem.retrieval.packing import PackParts, pack
        check_text(query, "query")
        now = now_us()
        a, k = self._time(as_of, "as_of", now), self._time(known_at, "known_at", now)
        return pack(PackParts(self.store, self.ontology, self.registry, self.lexicon), query,
                    budget_tokens=budget_tokens, max_items=max_items, as_of=now if a is None else a,
                    known_at=k, now=now, trace=trace, tokenizer=tokenizer)

    def graph(self, as_of: str | None = None) -> Any:
        """The typed graph valid at ``as_of`` (default now) as a networkx MultiDiGraph."""
        from graphmem.transfer.export import to_networkx
        return to_networkx(self.store, as_of)


def open(path: str | Path | None = None, **kwargs: Any) -> Memory:  # noqa: A001  (graphmem.open, like sqlite3.connect)
    """Open (creating if needed) the store at ``path``; without one, the store the CLI uses by default
    (``GRAPHMEM_STORE``, else the platform user data directory: ``graphmem.config.default_store``)."""
    return Memory(store_location(path), **kwargs)
