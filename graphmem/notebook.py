"""Results as HTML tables in Jupyter: every result with ``to_dict`` gets ``_repr_html_`` and ``to_json``
from here."""

from __future__ import annotations

import html
import json
from typing import Any

from graphmem.model.words import plural


class HtmlRepr:
    """Mixin: Jupyter shows the result as a table (no extra call); ``to_dict`` is the data as the
    ``--json`` document, ``to_json`` its JSON text."""

    def _repr_html_(self) -> str:
        return doc_html(self.to_dict())  # type: ignore[attr-defined]

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON text of the ``--json`` document, as the CLI prints it (without the newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)  # type: ignore[attr-defined]


def _table(columns: list[str], rows: list[list[Any]], title: str | None = None) -> str:
    head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape('' if v is None else str(v))}</td>"
                                    for v in r) + "</tr>" for r in rows)
    cap = f"<p><b>{html.escape(title)}</b></p>" if title else ""
    return f"{cap}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _obj(o: dict[str, Any] | None) -> str:
    if o is None:
        return "(every value)"
    if o.get("kind") == "entity":
        return f"{o.get('name') or ''} ({o['ref']})"
    return str(o.get("value"))


def _facts(facts: list[dict[str, Any]], subject: bool = False) -> list[list[Any]]:
    return [([f["subject"]["ref"]] if subject else []) + [f["predicate"], _obj(f["object"]), f["valid_from"],
                                                          f["valid_to"] or "…", " ".join(f["assertions"]),
                                                          " ".join(f["sources"])] for f in facts]


def doc_html(doc: dict[str, Any]) -> str:
    """A JSON document of graphmem as HTML: a table for the common kinds, the JSON otherwise."""
    kind = doc.get("schema", "")
    cols = ["predicate", "object", "from", "to", "facts", "sources"]
    if kind == "graphmem.current.v1":
        s = doc["subject"]
        return _table(cols, _facts(doc["facts"]), f"{s['name']} ({s['ref']}) as of {doc['as_of']}, known at {doc['known_at']}")
    if kind == "graphmem.timeline.v1":
        s = doc["subject"]
        return _table(cols, _facts(doc["intervals"]), f"Timeline of {s['name']} ({s['ref']})")
    if kind == "graphmem.facts.v1":
        return _table(["subject", *cols], _facts(doc["facts"], subject=True), f"{plural(len(doc['facts']), 'fact')} as of {doc['as_of']}")
    if kind == "graphmem.search.v1":
        return _table(["ref", "score", "ts", "kind", "snippet"],
                      [[r["ref"], round(r["score"], 3), r["ts"], r["kind"], r["snippet"]] for r in doc["results"]])
    if kind == "graphmem.recommend.v1":
        rows = [[r["rank"], r["project"]["ref"], round(r["score"], 3), r["status"] or "",
                 r["paths"][0]["line"] if r["paths"] else ""] for r in doc["results"]]
        return _table(["rank", "project", "score", "status", "best path"], rows, f"Projects for {doc['idea']!r}")
    if kind == "graphmem.path.v1":
        return _table(["path", "cites"], [[p["line"], ", ".join(s["fact"] for s in p["steps"])] for p in doc["paths"]],
                      doc["message"] or f"Paths from {doc['from']['ref']} to {doc['to']['ref']}")
    if kind == "graphmem.context-pack.v1":
        m = doc["meta"]
        return (f"<p><b>{m['used_tokens']} of {plural(m['budget_tokens'], 'token')}, {plural(m['items'], 'item')}</b></p>"
                f"<pre>{html.escape(doc['bundle_text'])}</pre>")
    return f"<pre>{html.escape(json.dumps(doc, indent=2, ensure_ascii=False))}</pre>"
