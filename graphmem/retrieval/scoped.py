"""A store as seen from some scopes (docs/scopes.md): the reads recommend, path and pack make, each
answered from the statements and records of those scopes only. The fact view of a subject is the
pure function of its statements of the scopes (``view_for_subject``), its fact edges are that view's
entity-valued intervals, and records of other scopes (or none) are never ranked or read. Every other
read goes to the store as it is (entities are a shared vocabulary)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphmem.evidence.search import RecordFilter
from graphmem.model import Interval, Statement
from graphmem.model.scopes import in_scopes
from graphmem.ontology.schema import Ontology, Registry
from graphmem.store import StorageEngine
from graphmem.store.values import FactEdge
from graphmem.view.temporal import holding, view_for_subject


class ScopedStore:
    """``store`` limited to ``scopes`` for the retrieval reads; one per call (it keeps what it computed)."""

    def __init__(self, store: StorageEngine, ontology: Ontology, registry: Registry, scopes: tuple[str, ...]) -> None:
        self._store, self.ontology, self.registry, self.scopes = store, ontology, registry, scopes
        self._logs: dict[str, list[Statement]] = {}
        self._views: dict[str, list[Interval]] = {}
        self._within: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    # statements and the fact view ---------------------------------------------------------

    def subject_log(self, ref: str) -> list[Statement]:
        if ref not in self._logs:
            self._logs[ref] = [s for s in self._store.subject_log(ref) if in_scopes(s.scope, self.scopes)]
        return self._logs[ref]

    def subject_view(self, ref: str) -> list[Interval]:
        if ref not in self._views:
            self._views[ref] = view_for_subject(self.subject_log(ref), self.registry)
        return self._views[ref]

    def subject_log_and_view(self, ref: str) -> tuple[list[Statement], list[Interval]]:
        return self.subject_log(ref), self.subject_view(ref)

    def subject_name_and_view(self, ref: str) -> tuple[str | None, list[Interval]]:
        name, _ = self._store.subject_name_and_view(ref)
        return name, self.subject_view(ref)

    def subject_name_log_and_view(self, ref: str) -> tuple[str | None, list[Statement], list[Interval]]:
        name, _ = self._store.subject_name_and_view(ref)
        return name, self.subject_log(ref), self.subject_view(ref)

    def statement(self, fact_id: int) -> Statement | None:
        st = self._store.statement(fact_id)
        return st if st is not None and in_scopes(st.scope, self.scopes) else None

    def statements(self, fact_ids: list[int]) -> dict[int, Statement]:
        return {i: s for i, s in self._store.statements(fact_ids).items() if in_scopes(s.scope, self.scopes)}

    def subjects_naming(self, refs: list[str]) -> list[str]:
        return [s for s in self._store.subjects_naming(refs) if self.subject_log(s)]

    def fact_edges_at(self, refs: Iterable[str], as_of: int, other_type: str | None = None) -> list[FactEdge]:
        """The edges of the scoped view valid at ``as_of`` with an end among ``refs`` (the subjects that
        may point at one are found among the statements naming it)."""
        wanted = set(refs)
        edges: dict[tuple[str, str, str, int], FactEdge] = {}
        for subject in sorted(wanted | set(self._store.subjects_naming(sorted(wanted)))):
            for iv in holding(self.subject_view(subject), as_of):
                p = self.registry.predicates.get(iv.predicate)
                if iv.object_kind != "entity" or p is None or p.edge is None:
                    continue
                e = FactEdge(p.edge, subject, str(iv.object), iv.predicate, iv.valid_from, iv.valid_to,
                             iv.assertions, iv.conflicts)
                if e.src in wanted or e.dst in wanted:
                    edges[(e.label, e.src, e.dst, e.valid_from)] = e
        out = [edges[k] for k in sorted(edges)]
        if other_type is None:
            return out

        def type_of(ref: str) -> str | None:
            return self.ontology.type_for_prefix(ref.partition(":")[0])
        return [e for e in out if (e.src in wanted and type_of(e.dst) == other_type)
                or (e.dst in wanted and type_of(e.src) == other_type)]

    # records ------------------------------------------------------------------------------

    def _scoped_records(self) -> Any:
        if self._within is None:
            self._within = RecordFilter(scopes=self.scopes).within(self._store)
        return self._within

    def rank_records(self, terms: list[str], limit: int, within: Any = None) -> list[tuple[int, float]]:
        import numpy as np
        mine = self._scoped_records()
        ranked: list[tuple[int, float]] = self._store.rank_records(
            terms, limit, mine if within is None else np.intersect1d(within, mine))
        return ranked

    def record_hit(self, rec_id: int) -> tuple[str, int, str, str | None, str | None, float] | None:
        hit = self._store.record_hit(rec_id)
        return hit if hit is not None and in_scopes(hit[4], self.scopes) else None

    def record(self, rec_id: int) -> Any:
        rec = self._store.record(rec_id)
        return rec if rec is not None and in_scopes(rec.scope, self.scopes) else None
