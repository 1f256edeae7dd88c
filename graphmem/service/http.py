"""The local HTTP JSON service (SPEC 11): ``graphmem serve``.

One process owns the store (Kuzu's lock); the service answers with the same JSON
documents as ``--json``. Endpoints come from one table (``ENDPOINTS``), which also
makes the OpenAPI description at ``/openapi.json`` and the page at ``/docs``.
Reads run at once, each thread on its own Kuzu connection; a write waits for the
reads in flight and runs alone, as its own transaction, committed before the
response is sent. Requests a browser could send from another site are refused
(``Guard``: the Host and Origin headers; ``call``: the Content-Type of a POST).
docs/service.md has the contract.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.config import SERVER_FILE, require_store, server_holding, write_server_file
from graphmem.errors import BadInput, GraphmemError, StoreUnavailable, UnknownEntity
from graphmem.memory import EXTRACT_MAX_CHARS
from graphmem.results import check_fail_on
from graphmem.service.guard import BearerAuth, Guard, check_allow_host, check_allow_origin, check_bind, show, url_host

MAX_BODY = 16 * 2**20
# The Content-Type a POST must carry: none of these is one a browser may send to another site
# without asking first (text/plain, form encodings), so a page elsewhere cannot write.
JSON_TYPES = ("application/json",)
JSONL_TYPES = ("application/json", "application/x-ndjson", "application/jsonl")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str = "string"  # string, integer, boolean, array (of strings)
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class Endpoint:
    method: str  # GET reads its parameters from the query string, POST from a JSON object body
    path: str
    summary: str
    call: Callable[[Any, dict[str, Any]], Any]  # (memory, params) -> result with to_dict(), or a dict
    params: tuple[Param, ...] = ()
    write: bool = False
    body: str = "json"  # json, or jsonl (the body is JSON lines, as for import and ingest)


T = "ISO-8601 date or datetime, or 'now'"
AS_OF = Param("as_of", description=f"Valid time (default now). {T}")
KNOWN_AT = Param("known_at", description=f"Record time (default now). {T}")
SUBJECT = Param("subject", required=True, description="Entity ref, name or alias")


def _doc(r: Any) -> dict[str, Any]:
    doc = r if isinstance(r, dict) else r.to_dict()
    assert isinstance(doc, dict)
    return doc


def _import(m: Any, p: dict[str, Any]) -> dict[str, Any]:
    r = m.import_jsonl(p["_lines"], strict=bool(p.get("strict")))
    doc = _doc(r)
    doc["errors"] = [{"line": n, "reason": why} for n, why in r.errors[:100]]
    return doc


def _ingest(m: Any, p: dict[str, Any]) -> dict[str, Any]:
    r = m.ingest([line.encode("utf-8") for line in p["_lines"]], redact=p.get("redact") is not False,
                 extract=bool(p.get("extract")))
    return _doc(r)


def _extract(m: Any, p: dict[str, Any]) -> Any:
    """From a text, from one record, or from every record not extracted yet: exactly one of them."""
    chosen = [k for k in ("text", "record", "pending") if p.get(k) not in (None, False)]
    if len(chosen) != 1:
        raise BadInput("expected exactly one of text, record or pending=true for /extract"
                       + (f"; got {' and '.join(chosen)}" if chosen else ""))
    apply = bool(p.get("apply"))
    if "text" in chosen:
        return m.extract_text(p["text"], at=p.get("at"), apply=apply)
    if p.get("at") is not None:
        raise BadInput("bad parameter 'at' for /extract with record or pending: expected it only with text "
                       "(a record's time is its own)")
    return m.extract_records([p["record"]], apply=apply) if "record" in chosen else m.extract_pending(apply=apply)


def _lint(m: Any, p: dict[str, Any]) -> dict[str, Any]:
    fail_on = check_fail_on(p.get("fail_on") or "error")  # before the whole-store pass
    return _doc(m.lint().to_dict(fail_on))


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", "/current", "What holds for a subject at as_of, as known at known_at (graphmem.current.v1)",
             lambda m, p: m.current(p["subject"], as_of=p.get("as_of"), known_at=p.get("known_at"),
                                    predicate=p.get("predicate")),
             (SUBJECT, AS_OF, KNOWN_AT, Param("predicate"))),
    Endpoint("GET", "/timeline", "Every interval of a subject and the statements behind them",
             lambda m, p: m.timeline(p["subject"], predicate=p.get("predicate"), known_at=p.get("known_at")),
             (SUBJECT, Param("predicate"), KNOWN_AT)),
    Endpoint("GET", "/facts", "Facts holding at as_of, filtered by predicate, object or subject type",
             lambda m, p: m.facts(predicate=p.get("predicate"), object=p.get("object"),
                                  subject_type=p.get("subject_type"), as_of=p.get("as_of")),
             (Param("predicate"), Param("object"), Param("subject_type"), AS_OF)),
    Endpoint("GET", "/why", "The receipts of one statement", lambda m, p: m.why(p["fact"]),
             (Param("fact", required=True, description="fact:N"),)),
    Endpoint("GET", "/entity", "One entity with its names and counts", lambda m, p: m.show_entity(p["ref"]),
             (Param("ref", required=True, description="Entity ref, name or alias"),)),
    Endpoint("GET", "/entities", "Entities, optionally of one type or matching a text",
             lambda m, p: m.list_entities(p.get("type"), p.get("match")), (Param("type"), Param("match"))),
    Endpoint("POST", "/entities", "Add an entity (or aliases to an existing one)",
             lambda m, p: m.add_entity(p["type"], p["name"], p.get("aliases") or [], p.get("description") or ""),
             (Param("type", required=True), Param("name", required=True), Param("aliases", "array"),
              Param("description")), write=True),
    Endpoint("POST", "/assert", "Record that subject predicate object holds",
             lambda m, p: m.assert_(p["subject"], p["predicate"], p["object"], valid_from=p.get("valid_from"),
                                    valid_to=p.get("valid_to"), sources=p.get("sources") or [],
                                    by=p.get("by") or "agent"),
             (SUBJECT, Param("predicate", required=True), Param("object", required=True), Param("valid_from"),
              Param("valid_to"), Param("sources", "array"),
              Param("by", description="operator, agent, extractor or import (default agent)")), write=True),
    Endpoint("POST", "/end", "Close what holds for subject predicate [object] at a time",
             lambda m, p: m.end(p["subject"], p["predicate"], p.get("object"), at=p["at"],
                                sources=p.get("sources") or [], by=p.get("by") or "agent"),
             (SUBJECT, Param("predicate", required=True), Param("object"), Param("at", required=True),
              Param("sources", "array"), Param("by")), write=True),
    Endpoint("POST", "/retract", "Withdraw a statement from now on", lambda m, p: m.retract(p["fact"], p.get("reason")),
             (Param("fact", required=True), Param("reason")), write=True),
    Endpoint("POST", "/import", "Bulk entities and statements; the body is JSON lines (docs/formats.md)", _import,
             (Param("strict", "boolean"),), write=True, body="jsonl"),
    Endpoint("POST", "/ingest", "Store evidence records; the body is JSON lines", _ingest,
             (Param("extract", "boolean", description="Also extract from the new records and apply it"),
              Param("redact", "boolean", description="Replace secrets by [REDACTED:kind] (default true)")),
             write=True, body="jsonl"),
    Endpoint("GET", "/search", "BM25-ranked evidence records",
             lambda m, p: m.search(p["q"], limit=p.get("limit", 10)),
             (Param("q", required=True), Param("limit", "integer"))),
    Endpoint("POST", "/extract", "Mentions and proposed assertions in a text, a record or the records not extracted "
             "yet (exactly one; written only with apply)", _extract,
             (Param("text", description=f"At most {EXTRACT_MAX_CHARS:,} characters"),
              Param("at", description=f"The text's time (default now). {T}"),
              Param("record", description="A record ref, rec:N"),
              Param("pending", "boolean", description="Every record not extracted yet"),
              Param("apply", "boolean")), write=True),
    Endpoint("GET", "/lint", "Check the store", _lint,
             (Param("fail_on", description="error or warning"),)),
    Endpoint("GET", "/rebuild-check", "Compare the view with a rebuild, without writing",
             lambda m, p: m.rebuild(check=True)),
    Endpoint("GET", "/export", "The store as JSONL or GraphML", lambda m, p: m.export_doc(p.get("format") or "jsonl",
                                                                                      p.get("as_of")),
             (Param("format", description="jsonl or graphml"), AS_OF)),
    Endpoint("GET", "/recommend", "The projects an idea fits, with the paths that explain each",
             lambda m, p: m.recommend(p["idea"], top=p.get("top", 5), as_of=p.get("as_of"),
                                      known_at=p.get("known_at"), max_hops=p.get("max_hops", 3),
                                      paths=p.get("paths", 3)),
             (Param("idea", required=True), Param("top", "integer"), AS_OF, KNOWN_AT, Param("max_hops", "integer"),
              Param("paths", "integer"))),
    Endpoint("GET", "/path", "The shortest explained paths between two entities",
             lambda m, p: m.paths(p["from"], p["to"], max_hops=p.get("max_hops", 4), limit=p.get("limit", 3),
                                  as_of=p.get("as_of"), known_at=p.get("known_at")),
             (Param("from", required=True), Param("to", required=True), Param("max_hops", "integer"),
              Param("limit", "integer"), AS_OF, KNOWN_AT)),
    Endpoint("GET", "/pack", "A cited context bundle for a query within a token budget",
             lambda m, p: m.pack(p["q"], budget_tokens=p.get("budget_tokens", 1000),
                                 max_items=p.get("max_items", 40), as_of=p.get("as_of"), known_at=p.get("known_at"),
                                 trace=bool(p.get("trace"))),
             (Param("q", required=True), Param("budget_tokens", "integer"), Param("max_items", "integer"), AS_OF,
              KNOWN_AT, Param("trace", "boolean"))),
)


def _coerce(ep: Endpoint, raw: dict[str, Any], from_query: bool) -> dict[str, Any]:
    """The endpoint's parameters from a query string (text) or a JSON body, checked and typed."""
    known = {p.name: p for p in ep.params}
    extra = sorted(set(raw) - set(known))
    if extra:
        raise BadInput(f"unknown parameter {extra[0]!r} for {ep.path}: expected one of {', '.join(known) or 'none'}")
    out: dict[str, Any] = {}
    for name, p in known.items():
        if name not in raw or raw[name] is None:
            if p.required:
                raise BadInput(f"missing parameter {name!r} for {ep.path}: expected {p.description or p.kind}")
            continue
        v = raw[name]
        if p.kind == "integer":
            if from_query:
                try:
                    v = int(v)
                except ValueError:
                    raise BadInput(f"bad {name} {show(v)}: expected a whole number") from None
            if not isinstance(v, int) or isinstance(v, bool):
                raise BadInput(f"bad {name} {show(v)}: expected a whole number")
        elif p.kind == "boolean":
            if from_query:
                if v not in ("true", "false", "1", "0"):
                    raise BadInput(f"bad {name} {show(v)}: expected true or false")
                v = v in ("true", "1")
            if not isinstance(v, bool):
                raise BadInput(f"bad {name} {show(v)}: expected true or false")
        elif p.kind == "array":
            v = v if isinstance(v, list) else [v]
            if not all(isinstance(x, str) for x in v):
                raise BadInput(f"bad {name} {show(raw[name])}: expected a list of strings")
        elif name == "object":
            if not isinstance(v, (str, int, float, bool)):
                raise BadInput(f"bad object {show(v)}: expected text (an entity ref, name or alias, or a value), "
                               "a number or true/false")
        elif not isinstance(v, str):
            raise BadInput(f"bad {name} {show(v)}: expected text")
        out[name] = v
    return out


