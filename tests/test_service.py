"""graphmem serve, through a real uvicorn in a subprocess on a free loopback port."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import cli, one_clear_line

import graphmem

MAIN = "from graphmem.cli import main; main()"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, store: Path, *args: str) -> None:
        self.store = store
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_TOKEN"}
        self.proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", str(store), "serve", "--port",
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

    def post(self, path: str, body: Any = None, content: bytes | None = None, **params: Any) -> httpx.Response:
        if content is not None:
            return httpx.post(self.url + path, content=content, params=params, timeout=60)
        return httpx.post(self.url + path, json=body, timeout=60)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=30)
        finally:
            for f in (self.proc.stdout, self.proc.stderr):
                if f:
                    f.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Iterator[Server]:
    store = tmp_path_factory.mktemp("svc") / "store"
    shutil.copytree(demo_dir, store)
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


def test_same_document_as_the_library(server: Server, demo_dir: Path) -> None:
    got = server.get("/current", subject="atlas", as_of="2025-06-01", known_at="2026-01-01").json()
    with graphmem.open(demo_dir) as m:
        want = m.current("atlas", as_of="2025-06-01", known_at="2026-01-01").to_json()
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


def test_cli_says_the_store_is_in_use_by_the_server(server: Server) -> None:
    r = cli(server.store, "current", "atlas")
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


def test_kill_9_after_an_acknowledged_write_loses_nothing(tmp_path: Path, demo_dir: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_dir, store)
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
    assert not (store / "server.json").exists()
    with graphmem.open(store) as m:
        assert m.rebuild(check=True).ok


def test_token_and_body_limit(tmp_path: Path, demo_dir: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_dir, store)
    s = Server(store, "--token", "s3cret", "--max-body-mb", "1")
    try:
        assert httpx.get(s.url + "/health").status_code == 401
        assert httpx.get(s.url + "/health", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = httpx.get(s.url + "/current", params={"subject": "atlas"}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        big = httpx.post(s.url + "/ingest", content=b"x" * (2 * 2**20), headers={"Authorization": "Bearer s3cret"})
        assert big.status_code == 413 and big.json()["schema"] == "graphmem.error.v1"
    finally:
        s.stop()


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_TOKEN", raising=False)
    one_clear_line(cli(tmp_path / "s", "serve", "--host", "0.0.0.0"), 2, ["0.0.0.0", "token"])
