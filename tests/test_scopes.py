"""Scopes (docs/scopes.md): statements and records carry one; every read limited to scopes sees only
them (the fact view of their statements); writes carry theirs through import and export; and on the
service, a token bound to scopes never reads or writes outside them, for every operation of the table."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, one_clear_line

with warnings.catch_warnings():  # starlette's test client still runs on httpx, and says so
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

import graphmem
from graphmem.service.http import create_app
from graphmem.service.operations import OPERATIONS, SCOPE_RULES, check

MARK = "zebracorn"  # in scope b only: a statement's text, a record's text


def _store(path: Path) -> graphmem.Memory:
    """Atlas with facts in scopes a and b and unscoped ones; a record in each."""
    m = graphmem.open(path, create=True)
    for t, n in (("Project", "Atlas"), ("Tool", "Kuzu"), ("Tool", "Neo4j"), ("Tool", "Sqlite")):
        m.add_entity(t, n)
    m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01", scope="user:a")  # fact:1
    m.assert_("Atlas", "uses", "Neo4j", valid_from="2024-01-01", scope="user:b")  # fact:2
    m.assert_("Atlas", "summary", f"the {MARK} plan", valid_from="2024-01-01", scope="user:b")  # fact:3
    m.assert_("Atlas", "uses", "Sqlite", valid_from="2023-01-01")  # fact:4, unscoped
    m.assert_("Atlas", "status", "active", valid_from="2024-01-01", scope="user:a")  # fact:5
    m.ingest([{"text": "Atlas runs its graph on Kuzu", "scope": "user:a", "ts": "2024-02-01"},
              {"text": f"Atlas graph {MARK} notes on Neo4j", "scope": "user:b", "ts": "2024-02-02"},
              {"text": "Atlas graph notes without a scope", "ts": "2024-02-03"}])
    return m


B_FACTS = ("fact:2", "fact:3")
B_RECORDS = ("rec:2",)


def _leaks(text: str) -> list[str]:
    """What of scope b a response holds: the marker, b's fact and record refs."""
    found = [MARK] if MARK in text else []
    return found + [r for r in (*B_FACTS, *B_RECORDS) if re.search(rf'"{r}"|\b{r}\b(?!\d)', text)]


@pytest.fixture
def mem(store_path: Path) -> Iterator[graphmem.Memory]:
    m = _store(store_path)
    yield m
    m.close()


def _objects(doc: dict[str, Any]) -> list[Any]:
    return sorted(str(f["object"].get("ref") or f["object"].get("value")) for f in doc["facts"])


# the Python API -------------------------------------------------------------------------------

def test_a_read_sees_only_its_scopes_and_leaves_unscoped_statements_out(mem: graphmem.Memory) -> None:
    assert _objects(mem.current("Atlas").to_dict()) == ["active", "the zebracorn plan", "tool:kuzu", "tool:neo4j",
                                                        "tool:sqlite"]
    a = mem.current("Atlas", scope="user:a").to_dict()
    assert _objects(a) == ["active", "tool:kuzu"] and a["scope"] == ["user:a"]
    assert _objects(mem.current("Atlas", scope=["user:a", "user:b"]).to_dict()) == [
        "active", "the zebracorn plan", "tool:kuzu", "tool:neo4j"]
    assert "scope" not in mem.current("Atlas").to_dict()  # no scope: every statement, as before
    assert mem.current("Atlas", scope="user:nobody").facts == ()
    tl = mem.timeline("Atlas", scope="user:a").to_dict()
    assert {e["fact"] for e in tl["events"]} == {"fact:1", "fact:5"} and tl["scope"] == ["user:a"]
    facts = mem.facts(predicate="uses", scope="user:b").to_dict()
    assert [f["object"]["ref"] for f in facts["facts"]] == ["tool:neo4j"] and facts["scope"] == ["user:b"]
    assert mem.facts(object="Neo4j", scope="user:a").facts == ()
    assert [f["subject"]["ref"] for f in mem.facts(object="Kuzu", scope="user:a").to_dict()["facts"]] == ["project:atlas"]
    assert mem.why("fact:1", scope="user:a").to_dict()["scope"] == ["user:a"]
    with pytest.raises(graphmem.BadInput, match="unknown fact 'fact:2' in scope user:a"):
        mem.why("fact:2", scope="user:a")


