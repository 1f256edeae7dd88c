"""The command line's way through a running ``graphmem serve``.

While a server holds a store (Kuzu lets one process write to it), a CLI command on the same store
sends its call to the server's endpoint instead of opening the store, and prints the document the
server answers, which is the one the library would have made (docs/service.md). ``Remote`` has the
methods of ``Memory`` that the CLI calls, with the same parameters; each returns an object whose
``to_dict()`` is the server's document, with the few attributes the CLI reads beside it (``errors``
of an import or ingest, ``ok`` of a rebuild check, ``text`` of an export, ``fails`` of lint). An
error document (``graphmem.error.v1``) becomes the GraphmemError the library would have raised,
with the same one-line message, so the exit codes are the same.

Standard library only (``urllib``): the CLI's start-up stays light, and the server's marker
(``config.server_info``) gives the URL and, when the server requires one, the bearer token.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import graphmem.errors as errors
from graphmem.errors import BadInput, GraphmemError, StoreUnavailable

WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "": "127.0.0.1"}


def local_url(url: str) -> str:
    """The server's URL as a client on this machine reaches it: a wildcard bind address (``0.0.0.0``,
    ``::``) is reached on loopback, whose names the server always answers (service/guard.py)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition(":")[0] if parts.port is not None else parts.netloc
    if host in WILDCARD_HOSTS:
        netloc = WILDCARD_HOSTS[host] + (f":{parts.port}" if parts.port is not None else "")
        parts = parts._replace(netloc=netloc)
    return urllib.parse.urlunsplit(parts).rstrip("/")


class Doc:
    """A document the server answered; ``to_dict()`` returns it (extra arguments, such as lint's
    ``fail_on``, were sent with the request)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def to_dict(self, *_: Any) -> dict[str, Any]:
        return self.doc

    @property
    def ok(self) -> bool:
        return bool(self.doc.get("ok", True))

    @property
    def errors(self) -> tuple[tuple[int, str], ...]:
        """An import's or ingest's invalid lines, as (line number, reason), like the library's reports."""
        return tuple((int(e["line"]), str(e["reason"])) for e in self.doc.get("errors") or ())

    def __getattr__(self, name: str) -> Any:
        """Any other field the CLI reads beside the document (``written``, ``stored``, ``ref``) is the
        document's own."""
        if name.startswith("_") or name not in self.doc:
            raise AttributeError(name)
        return self.doc[name]


class ExportDoc(Doc):
    @property
    def text(self) -> str:
        """The export as the library writes it: JSON lines, or the GraphML text."""
        if self.doc.get("format") == "jsonl":
            return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.doc.get("lines") or ())
        return str(self.doc.get("graphml", ""))


