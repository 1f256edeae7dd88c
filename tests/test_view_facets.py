"""The view kept by subject and predicate (``SubjectFacet``, layout 8, docs/semantics.md "The stored view"):
the writes keep it equal to what a rebuild makes, the predicate scan over it gives what filtering whole
views gives at any time, `rebuild --check` finds a facet that drifted and `rebuild` mends it, and a store
of layout 7 gets its facets from `migrate`."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import DB_FILE, TEST_ENGINE, cli

import graphmem
from graphmem.model.times import parse_instant
from graphmem.store.kuzu.base import FACETS_LAYOUT
from graphmem.store.kuzu.codecs import facet_rows
from graphmem.store.kuzu.database import driver
from graphmem.view.temporal import holding

PROJECTS = [f"P{i}" for i in range(8)]
TOOLS = [f"T{i}" for i in range(4)]
TIMES = ["2020-01-01", "2021-06-01", "2022-03-15", "2023-01-01", "2024-07-01", "2025-01-01"]
PROBES = ["2019-01-01", "2020-01-01", "2021-01-01", "2021-06-01", "2022-12-31", "2024-08-01", "2030-01-01"]


def _history(m: graphmem.Memory, seed: int) -> None:
    """Asserts, ends, retractions and a rename, chosen by ``seed`` (those the API refuses are skipped)."""
    rnd = random.Random(seed)
    for name in PROJECTS:
        m.add_entity("Project", name)
    for name in TOOLS:
        m.add_entity("Tool", name)
    refs: list[str] = []
    for _ in range(60):
        p, roll = rnd.choice(PROJECTS), rnd.random()
        t = rnd.choice(TIMES)
        try:
            if roll < 0.45:
                refs += m.assert_(p, "status", rnd.choice(["active", "paused", "done"]), valid_from=t).refs
            elif roll < 0.7:
                refs += m.assert_(p, "uses", rnd.choice(TOOLS), valid_from=t).refs
            elif roll < 0.8:
                refs += m.end(p, "uses", rnd.choice(TOOLS), at=t).refs
            elif roll < 0.9 and refs:
                m.retract(rnd.choice(refs))
            else:
                refs += m.assert_(p, "status", "active", valid_from=t, valid_to="2026-01-01").refs
        except graphmem.GraphmemError:
            pass
    m.rename_entity("T1", "Tool One")  # every view naming T1 is written again, with its facets


def _slow(m: graphmem.Memory, predicate: str, at: int) -> list[tuple[str, object]]:
    return sorted(((ref, iv) for ref, _, view in m.store.all_subject_rows() for iv in holding(view, at)
                   if iv.predicate == predicate), key=lambda r: (r[0], r[1].valid_from, str(r[1].object)))


@pytest.mark.parametrize("seed", range(6))
def test_writes_keep_the_facets_and_the_scan_equals_whole_views(new_store: Callable[[str], Path], seed: int) -> None:
    with graphmem.open(new_store("s"), create=True) as m:
        _history(m, seed)
        assert m.rebuild(check=True).ok  # the facets the writes left are those a rebuild makes
        for text in PROBES:
            at = parse_instant(text)
            for pred in ("status", "uses"):
                facts, named = m.store.subject_facts_holding(at, pred)
                got = [(f.subject, f.interval()) for f in facts]  # in the store's order, not sorted here
                assert got == _slow(m, pred, at), (text, pred)
                assert [ref for ref, _ in named] == list(dict.fromkeys(f.subject for f in facts)), (text, pred)
                names = {e.ref: e.name for e, _ in m.facts(predicate=pred, as_of=text).view}
                assert all(m.entity(ref).name == name for ref, name in names.items())


def test_facet_rows_keep_open_and_ended_apart() -> None:
    from graphmem.model import Interval
    view = [Interval("project:a", "status", "active", "literal", 10, None, (1,), (), (), None),
            Interval("project:a", "status", "paused", "literal", 5, 10, (2,), ("rec:1",), (), None),
            Interval("project:a", "uses", "tool:k", "entity", 3, 8, (3,), (), (), "K")]
    rows = {r[2]: r for r in facet_rows("project:a", view)}
    assert rows["status"][:3] == ["project:a status", "project:a", "status"]
    assert rows["status"][4] == 10 and rows["status"][6:] == [5, 10] and rows["status"][3] and rows["status"][5]
    assert rows["uses"][3] is None and rows["uses"][4] is None and rows["uses"][6:] == [3, 8]


def _kuzu(path: Path, query: str) -> None:
    """Run ``query`` on the store's database directly, with the run's embedded engine (Kuzu or LadybugDB)."""
    engine = driver(TEST_ENGINE)
    db = engine.Database(str(path / DB_FILE))
    try:
        engine.Connection(db).execute(query)
    finally:
        db.close()


@pytest.mark.engine("kuzu", "ladybug")  # Cypher that damages the embedded engines' SubjectFacet table
@pytest.mark.parametrize("damage", [
    "MATCH (f:SubjectFacet) WHERE f.predicate = 'status' SET f.open = NULL",
    "MATCH (f:SubjectFacet) WHERE f.predicate = 'uses' DELETE f",
    "MATCH (f:SubjectFacet) WHERE f.predicate = 'status' SET f.since = f.since + 1",
    "CREATE (:SubjectFacet {key: 'project:ghost status', ref: 'project:ghost', predicate: 'status', "
    "open: '[]', since: 1})",
])
def test_rebuild_check_finds_a_drifted_facet_and_rebuild_mends_it(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "s"
    with graphmem.open(path, create=True) as m:
        _history(m, 1)
        before = m.facts(predicate="status").to_dict()
    _kuzu(path, damage)
    r = cli(path, "rebuild", "--check", "--json")
    assert r.code != 0 and r.json()["drift"], r.out
    assert "view" in {p for d in r.json()["drift"] for p in d.get("parts", [])} or "orphan" in r.out
    assert cli(path, "rebuild").code == 0
    assert cli(path, "rebuild", "--check").code == 0
    with graphmem.open(path) as m:
        assert m.facts(predicate="status").to_dict()["facts"] == before["facts"]


@pytest.mark.engine("kuzu")
def test_a_layout_7_store_gets_its_facets_from_migrate(tmp_path: Path) -> None:
    from layouts import write_old_layout  # Kuzu's own layouts: not loaded on another engine
    src = tmp_path / "src"
    with graphmem.open(src, create=True) as m:
        _history(m, 2)
        want = m.facts(predicate="status", as_of="2022-12-31").to_dict()["facts"]
    old = tmp_path / "old"
    write_old_layout(src, old, FACETS_LAYOUT - 1)
    r = cli(old, "migrate", "--json")
    assert r.code == 0, r.err
    assert r.json()["steps"] == ["view_facets"]
    with graphmem.open(old) as m:
        assert m.facts(predicate="status", as_of="2022-12-31").to_dict()["facts"] == want
        assert m.rebuild(check=True).ok


def test_a_write_group_keeps_the_facets_of_every_subject(new_store: Callable[[str], Path]) -> None:
    """A group's asserts write many subjects at once (``write_subjects``): new and stored subjects, new and
    stored facets, all as a rebuild makes them."""
    with graphmem.open(new_store("s"), create=True) as m:
        for name in PROJECTS:
            m.add_entity("Project", name)
        m.add_entity("Tool", "K")
        m.assert_("P0", "status", "active", valid_from="2020-01-01")
        with m.write_group():
            for i, name in enumerate(PROJECTS):
                m.assert_(name, "status", "paused", valid_from=f"202{i % 4 + 1}-01-01")
                if i % 2:
                    m.assert_(name, "uses", "K", valid_from="2021-01-01")
        assert m.rebuild(check=True).ok
        for text in PROBES:
            at = parse_instant(text)
            facts, named = m.store.subject_facts_holding(at, "status")
            got = [(f.subject, f.interval()) for f in facts]  # in the store's order, not sorted here
            assert got == _slow(m, "status", at), text
            assert [ref for ref, _ in named] == list(dict.fromkeys(f.subject for f in facts)), text


def test_an_import_that_ends_every_open_interval_it_touches(new_store: Callable[[str], Path]) -> None:
    """Subjects written together whose facets all lose their open rows (every bound of one kind null in
    the group's rows) are written as a rebuild makes them."""
    import json
    with graphmem.open(new_store("s"), create=True) as m:
        for name in ("A", "B", "C"):
            m.add_entity("Project", name)
            m.assert_(name, "status", "active", valid_from="2020-01-01")
        r = m.import_jsonl([json.dumps({"op": "end", "subject": f"project:{n.lower()}", "predicate": "status",
                                        "at": "2021-01-01"}) for n in ("A", "B", "C")])
        assert r.ok, r.errors
        assert m.rebuild(check=True).ok
        assert len(m.facts(predicate="status", as_of="2020-06-01").facts) == 3
        assert not m.facts(predicate="status", as_of="2021-06-01").facts
