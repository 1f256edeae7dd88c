"""The ``graphmem`` command: global options and the command groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from graphmem.cli import admin, entities, evidence, facts
from graphmem.cli.common import Options

app = typer.Typer(
    name="graphmem",
    help="A local-first knowledge-graph memory: typed entities, time-stamped facts, and what is true when.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    ctx: typer.Context,
    store: Annotated[Path | None, typer.Option(
        "--store", metavar="PATH", help="Store folder (default: $GRAPHMEM_STORE, else a graphmem folder in the user data dir).",
        envvar="GRAPHMEM_STORE")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")] = False,
    ontology: Annotated[list[Path] | None, typer.Option(
        "--ontology", metavar="DIR", help="Extra ontology folder of *.toml files (repeatable).")] = None,
    predicates: Annotated[list[Path] | None, typer.Option(
        "--predicates", metavar="DIR", help="Extra predicate folder of *.toml files (repeatable).")] = None,
) -> None:
    ctx.obj = Options(store, json, list(ontology or []), list(predicates or []))


admin.register(app)
app.add_typer(entities.app, name="entity")
facts.register(app)
evidence.register(app)


def main() -> None:
    app()
