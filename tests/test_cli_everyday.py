"""The first hour at the command line: --version, global options after the command, end now,
suggestions by edit distance, counts in words, errors as JSON, messages that say what happened,
read-only Cypher, shell completion and a pack that pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest
from helpers import assert_no_store, cli, copy_demo, one_clear_line

import graphmem
from graphmem.model.words import near, plural
from graphmem.store import CypherReads, StorageEngine
from graphmem.store.roles import ROLES

GRAPHMEM = str(Path(sys.executable).parent / "graphmem")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GRAPHMEM, *args], capture_output=True, text=True, timeout=120,
                          env=env if env is not None else dict(os.environ))


@pytest.fixture
def small(new_store: Callable[[str], Path]) -> Path:
    """A store with a few entities (DuckDB among them) and two facts."""
    path = new_store("small")
    with graphmem.open(path, create=True) as m:
        m.add_entity("Project", "Atlas", aliases=["atlas-app"])
        m.add_entity("Tool", "Kuzu")
        m.add_entity("Tool", "DuckDB")
        m.add_entity("Person", "Ada Lovelace")
        m.assert_("atlas", "uses", "kuzu", valid_from="2025-01-01")
        m.assert_("atlas", "owner", "Ada Lovelace", valid_from="2025-01-01")
    return path


def export(store: Path) -> str:
    r = cli(store, "export")
    assert r.code == 0, r
    return r.out


# 4. --version, global options after the command, end now, did you mean, plurals ---------------


def test_version_prints_the_package_version() -> None:
    r = cli(Path("unused"), "--version")
    assert r.code == 0 and r.out == f"graphmem {version('graphmem')}\n" and r.err == ""
    p = run("--version")
    assert p.returncode == 0 and p.stdout == f"graphmem {version('graphmem')}\n"


def test_global_options_after_the_command(small: Path, new_store: Callable[[str], Path], odd_predicates: Path) -> None:
    from helpers import runner

    from graphmem.cli import app
    r = runner.invoke(app, ["current", "atlas", "--store", str(small), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["subject"]["ref"] == "project:atlas"
    # after the command, --store wins over the one before it (and over GRAPHMEM_STORE)
    elsewhere = new_store("elsewhere")
    r = runner.invoke(app, ["--store", str(elsewhere), "entity", "list", "--store", str(small), "--json"])
    assert r.exit_code == 0 and "tool:duckdb" in {e["ref"] for e in json.loads(r.stdout)["entities"]}
    assert_no_store(elsewhere)
    # --predicates after the command adds a folder, as before it
    r = runner.invoke(app, ["predicates", "--store", str(small), "--predicates", str(odd_predicates), "--json"])
    assert r.exit_code == 0 and "score" in {p["name"] for p in json.loads(r.stdout)["predicates"]}
    # the executable too
    p = run("current", "atlas", "--json", "--store", str(small))
    assert p.returncode == 0 and json.loads(p.stdout)["schema"] == "graphmem.current.v1"


def test_end_without_at_ends_now(small: Path) -> None:
    r = cli(small, "end", "atlas", "uses")
    assert r.code == 0 and r.out.strip() == "fact:3", r
    now = cli(small, "--json", "current", "atlas", "--predicate", "uses").json()
    assert now["facts"] == []
    why = cli(small, "--json", "why", "fact:3").json()["fact"]
    assert why["op"] == "end" and why["at"] <= now["as_of"] and why["at"] >= why["recorded_at"][:19]


@pytest.mark.parametrize(("argv", "wanted"), [
    (["current", "atlsa"], "did you mean project:atlas?"),
    (["current", "Duck DB"], "did you mean tool:duckdb?"),
    (["assert", "atlas", "uses", "kuzdb"], "did you mean tool:kuzu?"),
    (["current", "atlas", "--predicate", "ownr"], "did you mean owner?"),
    (["assert", "atlas", "stauts", "active"], "did you mean status?"),
    (["curent", "atlas"], "did you mean 'current'?"),
    (["retrakt", "fact:1"], "did you mean 'retract'?"),
])
def test_did_you_mean_by_edit_distance(small: Path, argv: list[str], wanted: str) -> None:
    before = export(small)
    r = cli(small, *argv)
    line = one_clear_line(r, 2, [], [])
    assert wanted in line, line
    assert export(small) == before


def test_no_suggestion_when_nothing_is_near(small: Path) -> None:
    line = one_clear_line(cli(small, "current", "zebra"), 2, ["'zebra'"], ["expected"])
    assert "did you mean" not in line
    line = one_clear_line(cli(small, "current", "atlas", "-p", "pipt"), 2, ["'pipt'"], ["known: "])
    assert "did you mean" not in line


def test_near_ranks_by_edit_distance() -> None:
    assert near("atlsa", ["atlas", "anchor", "atlas-v2-long-name"]) == ["atlas"]
    assert near("ownr", ["owner", "summary", "status"]) == ["owner"]
    assert near("Duck DB", ["duckdb", "docker", "dynamodb"]) == ["duckdb"]
    assert near("pipt", ["blocked_by", "deadline", "owner", "priority", "status", "uses"]) == []
    assert near("stat", ["status", "state", "start"]) == ["start", "state", "status"]  # distance 1, 1, prefix
    assert near("", ["a"]) == [] and near("x", ["y"]) == []


def test_the_service_suggests_too(small: Path) -> None:
    import warnings

    from graphmem.service.http import create_app
    with warnings.catch_warnings():  # starlette would rather have another HTTP client than httpx
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    with TestClient(create_app(small)) as c:
        r = c.get("/current", params={"subject": "atlsa"}, headers={"Host": "127.0.0.1:8765"})
        assert r.status_code == 404 and "did you mean project:atlas?" in r.json()["message"]
        r = c.get("/current", params={"subject": "atlas", "predicate": "ownr"}, headers={"Host": "127.0.0.1:8765"})
        assert r.status_code == 400 and "did you mean owner?" in r.json()["message"]


@pytest.mark.parametrize(("argv", "wanted"), [
    (["--store", "s", "--json", "current", "atlas"], "current"),
    (["--store=s", "--ontology", "o", "--predicates=p", "pack", "-q", "x"], "pack"),
    (["entity", "show", "atlas"], "entity"),
    (["current", "--store", "s"], "current"),
    (["--help"], None), ([], None), (["--json"], None), (["curent", "atlas"], None), (["--", "current"], None),
    (["--store"], None),
])
def test_the_command_line_builds_only_the_command_it_runs(argv: list[str], wanted: str | None) -> None:
    from graphmem.cli.app import _for, app
    built = _for(argv)
    if wanted is None:  # help, no command, an unknown one: the whole app, to list or suggest from
        assert built is app
        return
    assert built is not app and [c.name for c in built.registered_commands + built.registered_groups] == [wanted]
    assert len(app.registered_commands) > 30 and [g.name for g in app.registered_groups] == ["entity"]  # untouched


def test_the_global_options_stepped_over_are_those_that_take_a_value() -> None:
    import typer.main

    from graphmem.cli.app import _VALUED_GLOBALS, app
    root = typer.main.get_command(app)
    assert {o for p in root.params if not p.is_flag for o in p.opts} == _VALUED_GLOBALS


def test_the_console_script_runs_one_command_as_the_whole_app_does(small: Path) -> None:
    at = ["--as-of", "2025-06-01", "--known-at", "2099-01-01"]
    for argv in (["--json", "current", "atlas", *at], ["current", "atlas", *at, "--json"],
                 ["--json", "entity", "show", "kuzu"]):
        alone = run("--store", str(small), *argv)
        assert alone.returncode == 0 and json.loads(alone.stdout) == json.loads(cli(small, *argv).out), argv
    typo = run("--store", str(small), "curent", "atlas")
    assert typo.returncode == 2 and "did you mean 'current'" in typo.stderr
    listed = run("--help")
    assert listed.returncode == 0 and all(f" {n} " in listed.stdout for n in ("current", "pack", "entity", "serve"))
    helped = run("pack", "--help")
    assert helped.returncode == 0 and "--budget-tokens" in helped.stdout and "--store" in helped.stdout


def test_counts_are_singular_and_plural(small: Path, tmp_path: Path) -> None:
    assert plural(1, "error") == "1 error" and plural(2, "error") == "2 errors" and plural(0, "entity", "entities") == "0 entities"
    f = tmp_path / "one.jsonl"
    f.write_text('{"op": "entity", "type": "Tool", "name": "Redis"}\n'
                 '{"op": "assert", "subject": "atlas", "predicate": "uses", "object": "redis", "valid_from": "2025-02-01"}\n')
    r = cli(small, "import", str(f))
    assert r.code == 0 and "1 entity created" in r.out and "1 statement (fact:3)" in r.out, r
    assert "0 retractions" in r.out
    r = cli(small, "init")
    assert "; 5 entities, 3 statements)" in r.out, r
    lint = cli(small, "lint")
    assert "1 error" not in lint.out and "0 errors" in lint.out, lint


# 5. errors as one graphmem.error.v1 document with --json ---------------------------------------


def test_store_unavailable_with_json_is_an_error_document(new_store: Callable[[str], Path]) -> None:
    r = cli(new_store("nope"), "current", "atlas", "--json")
    assert r.code == 3 and r.err == ""
    doc = r.json()
    assert doc == {"schema": "graphmem.error.v1", "code": "StoreUnavailable", "message": doc["message"]}
    assert "init" in doc["message"]
    p = run("--store", str(new_store("nope")), "current", "atlas", "--bogus", "--json")
    assert p.returncode == 2 and p.stderr == "" and json.loads(p.stdout)["code"] == "usage_error"


def test_without_json_errors_stay_one_line_on_stderr(small: Path) -> None:
    r = cli(small, "current", "atlsa")
    one_clear_line(r, 2, ["'atlsa'"])
    assert r.out == ""


# 8. messages that say what happened --------------------------------------------------------------


def test_current_known_before_any_record_says_so(small: Path) -> None:
    d = cli(small, "--json", "current", "atlas", "--known-at", "2020-01-01").json()
    assert d["facts"] == []
    first = cli(small, "--json", "why", "fact:1").json()["fact"]["recorded_at"]
    assert d["message"] == f"nothing about project:atlas was recorded by 2020-01-01: its first statement was recorded at {first}"
    human = cli(small, "current", "atlas", "--known-at", "2020-01-01")
    assert "nothing about project:atlas was recorded by 2020-01-01" in human.out and first in human.out
    assert "message" not in cli(small, "--json", "current", "atlas").json()  # known now: nothing to explain


def test_path_names_the_date_not_as_of(small: Path) -> None:
    r = cli(small, "path", "atlas", "kuzu", "--as-of", "2024-06-01")
    assert r.code == 0 and "within 4 hops as of 2024-06-01" in r.out and "as_of" not in r.out, r
    d = cli(small, "--json", "path", "atlas", "kuzu", "--as-of", "2024-06-01", "--max-hops", "1").json()
    assert d["message"] == "no path between project:atlas and tool:kuzu within 1 hop as of 2024-06-01"


def test_pack_budget_too_small_says_what_the_smallest_item_needs(demo_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "demo", request)
    d = cli(store, "--json", "pack", "-q", "graph database", "--budget-tokens", "1").json()
    assert d["items"] == [] and d["meta"]["message"].startswith("a budget of 1 token holds nothing: the smallest "
                                                                "candidate needs ")
    assert d["meta"]["message"].endswith(" tokens")
    r = cli(store, "pack", "-q", "graph database", "--budget-tokens", "1")
    assert r.code == 0 and r.out == "" and d["meta"]["message"] in r.err


# 9. graphmem cypher --------------------------------------------------------------------------------


@pytest.mark.engine("kuzu", "ladybug")  # PostgreSQL: no Cypher (graphmem cypher is refused), see docs/engines.md Limits
def test_cypher_table_and_json(small: Path) -> None:
    q = "MATCH (p:Project)-[u:USES]->(t:Tool) RETURN p.ref AS project, t.ref AS tool, u.valid_from AS since"
    d = cli(small, "cypher", q, "--json").json()
    assert d["schema"] == "graphmem.cypher.v1" and d["query"] == q
    assert d["columns"] == ["project", "tool", "since"] and d["types"] == ["STRING", "STRING", "TIMESTAMP"]
    assert d["rows"] == [["project:atlas", "tool:kuzu", "2025-01-01T00:00:00Z"]] and d["count"] == 1
    r = cli(small, "cypher", q)
    assert r.code == 0 and "project:atlas" in r.out and "tool:kuzu" in r.out and r.out.rstrip().endswith("1 row")
    node = cli(small, "--json", "cypher", "MATCH (t:Tool {ref: 'tool:kuzu'}) RETURN t").json()["rows"][0][0]
    assert node["_label"] == "Tool" and node["ref"] == "tool:kuzu" and node["created_at"].endswith("Z")
    # a keyword inside a string literal, a quoted name or a comment is not a write
    lit = cli(small, "--json", "cypher", "MATCH (t:Tool) WHERE t.name <> 'CREATE (x) SET x.a = 1; DROP TABLE Tool' "
                                         "RETURN count(*) AS `delete` // MERGE").json()
    assert lit["rows"] == [[2]] and lit["columns"] == ["delete"]


@pytest.mark.engine("kuzu", "ladybug")  # PostgreSQL: no Cypher (graphmem cypher is refused), see docs/engines.md Limits
@pytest.mark.parametrize("query", [
    "CREATE (:Tool {ref: 'tool:x', name: 'X'})",
    "MERGE (:Tool {ref: 'tool:x'})",
    "MATCH (t:Tool) SET t.name = 'renamed'",
    "MATCH (t:Tool) DELETE t",
    "MATCH (p:Project) DETACH DELETE p",
    "match (t:Tool) where t.ref = 'tool:kuzu' set t.description = 'x' return t",
    "DROP TABLE Tool",
    "ALTER TABLE Tool ADD extra STRING",
    "CREATE NODE TABLE Extra(id STRING PRIMARY KEY)",
    "COPY Tool FROM '/tmp/nothing.csv'",
    "COPY (MATCH (t:Tool) RETURN t.ref) TO '{out}'",
    "EXPORT DATABASE '{out}'",
    "LOAD FROM '/etc/hostname' (file_format='csv') RETURN *",
    "UNWIND [1] AS x LOAD FROM '/etc/hostname' (file_format='csv') RETURN *",
    "INSTALL json",
    "LOAD EXTENSION json",
    "ATTACH '{out}' AS other (dbtype kuzu)",
    "CHECKPOINT",
    "COMMIT",
    "BEGIN TRANSACTION",
    "MATCH (t:Tool) RETURN t.ref; CREATE (:Tool {ref: 'tool:y'})",
    "RETURN 1; COMMIT",
    "CALL threads = 1",
    "CALL CREATE_FTS_INDEX('Tool', 'ix', ['name'])",
    "CREATE MACRO twice(x) AS x * 2",
    "EXPLAIN CREATE (:Tool {ref: 'tool:z'})",
])
def test_cypher_refuses_what_would_write(small: Path, tmp_path: Path, query: str) -> None:
    out = tmp_path / "written"
    before = export(small)
    query = query.replace("{out}", str(out))
    r = cli(small, "cypher", query)
    line = one_clear_line(r, 2, ["refused query"], ["expected one read-only query"])
    assert r.out == "", line
    assert export(small) == before
    assert not out.exists()
    doc = cli(small, "--json", "cypher", query).json()
    assert doc["schema"] == "graphmem.error.v1" and doc["code"] == "QueryRefused"


@pytest.mark.engine("kuzu", "ladybug")  # PostgreSQL: no Cypher (graphmem cypher is refused), see docs/engines.md Limits
def test_cypher_bad_query_is_bad_input(small: Path) -> None:
    r = cli(small, "cypher", "MATCH (t:Nope) RETURN t")
    one_clear_line(r, 2, ["'MATCH (t:Nope) RETURN t'", "Nope"], [])
    one_clear_line(cli(small, "cypher", "MATCH (t:Tool RETURN t"), 2, ["Parser"], [])
    one_clear_line(cli(small, "cypher", "   "), 2, ["query"], ["expected"])


@pytest.mark.engine("kuzu", "ladybug")  # PostgreSQL: no Cypher (graphmem cypher is refused), see docs/engines.md Limits
def test_memory_cypher_and_its_role(small: Path) -> None:
    with graphmem.open(small) as m:
        assert isinstance(m.store, CypherReads)
        r = m.cypher("MATCH (t:Tool) RETURN t.ref ORDER BY t.ref")
        assert r.columns == ("t.ref",) and r.rows == (("tool:duckdb",), ("tool:kuzu",))
        assert json.loads(r.to_json())["schema"] == "graphmem.cypher.v1"
        with pytest.raises(graphmem.QueryRefused, match="would write"):
            m.cypher("MATCH (t:Tool) SET t.name = 'x'")
        assert m.resolve("tool:kuzu").name == "Kuzu"  # the store works on after a refusal
        m.add_entity("Tool", "Redis")  # and takes writes
        assert len(m.cypher("MATCH (t:Tool) RETURN t.ref").rows) == 3
    # a narrow role of its own: not something every engine must have
    assert CypherReads not in ROLES and not issubclass(StorageEngine, CypherReads)


# 10. shell completion, and pack | llm ---------------------------------------------------------------


def test_shell_completion_installs(tmp_path: Path) -> None:
    # the shell named on the command line, not guessed from the process tree (which a test run does not fix)
    env = dict(os.environ, HOME=str(tmp_path), SHELL="/bin/bash", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    shown = run("--show-completion", "bash", env=env)
    assert shown.returncode == 0 and "_graphmem_completion" in shown.stdout
    installed = run("--install-completion", "bash", env=env)
    assert installed.returncode == 0, installed.stderr
    script = tmp_path / ".bash_completions" / "graphmem.sh"
    assert script.is_file() and str(script) in (tmp_path / ".bashrc").read_text()
    done = run(env=dict(env, _GRAPHMEM_COMPLETE="complete_bash", COMP_WORDS="graphmem cur", COMP_CWORD="1"))
    assert done.returncode == 0 and done.stdout.split() == ["current"]
    opts = run(env=dict(env, _GRAPHMEM_COMPLETE="complete_bash", COMP_WORDS="graphmem current atlas --kn",
                        COMP_CWORD="3"))
    assert opts.stdout.split() == ["--known-at"]


def test_pack_pipes_the_bundle_text_alone(demo_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "demo", request)
    args = ["--store", str(store), "pack", "-q", "graph database for atlas", "--as-of", "2025-11-01"]
    doc = json.loads(run(*args, "--json").stdout)
    assert doc["bundle_text"]
    for extra in ([], ["--trace"]):
        p = run(*args, *extra)  # stdout is a pipe, as in 'graphmem pack ... | llm'
        assert p.returncode == 0 and p.stdout == doc["bundle_text"] + "\n", extra
    assert "within_budget" in run(*args, "--trace").stderr