def test_the_scoped_view_is_the_view_of_the_scopes_statements(mem: graphmem.Memory) -> None:
    """An end in scope b closes b's fact only; a's view does not see it, the whole view does."""
    mem.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01", scope="user:b")
    mem.end("Atlas", "uses", "Kuzu", at="2024-06-01", scope="user:b")
    assert "tool:kuzu" in _objects(mem.current("Atlas", scope="user:a").to_dict())
    assert "tool:kuzu" not in _objects(mem.current("Atlas", scope="user:b").to_dict())
    with pytest.raises(graphmem.BadInput, match="nothing holds .* in scope 'user:b'"):
        mem.end("Atlas", "uses", "Sqlite", at="2024-06-01", scope="user:b")  # unscoped: not b's to end
    assert mem.rebuild(check=True).ok


def test_cite_and_retract_stay_within_scopes(mem: graphmem.Memory) -> None:
    w = mem.cite("fact:1", ["https://example.org/a"], scope="user:a")
    assert w.to_dict()["fact"]["scope"] == "user:a"  # a cite carries its assertion's scope
    assert mem.current("Atlas", scope="user:a", predicate="uses").facts[0].sources == ("https://example.org/a",)
    before = mem.store.statement_count()
    for call in (lambda: mem.cite("fact:2", ["https://example.org/b"], scope="user:a"),
                 lambda: mem.retract("fact:2", scope="user:a")):
        with pytest.raises(graphmem.BadInput, match="unknown fact 'fact:2' in scope"):
            call()
    assert mem.store.statement_count() == before and mem.store.statement(2).retracted_at is None
    mem.retract("fact:2", "wrong", scope=["user:a", "user:b"])
    assert mem.current("Atlas", scope="user:b", predicate="uses").facts == ()


def test_search_ranks_only_within_the_scopes(mem: graphmem.Memory) -> None:
    assert [h.ref for h in mem.search("atlas graph").results] == ["rec:1", "rec:2", "rec:3"] or \
        len(mem.search("atlas graph").results) == 3
    a = mem.search("atlas graph", scope="user:a")
    assert [h.ref for h in a.results] == ["rec:1"] and a.to_dict()["filters"]["scope"] == ["user:a"]
    assert [h.ref for h in mem.search(MARK, scope="user:b").results] == ["rec:2"]
    assert mem.search(MARK, scope=["user:a"]).results == ()
    assert [h.ref for h in mem.search("notes", scope="user:b", kind="note").results] == ["rec:2"]


def test_pack_recommend_and_path_use_the_scoped_view(mem: graphmem.Memory) -> None:
    text = mem.pack("Atlas graph notes Neo4j", scope="user:a", trace=True).to_dict()
    assert _leaks(json.dumps(text)) == [] and text["meta"]["filters"]["scope"] == ["user:a"]
    assert MARK in mem.pack(f"Atlas graph {MARK}", scope="user:b").bundle_text
    assert mem.paths("Atlas", "Neo4j", scope="user:a").paths == ()
    assert mem.paths("Atlas", "Neo4j", scope="user:b").to_dict()["scope"] == ["user:b"]
    assert len(mem.paths("Atlas", "Neo4j", scope="user:b").paths) == 1
    # in scope a, nothing of b: no path over b's fact (Atlas uses Neo4j), no b record as evidence (a's own
    # record, which names Atlas and Kuzu, may still be evidence)
    a = mem.recommend("something on neo4j", scope="user:a")
    doc = json.dumps(a.to_dict())
    assert _leaks(doc) == [] and "tool:neo4j <-USES- project:atlas" not in doc
    assert [r.project.ref for r in mem.recommend("something on neo4j", scope="user:b").results] == ["project:atlas"]


def test_export_and_import_keep_scopes_and_import_twice_writes_nothing(mem: graphmem.Memory,
                                                                      new_store: Callable[[str], Path]) -> None:
    text = mem.export_doc("jsonl", None).text
    assert '"scope": "user:b"' in text
    with graphmem.open(new_store("t"), create=True) as other:
        assert other.import_jsonl(text.splitlines()).errors == ()
        again = other.import_jsonl(text.splitlines())
        assert again.statements == 0 and again.unchanged == again.lines
        assert other.export_doc("jsonl", None).text == text
        assert _objects(other.current("Atlas", scope="user:b").to_dict()) == ["the zebracorn plan", "tool:neo4j"]
        # the same line in another scope is another statement
        line = next(json.loads(x) for x in text.splitlines() if '"fact:1"' in x)
        line.pop("id")
        r = other.import_jsonl([json.dumps({**line, "scope": "user:c"})])
        assert r.statements == 1 and other.store.statement(6) is None or r.statements == 1


