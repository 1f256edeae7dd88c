"""Entity upkeep (docs/entities.md): rename, alias add/remove, merge and unmerge, each recorded as an
event with its record time, undoable by the same means, and refused whole on bad input."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import DB_FILE, cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.errors import BadInput, UnknownEntity
from graphmem.model.times import format_instant, now_us, to_us
from graphmem.view.temporal import holding, view_for_subject


def _counts(m: graphmem.Memory) -> tuple[int, int, int]:
    """Statements, entity events and the entities' names and aliases: what a refused write must leave."""
    names = tuple(sorted((e.ref, e.name, e.aliases) for e in m.store.all_entities()))
    return m.store.statement_count(), len(m.store.entity_events()), hash(names)


def _facts(result: Any) -> list[tuple[str, str, str, str | None]]:
    """What a current answer says, ids aside."""
    return sorted((f["predicate"], str(f["object"].get("ref", f["object"].get("value"))), f["valid_from"],
                   f["valid_to"]) for f in result.to_dict()["facts"])


# rename --------------------------------------------------------------------------------------

def test_rename_keeps_the_ref_and_every_view_shows_the_new_name(atlas: graphmem.Memory) -> None:
    atlas.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
    doc = atlas.rename_entity("kuzu", "Kuzu Graph").to_dict()
    assert doc["schema"] == "graphmem.entity-rename.v1"
    assert doc["entity"]["ref"] == "tool:kuzu" and doc["entity"]["name"] == "Kuzu Graph"
    assert doc["event"]["op"] == "rename" and (doc["event"]["from"], doc["event"]["to"]) == ("Kuzu", "Kuzu Graph")
    assert atlas.entity("kuzu graph").ref == "tool:kuzu"
    with pytest.raises(UnknownEntity):
        atlas.entity("Kuzu")
    assert atlas.current("Atlas").to_dict()["facts"][0]["object"]["name"] == "Kuzu Graph"
    assert atlas.rebuild(check=True).ok
    # undone by the same means: renamed back
    atlas.rename_entity("tool:kuzu", "Kuzu")
    assert atlas.entity("kuzu").name == "Kuzu"
    assert [e.op for e in atlas.store.entity_events("tool:kuzu")] == ["rename", "rename"]
    assert atlas.rebuild(check=True).ok


def test_rename_of_a_subject_renames_its_row(atlas: graphmem.Memory) -> None:
    atlas.assert_("Atlas", "status", "active", valid_from="2024-01-01")
    before = format_instant(now_us())
    time.sleep(0.002)
    atlas.rename_entity("atlas", "Atlas Platform")
    assert atlas.current("project:atlas").subject.name == "Atlas Platform"
    assert atlas.rebuild(check=True).ok
    # as known before the rename, the subject had its old name
    assert atlas.current("project:atlas", known_at=before).subject.name == "Atlas"
    assert atlas.timeline("project:atlas", known_at=before).subject.name == "Atlas"
    assert [e["event"] for e in atlas.timeline("atlas platform").to_dict()["events"]][-1] == "entity-rename"


@pytest.mark.parametrize(("ref", "name", "message"), [
    ("kuzu", "Kuzu", "already named 'Kuzu'"),
    ("kuzu", "sqlite", "Tool 'tool:sqlite' is named 'SQLite' already"),
    ("kuzu", "!!", "no letters or digits"),
    ("kuzu", "  ", "expected a non-empty name"),
    ("nope", "Other", "unknown entity 'nope'"),
])
def test_bad_rename_writes_nothing(atlas: graphmem.Memory, ref: str, name: str, message: str) -> None:
    before = _counts(atlas)
    with pytest.raises(BadInput, match=message):
        atlas.rename_entity(ref, name)
    assert _counts(atlas) == before


# aliases -------------------------------------------------------------------------------------

