"""graphmem serve, through a real uvicorn in a subprocess on a free loopback port."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import TEST_ENGINE, assert_acked_kept, cli, copy_demo, one_clear_line

import graphmem

MAIN = "from graphmem.cli import main; main()"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, store: Path, *args: str, main: str = MAIN) -> None:
        """``graphmem serve`` on ``store`` with ``args``; ``main`` is the Python that runs the command line
        (a test may set a module's knob first)."""
        self.store = store
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_TOKEN"}
        self.proc = subprocess.Popen([sys.executable, "-c", main, "--store", str(store), "serve", "--port",
                                      str(self.port), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            try:
                httpx.get(self.url + "/health", timeout=1, headers=self.auth(args))
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("server did not start")

    @staticmethod
    def auth(args: tuple[str, ...]) -> dict[str, str]:
        return {"Authorization": f"Bearer {args[args.index('--token') + 1]}"} if "--token" in args else {}

    def get(self, path: str, **params: Any) -> httpx.Response:
        return httpx.get(self.url + path, params=params, timeout=60)

    def post(self, path: str, body: Any = None, content: bytes | None = None, headers: dict[str, str] | None = None,
             **params: Any) -> httpx.Response:
        if content is not None:  # JSON lines for /import and /ingest, else a JSON text
            ctype = "application/x-ndjson" if path in ("/import", "/ingest") else "application/json"
            return httpx.post(self.url + path, content=content, params=params, timeout=60,
                              headers={"Content-Type": ctype, **(headers or {})})
        return httpx.post(self.url + path, json=body, timeout=60, headers=headers)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=30)
        finally:
            for f in (self.proc.stdout, self.proc.stderr):
                if f:
                    f.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    store = copy_demo(demo_dir, tmp_path_factory.mktemp("svc") / "store", request)
    s = Server(store)
    yield s
    s.stop()


HAPPY: list[tuple[str, str, dict[str, Any], str]] = [
    ("GET", "/current", {"subject": "atlas", "as_of": "2025-06-01"}, "graphmem.current.v1"),
    ("GET", "/timeline", {"subject": "atlas", "predicate": "uses"}, "graphmem.timeline.v1"),
    ("GET", "/facts", {"predicate": "uses", "object": "kuzu"}, "graphmem.facts.v1"),
    ("GET", "/why", {"fact": "fact:100"}, "graphmem.why.v1"),
    ("GET", "/entity", {"ref": "kuzu"}, "graphmem.entity.v1"),
    ("GET", "/entities", {"type": "Tool"}, "graphmem.entities.v1"),
    ("GET", "/search", {"q": "tantivy", "limit": "3"}, "graphmem.search.v1"),
    ("GET", "/lint", {}, "graphmem.lint.v1"),
    ("GET", "/rebuild-check", {}, "graphmem.rebuild.v1"),
    ("GET", "/export", {"format": "jsonl"}, "graphmem.export.v1"),
    ("GET", "/recommend", {"idea": "graph database", "top": "2"}, "graphmem.recommend.v1"),
    ("GET", "/path", {"from": "quill", "to": "kuzu"}, "graphmem.path.v1"),
    ("GET", "/pack", {"q": "Atlas Kuzu", "budget_tokens": "300", "trace": "true"}, "graphmem.context-pack.v1"),
    ("POST", "/entities", {"type": "Tool", "name": "Valkey", "description": "A Redis fork."}, "graphmem.entity.v1"),
    ("POST", "/assert", {"subject": "ledger", "predicate": "uses", "object": "valkey", "valid_from": "2026-11-01"},
     "graphmem.assert.v1"),
    ("POST", "/end", {"subject": "ledger", "predicate": "uses", "object": "valkey", "at": "2026-11-20"},
     "graphmem.end.v1"),
    ("POST", "/extract", {"text": "Ledger is now paused.", "at": "2026-11-02"}, "graphmem.extract.v1"),
]


@pytest.mark.parametrize("method,path,params,schema", HAPPY, ids=[f"{m} {p}" for m, p, _, _ in HAPPY])
def test_endpoint_answers_with_the_cli_document(server: Server, method: str, path: str, params: dict[str, Any],
                                                schema: str) -> None:
    r = server.get(path, **params) if method == "GET" else server.post(path, params)
    assert r.status_code == 200, r.text
    assert r.json()["schema"].startswith(schema.rsplit(".", 1)[0])


def test_same_document_as_the_library(server: Server, demo: graphmem.Memory) -> None:
    got = server.get("/current", subject="atlas", as_of="2025-06-01", known_at="2026-01-01").json()
    want = demo.current("atlas", as_of="2025-06-01", known_at="2026-01-01").to_dict()
    assert got == want


def test_retract_import_ingest(server: Server) -> None:
    fact = server.post("/assert", {"subject": "ferry", "predicate": "uses", "object": "redis"}).json()["created"][0]
    assert server.post("/retract", {"fact": fact, "reason": "wrong"}).json()["schema"].startswith("graphmem.")
    assert fact in server.get("/why", fact=fact).text
    lines = "\n".join(json.dumps(x) for x in (
        {"op": "entity", "type": "Tool", "name": "Memcached"},
        {"op": "assert", "subject": "ferry", "predicate": "uses", "object": "tool:memcached",
         "valid_from": "2026-01-01"}))
    r = server.post("/import", content=lines.encode(), strict="true")
    assert r.status_code == 200 and r.json()["written"], r.text
    bad = server.post("/import", content=b'{"op": "assert"}\n', strict="true")
    assert bad.status_code == 200 and bad.json()["errors"] and not bad.json()["written"]
    rec = json.dumps({"id": "svc-1", "ts": "2026-11-01T09:00:00Z", "kind": "note", "text": "Ferry moved to Memcached."})
    assert server.post("/ingest", content=rec.encode()).json()["stored"]
    hits = server.get("/search", q="memcached").json()["results"]
    assert hits and hits[0]["snippet"].startswith("Ferry moved to Memcached")


@pytest.mark.parametrize("method,path,params,status,names", [
    ("GET", "/current", {}, 400, ["subject"]),
    ("GET", "/current", {"subject": "atlas", "bogus": "1"}, 400, ["bogus"]),
    ("GET", "/current", {"subject": "nobody"}, 404, ["nobody"]),
    ("GET", "/current", {"subject": "atlas", "as_of": "someday"}, 400, ["someday"]),
    ("GET", "/why", {"fact": "fact:99999"}, 404, ["fact:99999"]),
    ("GET", "/search", {"q": "kuzu", "limit": "many"}, 400, ["limit", "many"]),
    ("GET", "/pack", {"q": "!!!"}, 400, ["!!!"]),
    ("POST", "/assert", {"subject": "atlas", "predicate": "flies", "object": "x"}, 400, ["flies"]),
    ("POST", "/assert", {"subject": "atlas", "predicate": "uses"}, 400, ["object"]),
    ("POST", "/assert", ["not", "an", "object"], 400, ["JSON object"]),
])
def test_bad_input_is_one_line_json_error(server: Server, method: str, path: str, params: Any, status: int,
                                          names: list[str]) -> None:
    r = server.get(path, **params) if method == "GET" else server.post(path, params)
    assert r.status_code == status, r.text
    doc = r.json()
    assert doc["schema"] == "graphmem.error.v1" and doc["code"] and "\n" not in doc["message"]
    assert "Traceback" not in r.text
    for n in names:
        assert n in doc["message"]


@pytest.mark.parametrize("fail_on", ["bogus", "info"])
def test_lint_bad_fail_on_is_400_naming_the_valid_values(server: Server, fail_on: str) -> None:
    r = server.get("/lint", fail_on=fail_on)
    assert r.status_code == 400, r.text
    doc = r.json()
    assert doc["schema"] == "graphmem.error.v1" and doc["code"] == "BadInput"
    assert doc["message"] == f"bad fail_on {fail_on!r}: expected error or warning"
    ok = server.get("/lint", fail_on="warning")
    assert ok.status_code == 200 and ok.json()["fail_on"] == "warning"


def test_ingest_with_extract(server: Server) -> None:
    rec = json.dumps({"id": "svc-extract-1", "ts": "2026-11-03T09:00:00Z", "kind": "note",
                      "text": "Sextant is built on DuckDB."}).encode()
    r = server.post("/ingest", content=rec, extract="true")
    assert r.status_code == 200, r.text
    doc = r.json()
    assert list(doc)[-1] == "extraction" and doc["extraction"]["schema"] == "graphmem.extract.v1"
    assert doc["extraction"]["records"] == doc["records"] and doc["extraction"]["writes_performed"] is True
    plain = json.dumps({"id": "svc-extract-2", "ts": "2026-11-03T09:05:00Z", "kind": "note",
                        "text": "Harbor is built on DuckDB."}).encode()
    r2 = server.post("/ingest", content=plain)
    assert r2.status_code == 200 and r2.json()["stored"] == 1 and "extraction" not in r2.json()
    bad = server.post("/ingest", content=plain, extract="maybe")
    assert bad.status_code == 400 and "extract" in bad.json()["message"]


def test_not_json_and_not_utf8(server: Server) -> None:
    for body in (b"{nope", b"\xff\xfe"):
        r = server.post("/assert", content=body)
        assert r.status_code == 400 and r.json()["schema"] == "graphmem.error.v1"


def test_openapi_and_docs(server: Server) -> None:
    spec = server.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.") and {"/current", "/assert", "/pack", "/recommend"} <= set(spec["paths"])
    assert "required" in spec["paths"]["/assert"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "/openapi.json" in server.get("/docs").text
    health = server.get("/health").json()
    assert health["status"] == "ok" and health["entities"] >= 48


def test_parameters_from_the_operations_table(server: Server) -> None:
    """The names MCP uses are taken too (query for q); lint and entities can be cut to a code and a limit."""
    assert server.get("/search", query="tantivy").json() == server.get("/search", q="tantivy").json()
    pack = {"budget_tokens": "300", "as_of": "2026-11-20", "known_at": "2026-11-20"}
    assert server.get("/pack", query="Atlas Kuzu", **pack).json() == server.get("/pack", q="Atlas Kuzu", **pack).json()
    both = server.get("/search", q="tantivy", query="kuzu")
    assert both.status_code == 400 and both.json()["message"] == (
        "both 'q' and 'query' for /search: expected one of them (the same parameter)")
    full = server.get("/lint").json()
    cut = server.get("/lint", code="missing_source", limit="2").json()
    assert cut["counts"] == full["counts"] and full["counts"]["by_code"]["missing_source"] > 2
    assert cut["issues"] == [i for i in full["issues"] if i["code"] == "missing_source"][:2]
    tools = server.get("/entities", type="Tool").json()["entities"]
    assert server.get("/entities", type="Tool", limit="2").json()["entities"] == tools[:2]


def test_note_and_record_filters_over_http(server: Server) -> None:
    """POST /note stores one record (the same note again writes nothing); search and pack take the
    filters of the CLI, several values of one comma-separated."""
    first = server.post("/note", {"text": "Quokkafleet ships on Fridays.", "kind": "doc", "ts": "2026-03-02"}).json()
    assert first["schema"] == "graphmem.note.v1" and first["stored"] is True
    again = server.post("/note", {"text": "Quokkafleet ships on Fridays.", "kind": "doc", "ts": "2026-03-02"}).json()
    assert again["ref"] == first["ref"] and again["stored"] is False
    hit = server.get("/search", q="quokkafleet", kind="doc,note", since="2026-03-01").json()
    assert [r["ref"] for r in hit["results"]] == [first["ref"]] and hit["filters"]["kind"] == ["doc", "note"]
    assert server.get("/search", q="quokkafleet", kind="message").json()["results"] == []
    assert server.get("/search", q="quokkafleet", until="2026-03-01").json()["results"] == []
    packed = server.get("/pack", q="quokkafleet", kind="doc", known_at="2026-11-20").json()
    assert packed["meta"]["filters"]["kind"] == ["doc"]
    bad = server.get("/search", q="quokkafleet", since="2026-04-01", until="2026-03-01")
    assert bad.status_code == 400 and bad.json()["message"].startswith("bad ")


def test_openapi_describes_every_parameter(server: Server) -> None:
    spec = server.get("/openapi.json").json()
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            if path == "/health":
                continue
            assert op["operationId"] and op["summary"], (path, method)
            for p in op.get("parameters", []):
                assert p["description"], (path, method, p["name"])
            schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            for name, prop in schema.get("properties", {}).items():
                assert prop["description"], (path, method, name)
    search = {p["name"]: p for p in spec["paths"]["/search"]["get"]["parameters"]}
    assert search["limit"]["schema"] == {"type": "integer", "default": 10}
    lint = {p["name"]: p for p in spec["paths"]["/lint"]["get"]["parameters"]}
    assert lint["fail_on"]["schema"]["enum"] == ["error", "warning"]


@pytest.mark.engine("kuzu", "ladybug")  # the marker an embedded store's folder holds names its one server
@pytest.mark.parametrize("argv", [["rebuild"], ["migrate"], ["demo"], ["serve", "--port", "1"]], ids=lambda a: a[0])
def test_a_command_the_server_cannot_run_says_the_store_is_in_use_by_it(server: Server, argv: list[str]) -> None:
    """Commands with no endpoint keep the refusal (exit 3) and name the server (other commands go through
    it: tests/test_open.py)."""
    r = cli(server.store, *argv)
    line = one_clear_line(r, 3, ["in use by a graphmem server", f"pid {server.proc.pid}", server.url], expects=())
    assert "Traceback" not in line


def test_concurrent_clients_lose_nothing(server: Server) -> None:
    acked: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            for j in range(12):
                if j % 3 == 0:
                    r = c.post("/assert", json={"subject": "compass", "predicate": "relates_to",
                                                "object": ["concept:vector-search", "concept:local-first",
                                                           "concept:temporal-data"][(i + j) % 3],
                                                "valid_from": f"2026-0{1 + i % 9}-1{j % 10}"})
                    if r.status_code == 200:
                        with lock:
                            acked.append(r.json()["created"][0])
                    else:
                        errors.append(r.text)
                else:
                    r = c.get("/current" if j % 3 == 1 else "/search", params={"subject": "compass"} if j % 3 == 1
                              else {"q": "compass kuzu"})
                    if r.status_code != 200:
                        errors.append(r.text)

    lint_before = server.get("/lint").json()["counts"]
    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(acked) == 8 * 4
    for fact in acked:
        assert server.get("/why", fact=fact).status_code == 200
    assert server.get("/rebuild-check").json()["ok"]
    lint_after = server.get("/lint").json()["counts"]
    assert lint_after["error"] <= lint_before["error"]


def test_kill_9_after_an_acknowledged_write_loses_nothing(tmp_path: Path, demo_dir: Path,
                                                         request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    s = Server(store)
    r = s.post("/assert", {"subject": "ledger", "predicate": "status", "object": "active", "valid_from": "2026-11-20"})
    assert r.status_code == 200
    fact = r.json()["created"][0]
    s.stop(signal.SIGKILL)
    again = Server(store)  # the stale marker names a dead process: the store is free
    try:
        doc = again.get("/current", subject="ledger", predicate="status").json()
        assert [f["assertions"] for f in doc["facts"]] == [[fact]]
    finally:
        again.stop()
    assert TEST_ENGINE == "postgresql" or not (store / "server.json").exists()  # an embedded store's marker is gone
    with graphmem.open(store) as m:
        assert m.rebuild(check=True).ok


def test_kill_9_under_32_concurrent_writers_loses_no_acknowledged_write(tmp_path: Path, demo_dir: Path,
                                                                       request: pytest.FixtureRequest) -> None:
    """32 clients assert (and every fourth one notes) as fast as the server answers, their writes
    committed in groups; the server is killed with SIGKILL mid-stream; every write it acknowledged is
    in the store, as sent."""
    store = copy_demo(demo_dir, tmp_path / "store", request)
    s = Server(store)
    acked: dict[str, str] = {}  # fact ref -> the summary it was sent with
    errors: list[str] = []
    lock = threading.Lock()
    enough = threading.Event()

    def client(i: int) -> None:
        with httpx.Client(base_url=s.url, timeout=30) as c:
            for j in range(10_000):
                text = f"client {i} write {j}"
                try:
                    r = (c.post("/note", json={"text": text, "source": "test:kill"}) if i % 4 == 3 else
                         c.post("/assert", json={"subject": ["compass", "ledger", "atlas"][(i + j) % 3],
                                                 "predicate": "summary", "object": text}))
                except httpx.TransportError:
                    return  # the server is gone: this write was not acknowledged
                with lock:
                    if r.status_code != 200:
                        errors.append(r.text)
                        return
                    acked[r.json()["ref"] if i % 4 == 3 else r.json()["created"][0]] = text
                    if len(acked) >= 300:
                        enough.set()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    assert enough.wait(120)
    s.stop(signal.SIGKILL)
    for t in threads:
        t.join(60)
    assert not errors
    with graphmem.open(store) as m:
        assert_acked_kept(m, acked)
        assert m.rebuild(check=True).ok


def test_token_and_body_limit(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    s = Server(store, "--token", "s3cret", "--max-body-mb", "1")
    try:
        assert httpx.get(s.url + "/health").status_code == 401
        assert httpx.get(s.url + "/health", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = httpx.get(s.url + "/current", params={"subject": "atlas"}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        big = httpx.post(s.url + "/ingest", content=b"x" * (2 * 2**20), headers={
            "Authorization": "Bearer s3cret", "Content-Type": "application/x-ndjson"})
        assert big.status_code == 413 and big.json()["schema"] == "graphmem.error.v1"
    finally:
        s.stop()


def test_a_server_that_cannot_start_leaves_no_store(server: Server, tmp_path: Path,
                                                   new_store: Callable[[str], Path]) -> None:
    new = new_store("new/store")
    p = subprocess.run([sys.executable, "-c", MAIN, "--store", str(new), "serve", "--port", str(server.port)],
                       capture_output=True, text=True, timeout=120)  # the port is the running server's
    assert p.returncode != 0, p.stderr
    assert not (tmp_path / "new").exists()
    one_clear_line(cli(new, "info"), 3, [str(new)], ("graphmem init",))


def test_binding_beyond_loopback_needs_a_token(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_TOKEN", raising=False)
    one_clear_line(cli(store_path, "serve", "--host", "0.0.0.0"), 2, ["0.0.0.0", "token"])


def test_deeply_nested_body_is_bad_input(server: Server) -> None:
    deep = b'{"subject": "atlas", "predicate": "uses", "object": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    shallow_enough = {"subject": "atlas", "predicate": "uses", "object": json.loads("[" * 900 + "]" * 900)}
    for r in (server.post("/assert", content=deep), server.post("/assert", content=b"[" * 5000 + b"]" * 5000),
              server.post("/assert", shallow_enough),
              server.post("/assert", {"subject": "atlas", "predicate": "uses", "object": "kuzu",
                                      "sources": json.loads("[" * 900 + "]" * 900)})):
        assert r.status_code == 400, r.text
        doc = r.json()
        assert doc["schema"] == "graphmem.error.v1" and "expected" in doc["message"] and len(doc["message"]) < 300
    assert "nested too deeply" in server.post("/assert", content=deep).json()["message"]


def test_extract_text_beyond_the_bound_is_refused(server: Server) -> None:
    from graphmem.memory import EXTRACT_MAX_CHARS
    for text in ("Atlas uses wombatgrid. " * 50_000, "x" * (EXTRACT_MAX_CHARS + 1)):  # spaCy's own limit is 1,000,000
        for apply in (False, True):
            r = server.post("/extract", {"text": text, "apply": apply})
            assert r.status_code == 400, r.text
            msg = r.json()["message"]
            assert r.json()["schema"] == "graphmem.error.v1" and f"{len(text):,} characters" in msg
            assert f"expected at most {EXTRACT_MAX_CHARS:,}" in msg
    assert not server.get("/search", q="wombatgrid").json()["results"]  # apply stored nothing


def test_unknown_route_and_wrong_method_are_json(server: Server) -> None:
    for path in ("/nope", "/current/atlas", "/"):
        r = httpx.get(server.url + path)
        assert r.status_code == 404 and r.json()["schema"] == "graphmem.error.v1", r.text
        assert r.json()["code"] == "not_found" and "/openapi.json" in r.json()["message"]
    for method, path, allow in (("GET", "/assert", "POST"), ("DELETE", "/assert", "POST"),
                                ("PUT", "/entities", "GET, HEAD, POST"), ("POST", "/current", "GET, HEAD")):
        r = httpx.request(method, server.url + path, json={})
        assert r.status_code == 405 and r.headers["allow"] == allow, (method, path, r.headers, r.text)
        doc = r.json()
        assert doc["schema"] == "graphmem.error.v1" and doc["code"] == "method_not_allowed"
        assert method in doc["message"] and allow in doc["message"]


def test_lone_surrogate_is_bad_input(server: Server) -> None:
    body = b'{"subject": "atlas", "predicate": "summary", "object": "x\\ud800y"}'
    r = server.post("/assert", content=body)
    assert r.status_code == 400, r.text
    assert r.json()["schema"] == "graphmem.error.v1" and "Traceback" not in r.text


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00"])
def test_a_time_outside_the_calendar_is_bad_input(server: Server, when: str) -> None:
    before = server.get("/export").text
    r = server.post("/assert", {"subject": "ledger", "predicate": "summary", "object": "x", "valid_from": when})
    assert r.status_code == 400 and "9999" in r.json()["message"], r.text
    r = server.get("/current", subject="ledger", as_of=when)
    assert r.status_code == 400 and when in r.json()["message"], r.text
    assert server.get("/export").text == before


def test_writes_over_the_service_are_redacted(server: Server) -> None:
    secret = "https://admin:Hunter2pass@atlas.example.org/?api_key=sk-proj-abcdefghijklmnopqrstuvwx"
    r = server.post("/assert", {"subject": "ledger", "predicate": "summary", "object": f"see {secret}",
                                "sources": [secret]})
    assert r.status_code == 200, r.text
    fact = r.json()["created"][0]
    why = server.get("/why", fact=fact).text
    assert "Hunter2pass" not in why and "sk-proj-" not in why and "[REDACTED:url_password]" in why
    assert server.post("/retract", {"fact": fact, "reason": secret}).status_code == 200


# Cross-site requests: a page on another site may make the browser send a request to the
# loopback server, but not with our Host (DNS rebinding), Origin or a JSON Content-Type.

def _ledger_status(server: Server) -> Any:
    return server.get("/current", subject="ledger", predicate="status").json()["facts"]


def test_foreign_origin_is_refused(server: Server) -> None:
    before = _ledger_status(server)
    body = json.dumps({"subject": "ledger", "predicate": "status", "object": "archived"}).encode()
    for ctype in ("text/plain", "application/json"):
        r = httpx.post(server.url + "/assert", content=body, headers={"Origin": "http://evil.example",
                                                                     "Content-Type": ctype})
        assert r.status_code == 403, r.text
        assert r.json()["schema"] == "graphmem.error.v1" and r.json()["code"] == "forbidden_origin"
        assert "http://evil.example" in r.json()["message"] and "--allow-origin" in r.json()["message"]
    for origin in ("null", f"http://localhost:{server.port}", "http://127.0.0.1"):  # another site or port
        r = httpx.get(server.url + "/health", headers={"Origin": origin})
        assert r.status_code == 403 and r.json()["code"] == "forbidden_origin", (origin, r.text)
    assert _ledger_status(server) == before
    own = httpx.get(server.url + "/health", headers={"Origin": server.url})  # the server's own pages
    assert own.status_code == 200 and "access-control-allow-origin" not in own.headers


def test_foreign_host_is_refused(server: Server) -> None:
    body = {"subject": "ledger", "predicate": "status", "object": "archived"}
    before = _ledger_status(server)
    for host in (f"evil.example:{server.port}", "evil.example", f"127.0.0.1:{server.port + 1}", "localhost",
                 f"localhost.evil.example:{server.port}", "not a host"):
        for r in (httpx.get(server.url + "/health", headers={"Host": host}),
                  httpx.post(server.url + "/assert", json=body, headers={"Host": host})):
            assert r.status_code == 403, (host, r.text)
            doc = r.json()
            assert doc["schema"] == "graphmem.error.v1" and doc["code"] == "forbidden_host"
            assert f"127.0.0.1:{server.port}" in doc["message"] and "--allow-host" in doc["message"]
    assert _ledger_status(server) == before
    for host in (f"localhost:{server.port}", f"LOCALHOST:{server.port}", f"[::1]:{server.port}",
                 f"127.0.0.1:{server.port}"):
        assert httpx.get(server.url + "/health", headers={"Host": host}).status_code == 200, host
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:  # HTTP/1.0: no Host at all
        sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, payload = raw.partition(b"\r\n\r\n")
    assert head.split()[1] == b"403" and json.loads(payload)["code"] == "forbidden_host", raw


def test_post_needs_a_json_content_type(server: Server) -> None:
    before = _ledger_status(server)
    body = json.dumps({"subject": "ledger", "predicate": "status", "object": "archived"}).encode()
    for ctype in (None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                  "application/x-ndjson"):
        r = httpx.post(server.url + "/assert", content=body, headers={"Content-Type": ctype} if ctype else {})
        assert r.status_code == 415, (ctype, r.text)
        doc = r.json()
        assert doc["schema"] == "graphmem.error.v1" and doc["code"] == "unsupported_media_type"
        assert "expected application/json" in doc["message"] and "/assert" in doc["message"]
    rec = json.dumps({"text": "Ledger notes on the quokkafish migration.", "ts": "2026-11-03T09:00:00Z"}).encode()
    for ctype in (None, "text/plain", "application/octet-stream"):
        r = httpx.post(server.url + "/ingest", content=rec, headers={"Content-Type": ctype} if ctype else {})
        assert r.status_code == 415 and "application/x-ndjson" in r.json()["message"], (ctype, r.text)
    assert not server.get("/search", q="quokkafish").json()["results"]
    assert _ledger_status(server) == before
    for ctype in ("application/json", "application/x-ndjson; charset=utf-8", "application/jsonl"):
        r = httpx.post(server.url + "/ingest", content=rec, headers={"Content-Type": ctype})
        assert r.status_code == 200, (ctype, r.text)
    r = httpx.post(server.url + "/entities", content=json.dumps({"type": "Tool", "name": "Dragonfly"}).encode(),
                   headers={"Content-Type": "Application/JSON; charset=utf-8"})
    assert r.status_code == 200, r.text


def test_allow_host_and_allow_origin(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    app = "http://localhost:3000"
    s = Server(store, "--allow-host", "graphmem.test", "--allow-host", "other.test:9",
               "--allow-origin", app + "/")
    try:
        assert httpx.get(s.url + "/health", headers={"Host": "graphmem.test"}).status_code == 200
        assert httpx.get(s.url + "/health", headers={"Host": "graphmem.test:1234"}).status_code == 200
        assert httpx.get(s.url + "/health", headers={"Host": "other.test:9"}).status_code == 200
        assert httpx.get(s.url + "/health", headers={"Host": "other.test:10"}).status_code == 403
        assert httpx.get(s.url + "/health", headers={"Host": "evil.example"}).status_code == 403
        pre = httpx.options(s.url + "/assert", headers={"Origin": app, "Access-Control-Request-Method": "POST",
                                                        "Access-Control-Request-Headers": "content-type"})
        assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == app, pre.text
        r = httpx.post(s.url + "/assert", json={"subject": "ledger", "predicate": "status", "object": "active"},
                       headers={"Origin": app})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == app, r.text
        evil = httpx.options(s.url + "/assert", headers={"Origin": "http://evil.example",
                                                         "Access-Control-Request-Method": "POST"})
        assert evil.status_code == 403 and "access-control-allow-origin" not in evil.headers
        assert httpx.post(s.url + "/assert", content=b"{}", headers={"Origin": app, "Content-Type": "text/plain"}
                          ).status_code == 415
    finally:
        s.stop()


@pytest.mark.parametrize("args,names", [
    (["--allow-origin", "localhost:3000"], ["--allow-origin", "localhost:3000"]),
    (["--allow-origin", "http://x.example/app"], ["http://x.example/app"]),
    (["--allow-host", "a/b"], ["--allow-host", "a/b"]),
])
def test_bad_allow_options(store_path: Path, args: list[str], names: list[str]) -> None:
    one_clear_line(cli(store_path, "serve", *args), 2, names)


def test_lint_code_and_limit_over_http(server: Server) -> None:
    full = server.get("/lint").json()
    code = full["summary"][0]["code"]
    r = server.get("/lint", code=code, limit=1)
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["codes"] == [code] and d["limit"] == 1 and len(d["issues"]) == 1
    assert d["matched"] == full["summary"][0]["count"] and d["more"] == d["matched"] - 1
    bad = server.get("/lint", code="nope")
    assert bad.status_code == 400 and bad.json()["message"].startswith("unknown lint code 'nope': expected one of ")


def test_cite_over_http(server: Server) -> None:
    """POST /cite attaches a source to what an assertion says, as a statement of its own; why shows it."""
    fact = server.post("/assert", {"subject": "ferry", "predicate": "uses", "object": "redis"}).json()["created"][0]
    r = server.post("/cite", {"fact": fact, "sources": ["https://example.org/ferry-cache"], "note": "design doc"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["schema"] == "graphmem.cite.v1" and doc["fact"]["asserted_by"] == "agent"
    why = server.get("/why", fact=fact).json()
    assert [s["ref"] for s in why["sources"]] == ["https://example.org/ferry-cache"]
    again = server.post("/cite", {"fact": fact, "sources": ["https://example.org/ferry-cache"]})
    assert again.status_code == 400 and again.json()["schema"] == "graphmem.error.v1"


def test_entity_upkeep_over_http(server: Server) -> None:
    """Rename, aliases, merge and unmerge, as the CLI's entity commands, each one recorded write."""
    r = server.post("/entities/rename", {"ref": "sextant", "name": "Sextant Two"}).json()
    assert r["schema"] == "graphmem.entity-rename.v1", r
    assert server.get("/entity", ref="Sextant Two").json()["entity"]["ref"] == "project:sextant"
    assert server.post("/entities/aliases", {"ref": "project:sextant", "aliases": ["sx2"]}).json()["schema"] == (
        "graphmem.entity-alias-add.v1")
    assert server.get("/entity", ref="sx2").json()["entity"]["ref"] == "project:sextant"
    gone = server.post("/entities/aliases/remove", {"ref": "project:sextant", "aliases": ["sx2"]}).json()
    assert gone["schema"] == "graphmem.entity-alias-remove.v1"
    assert server.get("/entity", ref="sx2").status_code == 404
    merged = server.post("/entities/merge", {"into": "lighthouse", "merged": "project:sextant"}).json()
    assert merged["schema"] == "graphmem.entity-merge.v1", merged
    assert server.get("/entity", ref="project:sextant").json()["merged_into"] == "project:lighthouse"
    assert server.get("/current", subject="project:sextant").json()["subject"]["ref"] == "project:lighthouse"
    back = server.post("/entities/unmerge", {"merged": "project:sextant"}).json()
    assert back["schema"] == "graphmem.entity-unmerge.v1", back
    assert server.get("/entity", ref="project:sextant").json()["merged_into"] is None
    bad = server.post("/entities/merge", {"into": "lighthouse", "merged": "lighthouse"})
    assert bad.status_code == 400 and bad.json()["schema"] == "graphmem.error.v1"


def test_post_entities_adds_aliases_to_an_existing_entity(server: Server) -> None:
    """What the endpoint's description says: an existing entity (same type and name) gains the aliases it lacks."""
    r = server.post("/entities", {"type": "Tool", "name": "kuzu", "aliases": ["kuzu-embedded"]})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["created"] == [] and doc["updated"] == ["tool:kuzu"] and "kuzu-embedded" in doc["entity"]["aliases"]
    assert server.get("/entity", ref="kuzu-embedded").json()["entity"]["ref"] == "tool:kuzu"
    again = server.post("/entities", {"type": "Tool", "name": "Kuzu", "aliases": ["kuzu-embedded"]})
    assert again.status_code == 400 and "already exists" in again.json()["message"]
