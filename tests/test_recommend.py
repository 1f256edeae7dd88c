"""recommend and path (SPEC 9): every step a real edge citing a visible assertion, scoring as documented."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, one_clear_line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.model.times import parse_instant
from graphmem.retrieval.recommend import STATUS_PENALTY

# -- a small random graph, written with explicit past record times ----------------------------------

PROJECTS = ("Orchid", "Birch", "Cedar", "Maple")
TOOLS = ("Alpha", "Beta", "Gamma")
CONCEPTS = ("Graph database", "Vector search")
REF = {n: f"{t.lower()}:{n.lower().replace(' ', '-')}" for t, ns in
       (("Project", PROJECTS), ("Tool", TOOLS), ("Concept", CONCEPTS)) for n in ns}
P, T, C = ([REF[n] for n in ns] for ns in (PROJECTS, TOOLS, CONCEPTS))
CHOICES: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = [
    (tuple(P), "uses", tuple(T)), (tuple(P), "relates_to", tuple(C)), (tuple(T), "relates_to", tuple(C)),
    (tuple(P), "depends_on", tuple(P)), (tuple(T), "uses", tuple(T)), (tuple(P), "status", ("active", "done", "paused")),
]
IDEAS = ("Alpha", "graph databases", "beta and vector search", "Gamma for graph database work", "orchid",
         "vector searches with Alpha")
LAST_DAY = 14


def _at(day: int, hour: int = 12) -> str:
    return f"2025-01-{day:02d}T{hour:02d}:00:00Z"


def _entity_lines() -> list[dict[str, Any]]:
    return [{"op": "entity", "type": t, "name": n, "description": f"The {n} {t.lower()}."}
            for t, ns in (("Project", PROJECTS), ("Tool", TOOLS), ("Concept", CONCEPTS)) for n in ns]


@st.composite
def graph_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Asserts (some with an end of validity), ends and retractions, recorded on past days in order."""
    lines: list[dict[str, Any]] = []
    day = 1
    live: list[int] = []
    for _ in range(draw(st.integers(3, 22))):
        day = min(LAST_DAY, day + draw(st.integers(0, 1)))
        kind = draw(st.sampled_from(("assert",) * 5 + ("end", "retract")))
        if kind == "retract" and live:
            i = draw(st.sampled_from(live))
            live.remove(i)
            lines.append({"op": "retract", "fact": f"fact:{i}", "reason": "wrong", "at": _at(day, 18)})
            continue
        subjects, pred, objects = draw(st.sampled_from(CHOICES))
        subject = draw(st.sampled_from(subjects))
        obj = draw(st.sampled_from(objects))
        if kind == "end":
            lines.append({"op": "end", "subject": subject, "predicate": pred, "object": obj,
                          "at": _at(draw(st.integers(1, LAST_DAY)), 0), "recorded_at": _at(day)})
        else:
            vf = draw(st.integers(1, LAST_DAY))
            line = {"op": "assert", "subject": subject, "predicate": pred, "object": obj,
                    "valid_from": _at(vf, 0), "recorded_at": _at(day)}
            if draw(st.integers(0, 3)) == 0:
                line["valid_to"] = _at(min(vf + draw(st.integers(1, 5)), LAST_DAY + 1), 0)
            lines.append(line)
        live.append(sum(1 for x in lines if x["op"] != "retract"))
    return lines


def _store(tmp: Path, lines: list[dict[str, Any]]) -> graphmem.Memory:
    m = graphmem.open(tmp, create=True)
    report = m.import_jsonl([json.dumps(x) for x in _entity_lines() + lines], strict=True)
    assert report.ok, report.errors
    return m


def _check_paths(m: graphmem.Memory, doc: dict[str, Any], as_of: str, known_at: str | None) -> None:
    """Every step: an edge of the graph at as_of (as known at known_at), citing a visible, unretracted
    assertion of that edge whose own interval contains as_of; paths run from a seed to their project."""
    a = parse_instant(as_of)
    k = parse_instant(known_at) if known_at else None
    seeds = {s["ref"] for s in doc["seeds"]}
    now_graph = m.graph(as_of) if known_at is None else None
    for r in doc["results"]:
        assert r["paths"], f"{r['project']['ref']} returned without a path"
        for p in r["paths"]:
            steps = p["steps"]
            assert p["seed"] in seeds
            if not steps:  # the idea names or describes the project itself
                assert p["seed"] == r["project"]["ref"] and p["line"].endswith(f"-> {p['seed']}")
                continue
            assert steps[0]["from"] == p["seed"]
            assert steps[-1]["to"] == r["project"]["ref"]
            for s1, s2 in zip(steps, steps[1:], strict=False):
                assert s1["to"] == s2["from"]
            for s in steps:
                _check_step(m, s, as_of, known_at, a, k, now_graph)


