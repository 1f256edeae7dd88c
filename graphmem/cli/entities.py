"""``graphmem entity add|show|list``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, WideOpt, emit, errors, memory
from graphmem.cli.tables import LIST, TEXT, Col

app = typer.Typer(help="Add and look up entities.", no_args_is_help=True)


@app.command("add")
def add(
    ctx: typer.Context,
    type_: Annotated[str, typer.Argument(metavar="TYPE", help="Entity type from the ontology (Project, Tool, ...).")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="The entity's name; its ref is type:slug-of-name.")],
    alias: Annotated[list[str] | None, typer.Option("--alias", "-a", metavar="ALIAS", help="Another name (repeatable).")] = None,
    description: Annotated[str, typer.Option("--description", "-d", metavar="TEXT", help="One or two sentences.")] = "",
    json_: JsonOpt = False,
) -> None:
    """Add an entity; prints its ref."""
    with errors(), memory(ctx, write=True) as m:
        r = m.add_entity(type_, name, alias or [], description)
        emit(ctx, r.to_dict(), lambda d: render.out(d["created"][0]))


@app.command("show")
def show(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(metavar="REF", help="Ref, name or alias.")],
    json_: JsonOpt = False,
) -> None:
    """Show one entity."""
    with errors(), memory(ctx, lookup=True) as m:
        doc = m.show_entity(ref).to_dict()

        def human(d: dict[str, Any]) -> None:
            x = d["entity"]
            render.out(f"{x['ref']}  {x['type']}  {x['name']}")
            if x["aliases"]:
                render.out("aliases: " + ", ".join(x["aliases"]))
            if x["description"]:
                render.out(x["description"])
        emit(ctx, doc, human)


@app.command("list")
def list_(
    ctx: typer.Context,
    type_: Annotated[str | None, typer.Option("--type", "-t", metavar="TYPE", help="Only this entity type.")] = None,
    match: Annotated[str | None, typer.Option("--match", "-m", metavar="TEXT", help="Name, alias or ref containing this text.")] = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """List entities, by type then ref."""
    with errors(), memory(ctx) as m:
        doc = m.list_entities(type_, match).to_dict()
        emit(ctx, doc, lambda d: render.table([Col("ref"), Col("type", drop=1), Col("name", TEXT),
                                               Col("aliases", LIST, drop=2)], [
            [e["ref"], e["type"], e["name"], ", ".join(e["aliases"])] for e in d["entities"]]))
