"""The ``graphmem`` command: global options and the command groups."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import graphmem.cli.admin as admin
import graphmem.cli.entities as entities
import graphmem.cli.evidence as evidence
import graphmem.cli.facts as facts
import graphmem.cli.packing as packing
import graphmem.cli.recommend as recommend
import graphmem.cli.service as service
from graphmem.cli.common import Options


class _OneLineErrors(TyperGroup):
    """Usage errors (missing argument, unknown option) as one line on stderr, exit 2 (SPEC 13)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False,
                              windows_expand_args=windows_expand_args, **extra)
        except Exception as e:  # click's UsageError family carries exit_code and format_message
            code = getattr(e, "exit_code", None)
            if not (hasattr(e, "format_message") and isinstance(code, int)):
                raise
            ctx = getattr(e, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            sys.stderr.write(f"graphmem: error: {e.format_message()}{hint}\n")
            if not standalone_mode:
                raise
            sys.exit(code)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="graphmem",
    cls=_OneLineErrors,
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
recommend.register(app)
packing.register(app)
service.register(app)


def main() -> None:
    """The console script. Every command has closed the store by the time it returns, so the
    process ends right after flushing its output instead of tearing the interpreter down
    module by module (a tenth of a second a command)."""
    import contextlib
    import os
    try:
        app()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed by the other end (a pipe, an MCP client)
            stream.flush()
    os._exit(code)
