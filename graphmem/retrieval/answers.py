"""What recommend and path answer (SPEC 9): explained steps and paths, ranked projects, and the two
results with their JSON documents. ``recommend.py`` computes them."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from graphmem.model import Entity, fact_ref
from graphmem.model.times import format_datetime, format_instant, utc
from graphmem.notebook import HtmlRepr, day, plural, rows_of
from graphmem.retrieval.linking import Seed


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a path: along ``edge`` from ``src`` to ``dst`` (against the edge's direction when
    ``forward`` is false), citing the assertion ``fact`` (``fact:N``) whose interval holds at ``as_of``.
    ``valid_from`` and ``valid_to`` are the edge's interval as UTC datetimes; the walks use the integer
    fields (``fact_id``, ``start_us``, ``end_us``)."""

    src: str
    edge: str
    dst: str
    forward: bool
    fact_id: int
    start_us: int
    end_us: int | None

    @property
    def fact(self) -> str:
        return fact_ref(self.fact_id)

    @property
    def valid_from(self) -> _dt.datetime:
        return utc(self.start_us)

    @property
    def valid_to(self) -> _dt.datetime | None:
        return utc(self.end_us)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.src, "edge": self.edge, "to": self.dst,
                "direction": "forward" if self.forward else "backward", "fact": fact_ref(self.fact_id),
                "valid_from": format_instant(self.start_us), "valid_to": format_instant(self.end_us)}

    def arrow(self) -> str:
        return f"-{self.edge}->" if self.forward else f"<-{self.edge}-"


def path_line(start: str, steps: Iterable[Step]) -> str:
    """``start -USES-> tool:kuzu <-USES- project:atlas``."""
    return " ".join([start, *(f"{s.arrow()} {s.dst}" for s in steps)])


def seed_line(seed: Seed) -> str:
    if seed.match == "record":
        return f"idea (via {', '.join(seed.records)}) -> {seed.ref}"
    return f"idea {_quote(seed.matched)} -> {seed.ref}"


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return '"' + (flat if len(flat) <= 60 else flat[:59] + "…").replace('"', "'") + '"'


@dataclass(frozen=True)
class ScoredPath:
    seed: Seed
    steps: tuple[Step, ...]
    weight: float  # the path's own weight (seed weight, edges, hops, hub damping)
    contribution: float  # what it adds to the project's score

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed.ref, "weight": round(self.weight, 6), "contribution": round(self.contribution, 6),
                "steps": [s.to_dict() for s in self.steps],
                "line": " ".join([seed_line(self.seed), *(f"{s.arrow()} {s.dst}" for s in self.steps)])}


@dataclass(frozen=True)
class Recommendation:
    rank: int
    project: Entity
    score: float
    raw_score: float
    status: str | None
    penalty: dict[str, Any] | None
    paths: tuple[ScoredPath, ...]
    paths_counted: int

    def to_dict(self) -> dict[str, Any]:
        shown = sum(p.contribution for p in self.paths)
        return {"rank": self.rank, "project": self.project.brief(), "score": round(self.score, 6),
                "raw_score": round(self.raw_score, 6), "status": self.status, "penalty": self.penalty,
                "paths_counted": self.paths_counted,
                "shown_share": round(shown / self.raw_score, 6) if self.raw_score else 0.0,
                "paths": [p.to_dict() for p in self.paths]}


