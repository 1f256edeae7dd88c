"""What every command shares: options, opening the store, printing, errors to exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from graphmem.config import StoreAddress, store_address
from graphmem.errors import GraphmemError
from graphmem.model.words import plural
from graphmem.store.engines import cleanup_on_failure

_JSON: ContextVar[bool] = ContextVar("graphmem_json", default=False)  # --json given, before or after the command


def _json_given(ctx: typer.Context, param: Any, value: bool) -> bool:
    if value:
        set_json(ctx)
    return value


JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout (errors too).",
                                       callback=_json_given)]
WideOpt = Annotated[bool, typer.Option("--wide", help="Show every column of a table, however wide.")]
ScopesOpt = Annotated[list[str] | None, typer.Option(
    "--scope", metavar="SCOPE", help="Only the statements and records of this scope (repeatable; default: every "
                                     "scope; unscoped ones are left out when given; docs/scopes.md).")]
ScopeOpt = Annotated[str | None, typer.Option(
    "--scope", metavar="SCOPE", help="The scope it belongs to: a user, agent, project or session (default: "
                                     "unscoped; docs/scopes.md).")]


@dataclass
class Options:
    store: str | None  # a folder or an address (docs/engines.md)
    json: bool
    ontology: list[Path]
    predicates: list[Path]


def start(ctx: typer.Context, o: Options) -> None:
    """The global options of this run (the root callback), before any the command itself takes."""
    ctx.obj = o
    _JSON.set(o.json)


def set_json(ctx: typer.Context) -> None:
    """``--json`` given after the command: the output, and any error, is one JSON document."""
    o = ctx.find_root().obj
    if isinstance(o, Options):
        o.json = True
    _JSON.set(True)


def opts(ctx: typer.Context) -> Options:
    o = ctx.find_root().obj
    assert isinstance(o, Options)
    return o


def store_path(ctx: typer.Context) -> StoreAddress:
    """The store the command uses (``--store``, ``GRAPHMEM_STORE``, the default folder) and its engine."""
    return store_address(opts(ctx).store)


LOOKUP_POOL_MB = 1024  # Kuzu's page cache for commands that read a few subjects (see Memory)


@contextmanager
def memory(ctx: typer.Context, *, write: bool = False, create: bool = False, lookup: bool = False,
           repair: bool = False, track: bool = False) -> Iterator[Any]:
    """Open the store for one command: read-only unless ``write`` (so several readers can hold it at
    once), made if missing only with ``create`` (``init``), with a smaller page cache for ``lookup``
    commands that read a few subjects (Kuzu sets it up faster), ``repair`` for the two that make a
    marked store whole (``rebuild``, ``migrate``). While ``graphmem serve`` holds the store, the
    command goes through the server instead (graphmem/service/client.py), saying so on stderr. ``track``
    (a read that records use: pack, search) opens to write when no other process holds the store, else
    read-only, recording nothing (docs/lifecycle.md)."""
    o = opts(ctx)
    path = store_path(ctx)
    remote = _through_server(path, o, repair)
    if remote is not None:
        yield remote
        return
    from graphmem.memory import Memory
    with cleanup_on_failure(path) if create else nullcontext():  # a failed first write leaves no empty store
        m = None
        if track and not write:
            from graphmem.errors import StoreUnavailable
            try:
                m = Memory(path, ontology_dirs=o.ontology, predicate_dirs=o.predicates,
                           buffer_pool_mb=LOOKUP_POOL_MB if lookup else None)
            except StoreUnavailable as e:
                if "in use by" not in str(e):
                    raise
        if m is None:
            m = Memory(path, ontology_dirs=o.ontology, predicate_dirs=o.predicates, create=create,
                       buffer_pool_mb=LOOKUP_POOL_MB if lookup else None, repair=repair,
                       read_only=not (write or create or repair))
        try:
            yield m
        finally:
            m.close()


def _through_server(path: StoreAddress, o: Options, repair: bool) -> Any:
    """The server holding the store at ``path``, as the command's ``Memory`` (None: no server)."""
    from graphmem.config import server_info
    info = server_info(path.folder)
    if info is None:
        return None
    shown = str(path.folder)  # a server marks only a store with a folder
    from graphmem.errors import StoreUnavailable
    from graphmem.service.client import Remote
    remote = Remote(path.folder or Path(path.display), info)
    if repair:
        raise StoreUnavailable(f"store {shown!r} is in use by {remote.holder}, which cannot run this command; "
                               "stop it first")
    if o.ontology or o.predicates:
        raise StoreUnavailable(f"store {shown!r} is in use by {remote.holder}, which uses the ontology and "
                               "predicates it was started with: expected no --ontology or --predicates, or the "
                               "server stopped")
    sys.stderr.write(f"graphmem: store {shown!r} is held by {remote.holder}; this command goes through it\n")
    return remote


def emit(ctx: typer.Context, doc: dict[str, Any], human: Callable[[dict[str, Any]], None]) -> None:
    """One JSON document with ``--json`` (before or after the command), else the readable form."""
    if wants_json(ctx):
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        from graphmem.cli.tables import settings
        settings.wide = bool(ctx.params.get("wide"))
        human(doc)


def wants_json(ctx: typer.Context) -> bool:
    return opts(ctx).json


def error_doc(code: str, message: str) -> str:
    """The ``graphmem.error.v1`` document, as the service answers it (``code``: the error's kind)."""
    return json.dumps({"schema": "graphmem.error.v1", "code": code, "message": message}, ensure_ascii=False,
                      indent=2) + "\n"


def fail(message: str, code: int = 2, kind: str | None = None) -> None:
    """End the command with exit ``code``: one line on stderr, or with ``--json`` one ``graphmem.error.v1``
    document on stdout (``kind``: its code, by default BadInput for exit 2, StoreUnavailable for 3)."""
    if _JSON.get():
        sys.stdout.write(error_doc(kind or {3: "StoreUnavailable"}.get(code, "BadInput"), message))
    else:
        sys.stderr.write(f"graphmem: error: {message}\n")
    raise typer.Exit(code)


@contextmanager
def errors() -> Iterator[None]:
    """Turn graphmem's errors into one line on stderr (one JSON document with ``--json``) and their
    exit code; no traceback."""
    try:
        yield
    except GraphmemError as e:
        fail(str(e), e.exit_code, type(e).__name__)
    except (typer.Exit, typer.Abort, SystemExit, KeyboardInterrupt):
        raise
    except Exception as e:  # a bug: still one line, and say it is one
        fail(f"internal error ({type(e).__name__}: {e}); please report it", 3, "internal")


def bad_lines(errors: tuple[tuple[int, str], ...]) -> None:
    """An import's or ingest's invalid lines on stderr (the first 20), then exit 2 (after the good ones were written)."""
    for n, reason in errors[:20]:
        sys.stderr.write(f"graphmem: line {n}: {reason}\n")
    if len(errors) > 20:
        sys.stderr.write(f"graphmem: ... and {plural(len(errors) - 20, 'more invalid line')}\n")
    raise typer.Exit(2)
