"""Rebuild repairs every derived row (subject rows and fact edges); the check and lint find what differs."""

from __future__ import annotations

import datetime
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem import bulk
from graphmem.model import Interval
from graphmem.model.times import parse_instant
from graphmem.store.common.codecs import decode_log, loads, log_text, pack, same_view, unpack, view_text
from graphmem.store.kuzu.codecs import kuzu_time_text
from graphmem.view import rebuild as view_rebuild


def _edges(m: graphmem.Memory) -> list[tuple[Any, ...]]:
    labels = "|".join(e for e in sorted(m.ontology.edge_types) if m.store.is_fact_edge(e))
    rows = m.store._q(f"MATCH (s)-[e:{labels}]->(o) RETURN label(e), s.ref, o.ref, e.predicate, e.valid_from, "
                      "e.valid_to, e.assertions, e.conflicts")
    return sorted(tuple(tuple(x) if isinstance(x, list) else x for x in r) for r in rows)


def _subjects(m: graphmem.Memory) -> dict[str, tuple[str, str, str]]:
    return {r: (n, log, view) for r, n, log, view in m.store._q("MATCH (s:Subject) RETURN s.ref, s.name, s.log, s.view")}


def _corrupt(m: graphmem.Memory) -> None:
    """Damage the derived rows the way a crash of some other writer or a hand-written Cypher query could."""
    q = m.store._q
    q("MATCH (s:Subject {ref: 'project:atlas'}) SET s.view = '[]'")
    q("MATCH (s:Subject {ref: 'project:harbor'}) SET s.name = 'Wrong'")
    one = q("MATCH (s:Project {ref: 'project:beacon'})-[e:USES]->(t) RETURN t.ref LIMIT 1")[0][0]
    q(f"MATCH (s:Project {{ref: 'project:beacon'}})-[e:USES]->(t {{ref: '{one}'}}) DELETE e")
    q("MATCH (s:Project {ref: 'project:compass'})-[e:USES]->(t) SET e.valid_to = timestamp('2001-01-01')")
    q("CREATE (:Subject {ref: 'project:ghost', name: 'Ghost', log: '[]', view: '[]'})")


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_check_finds_every_damaged_part_and_rebuild_repairs_it(demo: graphmem.Memory) -> None:
    edges, subjects = _edges(demo), _subjects(demo)
    _corrupt(demo)
    report = demo.rebuild(check=True)
    parts = {d["subject"]: d["parts"] for d in report.drift}
    assert parts == {"project:atlas": ["view"], "project:harbor": ["name"], "project:beacon": ["edges"],
                     "project:compass": ["edges"], "project:ghost": ["orphan"]}
    atlas = next(d for d in report.drift if d["subject"] == "project:atlas")
    assert atlas["stored_only"] == 0 and atlas["missing"] > 0
    lint = demo.lint()
    assert {i.subject for i in lint.issues if i.code == "view_drift"} == set(parts)
    assert _edges(demo) != edges
    done = demo.rebuild()
    assert done.counts["rewritten"] == 5
    assert _edges(demo) == edges
    assert _subjects(demo) == subjects
    assert demo.rebuild(check=True).drift == ()
    assert not [i for i in demo.lint().issues if i.code == "view_drift"]


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_the_bulk_path_repairs_the_same_way(demo: graphmem.Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    edges, subjects = _edges(demo), _subjects(demo)
    _corrupt(demo)
    monkeypatch.setattr(view_rebuild, "_REWRITE_MAX", 1)  # more than one subject differs: drop and bulk-load the view
    real = bulk.forked_map
    monkeypatch.setattr(view_rebuild, "forked_map", lambda fn, items: real(fn, items, min_items=0))  # two processes
    demo.rebuild()
    assert _edges(demo) == edges
    assert _subjects(demo) == subjects
    assert demo.rebuild(check=True).drift == ()


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_a_log_in_the_older_row_form_is_the_same_content_and_rebuild_rewrites_it(demo: graphmem.Memory) -> None:
    ref = "project:atlas"
    name, log, view = _subjects(demo)[ref]
    stmts = demo.store.subject_log(ref)
    # the first stored form carried each entity object's name as a 14th item
    old = json.dumps([list(r) + [s.object_name] for r, s in zip(json.loads(unpack(log)), stmts, strict=True)],
                     separators=(",", ":"), ensure_ascii=False)
    demo.store._q("MATCH (s:Subject {ref: $r}) SET s.log = $l", {"r": ref, "l": old})
    assert demo.store.subject_log(ref) == stmts  # read back the same, names included
    assert demo.rebuild(check=True).drift == ()  # content, not form
    assert demo.rebuild().counts["rewritten"] == 1
    assert _subjects(demo)[ref] == (name, log, view)


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_instants_before_1970_keep_their_microseconds(mem: graphmem.Memory) -> None:
    mem.add_entity("Project", "Old")
    mem.add_entity("Tool", "Abacus")
    times = ["1850-03-01T00:00:00.000250Z", "1969-12-31T23:59:59.999500Z", "1969-12-31T23:59:58.000001Z"]
    for i, t in enumerate(times):
        mem.assert_("Old", "status", ["active", "paused", "done"][i], valid_from=t, recorded_at="1970-01-02T00:00:00Z")
    before = mem.timeline("Old").to_dict()["intervals"]
    assert mem.rebuild(check=True).drift == ()
    mem.store._q("MATCH (s:Subject) SET s.view = '[]'")
    mem.rebuild()
    assert mem.timeline("Old").to_dict()["intervals"] == before
    starts = [iv["valid_from"] for iv in before]
    assert starts == ["1850-03-01T00:00:00.000250Z", "1969-12-31T23:59:58.000001Z", "1969-12-31T23:59:59.999500Z"]


_AWKWARD_TIMES = ["0001-01-01T00:00:00Z", "1850-03-01T00:00:00.000250Z", "1900-02-28T12:34:56.120000Z",
                  "1969-12-31T23:59:59.999999Z", "1970-01-01T00:00:00.500000Z", "2021-01-09T00:00:00.000001Z",
                  "9999-12-31T23:59:59.999999Z"]


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_time_text_is_what_kuzu_writes(mem: graphmem.Memory) -> None:
    for t in _AWKWARD_TIMES:
        us = parse_instant(t)
        [[kuzu_text]] = mem.store._q("RETURN CAST(epoch_ms(0) + $d AS STRING)",
                                     {"d": datetime.timedelta(microseconds=us)})
        assert kuzu_time_text(us) == kuzu_text, t


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_edges_with_awkward_times_compare_equal(mem: graphmem.Memory) -> None:
    mem.add_entity("Project", "Old")
    for i, t in enumerate(_AWKWARD_TIMES):
        mem.add_entity("Tool", f"Tool {i}")
        mem.assert_("Old", "uses", f"Tool {i}", valid_from=t, recorded_at="2000-01-01T00:00:00Z")
        if i % 2:  # a closed interval: its valid_to is an awkward time too
            mem.end("Old", "uses", f"Tool {i}", at=_AWKWARD_TIMES[i + 1])
    assert len(_edges(mem)) == len(_AWKWARD_TIMES)
    report = mem.rebuild(check=True)
    assert report.drift == () and report.counts["edges"] == len(_AWKWARD_TIMES)
    mem.store._q("MATCH (:Project)-[e:USES]->(t:Tool {ref: 'tool:tool-3'}) DELETE e")
    assert [d["parts"] for d in mem.rebuild(check=True).drift] == [["edges"]]
    mem.rebuild()
    assert mem.rebuild(check=True).drift == () and len(_edges(mem)) == len(_AWKWARD_TIMES)


def _halves(items: list[int]) -> list[int]:
    return [sum(items), len(items)]


def test_forked_map_gives_what_one_process_gives() -> None:
    items = list(range(10_001))
    got = bulk.forked_map(_halves, items, min_items=0)
    assert got == [_halves(items[:5000]), _halves(items[5000:])]
    assert bulk.forked_map(_halves, items) != [_halves(items)] or os.cpu_count() == 1


def test_forked_map_falls_back_when_the_child_fails() -> None:
    parent = os.getpid()

    def only_here(items: list[int]) -> int:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return sum(items)

    assert bulk.forked_map(only_here, list(range(100)), min_items=0) == [sum(range(50)), sum(range(50, 100))]
    assert bulk.forked_map(only_here, list(range(100)), min_items=0, parent_works=False) == [
        sum(range(50)), sum(range(50, 100))]


def _pid_and_sum(items: list[int]) -> tuple[int, int]:
    return os.getpid(), sum(items)


def test_forked_map_can_leave_both_halves_to_children() -> None:
    (pid_a, a), (pid_b, b) = bulk.forked_map(_pid_and_sum, list(range(100)), min_items=0, parent_works=False)
    assert (a, b) == (sum(range(50)), sum(range(50, 100)))
    if os.cpu_count() != 1:
        assert os.getpid() not in (pid_a, pid_b) and pid_a != pid_b


def test_packed_rows_read_back_exactly() -> None:
    for text in ["[]", "[[1,2]]", json.dumps([["status", "active", "literal", 1, None, [2], ["https://x"], [], None]] * 40),
                 json.dumps(["héllo ☃ " * 50])]:
        stored = pack(text)
        assert unpack(stored) == text
        assert (stored == text) == (len(text) < 256)
        assert len(stored) < len(text) or len(text) < 256


@pytest.mark.engine("kuzu", "ladybug")  # damages or reads the embedded engines' tables in Cypher
def test_when_every_subject_differs_the_compared_rows_are_loaded(demo: graphmem.Memory,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    edges, subjects = _edges(demo), _subjects(demo)
    demo.store._q("MATCH (s:Subject) SET s.view = '[]'")
    demo.store._q("CREATE (:Subject {ref: 'project:ghost', name: 'Ghost', log: '[]', view: '[]'})")
    monkeypatch.setattr(view_rebuild, "_REWRITE_MAX", 1)
    real = bulk.forked_map
    monkeypatch.setattr(view_rebuild, "forked_map", lambda fn, items: real(fn, items, min_items=0))  # two processes
    reloads: list[object] = []
    monkeypatch.setattr(view_rebuild, "reload_view", lambda store, registry, names: reloads.append(names))  # not needed
    report = demo.rebuild()
    assert report.counts["rewritten"] == len(subjects) + 1 and not reloads
    assert _edges(demo) == edges
    assert _subjects(demo) == subjects
    assert demo.rebuild(check=True).drift == ()
    assert not list((demo.store.path / "tmp").glob("*"))


def test_a_view_spelt_by_either_encoder_is_the_same_view() -> None:
    iv = Interval("project:x", "score", 1e-05, "literal", 0, None, (1,), ("https://a.example",), (), None)
    ours = view_text([iv])
    standard = json.dumps([list(iv[1:])], separators=(",", ":"), ensure_ascii=False)
    assert ours != standard  # orjson writes 0.00001 where the standard encoder writes 1e-05
    assert same_view(standard, ours) and same_view(ours, ours)
    assert not same_view(standard.replace("1e-05", "2e-05"), ours)
    assert not same_view(None, ours) and not same_view("", ours) and not same_view("[", ours)


def test_json_the_fast_reader_refuses_reads_as_the_standard_one() -> None:
    assert math.isnan(loads("[NaN]")[0])
    assert loads(str(2**70)) == 2**70
    assert loads('["\\ud800"]') == json.loads('["\\ud800"]')
    with pytest.raises(json.JSONDecodeError) as caught:
        loads('{"op": }')
    assert caught.value.msg == "Expecting value" and caught.value.colno == 8


def _awkward(m: graphmem.Memory) -> None:
    """Values whose text is awkward to store: quotes, escapes, tiny and huge numbers, ends and retractions."""
    m.add_entity("Project", "Odd")
    m.add_entity("Tool", "Quill")
    m.assert_("Odd", "summary", 'a "quoted" \\ back\tslash\nnew line é 中 😀', valid_from="2024-01-01")
    m.assert_("Odd", "score", "1e-05", valid_from="2024-01-01")
    m.assert_("Odd", "score", "-2.5e+300", valid_from="2024-02-01")
    m.assert_("Odd", "seats", "-9007199254740993", valid_from="2024-01-01")
    m.assert_("Odd", "public", "yes", valid_from="2024-01-01")
    m.assert_("Odd", "uses", "Quill", valid_from="2024-01-01", sources=['https://x.example/a"b\\c'])
    m.end("Odd", "uses", at="2024-03-01")
    fact = m.assert_("Odd", "status", "active", valid_from="2024-01-01").refs[0]
    m.retract(fact, reason='typo: "actve" \\ again')


def test_awkward_values_leave_nothing_for_rebuild_to_repair(store_path: Path, odd_predicates: Path) -> None:
    m = graphmem.open(store_path, predicate_dirs=[odd_predicates], create=True)
    _awkward(m)
    facts = m.current("Odd").to_dict()["facts"]
    assert {f["predicate"]: f["object"]["value"] for f in facts if f["predicate"] in ("summary", "seats")} == {
        "summary": 'a "quoted" \\ back\tslash\nnew line é 中 😀', "seats": -9007199254740993}
    assert m.rebuild(check=True).drift == ()
    assert m.rebuild().counts["rewritten"] == 0
    m.close()


@pytest.mark.engine("kuzu", "ladybug")  # the log text the embedded engines write, read in Cypher
def test_kuzu_writes_each_log_as_graphmem_does_for_awkward_values(store_path: Path, odd_predicates: Path) -> None:
    m = graphmem.open(store_path, predicate_dirs=[odd_predicates], create=True)
    _awkward(m)
    (ref, text), = list(m.store.subject_logs())
    log = m.store.subject_log(ref)
    assert json.loads(text) == json.loads(log_text(log))  # the same rows, whatever order Kuzu groups them in
    assert decode_log(ref, text, {}.get)[1] == unpack(_subjects(m)[ref][1])  # and, in id order, the stored text
    assert m.rebuild(check=True).drift == ()
    assert m.rebuild().counts["rewritten"] == 0
    m.close()
