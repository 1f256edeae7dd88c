"""graphmem mcp: the Model Context Protocol server over stdio, driven by the mcp package's own client."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import graphmem

READ = {"current", "timeline", "facts", "why", "search", "recommend", "pack"}
WRITE = {"assert", "end", "retract", "ingest"}


async def _session(store: Path, script: Any, *args: str) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=sys.executable, args=[
        "-c", "from graphmem.cli import main; main()", "--store", str(store), "mcp", *args])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        return await script(s)


def _doc(res: Any) -> dict[str, Any]:
    assert not res.isError, res.content[0].text
    doc = json.loads(res.content[0].text)
    assert isinstance(doc, dict)
    return doc


def test_agent_reads_and_writes_through_mcp(tmp_path: Path, demo_dir: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_dir, store)

    async def script(s: Any) -> dict[str, Any]:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        out: dict[str, Any] = {"tools": tools}
        out["current"] = _doc(await s.call_tool("current", {"subject": "atlas", "as_of": "2025-06-01",
                                                            "known_at": "2026-01-01"}))
        out["pack"] = _doc(await s.call_tool("pack", {"query": "Atlas Kuzu", "budget_tokens": 200}))
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
    with graphmem.open(demo_dir) as m:
        assert out["current"] == m.current("atlas", as_of="2025-06-01", known_at="2026-01-01").to_dict()
    assert out["pack"]["meta"]["used_tokens"] <= 200 and out["pack"]["bundle_text"]
    assert out["recommend"]["results"]
    fact = out["assert"]["created"][0]
    assert out["assert"]["fact"]["asserted_by"] == "agent"
    assert out["bad"].isError and "unknown subject 'nobody'" in out["bad"].content[0].text
    assert "Traceback" not in out["bad"].content[0].text
    assert out["search"]["results"][0]["snippet"].startswith("Ferry caches")
    with graphmem.open(store) as m:  # the writes landed in the store
        assert any(fact in f["assertions"] for f in m.current("ferry", predicate="uses").to_dict()["facts"])


def test_agent_cannot_write_without_allow_writes(tmp_path: Path, demo_dir: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_dir, store)

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
    with graphmem.open(demo_dir) as m:
        want = m.current("ferry", predicate="uses").to_dict()
        counts = {k: v for k, v in m.info().to_dict().items() if k != "store"}
    assert out["current"]["facts"] == want["facts"]
    with graphmem.open(store) as m:  # nothing was written
        assert {k: v for k, v in m.info().to_dict().items() if k != "store"} == counts
        assert m.search("quokkafish").to_dict()["results"] == []
