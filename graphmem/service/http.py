"""The local HTTP JSON service (SPEC 11): ``graphmem serve``.

One process owns an embedded store (Kuzu's lock); a PostgreSQL store may be served by several
worker processes sharing the port (``serve --workers N``: ``_serve_workers``). The service answers with the same JSON
documents as ``--json``. Endpoints come from the operations table (``operations.py``, shared
with MCP), which also makes the OpenAPI description at ``/openapi.json`` and the page at ``/docs``.
Reads run at once, each thread on its own Kuzu connection; a write waits for the
reads in flight and runs alone, as its own transaction, committed before the
response is sent. Requests a browser could send from another site are refused
(``Guard``: the Host and Origin headers; ``call``: the Content-Type of a POST).
docs/service.md has the contract.
"""

from __future__ import annotations

import contextlib
import html
import json
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from graphmem.config import SERVER_FILE, StoreAddress, require_store, server_holding, store_address, write_server_file
from graphmem.errors import BadInput, GraphmemError, StoreUnavailable, UnknownEntity
from graphmem.service.commits import Committer
from graphmem.service.guard import (
    SCOPES_KEY,
    BearerAuth,
    Guard,
    ScopeRefused,
    check_allow_host,
    check_allow_origin,
    check_bind,
    limit_to_scopes,
    show,
    url_host,
)
from graphmem.service.operations import OPERATIONS, Operation, check, document

if TYPE_CHECKING:
    from starlette.responses import Response

MAX_BODY = 16 * 2**20
# The Content-Type a POST must carry: none of these is one a browser may send to another site
# without asking first (text/plain, form encodings), so a page elsewhere cannot write.
JSON_TYPES = ("application/json",)
JSONL_TYPES = ("application/json", "application/x-ndjson", "application/jsonl")


# The routes are the operations offered over HTTP (operations.py holds the one table, shared with MCP).
ENDPOINTS: tuple[Operation, ...] = tuple(op for op in OPERATIONS if "http" in op.surfaces)


