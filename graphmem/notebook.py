"""Results for people and notebooks: every result with ``to_dict`` gets from here a readable ``repr``, an
HTML table in Jupyter (``_repr_html_``), ``to_json``, and ``to_frame`` (pandas); a timeline's ``plot``
(matplotlib) is drawn here too. pandas and matplotlib are optional (``pip install 'graphmem[notebook]'``)
and imported only when asked for."""

from __future__ import annotations

import datetime as _dt
import html
import importlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphmem.errors import MissingExtra
from graphmem.model.times import short_instant
from graphmem.model.words import plural as plural  # re-exported: results count their rows with it

if TYPE_CHECKING:
    from graphmem.model import Entity
    from graphmem.model.facts import Event, Fact

REPR_ROWS = 10  # rows a repr shows before "... and N more"
EXTRA = "notebook"  # the optional extra that brings pandas and matplotlib


def optional(module: str, what: str) -> Any:
    """``module`` imported, or MissingExtra naming what needed it and the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.partition(".")[0]
        raise MissingExtra(f"{what} needs {top}, which is not installed: pip install 'graphmem[{EXTRA}]'") from None



class HtmlRepr:
    """Mixin: Jupyter shows the result as a table (no extra call); ``repr`` is a summary line and its first
    rows, dates shown alone at midnight UTC; ``to_dict`` is the data as the ``--json`` document, ``to_json``
    its JSON text, ``to_frame`` its rows as a pandas DataFrame.

    A result says what it holds through ``_summary`` (the repr's first line), ``_lines`` (its rows, for
    people) and ``_frame`` (columns and rows, for pandas); each has a default."""

    def _repr_html_(self) -> str:
        return doc_html(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The result as the ``--json`` document of its command (each result writes its own).

        Returns
        -------
        dict
            JSON-ready values; ``schema`` names the document (``graphmem.current.v1``, ...).
        """
        raise NotImplementedError

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON text of the ``--json`` document, as the CLI prints it (without the newline).

        Returns
        -------
        str
            ``to_dict()`` as JSON, indented by ``indent`` spaces (one line with None).
        """
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def to_frame(self) -> Any:
        """The result's rows as a pandas DataFrame (times as UTC datetimes, ids as ``fact:N`` refs).

        Needs pandas (``pip install 'graphmem[notebook]'``); MissingExtra says so when it is absent.

        Returns
        -------
        pandas.DataFrame
            One row per fact, event, record or issue the result holds (one row for a summary).
        """
        columns, rows = self._frame()
        return frame(columns, rows)

    def _summary(self) -> str:
        return ""

    def _lines(self, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` rows for the repr, and how many there are in all."""
        return [], 0

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        """Columns and rows for ``to_frame``; by default one row of the document's plain values."""
        doc = {k: v for k, v in self.to_dict().items()
               if k != "schema" and not isinstance(v, dict | list)}
        return list(doc), [list(doc.values())]

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self._summary()})"
        lines, total = self._lines(REPR_ROWS)
        more = [f"  ... and {total - len(lines)} more"] if total > len(lines) else []
        return "\n".join([head, *(f"  {line}" for line in lines), *more])


TIME_COLUMNS = {"valid_from", "valid_to", "recorded_at", "retracted_at", "ts", "at"}


def frame(columns: list[str], rows: list[list[Any]]) -> Any:
    """A pandas DataFrame of ``rows``; the time columns typed as UTC datetimes even when all are open (None)."""
    pd = optional("pandas", "to_frame()")
    df = pd.DataFrame(rows, columns=columns)
    for c in TIME_COLUMNS.intersection(columns):
        df[c] = pd.to_datetime(df[c], utc=True).astype("datetime64[us, UTC]")  # one unit, open or not
    return df


def rows_of(items: Sequence[Any], limit: int, line: Any) -> tuple[list[str], int]:
    """``_lines`` for a sequence: the first ``limit`` items through ``line``, and the count."""
    return [line(x) for x in items[:limit]], len(items)


def who(e: Entity) -> str:
    """``Atlas (project:atlas)``, or the ref alone when the name is missing."""
    return f"{e.name} ({e.ref})" if e.name and e.name != e.ref else e.ref