def test_alias_add_and_remove_change_resolution_and_are_recorded(atlas: graphmem.Memory) -> None:
    doc = atlas.add_aliases("kuzu", ["KuzuDB", "kz", "kuzudb"]).to_dict()
    assert doc["schema"] == "graphmem.entity-alias-add.v1"
    assert doc["added"] == ["KuzuDB", "kz"] and doc["unchanged"] == ["kuzudb"]
    assert atlas.entity("KZ").ref == "tool:kuzu" and atlas.entity("kuzudb").ref == "tool:kuzu"
    again = atlas.add_aliases("kuzu", ["kz"]).to_dict()  # nothing new: no event
    assert again["added"] == [] and again["event"] is None and again["created"] == []
    doc = atlas.remove_aliases("kuzu", ["KZ"]).to_dict()
    assert doc["schema"] == "graphmem.entity-alias-remove.v1" and doc["removed"] == ["kz"]
    with pytest.raises(UnknownEntity):
        atlas.entity("kz")
    assert atlas.entity("kuzudb").ref == "tool:kuzu"
    assert [(e.op, e.detail["aliases"]) for e in atlas.store.entity_events("tool:kuzu")] == [
        ("alias-add", ["KuzuDB", "kz"]), ("alias-remove", ["kz"])]
    assert atlas.store.all_names()["kuzudb"] == ["tool:kuzu"] and "kz" not in atlas.store.all_names()


def test_an_alias_shared_with_another_entity_stays_with_it(atlas: graphmem.Memory) -> None:
    atlas.add_aliases("sqlite", ["db"])
    atlas.add_aliases("kuzu", ["db"])
    atlas.remove_aliases("kuzu", ["db"])
    assert atlas.entity("db").ref == "tool:sqlite"


@pytest.mark.parametrize(("aliases", "message"), [
    (["nope"], "has no alias 'nope'; its aliases: atlas-app"),
    (["atlas-app", "nope"], "has no alias 'nope'"),
    (["Atlas"], "is the name of 'project:atlas'"),
    ([""], "bad alias ''"),
    ([], "no alias given"),
])
def test_bad_alias_remove_writes_nothing(atlas: graphmem.Memory, aliases: list[str], message: str) -> None:
    before = _counts(atlas)
    with pytest.raises(BadInput, match=message):
        atlas.remove_aliases("atlas", aliases)
    assert _counts(atlas) == before


def test_add_entity_on_an_existing_entity_adds_its_new_aliases(atlas: graphmem.Memory) -> None:
    """What the service's POST /entities promises (docs/service.md): an existing entity gains aliases."""
    doc = atlas.add_entity("Tool", "kuzu", ["KuzuDB"]).to_dict()
    assert doc["schema"] == "graphmem.entity.v1" and doc["created"] == [] and doc["updated"] == ["tool:kuzu"]
    assert doc["entity"]["aliases"] == ["KuzuDB"] and doc["event"]["op"] == "alias-add"
    assert atlas.entity("kuzudb").ref == "tool:kuzu"
    with pytest.raises(BadInput, match="entity 'tool:kuzu' already exists"):
        atlas.add_entity("Tool", "Kuzu", ["kuzudb"])  # nothing new
    with pytest.raises(BadInput, match="already exists as Tool 'Kuzu'"):
        atlas.add_entity("Tool", "KUZU!", ["x"])  # the same ref from another name


# merge -----------------------------------------------------------------------------------------

@pytest.fixture
def two(atlas: graphmem.Memory) -> graphmem.Memory:
    """Atlas and its duplicate Atlas 2, each with facts; Compass depends on the duplicate."""
    m = atlas
    m.add_entity("Project", "Atlas 2", aliases=["atlas-dup"])
    m.assert_("Atlas", "status", "active", valid_from="2024-01-01")
    m.assert_("Atlas", "uses", "SQLite", valid_from="2024-01-01")
    m.assert_("Atlas 2", "uses", "Kuzu", valid_from="2024-03-01")
    m.assert_("Atlas 2", "uses", "SQLite", valid_from="2024-01-01")  # the same statement as Atlas's
    m.assert_("Atlas 2", "owner", "Ada", valid_from="2024-02-01")
    m.add_entity("Project", "Compass")
    m.assert_("Compass", "depends_on", "Atlas 2", valid_from="2024-02-01")  # the duplicate as an object
    return m


