"""Store-wide commands: init, info, demo, ontology, predicates, import, lint, rebuild, migrate, export, copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, WideOpt, bad_lines, emit, errors, fail, memory, opts, store_path, wants_json
from graphmem.cli.progress import bar
from graphmem.cli.tables import LIST, TEXT, Col
from graphmem.model.words import plural

LINT_LIMIT = 50  # issues a lint table shows unless --limit says otherwise


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("info")(info)
    app.command("demo")(demo)
    app.command("ontology")(ontology)
    app.command("predicates")(predicates)
    app.command("import")(import_)
    app.command("lint")(lint)
    app.command("rebuild")(rebuild)
    app.command("migrate")(migrate)
    app.command("export")(export)
    app.command("copy")(copy)


def init(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Create the store (idempotent); says which engine holds it (--store ladybug:PATH, postgresql://...)."""
    with errors(), memory(ctx, create=True) as m:
        emit(ctx, m.info().to_dict(), lambda d: render.out(
            f"store ready at {d.get('address') or d['store']} ({_engine_text(d)}; {plural(d['entities'], 'entity', 'entities')}, "
            f"{plural(d['statements'], 'statement')})"))


def _engine_text(d: dict[str, Any]) -> str:
    from graphmem.config import ENGINE_NAMES
    engine = d.get("engine")
    name = ENGINE_NAMES.get(engine, str(engine)) if isinstance(engine, str) else "engine unknown"
    return f"{name} {d.get('engine_version') or ''}".rstrip() + f", layout {d.get('layout')}"


