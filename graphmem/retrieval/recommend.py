"""Recommendations and explained paths (SPEC 9): which projects an idea fits, and why.

``recommend`` links the idea to entities (``linking``), walks the typed fact edges valid at
``as_of`` outward from those seeds, and scores every Project a walk reaches by the paths that
reach it. ``path`` finds the shortest explained paths between two entities. Every step of a
path is a stored (or, with ``known_at`` in the past, recomputed) fact edge and cites the
assertion behind it. The scoring is written down in docs/recommend.md; the constants are here.

Both receive what they read as ``GraphParts`` (the store's edge and subject reads, the ontology and
the registry); ``recommend`` also receives linking's ``Linker``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphmem.errors import BadInput, check_int
from graphmem.model import Entity, Interval, Statement
from graphmem.model.times import utc
from graphmem.model.words import moment
from graphmem.notebook import plural
from graphmem.ontology.schema import Ontology, Registry
from graphmem.retrieval.answers import PathResult, Recommendation, RecommendResult, ScoredPath, Step, path_line
from graphmem.retrieval.linking import Linker, Seed, idea_terms, link
from graphmem.store import FactEdge
from graphmem.view.temporal import cite, holding, view_for_subject

PROJECT = "Project"
# How much one step along an edge type says about fit (an ontology's own edge types weigh DEFAULT_EDGE_WEIGHT).
EDGE_WEIGHTS = {"USES": 1.0, "RELATES_TO": 0.8, "EVALUATES": 0.7, "DEPENDS_ON": 0.7, "DECIDES": 0.6,
                "REPLACES": 0.5, "BLOCKED_BY": 0.4, "OWNED_BY": 0.3}
DEFAULT_EDGE_WEIGHT = 0.5
HOP_DECAY = 0.6  # each step after the first
PATH_SHARES = (1.0, 0.5, 0.25)  # the best, second and third distinct path from one seed to one project
STATUS_PENALTY = {"archived": 0.2, "done": 0.3, "blocked": 0.5, "paused": 0.7}
BEAM = 200  # nodes carried from one hop to the next
MAX_IDEA_CHARS = 100_000
NODE_PATHS = len(PATH_SHARES)  # partial paths kept per node and seed
HUB_FANOUT = 50  # a node adjacent to more Projects than this is a hub: its fan-out is bounded (docs/recommend.md)
DESCRIBED = ("text", "record")  # seed matches that only describe an entity (docs/recommend.md section 2)
TIE_PLACES = 9  # scores equal to this many decimal places are a tie (broken by evidence, then by ref)


# ---------------------------------------------------------------------------------------------
# the graph at (as_of, known_at), read around the nodes a walk reaches
# ---------------------------------------------------------------------------------------------

class GraphStore(Protocol):
    """The store methods the walks call: fact edges around nodes, subjects' statements and views, entities."""

    def fact_edges_at(self, refs: Iterable[str], as_of: int, other_type: str | None = None) -> list[FactEdge]: ...

    def subjects_naming(self, refs: list[str]) -> list[str]: ...

    def subject_log(self, ref: str) -> list[Statement]: ...

    def subject_view(self, ref: str) -> list[Interval]: ...

    def entity(self, ref: str) -> Entity | None: ...


@dataclass(frozen=True)
class GraphParts:
    """What a walk reads: the store, the ontology (a ref's type from its prefix) and the registry
    (with a past ``known_at``, views are recomputed from the statements)."""

    store: GraphStore
    ontology: Ontology
    registry: Registry


