"""graphmem as an agent's memory over the Model Context Protocol (``graphmem mcp``, stdio).

The tools are the operations of ``operations.py`` offered over MCP, so they have the HTTP service's
parameters, descriptions and checks. Read tools: current, timeline, facts, why, entity, entities,
search, recommend, path, pack, lint. Write tools: assert, end, retract, ingest (an agent's statements
are recorded ``by: agent``), offered only when the server is started with ``--allow-writes``:
without it they are not in the tool list, so an agent cannot change the store. Each returns the
same JSON document as the CLI's ``--json`` (``pack``: the bundle text and its refs, the JSON with
``format="json"``); bad input is a tool error carrying the CLI's one-line message. The store is
opened at the first call and held until the session ends. The server is the SDK's low-level
``Server``, given each tool's JSON Schema from the table and graphmem's own name and version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphmem.config import StoreAddress
from graphmem.service.operations import OPERATIONS, Operation, check, document

READ_ONLY = " Read-only: it never changes the store."
WRITES = (" Writes to the store (offered because this server was started with --allow-writes); statements "
          "are recorded by: agent.")


class ToolError(Exception):
    """A tool call that fails: the SDK answers it as a tool error carrying this one line."""


def tools(allow_writes: bool = False) -> dict[str, Operation]:
    """The operations offered as tools, by name: the write tools only with ``allow_writes``."""
    return {op.name: op for op in OPERATIONS if "mcp" in op.surfaces and (allow_writes or not op.write)}


def description(op: Operation) -> str:
    """The tool's description: what it does and returns, how to use it, and whether it writes."""
    return " ".join(x for x in (op.summary + ".", op.guide) if x) + (WRITES if op.write else READ_ONLY)


def instructions(allow_writes: bool) -> str:
    return ("graphmem is a local knowledge-graph memory of typed entities and time-stamped facts. Ask what is "
            "true now or at a date (current, timeline, facts), why it is believed (why), look entities up by "
            "name, alias or type (entity, entities), search the evidence records (search), match an idea to "
            "projects with explained paths (recommend), find how two entities are connected (path), check the "
            "store (lint), or get a small cited context bundle for a question (pack). " + (
                "Record what you learn with assert, end, retract and ingest." if allow_writes else
                "This server is read-only: it was started without --allow-writes, so it offers no tool that "
                "writes."))


def build_server(store: Path | StoreAddress, *, allow_writes: bool = False) -> tuple[Any, dict[str, Any]]:
    """The MCP server, and the dict that holds its open store (under "m") once a tool has run.
    The write tools are registered only with ``allow_writes``."""
    from mcp import types
    from mcp.server.lowlevel import Server

    from graphmem import __version__
    from graphmem.errors import GraphmemError
    from graphmem.memory import Memory

    held: dict[str, Any] = {}
    offered = tools(allow_writes)
    server: Any = Server("graphmem", version=__version__, instructions=instructions(allow_writes))
    listed = [types.Tool(name=op.name, description=description(op),
                         inputSchema=op.input_schema("mcp"),
                         annotations=types.ToolAnnotations(  # the writes only add: retract keeps history
                             readOnlyHint=not op.write, destructiveHint=False if op.write else None,
                             idempotentHint=False if op.write else None, openWorldHint=False))
              for op in offered.values()]

    @server.list_tools()  # type: ignore[untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return listed

    # The SDK's handler (1.10 and later) makes the result: a list of content is the answer as text, a
    # (content, document) pair adds the structured document, and an exception's one line is a tool error.
    # The checks are graphmem's own (check), as over HTTP: the same messages, the aliases, numbers as text.
    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> Any:
        op = offered.get(name)
        if op is None:
            more = "" if allow_writes or name not in tools(True) else (
                f"; {name} writes, and this server was started without --allow-writes")
            raise ToolError(f"unknown tool {name!r}: expected one of {', '.join(offered)}{more}")
        try:
            params = check(op, arguments or {}, "mcp", from_text=True)
            if "m" not in held:
                held["m"] = Memory(store, read_only=not allow_writes)  # a read-only session lets others read too
            doc = document(op.call(held["m"], params))
        except GraphmemError as e:
            raise ToolError(str(e)) from None
        except Exception as e:  # a bug: still one line, and say it is one
            raise ToolError(f"internal error ({type(e).__name__}: {e}); please report it") from None
        if op.text is not None and params.get("format") == "text":
            return [types.TextContent(type="text", text=op.text(doc))]
        return [types.TextContent(type="text", text=json.dumps(doc, ensure_ascii=False))], doc

    return server, held


def serve_stdio(store: Path | StoreAddress, *, allow_writes: bool = False) -> None:
    import logging

    import anyio
    from mcp.server.stdio import stdio_server

    server, held = build_server(store, allow_writes=allow_writes)
    logging.getLogger("mcp").setLevel(logging.ERROR)  # not "tool 'assert' not listed" for a refused write tool

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        m = held.pop("m", None)
        if m is not None:
            m.close()
