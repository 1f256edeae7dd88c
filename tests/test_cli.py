"""The command line through Typer's CliRunner: output content, JSON shapes (SPEC 5) and exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import typer
from helpers import TEST_ENGINE, copy_demo
from typer.testing import CliRunner

import graphmem
from graphmem.cli import app
from graphmem.store import SCHEMA_VERSION
from graphmem.store.postgres.base import SCHEMA_VERSION as PG_SCHEMA_VERSION

runner = CliRunner()

ENTITY_TYPES = ["Project", "Repo", "Decision", "Concept", "Tool", "Person"]
PREDICATES = ["status", "owner", "uses", "depends_on", "blocked_by", "relates_to", "evaluates", "decides",
              "replaces", "priority", "deadline", "summary"]
SRC = "https://example.org/evidence"


class Run:
    """One CLI invocation, with stdout and stderr kept apart."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.code: int = result.exit_code
        self.out: str = result.stdout
        self.err: str = result.stderr

    def json(self) -> dict[str, Any]:
        doc = json.loads(self.out)  # the whole of stdout must be one JSON document
        assert isinstance(doc, dict)
        return doc

    def __repr__(self) -> str:
        return f"<exit {self.code} stdout={self.out[:400]!r} stderr={self.err[:400]!r}>"


def cli(store: Path | None, *args: str, as_json: bool = False, **kw: Any) -> Run:
    argv = ([] if store is None else ["--store", str(store)]) + (["--json"] if as_json else []) + list(args)
    r = runner.invoke(app, argv, **kw)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return Run(r)


def ok(store: Path | None, *args: str, as_json: bool = False, **kw: Any) -> Run:
    r = cli(store, *args, as_json=as_json, **kw)
    assert r.code == 0, r
    assert "Traceback" not in r.out + r.err
    return r


def doc(store: Path | None, *args: str, schema: str) -> dict[str, Any]:
    r = ok(store, *args, as_json=True)
    d = r.json()
    assert d["schema"] == schema
    return d


def strip_times(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in ("as_of", "known_at", "seconds")}


# fixtures ------------------------------------------------------------------------------


@pytest.fixture
def small(store_path: Path) -> Path:
    """A small store with entities only, on the run's engine (nothing holds it open)."""
    path = store_path
    m = graphmem.open(path, create=True)
    m.add_entity("Project", "Atlas", aliases=["atlas-app"], description="The knowledge graph.")
    m.add_entity("Tool", "Kuzu", description="Embedded graph database.")
    m.add_entity("Tool", "SQLite")
    m.add_entity("Tool", "Neo4j")
    m.add_entity("Concept", "Graph database")
    m.add_entity("Person", "Ada Lovelace", aliases=["Ada"])
    m.close()
    return path