def day(value: _dt.datetime | str | None, open_text: str = "open") -> str:
    """A time for people: the date alone at midnight UTC (``model.times.short_instant``), else to the second;
    None is ``open_text``."""
    text = short_instant(value)
    if text is None:
        return open_text
    return text.partition(".")[0] + "Z" if "." in text else text


FACT_COLUMNS = ["predicate", "object", "object_name", "object_kind", "valid_from", "valid_to", "assertions",
                "sources", "conflicts"]


def fact_row(f: Fact) -> list[Any]:
    return [f.predicate, f.object, f.object_name, f.object_kind, f.valid_from, f.valid_to, list(f.assertions),
            list(f.sources), list(f.conflicts)]


EVENT_COLUMNS = ["op", "fact", "subject", "predicate", "object", "object_name", "valid_from", "valid_to",
                 "recorded_at", "retracted_at", "retract_reason", "sources", "asserted_by", "trust"]


def event_row(e: Event) -> list[Any]:
    return [list(e.sources) if c == "sources" else getattr(e, c) for c in EVENT_COLUMNS]


def clip(text: str, width: int = 60) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def fact_line(f: Fact) -> str:
    note = f" conflicts {' '.join(f.conflicts)}" if f.conflicts else ""
    return f"{f.predicate} {clip(f.object_label)}  {day(f.valid_from)} to {day(f.valid_to)}  {' '.join(f.assertions)}{note}"


def plot_facts(facts: Sequence[Fact], title: str, ax: Any = None, now: _dt.datetime | None = None) -> Any:
    """The facts as horizontal bars over time, one row each, grouped by predicate; an open fact runs to ``now``
    (default: the current time) and is drawn lighter. Returns the matplotlib Axes."""
    optional("matplotlib", "plot()")
    if ax is None:
        plt = optional("matplotlib.pyplot", "plot()")
        _, ax = plt.subplots(figsize=(10, 0.35 * len(facts) + 1.2))
    end = now or _dt.datetime.now(_dt.UTC)
    end = max([end, *(f.valid_from for f in facts)])
    colors: dict[str, str] = {}
    for y, f in enumerate(facts):
        color = colors.setdefault(f.predicate, f"C{len(colors) % 10}")
        stop = f.valid_to or end
        ax.barh(y, stop - f.valid_from, left=f.valid_from, height=0.6, color=color,
                alpha=0.45 if f.valid_to is None else 0.9)
        ax.text(f.valid_from, y, f" {f.predicate}: {f.object_name or f.object}", va="center", fontsize=8)
    ax.set_yticks([])
    ax.invert_yaxis()
    ax.set_title(title)
    return ax


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
    return [([f["subject"]["ref"]] if subject else []) + [f["predicate"], _obj(f["object"]), short_instant(f["valid_from"]),
                                                          short_instant(f["valid_to"]) or "open",
                                                          " ".join(f["assertions"]), " ".join(f["sources"])]
            for f in facts]


def doc_html(doc: dict[str, Any]) -> str:
    """A JSON document of graphmem as HTML: a table for the common kinds, the JSON otherwise. Times show as a
    date alone when they fall at midnight UTC; an open end reads ``open``."""
    kind = doc.get("schema", "")
    cols = ["predicate", "object", "from", "to", "facts", "sources"]
    if kind == "graphmem.current.v1":
        s = doc["subject"]
        return _table(cols, _facts(doc["facts"]), f"{s['name']} ({s['ref']}) as of {day(doc['as_of'])}, "
                                                  f"known at {day(doc['known_at'])}")
    if kind == "graphmem.timeline.v1":
        s = doc["subject"]
        return _table(cols, _facts(doc["intervals"]), f"Timeline of {s['name']} ({s['ref']})")
    if kind == "graphmem.facts.v1":
        return _table(["subject", *cols], _facts(doc["facts"], subject=True),
                      f"{plural(len(doc['facts']), 'fact')} as of {day(doc['as_of'])}")
    if kind == "graphmem.search.v1":
        return _table(["ref", "score", "ts", "kind", "snippet"],
                      [[r["ref"], round(r["score"], 3), short_instant(r["ts"]), r["kind"], r["snippet"]]
                       for r in doc["results"]])
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
