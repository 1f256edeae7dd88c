"""Graph reads over the typed fact edges: edges at a time, into an entity, around a set of
entities (``fact_edges_at``), entity refs by node id, and a caller's own read query."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from graphmem.model import Interval
from graphmem.model.times import from_datetime
from graphmem.store.kuzu.codecs import _ts_param
from graphmem.store.kuzu.schema import Schema
from graphmem.store.values import FactEdge

# A primary-key lookup query costs about what scanning this many node rows does (Kuzu 0.11, measured at 1M)
_LOOKUP_ROWS = 3000


class GraphReads(Schema):
    """Reads that walk the fact edges."""

    def edges(self, as_of: int | None = None) -> Iterator[tuple[str, str, str, str, Interval]]:
        """Typed edges (label, from ref, to ref, predicate, interval), optionally valid at ``as_of``."""
        where, params = "", {}
        if as_of is not None:
            where = "WHERE e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t) "
            params = {"t": _ts_param(as_of)}
        for label in sorted(self.ontology.edge_types):
            if not self.is_fact_edge(label) or self._edge_ddl(label) is None:
                continue
            rows = self._q(f"MATCH (a)-[e:{label}]->(b) {where}RETURN a.ref, b.ref, e.predicate, e.valid_from, "
                           "e.valid_to, e.assertions, e.conflicts, b.name ORDER BY a.ref, b.ref, e.valid_from", params)
            for a, b, pred, vf, vt, ids, conf, bname in rows:
                vf_us = from_datetime(vf)
                assert vf_us is not None
                yield label, a, b, pred, Interval(a, pred, b, "entity", vf_us, from_datetime(vt), tuple(ids), (),
                                                   tuple(conf), bname)

    def edges_into(self, ref: str, predicate: str, edge: str, as_of: int | None) -> list[Interval]:
        """Intervals whose object is ``ref`` along one edge type (reverse traversal from the object)."""
        otype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if otype is None or self._edge_ddl(edge) is None:
            return []
        if not any(b == otype for _, b in self.ontology.edge_types[edge].pairs):
            return []
        where = "WHERE e.predicate = $p"
        params: dict[str, Any] = {"r": ref, "p": predicate}
        if as_of is not None:
            where += " AND e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)"
            params["t"] = _ts_param(as_of)
        rows = self._q(f"MATCH (a)-[e:{edge}]->(b:{otype} {{ref: $r}}) {where} RETURN a.ref, e.valid_from, "
                       "e.valid_to, e.assertions, e.conflicts, b.name ORDER BY a.ref, e.valid_from", params)
        out = []
        for a, vf, vt, ids, conf, bname in rows:
            vf_us = from_datetime(vf)
            assert vf_us is not None
            out.append(Interval(a, predicate, ref, "entity", vf_us, from_datetime(vt), tuple(ids), (), tuple(conf),
                                bname))
        return out

    def fact_edges_at(self, refs: Iterable[str], as_of: int, other_type: str | None = None) -> list[FactEdge]:
        """The fact edges valid at ``as_of`` with an end among ``refs`` (both directions), each once.

        ``other_type`` keeps only edges whose other end has that entity type. Per entity type and
        direction, only the edge labels the ontology allows there and that have an edge at all (an
        unlabelled pattern would also walk MENTIONS). Kuzu answers ``ref IN $list`` by scanning the
        node table, and a primary-key pattern by a lookup: a few refs are read one query each, many
        with one list query (docs/recommend.md has the figures).
        """
        by_type: dict[str, list[str]] = {}
        for ref in sorted(set(refs)):
            etype = self.ontology.type_for_prefix(ref.partition(":")[0])
            if etype is not None:
                by_type.setdefault(etype, []).append(ref)
        found: dict[tuple[str, str, str, int], FactEdge] = {}
        pairs = self._edge_pairs()
        for etype, group in sorted(by_type.items()):
            for outward in (True, False):
                ends = [(label, a, b) if outward else (label, b, a) for label, a, b in pairs]  # (label, near, far)
                labels = sorted({label for label, near, far in ends if near == etype and other_type in (None, far)})
                if not labels:
                    continue
                per_ref = len(group) * _LOOKUP_ROWS <= self._node_count(etype)
                for a, node, label, pred, vf, vt, ids, conf in self._edges_from(etype, group, labels, outward,
                                                                              other_type, as_of, per_ref):
                    b = self._ref_of(node)
                    src, dst = (a, b) if outward else (b, a)
                    vf_us = from_datetime(vf)
                    assert vf_us is not None
                    found[(label, src, dst, vf_us)] = FactEdge(label, src, dst, pred, vf_us, from_datetime(vt),
                                                               tuple(ids), tuple(conf))
        return [found[k] for k in sorted(found)]

    def _edges_from(self, etype: str, refs: list[str], labels: list[str], outward: bool, other_type: str | None,
                    as_of: int, per_ref: bool) -> Iterator[list[Any]]:
        other = f"b:{other_type}" if other_type else "b"
        arrow = f"-[e:{'|'.join(labels)}]->" if outward else f"<-[e:{'|'.join(labels)}]-"
        valid = "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)"
        # id(b), not b.ref: reading the far node's properties makes Kuzu join a scan of its whole table
        cols = "a.ref, id(b), label(e), e.predicate, e.valid_from, e.valid_to, e.assertions, e.conflicts"
        t = _ts_param(as_of)
        if per_ref:
            query = f"MATCH (a:{etype} {{ref: $r}}){arrow}({other}) WHERE {valid} RETURN {cols}"
            for ref in refs:
                yield from self._q(query, {"r": ref, "t": t}, hot=True)
        else:
            yield from self._q(f"MATCH (a:{etype}){arrow}({other}) WHERE a.ref IN $refs AND {valid} RETURN {cols}",
                               {"refs": refs, "t": t}, hot=True)

    def _edge_pairs(self) -> set[tuple[str, str, str]]:
        """(label, from type, to type) of the fact edges the store holds at least one of: read once
        (a LIMIT 1 query per pair the ontology allows), kept up to date by this object's writes."""
        if self._pairs is None:
            tables = self._tables()
            self._pairs = {
                (label, a, b)
                for label, et in sorted(self.ontology.edge_types.items())
                if label in tables and self.is_fact_edge(label)
                for a, b in sorted(et.pairs)
                if a in tables and b in tables and self._q(f"MATCH (:{a})-[e:{label}]->(:{b}) RETURN 1 LIMIT 1")}
        return self._pairs

    def _node_count(self, etype: str) -> int:
        """Nodes of an entity type, as of this object's last read of them."""
        if not self._node_refs_by_type:
            self._read_node_refs()
        return len(self._node_refs_by_type.get(etype, ()))

    def _ref_of(self, node: dict[str, int]) -> str:
        """The ref of an entity node by its internal id. Entity nodes are never deleted, so their offsets
        stay put: each table's refs are read once, and again when a node added since is met."""
        refs = self._node_refs.get(node["table"])
        if refs is None or node["offset"] >= len(refs):
            self._read_node_refs()
            refs = self._node_refs[node["table"]]
        return refs[node["offset"]]

    def _read_node_refs(self) -> None:
        tables = self._tables()
        for etype in sorted(self.ontology.entity_types):
            if etype in tables:
                rows = self._q(f"MATCH (b:{etype}) RETURN id(b), b.ref")
                if rows:
                    column = [""] * (max(i["offset"] for i, _ in rows) + 1)
                    for i, ref in rows:
                        column[i["offset"]] = ref
                    self._node_refs[rows[0][0]["table"]] = column
                    self._node_refs_by_type[etype] = column

    def cypher(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Run a caller's read query (for notebooks and benchmarks; never user text from the CLI)."""
        return self._q(query, params)
