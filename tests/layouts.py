"""Stores in the earlier layouts, made by code: a store written by this graphmem, copied table by table
into the tables and columns an older graphmem used (``SCHEMA_VERSION`` 1 to 7), as that version wrote them.

- layout 1: records keyed by their number, with a ``search`` column under Kuzu's full-text index
  (``record_text``); no ``Term``/``Posting`` tables; statement times as TIMESTAMP.
- layout 2: records keyed by ``rec:N`` and graphmem's own full-text index; statement times as TIMESTAMP.
- layout 3: statement times as INT64 microseconds; no ``EntityEvent`` table.
- layout 4: entity events; no ``RecordEvent`` table.
- layout 5: record events; no ``LexiconChange`` table (the stored linking lexicon).
- layout 6 (``SCOPES_LAYOUT - 1``): the stored lexicon; statements without a ``scope`` column.
- layout 7 (``FACETS_LAYOUT - 1``): statements with a scope; no ``SubjectFacet`` table (the view kept by
  subject and predicate).
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any

import kuzu

from graphmem.store.kuzu.base import FACETS_LAYOUT, LEXICON_LAYOUT, SCOPES_LAYOUT

_TIMES = ("valid_from", "valid_to", "recorded_at", "retracted_at")
_EPOCH = datetime.datetime(1970, 1, 1)
_FTS_WORD = re.compile(r"[^\W_]+")
_DIGITS = str.maketrans({str(d): "q" + "abcdefghij"[d] for d in range(10)})


def _fts_form(text: str) -> str:
    """What layout 1 put in ``Record.search`` (its records.fts_form)."""
    return " ".join(_FTS_WORD.findall(text.lower().translate(_DIGITS)))


def _columns(conn: Any, table: str) -> list[tuple[str, str, bool]]:
    """(name, type, primary key) of a table's columns; rel tables have no primary key."""
    rows = conn.execute(f"CALL table_info('{table}') RETURN *").get_all()
    return [(r[1], r[2], bool(r[4]) if isinstance(r[4], bool) else False) for r in rows]


def _timestamp(us: int | None) -> datetime.datetime | None:
    return None if us is None else _EPOCH + datetime.timedelta(microseconds=us)


def write_old_layout(src: Path, dst: Path, version: int) -> None:
    """Write the store at ``src`` (closed, current layout) as a store of layout ``version`` at ``dst``."""
    assert version in (1, 2, 3, 4, 5, SCOPES_LAYOUT - 1, FACETS_LAYOUT - 1)
    sdb = kuzu.Database(str(src / "graph.kuzu"), read_only=True)
    s = kuzu.Connection(sdb)
    dst.mkdir(parents=True)
    ddb = kuzu.Database(str(dst / "graph.kuzu"))
    d = kuzu.Connection(ddb)
    tables = s.execute("CALL show_tables() RETURN name, type").get_all()
    nodes = sorted(n for n, t in tables if t == "NODE")
    rels = sorted(n for n, t in tables if t == "REL")
    keys: dict[str, str] = {}
    d.execute("BEGIN TRANSACTION")
    for table in nodes:
        if (version == 1 and table in ("Term", "Posting") or table == "EntityEvent" and version < 4
                or table == "RecordEvent" and version < 5 or table == "LexiconChange" and version < LEXICON_LAYOUT
                or table == "SubjectFacet" and version < FACETS_LAYOUT):
            continue
        cols = _columns(s, table)
        if table == "Assertion" and version < SCOPES_LAYOUT:  # layouts before SCOPES_LAYOUT: no scope
            cols = [c for c in cols if c[0] != "scope"]
        names = [c for c, _, _ in cols]
        rows = s.execute(f"MATCH (x:{table}) RETURN {', '.join(f'x.{c}' for c in names)}").get_all()
        types = {c: t for c, t, _ in cols}
        pk = next(c for c, _, p in cols if p)
        if table == "Assertion" and version < 3:
            types.update({c: "TIMESTAMP" for c in _TIMES})
            at = [names.index(c) for c in _TIMES]
            rows = [[_timestamp(v) if i in at else v for i, v in enumerate(r)] for r in rows]
        if table == "Meta" and version == 1:
            rows = [r for r in rows if r[0] not in ("index_docs", "index_terms")]
        if table == "Meta":
            rows = [[r[0], str(version) if r[0] == "schema_version" else r[1]] for r in rows]
        if table == "Record" and version == 1:  # keyed by number, with the text as the FTS index saw it
            i_ref, i_text = names.index("ref"), names.index("text")
            rows = [[v for i, v in enumerate(r) if i != i_ref] + [_fts_form(r[i_text])] for r in rows]
            names = [c for c in names if c != "ref"] + ["search"]
            types["search"] = "STRING"
            pk = "id"
        keys[table] = pk
        d.execute(f"CREATE NODE TABLE {table}("
                  + ", ".join(f"{c} {types[c]}" + (" PRIMARY KEY" if c == pk else "") for c in names) + ")")
        for r in rows:
            d.execute(f"CREATE (:{table} {{{', '.join(f'{c}: ${c}' for c in names)}}})", dict(zip(names, r, strict=True)))
    for rel in rels:
        pairs = [(r[0], r[1]) for r in s.execute(f"CALL show_connection('{rel}') RETURN *").get_all()]
        props = [(c, t) for c, t, _ in _columns(s, rel)]
        d.execute(f"CREATE REL TABLE {rel}(" + ", ".join(f"FROM {a} TO {b}" for a, b in pairs)
                  + "".join(f", {c} {t}" for c, t in props) + ")")
        for a, b in pairs:
            ka, kb = keys[a], keys[b]
            rows = s.execute(f"MATCH (a:{a})-[e:{rel}]->(b:{b}) RETURN a.{ka}, b.{kb}"
                             + "".join(f", e.{c}" for c, _ in props)).get_all()
            for r in rows:
                params = {"a": r[0], "b": r[1], **{f"p_{c}": v for (c, _), v in zip(props, r[2:], strict=True)}}
                d.execute(f"MATCH (a:{a} {{{ka}: $a}}), (b:{b} {{{kb}: $b}}) CREATE (a)-[:{rel} {{"
                          + ", ".join(f"{c}: $p_{c}" for c, _ in props) + "}]->(b)", params)
    d.execute("COMMIT")
    if version == 1 and "Record" in nodes:
        d.execute("CALL CREATE_FTS_INDEX('Record', 'record_text', ['search'])")
    for c in (s, d):
        c.close()
    sdb.close()
    ddb.close()
