"""Graph reads over the typed fact edges: edges at a time, into an entity, around a set of
entities (``fact_edges_at``), entity refs by node id, and a caller's own read query."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from graphmem.model import Interval
from graphmem.model.times import from_datetime
from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.codecs import _ts_param
from graphmem.store.kuzu.schema import Schema
from graphmem.store.values import FactEdge

# A primary-key lookup query costs about what scanning this many node rows does (Kuzu 0.11, measured at 1M)
_LOOKUP_ROWS = 3000


_WHOLE_TABLE = 5000  # more unread refs of one table than this at once: the whole table is read
# Refs by node id (``_refs_of``): up to this many, ``id(b) IN [...]`` (the node table scanned, each row tested
# against the list); more, a join with the list, whose cost does not grow with it (at 1M, the Project table of
# 50,000: 62 ids in 9 ms against 13 ms; 9 ids of the Concept table of 10,000: 10.7 ms against 12)
_IN_LIST = 16


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
        pairs = self._edge_pairs(set(by_type))
        rows: list[tuple[bool, list[Any]]] = []  # (outward, row) of every type and direction
        for etype, group in sorted(by_type.items()):
            for outward in (True, False):
                ends = [(label, a, b) if outward else (label, b, a) for label, a, b in pairs]  # (label, near, far)
                labels = sorted({label for label, near, far in ends if near == etype and other_type in (None, far)})
                if not labels:
                    continue
                per_ref = len(group) * _LOOKUP_ROWS <= self._node_count(etype)
                rows += ((outward, r) for r in self._edges_from(etype, group, labels, outward, other_type, as_of, per_ref,
                                                                with_refs=per_ref and not self._node_refs))
        # the far ends' refs all at once: one query per table however many types and directions reached it
        # (a row that brought its far end's ref, ninth, also teaches ``_refs_of`` that node's ref)
        for _, r in rows:
            if len(r) > 8:
                self._node_refs.setdefault(r[1]["table"], {})[r[1]["offset"]] = r[8]
        for (outward, (a, _, label, pred, vf, vt, ids, conf, *_)), b in zip(
                rows, self._refs_of([r[1] for _, r in rows]), strict=True):
            src, dst = (a, b) if outward else (b, a)
            vf_us = from_datetime(vf)
            assert vf_us is not None
            found[(label, src, dst, vf_us)] = FactEdge(label, src, dst, pred, vf_us, from_datetime(vt),
                                                       tuple(ids), tuple(conf))
        return [found[k] for k in sorted(found)]

    def _edges_from(self, etype: str, refs: list[str], labels: list[str], outward: bool, other_type: str | None,
                    as_of: int, per_ref: bool, with_refs: bool = False) -> Iterator[list[Any]]:
        """The edges of ``refs`` (rows of ``a.ref, id(b)``, the label and the edge's columns), one lookup
        query per ref when ``per_ref``, else one list query. ``with_refs`` (a process that has read no ref of
        any node yet, in a lookup query) adds ``b.ref``: 1-2 ms more a query, against 8-10 ms for a fresh
        process's first read of refs by internal id (``_refs_of``)."""
        other = f"b:{other_type}" if other_type else "b"
        arrow = f"-[e:{'|'.join(labels)}]->" if outward else f"<-[e:{'|'.join(labels)}]-"
        valid = "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)"
        # id(b), not b.ref: reading the far node's properties makes Kuzu join a scan of its whole table (in a
        # list query; in a lookup, 1-2 ms more)
        cols = "a.ref, id(b), label(e), e.predicate, e.valid_from, e.valid_to, e.assertions, e.conflicts"
        if with_refs:
            cols += ", b.ref"
        t = _ts_param(as_of)
        if per_ref:
            query = f"MATCH (a:{etype} {{ref: $r}}){arrow}({other}) WHERE {valid} RETURN {cols}"
            for ref in refs:
                yield from self._q(query, {"r": ref, "t": t}, hot=True)
        else:
            yield from self._q(f"MATCH (a:{etype}){arrow}({other}) WHERE a.ref IN $refs AND {valid} RETURN {cols}",
                               {"refs": refs, "t": t}, hot=True)

    def _edge_pairs(self, etypes: set[str] | None = None) -> set[tuple[str, str, str]]:
        """(label, from type, to type) of the fact edges the store holds one of, among the pairs the
        ontology allows with an end in ``etypes`` (None: every type): each pair asked once, the pairs not
        asked yet together in one query (a LIMIT 1 branch per pair, joined by UNION ALL: a fresh
        ``recommend`` at 1M asks 26 of the ontology's 45 pairs, 7 ms, where a query each for all 45 took
        14 ms). The node counts of ``etypes`` not read yet (``_node_count``) come in the same query. Kept
        up to date by this object's writes."""
        if self._pairs is None:
            self._pairs, self._probed = set(), set()
            self._allowed = self._allowed_pairs()
        wanted = [(label, a, b) for label, a, b in self._allowed if etypes is None or a in etypes or b in etypes]
        ask = [p for p in wanted if p not in self._probed]
        counts = sorted(t for t in etypes or () if t not in self._node_counts and any(t in p[1:] for p in wanted))
        if ask or counts:
            branches = [f"MATCH (:{a})-[e:{label}]->(:{b}) RETURN {_int(i)} AS k, 1 AS n LIMIT 1"
                        for i, (label, a, b) in enumerate(ask)]
            branches += [f"MATCH (x:{t}) RETURN {_int(len(ask) + i)} AS k, count(x) AS n" for i, t in enumerate(counts)]
            for k, n in self._q(" UNION ALL ".join(branches)):
                if k < len(ask):
                    self._pairs.add(ask[k])
                else:
                    self._node_counts[counts[k - len(ask)]] = int(n)
            self._probed.update(ask)
        return {p for p in wanted if p in self._pairs}

    def _allowed_pairs(self) -> list[tuple[str, str, str]]:
        """(label, from type, to type) of every fact edge the ontology allows between tables the store has."""
        tables = self._tables()
        return [(label, a, b) for label, et in sorted(self.ontology.edge_types.items())
                if label in tables and self.is_fact_edge(label) for a, b in sorted(et.pairs) if a in tables and b in tables]

    def _node_count(self, etype: str) -> int:
        """Nodes of an entity type, as of this object's first count of them (a guide for how to read edges)."""
        n = self._node_counts.get(etype)
        if n is None:
            n = self._node_counts[etype] = self._q(f"MATCH (b:{etype}) RETURN count(b)")[0][0]
        return int(n)

    def _ref_of(self, node: dict[str, int]) -> str:
        """The ref of an entity node by its internal id (``_refs_of``)."""
        return self._refs_of([node])[0]

    def _refs_of(self, nodes: list[dict[str, int]]) -> list[str]:
        """The refs of entity nodes by their internal ids. Entity nodes are never deleted, so their offsets
        stay put: a ref once read is kept, and those not yet read are read together, one query per table
        (``id(b) IN [internal_id(...), ...]``, or for more than ``_IN_LIST`` a join with the list: a few
        milliseconds, where reading every ref of a table of 100,000 entities took 0.25 s of each fresh
        process). A table asked for many at once is read whole."""
        missing: dict[int, set[int]] = {}
        for n in nodes:
            if n["offset"] not in self._node_refs.get(n["table"], ()):
                missing.setdefault(n["table"], set()).add(n["offset"])
        if missing:
            types = self._entity_tables()
            for table, offsets in sorted(missing.items()):
                got = self._node_refs.setdefault(table, {})
                etype = types[table]
                if len(offsets) > _WHOLE_TABLE:
                    got.update((i["offset"], ref) for i, ref in self._iter(f"MATCH (b:{etype}) RETURN id(b), b.ref"))
                    continue
                ids = ", ".join(f"internal_id({_int(table)}, {_int(o)})" for o in sorted(offsets))
                query = (f"MATCH (b:{etype}) WHERE id(b) IN [{ids}] RETURN offset(id(b)), b.ref"
                         if len(offsets) <= _IN_LIST else
                         f"UNWIND [{ids}] AS i MATCH (b:{etype}) WHERE id(b) = i RETURN offset(id(b)), b.ref")
                got.update((o, ref) for o, ref in self._q(query))
        return [self._node_refs[n["table"]][n["offset"]] for n in nodes]

    def _entity_tables(self) -> dict[int, str]:
        """Each entity table's id (``id(b)["table"]``) and its type."""
        if self._node_tables is None:
            self._node_tables = {int(r[0]): r[1] for r in self._q("CALL show_tables() RETURN id, name, type")
                                 if r[2] == "NODE" and r[1] in self.ontology.entity_types}
        return self._node_tables

    def cypher(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """Run a caller's read query (for notebooks and benchmarks; never user text from the CLI)."""
        return self._q(query, params)