def _check_step(m: graphmem.Memory, s: dict[str, Any], as_of: str, known_at: str | None, a: int, k: int | None,
                now_graph: Any) -> None:
    subject, obj = (s["from"], s["to"]) if s["direction"] == "forward" else (s["to"], s["from"])
    held = m.current(subject, as_of=as_of, known_at=known_at).to_dict()["facts"]
    preds = {f["predicate"] for f in held if f["object"].get("ref") == obj}
    edge_preds = {p for p in preds if m.registry.predicates[p].edge == s["edge"]}
    assert edge_preds, f"{subject} -{s['edge']}-> {obj} does not hold at {as_of} known at {known_at}"
    if now_graph is not None:
        assert any(d["label"] == s["edge"] for d in now_graph.get_edge_data(subject, obj, default={}).values())
    fact = m.store.statement(int(s["fact"].split(":")[1]))
    assert fact is not None and fact.op == "assert"
    assert (fact.subject, fact.object) == (subject, obj) and fact.predicate in edge_preds
    assert fact.visible_at(k), f"{s['fact']} is not visible or is retracted at {known_at}"
    assert fact.valid_from <= a and (fact.valid_to is None or fact.valid_to > a)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=graph_histories(), idea=st.sampled_from(IDEAS), as_day=st.integers(1, LAST_DAY + 1),
       known_day=st.one_of(st.none(), st.integers(1, LAST_DAY + 1)))
def test_paths_are_real_cited_and_repeatable(new_store: Callable[[str], Path], lines: list[dict[str, Any]],
                                             idea: str, as_day: int, known_day: int | None) -> None:
    as_of = _at(as_day, 6)
    known_at = _at(known_day, 20) if known_day is not None else None
    with _store(new_store(f"rec-{uuid.uuid4().hex[:8]}"), lines) as m:  # a new store per example
        kw: dict[str, Any] = {"as_of": as_of, "known_at": known_at or "2099-01-01", "top": 100, "max_hops": 3}
        doc = m.recommend(idea, **kw).to_dict()
        _check_paths(m, doc, as_of, known_at)
        assert json.dumps(m.recommend(idea, **kw).to_dict()) == json.dumps(doc)
        # every project next to a seed at as_of (as known now) is found; nothing else without a path
        if known_at is None:
            g = m.graph(as_of)
            seeds = {s["ref"] for s in doc["seeds"]}
            near = {n for s in seeds if s in g for n in (*g.successors(s), *g.predecessors(s))
                    if n.startswith("project:")}
            assert near <= {r["project"]["ref"] for r in doc["results"]}
        # the same pairs by path: each shortest path is real too
        if doc["results"]:
            best = doc["results"][0]["paths"][0]
            src, dst = best["seed"], doc["results"][0]["project"]["ref"]
            if src != dst:
                pdoc = m.paths(src, dst, as_of=as_of, known_at=known_at or "2099-01-01").to_dict()
                assert pdoc["paths"], "recommend found a path that path does not"
                assert pdoc["hops"] <= len(best["steps"])
                for p in pdoc["paths"]:
                    assert p["steps"][0]["from"] == src and p["steps"][-1]["to"] == dst
                    for s in p["steps"]:
                        _check_step(m, s, as_of, known_at, parse_instant(as_of),
                                    parse_instant(known_at) if known_at else None, None)


# -- examples -----------------------------------------------------------------------------------------

@pytest.fixture
def lab(mem: graphmem.Memory) -> graphmem.Memory:
    """Projects around two tools and a concept; Ledger moved from Oracle to Kuzu on 2025-06-01."""
    for t, n, d in (("Project", "Ledger", "Accounting service."), ("Project", "Atlas", "Knowledge graph."),
                    ("Project", "Beacon", "Search front end."), ("Project", "Ferry", "Sync client."),
                    ("Tool", "Kuzu", "Embedded graph database."), ("Tool", "Oracle", "Relational database."),
                    ("Tool", "Tantivy", "Search library."), ("Concept", "Vector search", "Nearest neighbours."),
                    ("Concept", "Graph database", "Databases of nodes and edges.")):
        mem.add_entity(t, n, description=d)
    mem.assert_("ledger", "uses", "oracle", valid_from="2024-01-01")
    mem.end("ledger", "uses", "oracle", at="2025-06-01")
    mem.assert_("ledger", "uses", "kuzu", valid_from="2025-06-01")
    mem.assert_("atlas", "uses", "kuzu", valid_from="2024-01-01")
    mem.assert_("kuzu", "relates to", "vector search", valid_from="2024-01-01")
    mem.assert_("beacon", "uses", "tantivy", valid_from="2024-01-01")
    mem.assert_("ferry", "uses", "tantivy", valid_from="2024-01-01")
    return mem


