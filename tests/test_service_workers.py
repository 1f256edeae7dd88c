"""``graphmem serve --workers N`` on a PostgreSQL store: several worker processes share one port and
one database; they answer as one process on Kuzu does; a worker killed with SIGKILL under concurrent
writers loses no acknowledged write and another takes its place. On Kuzu, ``--workers`` above 1 is
refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from helpers import assert_acked_kept, cli, one_clear_line
from test_service import MAIN, Server, free_port

import graphmem
from graphmem.demo import load_example
from tests.pg import pg_cluster, pg_url  # noqa: F401  (fixtures)


def _demo(store: str | Path) -> None:
    with graphmem.open(store, create=True) as m:
        load_example(m)


def _workers(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _shape(doc: object) -> object:
    """The answer without what differs by store (times, refs, paths)."""
    if isinstance(doc, dict):
        return {k: _shape(v) for k, v in doc.items() if k not in ("recorded_at", "ref", "id", "store", "engine",
                                                                   "created", "record", "records", "tx", "as_of", "known_at",
                                                                   "valid_from", "recorded", "asserted_at")}
    if isinstance(doc, list):
        return [_shape(v) for v in doc]
    return doc


@pytest.mark.folder_store("compares PostgreSQL's workers with one process on an embedded store")
def test_workers_on_postgresql_answer_like_one_kuzu_process(pg_url: str, tmp_path: Path) -> None:  # noqa: F811
    kuzu = tmp_path / "kuzu"
    _demo(kuzu)
    _demo(pg_url)
    k, p = Server(kuzu), Server(pg_url, "--workers", "3")  # type: ignore[arg-type]
    try:
        assert len(_workers(p.proc.pid)) == 3
        for path, params in (("/current", {"subject": "atlas"}), ("/entities", {}), ("/timeline", {"subject": "atlas"})):
            a, b = k.get(path, **params), p.get(path, **params)
            assert a.status_code == b.status_code == 200, (path, a.text, b.text)
            assert _shape(a.json()) == _shape(b.json()), path
        for s in (k, p):
            r = s.post("/assert", {"subject": "atlas", "predicate": "summary", "object": "served by workers"})
            assert r.status_code == 200, r.text
        for _ in range(6):  # every worker sees the write another made
            b = p.get("/current", subject="atlas")
            assert b.status_code == 200 and "served by workers" in b.text
            assert _shape(k.get("/current", subject="atlas").json()) == _shape(b.json())
        bad = p.post("/assert", {"subject": "atlas"})
        assert bad.status_code == k.post("/assert", {"subject": "atlas"}).status_code == 400
    finally:
        k.stop()
        assert p.stop() == 0
    assert not _workers(p.proc.pid)


def test_kill_9_of_a_worker_under_concurrent_writers_loses_no_acknowledged_write(pg_url: str) -> None:  # noqa: F811
    """16 clients assert (every fourth notes) through 4 workers; one worker is killed with SIGKILL
    mid-stream, then another; the clients whose connection died reconnect; every acknowledged write is
    in the database, as sent, and the server keeps serving with 4 workers."""
    _demo(pg_url)
    s = Server(pg_url, "--workers", "4")  # type: ignore[arg-type]
    acked: dict[str, str] = {}
    errors: list[str] = []
    lost = [0]
    lock = threading.Lock()
    enough, done = threading.Event(), threading.Event()

    def client(i: int) -> None:
        j = 0
        while not done.is_set():
            with httpx.Client(base_url=s.url, timeout=30) as c:
                while not done.is_set():
                    j += 1
                    text = f"client {i} write {j}"
                    try:
                        r = (c.post("/note", json={"text": text, "source": "test:kill"}) if i % 4 == 3 else
                             c.post("/assert", json={"subject": ["compass", "ledger", "atlas"][(i + j) % 3],
                                                     "predicate": "summary", "object": text}))
                    except httpx.TransportError:
                        with lock:
                            lost[0] += 1  # its worker was killed: this write was not acknowledged
                        break  # a new connection goes to a live worker
                    with lock:
                        if r.status_code != 200:
                            errors.append(r.text)
                            done.set()
                            return
                        acked[r.json()["ref"] if i % 4 == 3 else r.json()["created"][0]] = text
                        if len(acked) >= 200:
                            enough.set()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
    try:
        for t in threads:
            t.start()
        assert enough.wait(120)
        for _ in range(2):
            victim = _workers(s.proc.pid)[0]
            os.kill(victim, signal.SIGKILL)
            n = len(acked)
            deadline = time.monotonic() + 60
            while len(acked) < n + 100 and time.monotonic() < deadline and not errors:
                time.sleep(0.05)  # the others keep serving
            assert len(acked) >= n + 100, "the surviving workers stopped answering"
        done.set()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]
        deadline = time.monotonic() + 30
        while len(_workers(s.proc.pid)) != 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_workers(s.proc.pid)) == 4  # the killed ones were replaced
        assert s.get("/health").status_code == 200
    finally:
        done.set()
        assert s.stop() == 0
    with graphmem.open(pg_url) as m:
        assert_acked_kept(m, acked)


@pytest.mark.engine("kuzu", "ladybug")  # an embedded store's one-process limit, and its folder's server.json
def test_workers_above_one_are_refused_on_kuzu(tmp_path: Path, demo_dir: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(demo_dir, store)
    r = cli(store, "serve", "--port", str(free_port()), "--workers", "4")
    engine = "ladybug" if (store / "graph.lbug").exists() else "kuzu"  # the embedded engine of the run's demo
    one_clear_line(r, 2, ["--workers 4", f"{engine} store"], ("expected 1",))
    assert not (store / "server.json").exists()
    p = subprocess.run([sys.executable, "-c", MAIN, "--store", str(store), "serve", "--workers", "0"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "bad --workers 0: expected 1 to 64" in p.stderr and "Traceback" not in p.stderr


def test_workers_require_the_token(pg_url: str) -> None:  # noqa: F811
    """Every worker checks the token; a PostgreSQL store has no folder, so no marker is written."""
    _demo(pg_url)
    s = Server(pg_url, "--workers", "2", "--token", "s3cret")  # type: ignore[arg-type]
    try:
        for _ in range(6):  # new connections, spread over both workers
            assert httpx.get(s.url + "/current", params={"subject": "atlas"}).status_code == 401
            ok = httpx.get(s.url + "/current", params={"subject": "atlas"}, headers={"Authorization": "Bearer s3cret"})
            assert ok.status_code == 200 and ok.json()["subject"]
    finally:
        assert s.stop() == 0


def test_ctrl_c_stops_every_worker_cleanly(pg_url: str) -> None:  # noqa: F811
    """A terminal's Ctrl-C sends SIGINT to the whole foreground process group (the parent and every
    worker at once) while clients hold keep-alive connections: every worker ends, the server exits 0
    with no traceback, no process of the group is left, the port can be bound again, and every write
    acknowledged before is kept. (With a database call in flight at the signal a worker sometimes waits
    out uvicorn's 30 s graceful limit: docs/service.md, "Known issue"; not tested here.)"""
    import socket

    from test_service import free_port
    _demo(pg_url)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_TOKEN"}
    proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", pg_url, "serve", "--port", str(port), "--workers",
                             "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while len(_workers(proc.pid)) < 3 or not _answers(url):
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        acked: list[str] = []
        stop, done = threading.Event(), threading.Event()

        with httpx.Client(base_url=url, timeout=30) as c:
            for j in range(20):
                r = c.post("/assert", json={"subject": "atlas", "predicate": "summary", "object": f"write {j}"})
                assert r.status_code == 200, r.text
                acked.append(r.json()["created"][0])
        reads = [0]

        def client(i: int) -> None:
            with httpx.Client(base_url=url, timeout=30) as c:
                while not stop.is_set():
                    try:
                        r = c.get("/current", params={"subject": "atlas"}) if i % 2 else c.get("/search",
                                                                                              params={"q": "kuzu"})
                    except httpx.TransportError:
                        return  # the server is stopping
                    assert r.status_code == 200, r.text
                    reads[0] += 1
                done.wait(60)  # the connection stays open (keep-alive) until the server closes

        threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        while reads[0] < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()  # the clients keep their connections open, idle
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        code = proc.wait(timeout=60)
        done.set()
        for t in threads:
            t.join(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 0, err
    assert "Traceback" not in err and err.strip().splitlines() == [err.strip().splitlines()[0]], err
    left = subprocess.run(["ps", "-o", "pid=", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert not left, f"processes left in the server's group: {left}"
    with socket.socket() as s:  # nothing listens on the port any more (a new server binds it)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
    assert len(acked) == 20 and reads[0] >= 30
    with graphmem.open(pg_url) as m:
        for ref in acked:
            assert m.store.statement(int(ref.split(":")[1])) is not None, ref


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_ctrl_c_while_the_workers_start_leaves_no_worker(pg_url: str) -> None:  # noqa: F811
    """Ctrl-C at moments while the workers are being forked and are opening the store: the server still
    ends, with every worker, within the time allowed, and prints no traceback (exit 0, or 130 when the
    signal comes before the workers are started: docs/service.md)."""
    _demo(pg_url)
    from test_service import free_port
    for delay in (0.0, 0.05, 0.15, 0.3, 0.6):
        proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", pg_url, "serve", "--port", str(free_port()),
                                 "--workers", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            assert proc.stderr is not None and "serving" in proc.stderr.readline().decode()  # printed before the fork
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGINT)
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        err = proc.stderr.read().decode()
        assert code in (0, 130) and "Traceback" not in err, (delay, code, err)
        left = subprocess.run(["ps", "-o", "pid=", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert not left, (delay, left)