class Graph:
    """Fact edges valid at ``as_of`` as known at ``known_at``, read from the store a few nodes at a time.

    With ``known_at`` None (now) these are the stored edges. With a past ``known_at`` the edges of
    a subject are recomputed from its statements visible then; the subjects that may point at a
    node are found among the statements naming it (a scan of the statements, so slower).
    """

    def __init__(self, parts: GraphParts, as_of: int, known_at: int | None) -> None:
        self.store = parts.store
        self.ontology = parts.ontology
        self.registry = parts.registry
        self.as_of = as_of
        self.known_at = known_at
        self._edges: dict[tuple[str, str | None], list[FactEdge]] = {}
        self._logs: dict[str, list[Statement]] = {}

    def incident(self, refs: Iterable[str], other_type: str | None = None) -> dict[str, list[FactEdge]]:
        """Each ref's edges valid at ``as_of`` (only those to ``other_type`` nodes, if given)."""
        refs = sorted(set(refs))
        missing = [r for r in refs if (r, other_type) not in self._edges and (r, None) not in self._edges]
        if missing:
            found: dict[str, list[FactEdge]] = {r: [] for r in missing}
            edges = (self.store.fact_edges_at(missing, self.as_of, other_type) if self.known_at is None
                     else self._edges_known_at(missing, other_type))
            for e in edges:
                for end in (e.src, e.dst):
                    if end in found:
                        found[end].append(e)
            for r, es in found.items():
                self._edges[(r, other_type)] = es
        out = {}
        for r in refs:
            if (r, other_type) in self._edges:
                out[r] = self._edges[(r, other_type)]
            else:
                out[r] = [e for e in self._edges[(r, None)]
                          if other_type is None or self._type(e.dst if e.src == r else e.src) == other_type]
        return out

    def _type(self, ref: str) -> str | None:
        return self.ontology.type_for_prefix(ref.partition(":")[0])

    def log(self, ref: str) -> list[Statement]:
        if ref not in self._logs:
            self._logs[ref] = self.store.subject_log(ref)
        return self._logs[ref]

    def _out_edges(self, ref: str) -> list[FactEdge]:
        assert self.known_at is not None
        registry = self.registry
        out = []
        for iv in holding(view_for_subject(self.log(ref), registry, self.known_at), self.as_of):
            p = registry.predicates.get(iv.predicate)
            if iv.object_kind == "entity" and p is not None and p.edge is not None:
                out.append(FactEdge(p.edge, ref, str(iv.object), iv.predicate, iv.valid_from, iv.valid_to,
                                    iv.assertions, iv.conflicts))
        return out

    def _edges_known_at(self, refs: list[str], other_type: str | None) -> list[FactEdge]:
        wanted = set(refs)
        edges: dict[tuple[str, str, str, int], FactEdge] = {}
        for subject in sorted(wanted | set(self.store.subjects_naming(refs))):
            for e in self._out_edges(subject):
                if e.src in wanted or e.dst in wanted:
                    edges[(e.label, e.src, e.dst, e.valid_from)] = e
        out = [edges[k] for k in sorted(edges)]
        if other_type is None:
            return out
        return [e for e in out if (e.src in wanted and self._type(e.dst) == other_type)
                or (e.dst in wanted and self._type(e.src) == other_type)]

    def cite(self, e: FactEdge) -> int:
        """The assertion behind ``e`` to cite at ``as_of`` (``temporal.cite``), else the edge's latest."""
        best = cite(self.log(e.src), e.assertions, self.as_of, self.known_at)
        return best.id if best is not None else max(e.assertions)


def _step(g: Graph, e: FactEdge, at: str) -> tuple[Step, str]:
    """The step from ``at`` along ``e`` (without its citation yet) and the node it reaches."""
    forward = e.src == at
    other = e.dst if forward else e.src
    return Step(at, e.label, other, forward, 0, e.valid_from, e.valid_to), other


def _cited(g: Graph, steps: tuple[Step, ...], edges: tuple[FactEdge, ...]) -> tuple[Step, ...]:
    return tuple(Step(s.src, s.edge, s.dst, s.forward, g.cite(e), s.start_us, s.end_us)
                 for s, e in zip(steps, edges, strict=True))


def edge_weight(label: str) -> float:
    return EDGE_WEIGHTS.get(label, DEFAULT_EDGE_WEIGHT)


def damping(project_degree: int) -> float:
    """Hub damping of a node adjacent to ``project_degree`` projects: 1 / (1 + ln(1 + d))."""
    return 1.0 / (1.0 + math.log1p(project_degree))


# ---------------------------------------------------------------------------------------------
# recommend
# ---------------------------------------------------------------------------------------------

@dataclass
class _Partial:
    seed: Seed
    nodes: tuple[str, ...]
    steps: tuple[Step, ...]
    edges: tuple[FactEdge, ...]
    weight: float
    key: tuple[Any, ...] = field(default=())

    def order(self) -> tuple[float, str]:
        return (-round(self.weight, 12), path_line(self.nodes[0], self.steps))


def check_idea(idea: Any) -> str:
    if not isinstance(idea, str):
        raise BadInput(f"bad idea {idea!r}: expected text")
    if len(idea) > MAX_IDEA_CHARS:
        raise BadInput(f"idea of {len(idea):,} characters is too long: expected at most {MAX_IDEA_CHARS:,}")
    from graphmem.retrieval.linking import words
    if not words(idea):
        raise BadInput(f"nothing to match in idea {idea[:80]!r}: expected words that name or describe something")
    return idea


