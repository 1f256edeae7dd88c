"""What the graph reads (``graph.py``) need to know of the whole graph before they read: which (edge
label, from type, to type) pairs hold a fact edge, and how many nodes each entity type has.

A process that does not know them asks Kuzu (``_probe``: a LIMIT 1 branch per pair and a count per
type, joined by UNION ALL), which took 15 ms of a fresh ``recommend`` at 1M assertions and 6 ms of a
fresh ``pack``. So the store keeps them in ``Meta`` (key ``graph_summary``), and a process takes them
from there:

- a write that adds a pair or an entity changes the summary in memory, and its transaction writes it
  just before it commits (``_before_commit``);
- a bulk write (the view loaded whole, a table rewritten, an interrupted write rolled back, many
  entities by COPY) has the summary probed afresh before it commits (``_summary_afresh``), and so has the
  first write into a store that holds none yet.

What is stored holds every pair that has an edge, and maybe pairs whose last edge has gone since (until
a bulk write or ``rebuild`` probes again: a read then asks for edges it does not find), and each
table's node count as of the last write (a guide to how to read edges, never part of an answer). It
names the fact counter (``next_fact``) it was written at: a statement written by anything that does not
keep the summary (an older graphmem) moves the counter past it, and then it is not used (the process
probes, as before) and the next write of this graphmem probes and writes it again.
"""

from __future__ import annotations

from graphmem.store.common.codecs import dumps, loads
from graphmem.store.kuzu.base import _int
from graphmem.store.kuzu.schema import Schema

Pair = tuple[str, str, str]  # (edge label, from type, to type)

SUMMARY_META = "graph_summary"


def summary_text(at: int, pairs: set[Pair], counts: dict[str, int]) -> str:
    """The stored form of a graph summary written at fact counter ``at``.

    >>> summary_text(7, {("USES", "Project", "Tool")}, {"Tool": 2, "Project": 1})
    '{"at":7,"pairs":[["USES","Project","Tool"]],"counts":{"Project":1,"Tool":2}}'
    """
    return dumps({"at": at, "pairs": [list(p) for p in sorted(pairs)], "counts": dict(sorted(counts.items()))})


