"""What the service offers, as one table for HTTP and MCP (``OPERATIONS``).

Each ``Operation`` is one call of the library with its parameters: their names, kinds,
descriptions and defaults, whether it writes, and the call itself. ``http`` builds the routes,
the OpenAPI description and ``/docs`` from it; ``mcp`` builds the tools and their input schemas.
``check`` turns what a client sent into the call's parameters, with the same one-line messages on
both. docs/service.md lists the operations and where the two differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem.errors import BadInput
from graphmem.memory import EXTRACT_MAX_CHARS
from graphmem.reports import check_fail_on, check_lint_codes
from graphmem.service.guard import show

BOTH, HTTP, MCP = ("http", "mcp"), ("http",), ("mcp",)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str = "string"  # string, integer, boolean, array (of strings), value (text, number or true/false), records
    required: bool = False
    description: str = ""
    default: Any = None  # filled in when the client leaves the parameter out; the schemas show it
    choices: tuple[str, ...] = ()
    minimum: int | None = None  # the least an integer may be (the library checks its own numbers)
    alias: str = ""  # a second name, taken on both surfaces; MCP's schema shows it (query for q)
    surfaces: tuple[str, ...] = BOTH  # where the parameter is offered

    def shown(self, surface: str) -> str:
        """The name the schema of ``surface`` shows."""
        return self.alias if surface == "mcp" and self.alias else self.name

    def schema(self, surface: str = "http") -> dict[str, Any]:
        """The parameter's JSON Schema (OpenAPI 3.1 and MCP input schemas are JSON Schema). A value is text in
        a tool's schema, as it always was there (some clients take no list of types); numbers are taken too."""
        s: dict[str, Any] = ({"type": "array", "items": {"type": "string"}} if self.kind == "array" else
                             {"type": "array", "items": {"type": "object"}} if self.kind == "records" else
                             {"type": ["string", "number", "boolean"]} if self.kind == "value" and surface == "http"
                             else {"type": "string"} if self.kind == "value" else {"type": self.kind})
        if self.choices:
            s["enum"] = list(self.choices)
        if self.minimum is not None:
            s["minimum"] = self.minimum
        if self.default is not None:
            s["default"] = self.default
        return s | {"description": self.description}


@dataclass(frozen=True)
class Operation:
    name: str  # the MCP tool's name
    method: str  # GET reads its parameters from the query string, POST from a JSON object body
    path: str
    summary: str  # one line: the OpenAPI summary and /docs, and the start of the tool's description
    call: Callable[[Any, dict[str, Any]], Any]  # (memory, params) -> result with to_dict(), or a dict
    params: tuple[Param, ...] = ()
    write: bool = False
    body: str = "json"  # json, or jsonl (the HTTP body is JSON lines, as for import and ingest)
    surfaces: tuple[str, ...] = BOTH  # HTTP only: the MCP server offers no tool for it
    guide: str = ""  # more for an agent: when to use it, an example
    text: Callable[[dict[str, Any]], str] | None = None  # the tool's answer as text (format=text, its default)
    scope: str = ""  # what a token bound to scopes may do with it: one of SCOPE_RULES (docs/scopes.md)

    def offered(self, surface: str) -> tuple[Param, ...]:
        params = tuple(p for p in self.params if surface in p.surfaces)
        if surface == "mcp" and self.text is not None:
            params += (FORMAT,)
        return params

    def input_schema(self, surface: str) -> dict[str, Any]:
        """The JSON Schema of the parameters as an object (an MCP tool's input, a POST's JSON body)."""
        params = self.offered(surface)
        return {"type": "object", "properties": {p.shown(surface): p.schema(surface) for p in params},
                "required": [p.shown(surface) for p in params if p.required], "additionalProperties": False}


