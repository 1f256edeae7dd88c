"""recommend at depth (issue 20): ties settled by evidence, an uncapped text lane, type words as
modifiers, and a hub's fan-out bounded by evidence. Small stores built here, no shared data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphmem
from graphmem.retrieval.linking import TEXT_FLOOR, TEXT_SEEDS, idea_terms
from graphmem.retrieval.recommend import HUB_FANOUT


def _load(m: graphmem.Memory, lines: list[dict[str, object]]) -> None:
    report = m.import_jsonl([json.dumps(x) for x in lines], strict=True)
    assert report.ok, report.errors


def _refs(m: graphmem.Memory, idea: str, top: int = 10) -> list[str]:
    return [r.project.ref for r in m.recommend(idea, top=top).results]


# -- ties ----------------------------------------------------------------------------------------------

def test_equal_scores_go_to_the_project_whose_own_text_matches_the_idea(mem: graphmem.Memory) -> None:
    # both projects reach the concept by one RELATES_TO edge: equal graph scores; by ref "able" would come first
    _load(mem, [{"op": "entity", "type": "Concept", "name": "Vector search", "description": "Nearest neighbours."},
                {"op": "entity", "type": "Project", "name": "Able", "description": "Accounting ledger."},
                {"op": "entity", "type": "Project", "name": "Zed", "description": "A vector search engine."},
                {"op": "assert", "subject": "project:able", "predicate": "relates_to", "object": "concept:vector-search"},
                {"op": "assert", "subject": "project:zed", "predicate": "relates_to", "object": "concept:vector-search"}])
    doc = mem.recommend("vector search").to_dict()
    assert [r["project"]["ref"] for r in doc["results"]] == ["project:zed", "project:able"]
    assert doc["results"][0]["score"] == doc["results"][1]["score"]


def test_equal_scores_and_text_go_to_the_project_with_more_independent_paths(mem: graphmem.Memory) -> None:
    # Aaron: two paths through one tool (USES and DEPENDS_ON it), Zora: the same two edge types through two tools.
    # From one seed the paths weigh alike, so the scores tie; Zora's paths share no node: more independent evidence.
    lines: list[dict[str, object]] = [
        {"op": "entity", "type": "Concept", "name": "Stream processing", "description": "Events in motion."},
        *({"op": "entity", "type": "Tool", "name": n, "description": "A library."} for n in ("Kappa", "Lambda", "Mu")),
        *({"op": "entity", "type": "Project", "name": n, "description": "An app."} for n in ("Aaron", "Zora")),
        *({"op": "assert", "subject": f"tool:{t}", "predicate": "relates_to", "object": "concept:stream-processing"}
          for t in ("kappa", "lambda", "mu")),
        {"op": "assert", "subject": "project:aaron", "predicate": "uses", "object": "tool:kappa"},
        {"op": "assert", "subject": "project:aaron", "predicate": "depends_on", "object": "tool:kappa"},
        {"op": "assert", "subject": "project:zora", "predicate": "uses", "object": "tool:lambda"},
        {"op": "assert", "subject": "project:zora", "predicate": "depends_on", "object": "tool:mu"},
        # one more user each, so every tool serves two projects (equal hub damping)
        *({"op": "entity", "type": "Project", "name": n, "description": "Other."}
          for n in ("Other zero", "Other one", "Other two")),
        {"op": "assert", "subject": "project:other-zero", "predicate": "uses", "object": "tool:kappa"},
        {"op": "assert", "subject": "project:other-one", "predicate": "uses", "object": "tool:lambda"},
        {"op": "assert", "subject": "project:other-two", "predicate": "uses", "object": "tool:mu"},
    ]
    _load(mem, lines)
    doc = mem.recommend("stream processing").to_dict()
    by = {r["project"]["ref"]: r for r in doc["results"]}
    assert by["project:aaron"]["score"] == by["project:zora"]["score"]
    assert by["project:aaron"]["paths_counted"] == by["project:zora"]["paths_counted"] == 2
    refs = [r["project"]["ref"] for r in doc["results"]]
    assert refs.index("project:zora") < refs.index("project:aaron")


# -- type words ------------------------------------------------------------------------------------------

def test_a_type_word_is_kept_only_as_a_modifier(mem: graphmem.Memory) -> None:
    o = mem.ontology
    assert idea_terms(o, "project management for a small team") == ["project", "management", "small", "team"]
    assert idea_terms(o, "projects using kuzu") == ["kuzu"]  # plural: never a modifier
    assert idea_terms(o, "a tool for parsing") == ["parsing"]  # followed by a stop word: stands alone
    assert idea_terms(o, "the project. management") == ["management"]  # not directly followed
    assert idea_terms(o, "tool-chain upgrades") == ["tool", "chain", "upgrades"]
    assert idea_terms(o, "project tool") == []  # a type word before a type word: both stand alone


def test_project_management_links_through_its_type_word(mem: graphmem.Memory) -> None:
    mem.add_entity("Tool", "Stopwatch", description="Time tracking.")
    mem.add_entity("Tool", "Kanban board", description="Project tracking for teams.")
    seeds = mem.link("project tracking", records=False)
    assert [s.ref for s in seeds][:1] == ["tool:kanban-board"]
    assert "project" in seeds[0].matched.split()
    # standing alone, the type word still says nothing: only "tracking" is matched
    alone = mem.link("a project for tracking", records=False)
    assert {s.ref for s in alone} == {"tool:kanban-board", "tool:stopwatch"}
    assert {s.matched for s in alone} == {"tracking"}


# -- the text lane -----------------------------------------------------------------------------------------

def test_text_lane_adds_every_entity_within_the_floor_not_five(mem: graphmem.Memory) -> None:
    n = 12
    lines: list[dict[str, object]] = [{"op": "entity", "type": "Tool", "name": f"Store {i}",
                                       "description": "An embedded columnar engine."} for i in range(n)]
    lines.append({"op": "entity", "type": "Tool", "name": "Far", "description": (
        "A queue with many words about other things entirely and an engine mentioned once among them all here.")})
    _load(mem, lines)
    seeds = [s for s in mem.link("columnar engine", records=False) if s.match == "text"]
    refs = {s.ref for s in seeds}
    assert {f"tool:store-{i}" for i in range(n)} <= refs  # main capped this lane at 5
    assert all(s.weight >= 0.5 * TEXT_FLOOR - 1e-9 for s in seeds)
    assert "tool:far" not in refs  # below a quarter of the best
    assert len(seeds) <= TEXT_SEEDS


def test_text_lane_is_bounded(mem: graphmem.Memory) -> None:
    _load(mem, [{"op": "entity", "type": "Tool", "name": f"Engine {i}", "description": "A columnar engine."}
                for i in range(TEXT_SEEDS + 5)])
    seeds = [s for s in mem.link("columnar", records=False) if s.match == "text"]
    assert len(seeds) == TEXT_SEEDS


# -- hubs ------------------------------------------------------------------------------------------------

def test_a_hub_steps_only_to_projects_with_evidence(mem: graphmem.Memory) -> None:
    n = HUB_FANOUT + 15
    lines: list[dict[str, object]] = [
        {"op": "entity", "type": "Tool", "name": "Keystone", "description": "Shared platform."},
        {"op": "entity", "type": "Tool", "name": "Tessera", "description": "Tile cache."},
        *({"op": "entity", "type": "Project", "name": f"P{i:03d}", "description": "An app."} for i in range(n)),
        {"op": "entity", "type": "Project", "name": "Zulu", "description": "Realtime dashboards."},
        *({"op": "assert", "subject": f"project:p{i:03d}", "predicate": "uses", "object": "tool:keystone"}
          for i in range(n)),
        {"op": "assert", "subject": "project:zulu", "predicate": "uses", "object": "tool:keystone"},
        # the last of the hub's users also uses a second tool the idea names: evidence of its own
        {"op": "assert", "subject": f"project:p{n - 1:03d}", "predicate": "uses", "object": "tool:tessera"},
    ]
    _load(mem, lines)
    doc = mem.recommend("realtime dashboards on Keystone and Tessera", top=100).to_dict()
    refs = [r["project"]["ref"] for r in doc["results"]]
    assert refs[0] == f"project:p{n - 1:03d}"  # two tools the idea names
    assert refs[1] == "project:zulu"  # its own text matches the idea
    # of the hub's n + 1 projects: the two with evidence of their own (a second tool; a text match) and HUB_FANOUT others
    assert len(refs) == HUB_FANOUT + 2
    assert refs[2:] == sorted(refs[2:])  # the rest tie and go by ref (the same ones an unbounded walk ranks first)
    # every step still a real edge; the hub's damping still counts all its projects
    hub_path = next(p for p in doc["results"][1]["paths"] if p["steps"])
    assert hub_path["steps"][0]["to"] == "project:zulu" and hub_path["seed"] == "tool:keystone"
    assert hub_path["weight"] < 0.25


def test_a_tool_below_the_hub_bound_reaches_all_its_projects(mem: graphmem.Memory) -> None:
    n = HUB_FANOUT
    _load(mem, [{"op": "entity", "type": "Tool", "name": "Keystone", "description": "Shared platform."},
                *({"op": "entity", "type": "Project", "name": f"P{i:03d}"} for i in range(n)),
                *({"op": "assert", "subject": f"project:p{i:03d}", "predicate": "uses", "object": "tool:keystone"}
                  for i in range(n))])
    assert len(_refs(mem, "Keystone", top=100)) == n


def test_a_project_only_described_is_left_out_where_nothing_about_it_holds(mem: graphmem.Memory) -> None:
    _load(mem, [{"op": "entity", "type": "Project", "name": "Compass", "description": "Graph explorer."},
                {"op": "entity", "type": "Project", "name": "Draft", "description": "Graph notes."},
                {"op": "entity", "type": "Concept", "name": "Maps"},
                {"op": "assert", "subject": "project:compass", "predicate": "relates_to", "object": "concept:maps",
                 "valid_from": "2025-11-17"}])
    assert set(_refs(mem, "a graph explorer")) == {"project:compass", "project:draft"}
    # before Compass's first fact it is not a project yet; Draft has no dated fact at all and stays
    assert _refs(mem, "a graph explorer", top=5) and _refs_at(mem, "a graph explorer", "2025-05-01") == ["project:draft"]


def _refs_at(m: graphmem.Memory, idea: str, as_of: str) -> list[str]:
    return [r.project.ref for r in m.recommend(idea, as_of=as_of).results]


# -- the pairs of entity types with edges, kept with the store ---------------------------------------------------

def test_a_fresh_process_walks_the_edges_of_every_pair_written_since_the_store_was_opened(store_path: Path) -> None:
    """A reader asks which (edge type, from, to) pairs have fact edges (Kuzu and LadybugDB: one query of a
    ``LIMIT 1`` branch per pair, store/kuzu/graph.py): the first edge of a new pair, written after an
    earlier reader asked, is walked by a later reader, and after ``rebuild`` too."""
    m = graphmem.open(store_path, create=True)
    _load(m, [{"op": "entity", "type": "Project", "name": "Atlas", "description": "An app."},
              {"op": "entity", "type": "Tool", "name": "Quiver", "description": "A queue."},
              {"op": "entity", "type": "Concept", "name": "Vector search", "description": "Nearest neighbours."},
              {"op": "assert", "subject": "project:atlas", "predicate": "uses", "object": "tool:quiver"}])
    m.close()

    def found(idea: str) -> list[str]:
        r = graphmem.open(store_path, read_only=True)
        try:
            return _refs(r, idea)
        finally:
            r.close()

    assert found("quiver") == ["project:atlas"]
    assert found("vector search") == []
    m = graphmem.open(store_path)
    assert _refs(m, "vector search") == []  # this writer asked about the pairs before it wrote the new one
    m.assert_("project:atlas", "relates_to", "concept:vector-search")  # the first edge of its pair
    assert _refs(m, "vector search") == ["project:atlas"]
    m.close()
    assert found("vector search") == ["project:atlas"]
    m = graphmem.open(store_path)
    m.rebuild()
    m.close()
    assert found("vector search") == ["project:atlas"] and found("quiver") == ["project:atlas"]


@pytest.mark.engine("kuzu", "ladybug")
def test_a_fresh_process_reads_the_far_ends_refs_with_the_edges_and_later_reads_alike(store_path: Path) -> None:
    """A store object that knows no node's ref yet reads the far ends' refs along with the edges (the
    lookup queries return ``b.ref``) and keeps them; later walks read node ids and look the refs up.
    Both give the same edges, in both directions and with a type filter."""
    from graphmem.model.times import now_us
    m = graphmem.open(store_path, create=True)
    _load(m, [{"op": "entity", "type": "Project", "name": "Atlas"}, {"op": "entity", "type": "Project", "name": "Borealis"},
              {"op": "entity", "type": "Tool", "name": "Quiver"}, {"op": "entity", "type": "Person", "name": "Ada"},
              {"op": "assert", "subject": "project:atlas", "predicate": "uses", "object": "tool:quiver"},
              {"op": "assert", "subject": "project:borealis", "predicate": "uses", "object": "tool:quiver"},
              {"op": "assert", "subject": "project:atlas", "predicate": "owner", "object": "person:ada"}])
    # enough nodes of each type that a walk from one ref looks its edges up by key (``_LOOKUP_ROWS``)
    _load(m, [{"op": "entity", "type": kind, "name": f"{kind} {i}"} for kind in ("Project", "Tool") for i in range(3000)])
    m.close()
    refs, t = ["project:atlas", "tool:quiver"], now_us()
    m = graphmem.open(store_path, read_only=True)
    try:
        store = m.store
        assert not store._node_refs  # type: ignore[attr-defined]
        fresh = store.fact_edges_at(refs, t)  # type: ignore[attr-defined]
        learned = {ref for table in store._node_refs.values() for ref in table.values()}  # type: ignore[attr-defined]
        assert {"project:borealis", "person:ada"} <= learned
        assert store.fact_edges_at(refs, t) == fresh  # type: ignore[attr-defined]
        assert store.fact_edges_at(refs, t, "Person") == [e for e in fresh if e.dst == "person:ada"]  # type: ignore[attr-defined]
    finally:
        m.close()
    assert sorted((e.label, e.src, e.dst) for e in fresh) == [("OWNED_BY", "project:atlas", "person:ada"),
                                                            ("USES", "project:atlas", "tool:quiver"),
                                                            ("USES", "project:borealis", "tool:quiver")]
