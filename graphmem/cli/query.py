"""Ad-hoc queries: cypher."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

import graphmem.cli.render as render
from graphmem.cli.common import JsonOpt, emit, errors, memory
from graphmem.model.words import plural


def register(app: typer.Typer) -> None:
    app.command("cypher")(cypher)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))
    return str(v)


def _table(d: dict[str, Any]) -> None:
    if d["columns"]:
        render.table(d["columns"], [[_cell(v) for v in r] for r in d["rows"]])
    render.out(plural(d["count"], "row"))


def cypher(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="One read-only query in Kuzu's Cypher (quote it).")],
    json_: JsonOpt = False,
) -> None:
    """Run a read-only Cypher query on the store and print its rows (a table, or graphmem.cypher.v1).

    Kuzu's show_tables() function lists the store's tables; docs/architecture.md says what
    each holds. A query that would write (CREATE, MERGE, SET, DELETE, REMOVE, DROP,
    ALTER, COPY, ...), read files (LOAD FROM) or change a setting is refused (exit 2): Kuzu runs it
    in a read-only transaction.
    """
    with errors(), memory(ctx) as m:
        emit(ctx, m.cypher(query).to_dict(), _table)