@pytest.fixture
def demo_store(demo_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A private, writable copy of the demo store (a path, or a PostgreSQL run's address; nothing holds it open)."""
    return copy_demo(demo_dir, tmp_path / "demo-store", request)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def demo_ro(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory,
            request: pytest.FixtureRequest) -> Iterator[Path]:
    """A copy of the demo store shared by the read-only tests of this module."""
    yield copy_demo(demo_dir, tmp_path_factory.mktemp("demo-ro") / "store", request)


# init and entities ---------------------------------------------------------------------


def test_init_creates_store_and_is_idempotent(new_store: Callable[[str], Path]) -> None:
    store = new_store("new")
    first = ok(store, "init")
    assert TEST_ENGINE == "postgresql" or store.is_dir()  # an embedded store's folder
    assert "store ready" in first.out and "0 entities" in first.out
    assert ok(store, "entity", "add", "Project", "Atlas").out.strip() == "project:atlas"
    d = doc(store, "init", schema="graphmem.init.v1")
    assert d["entities"] == 1 and d["statements"] == 0  # init again keeps what is there
    assert d["store"] == str(store)
    assert ok(store, "init").code == 0
    assert [e["ref"] for e in doc(store, "entity", "list", schema="graphmem.entities.v1")["entities"]] == [
        "project:atlas"]


def test_entity_add_prints_ref_and_json(store_path: Path) -> None:
    store = store_path
    ok(store, "init")
    r = ok(store, "entity", "add", "Person", "Ada Lovelace", "--alias", "Ada", "--alias", "Countess",
           "--description", "First programmer.")
    assert r.out.strip() == "person:ada-lovelace"
    assert r.err == ""
    d = doc(store, "entity", "add", "tool", "  Kuzu  DB!! ", schema="graphmem.entity.v1")
    assert d["created"] == ["tool:kuzu-db"]
    assert d["entity"]["type"] == "Tool" and d["entity"]["name"] == "Kuzu DB!!"


def test_entity_show_human_and_json(small: Path) -> None:
    r = ok(small, "entity", "show", "atlas-app")  # by alias
    assert "project:atlas" in r.out and "Project" in r.out and "Atlas" in r.out
    assert "atlas-app" in r.out and "The knowledge graph." in r.out
    d = doc(small, "entity", "show", "ADA", schema="graphmem.entity.v1")
    assert d["entity"] == {"ref": "person:ada-lovelace", "type": "Person", "name": "Ada Lovelace",
                           "aliases": ["Ada"], "description": ""}
    d = doc(small, "entity", "show", "tool:kuzu", schema="graphmem.entity.v1")
    assert d["entity"]["description"] == "Embedded graph database."


def test_entity_list_filters(small: Path) -> None:
    d = doc(small, "entity", "list", schema="graphmem.entities.v1")
    refs = [e["ref"] for e in d["entities"]]
    assert set(refs) == {"project:atlas", "tool:kuzu", "tool:sqlite", "tool:neo4j", "concept:graph-database",
                         "person:ada-lovelace"}
    assert [(e["type"], e["ref"]) for e in d["entities"]] == sorted((e["type"], e["ref"]) for e in d["entities"])
    tools = doc(small, "entity", "list", "--type", "Tool", schema="graphmem.entities.v1")["entities"]
    assert [e["ref"] for e in tools] == ["tool:kuzu", "tool:neo4j", "tool:sqlite"]
    lower = doc(small, "entity", "list", "--type", "tool", schema="graphmem.entities.v1")["entities"]
    assert lower == tools
    m = doc(small, "entity", "list", "--match", "lite", schema="graphmem.entities.v1")["entities"]
    assert [e["ref"] for e in m] == ["tool:sqlite"]
    by_alias = doc(small, "entity", "list", "--match", "atlas-ap", schema="graphmem.entities.v1")["entities"]
    assert [e["ref"] for e in by_alias] == ["project:atlas"]
    both = doc(small, "entity", "list", "--type", "Project", "--match", "kuzu", schema="graphmem.entities.v1")
    assert both["entities"] == []
    human = ok(small, "entity", "list", "--type", "Tool").out
    assert "tool:kuzu" in human and "tool:sqlite" in human and "project:atlas" not in human


# writes --------------------------------------------------------------------------------


def test_assert_prints_fact_ids(small: Path) -> None:
    r = ok(small, "assert", "atlas", "uses", "kuzu", "--from", "2025-03-01", "--source", SRC)
    assert r.out.strip() == "fact:1"
    r = ok(small, "assert", "Atlas", "built on", "SQLite", "--from", "2025-01-01")  # alias of the predicate
    assert r.out.strip() == "fact:2"
    d = doc(small, "assert", "atlas", "status", "Active", "--from", "2025-01-01", "--by", "agent",
            schema="graphmem.assert.v1")
    assert d["created"] == ["fact:3"]
    f = d["fact"]
    assert f["fact"] == "fact:3" and f["subject"] == "project:atlas" and f["predicate"] == "status"
    assert f["object"] == {"kind": "literal", "value": "active"}
    assert f["valid_from"] == "2025-01-01T00:00:00Z" and f["valid_to"] is None
    assert f["asserted_by"] == "agent" and f["sources"] == []
    why = doc(small, "why", "fact:2", schema="graphmem.why.v1")
    assert why["fact"]["predicate"] == "uses"
    assert why["fact"]["object"] == {"kind": "entity", "ref": "tool:sqlite", "name": "SQLite"}


def test_end_closes_value(small: Path) -> None:
    ok(small, "assert", "atlas", "uses", "sqlite", "--from", "2025-01-01")
    ok(small, "assert", "atlas", "uses", "kuzu", "--from", "2025-03-01")
    r = ok(small, "end", "atlas", "uses", "sqlite", "--at", "2025-04-01")
    assert r.out.strip() == "fact:3"
    now = doc(small, "current", "atlas", schema="graphmem.current.v1")
    assert [f["object"]["ref"] for f in now["facts"]] == ["tool:kuzu"]
    then = doc(small, "current", "atlas", "--as-of", "2025-03-15", schema="graphmem.current.v1")
    assert sorted(f["object"]["ref"] for f in then["facts"]) == ["tool:kuzu", "tool:sqlite"]
    sqlite = [f for f in then["facts"] if f["object"]["ref"] == "tool:sqlite"][0]
    assert sqlite["valid_to"] == "2025-04-01T00:00:00Z" and sqlite["assertions"] == ["fact:1"]
    # end without an object closes every value
    d = doc(small, "end", "atlas", "uses", "--at", "2025-05-01", schema="graphmem.end.v1")
    assert d["created"] == ["fact:4"]
    assert [c["object"]["ref"] for c in d["closed"]] == ["tool:kuzu"]
    assert doc(small, "current", "atlas", schema="graphmem.current.v1")["facts"] == []


def test_retract_withdraws_but_keeps_history(small: Path) -> None:
    ok(small, "assert", "atlas", "owner", "ada", "--from", "2024-01-01", "--source", SRC)
    assert [f["object"]["ref"] for f in doc(small, "current", "atlas", schema="graphmem.current.v1")["facts"]] == [
        "person:ada-lovelace"]
    r = ok(small, "retract", "fact:1", "--reason", "wrong project")
    assert r.out.strip() == "fact:1"
    assert doc(small, "current", "atlas", schema="graphmem.current.v1")["facts"] == []
    why = doc(small, "why", "fact:1", schema="graphmem.why.v1")
    assert why["retraction"]["reason"] == "wrong project"
    assert why["fact"]["retracted_at"] == why["retraction"]["at"]
    tl = doc(small, "timeline", "atlas", schema="graphmem.timeline.v1")
    assert [e["event"] for e in tl["events"]] == ["assert", "retract"]
    assert tl["events"][1]["fact"] == "fact:1" and tl["events"][1]["recorded_at"]
    # already retracted: bad input, nothing changes
    again = cli(small, "retract", "fact:1")
    assert again.code == 2 and "already retracted" in again.err


# JSON shapes ---------------------------------------------------------------------------


def _check_fact_shape(f: dict[str, Any]) -> None:
    assert {"predicate", "object", "valid_from", "valid_to", "assertions", "sources", "conflicts"} <= f.keys()
    assert f["object"]["kind"] in ("entity", "literal")
    if f["object"]["kind"] == "entity":
        assert {"ref", "name"} <= f["object"].keys()
    else:
        assert "value" in f["object"]
    assert f["valid_from"].endswith("Z")
    assert f["valid_to"] is None or f["valid_to"].endswith("Z")
    assert f["assertions"] and all(a.startswith("fact:") for a in f["assertions"])
    assert isinstance(f["sources"], list) and isinstance(f["conflicts"], list)


def test_current_json_shape(demo_ro: Path) -> None:
    d = doc(demo_ro, "current", "atlas", schema="graphmem.current.v1")
    assert d["subject"] == {"ref": "project:atlas", "type": "Project", "name": "Atlas"}
    assert d["as_of"].endswith("Z") and d["known_at"].endswith("Z")
    for f in d["facts"]:
        _check_fact_shape(f)
        assert f["valid_to"] is None  # holding now
    by_pred = {(f["predicate"], f["object"].get("ref", f["object"].get("value"))): f for f in d["facts"]}
    kuzu = by_pred[("uses", "tool:kuzu")]
    assert kuzu["object"] == {"kind": "entity", "ref": "tool:kuzu", "name": "Kuzu"}
    assert kuzu["assertions"] == ["fact:100"] and kuzu["sources"] == ["https://git.example.org/atlas/pull/52", "rec:18"]
    assert by_pred[("status", "active")]["object"] == {"kind": "literal", "value": "active"}
    assert ("uses", "tool:neo4j") not in by_pred


def test_current_as_of_and_known_at(demo_ro: Path) -> None:
    then = doc(demo_ro, "current", "atlas", "--as-of", "2025-06-01", schema="graphmem.current.v1")
    assert then["as_of"] == "2025-06-01T00:00:00Z"
    uses = {f["object"]["ref"] for f in then["facts"] if f["predicate"] == "uses"}
    assert uses == {"tool:neo4j", "repo:graph-core"}
    status = [f["object"]["value"] for f in then["facts"] if f["predicate"] == "status"]
    assert status == ["active"]

    known_then = doc(demo_ro, "current", "atlas", "--predicate", "owner", "--as-of", "2025-09-05",
                     "--known-at", "2025-09-05", schema="graphmem.current.v1")
    assert known_then["known_at"] == "2025-09-05T00:00:00Z"
    assert [(f["object"]["ref"], f["assertions"]) for f in known_then["facts"]] == [
        ("person:tomas-ortega", ["fact:120"])]
    known_now = doc(demo_ro, "current", "atlas", "--predicate", "owner", "--as-of", "2025-09-05",
                    schema="graphmem.current.v1")
    assert [(f["object"]["ref"], f["assertions"]) for f in known_now["facts"]] == [
        ("person:maya-chen", ["fact:2"])]
    # --known-at alone: as_of is still now (SPEC 4: "Defaults: A = K = now"), what we believed then about now
    only_k = doc(demo_ro, "current", "atlas", "-p", "owner", "--known-at", "2025-09-05", schema="graphmem.current.v1")
    assert only_k["known_at"] == "2025-09-05T00:00:00Z" and only_k["as_of"] > "2026-01-01"
    explicit = doc(demo_ro, "current", "atlas", "-p", "owner", "--known-at", "2025-09-05", "--as-of", only_k["as_of"],
                   schema="graphmem.current.v1")
    assert only_k["facts"] == explicit["facts"]
    assert [f["object"]["ref"] for f in only_k["facts"]] == ["person:tomas-ortega"]  # open-ended, known then
    # before fact:120 was recorded
    earlier = doc(demo_ro, "current", "atlas", "-p", "owner", "--as-of", "2025-09-05", "--known-at", "2025-08-01",
                  schema="graphmem.current.v1")
    assert [f["object"]["ref"] for f in earlier["facts"]] == ["person:maya-chen"]
    human = ok(demo_ro, "current", "atlas", "--predicate", "owner", "--as-of", "2025-09-05",
               "--known-at", "2025-09-05").out
    assert "person:tomas-ortega" in human and "fact:120" in human and "maya" not in human


def test_timeline_json_order_and_events(small: Path) -> None:
    ok(small, "assert", "atlas", "uses", "sqlite", "--from", "2025-01-01", "-s", SRC)
    ok(small, "assert", "atlas", "uses", "kuzu", "--from", "2025-03-01", "-s", SRC)
    ok(small, "end", "atlas", "uses", "sqlite", "--at", "2025-04-01")
    ok(small, "assert", "atlas", "status", "paused", "--from", "2025-06-01", "-s", SRC)
    ok(small, "assert", "atlas", "status", "active", "--from", "2025-01-01", "-s", SRC)
    ok(small, "assert", "atlas", "priority", "p1", "--from", "2025-02-01")
    ok(small, "retract", "fact:6")
    d = doc(small, "timeline", "atlas", schema="graphmem.timeline.v1")
    assert d["subject"] == {"ref": "project:atlas", "type": "Project", "name": "Atlas"}
    for iv in d["intervals"]:
        _check_fact_shape(iv)
    got = [(iv["predicate"], iv["object"].get("ref") or iv["object"]["value"], iv["valid_from"][:10],
            (iv["valid_to"] or "")[:10], iv["assertions"]) for iv in d["intervals"]]
    assert got == [
        ("status", "active", "2025-01-01", "2025-06-01", ["fact:5"]),
        ("status", "paused", "2025-06-01", "", ["fact:4"]),
        ("uses", "tool:sqlite", "2025-01-01", "2025-04-01", ["fact:1"]),
        ("uses", "tool:kuzu", "2025-03-01", "", ["fact:2"]),
    ]
    events = d["events"]
    assert [(e["event"], e["fact"]) for e in events] == [
        ("assert", "fact:1"), ("assert", "fact:2"), ("end", "fact:3"), ("assert", "fact:4"),
        ("assert", "fact:5"), ("assert", "fact:6"), ("retract", "fact:6")]
    assert all(e["recorded_at"] for e in events)
    assert [e["recorded_at"] for e in events] == sorted(e["recorded_at"] for e in events)
    only_uses = doc(small, "timeline", "atlas", "--predicate", "uses", schema="graphmem.timeline.v1")
    assert {iv["predicate"] for iv in only_uses["intervals"]} == {"uses"}
    assert [e["fact"] for e in only_uses["events"]] == ["fact:1", "fact:2", "fact:3"]


def test_timeline_demo_ordered_by_predicate_then_start(demo_ro: Path) -> None:
    d = doc(demo_ro, "timeline", "atlas", schema="graphmem.timeline.v1")
    keys = [(iv["predicate"], iv["valid_from"]) for iv in d["intervals"]]
    assert keys == sorted(keys) and len(keys) > 20
    # past intervals are included, e.g. the Neo4j period
    neo = [iv for iv in d["intervals"] if iv["object"].get("ref") == "tool:neo4j" and iv["predicate"] == "uses"]
    assert [(iv["valid_from"], iv["valid_to"]) for iv in neo] == [("2025-03-03T00:00:00Z", "2025-07-14T00:00:00Z")]
    kinds = {e["event"] for e in d["events"]}
    assert kinds == {"assert", "end", "retract"}
    # as known before the retraction, fact:120 is an interval of owner
    before = doc(demo_ro, "timeline", "atlas", "-p", "owner", "--known-at", "2025-09-05",
                 schema="graphmem.timeline.v1")
    assert [iv["assertions"] for iv in before["intervals"]] == [["fact:2"], ["fact:120"]]
    assert "retract" not in {e["event"] for e in before["events"]}


def test_facts_json(demo_ro: Path) -> None:
    d = doc(demo_ro, "facts", "--predicate", "uses", "--object", "kuzu", schema="graphmem.facts.v1")
    assert [f["subject"]["ref"] for f in d["facts"]] == ["project:atlas", "project:compass", "repo:graph-core"]
    for f in d["facts"]:
        _check_fact_shape(f)
        assert f["predicate"] == "uses" and f["object"]["ref"] == "tool:kuzu"
        assert set(f["subject"]) == {"ref", "type", "name"}
    atlas = d["facts"][0]
    assert atlas["subject"] == {"ref": "project:atlas", "type": "Project", "name": "Atlas"}
    assert atlas["assertions"] == ["fact:100"] and atlas["sources"] == ["https://git.example.org/atlas/pull/52", "rec:18"]
    early = doc(demo_ro, "facts", "--predicate", "uses", "--object", "kuzu", "--as-of", "2025-06-01",
                schema="graphmem.facts.v1")
    assert early["facts"] == []
    neo = doc(demo_ro, "facts", "-p", "uses", "-o", "neo4j", "--as-of", "2025-06-01", schema="graphmem.facts.v1")
    assert "project:atlas" in [f["subject"]["ref"] for f in neo["facts"]]
    active = doc(demo_ro, "facts", "--predicate", "status", "--object", "active", "--subject-type", "Project",
                 schema="graphmem.facts.v1")
    assert [f["subject"]["ref"] for f in active["facts"]] == ["project:atlas", "project:compass", "project:tidewater"]
    assert all(f["object"] == {"kind": "literal", "value": "active"} for f in active["facts"])
    tools = doc(demo_ro, "facts", "--subject-type", "Tool", schema="graphmem.facts.v1")
    assert tools["facts"] and all(f["subject"]["type"] == "Tool" for f in tools["facts"])


def test_why_json(demo_ro: Path) -> None:
    d = doc(demo_ro, "why", "fact:120", schema="graphmem.why.v1")
    assert d["fact"]["fact"] == "fact:120" and d["fact"]["predicate"] == "owner"
    assert d["fact"]["object"]["ref"] == "person:tomas-ortega"
    assert d["subject"] == {"ref": "project:atlas", "type": "Project", "name": "Atlas"}
    assert d["sources"] == [{"ref": "https://chat.example.org/eng-leads/p/220", "kind": "uri",
                             "attached_at": d["fact"]["recorded_at"], "cite": None}]
    assert d["retraction"]["at"] == "2025-09-09T08:40:00Z" and "wrong project" in d["retraction"]["reason"]
    assert d["in_view"] == []
    # a superseded status: fact:33 (active) was superseded by fact:129 (paused)
    s = doc(demo_ro, "why", "fact:33", schema="graphmem.why.v1")
    assert "fact:129" in s["superseded_by"] and "fact:10" in s["supersedes"]
    assert s["retraction"] is None
    # an ended one: fact:35 (uses neo4j) ended by fact:99
    e = doc(demo_ro, "why", "fact:35", schema="graphmem.why.v1")
    assert e["ended_by"] == ["fact:99"]
    # the compass priority conflict
    c = doc(demo_ro, "why", "fact:167", schema="graphmem.why.v1")
    assert c["conflicts"] == ["fact:166"]
    human = ok(demo_ro, "why", "fact:120").out
    assert "fact:120" in human and "wrong project" in human


@pytest.mark.parametrize(("args", "schema"), [
    (["init"], "graphmem.init.v1"),
    (["ontology"], "graphmem.ontology.v1"),
    (["predicates"], "graphmem.predicates.v1"),
    (["entity", "list"], "graphmem.entities.v1"),
    (["entity", "show", "kuzu"], "graphmem.entity.v1"),
    (["current", "atlas"], "graphmem.current.v1"),
    (["timeline", "atlas"], "graphmem.timeline.v1"),
    (["facts"], "graphmem.facts.v1"),
    (["why", "fact:1"], "graphmem.why.v1"),
    (["lint"], "graphmem.lint.v1"),
    (["rebuild", "--check"], "graphmem.rebuild.v1"),
])
def test_json_is_exactly_one_document(demo_ro: Path, args: list[str], schema: str) -> None:
    r = cli(demo_ro, *args, as_json=True)
    assert r.code in (0, 1), r  # lint finds the demo's conflict: exit 1, still one document
    d = r.json()
    assert d["schema"] == schema
    assert r.out.strip().startswith("{") and r.out.strip().endswith("}")
    assert "\x1b[" not in r.out  # no terminal colours in JSON


def test_write_commands_json_documents(small: Path, tmp_path: Path) -> None:
    assert doc(small, "entity", "add", "Tool", "Redis", schema="graphmem.entity.v1")["created"] == ["tool:redis"]
    assert doc(small, "assert", "atlas", "uses", "redis", "--from", "2025-01-01",
               schema="graphmem.assert.v1")["created"] == ["fact:1"]
    assert doc(small, "end", "atlas", "uses", "redis", "--at", "2025-02-01",
               schema="graphmem.end.v1")["created"] == ["fact:2"]
    r = doc(small, "retract", "fact:2", schema="graphmem.retract.v1")
    assert r["created"] == ["fact:2"]
    f = tmp_path / "in.jsonl"
    f.write_text('{"op": "entity", "type": "Tool", "name": "Valkey"}\n')
    imp = doc(small, "import", str(f), schema="graphmem.import.v1")
    assert imp["ok"] and imp["written"] and imp["entities_created"] == 1 and imp["errors"] == []


# lint and rebuild ----------------------------------------------------------------------


def test_lint_clean_store_exits_0(small: Path) -> None:
    ok(small, "assert", "atlas", "uses", "kuzu", "--from", "2025-03-01", "--source", SRC)
    ok(small, "assert", "atlas", "status", "active", "--source", SRC)
    r = ok(small, "lint")
    d = doc(small, "lint", schema="graphmem.lint.v1")
    assert d["ok"] is True and d["issues"] == []
    assert d["counts"]["error"] == 0 and d["counts"]["warning"] == 0
    assert ok(small, "lint", "--fail-on", "warning").code == 0
    assert "0 errors, 0 warnings" in r.out and "2 statements" in r.out


def test_lint_conflict_exits_1(small: Path) -> None:
    ok(small, "assert", "atlas", "priority", "p1", "--from", "2025-01-01", "--source", SRC)
    ok(small, "assert", "atlas", "priority", "p2", "--from", "2025-01-01", "--source", SRC)
    r = cli(small, "lint", as_json=True)
    assert r.code == 1, r
    d = r.json()
    assert d["ok"] is False and d["counts"]["error"] == 1
    [issue] = d["issues"]
    assert issue["code"] == "single_value_conflict" and issue["severity"] == "error"
    assert issue["fact"] == "fact:2" and issue["subject"] == "project:atlas" and "fact:1" in issue["message"]
    human = cli(small, "lint")
    assert human.code == 1 and "single_value_conflict" in human.out
    # the view still answers, and says who competes
    cur = doc(small, "current", "atlas", "-p", "priority", schema="graphmem.current.v1")
    assert [(f["object"]["value"], f["assertions"], f["conflicts"]) for f in cur["facts"]] == [
        ("p2", ["fact:2"], ["fact:1"])]


def test_lint_fail_on_warning(small: Path) -> None:
    ok(small, "assert", "atlas", "uses", "kuzu", "--from", "2025-03-01")  # no source: a warning
    d = doc(small, "lint", schema="graphmem.lint.v1")
    assert d["ok"] is True and d["fail_on"] == "error"
    assert [(i["code"], i["severity"], i.get("fact")) for i in d["issues"]] == [("missing_source", "warning", "fact:1")]
    r = cli(small, "lint", "--fail-on", "warning", as_json=True)
    assert r.code == 1, r
    assert r.json()["ok"] is False and r.json()["fail_on"] == "warning"
    assert cli(small, "lint", "--fail-on", "error").code == 0


def test_lint_demo_reports_its_conflict(demo_ro: Path) -> None:
    r = cli(demo_ro, "lint", as_json=True)
    assert r.code == 1
    codes = {(i["code"], i.get("fact")) for i in r.json()["issues"] if i["severity"] == "error"}
    assert codes == {("single_value_conflict", "fact:167")}


def test_rebuild_and_check(demo_store: Path) -> None:
    before = ok(demo_store, "export").out
    c = doc(demo_store, "rebuild", "--check", schema="graphmem.rebuild.v1")
    assert c["check"] is True and c["ok"] is True and c["drift"] == []
    assert "matches" in ok(demo_store, "rebuild", "--check").out
    r = doc(demo_store, "rebuild", schema="graphmem.rebuild.v1")
    assert r["check"] is False and r["ok"] is True
    assert r["counts"]["subjects"] > 0 and r["counts"]["intervals"] > 0 and r["counts"]["edges"] > 0
    assert ok(demo_store, "export").out == before
    assert doc(demo_store, "rebuild", "--check", schema="graphmem.rebuild.v1")["ok"] is True


# export and import ---------------------------------------------------------------------


def test_export_import_roundtrip(demo_ro: Path, tmp_path: Path, new_store: Callable[[str], Path]) -> None:
    exported = ok(demo_ro, "export").out
    lines = [json.loads(x) for x in exported.splitlines()]
    ops = [x["op"] for x in lines]
    first_stmt = ops.index("assert")
    first_record = ops.index("record")
    assert set(ops[:first_record]) == {"entity"}  # entities first
    assert set(ops[first_record:first_stmt]) == {"record"}  # then the evidence records
    assert [x["ref"] for x in lines if x["op"] == "record"] == [f"rec:{i}" for i in range(1, ops.count("record") + 1)]
    ids = [int(x["id"].split(":")[1]) for x in lines if x["op"] in ("assert", "end")]
    assert ids == list(range(1, len(ids) + 1))  # statements in id order
    assert ops[-1] == "retract"
    f = tmp_path / "demo.jsonl"
    f.write_text(exported, encoding="utf-8")
    new = new_store("copy")
    ok(new, "init")
    imp = doc(new, "import", str(f), schema="graphmem.import.v1")
    assert imp["ok"] and imp["facts"] == ["fact:1", f"fact:{len(ids)}"]
    assert ok(new, "export").out == exported
    projects = [e["ref"] for e in doc(demo_ro, "entity", "list", "--type", "Project",
                                      schema="graphmem.entities.v1")["entities"]]
    assert len(projects) >= 10
    for ref in ["project:atlas", "project:beacon", "project:compass", "repo:graph-core"]:
        for extra in ([], ["--as-of", "2025-09-05", "--known-at", "2025-09-05"]):
            a = strip_times(doc(demo_ro, "current", ref, *extra, schema="graphmem.current.v1"))
            b = strip_times(doc(new, "current", ref, *extra, schema="graphmem.current.v1"))
            assert a == b, (ref, extra)
    assert strip_times(doc(new, "timeline", "atlas", schema="graphmem.timeline.v1")) == strip_times(
        doc(demo_ro, "timeline", "atlas", schema="graphmem.timeline.v1"))
    assert doc(new, "rebuild", "--check", schema="graphmem.rebuild.v1")["ok"] is True


def _graph(store: Path, *extra: str) -> nx.MultiDiGraph:
    text = ok(store, "export", "--format", "graphml", *extra).out
    g = nx.read_graphml(__import__("io").BytesIO(text.encode("utf-8")), force_multigraph=True)
    return g


def _uses(g: nx.MultiDiGraph, src: str) -> set[str]:
    return {b for a, b, d in g.out_edges(src, data=True) if d.get("label") == "USES"}


def test_export_graphml_edges_at_time(demo_ro: Path) -> None:
    g = _graph(demo_ro, "--as-of", "2025-06-01")
    assert g.nodes["project:atlas"]["type"] == "Project" and g.nodes["project:atlas"]["name"] == "Atlas"
    assert g.number_of_nodes() == 48
    assert _uses(g, "project:atlas") == {"tool:neo4j", "repo:graph-core"}
    [neo] = [d for a, b, d in g.out_edges("project:atlas", data=True) if b == "tool:neo4j" and d["label"] == "USES"]
    assert neo["predicate"] == "uses" and neo["assertions"] == "fact:35"
    assert neo["valid_from"] == "2025-03-03T00:00:00Z" and neo["valid_to"] == "2025-07-14T00:00:00Z"
    owners = {b for a, b, d in g.out_edges("project:atlas", data=True) if d["predicate"] == "owner"}
    assert owners == {"person:maya-chen"}
    now = _graph(demo_ro)
    assert _uses(now, "project:atlas") == {"tool:kuzu", "repo:graph-core"}
    assert "tool:neo4j" not in _uses(now, "project:atlas")
    # a retracted assertion never appears: Tomas never owned Atlas
    sept = _graph(demo_ro, "--as-of", "2025-09-05")
    assert {b for a, b, d in sept.out_edges("project:atlas", data=True) if d["predicate"] == "owner"} == {
        "person:maya-chen"}


# ontology and predicates ---------------------------------------------------------------


def test_ontology_lists_types(tmp_path: Path) -> None:
    r = ok(None, "ontology")
    for t in ENTITY_TYPES:
        assert t in r.out
    for e in ("USES", "BLOCKED_BY", "RELATES_TO", "EVALUATES", "DECIDES", "MENTIONS"):
        assert e in r.out
    d = doc(None, "ontology", schema="graphmem.ontology.v1")
    names = [t["name"] for t in d["entity_types"]]
    assert set(ENTITY_TYPES) <= set(names)
    assert {t["name"]: t["prefix"] for t in d["entity_types"]}["Project"] == "project"
    edges = {e["name"]: e for e in d["edge_types"]}
    assert ["Project", "Tool"] in edges["USES"]["pairs"]
    assert all(e["description"] for e in d["edge_types"]) and all(t["description"] for t in d["entity_types"])
    assert not (tmp_path / "default-store").exists()  # showing the ontology creates no store


def test_predicates_lists_registry() -> None:
    r = ok(None, "predicates")
    for p in PREDICATES:
        assert p in r.out
    d = doc(None, "predicates", schema="graphmem.predicates.v1")
    preds = {p["name"]: p for p in d["predicates"]}
    assert set(PREDICATES) <= set(preds)
    assert preds["status"]["object"] == {"type": "enum", "values": [
        "idea", "planned", "active", "paused", "blocked", "done", "archived"]}
    assert preds["status"]["cardinality"] == "one"
    assert preds["priority"]["object"]["values"] == ["p0", "p1", "p2", "p3"]
    assert preds["owner"]["object"] == {"entity_types": ["Person"]} and preds["owner"]["cardinality"] == "one"
    assert preds["uses"]["cardinality"] == "many" and preds["uses"]["edge"] == "USES"
    assert "built on" in preds["uses"]["aliases"]
    assert preds["deadline"]["object"]["type"] == "date" and preds["summary"]["object"]["type"] == "text"
    assert all(p["description"] for p in d["predicates"])


# demo ----------------------------------------------------------------------------------


# PostgreSQL: graphmem demo builds its example in a folder only, see docs/engines.md Limits
@pytest.mark.engine("kuzu", "ladybug")
def test_demo_command_fresh_dir(tmp_path: Path) -> None:
    store = tmp_path / "fresh-demo"
    r = ok(store, "demo")
    assert r.out.startswith(f"Built the example store at {store}")
    for q in ("What is true about Atlas now?", "Who owned Atlas on 2025-09-05", "How did Atlas's tools change?",
              "Which projects use Kuzu now?", "Which projects fit an idea, and why?", "before Atlas moved from Neo4j",
              "Why was fact:120 withdrawn?", "Is the store consistent?"):
        assert q in r.out
    assert "person:tomas-ortega" in r.out and "single_value_conflict" in r.out
    assert f"GRAPHMEM_STORE={store}" in r.out
    # the store is usable afterwards, and demo again replaces it (it is marked as a demo store)
    assert [f["object"]["ref"] for f in doc(store, "current", "atlas", "-p", "owner", "--as-of", "2025-09-05",
                                            schema="graphmem.current.v1")["facts"]] == ["person:maya-chen"]
    ok(store, "entity", "add", "Tool", "Scratch")
    d = doc(store, "demo", schema="graphmem.demo.v1")
    assert [s["command"].split()[1] for s in d["steps"]] == [
        "current", "current", "current", "current", "timeline", "facts", "recommend", "recommend", "path",
        "why", "why", "search", "extract", "lint", "pack"]
    packed = d["steps"][14]["result"]
    assert packed["bundle_text"].startswith("Guidance:") and "[rec:46]" in packed["bundle_text"]
    assert packed["meta"]["used_tokens"] <= 400 and packed["trace"]["lanes"]
    now, before = (d["steps"][i]["result"] for i in (6, 7))
    # the migration changed the answer: Compass (on Kuzu since 2026) fits now, not before Atlas's move
    assert [r["project"]["ref"] for r in now["results"]][:2] == ["project:atlas", "project:compass"]
    assert "project:compass" not in [r["project"]["ref"] for r in before["results"]]
    assert all(r["paths"] and all(s["fact"].startswith("fact:") for p in r["paths"] for s in p["steps"])
               for r in now["results"])
    assert d["steps"][8]["result"]["paths"]
    extract = d["steps"][12]["result"]
    assert extract["writes_performed"] is False and extract["assertions"]
    assert d["steps"][2]["result"]["facts"][0]["assertions"] == ["fact:120"]
    assert cli(store, "entity", "show", "tool:scratch").code == 2


def test_demo_refuses_non_demo_folder(tmp_path: Path, small: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    r = cli(folder, "demo")
    assert r.code == 2, r
    assert len(r.err.strip().splitlines()) == 1 and str(folder) in r.err and "not empty" in r.err
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == "keep me"
    # a real (non-demo) store is not overwritten either
    before = ok(small, "export").out
    r = cli(small, "demo")
    assert r.code == 2 and "Traceback" not in r.out + r.err
    assert ok(small, "export").out == before


# help ----------------------------------------------------------------------------------


def _all_commands() -> list[tuple[str, ...]]:
    root = typer.main.get_command(app)
    out: list[tuple[str, ...]] = []

    def walk(c: Any, path: tuple[str, ...]) -> None:
        out.append(path)
        for name, sub in sorted(getattr(c, "commands", {}).items()):
            walk(sub, path + (name,))
    walk(root, ())
    return out


def test_command_list_covers_spec_core() -> None:
    cmds = {" ".join(p) for p in _all_commands()}
    for c in ("init", "demo", "ontology", "predicates", "entity add", "entity show", "entity list", "assert", "end",
              "retract", "import", "current", "timeline", "facts", "why", "lint", "rebuild", "export"):
        assert c in cmds


@pytest.mark.parametrize("path", _all_commands(), ids=lambda p: " ".join(p) or "graphmem")
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    r = ok(None, *path, "--help")
    assert r.out.startswith("Usage: graphmem")
    root = typer.main.get_command(app)
    cmd: Any = root
    for name in path:
        cmd = cmd.commands[name]
    assert cmd.help and cmd.help.strip()
    first = " ".join(cmd.help.strip().split("\n\n")[0].split())
    assert first in " ".join(r.out.split())  # the description is shown
    for param in cmd.params:
        assert getattr(param, "help", None), f"{' '.join(path)}: {param.name} has no help"
    if len(path) < 2:
        assert ok(None, *path, "-h").out == r.out


def test_api_documents_equal_the_cli_json(demo_ro: Path) -> None:
    """The read commands built their JSON in the CLI; the API now returns the same documents."""
    with graphmem.open(demo_ro, create=False) as m:
        api = {
            ("entity", "show", "atlas"): m.show_entity("atlas").to_dict(),
            ("entity", "list", "--type", "Tool"): m.list_entities("Tool").to_dict(),
            ("ontology",): m.ontology_doc().to_dict(),
            ("predicates",): m.registry_doc().to_dict(),
            ("export",): m.export_doc().to_dict(),
            ("export", "--format", "graphml", "--as-of", "2025-06-01"): m.export_doc("graphml", "2025-06-01").to_dict(),
        }
    for argv, want in api.items():
        assert doc(demo_ro, *argv, schema=want["schema"]) == want, argv
    assert api[("entity", "show", "atlas")]["entity"]["ref"] == "project:atlas"
    assert {e["type"] for e in api[("entity", "list", "--type", "Tool")]["entities"]} == {"Tool"}
    assert api[("export",)]["lines"][0]["op"] == "entity"


def test_init_document_from_the_api(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.add_entity("Tool", "Kuzu")
        info = m.info().to_dict()
    engine = info["engine"]
    assert engine == TEST_ENGINE
    layout = SCHEMA_VERSION if engine != "postgresql" else PG_SCHEMA_VERSION  # each engine numbers its own layouts
    address = str(store_path) if engine in ("kuzu", "postgresql") else f"{engine}:{store_path}"
    assert info == {"schema": "graphmem.init.v1", "store": str(store_path), "statements": 0, "entities": 1,
                    "records": 0, "engine": engine, "engine_version": info["engine_version"], "layout": layout,
                    "address": address}
    assert doc(store_path, "init", schema="graphmem.init.v1") == info


def test_ontology_and_predicates_commands_show_the_stores_own_folders(tmp_path: Path) -> None:
    store = tmp_path / "s"
    (store / "ontology").mkdir(parents=True)
    (store / "predicates").mkdir()
    (store / "ontology" / "x.toml").write_text('[entity_types.Planet]\ndescription = "A world."\n', encoding="utf-8")
    (store / "predicates" / "x.toml").write_text(
        '[predicates.orbits]\ndescription = "x"\nsubject_types = ["Planet"]\nobject = { type = "string" }\n'
        'cardinality = "one"\n', encoding="utf-8")
    ont = doc(store, "ontology", schema="graphmem.ontology.v1")
    assert "Planet" in [t["name"] for t in ont["entity_types"]]
    preds = doc(store, "predicates", schema="graphmem.predicates.v1")
    assert "orbits" in [p["name"] for p in preds["predicates"]]
    assert "orbits" not in [p["name"] for p in doc(tmp_path / "other", "predicates",
                                                  schema="graphmem.predicates.v1")["predicates"]]
