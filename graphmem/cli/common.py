"""What every command shares: options, opening the store, printing, errors to exit codes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from graphmem.errors import GraphmemError

JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")]


@dataclass
class Options:
    store: Path | None
    json: bool
    ontology: list[Path]
    predicates: list[Path]


def default_store() -> Path:
    """``--store``, else ``GRAPHMEM_STORE``, else a ``graphmem`` folder in the user data directory."""
    env = os.environ.get("GRAPHMEM_STORE")
    if env:
        return Path(env)
    from platformdirs import user_data_dir
    return Path(user_data_dir("graphmem", appauthor=False))


def opts(ctx: typer.Context) -> Options:
    o = ctx.find_root().obj
    assert isinstance(o, Options)
    return o


def store_path(ctx: typer.Context) -> Path:
    return opts(ctx).store or default_store()


LOOKUP_POOL_MB = 1024  # Kuzu's page cache for commands that read a few subjects (see Memory)


@contextmanager
def memory(ctx: typer.Context, *, create: bool = False, lookup: bool = False, repair: bool = False) -> Iterator[Any]:
    """Open the store for one command; ``create`` for commands that write, ``lookup`` for those that
    read a few subjects (a smaller page cache, which Kuzu sets up faster), ``repair`` for the two that
    make a marked store whole (``rebuild``, ``migrate``)."""
    from graphmem.memory import Memory
    o = opts(ctx)
    path = store_path(ctx)
    made = _would_create(path) if create else []
    try:
        m = Memory(path, ontology_dirs=o.ontology, predicate_dirs=o.predicates, create=create,
                   buffer_pool_mb=LOOKUP_POOL_MB if lookup else None, repair=repair)
    except BaseException:
        _remove(made)
        raise
    try:
        yield m
    except BaseException:
        m.close()
        _remove(made)  # a failed first write leaves no empty store behind
        raise
    m.close()


def _would_create(path: Path) -> list[Path]:
    """What opening a store at ``path`` would create, so a failed command can take it back."""
    if not path.exists():
        top = path
        while not top.parent.exists():
            top = top.parent
        return [top]
    if path.is_dir() and not (path / "graph.kuzu").exists():
        return [path / name for name in ("graph.kuzu", "graph.kuzu.wal", "graph.kuzu.lock", "tmp")]
    return []


def _remove(paths: list[Path]) -> None:
    import shutil
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()


def emit(ctx: typer.Context, doc: dict[str, Any], human: Callable[[dict[str, Any]], None]) -> None:
    """One JSON document with ``--json`` (before or after the command), else the readable form."""
    if wants_json(ctx):
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        human(doc)


def wants_json(ctx: typer.Context) -> bool:
    return opts(ctx).json or bool(ctx.params.get("json_"))


def fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"graphmem: error: {message}\n")
    raise typer.Exit(code)


@contextmanager
def errors() -> Iterator[None]:
    """Turn graphmem's errors into one line on stderr and their exit code; no traceback."""
    try:
        yield
    except GraphmemError as e:
        fail(str(e), e.exit_code)
    except (typer.Exit, typer.Abort, SystemExit, KeyboardInterrupt):
        raise
    except Exception as e:  # a bug: still one line, and say it is one
        fail(f"internal error ({type(e).__name__}: {e}); please report it", 3)