def _refs(doc: dict[str, Any]) -> list[str]:
    return [r["project"]["ref"] for r in doc["results"]]


def test_two_hops_idea_reaches_project_through_a_tool(lab: graphmem.Memory) -> None:
    doc = lab.recommend("vector search").to_dict()
    assert doc["seeds"][0]["ref"] == "concept:vector-search" and doc["seeds"][0]["match"] == "name"
    assert _refs(doc) == ["project:atlas", "project:ledger"]
    best = doc["results"][0]["paths"][0]
    assert best["line"] == 'idea "vector search" -> concept:vector-search <-RELATES_TO- tool:kuzu <-USES- project:atlas'
    assert [s["direction"] for s in best["steps"]] == ["backward", "backward"]
    assert all(s["fact"].startswith("fact:") for s in best["steps"])
    _check_paths(lab, doc, doc["as_of"], None)


def test_as_of_before_migration_gives_the_old_tools_projects(lab: graphmem.Memory) -> None:
    assert _refs(lab.recommend("Oracle", as_of="2025-03-01").to_dict()) == ["project:ledger"]
    after = lab.recommend("Oracle", as_of="2025-09-01").to_dict()
    assert after["results"] == [] and "no project" in after["message"]
    assert "project:ledger" in _refs(lab.recommend("Kuzu", as_of="2025-09-01").to_dict())
    assert _refs(lab.recommend("Kuzu", as_of="2025-03-01").to_dict()) == ["project:atlas"]


def test_status_penalty_ranks_down_and_says_why(lab: graphmem.Memory) -> None:
    base = {r["project"]["ref"]: r for r in lab.recommend("Tantivy").to_dict()["results"]}
    assert base["project:beacon"]["score"] == base["project:ferry"]["score"]
    lab.assert_("ferry", "status", "done")
    doc = lab.recommend("Tantivy").to_dict()
    assert _refs(doc) == ["project:beacon", "project:ferry"]
    ferry = doc["results"][1]
    assert ferry["status"] == "done" and ferry["penalty"]["reason"] == "status is done at as_of"
    assert ferry["score"] == pytest.approx(STATUS_PENALTY["done"] * ferry["raw_score"], abs=2e-6)
    assert ferry["raw_score"] == pytest.approx(base["project:ferry"]["raw_score"], abs=2e-6)


def test_hub_damping_a_tool_many_projects_use_says_less(lab: graphmem.Memory) -> None:
    lab.add_entity("Concept", "Search")
    lab.assert_("tantivy", "relates to", "search")
    lab.assert_("kuzu", "relates to", "search")
    doc = lab.recommend("search").to_dict()
    by = {r["project"]["ref"]: r["score"] for r in doc["results"]}
    # Tantivy serves two projects, Kuzu two as well: equal; add a third to Tantivy and its projects drop
    lab.add_entity("Project", "Gull")
    lab.assert_("gull", "uses", "tantivy")
    after = {r["project"]["ref"]: r["score"] for r in lab.recommend("search").to_dict()["results"]}
    assert after["project:beacon"] < by["project:beacon"]
    assert after["project:atlas"] == pytest.approx(by["project:atlas"], abs=2e-6)


def test_several_paths_add_up_and_say_which_carried_the_score(lab: graphmem.Memory) -> None:
    lab.assert_("atlas", "relates to", "vector search")
    doc = lab.recommend("vector search", paths=5).to_dict()
    atlas = doc["results"][0]
    assert atlas["project"]["ref"] == "project:atlas" and atlas["paths_counted"] == 2
    assert atlas["raw_score"] == pytest.approx(sum(p["contribution"] for p in atlas["paths"]), abs=2e-6)
    assert atlas["paths"][0]["contribution"] == pytest.approx(atlas["paths"][0]["weight"], abs=2e-6)
    assert atlas["paths"][1]["contribution"] == pytest.approx(atlas["paths"][1]["weight"] * 0.5, abs=2e-6)
    assert atlas["shown_share"] == pytest.approx(1.0, abs=2e-6)


def test_a_project_the_idea_names_is_found_by_a_path_of_no_steps(lab: graphmem.Memory) -> None:
    doc = lab.recommend("Ledger and vector search").to_dict()
    ledger = next(r for r in doc["results"] if r["project"]["ref"] == "project:ledger")
    assert ledger["rank"] == 1
    named = ledger["paths"][0]
    assert named["steps"] == [] and named["line"] == 'idea "Ledger" -> project:ledger' and named["weight"] == 1.0


