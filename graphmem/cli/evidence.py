"""Evidence records: ingest and search."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, emit, errors, fail, memory


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("search")(search)
    app.command("extract")(extract)


def ingest(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="JSONL records (text, id, ts, kind, source, scope, "
                                        "importance, meta), or - for stdin.")],
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Store secrets as they are (default: redact).")] = False,
    extract_: Annotated[bool, typer.Option("--extract", help="Also extract from the new records and apply it "
                                           "(mentions and assertions by the extractor).")] = False,
    json_: JsonOpt = False,
) -> None:
    """Store evidence records; bad lines are reported and skipped, repeats add nothing."""
    with errors():
        if file != "-" and not Path(file).is_file():
            fail(f"cannot read records file {file!r}: no such file")
        with memory(ctx, write=True) as m:
            r = m.ingest(sys.stdin.buffer if file == "-" else file, redact=not no_redact, extract=extract_)
            emit(ctx, r.to_dict(), render.ingest)
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
        emit(ctx, m.search(query, limit=limit).to_dict(), render.search)


def extract(
    ctx: typer.Context,
    record: Annotated[str | None, typer.Option("--record", "-r", metavar="REF", help="Extract from this record.")] = None,
    text: Annotated[str | None, typer.Option("--text", "-t", metavar="TEXT", help="Extract from this text.")] = None,
    pending: Annotated[bool, typer.Option("--pending", help="Extract from every record not extracted yet.")] = False,
    apply: Annotated[bool, typer.Option("--apply", help="Write the mentions and assertions (by the extractor, citing "
                                        "the record; --text is stored as a record first).")] = False,
    json_: JsonOpt = False,
) -> None:
    """Propose mentions, new entities and assertions from text; writes nothing without --apply."""
    with errors():
        chosen = [name for name, v in (("--record", record), ("--text", text), ("--pending", pending or None))
                  if v is not None]
        if len(chosen) != 1:
            fail("expected exactly one of --record REF, --text TEXT or --pending"
                 + (f"; got {' and '.join(chosen)}" if chosen else ""))
        with memory(ctx, write=apply) as m:
            if record is not None:
                r = m.extract_records([record], apply=apply)
            elif text is not None:
                r = m.extract_text(text, apply=apply)
            else:
                r = m.extract_pending(apply=apply)
            emit(ctx, r.to_dict(), render.extract)