T = "An ISO-8601 date or datetime, or 'now'."
AS_OF = Param("as_of", description=f"Valid time: when the answer holds in the world (default now). {T}")
KNOWN_AT = Param("known_at", description=f"Record time: answer as the store knew it then (default now). {T}")
SUBJECT = Param("subject", required=True, description="The entity: a ref (project:atlas), a name or an alias")
PREDICATE = Param("predicate", description="Only this predicate (a name or alias, e.g. uses)")
SOURCES = Param("sources", "array", description="Where it comes from: URIs or evidence record refs (rec:N)")
BY = Param("by", description="Who states it (default agent): operator, agent, extractor or import", surfaces=HTTP)
# the record filters of search and pack (docs/evidence.md): values of one are alternatives, filters combine
FILTERS = (
    Param("kind", "array", description="Only records of these kinds (comma-separated in a query string)"),
    Param("source", "array", description="Only records whose source is this or goes on from it after #, /, : or ?"),
    Param("since", description=f"Only records whose time (ts) is at or after this. {T}"),
    Param("until", description=f"Only records whose time (ts) is before this. {T}"),
    Param("about", "array", description="Only records that mention these entities (ref, name or alias)"),
)


# what search and pack do with archived records and with use (docs/lifecycle.md)
LIFECYCLE = (
    Param("include_archived", "boolean", default=False, description="Archived records too (default: left out)"),
    Param("track", "boolean", default=True, description="Record the use of the records returned or packed "
                                                        "(default true; false records nothing)"),
)


def _filters(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p.get(k) for k in ("kind", "source", "since", "until", "about", "scope")} | {
        k: p[k] for k in ("include_archived", "track") if k in p}


# What a request with a token bound to scopes may do with an operation (service/guard.py, docs/scopes.md):
SCOPE_RULES = {
    "read": "reads only its token's scopes: a scope parameter outside them is refused; none given, all of them",
    "write": "writes into one of its token's scopes: another is refused; none given, the token's first scope",
    "target": "changes only a statement of its token's scopes (a scope parameter narrows them)",
    "records": "stores records of its token's scopes only (a record of another scope is a bad line); a record "
               "without one gets the scope parameter, or the token's first scope",
    "shared": "entities are a shared vocabulary: reading them and adding one are open to every token",
    "admin": "reads or changes the whole store: refused for a token bound to scopes",
}
SCOPES = Param("scope", "array", description="Only these scopes (a user, agent, project or session; comma-separated "
                                             "in a query string); default every scope, or all of the token's")
SCOPE = Param("scope", description="The scope it belongs to (a user, agent, project or session); default unscoped, "
                                   "or the token's first scope")
TARGET = Param("scope", "array", description="Only a statement of these scopes may be changed (default any, or "
                                             "the token's scopes)")


FORMAT = Param("format", default="text", choices=("text", "json"), description=(
    "text (default): the answer as text to read; json: the full JSON document, as the CLI's --json"))


def document(r: Any) -> dict[str, Any]:
    doc = r if isinstance(r, dict) else r.to_dict()
    assert isinstance(doc, dict)
    return doc


def _import(m: Any, p: dict[str, Any]) -> dict[str, Any]:
    r = m.import_jsonl(p["_lines"], strict=p["strict"], scope=p.get("scope"))
    doc = document(r)
    doc["errors"] = [{"line": n, "reason": why} for n, why in r.errors[:100]]
    return doc


def _ingest(m: Any, p: dict[str, Any]) -> Any:
    lines = p["_lines"] if "_lines" in p else [json.dumps(r) for r in p["records"]]
    return m.ingest([line.encode("utf-8") for line in lines], extract=p["extract"], redact=p.get("redact") is not False,
                    scope=p.get("scope"), scopes=p.get("_scopes"))


def _extract(m: Any, p: dict[str, Any]) -> Any:
    """From a text, from one record, or from every record not extracted yet: exactly one of them."""
    chosen = [k for k in ("text", "record", "pending") if p.get(k) not in (None, False)]
    if len(chosen) != 1:
        raise BadInput("expected exactly one of text, record or pending=true for /extract"
                       + (f"; got {' and '.join(chosen)}" if chosen else ""))
    if "text" in chosen:
        return m.extract_text(p["text"], at=p.get("at"), apply=p["apply"])
    if p.get("at") is not None:
        raise BadInput("bad parameter 'at' for /extract with record or pending: expected it only with text "
                       "(a record's time is its own)")
    return (m.extract_records([p["record"]], apply=p["apply"]) if "record" in chosen
            else m.extract_pending(apply=p["apply"]))