def test_merge_carries_statements_over_and_the_old_ref_resolves_to_the_survivor(two: graphmem.Memory) -> None:
    m = two
    b_before = m.current("project:atlas-2").to_dict()
    before_merge = format_instant(now_us())
    time.sleep(0.002)
    doc = m.merge_entities("Atlas", "atlas-dup").to_dict()
    assert doc["schema"] == "graphmem.entity-merge.v1"
    ev = doc["event"]
    assert ev["op"] == "merge" and ev["entity"] == "project:atlas" and ev["merged"] == "project:atlas-2"
    assert len(ev["carried"]) == 3 and len(ev["same"]) == 1  # uses SQLite is not written twice
    assert sorted(doc["retracted"]) == sorted(f for f in ("fact:3", "fact:4", "fact:5", "fact:6"))
    # the survivor holds the union
    assert _facts(m.current("Atlas")) == [
        ("owner", "person:ada-lovelace", "2024-02-01T00:00:00Z", None),
        ("status", "active", "2024-01-01T00:00:00Z", None),
        ("uses", "tool:kuzu", "2024-03-01T00:00:00Z", None),
        ("uses", "tool:sqlite", "2024-01-01T00:00:00Z", None)]
    # a statement naming the duplicate as its object now names the survivor
    assert [f["object"]["ref"] for f in m.current("Compass").to_dict()["facts"]] == ["project:atlas"]
    # the old ref, name and alias resolve to the survivor, in every command that takes a ref
    for text in ("project:atlas-2", "Atlas 2", "atlas-dup"):
        assert m.current(text).subject.ref == "project:atlas"
        assert m.entity(text).ref == "project:atlas"
    assert m.timeline("project:atlas-2").subject.ref == "project:atlas"
    # as known before the merge, the duplicate is as it was
    past = m.current("project:atlas-2", known_at=before_merge).to_dict()
    assert past["subject"]["ref"] == "project:atlas-2" and past["facts"] == b_before["facts"]
    assert _facts(m.current("Atlas", known_at=before_merge)) == [
        ("status", "active", "2024-01-01T00:00:00Z", None), ("uses", "tool:sqlite", "2024-01-01T00:00:00Z", None)]
    assert m.rebuild(check=True).ok
    assert not [i for i in m.lint().to_dict()["issues"] if i["code"] == "duplicate_assertion"]


def test_why_shows_the_merge(two: graphmem.Memory) -> None:
    m = two
    doc = m.merge_entities("Atlas", "Atlas 2").to_dict()
    old, new = doc["event"]["carried"][0]
    carried = m.why(new).to_dict()
    assert [e["op"] for e in carried["entity_events"]] == ["merge"]
    assert carried["entity_events"][0]["event"] == doc["event"]["event"]
    original = m.why(old).to_dict()
    assert original["retraction"]["reason"] == f"merged into project:atlas ({doc['event']['event']})"
    assert [e["op"] for e in original["entity_events"]] == ["merge"]
    events = [e for e in m.timeline("Atlas").to_dict()["events"] if e["event"].startswith("entity-")]
    assert [e["event"] for e in events] == ["entity-merge"]
    shown = m.show_entity("project:atlas-2").to_dict()
    assert shown["entity"]["ref"] == "project:atlas-2" and shown["merged_into"] == "project:atlas"
    assert [e["op"] for e in shown["events"]] == ["merge"]