def _past(known_at: int | None, now: int) -> int | None:
    """``known_at`` if it lies in the past; None (the stored view) for now or later."""
    return known_at if known_at is not None and known_at < now else None


def recommend(parts: GraphParts, linker: Linker, idea: str, *, top: int = 5, as_of: int, known_at: int | None,
              now: int, max_hops: int = 3, paths: int = 3) -> RecommendResult:
    """The ``top`` projects for ``idea`` at ``as_of`` (known at ``known_at``; None: now), best first."""
    idea = check_idea(idea)
    check_int(top, "top", 1, 100)
    check_int(max_hops, "max hops", 1, 4)
    check_int(paths, "paths", 1, 10)
    seeds = link(linker, idea)
    kk = now if known_at is None else known_at
    if not seeds:
        return RecommendResult(idea, utc(as_of), utc(kk), top, max_hops, (), (),
                               "the idea names or describes no entity in the store")
    g = Graph(parts, as_of, _past(known_at, now))
    lexicon, terms = linker.lexicon(), idea_terms(parts.ontology, idea)
    found = _walk(g, seeds, max_hops, lambda refs: lexicon.text_scores(terms, refs))
    per_project: dict[str, list[tuple[float, _Partial]]] = defaultdict(list)
    for project, partials in found.items():
        by_seed: dict[str, list[_Partial]] = defaultdict(list)
        for p in partials:
            by_seed[p.seed.ref].append(p)
        for seed_paths in by_seed.values():
            seen: set[tuple[Any, ...]] = set()
            ranked = []
            for p in sorted(seed_paths, key=_Partial.order):
                if p.key not in seen:
                    seen.add(p.key)
                    ranked.append(p)
            for share, p in zip(PATH_SHARES, ranked, strict=False):
                per_project[project].append((p.weight * share, p))
    raw = {ref: sum(c for c, _ in items) for ref, items in per_project.items()}
    own = lexicon.text_scores(terms, raw)
    paths_apart = {ref: independent_paths([p for _, p in items]) for ref, items in per_project.items()}

    def key(score: float, ref: str) -> tuple[float, float, int, str]:
        return rank_key(score, own[ref], paths_apart[ref], ref)

    order = sorted(raw, key=lambda r: key(raw[r], r))
    chosen: list[tuple[float, str, str | None, dict[str, Any] | None]] = []
    for ref in order:
        if len(chosen) >= top and key(raw[ref], ref) > key(chosen[-1][0], chosen[-1][1]):
            break  # a penalty only lowers a score: nothing further down can overtake the last chosen
        status, present = _status(g, ref)
        if not present and all(not p.steps and p.seed.match in DESCRIBED for _, p in per_project[ref]):
            continue  # only described by the idea, and nothing about it holds at as_of: not a project then
        factor = STATUS_PENALTY.get(status or "", 1.0)
        penalty = None if factor == 1.0 else {"factor": factor, "reason": f"status is {status} at as_of"}
        chosen.append((raw[ref] * factor, ref, status, penalty))
        chosen.sort(key=lambda c: key(c[0], c[1]))
        del chosen[top:]
    results = []
    for rank, (score, ref, status, penalty) in enumerate(chosen, 1):
        items = sorted(per_project[ref], key=lambda cp: (-round(cp[0], 12), cp[1].order()))
        shown = tuple(ScoredPath(p.seed, _cited(g, p.steps, p.edges), p.weight, c) for c, p in items[:paths])
        entity = g.store.entity(ref) or Entity(ref, PROJECT, ref)
        results.append(Recommendation(rank, entity, score, raw[ref], status, penalty, shown, len(items)))
    message = None if results else (f"no project is reachable from the idea's entities within "
                                    f"{plural(max_hops, 'hop')} as of {moment(as_of)}")
    return RecommendResult(idea, utc(as_of), utc(kk), top, max_hops, seeds, tuple(results), message)


def rank_key(score: float, own_text: float, paths_apart: int, ref: str) -> tuple[float, float, int, str]:
    """The order of results: by score (rounded to TIE_PLACES, so float noise is a tie); a tie goes
    to the project whose own text (name, aliases, description) scores higher against the idea
    by BM25, then to the one with more independent paths, and only then to the ref."""
    return (-round(score, TIE_PLACES), -round(own_text, TIE_PLACES), -paths_apart, ref)


