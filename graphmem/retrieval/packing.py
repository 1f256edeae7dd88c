"""The context packer (SPEC 10): a small, cited bundle of what the store knows about a query.

Lanes (docs/packing.md): ``records`` (BM25 over the evidence records, with recency and
importance), ``entities`` (named in the query, or mentioned by the best records), ``facts``
(the current facts of those entities and of their neighbours one hop away), ``guidance``
(records of kind rule or constraint, and decisions that decide one of the entities) and
``dissent`` (the counter-assertion of a packed fact in conflict). Every candidate is kept in
the trace with its scores, whether it was included, and why. Guidance is packed first; the
rest by score until the budget or ``max_items`` is reached. ``used_tokens`` is the count of
``bundle_text`` by the token counter and is never above the budget.

``pack`` receives what it reads as ``PackParts``: the store, the ontology and registry, and the entity
lexicon (linking names the query's entities; the walks of ``recommend`` find their neighbours).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphmem.errors import BadInput, check_int
from graphmem.evidence.lifecycle import plan_label
from graphmem.evidence.query import content_words, query_times, search_terms, snippet
from graphmem.evidence.search import FilterStore, RecordFilter, rank_in_context
from graphmem.model import Entity, Interval, Statement, fact_ref
from graphmem.model.times import format_datetime, format_instant, utc
from graphmem.notebook import HtmlRepr, day, plural
from graphmem.ontology.schema import Ontology, Registry
from graphmem.retrieval.linking import Lexicon, Linker, RecordMentions, link
from graphmem.retrieval.packlines import GUIDANCE_KINDS, SNIPPET_CHARS, Candidate, _day, count_tokens, neighbour_lane, record_text
from graphmem.retrieval.packselect import Partition, bundle, select, tail_lane, trust_policy
from graphmem.retrieval.recommend import Graph, GraphParts, GraphStore, edge_weight
from graphmem.view.temporal import cite, holding, view_for_subject

RECORD_POOL = 60  # at most this many records ranked for the query: more than a budget holds, so lanes compete
POOL_TOKENS = 20  # ... and one per this many tokens of the budget (at least RECORD_POOL_MIN): rows read cost time
RECORD_POOL_MIN = 10
TIME_MISS = 0.8  # a record outside every span of time the query names, when it names one
MENTION_RECORDS = 3  # of those, the best whose MENTIONS bring entities
ENTITY_LIMIT = 6  # entities whose facts are packed
NEIGHBOUR_SOURCES = 3  # the best entities whose neighbours are looked at
NEIGHBOUR_LIMIT = 5  # neighbours one hop away whose facts are packed
RECORD_FLOOR = 0.1  # a record scoring below this share of the best is below_threshold
RECENCY_HALF_LIFE_DAYS = 365.0
LOW_TRUST_FACTOR = 0.5
MENTIONED_FACTOR = 0.6  # an entity a top record mentions, against one the query names
NEIGHBOUR_FACTOR = 0.5
ENTITY_ITEM_FACTOR = 0.5
FACT_BASE = 0.5  # a fact's share of its entity's score ...
FACT_TIE = 0.3  # ... plus this when its object is another of the packed entities
FACT_FOUND = 0.2  # ... plus this when it cites a record the query found  # an entity's own description line, against its facts
LANES = ("guidance", "tail", "records", "neighbours", "entities", "facts", "dissent")


class PackStore(GraphStore, RecordMentions, FilterStore, Protocol):
    """The store methods the packer calls, beside those of the walks and of linking."""

    def record_hit(self, rec_id: int) -> tuple[str, int, str, str | None, str | None, float] | None: ...

    def rank_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[int, float]]: ...

    def subject_name_log_and_view(self, ref: str) -> tuple[str | None, list[Statement], list[Interval]]: ...

    def statement(self, fact_id: int) -> Statement | None: ...

    def record(self, rec_id: int) -> Any: ...  # a Record (its meta: a plan's due time)


@dataclass(frozen=True)
class PackParts:
    """What the packer reads: the store, the ontology and registry, and the entity lexicon (a function,
    so its owner builds it once per store state)."""

    store: PackStore
    ontology: Ontology
    registry: Registry
    lexicon: Callable[[], Lexicon]

    def linker(self) -> Linker:
        return Linker(self.lexicon, self.ontology, self.store)

    def graph(self) -> GraphParts:
        return GraphParts(self.store, self.ontology, self.registry)


@dataclass(frozen=True, repr=False)
class PackResult(HtmlRepr):
    """A context bundle for ``query`` at ``as_of``: ``bundle_text`` (the lines to put in a prompt), the packed
    ``items`` (Candidate values: ``ref``, ``kind``, ``text``, ``citations``), and with ``trace`` every
    candidate of each lane.

    Attributes
    ----------
    query : str
        The query as given.
    as_of, known_at : datetime
        The times asked about, UTC.
    budget_tokens, max_items, used_tokens : int
        The budget, the most items allowed, and the tokens the bundle uses.
    tokenizer : str
        The name of the function that counted the tokens (its ``name`` or ``__name__``).
    bundle_text : str
        The lines to put in a prompt, each citing its ``fact:N`` or ``rec:N``.
    items : tuple of Candidate
        What was packed, in bundle order.
    citations : tuple of dict
        Each cited fact and record, resolved.
    lanes : tuple
        With ``trace``: each lane's name, what it searched and its candidates.
    message : str or None
        Why the bundle is empty, when it is.
    with_trace : bool
        Whether ``to_dict`` carries the trace.
    filters : dict
        The records' filter as given; empty: none.
    refreshed : tuple of str
        The packed records whose use this pack recorded (docs/lifecycle.md); empty when not tracked.
    partition : dict
        The tail and trust policy asked for: ``tail``, ``tail_budget``, ``session``, ``min_trust``.
    parts : tuple of dict
        Each part of the budget (guidance, tail, retrieval): its ``budget``, the tokens ``used``, its ``items``.
    trust_left_out : tuple of str
        The refs the trust policy (``min_trust``) left out.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> p = m.pack("What does Atlas use?", as_of="2024-03-01")
    >>> print(p.bundle_text)
    Current facts (as of 2024-03-01):
    - Atlas uses: Kuzu (tool:kuzu), since 2024-02-01 [fact:1]
    >>> [c.ref for c in p.items], p.used_tokens <= p.budget_tokens
    (['fact:1'], True)
    >>> m.close()
    """

    query: str
    as_of: _dt.datetime
    known_at: _dt.datetime
    budget_tokens: int
    max_items: int
    tokenizer: str
    used_tokens: int
    bundle_text: str
    items: tuple[Candidate, ...]
    citations: tuple[dict[str, Any], ...]
    lanes: tuple[tuple[str, str, tuple[Candidate, ...]], ...]
    message: str | None
    with_trace: bool
    filters: dict[str, Any] = field(default_factory=dict)  # the records' filter as given; empty: none
    refreshed: tuple[str, ...] = ()  # the records whose use this pack recorded (docs/lifecycle.md)
    partition: dict[str, Any] = field(default_factory=dict)  # the tail and trust policy asked for
    parts: tuple[dict[str, Any], ...] = ()  # each part of the budget: part, budget, used, items
    trust_left_out: tuple[str, ...] = ()  # the refs the trust policy left out

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema": "graphmem.context-pack.v1",
            "meta": {"query": self.query, "as_of": format_datetime(self.as_of), "known_at": format_datetime(self.known_at),
                     "budget_tokens": self.budget_tokens, "used_tokens": self.used_tokens,
                     "tokenizer": self.tokenizer, "max_items": self.max_items, "items": len(self.items),
                     "message": self.message, "filters": self.filters, **self.partition},
            "bundle_text": self.bundle_text,
            "items": [c.item_json() for c in self.items],
            "citations": list(self.citations),
        }
        if self.with_trace:
            doc["trace"] = {"lanes": [{"lane": name, "searched": what, "candidates": [c.trace_json() for c in cands]}
                                      for name, what, cands in self.lanes],
                            "message": self.message, "refreshed": list(self.refreshed),
                            "parts": [dict(x) for x in self.parts],
                            "trust_policy": {"min_trust": self.partition.get("min_trust"),
                                             "left_out": list(self.trust_left_out)}}
        return doc

    def _summary(self) -> str:
        return (f"{self.query!r} as of {day(self.as_of)}: {plural(len(self.items), 'item')}, "
                f"{self.used_tokens} of {self.budget_tokens} tokens")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        lines = self.bundle_text.splitlines()
        return lines[:limit], len(lines)

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return (["ref", "kind", "lane", "score", "text", "citations", "why"],
                [[c.ref, c.kind, c.lane, c.score, c.text, list(c.citations), c.why] for c in self.items])


def pool_size(budget_tokens: int) -> int:
    """How many records the records lane ranks for a budget: one per ``POOL_TOKENS`` tokens, at least
    ``RECORD_POOL_MIN``, at most ``RECORD_POOL`` (a line costs more than 20 tokens, so more than fit).

    >>> pool_size(200), pool_size(500), pool_size(1000), pool_size(100_000)
    (10, 25, 50, 60)
    """
    return max(RECORD_POOL_MIN, min(RECORD_POOL, budget_tokens // POOL_TOKENS))


class _Packer:
    def __init__(self, parts: PackParts, query: str, as_of: int, known_at: int | None,
                 where: RecordFilter | None = None, budget_tokens: int = 1000) -> None:
        self.pool = pool_size(budget_tokens)
        self.budget = budget_tokens
        self.mention_records = MENTION_RECORDS
        self.parts = parts
        self.within = where.within(parts.store) if where is not None else None  # the records the filter allows
        self.lenders = where.lenders(parts.store) if where is not None else None  # the records of its scopes
        self.store = parts.store
        self.terms = search_terms(query)
        self.words = content_words(self.terms)  # what is looked up: no question or stop words
        self.spans = query_times(query, as_of)  # a soft preference for the records written then
        self.query = query
        self.as_of = as_of
        self.known_at = known_at
        self.names: dict[str, str] = {}
        self._records: dict[int, tuple[str, int, str, str | None, str | None, float] | None] = {}
        self._entities: dict[str, Entity | None] = {}
        self._mentioned: dict[int, list[str]] = {}
        self.statements: dict[int, Statement] = {}  # every statement read, for the citations
        self.entity_refs: set[str] = set()  # the entities whose facts are packed
        self.record_refs: set[str] = set()  # the records the query found
        self.lanes: dict[str, list[Candidate]] = {k: [] for k in LANES}

    def record(self, rid: int) -> tuple[str, int, str, str | None, str | None, float] | None:
        if rid not in self._records:
            self._records[rid] = self.store.record_hit(rid)
        return self._records[rid]

    def mentioned(self, rids: list[int]) -> dict[int, list[str]]:
        """The entities each record mentions, read once per pack."""
        wanted = [r for r in rids if r not in self._mentioned]
        if wanted:
            self._mentioned.update(self.store.mentioned_by(wanted))
        return {r: self._mentioned.get(r, []) for r in rids}

    def prefetch(self, rids: list[int]) -> None:
        """Read these records at once where the store can (``record_hits``), one by one otherwise."""
        wanted = [r for r in dict.fromkeys(rids) if r not in self._records and r > 0]
        many = getattr(self.store, "record_hits", None)
        if many is None or len(wanted) < 2:
            return
        got = many(wanted)
        for r in wanted:
            self._records[r] = got.get(r)

    def entity(self, ref: str) -> Entity | None:
        if ref not in self._entities:
            self._entities[ref] = self.store.entity(ref)
        return self._entities[ref]

    def obj_text(self, iv: Interval | Statement) -> str:
        """An object as a bundle line shows it: ``Name (ref)`` for an entity, else its value."""
        if iv.object_kind != "entity":
            return str(iv.object)
        ref = str(iv.object)
        e = None if iv.object_name or ref in self.names else self.entity(ref)
        return f"{iv.object_name or self.names.get(ref) or (e.name if e else ref)} ({ref})"

    # -- records ------------------------------------------------------------------------
    def records(self) -> list[tuple[int, float]]:
        """The records lane: the pool of records ranked by their words and their session's
        (``rank_in_context``), each scored by its share of the best, recency, importance and time.

        The pool is what the budget could hold one and a half times over, at the cost of the best
        ``RECORD_POOL_MIN`` lines, plus 5 (at least ``RECORD_POOL_MIN``, at most ``pool_size``): a
        pool larger than the bundle, without reading records that could never fit."""
        from graphmem.model.textindex import query_terms
        hits = rank_in_context(self.store, query_terms(self.words), self.pool, self.within, self.lenders,
                               self._records, RECORD_POOL_MIN)  # the best are read while ranking (names lend)
        if not hits:
            return []
        top = hits[0][1]
        first = [rid for rid, _, _ in hits[:RECORD_POOL_MIN]]
        self.prefetch(first)
        sizes = [len(record_text(row[0], row[1], self.terms)) / 4 + 5 for r in first if (row := self.record(r))]
        if sizes:
            fit = self.budget / (sum(sizes) / len(sizes))
            hits = hits[:max(RECORD_POOL_MIN, int(1.5 * fit) + 5)]
        self.pool = len(hits)
        self.prefetch([rid for rid, _, _ in hits])
        kept: list[tuple[int, float]] = []
        for rid, bm25, lent in hits:
            row = self.record(rid)
            if row is None:
                continue
            text, ts, kind, source, _scope, importance = row
            rel = bm25 / top
            scores = {"bm25": bm25, "context": lent, "bm25_share": rel, **self.weights(ts, importance, text)}
            score = rel * scores["recency_factor"] * scores["importance_factor"] * scores["time"]
            guidance = kind in GUIDANCE_KINDS
            order = (0, 0)
            if kind == "plan":  # a plan is shown as a plan, with its due time (docs/lifecycle.md)
                label, order = plan_label(self.store.record(rid), ts, self.as_of)
                line = f"{label}: {snippet(text, self.terms, SNIPPET_CHARS)}"
            else:
                line = record_text(text, ts, self.terms, kind if guidance else None)
            c = Candidate("guidance" if guidance else "records", "guidance" if guidance else
                          "plans" if kind == "plan" else "evidence", f"rec:{rid}",
                          "record", line, score, scores,
                          (f"rec:{rid}",), f"{kind} record matching the query (BM25 {bm25 - lent:.3f}" +
                          (f", {lent:.3f} from the turns around it or a best hit's names)" if lent else ")"), order=order)
            if ts > self.as_of:
                c.reasons.append("after_as_of")
            elif rel < RECORD_FLOOR:
                c.reasons.append("below_threshold")
            else:
                kept.append((rid, score))
                self.record_refs.add(f"rec:{rid}")
            self.lanes[c.lane].append(c)
        return kept

    def weights(self, ts: int, importance: float | None, text: str | None = None) -> dict[str, float]:
        """A record's factors beside its relevance: recency, importance, and the query's time preference:
        a record is of a time the query names when it was written then, or its ``text`` names a time
        then (a date, or a relative time such as "last Saturday" resolved against the record's own time:
        times as mentions, docs/packing.md)."""
        age_days = max(0.0, (self.as_of - ts) / 86_400e6)
        recency = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        imp = importance if importance is not None else 0.5
        time = 1.0 if not self.spans or any(lo <= ts < hi for lo, hi in self.spans) or (
            text is not None and any(a < hi and lo < b for a, b in query_times(text, ts) for lo, hi in self.spans)
        ) else TIME_MISS
        return {"recency": recency, "importance": imp, "recency_factor": 0.75 + 0.25 * recency,
                "importance_factor": 0.75 + 0.25 * imp, "time": time}

    def allowed(self, rid: int) -> bool:
        """Whether the records' filter allows record ``rid``."""
        if self.within is None:
            return True
        import numpy as np
        i = int(np.searchsorted(self.within, rid))
        return i < len(self.within) and int(self.within[i]) == rid

    # -- entities -----------------------------------------------------------------------
    def entities(self, records: list[tuple[int, float]]) -> dict[str, tuple[float, str]]:
        """The entities to pack facts of: ref -> (score, why), best first, at most ENTITY_LIMIT."""
        found: dict[str, tuple[float, str]] = {}
        for s in link(self.parts.linker(), self.query, records=False, text_seeds=0):
            found[s.ref] = (s.weight, f"named in the query ({s.match} {s.matched!r})")
            self.names[s.ref] = s.name
        best = records[:MENTION_RECORDS]
        if best:
            top = max(score for _, score in best)
            mentioned = self.mentioned([rid for rid, _ in best])
            for rid, score in best:
                for ref in mentioned[rid]:
                    w = MENTIONED_FACTOR * score / top
                    if ref not in found or found[ref][0] < w:
                        found[ref] = (w, f"mentioned by rec:{rid}")
        order = sorted(found, key=lambda r: (-round(found[r][0], 12), r))
        for i, ref in enumerate(order):
            score, why = found[ref]
            if i >= ENTITY_LIMIT:  # traced by ref only: reading them would cost a lookup each
                self.lanes["entities"].append(Candidate("entities", "entities", ref, "entity", ref,
                                                        score * ENTITY_ITEM_FACTOR, {"link": score}, (ref,), why,
                                                        ["below_threshold"]))
                continue
            e = self.entity(ref)
            if e is None:
                continue
            self.names[ref] = e.name
            text = f"{e.name} ({e.ref}, {e.type})" + (f": {' '.join(e.description.split())}" if e.description else "")
            c = Candidate("entities", "entities", e.ref, "entity", text, score * ENTITY_ITEM_FACTOR,
                          {"link": score}, (e.ref,), why)
            if not e.description:
                c.reasons.append("no_description")
            self.lanes["entities"].append(c)
        return {ref: found[ref] for ref in order[:ENTITY_LIMIT]}

    # -- facts --------------------------------------------------------------------------
    def facts(self, entities: dict[str, tuple[float, str]]) -> None:
        g = Graph(self.parts.graph(), self.as_of, self.known_at)
        incident = g.incident(list(entities)[:NEIGHBOUR_SOURCES])
        neighbours: dict[str, tuple[float, str]] = {}
        decisions: list[tuple[float, str, Any]] = []
        for ref, edges in sorted(incident.items()):
            score = entities[ref][0]
            for e in edges:
                other = e.dst if e.src == ref else e.src
                if other in entities:
                    continue
                w = score * NEIGHBOUR_FACTOR * edge_weight(e.label)
                if e.label == "DECIDES" and e.dst == ref:
                    decisions.append((score, ref, e))
                if other not in neighbours or neighbours[other][0] < w:
                    arrow = f"-{e.label}->" if e.src == ref else f"<-{e.label}-"
                    neighbours[other] = (w, f"neighbour of {ref} ({ref} {arrow} {other})")
        near = sorted(neighbours, key=lambda r: (-round(neighbours[r][0], 12), r))[:NEIGHBOUR_LIMIT]
        self.entity_refs = set(entities)
        for ref, (score, why) in [*entities.items(), *((r, neighbours[r]) for r in near)]:
            self._subject_facts(ref, score, why, named=ref in entities)
        by_decision: dict[str, list[tuple[float, str, Any]]] = {}
        for score, target, e in decisions:
            by_decision.setdefault(e.src, []).append((score, target, e))
        for ref, about in sorted(by_decision.items()):
            self._decision(ref, sorted(about, key=lambda d: (-d[0], d[1])), g)

    def _log_and_view(self, ref: str) -> tuple[str | None, list[Statement], list[Interval]]:
        name, log, view = self.store.subject_name_log_and_view(ref)
        self.statements.update((s.id, s) for s in log)
        if self.known_at is not None:
            view = view_for_subject(log, self.parts.registry, self.known_at)
        return name, log, view

    def _subject_facts(self, ref: str, score: float, why: str, named: bool) -> None:
        name, log, view = self._log_and_view(ref)
        if name is None:
            return
        self.names[ref] = name
        current = holding(view, self.as_of)
        for iv in current:
            c = self._fact(iv, log, name, score, why)
            if c is not None:
                self.lanes["facts"].append(c)
        if not named:
            return
        for iv in view:  # what no longer (or not yet) holds at as_of, for the trace
            if iv.contains(self.as_of):
                continue
            c = self._fact(iv, log, name, score, why)
            if c is not None:
                c.reasons.append("superseded" if iv.valid_to is not None and iv.valid_to <= self.as_of
                                 else "not_yet_valid")
                self.lanes["facts"].append(c)
        for s in log:  # statements withdrawn as known at known_at
            if s.op == "assert" and s.retracted_at is not None and not s.visible_at(self.known_at) and \
                    (self.known_at is None or s.recorded_at <= self.known_at):
                c = Candidate("facts", "facts", fact_ref(s.id), "fact",
                              f"{name} {s.predicate}: {self.obj_text(s)}", score, {"entity": score},
                              (fact_ref(s.id),), why, ["retracted"])
                self.lanes["facts"].append(c)

    def _fact(self, iv: Interval, log: list[Statement], name: str, score: float, why: str) -> Candidate | None:
        st = cite(log, iv.assertions, self.as_of, self.known_at)
        if st is None:
            return None
        span = f"since {_day(iv.valid_from)}" + (f" until {_day(iv.valid_to)}" if iv.valid_to is not None else "")
        text = f"{name} {iv.predicate}: {self.obj_text(iv)}, {span}"
        ids = set(iv.assertions)
        by = {s.asserted_by for s in log if s.id in ids}
        low = by == {"extractor"}
        factor = LOW_TRUST_FACTOR if low else 1.0
        recs = tuple(s for s in st.sources if s.startswith("rec:"))
        # a fact tying two of the query's entities, or resting on a record the query found, says more
        ties = iv.object_kind == "entity" and str(iv.object) in self.entity_refs
        found = any(r in self.record_refs for r in recs)
        relevance = FACT_BASE + (FACT_TIE if ties else 0.0) + (FACT_FOUND if found else 0.0)
        c = Candidate("facts", "facts", fact_ref(st.id), "fact", text, score * factor * relevance,
                      {"entity": score, "trust": factor, "relevance": relevance}, (fact_ref(st.id), *recs),
                      why + ("; low trust: written by the extractor only" if low else ""))
        if low:
            c.reasons.append("low_trust")
        for other in iv.conflicts:
            rival = next((s for s in log if s.id == other), None)
            if rival is None or not rival.visible_at(self.known_at):
                continue
            d = Candidate("dissent", "facts", fact_ref(rival.id), "fact",
                          f"dissent: {fact_ref(rival.id)} says {name} {rival.predicate}: "
                          f"{self.obj_text(rival)} from {_day(rival.valid_from)}",
                          c.score, {"fact": c.score}, (fact_ref(rival.id),),
                          f"in conflict with {fact_ref(st.id)}", follows=c.ref)
            c.dissent.append(d)
            self.lanes["dissent"].append(d)
        return c

    def _decision(self, ref: str, about: list[tuple[float, str, Any]], g: Any) -> None:
        """One guidance line per decision that decides packed entities, citing each DECIDES fact;
        an archived decision is left out as superseded."""
        d = self.entity(ref)
        if d is None:
            return
        cites: list[str] = []
        for _, _, e in about:
            log = g.log(ref)
            self.statements.update((x.id, x) for x in log)
            st = cite(log, e.assertions, self.as_of, self.known_at)
            if st is not None:
                cites += [fact_ref(st.id), *(x for x in st.sources if x.startswith("rec:"))]
        if not cites:
            return
        status = next((str(iv.object) for iv in holding(self._log_and_view(ref)[2], self.as_of)
                       if iv.predicate == "status"), None)
        targets = ", ".join(dict.fromkeys(self.names.get(t, t) for _, t, _ in about))
        text = f"Decision {d.name!r} ({status or 'no status'}) about {targets}" + (
            f": {' '.join(d.description.split())}" if d.description else "")
        c = Candidate("guidance", "guidance", ref, "entity", text, about[0][0], {"entity": about[0][0]},
                      tuple(dict.fromkeys(cites)), f"a decision about {targets} ({ref} -DECIDES-> ...)")
        if status in ("archived", "done"):
            c.reasons.append("superseded")
        self.lanes["guidance"].append(c)