def test_import_gives_its_scope_to_lines_without_one(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        r = m.import_jsonl(['{"op": "entity", "type": "Project", "name": "Atlas"}',
                            '{"op": "assert", "subject": "Atlas", "predicate": "status", "object": "active"}',
                            '{"op": "assert", "subject": "Atlas", "predicate": "priority", "object": "p1", '
                            '"scope": "user:b"}'], scope="user:a")
        assert r.errors == ()
        assert [(s.predicate, s.scope) for s in m.store.all_statements()] == [("status", "user:a"),
                                                                              ("priority", "user:b")]


@pytest.mark.parametrize("bad", ["", "has space", "x" * 65, "-lead", "a\nb", "semi;colon"])
def test_a_bad_scope_is_one_clear_line(mem: graphmem.Memory, bad: str) -> None:
    for call in (lambda: mem.current("Atlas", scope=bad), lambda: mem.search("atlas", scope=[bad]),
                 lambda: mem.assert_("Atlas", "priority", "p1", scope=bad)):
        with pytest.raises(graphmem.BadInput, match="bad scope"):
            call()
    assert mem.store.statement_count() == 5


def test_the_cli_takes_scope_on_reads_and_writes(store_path: Path) -> None:
    _store(store_path).close()
    store = store_path
    r = cli(store, "--json", "current", "Atlas", "--scope", "user:a")
    assert r.code == 0, r.err
    assert _objects(r.json()) == ["active", "tool:kuzu"] and r.json()["scope"] == ["user:a"]
    r = cli(store, "--json", "current", "Atlas", "--scope", "user:a", "--scope", "user:b")
    assert r.json()["scope"] == ["user:a", "user:b"]
    for args in (["timeline", "Atlas"], ["facts"], ["why", "fact:1"], ["search", "atlas"], ["recommend", "kuzu"],
                 ["path", "Atlas", "Kuzu"], ["pack", "--query", "atlas graph notes neo4j"]):
        r = cli(store, "--json", *args, "--scope", "user:a")
        assert r.code == 0, (args, r.err)
        assert _leaks(r.out) == [], args
    r = cli(store, "--json", "assert", "Atlas", "priority", "p1", "--scope", "user:a")
    assert r.code == 0 and r.json()["fact"]["scope"] == "user:a"
    r = cli(store, "--json", "note", "a note of b", "--scope", "user:b")
    assert r.code == 0 and r.json()["record"]["scope"] == "user:b"
    one_clear_line(cli(store, "current", "Atlas", "--scope", "bad scope"), 2, ["bad scope", "letters"])
    one_clear_line(cli(store, "assert", "Atlas", "priority", "p2", "--scope", ""), 2, ["bad scope"])


def test_mcp_tools_take_scope() -> None:
    for op in OPERATIONS:
        if "mcp" in op.surfaces and op.scope in ("read", "write", "target", "records"):
            assert "scope" in op.input_schema("mcp")["properties"], op.name


def test_an_mcp_call_with_a_scope_reads_only_it(mem: graphmem.Memory) -> None:
    op = next(o for o in OPERATIONS if o.name == "current")
    doc = op.call(mem, check(op, {"subject": "Atlas", "scope": "user:a"}, "mcp", from_text=True)).to_dict()
    assert _objects(doc) == ["active", "tool:kuzu"]


# the service: tokens bound to scopes, every operation --------------------------------------------

ADMIN, TOKEN_A = "admin-token-123", "token-a-12345678"

# For each operation: what a request with token A sends to read or write inside scope a (it must not
# answer with anything of scope b), and what it sends to reach into scope b (it must be refused and write
# nothing). A new operation fails test_every_operation_has_a_scope_rule_and_a_case until it is added here.
CASES: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "current": ({"subject": "Atlas"}, {"subject": "Atlas", "scope": "user:b"}),
    "timeline": ({"subject": "Atlas"}, {"subject": "Atlas", "scope": "user:b"}),
    "facts": ({}, {"scope": "user:a,user:b"}),
    "why": ({"fact": "fact:1"}, {"fact": "fact:2"}),
    "entity": ({"ref": "Atlas"}, None),
    "entities": ({}, None),
    "add_entity": ({"type": "Tool", "name": "Valkey"}, None),
    "entity_rename": ({"ref": "Kuzu", "name": "KuzuDB"}, {"ref": "Kuzu", "name": "KuzuDB"}),
    "entity_alias_add": ({"ref": "Kuzu", "aliases": ["kz"]}, {"ref": "Kuzu", "aliases": ["kz"]}),
    "entity_alias_remove": ({"ref": "Kuzu", "aliases": ["kz"]}, {"ref": "Kuzu", "aliases": ["kz"]}),
    "entity_merge": ({"into": "Kuzu", "merged": "Sqlite"}, {"into": "Kuzu", "merged": "Sqlite"}),
    "entity_unmerge": ({"merged": "Sqlite"}, {"merged": "Sqlite"}),
    "assert": ({"subject": "Atlas", "predicate": "priority", "object": "p1"},
               {"subject": "Atlas", "predicate": "priority", "object": "p1", "scope": "user:b"}),
    "end": ({"subject": "Atlas", "predicate": "uses", "object": "Kuzu", "at": "2025-01-01"},
            {"subject": "Atlas", "predicate": "uses", "object": "Neo4j", "at": "2025-01-01", "scope": "user:b"}),
    "cite": ({"fact": "fact:1", "sources": ["https://example.org/a"]},
             {"fact": "fact:2", "sources": ["https://example.org/b"]}),
    "retract": ({"fact": "fact:5"}, {"fact": "fact:2"}),
    "import": ({"_body": '{"op": "assert", "subject": "Atlas", "predicate": "priority", "object": "p2"}\n'},
               {"_body": '{"op": "assert", "subject": "Atlas", "predicate": "priority", "object": "p2"}\n'}),
    "ingest": ({"_body": '{"text": "a new note of a"}\n'},
               {"_body": '{"text": "a new note of b", "scope": "user:b"}\n'}),
    "search": ({"q": "atlas graph notes neo4j"}, {"q": "atlas", "scope": "user:b"}),
    "note": ({"text": "a note of a"}, {"text": "a note of b", "scope": "user:b"}),
    "extract": ({"text": "Atlas uses Neo4j."}, {"text": "Atlas uses Neo4j.", "apply": True}),
    "lint": ({}, {}),
    "rebuild_check": ({}, {}),
    "export": ({}, {}),
    "lifecycle": ({"dry_run": True}, {}),
    "revive": ({"refs": ["rec:1"]}, {"refs": ["rec:1"]}),
    "recommend": ({"idea": "something on neo4j"}, {"idea": "neo4j", "scope": "user:b"}),
    "path": ({"from": "Atlas", "to": "Neo4j"}, {"from": "Atlas", "to": "Neo4j", "scope": "user:b"}),
    "pack": ({"q": "Atlas graph notes Neo4j", "trace": "true"}, {"q": "Atlas", "scope": "user:b"}),
}