@dataclass(frozen=True, repr=False)
class RecommendResult(HtmlRepr):
    """The projects an idea fits best, each with the graph paths that explain it (``Memory.recommend``).

    Attributes
    ----------
    idea : str
        The idea as given.
    as_of, known_at : datetime
        The valid time of the graph walked and the record time it is known at (UTC).
    top, max_hops : int
        At most this many projects, reached within this many steps.
    seeds : tuple of Seed
        The entities the idea was linked to, strongest match first.
    results : tuple of Recommendation
        The projects, best first: rank, project, score, status and the paths behind the score.
    message : str or None
        Why there is no result, when there is none.
    scopes : tuple of str or None
        The scopes the walk was limited to (None: every scope; docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
    >>> r = m.recommend("Kuzu", top=1, as_of="2025-01-01")
    >>> [(x.rank, x.project.ref) for x in r.results], [s.ref for s in r.seeds], r.as_of.date().isoformat()
    ([(1, 'project:atlas')], ['tool:kuzu'], '2025-01-01')
    >>> m.close()
    """

    idea: str
    as_of: _dt.datetime
    known_at: _dt.datetime
    top: int
    max_hops: int
    seeds: tuple[Seed, ...]
    results: tuple[Recommendation, ...]
    message: str | None = None
    scopes: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.recommend.v1", "idea": self.idea, "as_of": format_datetime(self.as_of),
                "known_at": format_datetime(self.known_at), "top": self.top, "max_hops": self.max_hops,
                "seeds": [s.to_dict() for s in self.seeds], "results": [r.to_dict() for r in self.results],
                "message": self.message, **({} if self.scopes is None else {"scope": list(self.scopes)})}

    def _summary(self) -> str:
        return f"{self.idea!r} as of {day(self.as_of)}: {self.message or plural(len(self.results), 'project')}"

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return rows_of(self.results, limit, lambda r: f"{r.rank}. {r.project.ref} {r.score:.3f}"
                       + (f" ({r.status})" if r.status else "") + (f"  {r.paths[0].to_dict()['line']}" if r.paths else ""))

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return (["rank", "project", "name", "score", "status", "best_path", "paths_counted"],
                [[r.rank, r.project.ref, r.project.name, r.score, r.status,
                  r.paths[0].to_dict()["line"] if r.paths else None, r.paths_counted] for r in self.results])


@dataclass(frozen=True, repr=False)
class PathResult(HtmlRepr):
    """The shortest explained paths between two entities along the fact edges (``Memory.paths``).

    Attributes
    ----------
    src, dst : Entity
        Where the paths start and end.
    as_of, known_at : datetime
        The valid time of the graph and the record time it is known at (UTC).
    max_hops : int
        The longest path looked for.
    paths : tuple of tuple of Step
        The shortest paths found; each step is a fact edge and cites its ``fact:N``.
    message : str or None
        Why there is no path, when there is none.
    scopes : tuple of str or None
        The scopes the walk was limited to (None: every scope; docs/scopes.md).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
    >>> p = m.paths("Atlas", "Kuzu", as_of="2025-01-01")
    >>> [s.fact for s in p.paths[0]], p.to_dict()["paths"][0]["line"]
    (['fact:1'], 'project:atlas -USES-> tool:kuzu')
    >>> m.close()
    """

    src: Entity
    dst: Entity
    as_of: _dt.datetime
    known_at: _dt.datetime
    max_hops: int
    paths: tuple[tuple[Step, ...], ...]
    message: str | None = None
    scopes: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.path.v1", "from": self.src.brief(), "to": self.dst.brief(),
                "as_of": format_datetime(self.as_of), "known_at": format_datetime(self.known_at),
                "max_hops": self.max_hops, "hops": len(self.paths[0]) if self.paths else None,
                "paths": [{"steps": [s.to_dict() for s in p], "line": path_line(self.src.ref, p)} for p in self.paths],
                "message": self.message, **({} if self.scopes is None else {"scope": list(self.scopes)})}

    def _summary(self) -> str:
        return (f"{self.src.ref} to {self.dst.ref} as of {day(self.as_of)}: "
                f"{self.message or plural(len(self.paths), 'path')}")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return rows_of(self.paths, limit, lambda p: f"{path_line(self.src.ref, p)}  [{' '.join(s.fact for s in p)}]")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return (["path", "step", "from", "edge", "to", "forward", "fact", "valid_from", "valid_to"],
                [[i, j, s.src, s.edge, s.dst, s.forward, s.fact, s.valid_from, s.valid_to]
                 for i, p in enumerate(self.paths, 1) for j, s in enumerate(p, 1)])
