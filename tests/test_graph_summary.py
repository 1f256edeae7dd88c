"""The graph's summary kept with an embedded store (issue 25, item 3; ``store/kuzu/summary.py``): which
(edge label, from type, to type) pairs hold a fact edge and each entity table's node count, stored in
``Meta`` by the writes that change them, so that a fresh ``recommend`` or ``pack`` asks Kuzu neither. Each
stored summary is checked against the tables probed directly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.model.times import now_us

pytestmark = pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' Meta and Cypher

Summary = tuple[set[tuple[str, str, str]], dict[str, int]]


def _stored(m: graphmem.Memory) -> Summary | None:
    from graphmem.store.kuzu.summary import SUMMARY_META, summary_of
    s: Any = m.store
    return summary_of(s.meta(SUMMARY_META), s.next_fact_id())


def _probed(m: graphmem.Memory) -> Summary:
    """What the tables hold, asked directly."""
    s: Any = m.store
    tables = s._tables()
    return s._probe(s._allowed_pairs(), sorted(t for t in s.ontology.entity_types if t in tables))


def _queries(m: graphmem.Memory) -> list[str]:
    seen: list[str] = []
    store: Any = m.store
    q = store._q
    store._q = lambda query, *a, **k: (seen.append(query), q(query, *a, **k))[1]
    return seen


def _probes(seen: list[str]) -> list[str]:
    return [q for q in seen if " LIMIT 1" in q or "count(x)" in q or "count(b)" in q]


def _edges(m: graphmem.Memory, refs: list[str]) -> list[Any]:
    return m.store.fact_edges_at(refs, now_us())  # type: ignore[attr-defined]


REFS = ["project:orchid", "project:birch", "tool:alpha", "tool:beta", "concept:graph-database"]


def _entities(m: graphmem.Memory) -> None:
    for t, n in (("Project", "Orchid"), ("Project", "Birch"), ("Tool", "Alpha"), ("Tool", "Beta"),
                 ("Concept", "Graph database")):
        m.add_entity(t, n)


def test_every_kind_of_write_keeps_the_stored_summary(new_store: Callable[[str], Path], tmp_path: Path) -> None:
    with graphmem.open(new_store("s"), create=True) as m:
        _entities(m)
        assert _stored(m) is None  # no statement yet: the first one's transaction makes it
        uses = m.assert_("project:orchid", "uses", "tool:alpha")
        assert _stored(m) == _probed(m) and _stored(m)[0] == {("USES", "Project", "Tool")}  # type: ignore[index]
        m.assert_("tool:alpha", "relates_to", "concept:graph-database")
        m.assert_("project:orchid", "status", "active")  # a literal: no edge
        m.add_entity("Tool", "Gamma")  # an entity alone: its count
        assert _stored(m) == _probed(m)
        assert _stored(m)[1]["Tool"] == 3  # type: ignore[index]
        lines = [f'{{"op": "entity", "type": "Project", "name": "Bulk {i}"}}' for i in range(2100)]  # by COPY
        lines += [f'{{"op": "assert", "subject": "project:bulk-{i}", "predicate": "depends_on", '
                  f'"object": "project:orchid"}}' for i in range(80)]
        (tmp_path / "more.jsonl").write_text("\n".join(lines) + "\n")
        assert m.import_jsonl(tmp_path / "more.jsonl", strict=True).ok
        assert _stored(m) == _probed(m)
        assert ("DEPENDS_ON", "Project", "Project") in _stored(m)[0]  # type: ignore[index]
        assert _stored(m)[1]["Project"] == 2102  # type: ignore[index]
        m.retract(uses.refs[0])
        stored, probed = _stored(m), _probed(m)
        assert stored is not None and stored[1] == probed[1] and stored[0] >= probed[0]  # a pair may outlive its edges
        assert ("USES", "Project", "Tool") not in probed[0]
        assert m.rebuild().ok
        assert _stored(m) == _probed(m)  # the rebuild probes it again


def test_a_fresh_reader_asks_nothing_and_reads_the_same_edges(new_store: Callable[[str], Path]) -> None:
    path = new_store("s")
    with graphmem.open(path, create=True) as m:
        _entities(m)
        m.assert_("project:orchid", "uses", "tool:alpha")
        m.assert_("project:birch", "uses", "tool:beta", valid_from="2024-01-01", valid_to="2025-01-01")
        m.assert_("tool:beta", "relates_to", "concept:graph-database")
        m.assert_("project:birch", "depends_on", "project:orchid")
    with graphmem.open(path, read_only=True) as m:
        seen = _queries(m)
        stored = _edges(m, REFS)
        assert not _probes(seen), seen
        assert len(stored) == 3
    with graphmem.open(path, read_only=True) as m:
        m.store.graph_summary = lambda: None  # type: ignore[attr-defined]  # as a store without one
        seen = _queries(m)
        assert _edges(m, REFS) == stored
        assert _probes(seen)


def test_a_summary_behind_the_fact_counter_is_not_used_and_is_made_again(new_store: Callable[[str], Path]) -> None:
    """A statement written by something that keeps no summary (an older graphmem) moves the fact counter
    past the one the summary names: readers probe, and this graphmem's next write stores it afresh."""
    path = new_store("s")
    with graphmem.open(path, create=True) as m:
        _entities(m)
        m.assert_("project:orchid", "uses", "tool:alpha")
        s: Any = m.store
        with s.transaction():  # an edge of a new pair and the counter moved, the summary left alone
            s._q("MATCH (a:Project {ref: 'project:birch'}), (b:Project {ref: 'project:orchid'}) CREATE "
                 "(a)-[:DEPENDS_ON {predicate: 'depends_on', valid_from: timestamp('2024-01-01'), assertions: [99], "
                 "conflicts: []}]->(b)")
            s._set_meta("next_fact", str(s.next_fact_id() + 1))
    with graphmem.open(path, read_only=True) as m:
        assert m.store.graph_summary() is None  # type: ignore[attr-defined]
        seen = _queries(m)
        assert [e.label for e in _edges(m, ["project:birch"])] == ["DEPENDS_ON"]
        assert _probes(seen)
    with graphmem.open(path) as m:
        m.assert_("tool:alpha", "relates_to", "concept:graph-database")
        assert _stored(m) == _probed(m)
        assert ("DEPENDS_ON", "Project", "Project") in _stored(m)[0]  # type: ignore[index]