def independent_paths(partials: list[_Partial]) -> int:
    """How many of ``partials`` (the paths that counted for one project) share no node on the way
    with a stronger one; a path with no node between its seed and the project shares its seed."""
    used: set[str] = set()
    n = 0
    for p in sorted(partials, key=_Partial.order):
        inner = set(p.nodes[1:-1]) or {p.seed.ref}
        if not inner & used:
            n += 1
            used |= inner
    return n


def _status(g: Graph, ref: str) -> tuple[str | None, bool]:
    """The project's status at ``as_of`` (None: none), and whether it is there at ``as_of``: some
    fact about it holds then, or no fact about it has a time at all."""
    view = list(g.store.subject_view(ref) if g.known_at is None
                else view_for_subject(g.log(ref), g.registry, g.known_at))
    now = holding(view, g.as_of)
    return next((str(iv.object) for iv in now if iv.predicate == "status"), None), bool(now) or not view


def _hub_bound(projects: dict[str, set[str]], found: set[str],
               own_text: Callable[[Iterable[str]], dict[str, float]]) -> dict[str, set[str]]:
    """For each hub among ``frontier`` (a node adjacent to more than HUB_FANOUT Projects), the
    Projects a path may step to from it: those with other evidence (a seed, or already reached,
    or adjacent to another node of this hop), and the HUB_FANOUT others whose own text best
    matches the idea (then by ref). Every other Project would only get the hub's small, equal share.
    ``projects``: each frontier node's adjacent Projects."""
    hubs = [ref for ref, ps in projects.items() if len(ps) > HUB_FANOUT]
    if not hubs:
        return {}
    seen: dict[str, int] = defaultdict(int)
    for ps in projects.values():
        for p in ps:
            seen[p] += 1
    out = {}
    for hub in hubs:
        evident = {p for p in projects[hub] if p in found or seen[p] > 1}
        rest = sorted(projects[hub] - evident)
        score = own_text(rest)
        out[hub] = evident | set(sorted(rest, key=lambda r: (-round(score[r], TIE_PLACES), r))[:HUB_FANOUT])
    return out


def _walk(g: Graph, seeds: tuple[Seed, ...], max_hops: int,
          own_text: Callable[[Iterable[str]], dict[str, float]]) -> dict[str, list[_Partial]]:
    """Every path (as partials) from a seed to a Project within ``max_hops``, walked hop by hop.

    A seed Project is found by a path of no steps. A path ends at the first Project it reaches (a
    project the idea names included), never passes
    through another seed, and visits a node once. Between hops each node keeps its best partial paths per seed, and the best BEAM nodes
    go on, so the store is read around a bounded neighbourhood; a hub steps only to the Projects
    ``_hub_bound`` keeps.
    """
    seed_refs = {s.ref for s in seeds}
    frontier: dict[str, list[_Partial]] = {s.ref: [_Partial(s, (s.ref,), (), (), s.weight)] for s in seeds}
    found: dict[str, list[_Partial]] = defaultdict(list)
    for s in seeds:
        if g._type(s.ref) == PROJECT:  # the idea names or describes the project itself: a path of no steps
            found[s.ref].append(_Partial(s, (s.ref,), (), (), s.weight))
    for hop in range(1, max_hops + 1):
        if not frontier:
            break
        last = hop == max_hops
        edges = g.incident(frontier, PROJECT if last else None)
        projects = {ref: {o for e in edges.get(ref, []) if g._type(o := e.dst if e.src == ref else e.src) == PROJECT}
                    for ref in frontier}
        bound = _hub_bound(projects, set(found) | seed_refs, own_text)
        nxt: dict[str, list[_Partial]] = defaultdict(list)
        for ref in sorted(frontier):
            incident = edges.get(ref, [])
            damp = damping(len(projects[ref])) * (HOP_DECAY if hop > 1 else 1.0)
            if ref in bound:  # a hub: only the projects _hub_bound keeps (its damping still counts them all)
                incident = [e for e in incident if (o := e.dst if e.src == ref else e.src) in bound[ref]
                            or g._type(o) != PROJECT]
            for pp in frontier[ref]:
                for e in incident:
                    step, other = _step(g, e, ref)
                    project = g._type(other) == PROJECT
                    if other in pp.nodes or (other in seed_refs and not project) or (last and not project):
                        continue
                    new = _Partial(pp.seed, (*pp.nodes, other), (*pp.steps, step), (*pp.edges, e),
                                   pp.weight * edge_weight(e.label) * damp, (*pp.key, e.label, e.src, e.dst, e.valid_from))
                    (found if project else nxt)[other].append(new)
        frontier = {}
        best: list[tuple[tuple[float, str], str]] = []
        for ref, partials in nxt.items():
            kept: list[_Partial] = []
            per_seed: dict[str, int] = defaultdict(int)
            for p in sorted(partials, key=_Partial.order):
                if per_seed[p.seed.ref] < NODE_PATHS:
                    per_seed[p.seed.ref] += 1
                    kept.append(p)
            nxt[ref] = kept
            best.append(((-round(kept[0].weight, 12), ref), ref))
        for _, ref in sorted(best)[:BEAM]:
            frontier[ref] = nxt[ref]
    return found