def _lint(m: Any, p: dict[str, Any]) -> dict[str, Any]:
    fail_on = check_fail_on(p["fail_on"])  # before the whole-store pass, as the codes
    codes = check_lint_codes([c for c in p["code"].split(",") if c]) if p.get("code") else None
    return document(m.lint().to_dict(fail_on, codes=codes, limit=p.get("limit")))


def pack_text(doc: dict[str, Any]) -> str:
    """A context pack as an agent reads it: the bundle, then each cited ref and where it comes from."""
    if not doc["bundle_text"]:
        return f"(empty bundle) {doc['meta']['message'] or 'nothing fits the budget'}"
    return "\n".join([doc["bundle_text"], "", "Refs:", *(f"- {c['ref']}: {_cited(c)}" for c in doc["citations"])])


def _cited(c: dict[str, Any]) -> str:
    if c["kind"] == "fact" and c.get("subject"):
        obj = c["object"] or {}
        shown = obj.get("ref") or json.dumps(obj.get("value"), ensure_ascii=False)
        return (f"{c['subject']} {c['predicate']} {shown}, from {(c['valid_from'] or '')[:10]}, by {c['asserted_by']} "
                f"({c['trust']} trust); sources: {', '.join(c['sources']) or 'none'}")
    if c["kind"] == "record" and c.get("ts"):
        return f"{c['record_kind']} from {c['source'] or 'an unnamed source'}, {c['ts']}"
    if c["kind"] == "entity" and c.get("name"):
        return f"{c['type']} {c['name']}"
    return "not found in the store"


def _first(doc: dict[str, Any], key: str, limit: int | None) -> dict[str, Any]:
    if limit is not None:
        doc[key] = doc[key][:limit]
    return doc