def test_every_operation_has_a_scope_rule_and_a_case() -> None:
    for op in OPERATIONS:
        assert op.scope in SCOPE_RULES, f"operation {op.name} has no scope rule (operations.SCOPE_RULES)"
        assert op.name in CASES, f"operation {op.name} has no case in tests/test_scopes.py CASES"
        if op.scope in ("read", "write", "target", "records"):
            assert "scope" in {p.name for p in op.params}, op.name


@pytest.fixture
def service(store_path: Path) -> Iterator[tuple[TestClient, Path]]:
    _store(store_path).close()
    app = create_app(store_path, token=ADMIN, scoped_tokens={TOKEN_A: ("user:a", "team:x")},
                     allow_hosts=("testserver",))
    with TestClient(app) as client:
        yield client, store_path


def _send(client: TestClient, op_name: str, params: dict[str, Any], token: str = TOKEN_A) -> Any:
    op = next(o for o in OPERATIONS if o.name == op_name)
    headers = {"Authorization": f"Bearer {token}"}
    if "_body" in params:
        q = {k: v for k, v in params.items() if k != "_body"}
        return client.post(op.path, content=params["_body"].encode(), params=q,
                           headers={**headers, "Content-Type": "application/x-ndjson"})
    if op.method == "GET":
        return client.get(op.path, params=params, headers=headers)
    return client.post(op.path, json=params, headers=headers)