# ---------------------------------------------------------------------------------------------
# path
# ---------------------------------------------------------------------------------------------

def shortest_paths(parts: GraphParts, src: Entity, dst: Entity, *, as_of: int, known_at: int | None, now: int,
                   max_hops: int = 4, limit: int = 3) -> PathResult:
    """Up to ``limit`` shortest explained paths between two entities, over edges valid at ``as_of``
    in either direction: a bidirectional breadth-first read of the store, then networkx."""
    import networkx as nx
    check_int(max_hops, "max hops", 1, 6)
    check_int(limit, "limit", 1, 50)
    kk = now if known_at is None else known_at
    if src.ref == dst.ref:
        raise BadInput(f"path from {src.ref!r} to itself: expected two different entities")
    g = Graph(parts, as_of, _past(known_at, now))
    seen = {src.ref: 0}, {dst.ref: 0}
    frontiers = [{src.ref}, {dst.ref}]
    depth = [0, 0]
    graph = nx.MultiGraph()
    graph.add_nodes_from([src.ref, dst.ref])
    met = False
    while not met and depth[0] + depth[1] < max_hops and frontiers[0] and frontiers[1]:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        edges = g.incident(frontiers[side])
        new: set[str] = set()
        for ref in sorted(frontiers[side]):
            for e in edges[ref]:
                graph.add_edge(e.src, e.dst, key=(e.label, e.valid_from, e.src), edge=e)
                other = e.dst if e.src == ref else e.src
                if other not in seen[side]:
                    seen[side][other] = depth[side] + 1
                    new.add(other)
        depth[side] += 1
        frontiers[side] = new
        met = bool(set(seen[0]) & set(seen[1]))
    if not met:
        return PathResult(src, dst, utc(as_of), utc(kk), max_hops, (),
                          f"no path between {src.ref} and {dst.ref} within {plural(max_hops, 'hop')} as of {moment(as_of)}")
    explained: list[tuple[float, str, tuple[Step, ...]]] = []
    for nodes in _node_paths(nx.all_shortest_paths(graph, src.ref, dst.ref), 1000):
        for steps, edges_used in _edge_choices(g, graph, nodes):
            w = math.prod(edge_weight(e.label) for e in edges_used)
            explained.append((w, path_line(src.ref, steps), _cited(g, steps, edges_used)))
            if len(explained) >= 1000:
                break
    explained.sort(key=lambda x: (-round(x[0], 12), x[1]))
    return PathResult(src, dst, utc(as_of), utc(kk), max_hops, tuple(p for _, _, p in explained[:limit]))


def _node_paths(paths: Iterator[list[str]], cap: int) -> list[list[str]]:
    out = []
    for p in paths:
        out.append(p)
        if len(out) >= cap:
            break
    return sorted(out)


def _edge_choices(g: Graph, graph: Any, nodes: list[str]) -> Iterator[tuple[tuple[Step, ...], tuple[FactEdge, ...]]]:
    """Each way to walk ``nodes`` along parallel edges, strongest edge types first."""
    options = []
    for a, b in zip(nodes, nodes[1:], strict=False):
        es = sorted((d["edge"] for d in graph.get_edge_data(a, b).values()),
                    key=lambda e: (-edge_weight(e.label), e.label, e.src, e.valid_from))
        options.append([(_step(g, e, a)[0], e) for e in es])

    def walk(i: int, steps: tuple[Step, ...], used: tuple[FactEdge, ...]) -> Iterator[tuple[tuple[Step, ...], tuple[FactEdge, ...]]]:
        if i == len(options):
            yield steps, used
            return
        for s, e in options[i]:
            yield from walk(i + 1, (*steps, s), (*used, e))
    yield from walk(0, (), ())
