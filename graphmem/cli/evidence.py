"""Evidence records: ingest and search."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from graphmem import render
from graphmem.cli.common import JsonOpt, emit, errors, fail, memory


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("search")(search)


def ingest(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="JSONL records (text, id, ts, kind, source, scope, "
                                        "importance, meta), or - for stdin.")],
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Store secrets as they are (default: redact).")] = False,
    json_: JsonOpt = False,
) -> None:
    """Store evidence records; bad lines are reported and skipped, repeats add nothing."""
    with errors():
        if file != "-" and not Path(file).is_file():
            fail(f"cannot read records file {file!r}: no such file")
        with memory(ctx, create=True) as m:
            r = m.ingest(sys.stdin.buffer if file == "-" else file, redact=not no_redact)
            emit(ctx, r.to_json(), render.ingest)
            for n, reason in r.errors[:20]:
                sys.stderr.write(f"graphmem: line {n}: {reason}\n")
            if len(r.errors) > 20:
                sys.stderr.write(f"graphmem: ... and {len(r.errors) - 20} more bad lines\n")


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words to look for (BM25 over record text).")],
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="At most N records.")] = 10,
    json_: JsonOpt = False,
) -> None:
    """Full-text (BM25) search over evidence records, best first."""
    with errors(), memory(ctx) as m:
        emit(ctx, m.search(query, limit=limit).to_json(), render.search)