def _file_lines(text: str) -> list[str]:
    """A JSON-lines body as a file of it is read: split at line feeds only (a JSON string may hold
    U+2028 and other characters ``str.splitlines`` splits at), blank lines kept, so the reports
    number lines as the CLI does for the same file."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def openapi() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for ep in ENDPOINTS:
        op: dict[str, Any] = {"summary": ep.summary, "responses": {
            "200": {"description": "The same JSON document as the CLI's --json"},
            "400": {"description": "Bad input (graphmem.error.v1)"}, "404": {"description": "Unknown entity or fact"},
            "403": {"description": "A Host or Origin that is not the server's (cross-site protection)"},
            "503": {"description": "The store cannot be used"}}}
        if ep.method == "POST":
            op["responses"]["413"] = {"description": "The body is larger than the server accepts"}
            op["responses"]["415"] = {"description": "The body's Content-Type is not " + " or ".join(
                JSONL_TYPES if ep.body == "jsonl" else JSON_TYPES)}
        if ep.method == "GET":
            op["parameters"] = [{"name": p.name, "in": "query", "required": p.required, "description": p.description,
                                 "schema": {"type": p.kind} if p.kind != "array" else
                                 {"type": "array", "items": {"type": "string"}}} for p in ep.params]
        else:
            if ep.body == "jsonl":
                op["parameters"] = [{"name": p.name, "in": "query", "required": p.required, "schema": {"type": p.kind}}
                                    for p in ep.params]
                op["requestBody"] = {"required": True, "content": {t: {"schema": {"type": "string"}}
                                                                    for t in JSONL_TYPES}}
            else:
                props = {p.name: ({"type": "array", "items": {"type": "string"}} if p.kind == "array" else
                                  {"type": p.kind} if p.name != "object" else
                                  {"type": ["string", "number", "boolean"]}) | (
                                      {"description": p.description} if p.description else {}) for p in ep.params}
                op["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "properties": props, "required": [p.name for p in ep.params if p.required],
                    "additionalProperties": False}}}}
        paths.setdefault(ep.path, {})[ep.method.lower()] = op
    paths["/health"] = {"get": {"summary": "Liveness and the store's counts", "responses": {"200": {"description": "ok"}}}}
    from graphmem import __version__
    return {"openapi": "3.1.0", "info": {"title": "graphmem", "version": __version__,
                                         "description": "A local-first knowledge-graph memory (docs/service.md)."},
            "paths": paths, "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}}


def docs_page() -> str:
    rows = "".join(
        f"<tr><td>{ep.method}</td><td><code>{html.escape(ep.path)}</code></td><td>{html.escape(ep.summary)}</td>"
        f"<td>{', '.join(html.escape(p.name) + ('*' if p.required else '') for p in ep.params)}</td></tr>"
        for ep in ENDPOINTS)
    return ("<!doctype html><meta charset=utf-8><title>graphmem service</title>"
            "<h1>graphmem service</h1><p>JSON over HTTP; the OpenAPI description is at "
            "<a href=/openapi.json>/openapi.json</a>. GET takes query parameters, POST a JSON object "
            "with <code>Content-Type: application/json</code> (import and ingest: JSON lines, also as "
            "<code>application/x-ndjson</code> or <code>application/jsonl</code>). * marks required parameters.</p>"
            f"<table border=1 cellpadding=4><tr><th>method<th>path<th>what<th>parameters</tr>{rows}</table>")


def error_status(e: GraphmemError) -> int:
    if isinstance(e, StoreUnavailable):
        return 503
    if isinstance(e, UnknownEntity) or str(e).startswith(("unknown fact", "unknown record")):
        return 404
    return 400


def create_app(store: str | Path, *, token: str | None = None, max_body: int = MAX_BODY,
               memory_kwargs: dict[str, Any] | None = None, url: str | None = None, host: str = "127.0.0.1",
               port: int = 8765, allow_hosts: tuple[str, ...] = (), allow_origins: tuple[str, ...] = ()) -> Any:
    """The Starlette application over the store at ``store`` (opened when the app starts; with
    ``url``, a marker file in the store names this server while it holds the store). ``host`` and
    ``port`` are where it is bound: the Host headers it answers are those, the loopback names and
    ``allow_hosts``; the Origins, its own and ``allow_origins`` (see ``Guard``)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    from graphmem.memory import Memory
    lock = _ReadWriteLock()
    state: dict[str, Any] = {}

    def error(status: int, code: str, message: str) -> Response:
        return JSONResponse({"schema": "graphmem.error.v1", "code": code, "message": message}, status_code=status)

    def run(fn: Callable[[Any], Any], write: bool = True) -> Any:
        with lock.writing() if write else lock.reading():  # reads at once, each write alone
            m = state.get("memory")
            if m is None:
                raise StoreUnavailable("the store is closed: the server is shutting down")
            return fn(m)

    async def call(request: Request, ep: Endpoint) -> Response:
        try:
            if ep.method == "GET":
                params = _coerce(ep, dict(request.query_params), from_query=True)
            else:
                accepted = JSONL_TYPES if ep.body == "jsonl" else JSON_TYPES
                ctype = request.headers.get("content-type")
                if ctype is None or ctype.split(";", 1)[0].strip().lower() not in accepted:
                    got = "no Content-Type" if ctype is None else f"Content-Type {show(ctype)}"
                    return error(415, "unsupported_media_type",
                                 f"{got} for POST {ep.path}: expected {' or '.join(accepted)}")
                size = int(request.headers.get("content-length") or 0)
                if size > max_body:
                    return error(413, "too_large", f"request body of {size:,} bytes is too large: expected at most {max_body:,}")
                body = bytearray()
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > max_body:
                        return error(413, "too_large", f"request body is too large: expected at most {max_body:,} bytes")
                try:
                    text = body.decode("utf-8")
                except UnicodeDecodeError:
                    raise BadInput("request body is not UTF-8: expected UTF-8 JSON") from None
                if ep.body == "jsonl":
                    params = _coerce(ep, dict(request.query_params), from_query=True)
                    params["_lines"] = _file_lines(text)
                else:
                    try:
                        raw = json.loads(text or "{}")
                    except json.JSONDecodeError as e:
                        raise BadInput(f"request body is not JSON ({e.msg} at character {e.pos}): expected a JSON object") from None
                    except RecursionError:  # the standard parser recurses once per level
                        raise BadInput("request body is nested too deeply: expected a JSON object of parameters "
                                       "(text, numbers, true/false or lists of text)") from None
                    if not isinstance(raw, dict):
                        raise BadInput(f"request body {show(text[:60])} is not a JSON object: expected an object of "
                                       "parameters")
                    params = _coerce(ep, raw, from_query=False)
            result = await run_in_threadpool(run, lambda m: _doc(ep.call(m, params)), ep.write)
            return JSONResponse(result)
        except GraphmemError as e:
            return error(error_status(e), type(e).__name__, str(e))
        except Exception as e:  # a bug: still one line, and say it is one
            return error(500, "internal", f"internal error ({type(e).__name__}: {e}); please report it")

    def endpoint(eps: dict[str, Endpoint]) -> Callable[[Request], Any]:
        """One handler per path, for each method the path has (so a wrong method's Allow names them all)."""
        async def handle(request: Request) -> Response:
            return await call(request, eps["GET" if request.method == "HEAD" else request.method])
        handle.__name__ = next(iter(eps.values())).path.strip("/").replace("-", "_")
        return handle

    async def http_error(request: Request, exc: Exception) -> Response:
        """Starlette's own refusals (no such path, a method the path does not have) as graphmem.error.v1."""
        assert isinstance(exc, HTTPException)
        path = show(request.url.path)
        if exc.status_code == 404:
            code, message = "not_found", f"no endpoint {path}: expected one of those listed at /docs and /openapi.json"
        elif exc.status_code == 405:
            allow = ", ".join(sorted(m.strip() for m in (exc.headers or {}).get("Allow", "").split(",") if m.strip()))
            code, message = "method_not_allowed", f"method {request.method} is not allowed on {path}: expected {allow}"
        else:
            code, message = "http_error", f"{exc.status_code} {exc.detail}"
        resp = error(exc.status_code, code, message)
        resp.headers.update(exc.headers or {})
        if exc.status_code == 405:
            resp.headers["Allow"] = allow
        return resp

    async def health(request: Request) -> Response:
        try:
            info = await run_in_threadpool(run, lambda m: m.info().to_dict(), False)
        except GraphmemError as e:
            return error(error_status(e), type(e).__name__, str(e))
        return JSONResponse({"schema": "graphmem.health.v1", "status": "ok", **{k: v for k, v in info.items()
                                                                                   if k != "schema"}})

    async def spec(request: Request) -> Response:
        return JSONResponse(openapi())

    async def docs(request: Request) -> Response:
        return HTMLResponse(docs_page())

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        state["memory"] = Memory(store, **(memory_kwargs or {}))
        state["memory"].store.per_thread_connections()
        marker = Path(store) / SERVER_FILE
        if url:
            write_server_file(Path(store), url, token)
        try:
            yield
        finally:
            with lock.writing():  # in-flight calls finish first
                m = state.pop("memory")
                m.close()
            if url:
                marker.unlink(missing_ok=True)

    routes = [Route("/health", health, methods=["GET"]), Route("/openapi.json", spec, methods=["GET"]),
              Route("/docs", docs, methods=["GET"])]
    by_path: dict[str, dict[str, Endpoint]] = {}
    for ep in ENDPOINTS:
        by_path.setdefault(ep.path, {})[ep.method] = ep
    for path, eps in by_path.items():
        routes.append(Route(path, endpoint(eps), methods=list(eps)))
    app: Any = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error})
    if token:
        app = BearerAuth(app, token, error)
    if allow_origins:  # a page at an allowed origin may read the answers (and ask before it writes)
        app = CORSMiddleware(app, allow_origins=list(allow_origins), allow_methods=["GET", "POST"],
                             allow_headers=["Content-Type", "Authorization"])
    return Guard(app, host=host, port=port, allow_hosts=allow_hosts, allow_origins=allow_origins, error=error)