OPERATIONS: tuple[Operation, ...] = (
    Operation("current", "GET", "/current", "What holds for a subject at as_of, as known at known_at "
              "(graphmem.current.v1)",
              lambda m, p: m.current(p["subject"], as_of=p.get("as_of"), known_at=p.get("known_at"),
                                     predicate=p.get("predicate"), scope=p.get("scope")),
              (SUBJECT, AS_OF, KNOWN_AT, PREDICATE, SCOPES), scope="read",
              guide="Use it for 'what does Atlas use now' or, with as_of, 'what did it use in June 2025'."),
    Operation("timeline", "GET", "/timeline", "Every interval of a subject over time and the statements behind them "
              "(graphmem.timeline.v1)",
              lambda m, p: m.timeline(p["subject"], predicate=p.get("predicate"), known_at=p.get("known_at"),
                                      scope=p.get("scope")),
              (SUBJECT, PREDICATE, KNOWN_AT, SCOPES), scope="read"),
    Operation("facts", "GET", "/facts", "Facts holding at as_of, filtered by predicate, object or subject type "
              "(graphmem.facts.v1)",
              lambda m, p: m.facts(predicate=p.get("predicate"), object=p.get("object"),
                                   subject_type=p.get("subject_type"), as_of=p.get("as_of"), scope=p.get("scope")),
              (PREDICATE, Param("object", "value", description="Only facts with this object: an entity (ref, name or "
                                                              "alias) or a value"),
               Param("subject_type", description="Only subjects of this entity type (Project, Tool, ...)"), AS_OF,
               SCOPES), scope="read",
              guide="For example predicate=uses, object=kuzu: which projects use Kuzu."),
    Operation("why", "GET", "/why", "The receipts of one statement: its sources, what it superseded, conflicts, "
              "retraction (graphmem.why.v1)", lambda m, p: m.why(p["fact"], scope=p.get("scope")),
              (Param("fact", required=True, description="A statement id, fact:N (as current, timeline and pack "
                                                        "cite them)"), SCOPES), scope="read"),
    Operation("entity", "GET", "/entity", "One entity found by its ref, name or alias, with its type, names and "
              "description (graphmem.entity.v1)", lambda m, p: m.show_entity(p["ref"]),
              (Param("ref", required=True, description="An entity ref (tool:kuzu), a name or an alias; case does "
                                                       "not matter"),), scope="shared"),
    Operation("entities", "GET", "/entities", "Entities by type then ref: of one type, or whose name, alias or ref "
              "contains a text (graphmem.entities.v1)",
              lambda m, p: _first(document(m.list_entities(p.get("type"), p.get("match"))), "entities", p.get("limit")),
              (Param("type", description="Only entities of this type (Project, Tool, Person, ...)"),
               Param("match", description="Text the name, an alias or the ref contains (case does not matter)"),
               Param("limit", "integer", minimum=0, description="At most this many entities (default all)")),
              scope="shared"),
    Operation("add_entity", "POST", "/entities", "Add an entity (or aliases to an existing one) (graphmem.entity.v1)",
              lambda m, p: m.add_entity(p["type"], p["name"], p.get("aliases") or [], p.get("description") or ""),
              (Param("type", required=True, description="Its entity type (Project, Tool, ...)"),
               Param("name", required=True, description="Its name; the ref is type:slug of the name"),
               Param("aliases", "array", description="Other names it goes by"),
               Param("description", description="What it is, in a sentence")), write=True, surfaces=HTTP,
              scope="shared"),
    Operation("entity_rename", "POST", "/entities/rename", "Give an entity another name; its ref stays "
              "(graphmem.entity-rename.v1)", lambda m, p: m.rename_entity(p["ref"], p["name"]),
              (Param("ref", required=True, description="The entity: a ref, name or alias"),
               Param("name", required=True, description="Its new name")), write=True, scope="admin"),
    Operation("entity_alias_add", "POST", "/entities/aliases", "Add aliases to an entity; those it has stay "
              "(graphmem.entity-alias-add.v1)", lambda m, p: m.add_aliases(p["ref"], p["aliases"]),
              (Param("ref", required=True, description="The entity: a ref, name or alias"),
               Param("aliases", "array", required=True, description="The names to add")), write=True, scope="admin"),
    Operation("entity_alias_remove", "POST", "/entities/aliases/remove", "Take aliases off an entity "
              "(graphmem.entity-alias-remove.v1)", lambda m, p: m.remove_aliases(p["ref"], p["aliases"]),
              (Param("ref", required=True, description="The entity: a ref, name or alias"),
               Param("aliases", "array", required=True, description="The aliases to take off (each must be one)")),
              write=True, scope="admin"),
    Operation("entity_merge", "POST", "/entities/merge", "Merge one entity into another: its facts, the facts "
              "naming it and its mentions are carried over by new statements; its ref then resolves to the other "
              "(graphmem.entity-merge.v1)", lambda m, p: m.merge_entities(p["into"], p["merged"]),
              (Param("into", required=True, description="The entity that stays"),
               Param("merged", required=True, description="The entity merged into it")), write=True, scope="admin"),
    Operation("entity_unmerge", "POST", "/entities/unmerge", "Take back a merge: the copies it made are retracted "
              "and the originals copied back (graphmem.entity-unmerge.v1)", lambda m, p: m.unmerge_entity(p["merged"]),
              (Param("merged", required=True, description="The entity that was merged"),), write=True, scope="admin"),
    Operation("assert", "POST", "/assert", "Record that subject predicate object holds (graphmem.assert.v1)",
              lambda m, p: m.assert_(p["subject"], p["predicate"], p["object"], valid_from=p.get("valid_from"),
                                     valid_to=p.get("valid_to"), sources=p.get("sources") or [],
                                     by=p.get("by") or "agent", scope=p.get("scope")),
              (SUBJECT, Param("predicate", required=True, description="The predicate (a name or alias, e.g. uses)"),
               Param("object", "value", required=True, description="The object: an entity (ref, name or alias) or a "
                                                                   "value, as the predicate expects"),
               Param("valid_from", description=f"When it starts holding (default now). {T}"),
               Param("valid_to", description=f"When it stops holding (default: open). {T}"), SOURCES, BY, SCOPE),
              write=True, scope="write", guide="Returns the new statement's id (fact:N)."),
    Operation("end", "POST", "/end", "Close what holds for subject predicate [object] at a time (graphmem.end.v1)",
              lambda m, p: m.end(p["subject"], p["predicate"], p.get("object"), at=p["at"],
                                 sources=p.get("sources") or [], by=p.get("by") or "agent", scope=p.get("scope")),
              (SUBJECT, Param("predicate", required=True, description="The predicate (a name or alias)"),
               Param("object", "value", description="Only the fact with this object (default: what holds)"),
               Param("at", required=True, description=f"When it stops holding. {T}"), SOURCES, BY, SCOPE), write=True,
              scope="write"),
    Operation("cite", "POST", "/cite", "Attach evidence to an assertion, as a recorded cite of its own "
              "(graphmem.cite.v1)",
              lambda m, p: m.cite(p["fact"], p["sources"], p.get("note"), by=p.get("by") or "agent",
                                  scope=p.get("scope")),
              (Param("fact", required=True, description="The assertion the evidence supports, fact:N"),
               Param("sources", "array", required=True, description="The evidence: URIs or record refs (rec:N)"),
               Param("note", description="Why it supports the assertion"), BY, TARGET), write=True, scope="target"),
    Operation("retract", "POST", "/retract", "Withdraw a statement that was wrong, from now on; history keeps it "
              "(graphmem.retract.v1)", lambda m, p: m.retract(p["fact"], p.get("reason"), scope=p.get("scope")),
              (Param("fact", required=True, description="The statement to withdraw, fact:N"),
               Param("reason", description="Why it was wrong"), TARGET), write=True, scope="target"),
    Operation("import", "POST", "/import", "Bulk entities and statements; the body is JSON lines (docs/formats.md) "
              "(graphmem.import.v1)", _import,
              (Param("strict", "boolean", default=False, description="Load nothing if any line is bad (default: "
                                                                      "load the good lines and report the bad)"),
               Param("scope", description="The scope of the statement lines that carry none (default unscoped)")),
              write=True, body="jsonl", surfaces=HTTP, scope="admin"),
    Operation("ingest", "POST", "/ingest", "Store evidence records (graphmem.ingest.v1); over HTTP the body is "
              "JSON lines", _ingest,
              (Param("records", "records", required=True, surfaces=MCP, description=(
                  "The records, each an object with text (required) and optionally ts, kind, source, scope and id "
                  "(an idempotence key), as in docs/formats.md")),
               Param("extract", "boolean", default=False, description="Also extract from the new records and apply "
                                                                      "it (statements by: extractor)"),
               Param("redact", "boolean", surfaces=HTTP, description="Mask secrets before storing (default true)"),
               Param("scope", description="The scope of the records that carry none (default unscoped, or the "
                                          "token's first scope)")),
              write=True, body="jsonl", scope="records"),
    Operation("search", "GET", "/search", "BM25-ranked full-text search over the evidence records "
              "(graphmem.search.v1)", lambda m, p: m.search(p["q"], limit=p["limit"], **_filters(p)),
              (Param("q", required=True, alias="query", description="The words to look for"),
               Param("limit", "integer", default=10, description="At most this many records"), *FILTERS, *LIFECYCLE,
               SCOPES), scope="read"),
    Operation("note", "POST", "/note", "Store one evidence record and give its rec:N; the same note again writes "
              "nothing (graphmem.note.v1)",
              lambda m, p: m.note(p["text"], kind=p.get("kind"), source=p.get("source"), scope=p.get("scope"),
                                  ts=p.get("ts"), redact=p.get("redact") is not False, due=p.get("due")),
              (Param("text", required=True, description="The note (at most 16,000 characters are kept)"),
               Param("kind", description="Its kind (default note): message, note, tool_result, doc, ..."),
               Param("source", description="Where it comes from"),
               Param("scope", description="Whose it is (a user, agent, project or session)"),
               Param("ts", description=f"When it was written (default now). {T}"),
               Param("redact", "boolean", surfaces=HTTP, description="Mask secrets before storing (default true)"),
               Param("due", description=f"Makes the note a plan (intended work, never a fact) due then. {T}")),
              write=True, scope="write"),
    Operation("extract", "POST", "/extract", "Mentions and proposed assertions in a text, a record or the records "
              "not extracted yet (exactly one), written only with apply (graphmem.extract.v1)", _extract,
              (Param("text", description=f"At most {EXTRACT_MAX_CHARS:,} characters"),
               Param("at", description=f"The time the text speaks of (default now); proposals start then. {T}"),
               Param("record", description="A record ref, rec:N"),
               Param("pending", "boolean", description="Every record not extracted yet"),
               Param("apply", "boolean", default=False, description="Store the text as a record and write the "
                                                                    "proposals, citing it")),
              write=True, surfaces=HTTP, scope="admin"),
    Operation("lint", "GET", "/lint", "Check the store: conflicts, missing or dangling sources, stale facts, view "
              "drift (graphmem.lint.v1)", _lint,
              (Param("fail_on", default="error", choices=("error", "warning"),
                     description="The severity that makes ok false"),
               Param("code", description="Only issues of these codes, comma-separated (e.g. stale_fact,"
                                         "single_value_conflict); counts and summary cover every issue"),
               Param("limit", "integer", minimum=0, description="At most this many issues (default all); counts cover every "
                                                     "issue")),
              scope="admin", guide="On a large store, read counts.by_code first, then ask for one code with a limit."),
    Operation("rebuild_check", "GET", "/rebuild-check", "Compare the view with a rebuild, without writing "
              "(graphmem.rebuild.v1)", lambda m, p: m.rebuild(check=True), surfaces=HTTP, scope="admin"),
    Operation("export", "GET", "/export", "The store as JSONL or GraphML (graphmem.export.v1)",
              lambda m, p: m.export_doc(p["format"], p.get("as_of")),
              (Param("format", default="jsonl", description="jsonl or graphml"), AS_OF), surfaces=HTTP, scope="admin"),
    Operation("recommend", "GET", "/recommend", "The projects an idea fits best, each with graph paths whose every "
              "step cites a fact (graphmem.recommend.v1)",
              lambda m, p: m.recommend(p["idea"], top=p["top"], as_of=p.get("as_of"), known_at=p.get("known_at"),
                                       max_hops=p["max_hops"], paths=p["paths"], scope=p.get("scope")),
              (Param("idea", required=True, description="The idea, in words"),
               Param("top", "integer", default=5, description="At most this many projects"), AS_OF, KNOWN_AT,
               Param("max_hops", "integer", default=3, description="The longest path followed"),
               Param("paths", "integer", default=3, description="At most this many paths shown per project"), SCOPES),
              scope="read"),
    Operation("path", "GET", "/path", "The shortest explained paths between two entities, each step citing a fact "
              "(graphmem.path.v1)",
              lambda m, p: m.paths(p["from"], p["to"], max_hops=p["max_hops"], limit=p["limit"],
                                   as_of=p.get("as_of"), known_at=p.get("known_at"), scope=p.get("scope")),
              (Param("from", required=True, description="One end: an entity ref, name or alias"),
               Param("to", required=True, description="The other end: an entity ref, name or alias"),
               Param("max_hops", "integer", default=4, description="The longest path"),
               Param("limit", "integer", default=3, description="At most this many paths"), AS_OF, KNOWN_AT, SCOPES),
              scope="read", guide="For example from=quill, to=kuzu: how Quill is connected to Kuzu."),
    Operation("pack", "GET", "/pack", "A cited context bundle for a question within a token budget "
              "(graphmem.context-pack.v1)",
              lambda m, p: m.pack(p["q"], budget_tokens=p["budget_tokens"], max_items=p["max_items"],
                                  as_of=p.get("as_of"), known_at=p.get("known_at"), trace=p["trace"],
                                  tail=p["tail"], tail_budget=p.get("tail_budget"), session=p.get("session"),
                                  min_trust=p.get("min_trust"), **_filters(p)),
              (Param("q", required=True, alias="query", description="The question or task the bundle is for"),
               Param("budget_tokens", "integer", default=1000, description="The token budget of the bundle text"),
               Param("max_items", "integer", default=40, description="At most this many items"), AS_OF, KNOWN_AT,
               Param("trace", "boolean", default=False, description="Also list every candidate considered, kept or "
                                                                    "not, with its reason (in the JSON)"),
               Param("tail", "integer", default=0, description="Keep room for this many of the most "
                     "recent records of the current session (or of the records the filter allows), after "
                     "guidance and before retrieval"),
               Param("tail_budget", "integer", description="The most tokens the tail may take (at most "
                     "budget_tokens); alone, as many recent records as fit"),
               Param("session", description="The session of the tail: a source up to '#' (default: the session "
                     "of the most recent message)"),
               Param("min_trust", choices=("low", "medium", "high"), description="Leave out records and facts "
                     "below this trust (a record's meta.trust; quarantined is below low; unrated records stay)"),
               *FILTERS, *LIFECYCLE, SCOPES), scope="read",
              guide="The text answer is the bundle, ready to put in a prompt, then the refs it cites with their "
                    "sources.", text=pack_text),
    Operation("lifecycle", "POST", "/lifecycle", "Soft-archive the records the lifecycle policy lets go, as recorded "
              "events; counts only, never a record's text (graphmem.lifecycle.v1)",
              lambda m, p: m.lifecycle(at=p.get("at"), dry_run=p["dry_run"]),
              (Param("at", description=f"Apply the policy as of this time (default now). {T}"),
               Param("dry_run", "boolean", default=False, description="Count what would be archived; write nothing")),
              write=True, scope="admin", guide="Archived records leave search and pack (include_archived brings "
                                                "them back in one call); revive undoes the archiving."),
    Operation("revive", "POST", "/revive", "Bring archived records back into search and pack (graphmem.revive.v1)",
              lambda m, p: m.revive(p["refs"]),
              (Param("refs", "array", required=True, description="Archived record refs, rec:N"),),
              write=True, scope="admin"),
)