def _file_lines(text: str) -> list[str]:
    """A JSON-lines body as a file of it is read: split at line feeds only (a JSON string may hold
    U+2028 and other characters ``str.splitlines`` splits at), blank lines kept, so the reports
    number lines as the CLI does for the same file."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _utf8(body: bytes | bytearray) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("request body is not UTF-8: expected UTF-8 JSON") from None


def _fast_object(body: bytes | bytearray) -> dict[str, Any] | None:
    """A JSON object body read by orjson (the common case, a few times faster than the standard
    parser); None for anything else, which the standard parser then reads, or refuses with its message
    (orjson refuses what the standard parser may take: NaN, integers beyond 64 bits, lone surrogates)."""
    try:
        raw = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return raw if isinstance(raw, dict) else None


def _json_response(doc: Any) -> Response:
    """The answer's document as JSON, encoded by orjson (compact, UTF-8, as Starlette's ``JSONResponse``
    writes it); what orjson cannot encode goes to ``JSONResponse``, which encodes it or fails as before."""
    from starlette.responses import JSONResponse, Response
    try:
        return Response(orjson.dumps(doc), media_type="application/json")
    except (TypeError, orjson.JSONEncodeError):
        return JSONResponse(doc)


def openapi() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for ep in ENDPOINTS:
        op: dict[str, Any] = {"operationId": ep.name, "summary": ep.summary, "responses": {
            "200": {"description": "The same JSON document as the CLI's --json"},
            "400": {"description": "Bad input (graphmem.error.v1)"}, "404": {"description": "Unknown entity or fact"},
            "403": {"description": "A Host or Origin that is not the server's (cross-site protection), "
                                    "or a scope outside the token's (ScopeRefused, docs/scopes.md)"},
            "503": {"description": "The store cannot be used"}}}
        if ep.guide:
            op["description"] = ep.guide
        params = ep.offered("http")
        if ep.method == "POST":
            op["responses"]["413"] = {"description": "The body is larger than the server accepts"}
            op["responses"]["415"] = {"description": "The body's Content-Type is not " + " or ".join(
                JSONL_TYPES if ep.body == "jsonl" else JSON_TYPES)}
        if ep.method == "GET" or ep.body == "jsonl":
            op["parameters"] = [{"name": p.name, "in": "query", "required": p.required, "description": p.description,
                                 "schema": {k: v for k, v in p.schema().items() if k != "description"}}
                                for p in params]
        if ep.method == "POST":
            op["requestBody"] = {"required": True, "content": {t: {"schema": {"type": "string"}} for t in JSONL_TYPES}
                                 } if ep.body == "jsonl" else {"required": True, "content": {"application/json": {
                                     "schema": ep.input_schema("http")}}}
        paths.setdefault(ep.path, {})[ep.method.lower()] = op
    paths["/health"] = {"get": {"summary": "Liveness and the store's counts", "responses": {"200": {"description": "ok"}}}}
    from graphmem import __version__
    return {"openapi": "3.1.0", "info": {"title": "graphmem", "version": __version__,
                                         "description": "A local-first knowledge-graph memory (docs/service.md)."},
            "paths": paths, "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}}


def docs_page() -> str:
    rows = "".join(
        f"<tr><td>{ep.method}</td><td><code>{html.escape(ep.path)}</code></td><td>{html.escape(ep.summary)}</td>"
        f"<td>{', '.join(html.escape(p.name) + ('*' if p.required else '') for p in ep.offered('http'))}</td></tr>"
        for ep in ENDPOINTS)
    return ("<!doctype html><meta charset=utf-8><title>graphmem service</title>"
            "<h1>graphmem service</h1><p>JSON over HTTP; the OpenAPI description is at "
            "<a href=/openapi.json>/openapi.json</a>. GET takes query parameters, POST a JSON object "
            "with <code>Content-Type: application/json</code> (import and ingest: JSON lines, also as "
            "<code>application/x-ndjson</code> or <code>application/jsonl</code>). * marks required parameters.</p>"
            f"<table border=1 cellpadding=4><tr><th>method<th>path<th>what<th>parameters</tr>{rows}</table>")


def error_status(e: GraphmemError) -> int:
    if isinstance(e, ScopeRefused):
        return 403
    if isinstance(e, StoreUnavailable):
        return 503
    if isinstance(e, UnknownEntity) or str(e).startswith(("unknown fact", "unknown record")):
        return 404
    return 400


def create_app(store: str | Path | StoreAddress, *, token: str | None = None, max_body: int = MAX_BODY,
               memory_kwargs: dict[str, Any] | None = None, url: str | None = None, host: str = "127.0.0.1",
               port: int = 8765, allow_hosts: tuple[str, ...] = (), allow_origins: tuple[str, ...] = (),
               scoped_tokens: dict[str, tuple[str, ...]] | None = None) -> Any:
    """The Starlette application over the store at ``store`` (opened when the app starts; with
    ``url``, a marker file in the store names this server while it holds the store). ``host`` and
    ``port`` are where it is bound: the Host headers it answers are those, the loopback names and
    ``allow_hosts``; the Origins, its own and ``allow_origins`` (see ``Guard``). ``token`` is the admin
    token; ``scoped_tokens`` maps more tokens to the scopes each is bound to (docs/scopes.md)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
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
            if write:  # no read runs now: the embedded engine's budget may be given back (docs/service.md)
                m.store.renew_if_due()
            return fn(m)

    committer = Committer(run)

    async def call(request: Request, ep: Operation) -> Response:
        try:
            if ep.method == "GET":
                params = check(ep, dict(request.query_params), "http", from_text=True)
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
                raw = _fast_object(body) if ep.body != "jsonl" else None
                if raw is not None:
                    params = check(ep, raw, "http", from_text=False)
                elif ep.body == "jsonl":
                    params = check(ep, dict(request.query_params), "http", from_text=True)
                    params["_lines"] = _file_lines(_utf8(body))
                else:
                    text = _utf8(body)
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
                    params = check(ep, raw, "http", from_text=False)
            params = limit_to_scopes(ep.scope, params, request.scope.get(SCOPES_KEY), f"{ep.method} {ep.path}")
            if ep.write:  # answered once committed, with the writes of other requests (commits.py)
                result = await committer.write(ep.name, lambda m: document(ep.call(m, params)))
            else:
                result = await run_in_threadpool(run, lambda m: document(ep.call(m, params)), False)
            return _json_response(result)
        except GraphmemError as e:
            return error(error_status(e), type(e).__name__, str(e))
        except Exception as e:  # a bug: still one line, and say it is one
            return error(500, "internal", f"internal error ({type(e).__name__}: {e}); please report it")

    def endpoint(eps: dict[str, Operation]) -> Callable[[Request], Any]:
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
        if request.scope.get(SCOPES_KEY) is not None:  # the store's counts span every scope
            return JSONResponse({"schema": "graphmem.health.v1", "status": "ok",
                                 "scope": list(request.scope[SCOPES_KEY])})
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
        folder = store_address(store).folder  # a server engine's store has no folder to mark
        marker = folder / SERVER_FILE if folder is not None else None
        if url and folder is not None:
            write_server_file(folder, url, token)
        committer.start()
        try:
            yield
        finally:
            committer.stop()  # the writes handed over are committed and answered first
            with lock.writing():  # in-flight calls finish first
                m = state.pop("memory")
                m.close()
            if url and marker is not None:
                marker.unlink(missing_ok=True)

    routes = [Route("/health", health, methods=["GET"]), Route("/openapi.json", spec, methods=["GET"]),
              Route("/docs", docs, methods=["GET"])]
    by_path: dict[str, dict[str, Operation]] = {}
    for ep in ENDPOINTS:
        by_path.setdefault(ep.path, {})[ep.method] = ep
    for path, eps in by_path.items():
        routes.append(Route(path, endpoint(eps), methods=list(eps)))
    app: Any = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error})
    tokens: dict[str, tuple[str, ...] | None] = dict(scoped_tokens or {})
    if token:
        if token in tokens:
            raise BadInput("the --token is also given as a scoped token: expected a token to be one or the other")
        tokens[token] = None
    if tokens:
        app = BearerAuth(app, tokens, error)
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


