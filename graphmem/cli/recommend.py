"""Ideas to projects, and the paths between entities: recommend, path."""

from __future__ import annotations

from typing import Annotated

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, ScopesOpt, WideOpt, emit, errors, memory

When = "ISO-8601 date or datetime, or 'now'."


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend)
    app.command("path")(path)


def recommend(
    ctx: typer.Context,
    idea: Annotated[str, typer.Argument(metavar="IDEA", help="The idea, in words (quote it).")],
    top: Annotated[int, typer.Option("--top", "-n", metavar="N", help="How many projects (1-100).")] = 5,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help=f"Valid time of the graph (default: now). {When}")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", metavar="T", help=f"Record time (default: now). {When}")] = None,
    max_hops: Annotated[int, typer.Option("--max-hops", metavar="N", help="Longest path from a seed to a project (1-4).")] = 3,
    paths: Annotated[int, typer.Option("--paths", metavar="K", help="Paths shown per project (1-10).")] = 3,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The projects IDEA fits best, each with the graph paths that carry its score."""
    with errors(), memory(ctx, lookup=True) as m:  # a bounded neighbourhood (BEAM): a lookup's page cache
        r = m.recommend(idea, top=top, as_of=as_of, known_at=known_at, max_hops=max_hops, paths=paths, scope=scope)
        emit(ctx, r.to_dict(), render.recommend)


def path(
    ctx: typer.Context,
    src: Annotated[str, typer.Argument(metavar="FROM", help="Entity ref, name or alias.")],
    dst: Annotated[str, typer.Argument(metavar="TO", help="Entity ref, name or alias.")],
    max_hops: Annotated[int, typer.Option("--max-hops", metavar="N", help="Longest path (1-6).")] = 4,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help=f"Valid time of the graph (default: now). {When}")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", metavar="T", help=f"Record time (default: now). {When}")] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", metavar="K", help="How many shortest paths (1-50).")] = 3,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
) -> None:
    """The shortest explained paths between FROM and TO, along edges valid then in either direction."""
    with errors(), memory(ctx, lookup=True) as m:
        r = m.paths(src, dst, max_hops=max_hops, limit=limit, as_of=as_of, known_at=known_at, scope=scope)
        emit(ctx, r.to_dict(), render.path)
