"""graphmem mcp: the Model Context Protocol server over stdio, driven by the mcp package's own client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import copy_demo

import graphmem

READ = {"current", "timeline", "facts", "why", "entity", "entities", "search", "recommend", "path", "pack", "lint"}
WRITE = {"assert", "end", "retract", "cite", "ingest", "note", "entity_rename", "entity_alias_add", "entity_alias_remove",
         "entity_merge", "entity_unmerge", "lifecycle", "revive"}


async def _session(store: Path, script: Any, *args: str) -> dict[str, Any]:
    """The script's answers (a dict) over a session with ``graphmem mcp``, and the initialize result as "init"."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=sys.executable, args=[
        "-c", "from graphmem.cli import main; main()", "--store", str(store), "mcp", *args])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        init = await s.initialize()
        out: dict[str, Any] = await script(s)
        return out | {"init": init}


def _doc(res: Any) -> dict[str, Any]:
    assert not res.isError, res.content[0].text
    doc = json.loads(res.content[0].text)
    assert isinstance(doc, dict)
    return doc


def test_agent_reads_and_writes_through_mcp(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)

    async def script(s: Any) -> dict[str, Any]:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        out: dict[str, Any] = {"tools": tools}
        out["current"] = _doc(await s.call_tool("current", {"subject": "atlas", "as_of": "2025-06-01",
                                                            "known_at": "2026-01-01"}))
        out["pack"] = _doc(await s.call_tool("pack", {"query": "Atlas Kuzu", "budget_tokens": 200,
                                                      "format": "json"}))
        out["recommend"] = _doc(await s.call_tool("recommend", {"idea": "graph database", "top": 2}))
        out["assert"] = _doc(await s.call_tool("assert", {"subject": "ferry", "predicate": "uses", "object": "redis",
                                                          "valid_from": "2026-11-01", "sources": ["rec:40"]}))
        out["ingest"] = _doc(await s.call_tool("ingest", {"records": [{"text": "Ferry caches with Redis now.",
                                                                       "ts": "2026-11-02T09:00:00Z"}]}))
        out["bad"] = await s.call_tool("current", {"subject": "nobody"})
        out["search"] = _doc(await s.call_tool("search", {"query": "redis caches"}))
        return out

    out = asyncio.run(_session(store, script, "--allow-writes"))
    assert set(out["tools"]) == READ | WRITE
    for t in out["tools"].values():
        assert t.description and t.inputSchema["type"] == "object"
        assert ("--allow-writes" in t.description) == (t.name in WRITE), t.description
        assert ("Read-only" in t.description) == (t.name in READ), t.description
    assert "subject" in out["tools"]["current"].inputSchema["required"]
    assert out["pack"]["meta"]["used_tokens"] <= 200 and out["pack"]["bundle_text"]
    assert out["recommend"]["results"]
    fact = out["assert"]["created"][0]
    assert out["assert"]["fact"]["asserted_by"] == "agent"
    assert out["bad"].isError and "unknown subject 'nobody'" in out["bad"].content[0].text
    assert "Traceback" not in out["bad"].content[0].text
    assert out["search"]["results"][0]["snippet"].startswith("Ferry caches")
    with graphmem.open(store) as m:  # the writes landed in the store
        assert out["current"] == m.current("atlas", as_of="2025-06-01", known_at="2026-01-01").to_dict()
        assert any(fact in f["assertions"] for f in m.current("ferry", predicate="uses").to_dict()["facts"])


