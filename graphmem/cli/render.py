"""Readable (non-JSON) output: tables for people at a terminal (``cli/tables.py`` fits them to its width).

Times read as dates when they fall at midnight UTC (``2025-01-06``); an interval with no end shows
``open`` (a value cut short would end in ``…``, which no table here does to a ref, a URL or a date).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphmem.cli.tables import LIST, TEXT, Col, console
from graphmem.cli.tables import table as table  # commands print their own small tables through render
from graphmem.model.times import short_instant
from graphmem.model.words import plural

OPEN = "open"  # the end of an interval that has none


def out(text: str = "") -> None:
    console().print(text, markup=False)


def heading(text: str) -> None:
    from rich.markup import escape

    console().print(f"[bold]{escape(text)}[/bold]", highlight=False)



def obj_text(o: dict[str, Any] | None) -> str:
    if o is None:
        return "(every value)"
    if o["kind"] == "entity":
        return f"{o['name']} ({o['ref']})" if o.get("name") else o["ref"]
    return str(o["value"])


def day(iso: str | None) -> str:
    """A time as people read it: the date alone at midnight UTC, ``open`` for no end."""
    return short_instant(iso) or OPEN


def clip(text: str, n: int) -> str:
    """At most ``n`` characters of prose, with ``…`` where it was cut."""
    return text if len(text) <= n else text[:n - 1] + "…"


def fact_refs(facts: Iterable[dict[str, Any]]) -> list[str]:
    """Every statement behind these facts (what ``Memory.asserted_by`` is asked about)."""
    return [a for f in facts for a in f["assertions"]]


def trust(refs: Iterable[str], by: dict[str, str]) -> str:
    """The trust mark of a fact: ``low (extractor)`` when only the extractor asserted it, else nothing."""
    who = {by.get(r) for r in refs}
    return "low (extractor)" if who == {"extractor"} else ""


def fact_rows(facts: list[dict[str, Any]], by: dict[str, str], with_subject: bool = False) -> list[list[Any]]:
    rows = []
    for f in facts:
        row = [f["subject"]["ref"]] if with_subject else []
        row += [f["predicate"], obj_text(f["object"]), day(f["valid_from"]), day(f["valid_to"]),
                " ".join(f["assertions"]), trust(f["assertions"], by), " ".join(f["sources"]),
                ("conflict: " + " ".join(f["conflicts"])) if f["conflicts"] else ""]
        rows.append(row)
    return rows


# the least useful go first when a table is too wide: sources, then fact ids, the note, the trust mark
FACT_COLUMNS = [Col("predicate"), Col("object", TEXT), Col("from"), Col("to"), Col("facts", LIST, drop=3),
                Col("trust", drop=1), Col("sources", LIST, drop=4), Col("note", TEXT, drop=2)]


def current(doc: dict[str, Any], by: dict[str, str] | None = None) -> None:
    """``by``: who asserted each statement (``Memory.asserted_by``), for the trust mark."""
    s = doc["subject"]
    heading(f"{s['name']} ({s['ref']}), as of {day(doc['as_of'])}, known at {day(doc['known_at'])}")
    if not doc["facts"]:
        out(doc.get("message") or "nothing holds")
    else:
        table(FACT_COLUMNS, fact_rows(doc["facts"], by or {}))
    if doc.get("plans"):  # intended work, never facts: a table of their own, overdue and due first
        table([Col("plan"), Col("status"), Col("due"), Col("text", TEXT)],
              [[p["ref"], p["status"].replace("_", " "), day(p["due"]) if p["due"] else "", p["text"]]
               for p in doc["plans"]], title="plans (not facts)")


def timeline(doc: dict[str, Any]) -> None:
    s = doc["subject"]
    heading(f"Timeline of {s['name']} ({s['ref']}), known at {day(doc['known_at'])}")
    by = {e["fact"]: e["asserted_by"] for e in doc["events"] if "asserted_by" in e}
    table(FACT_COLUMNS, fact_rows(doc["intervals"], by), title="intervals")
    rows = []
    for e in doc["events"]:
        if e["event"] == "retract":
            rows.append([day(e["recorded_at"]), "retract", e["fact"], e["predicate"], e.get("reason") or "", ""])
            continue
        if e["event"].startswith("entity-"):
            rows.append([day(e["recorded_at"]), e["event"], e["id"], "", event_text(e), ""])
            continue
        mark = trust([e["fact"]], by)
        if e["event"] == "cite":
            rows.append([day(e["recorded_at"]), "cite", e["fact"], e["predicate"],
                         f"{e['cites']} + {', '.join(e['sources'])}", mark])
        elif e["event"] == "end":
            rows.append([day(e["recorded_at"]), "end", e["fact"], e["predicate"],
                         f"{obj_text(e['object'])} at {day(e['at'])}", mark])
        else:
            span = f"from {day(e['valid_from'])}" + (f" to {day(e['valid_to'])}" if e["valid_to"] else "")
            rows.append([day(e["recorded_at"]), "assert", e["fact"], e["predicate"],
                         f"{obj_text(e['object'])} {span}", mark])
    table([Col("recorded"), Col("event"), Col("fact"), Col("predicate"), Col("what", TEXT), Col("trust", drop=1)],
          rows, title="events")


def event_text(ev: dict[str, Any]) -> str:
    """One entity event (rename, aliases, merge, unmerge) as a short line."""
    op = ev["op"]
    if op == "rename":
        return f"{ev['entity']} renamed from {ev['from']!r} to {ev['to']!r}"
    if op in ("alias-add", "alias-remove"):
        verb = "added to" if op == "alias-add" else "removed from"
        return f"aliases {verb} {ev['entity']}: {', '.join(ev['aliases']) or 'none'}"
    if op == "merge":
        return f"{ev['merged']} merged into {ev['entity']} ({len(ev['carried'])} facts carried over)"
    return f"{ev['merged']} unmerged from {ev['entity']} ({len(ev['restored'])} facts copied back)"


def facts(doc: dict[str, Any], by: dict[str, str] | None = None) -> None:
    heading(f"{plural(len(doc['facts']), 'fact')} as of {day(doc['as_of'])}")
    table([Col("subject"), *FACT_COLUMNS], fact_rows(doc["facts"], by or {}, with_subject=True))


def lint(doc: dict[str, Any], per_code: int | None = None) -> None:
    """The summary by code, then the issues the document holds (errors first); ``per_code`` shows at most
    that many of each code (the demo's short form)."""
    c = doc["counts"]
    heading(f"lint: {plural(c['error'], 'error')}, {plural(c['warning'], 'warning')} "
            f"({plural(c['statements'], 'statement')}, {plural(c['entities'], 'entity', 'entities')})")
    summary = doc.get("summary") or []
    if summary:
        table([Col("code"), Col("severity"), Col("issues")],
              [[s["code"], s["severity"], f"{s['count']:,}"] for s in summary])
    shown: dict[str, int] = {}
    rows = []
    for i in doc["issues"]:
        shown[i["code"]] = shown.get(i["code"], 0) + 1
        if per_code is None or shown[i["code"]] <= per_code:
            rows.append([i["severity"], i["code"], i.get("fact") or i.get("subject") or i.get("record") or "",
                         i["message"]])
    if rows:
        out("")
        table([Col("severity", drop=1), Col("code"), Col("about"), Col("message", TEXT)], rows)
    hidden = {k: v - per_code for k, v in shown.items() if per_code is not None and v > per_code}
    if hidden:
        out("... and " + ", ".join(f"{v} more {k}" for k, v in sorted(hidden.items())) + " ('graphmem lint' lists all)")
    more = doc.get("more") or 0
    if more:
        out(f"... and {plural(more, 'more issue')} (--limit N shows more, --code CODE one code)")

def why(doc: dict[str, Any]) -> None:
    f = doc["fact"]
    what = f"cite of {f['cites']}" if f["op"] == "cite" else obj_text(f["object"])
    heading(f"{f['fact']}: {f['subject']} {f['predicate']} {what}")
    if f["op"] == "end":
        out(f"  ends at        {day(f['at'])}")
    elif f["op"] == "cite":
        out(f"  cites          {f['cites']}" + (f" ({f['note']})" if f["note"] else ""))
    else:
        out(f"  valid          {day(f['valid_from'])} .. {day(f['valid_to'])}")
    out(f"  recorded       {day(f['recorded_at'])} by {f['asserted_by']} (trust {f['trust']})")
    out(f"  sources        {', '.join(s['ref'] for s in doc['sources']) or 'none'}")
    for src in doc["sources"]:
        attached = f" (attached {src['attached_at']} by {src['cite']})" if src.get("cite") else ""
        if src["kind"] == "record":
            text = clip(" ".join(src["text"].split()), 200) if src.get("resolved") else "(does not resolve)"
            out(f"    {src['ref']}{attached}: {text}")
        elif attached:
            out(f"    {src['ref']}{attached}")
    for c in doc.get("cited_by", []):
        if c["retracted_at"]:
            out(f"  cite withdrawn {c['fact']} ({', '.join(c['sources'])}) at {c['retracted_at']}")
    for key, label in (("supersedes", "supersedes"), ("superseded_by", "superseded by"),
                       ("conflicts", "conflicts with"), ("ended_by", "ended by")):
        if doc[key]:
            out(f"  {label:<14} {', '.join(doc[key])}")
    for iv in doc["in_view"]:
        out(f"  holds          {day(iv['valid_from'])} .. {day(iv['valid_to'])} (with {', '.join(iv['assertions'])})")
    if doc["retraction"]:
        out(f"  RETRACTED      at {day(doc['retraction']['at'])}: {doc['retraction']['reason'] or 'no reason given'}")
    for ev in doc.get("entity_events", []):
        out(f"  {ev['event']:<14} {day(ev['recorded_at'])}: {event_text(ev)}")


def search(doc: dict[str, Any]) -> None:
    heading(f"{plural(len(doc['results']), 'record')} for {' '.join(doc['terms'])!r}")
    table([Col("ref"), Col("score"), Col("ts"), Col("kind", drop=1), Col("snippet", TEXT)],
          [[r["ref"], f"{r['score']:.3f}", day(r["ts"]), r["kind"], r["snippet"]] for r in doc["results"]])


def note(doc: dict[str, Any]) -> None:
    out(doc["ref"])


def ingest(doc: dict[str, Any]) -> None:
    red = ", ".join(f"{k} {v}" for k, v in doc["redactions"].items()) or "none"
    out(f"stored {plural(doc['stored'], 'record')}, {doc['duplicates']:,} already present, "
        f"{plural(len(doc['errors']), 'bad line')}; "
        f"redacted: {red}; truncated: {doc['truncated']} ({doc['seconds']} s)")
    if "extraction" in doc:
        x = doc["extraction"]
        out(f"extracted: {plural(len(x['mentions']), 'mention')}, {plural(len(x['written']), 'new assertion')} "
            f"({', '.join(x['written']) or 'none'})")


def extract(doc: dict[str, Any]) -> None:
    heading("mentions")
    table([Col("record"), Col("entity"), Col("text", TEXT), Col("span", drop=1)],
          [[m["record"] or "-", m["ref"], m["text"], f"{m['span'][0]}-{m['span'][1]}"] for m in doc["mentions"]])
    heading("proposed assertions")
    table([Col("subject"), Col("predicate"), Col("object", TEXT), Col("valid_from"), Col("evidence", drop=2),
           Col("rule", drop=1)],
          [[a["subject"], a["predicate"], a["object"], day(a["valid_from"]), a["evidence"] or "-", a["rule"]]
           for a in doc["assertions"]])
    if doc.get("ends"):
        heading("proposed ends (what stopped holding)")
        table([Col("subject"), Col("predicate"), Col("object", TEXT), Col("at"), Col("evidence", drop=2),
               Col("rule", drop=1)],
              [[a["subject"], a["predicate"], a["object"], day(a["valid_from"]), a["evidence"] or "-", a["rule"]]
               for a in doc["ends"]])
    if doc["entities"]:
        heading("proposed new entities")
        table([Col("type"), Col("name", TEXT), Col("record"), Col("rule", drop=1)],
              [[e["type"], e["name"], e["record"] or "-", e["rule"]] for e in doc["entities"]])
    if doc["skipped"]:
        heading("left out (negated, hedged or asked)")
        table([Col("reason"), Col("would propose", TEXT), Col("text", TEXT)],
              [[s["reason"], " ".join(" ".join(k) for k in s["would_propose"]), s["text"]] for s in doc["skipped"]])
    out("written: " + (", ".join(doc["written"]) or "nothing") if doc["writes_performed"] else
        "nothing written (use --apply)")


def recommend(doc: dict[str, Any]) -> None:
    when = f"as of {day(doc['as_of'])}" + ("" if doc["known_at"] == doc["as_of"] else f", known at {day(doc['known_at'])}")
    heading(f"Projects for {clip(doc['idea'], 80)!r}, {when}")
    if doc["seeds"]:
        out("seeds: " + ", ".join(f"{s['ref']} ({s['match']} {s['matched']!r})" for s in doc["seeds"]))
    if not doc["results"]:
        out(doc["message"] or "no project")
        return
    rows = []
    for r in doc["results"]:
        status = r["status"] or "-"
        if r["penalty"]:
            status += f" (x{r['penalty']['factor']})"
        rows.append([r["rank"], r["project"]["ref"], f"{r['score']:.3f}", status,
                     r["paths"][0]["line"] if r["paths"] else ""])
    table([Col("rank"), Col("project"), Col("score"), Col("status", TEXT, drop=1), Col("best path", TEXT)], rows)
    for r in doc["results"]:
        for p in r["paths"][1:]:
            out(f"  {r['project']['ref']} also: {p['line']}")


def path(doc: dict[str, Any]) -> None:
    heading(f"Paths from {doc['from']['ref']} to {doc['to']['ref']}, as of {day(doc['as_of'])}")
    if not doc["paths"]:
        out(doc["message"] or "no path")
        return
    for p in doc["paths"]:
        out(p["line"])
        out("    cites " + ", ".join(s["fact"] for s in p["steps"]))


def pack(doc: dict[str, Any], rows: int | None = None, trace_on_stderr: bool = False) -> None:
    """The bundle text alone (ready to paste or pipe); with a trace, the trace after it, on stderr with
    ``trace_on_stderr`` (so stdout stays the bundle alone) (``rows``: a summary per lane and at most that
    many candidates, the demo's short form)."""
    import contextlib
    import sys
    if doc["bundle_text"]:
        sys.stdout.write(doc["bundle_text"] + "\n")
    meta = doc["meta"]
    if "trace" not in doc:
        if not doc["bundle_text"]:
            sys.stderr.write(f"graphmem: empty bundle: {meta['message']}\n")
        return
    sys.stdout.flush()
    with contextlib.redirect_stdout(sys.stderr) if trace_on_stderr else contextlib.nullcontext():
        _trace(doc, rows)


def _trace(doc: dict[str, Any], rows: int | None) -> None:
    from collections import Counter
    meta = doc["meta"]
    out("")
    heading(f"trace: {meta['used_tokens']} of {plural(meta['budget_tokens'], 'token')} ({meta['tokenizer']}), "
            f"{plural(meta['items'], 'item')}" + (f"; {meta['message']}" if meta["message"] else ""))
    lines = []
    for lane in doc["trace"]["lanes"]:
        cands = lane["candidates"]
        reasons = Counter(r for c in cands for r in c["reasons"] if r != "within_budget")
        left = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
        out(f"  {lane['lane']:<9} {plural(len(cands), 'candidate'):>14}, {sum(c['included'] for c in cands):>2} packed; "
            f"left out: {left}")
        lines += [[lane["lane"], c["ref"], f"{c['score']:.3f}", "yes" if c["included"] else "no", " ".join(c["reasons"]),
                   clip(c["text"], 70)] for c in cands]
    if rows is not None:
        lines = sorted(lines, key=lambda r: r[3] != "yes")[:rows]
    table([Col("lane"), Col("ref"), Col("score"), Col("in"), Col("reasons", LIST, drop=1), Col("text", TEXT)], lines)
    parts = doc["trace"].get("parts") or []
    if parts:
        out("  budget: " + "; ".join(f"{x['part']} {x['used']} of {x['budget']} ({plural(x['items'], 'item')})"
                                     for x in parts))
    policy = doc["trace"].get("trust_policy") or {}
    if policy.get("min_trust"):
        dropped = policy.get("left_out") or []
        out(f"  trust policy: at least {policy['min_trust']}; left out: {', '.join(dropped) if dropped else 'none'}")
    refreshed = doc["trace"].get("refreshed") or []
    out(f"  use recorded for: {', '.join(refreshed)}" if refreshed else "  use recorded for: none")


def lifecycle(doc: dict[str, Any]) -> None:
    """The receipt: counts only, never a record's text."""
    verb = "would archive" if doc["dry_run"] else "archived"
    heading(f"lifecycle as of {doc['at']}: {verb} {plural(doc['archived'], 'record')} of {doc['considered']:,} "
            f"({doc['already_archived']:,} archived before)")
    rows = [[part, k, f"{v:,}"] for part in ("by_reason", "by_tier", "by_trust", "by_importance")
            for k, v in doc[part].items()]
    rows += [["kept", k, f"{v:,}"] for k, v in doc["kept"].items()]
    table([Col("count"), Col("value"), Col("records")], rows)


def revive(doc: dict[str, Any]) -> None:
    out(f"revived {', '.join(doc['revived'])} (event {doc['event']})")


def _short_pack(doc: dict[str, Any]) -> None:
    pack(doc, rows=12)


def demo(doc: dict[str, Any]) -> None:
    renderers = {"graphmem.current.v1": current, "graphmem.timeline.v1": timeline,
                 "graphmem.facts.v1": facts, "graphmem.why.v1": why,
                 "graphmem.lint.v1": lambda d: lint(d, per_code=3),
                 "graphmem.search.v1": search, "graphmem.extract.v1": extract,
                 "graphmem.recommend.v1": recommend, "graphmem.path.v1": path,
                 "graphmem.context-pack.v1": _short_pack}
    out(f"Built the example store at {doc['store']}")
    for step in doc["steps"]:
        out("")
        heading(f"# {step['question']}")
        out(f"$ graphmem --store {doc['store']} {step['command'].removeprefix('graphmem ')}")
        renderers[step["result"]["schema"]](step["result"])
    out("")
    out(f"Explore it yourself: export GRAPHMEM_STORE={doc['store']}; graphmem --help")