class LintDoc:
    """Lint through the server: the report is asked for with the ``fail_on``, codes and limit the CLI passes."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self._docs: dict[tuple[Any, ...], dict[str, Any]] = {}

    def to_dict(self, fail_on: str = "error", *, codes: Iterable[str] | None = None,
                limit: int | None = None) -> dict[str, Any]:
        key = (fail_on, None if codes is None else tuple(codes), limit)
        if key not in self._docs:
            self._docs[key] = self.remote.call("GET", "/lint", {
                "fail_on": fail_on, "code": None if codes is None else ",".join(codes), "limit": limit})
        return self._docs[key]

    def fails(self, fail_on: str = "error", codes: Iterable[str] | None = None) -> bool:
        """Whether an issue (of ``codes``) is at or above ``fail_on``: the ``ok`` of the document for them."""
        wanted = (fail_on, None if codes is None else tuple(codes))
        doc = next((d for k, d in self._docs.items() if k[:2] == wanted), None)
        return not (doc if doc is not None else self.to_dict(fail_on, codes=codes, limit=0))["ok"]


class Remote:
    """The server holding the store at ``store``, used as the CLI uses a ``Memory``."""

    def __init__(self, store: Path, info: dict[str, Any]) -> None:
        self.store = store
        self.pid = info.get("pid")
        self.url = local_url(str(info["url"]))
        self.token = info.get("token") if isinstance(info.get("token"), str) else None
        self.holder = f"a graphmem server (pid {self.pid}, {info['url']})"

    def close(self) -> None:
        """Nothing to close: each call is one request."""

    # the transport -----------------------------------------------------------------

    def call(self, method: str, path: str, params: dict[str, Any] | None = None, body: Any = None,
             lines: bytes | None = None) -> dict[str, Any]:
        """One request; the document answered, or the GraphmemError an error document stands for."""
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None and v != [] and v != ()}
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"Accept": "application/json"}
        data = None
        if lines is not None:
            data, headers["Content-Type"] = lines, "application/x-ndjson"
        elif method == "POST":
            payload = {k: v for k, v in (body or {}).items() if v is not None}
            data, headers["Content-Type"] = json.dumps(payload).encode("utf-8"), "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request) as response:
                return _document(response.read(), path)
        except urllib.error.HTTPError as e:
            with e:
                raise self._error(e.code, e.read(), path) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise StoreUnavailable(f"store {str(self.store)!r} is in use by {self.holder}, which did not answer "
                                   f"({reason}); expected it to take the command, or to be stopped") from None

    def _error(self, status: int, raw: bytes, path: str) -> GraphmemError:
        try:
            doc = json.loads(raw)
            code, message = str(doc["code"]), str(doc["message"])
        except (ValueError, KeyError, TypeError):
            return StoreUnavailable(f"the graphmem server holding store {str(self.store)!r} answered {path} "
                                    f"with HTTP {status} and no graphmem.error.v1 document")
        cls = getattr(errors, code, None)
        if isinstance(cls, type) and issubclass(cls, GraphmemError):
            return cls(message)  # the library's own error, with its message and exit code
        if status in (401, 403):
            return StoreUnavailable(f"{self.holder} holds store {str(self.store)!r} and refused the command: {message}")
        if status == 404:
            return StoreUnavailable(f"{self.holder} holds store {str(self.store)!r} and does not offer {path} "
                                    f"({message}); stop it to run this command")
        if status in (400, 413, 415):
            return BadInput(message)
        return StoreUnavailable(message)  # a bug in the server: its message says so

    def _get(self, path: str, **params: Any) -> Doc:
        return Doc(self.call("GET", path, params))

    def _post(self, path: str, **body: Any) -> Doc:
        return Doc(self.call("POST", path, body=body))

    def _lines(self, path: str, source: str | Path | IO[bytes], **params: Any) -> Doc:
        if isinstance(source, str | Path):
            try:
                raw = Path(source).read_bytes()
            except OSError as e:
                raise BadInput(f"cannot read file {str(source)!r}: {e.strerror}") from None
        else:
            raw = source.read()
        return Doc(self.call("POST", path, params, lines=raw))

    # what the CLI calls on a Memory ----------------------------------------------

    def info(self) -> Doc:
        h = self.call("GET", "/health")
        return Doc({"schema": "graphmem.init.v1", "store": str(self.store)} | {
            k: v for k, v in h.items() if k not in ("schema", "status", "store")})

    def current(self, subject: str, *, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None, scope: Iterable[str] | str | None = None) -> Doc:
        return self._get("/current", subject=subject, as_of=as_of, known_at=known_at, predicate=predicate,
                         scope=_scopes(scope))

    def timeline(self, subject: str, *, predicate: str | None = None, known_at: str | None = None,
                 scope: Iterable[str] | str | None = None) -> Doc:
        return self._get("/timeline", subject=subject, predicate=predicate, known_at=known_at, scope=_scopes(scope))

    def facts(self, *, predicate: str | None = None, object: str | None = None,  # noqa: A002  (as Memory.facts)
              subject_type: str | None = None, as_of: str | None = None,
              scope: Iterable[str] | str | None = None) -> Doc:
        return self._get("/facts", predicate=predicate, object=object, subject_type=subject_type, as_of=as_of,
                         scope=_scopes(scope))

    def why(self, fact: str, *, scope: Iterable[str] | str | None = None) -> Doc:
        return self._get("/why", fact=fact, scope=_scopes(scope))

    def asserted_by(self, facts: Iterable[str]) -> dict[str, str]:
        """Who asserted each statement (the tables' trust mark), from its receipts; an unknown one is left out."""
        out = {}
        for ref in dict.fromkeys(facts):
            try:
                out[ref] = str(self.call("GET", "/why", {"fact": ref})["fact"]["asserted_by"])
            except BadInput:
                continue
        return out

    def show_entity(self, text: str) -> Doc:
        return self._get("/entity", ref=text)

    def list_entities(self, type_name: str | None = None, match: str | None = None) -> Doc:
        return self._get("/entities", type=type_name, match=match)

    def add_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> Doc:
        return self._post("/entities", type=type_name, name=name, aliases=list(aliases), description=description)

    def assert_(self, subject: str, predicate: str, obj: Any, *, valid_from: str | None = None,
                valid_to: str | None = None, sources: Iterable[str] = (), by: str = "operator",
                scope: str | None = None) -> Doc:
        return self._post("/assert", subject=subject, predicate=predicate, object=obj, valid_from=valid_from,
                          valid_to=valid_to, sources=list(sources), by=by, scope=scope)

    def end(self, subject: str, predicate: str, obj: Any = None, *, at: str, sources: Iterable[str] = (),
            by: str = "operator", scope: str | None = None) -> Doc:
        return self._post("/end", subject=subject, predicate=predicate, object=obj, at=at, sources=list(sources),
                          by=by, scope=scope)

    def retract(self, fact: str, reason: str | None = None, *, scope: Iterable[str] | str | None = None) -> Doc:
        return self._post("/retract", fact=fact, reason=reason, scope=_scopes(scope))

    def cite(self, fact: str, sources: Iterable[str], note: str | None = None, *, by: str = "operator",
             scope: Iterable[str] | str | None = None) -> Doc:
        return self._post("/cite", fact=fact, sources=list(sources), note=note, by=by, scope=_scopes(scope))

    def rename_entity(self, ref: str, name: str) -> Doc:
        return self._post("/entities/rename", ref=ref, name=name)

    def add_aliases(self, ref: str, aliases: Iterable[str]) -> Doc:
        return self._post("/entities/aliases", ref=ref, aliases=list(aliases))

    def remove_aliases(self, ref: str, aliases: Iterable[str]) -> Doc:
        return self._post("/entities/aliases/remove", ref=ref, aliases=list(aliases))

    def merge_entities(self, into: str, merged: str) -> Doc:
        return self._post("/entities/merge", into=into, merged=merged)

    def unmerge_entity(self, merged: str) -> Doc:
        return self._post("/entities/unmerge", merged=merged)

    def cypher(self, query: str) -> Doc:
        raise StoreUnavailable(f"store {str(self.store)!r} is in use by {self.holder}, which does not run ad-hoc "
                               "Cypher; expected the server stopped to run 'graphmem cypher'")

    def import_jsonl(self, source: str | Path | IO[bytes], *, strict: bool = False, progress: Any = None,
                     scope: str | None = None) -> Doc:
        return self._lines("/import", source, strict=strict, scope=scope)

    def ingest(self, source: str | Path | IO[bytes], *, redact: bool = True, extract: bool = False,
               format: str = "auto", progress: Any = None,  # noqa: A002  (as Memory.ingest)
               scope: str | None = None) -> Doc:
        from graphmem.evidence.textfiles import file_format
        if file_format(source, format) != "jsonl":
            raise StoreUnavailable(f"store {str(self.store)!r} is in use by {self.holder}, which takes records as "
                                   "JSON lines only: expected a JSONL file, or the server stopped to ingest "
                                   "Markdown or text")
        return self._lines("/ingest", source, redact=redact, extract=extract, scope=scope)

    def note(self, text: str, *, kind: str | None = None, source: str | None = None, scope: str | None = None,
             ts: str | None = None, redact: bool = True, due: str | None = None) -> Doc:
        return self._post("/note", text=text, kind=kind, source=source, scope=scope, ts=ts, redact=redact, due=due)

    def search(self, query: str, *, limit: int = 10, **filters: Any) -> Doc:
        return self._get("/search", q=query, limit=limit, **filters)

    def extract_text(self, text: str, *, at: str | None = None, apply: bool = False) -> Doc:
        return self._post("/extract", text=text, at=at, apply=apply)

    def extract_records(self, refs: list[str], *, apply: bool = False) -> Doc:
        if len(refs) != 1:
            raise BadInput(f"expected one record to extract from through the server; got {len(refs)}")
        return self._post("/extract", record=refs[0], apply=apply)

    def extract_pending(self, *, apply: bool = False, progress: Any = None) -> Doc:
        return self._post("/extract", pending=True, apply=apply)

    def lint(self, progress: Any = None) -> LintDoc:
        return LintDoc(self)

    def rebuild(self, *, check: bool = False, progress: Any = None) -> Doc:
        if not check:
            raise StoreUnavailable(f"store {str(self.store)!r} is in use by {self.holder}, which does not rebuild; "
                                   "stop it to run this command")
        return self._get("/rebuild-check")

    def export_doc(self, fmt: str = "jsonl", as_of: str | None = None) -> ExportDoc:
        return ExportDoc(self.call("GET", "/export", {"format": fmt, "as_of": as_of}))

    def recommend(self, idea: str, *, top: int = 5, as_of: str | None = None, known_at: str | None = None,
                  max_hops: int = 3, paths: int = 3, scope: Iterable[str] | str | None = None) -> Doc:
        return self._get("/recommend", idea=idea, top=top, as_of=as_of, known_at=known_at, max_hops=max_hops,
                         paths=paths, scope=_scopes(scope))

    def paths(self, src: str, dst: str, *, max_hops: int = 4, limit: int = 3, as_of: str | None = None,
              known_at: str | None = None, scope: Iterable[str] | str | None = None) -> Doc:
        return self._get("/path", **{"from": src, "to": dst}, max_hops=max_hops, limit=limit, as_of=as_of,
                         known_at=known_at, scope=_scopes(scope))

    def pack(self, query: str, *, budget_tokens: int = 1000, max_items: int = 40, as_of: str | None = None,
             known_at: str | None = None, trace: bool = False, tail: int = 0, tail_budget: int | None = None,
             session: str | None = None, min_trust: str | None = None, **filters: Any) -> Doc:
        return self._get("/pack", q=query, budget_tokens=budget_tokens, max_items=max_items, as_of=as_of,
                         known_at=known_at, trace=trace, tail=tail, tail_budget=tail_budget, session=session,
                         min_trust=min_trust, **filters)

    def lifecycle(self, *, at: str | None = None, dry_run: bool = False) -> Doc:
        return self._post("/lifecycle", at=at, dry_run=dry_run)

    def revive(self, records: str | list[str]) -> Doc:
        return self._post("/revive", refs=[records] if isinstance(records, str) else list(records))


def _scopes(scope: Iterable[str] | str | None) -> list[str] | None:
    """Scopes as the server takes them: a list (None: every scope)."""
    return None if scope is None else [scope] if isinstance(scope, str) else list(scope)


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):  # several values of one parameter: comma-separated, as the server reads them
        return ",".join(map(str, v))
    return str(v)


def _document(raw: bytes, path: str) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise StoreUnavailable(f"the graphmem server answered {path} with something other than a JSON document")
    return doc
