"""The lifecycle of evidence records: lifecycle, revive (docs/lifecycle.md)."""

from __future__ import annotations

from typing import Annotated

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, WideOpt, emit, errors, memory


def register(app: typer.Typer) -> None:
    app.command("lifecycle")(lifecycle)
    app.command("revive")(revive)


def lifecycle(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would be archived; write nothing.")] = False,
    at: Annotated[str | None, typer.Option("--at", metavar="T", help="Apply the policy as of this time (default: now). "
                                           "ISO-8601 date or datetime, or 'now'.")] = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Soft-archive the records the lifecycle policy lets go (recorded events; graphmem revive undoes them).

    Prints counts only (by reason, tier, trust and importance), never a record's text. The policy is
    the store's lifecycle.toml over graphmem's defaults.
    """
    with errors(), memory(ctx, write=not dry_run) as m:
        emit(ctx, m.lifecycle(at=at, dry_run=dry_run).to_dict(), render.lifecycle)


def revive(
    ctx: typer.Context,
    records: Annotated[list[str], typer.Argument(metavar="REC...", help="Archived records, rec:N.")],
    json_: JsonOpt = False,
) -> None:
    """Bring archived records back into search and pack (a recorded event)."""
    with errors(), memory(ctx, write=True) as m:
        emit(ctx, m.revive(records).to_dict(), render.revive)
