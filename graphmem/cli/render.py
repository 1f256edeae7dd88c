"""Readable (non-JSON) output: small tables for people at a terminal."""

from __future__ import annotations

from functools import cache
from typing import Any


def _width() -> int | None:
    """Wide enough for fact tables when output is piped (rich assumes 80 columns)."""
    import os
    import sys
    if sys.stdout.isatty():
        return None
    return int(os.environ.get("COLUMNS", "160"))


@cache
def _console() -> Any:
    from rich.console import Console  # imported on first use: --json output never pays for it

    return Console(highlight=False, soft_wrap=False, emoji=False, width=_width())


def out(text: str = "") -> None:
    _console().print(text, markup=False)


def heading(text: str) -> None:
    _console().print(f"[bold]{text}[/bold]", highlight=False)


def table(columns: list[str], rows: list[list[Any]], title: str | None = None) -> None:
    from rich.table import Table

    t = Table(*columns, title=title, title_justify="left", show_edge=False, pad_edge=False)
    for r in rows:
        t.add_row(*("" if v is None else str(v) for v in r))
    _console().print(t)


def obj_text(o: dict[str, Any] | None) -> str:
    if o is None:
        return "(every value)"
    if o["kind"] == "entity":
        return f"{o['name']} ({o['ref']})" if o.get("name") else o["ref"]
    return str(o["value"])


def day(iso: str | None) -> str:
    if iso is None:
        return "…"
    return iso[:10] if iso.endswith("T00:00:00Z") else iso


def fact_rows(facts: list[dict[str, Any]], with_subject: bool = False) -> list[list[Any]]:
    rows = []
    for f in facts:
        row = [f["subject"]["ref"]] if with_subject else []
        row += [f["predicate"], obj_text(f["object"]), day(f["valid_from"]), day(f["valid_to"]),
                " ".join(f["assertions"]), " ".join(f["sources"]) or "-",
                ("conflict: " + " ".join(f["conflicts"])) if f["conflicts"] else ""]
        rows.append(row)
    return rows


FACT_COLUMNS = ["predicate", "object", "from", "to", "facts", "sources", "note"]


def current(doc: dict[str, Any]) -> None:
    s = doc["subject"]
    heading(f"{s['name']} ({s['ref']}), as of {doc['as_of']}, known at {doc['known_at']}")
    if not doc["facts"]:
        out("nothing holds")
        return
    table(FACT_COLUMNS, fact_rows(doc["facts"]))


def timeline(doc: dict[str, Any]) -> None:
    s = doc["subject"]
    heading(f"Timeline of {s['name']} ({s['ref']}), known at {doc['known_at']}")
    table(FACT_COLUMNS, fact_rows(doc["intervals"]), title="intervals")
    rows = []
    for e in doc["events"]:
        if e["event"] == "retract":
            rows.append([e["recorded_at"], "retract", e["fact"], e["predicate"], e.get("reason") or ""])
        elif e["event"] == "cite":
            rows.append([e["recorded_at"], "cite", e["fact"], e["predicate"],
                         f"{e['cites']} + {', '.join(e['sources'])}"])
        elif e["event"] == "end":
            rows.append([e["recorded_at"], "end", e["fact"], e["predicate"],
                         f"{obj_text(e['object'])} at {day(e['at'])}"])
        else:
            span = f"from {day(e['valid_from'])}" + (f" to {day(e['valid_to'])}" if e["valid_to"] else "")
            rows.append([e["recorded_at"], "assert", e["fact"], e["predicate"], f"{obj_text(e['object'])} {span}"])
    table(["recorded", "event", "fact", "predicate", "what"], rows, title="events")


def facts(doc: dict[str, Any]) -> None:
    heading(f"{len(doc['facts'])} facts as of {doc['as_of']}")
    table(["subject", *FACT_COLUMNS], fact_rows(doc["facts"], with_subject=True))


def lint(doc: dict[str, Any], per_code: int | None = None) -> None:
    """The issues, errors first; ``per_code`` shows at most that many of each code (the demo's short form)."""
    c = doc["counts"]
    heading(f"lint: {c['error']} errors, {c['warning']} warnings "
            f"({c['statements']} statements, {c['entities']} entities)")
    shown: dict[str, int] = {}
    rows = []
    for i in sorted(doc["issues"], key=lambda i: i["severity"] != "error"):
        shown[i["code"]] = shown.get(i["code"], 0) + 1
        if per_code is None or shown[i["code"]] <= per_code:
            rows.append([i["severity"], i["code"], i.get("fact") or i.get("subject") or i.get("record") or "",
                         i["message"]])
    if rows:
        table(["severity", "code", "about", "message"], rows)
    hidden = {k: v - per_code for k, v in shown.items() if per_code is not None and v > per_code}
    if hidden:
        out("... and " + ", ".join(f"{v} more {k}" for k, v in sorted(hidden.items())) + " ('graphmem lint' lists all)")


