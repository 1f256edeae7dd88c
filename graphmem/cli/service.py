"""The local service: serve."""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import errors, store_path


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)


def mcp(ctx: typer.Context) -> None:
    """Serve the store to an agent over the Model Context Protocol on stdin and stdout."""
    from graphmem.agent import serve_stdio
    with errors():
        serve_stdio(store_path(ctx))


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", metavar="HOST", help="Address to bind; beyond loopback needs --token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="TCP port.")] = 8765,
    token: Annotated[str | None, typer.Option("--token", metavar="TOKEN", envvar="GRAPHMEM_TOKEN",
                                              help="Require 'Authorization: Bearer TOKEN' on every request.")] = None,
    max_body_mb: Annotated[int, typer.Option("--max-body-mb", metavar="MB", help="Largest request body (413 beyond).")] = 16,
) -> None:
    """Serve the store over HTTP JSON (docs/service.md) until Ctrl-C or SIGTERM."""
    from graphmem.errors import BadInput
    from graphmem.service import check_bind
    from graphmem.service import serve as run
    with errors():
        if not 1 <= port <= 65535:
            raise BadInput(f"bad port {port}: expected 1 to 65535")
        if not 1 <= max_body_mb <= 4096:
            raise BadInput(f"bad --max-body-mb {max_body_mb}: expected 1 to 4096")
        check_bind(host, token)
        typer.echo(f"graphmem: serving {store_path(ctx)} on http://{host}:{port} (docs at /docs)", err=True)
        run(store_path(ctx), host, port, token, max_body_mb * 2**20)