def check_servable(store: Path | StoreAddress) -> None:
    """StoreUnavailable unless ``store`` is a store no other server holds (checked before the server
    starts: uvicorn would report a failed start as a traceback)."""
    where = store_address(store)
    if where.folder is None:  # a server engine's address: opened once, as the server will open it
        from graphmem.memory import Memory
        Memory(where, read_only=True).close()
        return
    holder = server_holding(where.folder)
    if holder is not None:
        raise StoreUnavailable(f"store {str(store)!r} is in use by {holder}")
    require_store(store)


def serve(store: Path | StoreAddress, host: str, port: int, token: str | None, max_body: int = MAX_BODY,
          allow_hosts: tuple[str, ...] = (), allow_origins: tuple[str, ...] = (),
          scoped_tokens: dict[str, tuple[str, ...]] | None = None, workers: int = 1) -> None:
    """Run the service until SIGINT or SIGTERM (uvicorn finishes the requests in flight first).

    ``workers`` above 1 (PostgreSQL only: :func:`check_workers`) runs that many worker processes
    sharing one listening socket, each with its own store connection (:func:`_serve_workers`)."""
    import uvicorn
    check_bind(host, token, bool(scoped_tokens))
    check_servable(store)
    check_workers(store, workers)
    if workers > 1:
        _serve_workers(store, host, port, token, max_body, allow_hosts, allow_origins, scoped_tokens, workers)
        return
    app = create_app(store, token=token, max_body=max_body, url=f"http://{url_host(host)}:{port}", host=host,
                     port=port, allow_hosts=tuple(check_allow_host(h) for h in allow_hosts),
                     allow_origins=tuple(check_allow_origin(o) for o in allow_origins), scoped_tokens=scoped_tokens)
    # the cheaper request path: no access log (it is off at this log level anyway, but still formatted),
    # no proxy headers (the server trusts no proxy: Host and Origin are checked as sent), no Server
    # header; uvicorn picks httptools and uvloop (dependencies of graphmem) when they are installed (docs/service.md)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=30,
                            access_log=False, proxy_headers=False, server_header=False)
    server = uvicorn.Server(config)
    server.run()  # a failed start (the port in use) exits with SystemExit once the app has opened the store
    if not server.started:
        raise StoreUnavailable(f"the server did not start on {host}:{port} (is the port in use, or the store locked?)")




MAX_WORKERS = 64
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})  # SIGINT (a terminal's Ctrl-C) and SIGTERM: the worker server's stop signals
WORKER_STOP_S = 40  # how long the parent waits for its workers to finish (uvicorn's graceful 30 s, and some)