def test_merge_moves_mentions(two: graphmem.Memory) -> None:
    m = two
    m.ingest([json.dumps({"text": "Atlas 2 is the duplicate of the graph project; Kuzu runs it."}).encode()])
    m.extract_pending(apply=True)
    rid = next(iter(m.store.mentions_naming("project:atlas-2")))
    doc = m.merge_entities("Atlas", "Atlas 2").to_dict()
    assert [r for r, _, _ in doc["event"]["mentions"]] == [f"rec:{rid}"]
    assert "project:atlas" in m.store.mentioned_by([rid])[rid]
    assert "project:atlas-2" not in m.store.mentioned_by([rid])[rid]
    m.unmerge_entity("project:atlas-2")
    assert "project:atlas-2" in m.store.mentioned_by([rid])[rid]


def test_extraction_after_a_merge_mentions_the_entity_merged_into(two: graphmem.Memory) -> None:
    m = two
    m.merge_entities("Atlas", "Atlas 2")
    m.ingest([json.dumps({"text": "The atlas-dup service was slow today."}).encode()])
    m.extract_pending(apply=True)
    assert m.store.mentions_naming("project:atlas-2") == {}
    assert len(m.store.mentions_naming("project:atlas")) == 1


@pytest.mark.parametrize(("a", "b", "message"), [
    ("Atlas", "atlas-app", "cannot merge entity 'project:atlas' with itself"),
    ("Atlas", "Kuzu", "cannot merge 'tool:kuzu' \\(a Tool\\) into 'project:atlas' \\(a Project\\)"),
    ("Atlas", "nope", "unknown entity to merge 'nope'"),
])
def test_bad_merge_writes_nothing(two: graphmem.Memory, a: str, b: str, message: str) -> None:
    before = _counts(two)
    with pytest.raises(BadInput, match=message):
        two.merge_entities(a, b)
    assert _counts(two) == before


def test_a_second_merge_of_the_same_entity_is_refused(two: graphmem.Memory) -> None:
    two.merge_entities("Atlas", "Atlas 2")
    before = _counts(two)
    with pytest.raises(BadInput, match="'project:atlas-2' is merged into 'project:atlas' already"):
        two.merge_entities("Atlas", "project:atlas-2")
    assert _counts(two) == before


def test_unmerge_takes_the_merge_back_and_keeps_history(two: graphmem.Memory) -> None:
    m = two
    a_before, b_before = _facts(m.current("Atlas")), _facts(m.current("Atlas 2"))
    ada_before = _facts(m.current("Compass"))
    m.merge_entities("Atlas", "Atlas 2")
    merged_at = format_instant(now_us())
    time.sleep(0.002)
    doc = m.unmerge_entity("atlas-dup").to_dict()
    assert doc["schema"] == "graphmem.entity-unmerge.v1" and doc["event"]["op"] == "unmerge"
    assert len(doc["event"]["restored"]) == 4 and len(doc["event"]["retracted"]) == 3
    assert m.entity("atlas-dup").ref == "project:atlas-2"
    assert (_facts(m.current("Atlas")), _facts(m.current("Atlas 2")), _facts(m.current("Compass"))) == (
        a_before, b_before, ada_before)
    # as known between the merge and the unmerge, the merge holds
    assert m.current("project:atlas-2", known_at=merged_at).subject.ref == "project:atlas"
    assert ("uses", "tool:kuzu", "2024-03-01T00:00:00Z", None) in _facts(m.current("Atlas", known_at=merged_at))
    assert m.rebuild(check=True).ok
    with pytest.raises(BadInput, match="'project:atlas-2' is not merged"):
        m.unmerge_entity("project:atlas-2")
    # and it can be merged again
    m.merge_entities("Atlas", "Atlas 2")
    assert m.entity("atlas-dup").ref == "project:atlas"