class _ReadWriteLock:
    """Many readers at once, or one writer alone; a waiting writer goes before new readers."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting_writers = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._waiting_writers += 1
            while self._writing or self._readers:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


def check_servable(store: Path) -> None:
    """StoreUnavailable unless ``store`` is a store no other server holds (checked before the server
    starts: uvicorn would report a failed start as a traceback)."""
    holder = server_holding(store)
    if holder is not None:
        raise StoreUnavailable(f"store {str(store)!r} is in use by {holder}")
    require_store(store)


def serve(store: Path, host: str, port: int, token: str | None, max_body: int = MAX_BODY,
          allow_hosts: tuple[str, ...] = (), allow_origins: tuple[str, ...] = ()) -> None:
    """Run the service until SIGINT or SIGTERM (uvicorn finishes the requests in flight first)."""
    import uvicorn
    check_bind(host, token)
    check_servable(store)
    app = create_app(store, token=token, max_body=max_body, url=f"http://{url_host(host)}:{port}", host=host,
                     port=port, allow_hosts=tuple(check_allow_host(h) for h in allow_hosts),
                     allow_origins=tuple(check_allow_origin(o) for o in allow_origins))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=30)
    server = uvicorn.Server(config)
    server.run()  # a failed start (the port in use) exits with SystemExit once the app has opened the store
    if not server.started:
        raise StoreUnavailable(f"the server did not start on {host}:{port} (is the port in use, or the store locked?)")