def pack(parts: PackParts, query: str, *, budget_tokens: int, max_items: int, as_of: int, known_at: int | None,
         now: int, trace: bool = False, tokenizer: Callable[[str], int] | None = None,
         where: RecordFilter | None = None, partition: Partition | None = None) -> PackResult:
    """The context bundle for ``query`` (docs/packing.md); ``partition``: its tail and trust policy."""
    check_int(budget_tokens, "budget", 0, 1_000_000)
    check_int(max_items, "max items", 1, 1000)
    if not isinstance(query, str) or len(query) > 100_000:
        raise BadInput(f"bad query of {len(query) if isinstance(query, str) else type(query).__name__}: "
                       "expected text of at most 100,000 characters")
    part = (partition or Partition()).check(budget_tokens)
    count = tokenizer or count_tokens
    name = str(getattr(count, "name", None) or getattr(count, "__name__", "custom"))
    past = known_at if known_at is not None and known_at < now else None
    p = _Packer(parts, query, as_of, past, where, budget_tokens)
    tail_what = "no tail asked (--tail N or --tail-budget T)"
    if part.wants_tail:
        tail, tail_what = tail_lane(p, part, max_items, count)
        p.lanes["tail"].extend(tail)
    records = p.records()
    p.lanes["neighbours"].extend(neighbour_lane(p, records))
    entities = p.entities(records)
    if entities:
        p.facts(entities)
    left_out = trust_policy(p, p.lanes, part.min_trust) if part.min_trust is not None else []
    fill, message = select(p, LANES, budget_tokens, max_items, count, as_of, part)
    chosen = fill.chosen
    text = bundle(chosen, as_of)
    used = count(text)
    while used > budget_tokens and chosen:  # a counter that is not additive over lines
        last = chosen.pop()
        last.included = False
        last.reasons[-1:] = ["budget_exceeded"]
        text = bundle(chosen, as_of)
        used = count(text)
    citations = _citations(chosen, p)
    lanes = (("guidance", "records of kind rule or constraint matching the query; decisions deciding its entities",
              tuple(p.lanes["guidance"])),
             ("tail", tail_what, tuple(p.lanes["tail"])),
             ("records", f"the evidence records{' the filter allows' if where else ''} ranked by their words and "
                         f"their session's, best {p.pool}",
              tuple(p.lanes["records"])),
             ("neighbours", "turns around the best records in their session; records sharing their entities",
              tuple(p.lanes["neighbours"])),
             ("entities", "entities named in the query and mentioned by the best records", tuple(p.lanes["entities"])),
             ("facts", "facts of those entities and of their neighbours one hop away", tuple(p.lanes["facts"])),
             ("dissent", "counter-assertions of packed facts in conflict", tuple(p.lanes["dissent"])))
    if not chosen and message is None:
        message = "nothing in the store matches the query"
    kk = now if known_at is None else known_at
    return PackResult(query, utc(as_of), utc(kk), budget_tokens, max_items, name, used, text, tuple(chosen), citations,
                      lanes, message, trace, where.to_dict() if where else {}, partition=part.to_dict(),
                      parts=tuple(fill.part_use()), trust_left_out=tuple(left_out))