def test_an_interrupted_write_takes_back_renames_aliases_and_events(atlas: graphmem.Memory) -> None:
    """The commit mark's account (WriteUndo) covers what upkeep changes in place: name, aliases, events."""
    store = atlas.store
    kuzu = atlas.entity("kuzu")
    with store.transaction():
        atlas._entities.rename("kuzu", "Kuzu Graph")
        undo = store._undo
    assert undo.entities_before["tool:kuzu"][2] == "Kuzu" and undo.events_from == 1
    with store.transaction():
        store.roll_back(type(undo).from_json(undo.to_dict()))
        store.rebuild_names()
    assert store.entity("tool:kuzu") == kuzu and store.entity_events() == []
    atlas.add_aliases("atlas", ["atl"])
    with store.transaction():
        atlas._entities.remove_aliases("atlas", ["atlas-app", "atl"])
        undo = store._undo
    with store.transaction():
        store.roll_back(type(undo).from_json(undo.to_dict()))
        store.rebuild_names()
    assert store.entity("project:atlas").aliases == ("atlas-app", "atl")
    assert [e.op for e in store.entity_events()] == ["alias-add"] and atlas.entity("atl").ref == "project:atlas"


# the command line ---------------------------------------------------------------------------

def test_cli_commands_print_refs_and_json(store_path: Path) -> None:
    s = store_path
    assert cli(s, "init").code == 0
    assert cli(s, "entity", "add", "Project", "Atlas").code == 0
    assert cli(s, "entity", "add", "Project", "Atlas Copy").code == 0
    assert cli(s, "assert", "Atlas Copy", "status", "paused", "--from", "2024-01-01").code == 0
    r = cli(s, "entity", "rename", "atlas", "Atlas One", "--json")
    assert r.code == 0 and r.json()["schema"] == "graphmem.entity-rename.v1"
    r = cli(s, "entity", "alias", "add", "project:atlas", "a1", "a2", "--json")
    assert r.code == 0 and r.json()["schema"] == "graphmem.entity-alias-add.v1" and r.json()["added"] == ["a1", "a2"]
    r = cli(s, "entity", "alias", "remove", "project:atlas", "a2", "--json")
    assert r.code == 0 and r.json()["schema"] == "graphmem.entity-alias-remove.v1"
    r = cli(s, "entity", "merge", "a1", "Atlas Copy", "--json")
    assert r.code == 0 and r.json()["schema"] == "graphmem.entity-merge.v1" and r.json()["created"] == ["fact:2"]
    r = cli(s, "current", "project:atlas-copy", "--json")
    assert r.json()["subject"]["ref"] == "project:atlas" and r.json()["facts"][0]["assertions"] == ["fact:2"]
    r = cli(s, "entity", "show", "Atlas Copy")
    assert r.code == 0 and "merged into project:atlas" in r.out
    r = cli(s, "why", "fact:2")
    assert r.code == 0 and "merged into project:atlas" in r.out
    assert "entity-merge" in cli(s, "timeline", "a1").out
    r = cli(s, "entity", "unmerge", "project:atlas-copy", "--json")
    assert r.code == 0 and r.json()["schema"] == "graphmem.entity-unmerge.v1" and r.json()["created"] == ["fact:3"]
    r = cli(s, "entity", "add", "Project", "atlas one", "--alias", "a3")  # by its new name: the same entity
    assert r.code == 0 and "project:atlas (aliases added: a3)" in r.out


@pytest.mark.parametrize("args", [
    ("entity", "rename", "atlas", "!!"),
    ("entity", "rename", "nothing", "Name"),
    ("entity", "alias", "remove", "atlas", "nope"),
    ("entity", "alias", "add", "atlas", " "),
    ("entity", "merge", "atlas", "atlas"),
    ("entity", "merge", "atlas", "kuzu"),
    ("entity", "unmerge", "atlas"),
])
def test_cli_bad_input_is_one_line_and_exit_2(store_path: Path, args: tuple[str, ...]) -> None:
    s = store_path
    cli(s, "init")
    cli(s, "entity", "add", "Project", "Atlas")
    cli(s, "entity", "add", "Tool", "Kuzu")
    before = cli(s, "export").out
    r = cli(s, *args)
    assert r.code == 2 and len(r.err_lines) == 1 and r.err.startswith("graphmem: error: "), r
    assert "Traceback" not in r.err and cli(s, "export").out == before


