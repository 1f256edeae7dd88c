"""Evidence records: ingest and search."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, ScopesOpt, WideOpt, bad_lines, emit, errors, fail, memory
from graphmem.cli.progress import bar

_T = "ISO-8601 date or datetime, or 'now'."
# the record filters of search and pack (docs/evidence.md): values of one option are alternatives, options combine
KindOpt = Annotated[list[str] | None, typer.Option("--kind", metavar="KIND", help="Only records of this kind "
                                                   "(repeat for any of several).")]
SourceOpt = Annotated[list[str] | None, typer.Option("--source", metavar="SRC", help="Only records whose source is "
                                                     "SRC or goes on from it after #, /, : or ? (repeatable).")]
SinceOpt = Annotated[str | None, typer.Option("--since", metavar="T", help=f"Only records whose time (ts) is at or "
                                              f"after T. {_T}")]
UntilOpt = Annotated[str | None, typer.Option("--until", metavar="T", help=f"Only records whose time (ts) is before "
                                              f"T. {_T}")]
AboutOpt = Annotated[list[str] | None, typer.Option("--about", metavar="ENTITY", help="Only records that mention "
                                                    "this entity (ref, name or alias; MENTIONS written by extraction; "
                                                    "repeatable).")]
ArchivedOpt = Annotated[bool, typer.Option("--include-archived", help="Archived records too (graphmem lifecycle; "
                                           "by default they are left out).")]
NoTrackOpt = Annotated[bool, typer.Option("--no-track", help="Record no use of the records returned (docs/lifecycle.md; "
                                          "use is recorded only when the store is not held by another process).")]


def register(app: typer.Typer) -> None:
    app.command("note")(note)
    app.command("ingest")(ingest)
    app.command("search")(search)
    app.command("extract")(extract)


def ingest(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="JSONL records (text, id, ts, kind, source, scope, "
                                        "importance, meta); a Markdown (.md, .markdown) or text (.txt) file, a record "
                                        "per section or paragraph; or - for stdin.")],
    format_: Annotated[str, typer.Option("--format", metavar="FORMAT", help="auto (by extension; stdin: jsonl), "
                                         "jsonl, markdown or text.")] = "auto",
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Store secrets as they are (default: redact).")] = False,
    scope: Annotated[str | None, typer.Option("--scope", metavar="SCOPE", help="The scope of the records that carry "
                                              "none (docs/scopes.md).")] = None,
    extract_: Annotated[bool, typer.Option("--extract", help="Also extract from the new records and apply it "
                                           "(mentions and assertions by the extractor).")] = False,
    json_: JsonOpt = False,
) -> None:
    """Store evidence records; bad lines are reported and skipped (exit 2 after the good ones are stored), repeats add nothing."""
    with errors():
        if file != "-" and not Path(file).is_file():
            fail(f"cannot read records file {file!r}: no such file")
        from graphmem.evidence.textfiles import file_format
        file_format(file, format_)  # a bad --format before the store is opened
        with memory(ctx, write=True) as m:
            with bar() as progress:
                r = m.ingest(sys.stdin.buffer if file == "-" else file, redact=not no_redact, extract=extract_,
                             format=format_, progress=progress, scope=scope)
            emit(ctx, r.to_dict(), render.ingest)
            if r.errors and not r.stored:  # a store this command created, with nothing in it, is removed
                bad_lines(r.errors)
        if r.errors:  # after the store is closed: a store this command created keeps the good lines
            bad_lines(r.errors)


def note(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The note (at most 16,000 characters are kept).")],
    kind: Annotated[str | None, typer.Option("--kind", metavar="KIND", help="Its kind (default: note): message, "
                                             "note, tool_result, doc, rule, ...")] = None,
    source: Annotated[str | None, typer.Option("--source", metavar="SRC", help="Where it comes from.")] = None,
    scope: Annotated[str | None, typer.Option("--scope", metavar="SCOPE", help="Whose it is (a user, agent, "
                                              "project or session).")] = None,
    ts: Annotated[str | None, typer.Option("--ts", metavar="T", help="When it was written (default: now). "
                                           "ISO-8601 date or datetime, or 'now'.")] = None,
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Store secrets as they are (default: redact).")] = False,
    due: Annotated[str | None, typer.Option("--due", metavar="T", help="A plan due at T (kind plan: intended work, "
                                            "never a fact). ISO-8601 date or datetime.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Store one evidence record and print its rec:N; the same note again writes nothing."""
    with errors(), memory(ctx, write=True) as m:
        r = m.note(text, kind=kind, source=source, scope=scope, ts=ts, redact=not no_redact, due=due)
        emit(ctx, r.to_dict(), render.note)
        if not r.stored:
            sys.stderr.write(f"graphmem: the same note is already stored as {r.ref}; nothing written\n")


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words to look for (BM25 over record text).")],
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="At most N records.")] = 10,
    kind: KindOpt = None,
    source: SourceOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    about: AboutOpt = None,
    include_archived: ArchivedOpt = False,
    no_track: NoTrackOpt = False,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Full-text (BM25) search over evidence records, best first; the filters rank within the records they allow."""
    with errors(), memory(ctx, track=not no_track) as m:
        emit(ctx, m.search(query, limit=limit, kind=kind, source=source, since=since, until=until,
                           about=about, include_archived=include_archived, track=not no_track,
                           scope=scope).to_dict(),
             render.search)


def extract(
    ctx: typer.Context,
    record: Annotated[str | None, typer.Option("--record", "-r", metavar="REF", help="Extract from this record.")] = None,
    text: Annotated[str | None, typer.Option("--text", "-t", metavar="TEXT", help="Extract from this text.")] = None,
    pending: Annotated[bool, typer.Option("--pending", help="Extract from every record not extracted yet.")] = False,
    apply: Annotated[bool, typer.Option("--apply", help="Write the mentions and assertions (by the extractor, citing "
                                        "the record; --text is stored as a record first).")] = False,
    json_: JsonOpt = False,
    wide: WideOpt = False,
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
                with bar() as progress:
                    r = m.extract_pending(apply=apply, progress=progress)
            emit(ctx, r.to_dict(), render.extract)

