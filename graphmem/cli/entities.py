"""``graphmem entity add|show|list|rename|merge|unmerge`` and ``graphmem entity alias add|remove``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, WideOpt, emit, errors, memory
from graphmem.cli.tables import LIST, TEXT, Col

app = typer.Typer(help="Add, look up, rename and merge entities.", no_args_is_help=True)
alias_app = typer.Typer(help="Add and remove an entity's aliases.", no_args_is_help=True)
app.add_typer(alias_app, name="alias")

Ref = Annotated[str, typer.Argument(metavar="REF", help="Entity ref, name or alias.")]
Aliases = Annotated[list[str], typer.Argument(metavar="ALIAS...", help="One or more aliases.")]


@app.command("add")
def add(
    ctx: typer.Context,
    type_: Annotated[str, typer.Argument(metavar="TYPE", help="Entity type from the ontology (Project, Tool, ...).")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="The entity's name; its ref is type:slug-of-name.")],
    alias: Annotated[list[str] | None, typer.Option("--alias", "-a", metavar="ALIAS", help="Another name (repeatable).")] = None,
    description: Annotated[str, typer.Option("--description", "-d", metavar="TEXT", help="One or two sentences.")] = "",
    json_: JsonOpt = False,
) -> None:
    """Add an entity; prints its ref. For an existing entity of that type and name, adds the aliases it lacks."""
    with errors(), memory(ctx, write=True) as m:
        r = m.add_entity(type_, name, alias or [], description)
        emit(ctx, r.to_dict(), lambda d: render.out(d["created"][0] if d["created"] else
                                                     f"{d['updated'][0]} (aliases added: {', '.join(d['event']['aliases'])})"))


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
            if d["merged_into"]:
                render.out(f"merged into {d['merged_into']} (its ref, name and aliases resolve there)")
            for ev in d["events"]:
                render.out(f"{ev['recorded_at']}  {ev['event']}  {render.event_text(ev)}")
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


@app.command("rename")
def rename(
    ctx: typer.Context,
    ref: Ref,
    name: Annotated[str, typer.Argument(metavar="NEW_NAME", help="The new name (the ref stays).")],
    json_: JsonOpt = False,
) -> None:
    """Give an entity another name; its ref stays. Recorded as an event; rename back to undo."""
    with errors(), memory(ctx, write=True) as m:
        doc = m.rename_entity(ref, name).to_dict()
        emit(ctx, doc, lambda d: render.out(f"{d['entity']['ref']}  {d['event']['from']} -> {d['entity']['name']}  "
                                            f"({d['event']['event']})"))


@alias_app.command("add")
def alias_add(ctx: typer.Context, ref: Ref, aliases: Aliases, json_: JsonOpt = False) -> None:
    """Add aliases to an entity (those it has are left as they are). Undo with 'alias remove'."""
    with errors(), memory(ctx, write=True) as m:
        doc = m.add_aliases(ref, aliases).to_dict()
        emit(ctx, doc, lambda d: render.out(f"{d['entity']['ref']}  aliases: {', '.join(d['entity']['aliases'])}"
                                            + (f"  (added: {', '.join(d['added'])})" if d["added"] else
                                               "  (nothing new)")))


@alias_app.command("remove")
def alias_remove(ctx: typer.Context, ref: Ref, aliases: Aliases, json_: JsonOpt = False) -> None:
    """Take aliases off an entity; each must be one of its aliases. Undo with 'alias add'."""
    with errors(), memory(ctx, write=True) as m:
        doc = m.remove_aliases(ref, aliases).to_dict()
        emit(ctx, doc, lambda d: render.out(f"{d['entity']['ref']}  aliases: {', '.join(d['entity']['aliases']) or 'none'}"
                                            f"  (removed: {', '.join(d['removed'])})"))


@app.command("merge")
def merge(
    ctx: typer.Context,
    into: Annotated[str, typer.Argument(metavar="A", help="The entity that stays: ref, name or alias.")],
    merged: Annotated[str, typer.Argument(metavar="B", help="The entity merged into A (the same type).")],
    json_: JsonOpt = False,
) -> None:
    """Merge B into A; B then resolves to A. Undo with 'entity unmerge B'.

    B's statements, those naming B and B's mentions move to A by new statements recorded now; the
    originals are retracted (history and --known-at reads keep them)."""
    with errors(), memory(ctx, write=True) as m:
        doc = m.merge_entities(into, merged).to_dict()
        emit(ctx, doc, lambda d: render.out(f"{d['event']['event']}  {render.event_text(d['event'])}"))


@app.command("unmerge")
def unmerge(
    ctx: typer.Context,
    merged: Annotated[str, typer.Argument(metavar="B", help="The merged entity: its own ref, name or alias.")],
    json_: JsonOpt = False,
) -> None:
    """Take back the merge of B; B resolves to itself again.

    The copies the merge made are retracted and B's statements copied back, recorded now."""
    with errors(), memory(ctx, write=True) as m:
        doc = m.unmerge_entity(merged).to_dict()
        emit(ctx, doc, lambda d: render.out(f"{d['event']['event']}  {render.event_text(d['event'])}"))