# property: merge then current equals current over the union ------------------------------------

_DAY0 = dt.date(2024, 1, 1)
_stmt = st.tuples(st.sampled_from(["status", "uses", "end-uses"]), st.integers(0, 20),
                  st.one_of(st.none(), st.integers(1, 10)), st.integers(0, 2))
_STATUS = ("active", "paused", "idea")
_TOOLS = ("Kuzu", "SQLite", "Neo4j")


def _day(n: int) -> str:
    return (_DAY0 + dt.timedelta(days=n)).isoformat()


def _write(m: graphmem.Memory, subject: str, ops: list[tuple[str, int, int | None, int]]) -> None:
    for kind, start, length, value in ops:
        try:
            if kind == "status":
                m.assert_(subject, "status", _STATUS[value], valid_from=_day(start),
                          valid_to=None if length is None else _day(start + length))
            elif kind == "uses":
                m.assert_(subject, "uses", _TOOLS[value], valid_from=_day(start),
                          valid_to=None if length is None else _day(start + length))
            else:
                m.end(subject, "uses", _TOOLS[value], at=_day(start))
        except BadInput:
            pass  # an end where nothing holds


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a_ops=st.lists(_stmt, max_size=6), b_ops=st.lists(_stmt, max_size=6), b_first=st.booleans())
def test_merge_then_current_equals_current_over_the_union(new_store: Callable[[str], Path],
                                                          a_ops: list[Any], b_ops: list[Any], b_first: bool) -> None:
    with graphmem.open(new_store(f"merge-{uuid.uuid4().hex[:8]}"), create=True) as m:  # a new store per example
        for t in ("Kuzu", "SQLite", "Neo4j"):
            m.add_entity("Tool", t)
        m.add_entity("Project", "A")
        m.add_entity("Project", "B")
        for subject, ops in ((("B", b_ops), ("A", a_ops)) if b_first else (("A", a_ops), ("B", b_ops))):
            _write(m, subject, ops)
        # the union: A's statements, and B's written about A as recorded at the merge, in their recorded order
        own = [s for s in m.store.subject_log("project:a") if s.retracted_at is None]
        b_stmts = sorted((s for s in m.store.subject_log("project:b") if s.retracted_at is None),
                         key=lambda s: (s.recorded_at, s.id))
        later, first = now_us() + 10**9, m.store.next_fact_id()
        union = own + [s._replace(subject="project:a", recorded_at=later, id=first + i) for i, s in enumerate(b_stmts)]
        expected_view = view_for_subject(union, m.registry)
        b_before = m.current("B").to_dict()["facts"]
        known = format_instant(now_us())
        m.merge_entities("A", "B")
        for day in range(0, 32, 3):
            as_of = _day(day)
            at = m.current("A", as_of=as_of).to_dict()["facts"]
            want = holding(expected_view, to_us(m.current("A", as_of=as_of).as_of))
            assert sorted((f["predicate"], str(f["object"].get("ref", f["object"].get("value"))), f["valid_from"],
                           f["valid_to"]) for f in at) == sorted(
                (iv.predicate, str(iv.object), format_instant(iv.valid_from), format_instant(iv.valid_to))
                for iv in want)
        assert m.current("project:b", known_at=known).to_dict()["facts"] == b_before
        assert m.current("B").subject.ref == "project:a"


