"""The local service: serve."""

from __future__ import annotations

from typing import Annotated

import typer

from graphmem.cli.common import errors, store_path


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)


def mcp(
    ctx: typer.Context,
    allow_writes: Annotated[bool, typer.Option(
        "--allow-writes", help="Also offer the write tools (assert, end, retract, ingest); without it the agent "
                               "can only read.")] = False,
) -> None:
    """Serve the store to an agent over the Model Context Protocol on stdin and stdout (read-only unless
    --allow-writes)."""
    from graphmem.service.mcp import serve_stdio
    with errors():
        serve_stdio(store_path(ctx), allow_writes=allow_writes)


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", metavar="HOST", help="Address to bind; beyond loopback needs --token "
                                                                     "(or scoped tokens).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="TCP port.")] = 8765,
    token: Annotated[str | None, typer.Option("--token", metavar="TOKEN", envvar="GRAPHMEM_TOKEN",
                                              help="Require 'Authorization: Bearer TOKEN' on every request (the "
                                                   "admin token: every scope and every operation).")] = None,
    tokens: Annotated[str | None, typer.Option(
        "--tokens", metavar="FILE", help="Also accept the tokens of a TOML file of [[token]] tables (token = "
                                         "\"...\", scopes = [\"agent:7\"]), each bound to its scopes "
                                         "(docs/scopes.md).")] = None,
    scoped_token: Annotated[list[str] | None, typer.Option(
        "--scoped-token", metavar="TOKEN=SCOPES", help="Also accept TOKEN, bound to the comma-separated SCOPES: its "
                                                       "requests never read or write outside them; repeatable.")] = None,
    max_body_mb: Annotated[int, typer.Option("--max-body-mb", metavar="MB", help="Largest request body (413 beyond).")] = 16,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", metavar="HOST", help="Also answer requests whose Host header is HOST (NAME for any port, "
                                             "NAME:PORT, or * for any); repeatable. By default only the loopback "
                                             "names and the bound address, with the port (403 otherwise).")] = None,
    allow_origin: Annotated[list[str] | None, typer.Option(
        "--allow-origin", metavar="ORIGIN", help="Also answer requests from pages at ORIGIN (e.g. "
                                                 "http://localhost:3000), with CORS headers; repeatable. By default a "
                                                 "request with another site's Origin is refused (403).")] = None,
    workers: Annotated[int, typer.Option("--workers", metavar="N", help="Worker processes sharing the port, each with "
                                         "its own connection (PostgreSQL stores only; Kuzu and LadybugDB are "
                                         "served by 1, as one process holds their lock).")] = 1,
) -> None:
    """Serve the store over HTTP JSON (docs/service.md) until Ctrl-C or SIGTERM.

    Requests a web page on another site could make a browser send are refused: a Host header
    that is not one of the server's names, an Origin that is not its own, and a POST whose
    Content-Type is not application/json (for /import and /ingest, also application/x-ndjson or
    application/jsonl)."""
    from graphmem.errors import BadInput
    from graphmem.service.guard import (
        check_allow_host,
        check_allow_origin,
        check_bind,
        load_tokens,
        parse_scoped_token,
        url_host,
    )
    from graphmem.service.http import check_servable, check_workers
    from graphmem.service.http import serve as run
    with errors():
        if not 1 <= port <= 65535:
            raise BadInput(f"bad port {port}: expected 1 to 65535")
        if not 1 <= max_body_mb <= 4096:
            raise BadInput(f"bad --max-body-mb {max_body_mb}: expected 1 to 4096")
        scoped = load_tokens(tokens) if tokens else {}
        for value in scoped_token or ():
            t, bound = parse_scoped_token(value)
            if t in scoped:
                raise BadInput("bad --scoped-token: its token is given twice; expected each token once")
            scoped[t] = bound
        if token is not None and token in scoped:
            raise BadInput("the --token is also given as a scoped token: expected a token to be one or the other")
        check_bind(host, token, bool(scoped))
        hosts = tuple(check_allow_host(h) for h in allow_host or ())
        origins = tuple(check_allow_origin(o) for o in allow_origin or ())
        check_servable(store_path(ctx))  # before saying it serves
        check_workers(store_path(ctx), workers)
        many = f" with {workers} workers" if workers > 1 else ""
        typer.echo(f"graphmem: serving {store_path(ctx)} on http://{url_host(host)}:{port}{many} (docs at /docs)",
                   err=True)
        if host in ("0.0.0.0", "::") and not hosts:
            typer.echo("graphmem: requests must name 127.0.0.1, localhost or [::1] in Host; add --allow-host NAME "
                       "for each name clients use", err=True)
        run(store_path(ctx), host, port, token, max_body_mb * 2**20, allow_hosts=hosts, allow_origins=origins,
            scoped_tokens=scoped, workers=workers)