def check(op: Operation, raw: dict[str, Any], surface: str, *, from_text: bool) -> dict[str, Any]:
    """The operation's parameters from what a client sent (``from_text``: numbers and true/false may come as
    text, as in a query string), checked, typed, under their own names, defaults filled in."""
    where = op.path if surface == "http" else op.name
    params = op.offered(surface)
    names = {n: p for p in params for n in (p.name, p.alias) if n}
    extra = sorted(set(raw) - set(names))
    if extra:
        shown = ", ".join(p.shown(surface) for p in params) or "none"
        raise BadInput(f"unknown parameter {extra[0]!r} for {where}: expected one of {shown}")
    out: dict[str, Any] = {}
    for p in params:
        given = [n for n in (p.name, p.alias) if n and raw.get(n) is not None]
        if len(given) > 1:
            raise BadInput(f"both {p.name!r} and {p.alias!r} for {where}: expected one of them (the same parameter)")
        if not given:
            if p.required:
                raise BadInput(f"missing parameter {p.shown(surface)!r} for {where}: expected "
                               f"{p.description[:1].lower() + p.description[1:]}")
            if p.default is not None:
                out[p.name] = p.default
            continue
        out[p.name] = _value(p, given[0], raw[given[0]], from_text)
    return out


def _value(p: Param, name: str, v: Any, from_text: bool) -> Any:
    """One parameter's value, checked against its kind."""
    if p.kind == "integer":
        if from_text and isinstance(v, str):
            try:
                v = int(v)
            except ValueError:
                raise BadInput(f"bad {name} {show(v)}: expected a whole number") from None
        if not isinstance(v, int) or isinstance(v, bool):
            raise BadInput(f"bad {name} {show(v)}: expected a whole number")
        if p.minimum is not None and v < p.minimum:
            raise BadInput(f"bad {name} {v}: expected a whole number, {p.minimum} or more")
    elif p.kind == "boolean":
        if from_text and isinstance(v, str):
            if v not in ("true", "false", "1", "0"):
                raise BadInput(f"bad {name} {show(v)}: expected true or false")
            v = v in ("true", "1")
        if not isinstance(v, bool):
            raise BadInput(f"bad {name} {show(v)}: expected true or false")
    elif p.kind == "array":
        if from_text and isinstance(v, str):  # a query string: values separated by commas
            v = [x for x in v.split(",") if x]
        items = v if isinstance(v, list) else [v]
        if not all(isinstance(x, str) for x in items):
            raise BadInput(f"bad {name} {show(v)}: expected a list of strings")
        v = items
    elif p.kind == "records":
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise BadInput(f"bad {name} {show(v)}: expected a list of record objects, each with text")
    elif p.kind == "value":
        if not isinstance(v, (str, int, float, bool)):
            raise BadInput(f"bad {name} {show(v)}: expected text (an entity ref, name or alias, or a value), "
                           "a number or true/false")
    elif not isinstance(v, str):
        raise BadInput(f"bad {name} {show(v)}: expected text")
    if p.choices and v not in p.choices:
        raise BadInput(f"bad {name} {show(v)}: expected {' or '.join(p.choices)}")
    return v