@pytest.mark.engine("kuzu", "ladybug")  # the commit mark of an embedded store's bulk COPY, and its repair
@pytest.mark.parametrize("torn", [None, 0.0001, 0.5, 0.999])
def test_a_merge_killed_while_committing_is_taken_back_whole(tmp_path: Path, torn: float | None) -> None:
    """A merge of more statements than go through Kuzu's log is a bulk write: killed inside its commit, the
    store is refused, and ``rebuild`` takes the merge back whole (statements, retractions, mentions, event).
    ``torn``: the kill also cut the write-ahead log short at that share of its length, as a kill between
    two of the engine's writes of a large log does (LadybugDB then refused the database on its checksum
    until rebuild opened it with ``throw_on_wal_replay_failure=False``)."""
    import os
    import signal
    import subprocess
    import sys

    from test_crash import _KILLED_IN_COMMIT

    path = tmp_path / "s"
    lines = [{"op": "entity", "type": "Project", "name": n} for n in ("Atlas", "Atlas 2")]
    lines += [{"op": "entity", "type": "Tool", "name": f"Tool {i}"} for i in range(25)]
    lines += [{"op": "assert", "subject": "project:atlas-2", "predicate": "uses", "object": f"tool:tool-{i % 25}",
               "valid_from": (dt.date(2000, 1, 1) + dt.timedelta(days=i)).isoformat()} for i in range(2500)]
    with graphmem.open(path, create=True) as m:
        assert m.import_jsonl([json.dumps(x) for x in lines], strict=True).ok
        m.ingest([json.dumps({"text": "Atlas 2 runs on Tool 3."}).encode()])
        m.extract_pending(apply=True)
        before = (m.export_doc("jsonl", None).text, m.store.all_mentions())
    killed = subprocess.run([sys.executable, "-c", _KILLED_IN_COMMIT, "--store", str(path), "entity", "merge",
                             "Atlas", "Atlas 2"], capture_output=True, timeout=300,
                            env={**os.environ, "KILL_AFTER": "0.001"})
    assert killed.returncode == -signal.SIGKILL and (path / "commit-pending.json").exists()
    wal = path / (DB_FILE + ".wal")
    if torn is not None and wal.exists():  # (a kill that came later, in the checkpoint, left no log to cut)
        os.truncate(wal, int(wal.stat().st_size * torn))
    assert cli(path, "current", "Atlas").code == 3
    repaired = cli(path, "rebuild", "--json")
    assert repaired.code == 0 and "repaired" in repaired.json(), repaired
    with graphmem.open(path) as m:
        assert (m.export_doc("jsonl", None).text, m.store.all_mentions()) == before
        assert m.store.entity_events() == [] and m.entity("Atlas 2").ref == "project:atlas-2"
        assert m.rebuild(check=True).ok
        assert len(m.merge_entities("Atlas", "Atlas 2").refs) == 2500  # and the merge can be made again


def test_merge_and_unmerge_carry_cites_with_what_they_cite(new_store: Callable[[str], Path]) -> None:
    """A cite of the merged entity's assertion goes with the copy of that assertion (and back on unmerge):
    the evidence stays on the fact, lint finds no missing source, rebuild --check finds no drift."""
    m = graphmem.open(new_store("s"), create=True)
    m.add_entity("Project", "Alpha"), m.add_entity("Project", "Beta"), m.add_entity("Tool", "Kuzu")
    fact = m.assert_("Beta", "uses", "Kuzu", valid_from="2025-01-01").refs[0]
    m.cite(fact, ["https://example.org/beta-design"], "design doc")
    m.merge_entities("Alpha", "Beta")
    (on_a,) = m.current("Alpha").facts
    assert on_a.sources == ("https://example.org/beta-design",)
    assert m.rebuild(check=True).ok and m.lint().counts()["warning"] == 0
    m.unmerge_entity("project:beta")
    (on_b,) = m.current("project:beta").facts
    assert on_b.sources == ("https://example.org/beta-design",) and not m.current("Alpha").facts
    assert m.rebuild(check=True).ok and m.lint().counts()["warning"] == 0
    m.close()