def _written(client: TestClient) -> list[str]:
    """The store's export (as the admin token reads it), a line per JSON text."""
    doc = client.get("/export", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    return [json.dumps(line, sort_keys=True) for line in doc["lines"]]


@pytest.mark.parametrize("name", [op.name for op in OPERATIONS if "http" in op.surfaces])
def test_a_scoped_token_never_reads_or_writes_outside_its_scopes(service: tuple[TestClient, Path], name: str) -> None:
    client, _ = service
    op = next(o for o in OPERATIONS if o.name == name)
    inside, outside = CASES[name]
    before = _written(client)
    r = _send(client, name, inside)
    if op.scope == "admin":
        assert r.status_code == 403, r.text
        assert r.json()["code"] == "ScopeRefused" and "token bound to scopes" in r.json()["message"]
        assert _written(client) == before
        return
    assert r.status_code == 200, r.text
    assert _leaks(r.text) == [], (name, r.text)
    if op.write:  # what it wrote is in the token's first scope (or shared, for an entity)
        new = [json.loads(x) for x in _written(client) if x not in before]
        assert new, name
        for line in new:
            if line["op"] in ("assert", "end", "cite", "record"):
                assert line.get("scope") == "user:a", (name, line)
    if outside is None:
        return
    before = _written(client)
    r = _send(client, name, outside)
    assert r.status_code in (403, 404) or (name == "ingest" and r.json()["errors"]), (name, r.text)
    if r.status_code == 403:
        assert "outside this token's scopes" in r.json()["message"]
    # a refusal may name the ref it was given, never b's data
    assert (_leaks(r.text) if r.status_code == 200 else [MARK] if MARK in r.text else []) == [], (name, r.text)
    assert _written(client) == before, name


def test_the_admin_token_sees_every_scope_and_a_wrong_token_nothing(service: tuple[TestClient, Path]) -> None:
    client, _ = service
    r = _send(client, "current", {"subject": "Atlas"}, ADMIN)
    assert r.status_code == 200 and MARK in r.text and "scope" not in r.json()
    assert _send(client, "current", {"subject": "Atlas"}, "not-a-token-1234").status_code == 401
    health = client.get("/health", headers={"Authorization": f"Bearer {TOKEN_A}"}).json()
    assert health == {"schema": "graphmem.health.v1", "status": "ok", "scope": ["user:a", "team:x"]}
    r = _send(client, "current", {"subject": "Atlas", "scope": "team:x"})
    assert r.status_code == 200 and r.json()["facts"] == [] and r.json()["scope"] == ["team:x"]


def test_tokens_file_and_scoped_token_options_are_checked(tmp_path: Path, store_path: Path) -> None:
    _store(store_path).close()
    bad = tmp_path / "tokens.toml"
    bad.write_text('[[token]]\ntoken = "abcdefgh1"\nscopes = ["has space"]\n')
    one_clear_line(cli(store_path, "serve", "--tokens", str(bad)), 2, ["bad scope", "tokens.toml"])
    one_clear_line(cli(store_path, "serve", "--scoped-token", "abcdefgh1"), 2, ["--scoped-token", "TOKEN=SCOPE"])
    one_clear_line(cli(store_path, "serve", "--scoped-token", "short=user:a"), 2, ["bad token"])
    one_clear_line(cli(store_path, "serve", "--tokens", str(tmp_path / "missing.toml")), 2, ["cannot read"])


def test_a_scope_reads_as_a_store_of_its_statements_alone(mem: graphmem.Memory, new_store: Callable[[str], Path]) -> None:
    mem.assert_("Atlas", "status", "paused", valid_from="2024-03-01", scope="user:b")  # b supersedes, not a
    mem.end("Atlas", "uses", "Kuzu", at="2024-05-01", scope="user:a")
    lines = [json.loads(x) for x in mem.export_doc("jsonl", None).text.splitlines()]
    with graphmem.open(new_store("a"), create=True) as alone:
        alone.import_jsonl([json.dumps(x) for x in lines if x["op"] == "entity" or x.get("scope") == "user:a"])

        def shape(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
            return [(f["predicate"], json.dumps(f["object"]), f["valid_from"], f["valid_to"])
                    for f in doc["intervals"]]
        assert shape(mem.timeline("Atlas", scope="user:a").to_dict()) == shape(alone.timeline("Atlas").to_dict())
        for t in ("2024-02-01", "2024-04-01", "2024-06-01"):
            assert [(f.predicate, f.object) for f in mem.current("Atlas", as_of=t, scope="user:a").facts] == \
                [(f.predicate, f.object) for f in alone.current("Atlas", as_of=t).facts]