def test_agent_cannot_write_without_allow_writes(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    with graphmem.open(store) as m:
        want = m.current("ferry", predicate="uses").to_dict()
        counts = m.info().to_dict()

    async def script(s: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["assert"] = await s.call_tool("assert", {"subject": "ferry", "predicate": "uses", "object": "redis"})
        out["ingest"] = await s.call_tool("ingest", {"records": [{"text": "Ferry caches quokkafish data now."}]})
        out["current"] = _doc(await s.call_tool("current", {"subject": "ferry", "predicate": "uses"}))
        return out

    out = asyncio.run(_session(store, script))
    assert set(out["tools"]) == READ  # the write tools are not offered at all
    for t in out["tools"].values():
        assert "Read-only" in t.description and "--allow-writes" not in t.description
    for name in ("assert", "ingest"):
        assert out[name].isError and name in out[name].content[0].text
    assert out["current"]["facts"] == want["facts"]
    with graphmem.open(store) as m:  # nothing was written
        assert m.info().to_dict() == counts
        assert m.search("quokkafish").to_dict()["results"] == []


def test_server_names_itself_and_describes_every_tool_and_parameter(store_path: Path) -> None:
    graphmem.open(store_path, create=True).close()

    async def script(s: Any) -> dict[str, Any]:
        return {"tools": {t.name: t for t in (await s.list_tools()).tools}}

    out = asyncio.run(_session(store_path, script, "--allow-writes"))
    info = out["init"].serverInfo
    assert (info.name, info.version) == ("graphmem", graphmem.__version__)  # not the SDK's name and version
    assert "read-only" not in out["init"].instructions and "path" in out["init"].instructions
    for name, t in out["tools"].items():
        assert len(t.description) > 40, name
        props = t.inputSchema["properties"]
        assert set(t.inputSchema["required"]) <= set(props), name
        for p, schema in props.items():
            assert schema.get("description"), f"{name}.{p} has no description"
        assert t.annotations.readOnlyHint is (name in READ), name
    assert "by" not in out["tools"]["assert"].inputSchema["properties"]  # an agent's statements are by: agent
    assert out["tools"]["pack"].inputSchema["properties"]["format"]["enum"] == ["text", "json"]
    assert out["tools"]["path"].inputSchema["required"] == ["from", "to"]
    assert out["tools"]["assert"].inputSchema["properties"]["object"]["type"] == "string"  # as it was


def test_path_entity_lookup_and_lint_tools(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    async def script(s: Any) -> dict[str, Any]:
        return {
            "path": _doc(await s.call_tool("path", {"from": "quill", "to": "kuzu", "as_of": "2026-01-01",
                                                    "known_at": "2026-01-01"})),
            "entity": _doc(await s.call_tool("entity", {"ref": "KuzuDB"})),  # an alias
            "by_type": _doc(await s.call_tool("entities", {"type": "Tool"})),
            "matching": _doc(await s.call_tool("entities", {"match": "kuzudb", "limit": 5})),
            "lint": _doc(await s.call_tool("lint", {"code": "missing_source", "limit": 3})),
            "lint_all": _doc(await s.call_tool("lint", {"fail_on": "warning"})),
            "bad_type": await s.call_tool("entities", {"type": "Spaceship"}),
            "bad_limit": await s.call_tool("lint", {"limit": "lots"}),
            "negative": await s.call_tool("entities", {"limit": -1}),
            "unknown": await s.call_tool("path", {"from": "quill", "to": "nowhere-land"}),
        }

    out = asyncio.run(_session(store, script))
    with graphmem.open(store) as m:
        assert out["path"] == m.paths("quill", "kuzu", as_of="2026-01-01", known_at="2026-01-01").to_dict()
        assert out["path"]["paths"] and out["path"]["to"]["ref"] == "tool:kuzu"
        assert out["entity"] == m.show_entity("tool:kuzu").to_dict()
        assert out["by_type"] == m.list_entities("Tool").to_dict()
        lint = m.lint().to_dict("warning")
    assert out["matching"]["entities"] == [out["entity"]["entity"]]  # found by its alias
    assert out["lint_all"] == lint
    missing = [i for i in lint["issues"] if i["code"] == "missing_source"]
    assert len(missing) > 3 and out["lint"]["issues"] == missing[:3]
    assert out["lint"]["counts"] == lint["counts"]  # the counts cover every issue
    assert out["bad_type"].isError and "Spaceship" in out["bad_type"].content[0].text
    assert out["bad_limit"].content[0].text == "bad limit 'lots': expected a whole number"
    assert out["negative"].content[0].text == "bad limit -1: expected a whole number, 0 or more"
    assert out["unknown"].isError and "nowhere-land" in out["unknown"].content[0].text


def test_pack_answers_with_the_bundle_text_and_its_refs(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    args = {"query": "Can we move Atlas to a hosted graph database", "budget_tokens": 300,
            "as_of": "2026-11-20", "known_at": "2026-11-20"}

    async def script(s: Any) -> dict[str, Any]:
        return {"text": await s.call_tool("pack", args),
                "json": _doc(await s.call_tool("pack", args | {"format": "json"})),
                "q": _doc(await s.call_tool("pack", {"q": args["query"], "format": "json", "as_of": "2026-11-20",
                                                     "known_at": "2026-11-20", "budget_tokens": 300})),
                "empty": await s.call_tool("pack", args | {"budget_tokens": 5}),
                "bad": await s.call_tool("pack", args | {"format": "yaml"})}

    out = asyncio.run(_session(store, script))
    with graphmem.open(store) as m:
        want = m.pack(args["query"], budget_tokens=300, as_of="2026-11-20", known_at="2026-11-20").to_dict()
    assert out["json"] == want and out["q"] == want  # q, HTTP's name, is taken too
    assert not out["text"].isError and len(out["text"].content) == 1
    text = out["text"].content[0].text
    bundle, refs = text.split("\n\nRefs:\n")
    assert bundle == want["bundle_text"]
    cited = [line.split(":", 2)[0] + ":" + line.split(":", 2)[1] for line in refs.splitlines()]
    assert [c.removeprefix("- ") for c in cited] == [c["ref"] for c in want["citations"]]
    assert "https://" in refs and "rec:" in refs  # where each fact comes from
    assert out["empty"].content[0].text.startswith("(empty bundle) a budget of 5 tokens holds nothing")
    assert out["bad"].isError and out["bad"].content[0].text == "bad format 'yaml': expected text or json"


# Where the two surfaces differ on purpose (docs/service.md): MCP shows query for HTTP's q (both take
# either), has no by (an agent's statements are by: agent), takes ingest's records as a parameter (HTTP:
# JSON lines in the body) and pack's format (text or json).
MCP_ONLY = {"format", "records"}
HTTP_ONLY = {"by", "redact"}  # an agent can neither name another asserter nor store secrets unmasked
RENAMED = {"q": "query"}


def test_tools_and_endpoints_have_the_same_parameters(store_path: Path) -> None:
    from graphmem.service.http import openapi
    graphmem.open(store_path, create=True).close()

    async def script(s: Any) -> dict[str, Any]:
        return {"tools": {t.name: t for t in (await s.list_tools()).tools}}

    tools = asyncio.run(_session(store_path, script, "--allow-writes"))["tools"]
    spec = openapi()["paths"]
    ops = {op["operationId"]: op for path in spec.values() for op in path.values() if "operationId" in op}
    assert set(tools) <= set(ops)  # every tool is an endpoint too
    for name, tool in tools.items():
        op = ops[name]
        http = {p["name"]: p for p in op.get("parameters", [])}
        body = op.get("requestBody", {}).get("content", {}).get("application/json")
        if body and "properties" in body["schema"]:  # a JSON object (import and ingest: JSON lines)
            http |= {k: v | {"required": k in body["schema"]["required"]}
                     for k, v in body["schema"]["properties"].items()}
        want = {RENAMED.get(k, k) for k in http} - HTTP_ONLY
        assert set(tool.inputSchema["properties"]) - MCP_ONLY == want, name
        for k, p in http.items():
            if k in HTTP_ONLY:
                continue
            mcp = tool.inputSchema["properties"][RENAMED.get(k, k)]
            assert mcp["description"] == p["description"], (name, k)
            assert (RENAMED.get(k, k) in tool.inputSchema["required"]) == p["required"], (name, k)
            assert mcp.get("default") == (p.get("schema") or p).get("default"), (name, k)


def test_pack_text_names_every_kind_of_citation() -> None:
    from graphmem.service.operations import pack_text
    doc = {"bundle_text": "- Atlas has 3 stars [fact:7; rec:2]", "meta": {"message": None}, "citations": [
        {"ref": "fact:7", "kind": "fact", "subject": "project:atlas", "predicate": "stars",
         "object": {"kind": "literal", "value": 3}, "valid_from": "2025-01-06T00:00:00Z", "valid_to": None,
         "asserted_by": "agent", "trust": "low", "sources": []},
        {"ref": "fact:8", "kind": "fact", "subject": None, "predicate": None, "object": None, "valid_from": None,
         "valid_to": None, "asserted_by": None, "trust": None, "sources": []},
        {"ref": "rec:2", "kind": "record", "ts": "2025-01-06T09:00:00Z", "record_kind": "note", "source": None},
        {"ref": "tool:kuzu", "kind": "entity", "type": "Tool", "name": "Kuzu"}]}
    assert pack_text(doc).split("\n") == [
        "- Atlas has 3 stars [fact:7; rec:2]", "", "Refs:",
        "- fact:7: project:atlas stars 3, from 2025-01-06, by agent (low trust); sources: none",
        "- fact:8: not found in the store",
        "- rec:2: note from an unnamed source, 2025-01-06T09:00:00Z",
        "- tool:kuzu: Tool Kuzu"]
