"""`cite`: evidence attached to what an assertion already says, as a statement of its own (SPEC 15),
and import writing nothing for a line the store holds (idempotent import, round trips)."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import address, cli, jl, one_clear_line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import ENTITIES as ENTITY_PAIRS
from strategies import HORIZON, SOURCES, import_histories, known_ats, pure_subject_statements

import graphmem
from graphmem.model import Statement
from graphmem.ontology.schema import load_ontology, load_registry
from graphmem.transfer import importer
from graphmem.view.temporal import view_for_subject

REGISTRY = load_registry(load_ontology())

ENTITIES = [{"op": "entity", "type": "Project", "name": "Atlas"}, {"op": "entity", "type": "Tool", "name": "Kuzu"}]


def _codes(m: graphmem.Memory) -> list[str]:
    return [i.code for i in m.lint().issues]


def _state(m: graphmem.Memory) -> tuple[Any, ...]:
    """Everything a write would change: the export, the counters, the statement count."""
    return m.export(), m.store.next_fact_id(), m.store.next_record_id(), m.store.statement_count()


# cite --------------------------------------------------------------------------------------------

def test_cite_is_an_event_of_its_own_seen_from_its_record_time(atlas: graphmem.Memory) -> None:
    fact = atlas.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs[0]
    assert "missing_source" in _codes(atlas)
    before = atlas.why(fact).stored.recorded_at
    w = atlas.cite(fact, ["https://example.org/adr/7"], note="decision record")
    cite = w.refs[0]
    assert cite == "fact:2" and w.to_dict()["schema"] == "graphmem.cite.v1"
    assert w.detail["fact"]["cites"] == fact and w.detail["sources"] == ["https://example.org/adr/7"]
    # the assertion itself is untouched (append-only); the view lists the cited source
    assert atlas.why(fact).statement.sources == ()
    (iv,) = atlas.current("Atlas").facts
    assert iv.sources == ("https://example.org/adr/7",) and iv.assertions == ("fact:1",)
    # as known before the cite, the source is not there
    cited_at = atlas.why(cite).stored.recorded_at
    from graphmem.model.times import format_instant
    (old,) = atlas.current("Atlas", known_at=format_instant(cited_at - 1)).facts
    assert old.sources == () and before < cited_at
    # why: every source with when it was attached and by which cite
    d = atlas.why(fact).to_dict()
    assert d["sources"] == [{"ref": "https://example.org/adr/7", "kind": "uri", "attached_at": format_instant(cited_at),
                             "cite": cite, "note": "decision record"}]
    assert [c["fact"] for c in d["cited_by"]] == [cite]
    # timeline: the cite is an event with its record time
    events = atlas.timeline("Atlas").to_dict()["events"]
    assert [(e["event"], e["fact"]) for e in events] == [("assert", fact), ("cite", cite)]
    # lint: neither a duplicate nor a missing source; the view rebuilds to the same
    assert _codes(atlas) == []
    assert atlas.rebuild(check=True).drift == ()


def test_cite_adds_a_record_and_keeps_the_first_sources_first(atlas: graphmem.Memory) -> None:
    atlas.ingest([json.dumps({"text": "Atlas moved to Kuzu in February.", "kind": "note"})])
    fact = atlas.assert_("Atlas", "uses", "Kuzu", sources=["https://example.org/a"]).refs[0]
    atlas.cite(fact, ["rec:1", "https://example.org/b"])
    assert atlas.current("Atlas").facts[0].sources == ("https://example.org/a", "rec:1", "https://example.org/b")
    src = {s["ref"]: s for s in atlas.why(fact).to_dict()["sources"]}
    assert src["rec:1"]["resolved"] is True and src["rec:1"]["text"].startswith("Atlas moved")
    assert src["https://example.org/a"]["cite"] is None
    assert _codes(atlas) == []


def test_retracting_a_cite_withdraws_its_sources_and_retracting_the_assertion_keeps_the_history(
        atlas: graphmem.Memory) -> None:
    fact = atlas.assert_("Atlas", "status", "active", valid_from="2024-01-01").refs[0]
    cite = atlas.cite(fact, ["https://example.org/one"]).refs[0]
    atlas.retract(cite, reason="wrong page")
    assert atlas.current("Atlas").facts[0].sources == ()
    assert atlas.why(fact).to_dict()["sources"] == []
    # the same source can be attached again once its cite is withdrawn
    again = atlas.cite(fact, ["https://example.org/one"]).refs[0]
    assert atlas.current("Atlas").facts[0].sources == ("https://example.org/one",)
    atlas.retract(fact)
    assert atlas.current("Atlas").facts == ()
    d = atlas.why(fact).to_dict()
    assert [c["fact"] for c in d["cited_by"]] == [cite, again] and d["retraction"] is not None
    with pytest.raises(graphmem.BadInput, match="is retracted"):
        atlas.cite(fact, ["https://example.org/two"])
    assert atlas.rebuild(check=True).drift == ()


@pytest.mark.parametrize(("args", "names"), [
    (["fact:99", "-s", "https://x.org/a"], ["fact:99", "unknown fact"]),
    (["fact:3", "-s", "https://x.org/a"], ["fact:3", "is retracted"]),
    (["fact:2", "-s", "https://x.org/a"], ["fact:2", "an end"]),
    (["fact:4", "-s", "https://x.org/a"], ["fact:4", "a cite"]),
    (["fact:1", "-s", "rec:7"], ["rec:7", "unknown record"]),
    (["fact:1", "-s", "not a uri"], ["not a uri", "bad source"]),
    (["fact:1"], ["missing source"]),
    (["fact:1", "-s", "https://x.org/cited"], ["https://x.org/cited", "already cites"]),
    (["fact:1", "-s", "https://x.org/own"], ["https://x.org/own", "already cites"]),
    (["fact:one", "-s", "https://x.org/a"], ["fact:one"]),
    (["fact:1", "-s", "https://x.org/a", "--by", "robot"], ["robot", "asserter"]),
])
def test_cite_bad_input_is_one_line_exit_2_nothing_written(store_path: Path, args: list[str],
                                                            names: list[str]) -> None:
    m = graphmem.open(store_path, create=True)
    m.import_jsonl([json.dumps(x) for x in [
        *ENTITIES, {"op": "entity", "type": "Tool", "name": "SQLite"},
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "valid_from": "2024-01-01",
         "sources": ["https://x.org/own"]},
        {"op": "end", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "at": "2024-06-01"},
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "SQLite"},
        {"op": "retract", "fact": "fact:3"}]])
    m.cite("fact:1", ["https://x.org/cited"])
    state = _state(m)
    m.close()
    one_clear_line(cli(store_path, "cite", *args), 2, names, expects=())
    m = graphmem.open(store_path, create=True)
    assert _state(m) == state
    m.close()


def test_cite_cli_prints_its_ref_and_json(store_path: Path) -> None:
    m = graphmem.open(store_path, create=True)
    m.import_jsonl([json.dumps(x) for x in [*ENTITIES, {"op": "assert", "subject": "Atlas", "predicate": "uses",
                                                       "object": "Kuzu"}]])
    m.close()
    r = cli(store_path, "cite", "fact:1", "--source", "https://x.org/a", "--note", "the minutes")
    assert (r.code, r.out.strip()) == (0, "fact:2"), r
    r = cli(store_path, "--json", "cite", "fact:1", "-s", "https://x.org/b")
    d = r.json()
    assert d["schema"] == "graphmem.cite.v1" and d["created"] == ["fact:3"]
    assert d["fact"]["op"] == "cite" and d["fact"]["cites"] == "fact:1" and d["fact"]["note"] is None
    assert d["assertion"]["fact"] == "fact:1" and d["sources"] == ["https://x.org/a", "https://x.org/b"]
    r = cli(store_path, "why", "fact:1")
    assert r.code == 0 and "attached" in r.out and "fact:2" in r.out
    r = cli(store_path, "timeline", "Atlas")
    assert r.code == 0 and "cite" in r.out


def test_cites_round_trip_through_export_and_import(new_store: Callable[[str], Path], atlas: graphmem.Memory) -> None:
    atlas.ingest([json.dumps({"text": "Kuzu chosen for Atlas.", "kind": "note"})])
    fact = atlas.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs[0]
    atlas.cite(fact, ["rec:1"], note="chat")
    withdrawn = atlas.cite(fact, ["https://x.org/old"]).refs[0]
    atlas.retract(withdrawn, reason="dead link")
    text = atlas.export()
    lines = [json.loads(x) for x in text.splitlines()]
    assert [x["op"] for x in lines if x["op"] in ("cite", "retract")] == ["cite", "cite", "retract"]
    other = graphmem.open(new_store("other"), create=True)
    r = other.import_jsonl(text.splitlines())
    assert r.ok and r.statements == 3 and r.retractions == 1
    assert sorted(other.export().splitlines()) == sorted(text.splitlines())
    assert [x for x in other.export().splitlines() if '"entity"' not in x] == [x for x in text.splitlines()
                                                                               if '"entity"' not in x]
    assert other.current("Atlas").to_dict()["facts"] == atlas.current("Atlas").to_dict()["facts"]
    assert other.rebuild(check=True).drift == () and _codes(other) == _codes(atlas)
    other.close()


def test_import_cite_lines_are_checked_by_line(atlas: graphmem.Memory) -> None:
    r = atlas.import_jsonl([json.dumps(x) for x in [
        {"op": "assert", "id": "fact:40", "subject": "Atlas", "predicate": "uses", "object": "Kuzu"},
        {"op": "cite", "fact": "fact:40", "sources": ["https://x.org/a"], "note": "same file"},
        {"op": "end", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "at": "2999-01-01"},
        {"op": "cite", "fact": "fact:3", "sources": ["https://x.org/b"]},
        {"op": "cite", "fact": "fact:77", "sources": ["https://x.org/b"]},
        {"op": "cite", "fact": "fact:40", "sources": ["https://x.org/a"]},
        {"op": "cite", "fact": "fact:40", "sources": []},
        {"op": "cite", "sources": ["https://x.org/c"]},
    ]])
    assert r.statements == 3  # the assert, its cite and the end
    assert [n for n, _ in r.errors] == [4, 5, 6, 7, 8]
    reasons = dict(r.errors)
    assert "an end" in reasons[4] and "unknown fact" in reasons[5] and "already cites" in reasons[6]
    assert "missing source" in reasons[7] and "'fact'" in reasons[8]
    assert atlas.current("Atlas").facts[0].sources == ("https://x.org/a",)


def test_streamed_import_checks_cites_of_its_own_facts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                       new_store: Callable[[str], Path]) -> None:
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    f = tmp_path / "in.jsonl"
    f.write_bytes(b"\n".join(jl(
        *ENTITIES,
        {"op": "assert", "subject": "project:atlas", "predicate": "uses", "object": "tool:kuzu"},
        {"op": "cite", "fact": "fact:1", "subject": "project:atlas", "predicate": "uses", "sources": ["https://x.org/a"]},
        {"op": "cite", "fact": "fact:1", "subject": "project:atlas", "predicate": "status",
         "sources": ["https://x.org/b"]},
        {"op": "cite", "fact": "fact:1", "sources": ["https://x.org/c"]},
    )) + b"\n")
    m = graphmem.open(new_store("s"), create=True)
    r = m.import_jsonl(f)
    assert r.statements == 2 and [n for n, _ in r.errors] == [5, 6], r.errors
    assert m.current("project:atlas").facts[0].sources == ("https://x.org/a",)
    assert m.rebuild(check=True).drift == ()
    m.close()


# idempotent import ---------------------------------------------------------------------------------

def test_demo_round_trip_into_the_same_store_changes_nothing(demo: graphmem.Memory, tmp_path: Path) -> None:
    demo.cite("fact:1", ["https://example.org/kickoff"], note="kick-off")
    state = _state(demo)
    text = state[0]
    n_lines = len(text.splitlines())
    r = demo.import_jsonl(text.splitlines())
    assert r.ok and (r.entities_created, r.entities_updated, r.statements, r.retractions) == (0, 0, 0, 0)
    assert r.unchanged == n_lines and r.to_dict()["unchanged"] == n_lines
    assert _state(demo) == state
    # the same from a file, through the command line
    f = tmp_path / "export.jsonl"
    f.write_text(text, encoding="utf-8")
    path = address(demo)
    demo.close()
    d = cli(path, "--json", "import", str(f)).json()
    assert (d["statements"], d["unchanged"], d["facts"]) == (0, n_lines, None)
    m = graphmem.open(path)
    assert _state(m) == state
    m.close()


def test_a_file_without_ids_imported_twice_is_imported_once(store_path: Path) -> None:
    lines = [json.dumps(x) for x in [
        *ENTITIES,
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "valid_from": "2024-01-01",
         "sources": ["https://x.org/a", "https://x.org/b"]},
        {"op": "assert", "subject": "Atlas", "predicate": "status", "object": "active"},
        {"op": "end", "subject": "Atlas", "predicate": "uses", "at": "2024-06-01"},
        {"op": "retract", "fact": "fact:2", "reason": "typo"},
    ]]
    m = graphmem.open(store_path, create=True)
    first = m.import_jsonl(lines)
    assert first.statements == 3 and first.unchanged == 0
    state = _state(m)
    again = m.import_jsonl(lines)
    assert (again.statements, again.retractions, again.unchanged, again.errors) == (0, 0, len(lines), ())
    assert _state(m) == state
    # a line that differs in its sources (as a set), its interval or a given record time is new
    changed = m.import_jsonl([json.dumps(x) for x in [
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "valid_from": "2024-01-01",
         "sources": ["https://x.org/b", "https://x.org/a"]},
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "valid_from": "2024-01-01",
         "sources": ["https://x.org/a"]},
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "valid_from": "2024-01-02",
         "sources": ["https://x.org/a", "https://x.org/b"]},
        {"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu", "valid_from": "2024-01-01",
         "sources": ["https://x.org/a", "https://x.org/b"], "recorded_at": "2024-01-05"},
    ]])
    assert (changed.unchanged, changed.statements) == (1, 3)
    m.close()


def test_a_declared_id_must_name_the_equal_statement(store_path: Path) -> None:
    m = graphmem.open(store_path, create=True)
    line = {"op": "assert", "subject": "project:atlas", "predicate": "uses", "object": "tool:kuzu",
            "valid_from": "2024-01-01", "recorded_at": "2024-01-01"}
    m.import_jsonl([json.dumps(x) for x in [*ENTITIES, {**line, "id": "fact:1"}]])
    assert m.import_jsonl([json.dumps({**line, "id": "fact:1"})]).unchanged == 1
    r = m.import_jsonl([json.dumps({**line, "id": "fact:9"})])  # fact:9 is not that statement
    assert (r.unchanged, r.statements) == (0, 1)
    m.close()


_PROPS = settings(max_examples=15, deadline=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_PROP_ENTITIES = [{"op": "entity", "type": t, "name": n} for t, n in ENTITY_PAIRS]


@_PROPS
@given(lines=import_histories())
def test_import_twice_equals_import_once(new_store: Callable[[str], Path], lines: list[dict[str, Any]]) -> None:
    example = uuid.uuid4().hex[:8]  # new stores for each example
    at = new_store(f"once-{example}"), new_store(f"twice-{example}")
    text = [json.dumps(x) for x in _PROP_ENTITIES + lines]
    once = graphmem.open(at[0], create=True)
    twice = graphmem.open(at[1], create=True)
    try:
        r1 = once.import_jsonl(text)
        assert r1.ok, r1.errors
        assert twice.import_jsonl(text).ok
        r2 = twice.import_jsonl(text)
        assert (r2.statements, r2.retractions, r2.entities_created, r2.errors) == (0, 0, 0, ())
        assert r2.unchanged == len(text)
        assert _state(twice) == _state(once)
        # and a file without ids (so without retractions) imported twice is the same as once
        plain = [json.dumps({k: v for k, v in x.items() if k != "id"})
                 for x in _PROP_ENTITIES + lines if x["op"] != "retract"]
        before = _state(once)
        r3 = once.import_jsonl(plain)
        assert r3.ok
        after = _state(once)
        r4 = once.import_jsonl(plain)
        assert (r4.statements, r4.unchanged) == (0, len(plain)) and _state(once) == after
        assert before[3] + r3.statements == after[3]
    finally:
        once.close()
        twice.close()
    for store in at:
        if isinstance(store, Path):
            shutil.rmtree(store)


# the pure view with cites ----------------------------------------------------------------------------

@st.composite
def _with_cites(draw: st.DrawFn) -> tuple[list[Statement], list[Statement]]:
    stmts = draw(pure_subject_statements())
    asserts = [s for s in stmts if s.op == "assert"]
    cites: list[Statement] = []
    for k in range(draw(st.integers(0, 6)) if asserts else 0):
        target = draw(st.sampled_from(asserts))
        rec = draw(st.integers(0, HORIZON))
        retracted = draw(st.one_of(st.none(), st.integers(rec, HORIZON)))
        cites.append(Statement(1000 + k, "cite", target.subject, target.predicate, None, "", target.id, None, rec,
                               retracted, None, tuple(draw(st.lists(st.sampled_from(SOURCES), min_size=1,
                                                                    max_size=2, unique=True)))))
    return stmts, cites


@settings(max_examples=300, deadline=None)
@given(case=_with_cites(), known_at=known_ats, data=st.data())
def test_cites_change_only_the_sources_of_their_assertions_intervals(
        case: tuple[list[Statement], list[Statement]], known_at: int | None, data: st.DataObject) -> None:
    stmts, cites = case
    without = view_for_subject(stmts, REGISTRY, known_at)
    mixed = data.draw(st.permutations(stmts + cites), label="order")
    with_cites = view_for_subject(mixed, REGISTRY, known_at)
    assert [iv._replace(sources=()) for iv in with_cites] == [iv._replace(sources=()) for iv in without]
    for a, b in zip(without, with_cites, strict=True):
        expected = list(a.sources)
        for c in sorted(cites):
            if c.valid_from in a.assertions and c.visible_at(known_at):
                expected += [x for x in c.sources if x not in expected]
        assert list(b.sources) == expected
