"""The ``graphmem`` command: global options and the command groups."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup, TyperOption

import graphmem.cli.admin as admin
import graphmem.cli.entities as entities
import graphmem.cli.evidence as evidence
import graphmem.cli.facts as facts
import graphmem.cli.lifecycle as lifecycle
import graphmem.cli.packing as packing
import graphmem.cli.query as query
import graphmem.cli.recommend as recommend
import graphmem.cli.service as service
from graphmem.cli.common import Options, error_doc, set_json, start
from graphmem.model.words import did_you_mean, near


def _json_in(args: Sequence[str]) -> bool:
    """Whether ``--json`` is among the options (before a ``--``): usage errors then come as JSON too."""
    for a in args:
        if a == "--":
            return False
        if a == "--json":
            return True
    return False


def _late(ctx: typer.Context, param: Any, value: Any) -> None:
    """A global option given after the command: it overrides (``--store``) or adds to (``--ontology``,
    ``--predicates``) what was given before it."""
    if value is None or value in ((), [], False):
        return
    o = ctx.find_root().obj
    if not isinstance(o, Options):
        return
    if param.name == "late_json":
        set_json(ctx)
    elif param.name == "late_store":
        o.store = value
    else:
        getattr(o, param.name.removeprefix("late_")).extend(value)


def _late_options() -> list[Any]:
    """The global options again, for every command, so they may follow it (``graphmem current X --json``)."""
    def late(name: str, help: str, **kw: Any) -> Any:
        return TyperOption(param_decls=[f"--{name}", f"late_{name}"], expose_value=False, callback=_late, help=help,
                           **kw)
    return [
        late("store", "Store folder or address (as before the command).", type=str, default=None, metavar="PATH"),
        late("ontology", "Extra ontology folder (as before the command; repeatable).", type=Path, multiple=True,
             default=None, metavar="DIR"),
        late("predicates", "Extra predicate folder (as before the command; repeatable).", type=Path, multiple=True,
             default=None, metavar="DIR"),
        late("json", "Print exactly one JSON document on stdout (errors too).", is_flag=True, default=False),
    ]


def _add_late_options(cmd: Any) -> None:
    for sub in (getattr(cmd, "commands", None) or {}).values():
        _add_late_options(sub)
    if getattr(cmd, "commands", None) is None:
        taken = {o for p in cmd.params for o in getattr(p, "opts", ())}
        cmd.params.extend(p for p in _late_options() if p.opts[0] not in taken)


class _OneLineErrors(TyperGroup):
    """Usage errors (missing argument, unknown option) as one line on stderr, exit 2 (SPEC 13), or with
    ``--json`` as one ``graphmem.error.v1`` document on stdout; global options accepted after the
    command too; an unknown command suggests the nearest by edit distance."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for cmd in self.commands.values():
            _add_late_options(cmd)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            hint = did_you_mean([repr(c) for c in near(name, self.list_commands(ctx))])
            ctx.fail(f"no such command {name!r}" + (f"; {hint}" if hint else ""))
        return super().resolve_command(ctx, args)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        try:
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False,
                              windows_expand_args=windows_expand_args, **extra)
        except Exception as e:  # click's UsageError family carries exit_code and format_message
            code = getattr(e, "exit_code", None)
            if not (hasattr(e, "format_message") and isinstance(code, int)):
                raise
            ctx = getattr(e, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            if _json_in(argv):
                sys.stdout.write(error_doc("usage_error", f"{e.format_message()}{hint}"))
            else:
                sys.stderr.write(f"graphmem: error: {e.format_message()}{hint}\n")
            if not standalone_mode:
                raise
            sys.exit(code)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _version(value: bool) -> None:
    """``--version``: the installed package's version (from its metadata, read only when asked)."""
    if value:
        from importlib.metadata import PackageNotFoundError, version
        try:
            v = version("graphmem")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from graphmem import __version__ as v
        typer.echo(f"graphmem {v}")
        raise typer.Exit(0)


app = typer.Typer(
    name="graphmem",
    cls=_OneLineErrors,
    help="A local-first knowledge-graph memory: typed entities, time-stamped facts, and what is true when.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# the global options that take a value (the others are flags): ``_invoked`` steps over their values
_VALUED_GLOBALS = frozenset({"--store", "--ontology", "--predicates"})


@app.callback()
def _root(
    ctx: typer.Context,
    store: Annotated[str | None, typer.Option(
        "--store", metavar="PATH", help="Store folder, or an address naming its engine: ladybug:PATH, postgresql://... "
        "(default: $GRAPHMEM_STORE, else a graphmem folder in the user data dir; docs/engines.md).",
        envvar="GRAPHMEM_STORE")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout (errors too).")] = False,
    ontology: Annotated[list[Path] | None, typer.Option(
        "--ontology", metavar="DIR", help="Extra ontology folder of *.toml files (repeatable).")] = None,
    predicates: Annotated[list[Path] | None, typer.Option(
        "--predicates", metavar="DIR", help="Extra predicate folder of *.toml files (repeatable).")] = None,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                          help="Print graphmem's version and exit.")] = False,
) -> None:
    """Global options go before the command or after it (``graphmem current atlas --json``)."""
    start(ctx, Options(store, json, list(ontology or []), list(predicates or [])))


admin.register(app)
app.add_typer(entities.app, name="entity")
facts.register(app)
evidence.register(app)
recommend.register(app)
packing.register(app)
lifecycle.register(app)
query.register(app)
service.register(app)


def _invoked(args: Sequence[str]) -> str | None:
    """The command (or group) that ``args`` invoke, past the global options before it; None when they
    name none (``graphmem --help``, no arguments, an option this does not know).

    >>> _invoked(["--store", "s", "--json", "current", "atlas"])
    'current'
    >>> _invoked(["--store=s", "entity", "show", "atlas"])
    'entity'
    >>> _invoked(["--help"]) is None
    True
    """
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            return a
        if a in _VALUED_GLOBALS:
            i += 2
        elif a in ("--json", "--version") or a.partition("=")[0] in _VALUED_GLOBALS:
            i += 1
        else:
            return None  # --help, --install-completion, "--", or an unknown option: the whole app answers
    return None


def _for(args: Sequence[str]) -> typer.Typer:
    """The app with only the command ``args`` invoke, when they name one: building every command's
    options from its signature takes 24-30 ms a process, one command's 2-3 ms (docs/semantics.md). The
    whole app otherwise (help, completion, an unknown command with its nearest names)."""
    name = _invoked(args)
    if name is None or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return app
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return one


def main() -> None:
    """The console script. Every command has closed the store by the time it returns, so the
    process ends right after flushing its output instead of tearing the interpreter down
    module by module (a tenth of a second a command).

    NumPy's OpenBLAS starts a pool of threads when NumPy is imported, 40 ms of CPU in a fresh process
    on two cores; graphmem does no linear algebra (its arrays are BM25 sums and lookups), so the
    command asks for none unless the environment says otherwise (``OPENBLAS_NUM_THREADS``).

    For the same reason a store the command closes leaves its engine's objects to the process's end
    (``graphmem.store.leave_open_until_exit``; a writer's log folded into its database first)."""
    import contextlib

    from graphmem.store import leave_open_until_exit
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    leave_open_until_exit()  # the process ends right after: a closed store's engine is freed by the exit
    try:
        _for(sys.argv[1:])()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed by the other end (a pipe, an MCP client)
            stream.flush()
    os._exit(code)
