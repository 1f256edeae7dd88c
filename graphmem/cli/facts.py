"""Statements and the fact view: assert, end, retract, current, timeline, facts, why."""

from __future__ import annotations

from typing import Annotated, Any

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, ScopeOpt, ScopesOpt, WideOpt, emit, errors, memory

Subject = Annotated[str, typer.Argument(metavar="SUBJECT", help="Entity ref, name or alias.")]
Predicate = Annotated[str, typer.Argument(metavar="PREDICATE", help="Predicate name or alias (see 'graphmem predicates').")]
When = "ISO-8601 date or datetime, or 'now'."


def register(app: typer.Typer) -> None:
    app.command("assert")(assert_)
    app.command("end")(end)
    app.command("retract")(retract)
    app.command("cite")(cite)
    app.command("current")(current)
    app.command("timeline")(timeline)
    app.command("facts")(facts)
    app.command("why")(why)


def _written(d: dict[str, Any]) -> None:
    render.out(" ".join(d["created"]))


def assert_(
    ctx: typer.Context,
    subject: Subject,
    predicate: Predicate,
    obj: Annotated[str, typer.Argument(metavar="OBJECT", help="An entity (ref, name, alias) or a literal value.")],
    from_: Annotated[str | None, typer.Option("--from", metavar="T", help=f"Valid from (default: now). {When}")] = None,
    to: Annotated[str | None, typer.Option("--to", metavar="T", help=f"Valid until, exclusive (default: open). {When}")] = None,
    source: Annotated[list[str] | None, typer.Option("--source", "-s", metavar="URI", help="Evidence: a URI (repeatable).")] = None,
    by: Annotated[str, typer.Option("--by", metavar="WHO", help="operator, agent, extractor or import.")] = "operator",
    scope: ScopeOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Record that SUBJECT PREDICATE OBJECT holds; prints its fact:N."""
    with errors(), memory(ctx, write=True) as m:
        r = m.assert_(subject, predicate, obj, valid_from=from_, valid_to=to, sources=source or [], by=by,
                      scope=scope)
        emit(ctx, r.to_dict(), _written)


def end(
    ctx: typer.Context,
    subject: Subject,
    predicate: Predicate,
    obj: Annotated[str | None, typer.Argument(metavar="[OBJECT]", help="Only this value (default: every value).")] = None,
    at: Annotated[str, typer.Option("--at", metavar="T", help=f"When it stops holding (default: now). {When}")] = "now",
    source: Annotated[list[str] | None, typer.Option("--source", "-s", metavar="URI", help="Evidence: a URI (repeatable).")] = None,
    by: Annotated[str, typer.Option("--by", metavar="WHO", help="operator, agent, extractor or import.")] = "operator",
    scope: Annotated[str | None, typer.Option("--scope", metavar="SCOPE", help="The end's scope: it closes what "
                                              "holds in that scope (default: unscoped).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Close what holds for SUBJECT PREDICATE [OBJECT] at --at (default: now); prints its fact:N."""
    with errors(), memory(ctx, write=True) as m:
        r = m.end(subject, predicate, obj, at=at, sources=source or [], by=by, scope=scope)
        emit(ctx, r.to_dict(), _written)


def retract(
    ctx: typer.Context,
    fact: Annotated[str, typer.Argument(metavar="FACT", help="The statement to withdraw, fact:N.")],
    reason: Annotated[str | None, typer.Option("--reason", "-r", metavar="TEXT", help="Why it was wrong.")] = None,
    scope: Annotated[list[str] | None, typer.Option("--scope", metavar="SCOPE", help="Only a statement of this "
                                                    "scope (repeatable; another is an unknown fact).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Withdraw a statement from now on (it stays in the history)."""
    with errors(), memory(ctx, write=True) as m:
        r = m.retract(fact, reason, scope=scope)
        emit(ctx, r.to_dict(), _written)


def cite(
    ctx: typer.Context,
    fact: Annotated[str, typer.Argument(metavar="FACT", help="The assertion the evidence supports, fact:N.")],
    source: Annotated[list[str] | None, typer.Option("--source", "-s", metavar="REF",
                                                     help="Evidence: a record ref (rec:N) or a URI (repeatable; at least one).")] = None,
    note: Annotated[str | None, typer.Option("--note", "-n", metavar="TEXT", help="Why it supports the assertion.")] = None,
    by: Annotated[str, typer.Option("--by", metavar="WHO", help="operator, agent, extractor or import.")] = "operator",
    scope: Annotated[list[str] | None, typer.Option("--scope", metavar="SCOPE", help="Only a statement of this "
                                                    "scope (repeatable; another is an unknown fact).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Attach evidence to assertion FACT as a recorded cite of its own; prints the cite's fact:N."""
    with errors(), memory(ctx, write=True) as m:
        r = m.cite(fact, source or [], note, by=by, scope=scope)
        emit(ctx, r.to_dict(), _written)


def current(
    ctx: typer.Context,
    subject: Subject,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help=f"Valid time (default: now). {When}")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", metavar="T", help=f"Record time (default: now). {When}")] = None,
    predicate: Annotated[str | None, typer.Option("--predicate", "-p", metavar="P", help="Only this predicate.")] = None,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """What holds for SUBJECT at --as-of, as known at --known-at."""
    with errors(), memory(ctx, lookup=True) as m:
        emit(ctx, m.current(subject, as_of=as_of, known_at=known_at, predicate=predicate, scope=scope).to_dict(),
             lambda d: render.current(d, m.asserted_by(render.fact_refs(d["facts"]))))


def timeline(
    ctx: typer.Context,
    subject: Subject,
    predicate: Annotated[str | None, typer.Option("--predicate", "-p", metavar="P", help="Only this predicate.")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", metavar="T", help=f"Record time (default: now). {When}")] = None,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Every interval of SUBJECT, in order, and the statements behind them."""
    with errors(), memory(ctx, lookup=True) as m:
        emit(ctx, m.timeline(subject, predicate=predicate, known_at=known_at, scope=scope).to_dict(), render.timeline)


def facts(
    ctx: typer.Context,
    predicate: Annotated[str | None, typer.Option("--predicate", "-p", metavar="P", help="Only this predicate.")] = None,
    obj: Annotated[str | None, typer.Option("--object", "-o", metavar="REF", help="Only this object (entity or literal).")] = None,
    subject_type: Annotated[str | None, typer.Option("--subject-type", "-t", metavar="TYPE", help="Only subjects of this type.")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help=f"Valid time (default: now). {When}")] = None,
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Facts holding at --as-of, filtered by field ("which projects use Kuzu now?")."""
    with errors(), memory(ctx) as m:
        r = m.facts(predicate=predicate, object=obj, subject_type=subject_type, as_of=as_of, scope=scope)
        emit(ctx, r.to_dict(), lambda d: render.facts(d, m.asserted_by(render.fact_refs(d["facts"]))))


def why(
    ctx: typer.Context,
    fact: Annotated[str, typer.Argument(metavar="FACT", help="fact:N")],
    scope: ScopesOpt = None,
    json_: JsonOpt = False,
) -> None:
    """The receipts of one statement: sources, supersession, conflicts, retraction."""
    with errors(), memory(ctx, lookup=True) as m:
        emit(ctx, m.why(fact, scope=scope).to_dict(), render.why)