def test_retracted_edge_never_appears(lab: graphmem.Memory) -> None:
    fact = lab.assert_("beacon", "uses", "kuzu").to_dict()["created"][0]
    assert "project:beacon" in _refs(lab.recommend("Kuzu").to_dict())
    lab.retract(fact, "wrong")
    assert "project:beacon" not in _refs(lab.recommend("Kuzu").to_dict())
    assert lab.paths("beacon", "kuzu").to_dict()["paths"] == []


def test_lemmas_reach_another_inflection(atlas: graphmem.Memory) -> None:
    seeds = atlas.link("graph databases for our team")
    assert [(s.ref, s.match, s.matched) for s in seeds][:1] == [("concept:graph-database", "lemma", "graph databases")]


def test_known_at_sees_what_was_recorded_then(lab: graphmem.Memory, store_path: Path) -> None:
    doc = lab.recommend("Kuzu", known_at="2020-01-01").to_dict()
    assert doc["results"] == [] and doc["known_at"] == "2020-01-01T00:00:00Z"


@pytest.mark.parametrize("idea", ['"Kuzu" AND (vector OR search) NOT *', "Kùzu — 图数据库 für Graphen ✓",
                                  "kuzu' OR 1=1; DROP TABLE Project; --", "x" * 3 + " Kuzu " + "lorem " * 1660])
def test_odd_ideas_get_an_answer(lab: graphmem.Memory, idea: str) -> None:
    doc = lab.recommend(idea).to_dict()
    assert doc["schema"] == "graphmem.recommend.v1"
    assert doc["results"] or doc["message"]


def test_stop_words_only_idea_says_nothing_matched(lab: graphmem.Memory, store_path: Path) -> None:
    lab.close()
    r = cli(store_path, "recommend", "the and of which", "--json")
    assert r.code == 0 and r.json()["results"] == [] and "no entity" in r.json()["message"]


@pytest.mark.parametrize("args,names", [
    (["recommend", "x" * 100_001], ["100,001"]), (["recommend", "!!! ???"], ["!!! ???"]),
    (["recommend", "kuzu", "--top", "0"], ["top", "0"]), (["recommend", "kuzu", "--max-hops", "9"], ["max hops", "9"]),
    (["recommend", "kuzu", "--as-of", "someday"], ["someday"]), (["path", "kuzu", "nowhere"], ["nowhere"]),
    (["path", "kuzu", "kuzu"], ["tool:kuzu"]), (["path", "kuzu", "atlas", "--max-hops", "0"], ["max hops", "0"]),
])
def test_bad_input_is_one_line_exit_2(lab: graphmem.Memory, store_path: Path, args: list[str], names: list[str]) -> None:
    lab.close()
    r = cli(store_path, *args)
    one_clear_line(r, 2, names, expects=("expected",) if args[0] == "recommend" or "hops" in names else ())


def test_path_ambiguous_names_candidates(lab: graphmem.Memory, store_path: Path) -> None:
    lab.add_entity("Concept", "Atlas")
    lab.close()
    line = one_clear_line(cli(store_path, "path", "Atlas", "kuzu"), 2, ["project:atlas", "concept:atlas"],
                          expects=("ambiguous",))
    assert "candidates" in line


def test_path_cli_finds_and_says_when_none(lab: graphmem.Memory, store_path: Path) -> None:
    lab.close()
    r = cli(store_path, "path", "ledger", "atlas", "--json")
    assert r.code == 0
    doc = r.json()
    assert doc["schema"] == "graphmem.path.v1" and doc["hops"] == 2
    assert doc["paths"][0]["line"] == "project:ledger -USES-> tool:kuzu <-USES- project:atlas"
    none = cli(store_path, "path", "beacon", "atlas", "--as-of", "2025-01-01")
    assert none.code == 0 and "no path between project:beacon and project:atlas" in none.out
    past = cli(store_path, "path", "ledger", "oracle", "--as-of", "2025-03-01", "--json").json()
    assert past["paths"][0]["steps"][0]["valid_to"] == "2025-06-01T00:00:00Z"
    assert cli(store_path, "path", "ledger", "oracle", "--json").json()["paths"] == []


def test_recommend_cli_table_and_json(lab: graphmem.Memory, store_path: Path) -> None:
    lab.close()
    r = cli(store_path, "recommend", "vector search", "--top", "1")
    assert r.code == 0
    assert "project:atlas" in r.out and "<-USES- project:atlas" in r.out and "project:ledger" not in r.out
    doc = cli(store_path, "recommend", "vector search", "--json").json()
    assert doc["schema"] == "graphmem.recommend.v1" and doc["seeds"][0]["span"] == [0, 13]
    assert [r["rank"] for r in doc["results"]] == [1, 2]