def check_workers(store: Path | StoreAddress, workers: int) -> None:
    """Refuse a worker count the store cannot be served with.

    Parameters
    ----------
    store : Path or StoreAddress
        The store to serve.
    workers : int
        Worker processes asked for: 1, or 2 to 64 on a PostgreSQL store (an embedded store's
        single-writer lock is held by one process: Kuzu and LadybugDB are served by one).

    Raises
    ------
    BadInput
        One line naming the value and what was expected.

    Examples
    --------
    >>> check_workers("postgresql://localhost/graphmem", 4)
    >>> check_workers("/nonexistent/graphmem-store", 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphmem.errors.BadInput: bad --workers 4 for a kuzu store: expected 1 (only a PostgreSQL store ...
    """
    if not 1 <= workers <= MAX_WORKERS:
        raise BadInput(f"bad --workers {workers}: expected 1 to {MAX_WORKERS}")
    engine = store_address(store).engine
    if workers > 1 and engine != "postgresql":
        raise BadInput(f"bad --workers {workers} for a {engine} store: expected 1 (only a PostgreSQL store is "
                       "served by several processes; an embedded store is locked by one)")


def _serve_workers(store: Path | StoreAddress, host: str, port: int, token: str | None, max_body: int,
                   allow_hosts: tuple[str, ...], allow_origins: tuple[str, ...],
                   scoped_tokens: dict[str, tuple[str, ...]] | None, workers: int) -> None:
    """Pre-fork: bind the socket here, fork ``workers`` children that each open the store and serve on
    it (the kernel spreads the connections), start a new one in place of any that dies (a kill -9),
    and on SIGINT or SIGTERM pass the signal on and wait for them to finish their requests."""
    import os
    import socket
    import time

    import uvicorn
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto named: asyncio sets TCP_NODELAY on accepted sockets only when it is IPPROTO_TCP (else each
    # answer, written as head then body, waits ~40 ms for the client's delayed ACK)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise StoreUnavailable(f"the server did not start on {host}:{port}: {e.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)

    def child() -> None:
        # a signal that came while this worker was being forked is pending here: with the parent's handler
        # gone it ends the worker (a Ctrl-C reaches every process of the group, a starting worker too)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        app = create_app(store, token=token, max_body=max_body, url=None, host=host, port=port,
                         allow_hosts=tuple(check_allow_host(h) for h in allow_hosts),
                         allow_origins=tuple(check_allow_origin(o) for o in allow_origins),
                         scoped_tokens=scoped_tokens)
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=30,
                                access_log=False, proxy_headers=False, server_header=False)
        server = uvicorn.Server(config)
        code = 0
        try:
            server.run(sockets=[sock])
            code = 0 if server.started else 1
        except BaseException:  # noqa: BLE001 - a worker reports its failure by its exit status
            code = 1
        os._exit(code)

    def spawn() -> None:
        # SIGINT and SIGTERM are held back while a worker is forked and listed: a worker never runs the
        # parent's handler, and the parent's handler always knows every worker (else a worker forked as
        # Ctrl-C came would miss the signal and serve on, and the parent would wait for it for ever)
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            pid = os.fork()
            if pid == 0:
                child()
            pids.add(pid)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    stopping: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        stopping.append(signum)
        for pid in pids:  # each finishes its requests in flight, then ends; waitpid returns
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    old = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    pids: set[int] = set()
    for _ in range(workers):
        if stopping:
            break
        spawn()
    failures = 0
    try:
        while pids and not stopping:
            try:
                pid, status = os.waitpid(-1, 0)
            except InterruptedError:
                continue
            except ChildProcessError:
                break
            if pid not in pids:
                continue
            pids.discard(pid)
            if stopping:
                break
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
                failures += 1  # a worker that could not start: do not start it again and again
                if failures >= workers:
                    raise StoreUnavailable(f"the workers did not start on {host}:{port} (is the store reachable?)")
                time.sleep(0.5)
            spawn()  # a worker killed (kill -9) or ended: another takes its place
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        _reap(pids, time.monotonic() + WORKER_STOP_S)
        sock.close()
        for s, h in old.items():
            signal.signal(s, h)


def _reap(pids: set[int], deadline: float) -> None:
    """Wait for the workers ``pids`` to end; any still running at ``deadline`` (a worker that ignores
    SIGTERM, stuck in a request) is killed, so the server never leaves a worker behind."""
    import os
    import time
    left = set(pids)
    while left:
        for pid in list(left):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                left.discard(pid)
        if not left:
            return
        if time.monotonic() >= deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for pid in left:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
            return
        time.sleep(0.05)