def test_a_store_without_a_summary_gets_one_with_its_next_write(new_store: Callable[[str], Path]) -> None:
    path = new_store("s")
    with graphmem.open(path, create=True) as m:
        _entities(m)
        m.assert_("project:orchid", "uses", "tool:alpha")
        m.store._q("MATCH (m:Meta {key: 'graph_summary'}) DELETE m")  # type: ignore[attr-defined]  # as before it was kept
    with graphmem.open(path) as m:
        assert _stored(m) is None
        m.assert_("project:birch", "status", "active")
        assert _stored(m) == _probed(m) and ("USES", "Project", "Tool") in _stored(m)[0]  # type: ignore[index]


def test_a_rolled_back_write_leaves_the_stored_summary(new_store: Callable[[str], Path]) -> None:
    path = new_store("s")
    with graphmem.open(path, create=True) as m:
        _entities(m)
        m.assert_("project:orchid", "uses", "tool:alpha")
        before = _stored(m)
        s: Any = m.store
        with pytest.raises(RuntimeError), s.transaction():
            m.assert_("project:birch", "depends_on", "project:orchid")
            m.add_entity("Tool", "Delta")
            raise RuntimeError("taken back")
        assert _stored(m) == before == _probed(m)
        m.assert_("tool:beta", "relates_to", "concept:graph-database")
        assert _stored(m) == _probed(m)
    with graphmem.open(path, read_only=True) as m:
        assert _stored(m) == _probed(m)
        assert [e.label for e in _edges(m, ["project:birch"])] == []


def test_rebuild_check_finds_a_summary_that_misses_a_pair_and_rebuild_mends_it(new_store: Callable[[str], Path]) -> None:
    from graphmem.store.kuzu.summary import SUMMARY_META, summary_text
    path = new_store("s")
    with graphmem.open(path, create=True) as m:
        _entities(m)
        m.assert_("project:orchid", "uses", "tool:alpha")
        m.assert_("tool:alpha", "relates_to", "concept:graph-database")
        assert [p["code"] for p in m.rebuild(check=True).problems] == []
        s: Any = m.store
        pairs, counts = _probed(m)
        s._set_meta(SUMMARY_META, summary_text(s.next_fact_id(), pairs - {("USES", "Project", "Tool")}, counts))
        s._forget_summary()
    with graphmem.open(path, read_only=True) as m:  # what a reader misses then
        assert _edges(m, ["project:orchid"]) == []
    with graphmem.open(path) as m:
        assert [p["code"] for p in m.rebuild(check=True).problems] == ["graph_summary_drift"]
        assert m.rebuild().ok
        assert _stored(m) == _probed(m)
        assert [p["code"] for p in m.rebuild(check=True).problems] == []
        assert [e.label for e in _edges(m, ["project:orchid"])] == ["USES"]