def _citations(chosen: list[Candidate], p: _Packer) -> tuple[dict[str, Any], ...]:
    out: dict[str, dict[str, Any]] = {}
    for c in chosen:
        for ref in c.citations:
            if ref in out:
                continue
            if ref.startswith("rec:"):
                rec = p.record(int(ref[4:]))
                out[ref] = {"ref": ref, "kind": "record", "ts": format_instant(rec[1]) if rec else None,
                            "record_kind": rec[2] if rec else None, "source": rec[3] if rec else None}
            elif ref.startswith("fact:"):
                s = p.statements.get(int(ref[5:])) or p.store.statement(int(ref[5:]))
                out[ref] = {"ref": ref, "kind": "fact", "subject": s.subject if s else None,
                            "predicate": s.predicate if s else None,
                            "object": (s.object_json() if s else None), "valid_from": format_instant(s.valid_from) if s else None,
                            "valid_to": format_instant(s.valid_to) if s else None,
                            "asserted_by": s.asserted_by if s else None, "trust": s.trust if s else None,
                            "sources": list(s.sources) if s else []}
            else:
                e: Entity | None = p.entity(ref)
                out[ref] = {"ref": ref, "kind": "entity", "type": e.type if e else None, "name": e.name if e else None}
    return tuple(out[k] for k in sorted(out, key=_ref_order))


def _ref_order(ref: str) -> tuple[int, int, str]:
    kind, _, n = ref.partition(":")
    order = {"fact": 0, "rec": 1}.get(kind, 2)
    return (order, int(n) if n.isdigit() else 0, ref)

