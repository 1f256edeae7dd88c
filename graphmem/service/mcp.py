"""graphmem as an agent's memory over the Model Context Protocol (``graphmem mcp``, stdio).

Read tools: current, timeline, facts, why, search, recommend, pack. Write tools: assert,
end, retract, ingest (an agent's statements are recorded ``by: agent``), offered only when
the server is started with ``--allow-writes``: without it they are not in the tool list, so
an agent cannot change the store. Each returns the same JSON document as the CLI's ``--json``;
bad input is a tool error carrying the CLI's one-line message. The store is opened at the
first call and held until the session ends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

READ_ONLY = " Read-only: it never changes the store."
WRITES = (" Writes to the store (offered because this server was started with --allow-writes); statements "
          "are recorded by: agent.")


def build_server(store: Path, *, allow_writes: bool = False) -> tuple[Any, dict[str, Any]]:
    """The MCP server, and the dict that holds its open store (under "m") once a tool has run.
    The write tools are registered only with ``allow_writes``."""
    from mcp.server.fastmcp import FastMCP

    from graphmem.errors import GraphmemError
    from graphmem.memory import Memory

    held: dict[str, Any] = {}
    server = FastMCP("graphmem", log_level="WARNING", instructions=(
        "graphmem is a local knowledge-graph memory of typed entities and time-stamped facts. Ask what is "
        "true now or at a date (current, timeline, facts), why it is believed (why), search the evidence "
        "records (search), match an idea to projects with explained paths (recommend), or get a small cited "
        "context bundle for a question (pack). " + (
            "Record what you learn with assert, end, retract and ingest." if allow_writes else
            "This server is read-only: it was started without --allow-writes, so it offers no tool that writes.")))

    def run(fn: Any) -> dict[str, Any]:
        try:
            if "m" not in held:
                held["m"] = Memory(store, read_only=not allow_writes)  # a read-only session lets others read too
            r = fn(held["m"])
            doc: dict[str, Any] = r if isinstance(r, dict) else r.to_dict()
            return doc
        except GraphmemError as e:
            raise ValueError(str(e)) from None

    @server.tool(description="What holds for an entity (ref, name or alias) at as_of, as known at known_at "
                             "(ISO dates; default now). Returns graphmem.current.v1." + READ_ONLY)
    def current(subject: str, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None) -> dict[str, Any]:
        return run(lambda m: m.current(subject, as_of=as_of, known_at=known_at, predicate=predicate))

    @server.tool(description="Every interval of an entity's facts over time, and the statements behind them." + READ_ONLY)
    def timeline(subject: str, predicate: str | None = None, known_at: str | None = None) -> dict[str, Any]:
        return run(lambda m: m.timeline(subject, predicate=predicate, known_at=known_at))

    @server.tool(description="Facts holding at as_of, filtered by predicate, object and subject type "
                             "(e.g. predicate=uses, object=kuzu: which projects use Kuzu)." + READ_ONLY)
    def facts(predicate: str | None = None, object: str | None = None, subject_type: str | None = None,  # noqa: A002
              as_of: str | None = None) -> dict[str, Any]:
        return run(lambda m: m.facts(predicate=predicate, object=object, subject_type=subject_type, as_of=as_of))

    @server.tool(description="Why a statement (fact:N) is believed: its sources, supersession, conflicts, retraction."
                              + READ_ONLY)
    def why(fact: str) -> dict[str, Any]:
        return run(lambda m: m.why(fact))

    @server.tool(description="BM25 full-text search over the evidence records." + READ_ONLY)
    def search(query: str, limit: int = 10) -> dict[str, Any]:
        return run(lambda m: m.search(query, limit=limit))

    @server.tool(description="The projects an idea fits best, each with graph paths whose every step cites a fact."
                              + READ_ONLY)
    def recommend(idea: str, top: int = 5, as_of: str | None = None, known_at: str | None = None) -> dict[str, Any]:
        return run(lambda m: m.recommend(idea, top=top, as_of=as_of, known_at=known_at))

    @server.tool(description="A small cited context bundle for a question, within a token budget; bundle_text is "
                             "ready to put in a prompt." + READ_ONLY)
    def pack(query: str, budget_tokens: int = 1000, as_of: str | None = None, known_at: str | None = None,
             trace: bool = False) -> dict[str, Any]:
        return run(lambda m: m.pack(query, budget_tokens=budget_tokens, as_of=as_of, known_at=known_at, trace=trace))

    if not allow_writes:
        return server, held

    @server.tool(name="assert", description="Record that subject predicate object holds from valid_from (default now), "
                                            "citing sources (URIs or rec:N). Returns the new fact:N." + WRITES)
    def assert_(subject: str, predicate: str, object: str, valid_from: str | None = None,  # noqa: A002
                valid_to: str | None = None, sources: list[str] | None = None) -> dict[str, Any]:
        return run(lambda m: m.assert_(subject, predicate, object, valid_from=valid_from, valid_to=valid_to,
                                       sources=sources or [], by="agent"))

    @server.tool(description="Record that what holds for subject predicate [object] stops holding at a time."
                              + WRITES)
    def end(subject: str, predicate: str, at: str, object: str | None = None,  # noqa: A002
            sources: list[str] | None = None) -> dict[str, Any]:
        return run(lambda m: m.end(subject, predicate, object, at=at, sources=sources or [], by="agent"))

    @server.tool(description="Withdraw a statement (fact:N) that was wrong; history keeps it." + WRITES)
    def retract(fact: str, reason: str | None = None) -> dict[str, Any]:
        return run(lambda m: m.retract(fact, reason))

    @server.tool(description="Store evidence records: each an object with text (required), ts, kind, source, scope, "
                              "id." + WRITES)
    def ingest(records: list[dict[str, Any]]) -> dict[str, Any]:
        return run(lambda m: m.ingest([json.dumps(r).encode("utf-8") for r in records]))

    return server, held


def serve_stdio(store: Path, *, allow_writes: bool = False) -> None:
    server, held = build_server(store, allow_writes=allow_writes)
    try:
        server.run("stdio")
    finally:
        m = held.pop("m", None)
        if m is not None:
            m.close()