def summary_of(text: str | None, at: int) -> tuple[set[Pair], dict[str, int]] | None:
    """The pairs and node counts of a stored summary, when it was written at fact counter ``at`` (None:
    no summary, one of another counter, or one that does not parse).

    >>> summary_of(summary_text(7, {("USES", "Project", "Tool")}, {"Tool": 2}), 7)
    ({('USES', 'Project', 'Tool')}, {'Tool': 2})
    >>> summary_of(summary_text(7, set(), {}), 8) is None
    True
    """
    if not text:
        return None
    try:
        doc = loads(text)
        if doc["at"] != at:
            return None
        pairs = {(str(a), str(b), str(c)) for a, b, c in doc["pairs"]}
        counts = {str(t): int(n) for t, n in doc["counts"].items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return pairs, counts


class GraphSummary(Schema):
    """The pairs with an edge and the node counts: probed, stored in ``Meta`` and kept by writes."""

    _summary: tuple[set[Pair], dict[str, int]] | None = None
    _summary_known = False  # whether ``_summary`` is what Meta holds (or what this transaction writes)
    _summary_at = 0  # the fact counter the summary is (or will be) written at
    _summary_dirty = False  # changed by this transaction: written before it commits
    _summary_redo = False  # probed afresh and written before this transaction commits

    def graph_summary(self) -> tuple[set[Pair], dict[str, int]] | None:
        """The stored pairs and node counts as this process knows them (None: the store holds no usable
        summary; the graph reads probe instead)."""
        if not self._summary_known:
            at = self.next_fact_id()
            self._summary, self._summary_at, self._summary_known = summary_of(self.meta(SUMMARY_META), at), at, True
        return self._summary

    def rebuild_graph_summary(self, check: bool) -> bool:
        """``rebuild``: the summary probed again and stored (``check``: only compared); whether the stored
        one missed a pair that has an edge or gave a table another node count (no summary, or one behind
        the fact counter, is no difference: readers probe then)."""
        stored = self.graph_summary()
        tables = self._tables()
        pairs, counts = self._probe(self._allowed_pairs(), sorted(t for t in self.ontology.entity_types if t in tables))
        differs = stored is not None and (not pairs <= stored[0] or any(stored[1].get(t, 0) != n for t, n in counts.items()))
        if not check:
            with self.transaction():
                self._summary_afresh()
            self._pairs = None  # (the graph reads take the new one)
        return differs

    def _summary_edge(self, pair: Pair) -> None:
        """A fact edge of ``pair`` is being written (in a transaction)."""
        summary = self.graph_summary()
        if summary is not None and pair not in summary[0]:
            summary[0].add(pair)
            self._summary_changed()

    def _summary_nodes(self, etype: str, n: int = 1) -> None:
        """``n`` entities of ``etype`` are being added (in a transaction)."""
        summary = self.graph_summary()
        if summary is not None:
            summary[1][etype] = summary[1].get(etype, 0) + n
            self._summary_changed()

    def _summary_moves_to(self, next_fact: int) -> None:
        """The fact counter is about to be set to ``next_fact`` (in a transaction): the summary is
        written again at it, or, where there is none yet, probed."""
        summary = self.graph_summary()  # (read at the counter as it was)
        self._summary_at = next_fact
        if summary is None:
            self._summary_redo = True
        self._summary_changed()

    def _summary_changed(self) -> None:
        """Write the summary before this transaction commits; outside a transaction, at once (before what
        changed it is written: a pair is stored before its edge, the counter after its summary)."""
        self._summary_dirty = True
        if not self._in_tx:
            self._before_commit()

    def _summary_afresh(self) -> None:
        """A bulk write: the summary is probed again before the transaction commits."""
        self._summary_redo = True

    def _before_commit(self) -> None:
        """Write the summary this transaction changed (probed afresh after a bulk write)."""
        if self._summary_redo:
            allowed = self._allowed_pairs()
            tables = self._tables()
            pairs, counts = self._probe(allowed, sorted(t for t in self.ontology.entity_types if t in tables))
            at = self._summary_at if self._summary_known else self.next_fact_id()  # (moved already, or not)
            self._summary, self._summary_at, self._summary_known = (pairs, counts), at, True
        elif not self._summary_dirty or self._summary is None:
            return
        self._summary_redo = self._summary_dirty = False
        self._set_meta(SUMMARY_META, summary_text(self._summary_at, *self._summary))

    def _forget_summary(self) -> None:
        """A transaction rolled back: the summary is read from Meta again when next needed."""
        self._summary, self._summary_known = None, False
        self._summary_redo = self._summary_dirty = False

    def _probe(self, pairs: list[Pair], count: list[str]) -> tuple[set[Pair], dict[str, int]]:
        """Which of ``pairs`` hold an edge, and the node counts of the tables ``count``, in one query
        (a LIMIT 1 branch per pair and a count per table, joined by UNION ALL: 26 of the ontology's 45
        pairs at 1M took 7 ms, where a query each for all 45 took 14 ms)."""
        if not pairs and not count:
            return set(), {}
        branches = [f"MATCH (:{a})-[e:{label}]->(:{b}) RETURN {_int(i)} AS k, 1 AS n LIMIT 1"
                    for i, (label, a, b) in enumerate(pairs)]
        branches += [f"MATCH (x:{t}) RETURN {_int(len(pairs) + i)} AS k, count(x) AS n" for i, t in enumerate(count)]
        found: set[Pair] = set()
        counts: dict[str, int] = {}
        for k, n in self._q(" UNION ALL ".join(branches)):
            if k < len(pairs):
                found.add(pairs[k])
            else:
                counts[count[k - len(pairs)]] = int(n)
        return found, counts

    def _allowed_pairs(self) -> list[Pair]:
        """(label, from type, to type) of every fact edge the ontology allows between tables the store has."""
        tables = self._tables()
        return [(label, a, b) for label, et in sorted(self.ontology.edge_types.items())
                if label in tables and self.is_fact_edge(label) for a, b in sorted(et.pairs) if a in tables and b in tables]