def why(doc: dict[str, Any]) -> None:
    f = doc["fact"]
    what = f"cite of {f['cites']}" if f["op"] == "cite" else obj_text(f["object"])
    heading(f"{f['fact']}: {f['subject']} {f['predicate']} {what}")
    if f["op"] == "end":
        out(f"  ends at        {f['at']}")
    elif f["op"] == "cite":
        out(f"  cites          {f['cites']}" + (f" ({f['note']})" if f["note"] else ""))
    else:
        out(f"  valid          {day(f['valid_from'])} .. {day(f['valid_to'])}")
    out(f"  recorded       {f['recorded_at']} by {f['asserted_by']} (trust {f['trust']})")
    out(f"  sources        {', '.join(s['ref'] for s in doc['sources']) or 'none'}")
    for src in doc["sources"]:
        attached = f" (attached {src['attached_at']} by {src['cite']})" if src.get("cite") else ""
        if src["kind"] == "record":
            text = " ".join(src["text"].split())[:200] if src.get("resolved") else "(does not resolve)"
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
        out(f"  RETRACTED      at {doc['retraction']['at']}: {doc['retraction']['reason'] or 'no reason given'}")


def search(doc: dict[str, Any]) -> None:
    heading(f"{len(doc['results'])} records for {' '.join(doc['terms'])!r}")
    table(["ref", "score", "ts", "kind", "snippet"],
          [[r["ref"], f"{r['score']:.3f}", day(r["ts"]), r["kind"], r["snippet"]] for r in doc["results"]])


def ingest(doc: dict[str, Any]) -> None:
    red = ", ".join(f"{k} {v}" for k, v in doc["redactions"].items()) or "none"
    out(f"stored {doc['stored']} records, {doc['duplicates']} already present, {len(doc['errors'])} bad lines; "
        f"redacted: {red}; truncated: {doc['truncated']} ({doc['seconds']} s)")
    if "extraction" in doc:
        x = doc["extraction"]
        out(f"extracted: {len(x['mentions'])} mentions, {len(x['written'])} new assertions "
            f"({', '.join(x['written']) or 'none'})")


def extract(doc: dict[str, Any]) -> None:
    heading("mentions")
    table(["record", "entity", "text", "span"],
          [[m["record"] or "-", m["ref"], m["text"], f"{m['span'][0]}-{m['span'][1]}"] for m in doc["mentions"]])
    heading("proposed assertions")
    table(["subject", "predicate", "object", "valid_from", "evidence", "rule"],
          [[a["subject"], a["predicate"], a["object"], day(a["valid_from"]), a["evidence"] or "-", a["rule"]]
           for a in doc["assertions"]])
    if doc["entities"]:
        heading("proposed new entities")
        table(["type", "name", "record", "rule"], [[e["type"], e["name"], e["record"] or "-", e["rule"]]
                                                    for e in doc["entities"]])
    if doc["skipped"]:
        heading("left out (negated, hedged or asked)")
        table(["reason", "would propose", "text"], [[s["reason"], " ".join(" ".join(k) for k in s["would_propose"]),
                                                     s["text"]] for s in doc["skipped"]])
    out("written: " + (", ".join(doc["written"]) or "nothing") if doc["writes_performed"] else
        "nothing written (use --apply)")


def recommend(doc: dict[str, Any]) -> None:
    when = f"as of {day(doc['as_of'])}" + ("" if doc["known_at"] == doc["as_of"] else f", known at {day(doc['known_at'])}")
    heading(f"Projects for {doc['idea'][:80]!r}, {when}")
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
    table(["rank", "project", "score", "status", "best path"], rows)
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


def pack(doc: dict[str, Any], rows: int | None = None) -> None:
    """The bundle text alone (ready to paste or pipe); with a trace, the trace after it (``rows``: a
    summary per lane and at most that many candidates, the demo's short form)."""
    import sys
    from collections import Counter
    if doc["bundle_text"]:
        sys.stdout.write(doc["bundle_text"] + "\n")
    meta = doc["meta"]
    if "trace" not in doc:
        if not doc["bundle_text"]:
            sys.stderr.write(f"graphmem: empty bundle: {meta['message']}\n")
        return
    sys.stdout.flush()
    out("")
    heading(f"trace: {meta['used_tokens']} of {meta['budget_tokens']} tokens ({meta['tokenizer']}), "
            f"{meta['items']} items" + (f"; {meta['message']}" if meta["message"] else ""))
    lines = []
    for lane in doc["trace"]["lanes"]:
        cands = lane["candidates"]
        reasons = Counter(r for c in cands for r in c["reasons"] if r != "within_budget")
        left = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
        out(f"  {lane['lane']:<9} {len(cands):>3} candidates, {sum(c['included'] for c in cands):>2} packed; "
            f"left out: {left}")
        lines += [[lane["lane"], c["ref"], f"{c['score']:.3f}", "yes" if c["included"] else "no", " ".join(c["reasons"]),
                   c["text"][:70]] for c in cands]
    if rows is not None:
        lines = sorted(lines, key=lambda r: r[3] != "yes")[:rows]
    table(["lane", "ref", "score", "in", "reasons", "text"], lines)


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