def info(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Which engine and version hold the store, its address and layout, and how much it holds."""
    with errors(), memory(ctx, lookup=True) as m:
        doc = m.info().to_dict() | {"schema": "graphmem.info.v1"}

        def human(d: dict[str, Any]) -> None:
            render.out(f"store:      {d.get('address') or d['store']}\nengine:     {_engine_text(d)}\n"
                       f"entities:   {d['entities']}\nstatements: {d['statements']}\nrecords:    {d['records']}")
        emit(ctx, doc, human)


def demo(ctx: typer.Context, json_: JsonOpt = False, wide: WideOpt = False) -> None:
    """Build a store from the bundled example and walk through what it knows."""
    from graphmem.demo import run_demo
    with errors():
        emit(ctx, run_demo(opts(ctx).store), render.demo)


def ontology(ctx: typer.Context, json_: JsonOpt = False, wide: WideOpt = False) -> None:
    """Show the loaded ontology: entity types and edge types with their pairs."""
    from graphmem.documents import OntologyDoc
    from graphmem.memory import schema_dirs
    from graphmem.ontology.schema import load_ontology
    with errors():
        doc = OntologyDoc(load_ontology(schema_dirs(store_path(ctx), opts(ctx).ontology)[0])).to_dict()

        def human(d: dict[str, Any]) -> None:
            render.table([Col("entity type"), Col("ref prefix"), Col("description", TEXT)],
                         [[t["name"], t["prefix"] + ":", t["description"]] for t in d["entity_types"]])
            render.table([Col("edge type"), Col("pairs", LIST), Col("description", TEXT)],
                         [[e["name"], ", ".join(f"{a}->{b}" for a, b in e["pairs"]), e["description"]]
                          for e in d["edge_types"]])
        emit(ctx, doc, human)


def predicates(ctx: typer.Context, json_: JsonOpt = False, wide: WideOpt = False) -> None:
    """Show the loaded predicate registry."""
    from graphmem.documents import RegistryDoc
    from graphmem.memory import schema_dirs
    from graphmem.ontology.schema import load_ontology, load_registry
    with errors():
        o = opts(ctx)
        ont_dirs, pred_dirs = schema_dirs(store_path(ctx), o.ontology, o.predicates)
        doc = RegistryDoc(load_registry(load_ontology(ont_dirs), pred_dirs)).to_dict()
        emit(ctx, doc, lambda d: render.table([Col("predicate"), Col("card.", drop=1), Col("subjects", LIST),
                                               Col("object", LIST), Col("edge", drop=2), Col("aliases", LIST, drop=3)], [
            [p["name"], p["cardinality"], ", ".join(p["subject_types"]),
             ", ".join(p["object"].get("entity_types") or [p["object"]["type"]] + (
                 [":" + "|".join(p["object"]["values"])] if "values" in p["object"] else [])),
             p["edge"] or "", ", ".join(p["aliases"])] for p in d["predicates"]]))


def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="JSONL file of entity/assert/end/retract lines, or -.")],
    strict: Annotated[bool, typer.Option("--strict", help="Write nothing if any line is invalid.")] = False,
    scope: Annotated[str | None, typer.Option("--scope", metavar="SCOPE", help="The scope of the statement lines "
                                              "that carry none (docs/scopes.md).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Bulk entities and statements from JSONL; invalid lines are reported and not written."""
    with errors():
        if file != "-" and not Path(file).is_file():
            fail(f"cannot read import file {file!r}: no such file")
        with memory(ctx, write=True) as m:
            source = sys.stdin.buffer if file == "-" else file
            with bar() as progress:
                r = m.import_jsonl(source, strict=strict, progress=progress, scope=scope)
            doc = r.to_dict()

            def human(d: dict[str, Any]) -> None:
                verb = "imported" if d["written"] else "nothing written (--strict)"
                render.out(f"{verb}: {plural(d['entities_created'], 'entity', 'entities')} created, "
                           f"{d['entities_updated']} updated, "
                           f"{plural(d['statements'] if d['written'] else 0, 'statement')}"
                           + (f" ({'..'.join(dict.fromkeys(d['facts']))})" if d["facts"] and d["written"] else "")
                           + f", {plural(d['retractions'], 'retraction')}, "
                           f"{plural(d['unchanged'], 'line')} unchanged in {d['seconds']} s")
            emit(ctx, doc, human)
            if r.errors and not r.written:  # a store this command created, with nothing in it, is removed
                bad_lines(r.errors)
        if r.errors:  # after the store is closed: a store this command created keeps the good lines
            bad_lines(r.errors)


def lint(
    ctx: typer.Context,
    fail_on: Annotated[str, typer.Option("--fail-on", metavar="LEVEL", help="Exit 1 on issues at or above: error or warning.")] = "error",
    code: Annotated[list[str] | None, typer.Option(
        "--code", metavar="CODE", help="Only issues of this code (repeatable); they alone decide the exit status.")] = None,
    limit: Annotated[int | None, typer.Option(
        "--limit", "-n", metavar="N", help=f"Show at most N issues (default: {LINT_LIMIT} in the table, all with --json).")] = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Check the store; exit 1 when an issue at or above --fail-on exists.

    Prints the number of issues of each code, then the issues, errors first. The JSON holds the
    counts of every code ("counts", "summary") and the issues --code and --limit select.
    """
    from graphmem.reports import check_fail_on, check_lint_codes
    with errors():
        check_fail_on(fail_on, "--fail-on")
        codes = check_lint_codes(code, "--code value") if code else None
        if limit is not None and limit < 0:
            fail(f"bad --limit {limit}: expected a whole number, 0 or more")
        with memory(ctx) as m:
            with bar() as progress:
                report = m.lint(progress=progress)
            shown = limit if limit is not None or wants_json(ctx) else LINT_LIMIT
            emit(ctx, report.to_dict(fail_on, codes=codes, limit=shown), render.lint)
            if report.fails(fail_on, codes):
                raise typer.Exit(1)


def rebuild(
    ctx: typer.Context,
    check: Annotated[bool, typer.Option("--check", help="Compare with a rebuild without writing, and check the "
                                        "store's other tables; exit 1 on drift or a problem.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Recompute the fact view from the statements.

    Every subject's log, view and fact edges are recomputed and compared with what is
    stored; the subjects that differ are rewritten (the whole view is reloaded when more
    than about one in 40 do). The JSON lists, per drifting subject, the parts that differ.

    With --check, nothing is written, and the store's other tables are checked too: every
    statement names entities that exist, the id counters are ahead of the ids in use, the
    record keys and the full-text index agree with the records, and every stored time can
    be exported and imported again; the JSON lists these as "problems".

    A store whose bulk write was killed while it was being committed is refused by every
    command until a rebuild (without --check) repairs it: the name index, record keys and
    full-text index are also made again, from the entities and records.
    """
    with errors(), memory(ctx, repair=not check) as m:
        with bar() as progress:
            r = m.rebuild(check=check, progress=progress)

        def human(d: dict[str, Any]) -> None:
            if d["check"]:
                render.out(f"view drift in {plural(len(d['drift']), 'subject')}" if d["drift"] else
                           "view matches the statements")
                for p in d["problems"]:
                    render.out(f"{p['code']}: {p['message']}")
                return
            if "repaired" in d and "names" in d["repaired"]:
                render.out(f"repaired an interrupted bulk write: made {plural(d['repaired']['names'], 'name key')} and the "
                           f"index of {plural(d['repaired']['records'], 'record')} again")
            if "repaired" in d:
                for k, v in sorted(d["repaired"].items()):
                    if k.startswith("rewritten_"):
                        render.out(f"wrote table {k.removeprefix('rewritten_')} again ({plural(v, 'row')}): its primary-key "
                                   "index may have been left out of step with its rows")
            n = d["counts"]
            render.out(f"recomputed {plural(n.get('subjects', 0), 'subject')}, {plural(n.get('intervals', 0), 'interval')}, "
                       f"{plural(n.get('edges', 0), 'edge')}; "
                       f"rewrote {d['counts'].get('rewritten', 0)} that differed, in {d['seconds']} s")
        emit(ctx, r.to_dict(), human)
        if not r.ok:
            raise typer.Exit(1)


def migrate(ctx: typer.Context, json_: JsonOpt = False) -> None:
    """Upgrade a store written in an older layout, in place.

    The store is first copied aside (STORE.layoutN-backup, named in the output); then one
    named migration per layout change runs, and the view and full-text index are made again
    by this version. Killed at any moment, it is run again: it starts over from the copy.
    On PostgreSQL the steps run in one transaction instead (all or nothing, no copy).
    A store already at this version's layout is left as it is.
    """
    from graphmem.memory import migrate as run
    with errors():
        o = opts(ctx)
        r = run(store_path(ctx), ontology_dirs=o.ontology, predicate_dirs=o.predicates)
        emit(ctx, r.to_dict(), lambda d: render.out(
            f"store {d['store']} is at layout {d['to']}; nothing to do" if not d["migrated"] else
            f"migrated {d['store']} from layout {d['from']} to {d['to']} ({', '.join(d['steps'])}); "
            f"{plural(d['counts']['entities'], 'entity', 'entities')}, {plural(d['counts']['statements'], 'statement')}, "
            f"{plural(d['counts']['records'], 'record')}; " + (f"the store as it was is at {d['backup']}" if d["backup"]
                                                               else "in one transaction (no copy needed)")))


def export(
    ctx: typer.Context,
    format_: Annotated[str, typer.Option(
        "--format", "-f", metavar="FORMAT", help="jsonl (whole store) or graphml (graph at a time).")] = "jsonl",
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help="For graphml: edges valid at this time (default now).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Write the store to stdout: JSONL that import reads back, or GraphML.

    With --json, one document holding the export (JSONL lines as a list).
    """
    with errors(), memory(ctx) as m:
        doc = m.export_doc(format_, as_of)
        if wants_json(ctx):
            emit(ctx, doc.to_dict(), lambda d: None)
        else:
            sys.stdout.write(doc.text)


__all__ = ["register", "store_path"]



def copy(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="SRC", help="The store to copy: a folder, ladybug:PATH or "
                                                              "postgresql://... (docs/engines.md).")],
    dest: Annotated[str, typer.Argument(metavar="DEST", help="Where the copy goes; must hold no store. A new "
                                                             "folder is a Kuzu store; ladybug:PATH a LadybugDB one.")],
    json_: JsonOpt = False,
) -> None:
    """Copy a whole store to another place or engine (export and import; fact ids, record ids and times kept,
    and the entity and record events: renames, merges, archived records)."""
    from graphmem.memory.copying import copy_store
    o = opts(ctx)
    with errors(), bar() as progress:
        r = copy_store(source, dest, progress=progress, ontology_dirs=o.ontology, predicate_dirs=o.predicates)
        emit(ctx, r.to_dict(), lambda d: render.out(
            f"copied {d['source']} ({d['source_engine']} {d['source_version']}) to {d['dest']} ({d['dest_engine']} "
            f"{d['dest_version']}): {plural(d['entities'], 'entity', 'entities')}, {plural(d['records'], 'record')}, "
            f"{plural(d['statements'], 'statement')}, {plural(d['retractions'], 'retraction')}, "
            f"{plural(d['events'], 'event')} in {d['seconds']} s"))
