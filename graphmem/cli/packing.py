"""The context packer: pack."""

from __future__ import annotations

from typing import Annotated

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, ScopesOpt, WideOpt, emit, errors, memory
from graphmem.cli.evidence import AboutOpt, ArchivedOpt, KindOpt, NoTrackOpt, SinceOpt, SourceOpt, UntilOpt

When = "ISO-8601 date or datetime, or 'now'."


def register(app: typer.Typer) -> None:
    app.command("pack")(pack)


def pack(
    ctx: typer.Context,
    query: Annotated[str, typer.Option("--query", "-q", metavar="Q", help="What the bundle is for (required).")],
    budget_tokens: Annotated[int, typer.Option("--budget-tokens", "-b", metavar="N",
                                               help="Most tokens the bundle may take (0-1,000,000).")] = 1000,
    max_items: Annotated[int, typer.Option("--max-items", metavar="N", help="Most lines in the bundle (1-1000).")] = 40,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help=f"Valid time (default: now). {When}")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", metavar="T", help=f"Record time (default: now). {When}")] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Add every candidate considered and why it was kept or left out.")] = False,
    kind: KindOpt = None,
    source: SourceOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    about: AboutOpt = None,
    tail: Annotated[int, typer.Option("--tail", metavar="N", help=(
        "Keep room for the N most recent records of the current session (or of the records the filter "
        "allows), after guidance and before retrieval (0-1000)."))] = 0,
    tail_budget: Annotated[int | None, typer.Option("--tail-budget", metavar="T", help=(
        "The most tokens the tail may take (at most the budget); alone, as many recent records as fit."))] = None,
    session: Annotated[str | None, typer.Option("--session", metavar="KEY", help=(
        "The session of the tail: a session key, a source up to '#' (default: the current one)."))] = None,
    min_trust: Annotated[str | None, typer.Option("--min-trust", metavar="LEVEL", help=(
        "Leave out records and facts below this trust: low, medium or high (quarantined records are below "
        "low; unrated records stay)."))] = None,
    include_archived: ArchivedOpt = False,
    no_track: NoTrackOpt = False,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """A small cited context bundle for an LLM request.

    Prints the bundle text alone on stdout, ready to pipe (graphmem pack -q "..." | llm); --trace
    adds every candidate considered, on stderr; --json prints one graphmem.context-pack.v1 document
    instead (with the trace in it). The budget goes to guidance first, then to a protected tail of the
    most recent records (--tail, --tail-budget), then to retrieval; --min-trust leaves low-trust and
    quarantined records out. The records packed have their use recorded (not with --no-track, nor
    --as-of or --known-at in the past); --trace names them.
    """
    with errors(), memory(ctx, lookup=True, track=not no_track and as_of is None and known_at is None) as m:
        r = m.pack(query, budget_tokens=budget_tokens, max_items=max_items, as_of=as_of, known_at=known_at,
                   trace=trace, kind=kind, source=source, since=since, until=until, about=about,
                   include_archived=include_archived, track=not no_track, tail=tail, tail_budget=tail_budget,
                   session=session, min_trust=min_trust, scope=scope)
        emit(ctx, r.to_dict(), lambda d: render.pack(d, trace_on_stderr=True))
