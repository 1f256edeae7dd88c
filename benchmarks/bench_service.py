#!/usr/bin/env python3
"""The service under load, beside the same calls in-process (bounded, loopback only).

    python benchmarks/bench_service.py [--scale 100000] [--root bench-stores] [--requests 300]

A copy of the benchstore store at ``--scale`` is served by ``graphmem serve`` on a
free loopback port (a subprocess); 1, 8 and 32 client threads (one HTTP
connection each) send ``--requests`` requests in all per operation: ``current``
of a random subject, ``search`` of a random entity name, and ``assert`` of a
status. Reported: requests/s and p50/p99 latency per operation and concurrency,
then the same calls in-process on the same store (after the server stops), and
the ratio of server to in-process p50 at 1 client; then asserts 32 to a
``write_group`` (what the service's group commit does with 32 writers) beside
raw Kuzu doing the same reads and writes 32 to a transaction, per assert.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import pct  # noqa: E402
from benchstore import _names, ensure  # noqa: E402

MAIN = "from graphmem.cli import main; main()"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def calls(n_entities: int, seed: int) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    rng = random.Random(seed)
    names = _names(n_entities)
    projects = [f"project:{n.lower().replace(' ', '-')}" for n in names["Project"]]
    statuses = ["active", "paused", "done"]
    return {
        "current": [("GET", "/current", {"subject": rng.choice(projects)}) for _ in range(2000)],
        "search": [("GET", "/search", {"q": rng.choice(names["Tool"]), "limit": "10"}) for _ in range(2000)],
        "assert": [("POST", "/assert", {"subject": rng.choice(projects), "predicate": "status",
                                        "object": rng.choice(statuses)}) for _ in range(2000)],
    }


def load(url: str, work: list[tuple[str, str, dict[str, Any]]], clients: int) -> dict[str, Any]:
    import httpx
    lat: list[float] = []
    lock = threading.Lock()
    bad = [0]
    it = iter(work)

    def run() -> None:
        with httpx.Client(base_url=url, timeout=120) as c:
            while True:
                with lock:
                    job = next(it, None)
                if job is None:
                    return
                method, path, params = job
                t = time.perf_counter()
                r = c.get(path, params=params) if method == "GET" else c.post(path, json=params)
                dt = (time.perf_counter() - t) * 1000
                with lock:
                    lat.append(dt)
                    bad[0] += r.status_code != 200

    threads = [threading.Thread(target=run) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"clients": clients, "n": len(lat), "errors": bad[0], "rps": len(lat) / wall, "p50_ms": pct(lat, 50),
            "p99_ms": pct(lat, 99)}


def in_process(store: Path, work: dict[str, list[tuple[str, str, dict[str, Any]]]], n: int) -> dict[str, Any]:
    import graphmem
    out = {}
    with graphmem.open(store) as m:
        fns = {"current": lambda p: m.current(p["subject"]).to_dict(),
               "search": lambda p: m.search(p["q"], limit=10).to_dict(),
               "assert": lambda p: m.assert_(p["subject"], p["predicate"], p["object"], by="agent").to_dict()}
        for op, jobs in work.items():
            lat = []
            for _, _, params in jobs[-n:]:
                t = time.perf_counter()
                fns[op](params)
                lat.append((time.perf_counter() - t) * 1000)
            out[op] = {"n": len(lat), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}
        # what group commit does with 32 concurrent asserts: one transaction, one commit (per assert)
        jobs = work["assert"][-n:]
        lat = []
        for k in range(0, len(jobs) - GROUP + 1, GROUP):
            t = time.perf_counter()
            with m.write_group():
                for _, _, params in jobs[k:k + GROUP]:
                    fns["assert"](params)
            lat.append((time.perf_counter() - t) * 1000 / GROUP)
        out["assert_grouped"] = {"n": len(lat) * GROUP, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}
        next_id = m.store.next_fact_id()
    out["raw_grouped"] = raw_grouped(store, jobs, next_id)
    return out


GROUP = 32
RAW_CREATE = ("CREATE (:Assertion {id: $id, op: 'assert', subject: $s, predicate: 'status', object: $o, "
              "object_type: 'string', valid_from: $t, recorded_at: $t, sources: '[]', asserted_by: 'agent', "
              "trust: 'low'})")


def raw_grouped(store: Path, jobs: list[tuple[str, str, dict[str, Any]]], next_id: int) -> dict[str, Any]:
    """The raw Kuzu floor under a group of asserts: per assert, the subject's entity and row read, a
    statement created and the row written back, GROUP asserts in one transaction (per assert)."""
    import warnings

    import kuzu
    warnings.simplefilter("ignore", DeprecationWarning)  # prepared plans, as graphmem keeps them
    conn = kuzu.Connection(kuzu.Database(str(store / "graph.kuzu")))
    ps = {q: conn.prepare(q) for q in (
        "MATCH (e:Project {ref: $r}) RETURN e.name", "MATCH (s:Subject {ref: $r}) RETURN s.name, s.log, s.view",
        RAW_CREATE, "MERGE (s:Subject {ref: $r}) SET s.name = $n, s.log = $l, s.view = $v")}
    entity, read, create, write = ps.values()
    lat = []
    for k in range(0, len(jobs) - GROUP + 1, GROUP):
        t = time.perf_counter()
        conn.execute("BEGIN TRANSACTION")
        for _, _, p in jobs[k:k + GROUP]:
            conn.execute(entity, {"r": p["subject"]}).get_all()
            name, log, view = conn.execute(read, {"r": p["subject"]}).get_all()[0]
            us = int(time.time() * 1e6)
            conn.execute(create, {"id": next_id, "s": p["subject"], "o": p["object"], "t": us})
            conn.execute(write, {"r": p["subject"], "n": name, "l": log, "v": view})
            next_id += 1
        conn.execute("COMMIT")
        lat.append((time.perf_counter() - t) * 1000 / GROUP)
    return {"n": len(lat) * GROUP, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}


def main(argv: list[str] | None = None) -> None:
    import httpx
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=100_000)
    ap.add_argument("--root", default="bench-stores")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--requests", type=int, default=300, help="requests per operation and concurrency")
    ap.add_argument("--out", default="bench-results")
    a = ap.parse_args(argv)
    src = ensure(Path(a.root), a.scale, a.seed)
    info = json.loads((src / ".benchstore.json").read_text())
    work = calls(info["entities"], a.seed)
    res: dict[str, Any] = {"scale": a.scale, "server": {}}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(src, store)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", str(store), "serve", "--port", str(port)],
                                stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    httpx.get(url + "/health", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            pos = 0
            for op, jobs in work.items():
                res["server"][op] = []
                for clients in (1, 8, 32):
                    chunk = jobs[pos % len(jobs):][:a.requests]
                    pos += a.requests
                    res["server"][op].append(load(url, chunk, clients))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        res["in_process"] = in_process(store, work, a.requests)
    res["ratio_p50_1_client"] = {op: res["server"][op][0]["p50_ms"] / res["in_process"][op]["p50_ms"] for op in work}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"bench-service-{a.scale}.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"service on the {a.scale:,} store ({info['entities']:,} entities, {info['records']:,} records)")
    print(f"{'op':<9}{'clients':>8}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    for op, rows in res["server"].items():
        for r in rows:
            print(f"{op:<9}{r['clients']:>8}{r['rps']:>9.1f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['errors']:>8}")
        ip = res["in_process"][op]
        print(f"{op:<9}{'in-proc':>8}{'':>9}{ip['p50_ms']:>9.2f}{ip['p99_ms']:>9.2f}"
              f"   server/in-process p50 at 1 client: {res['ratio_p50_1_client'][op]:.1f}x")
    g, raw = res["in_process"]["assert_grouped"], res["in_process"]["raw_grouped"]
    print(f"assert, {GROUP} in one write_group, per assert: p50 {g['p50_ms']:.2f} ms, p99 {g['p99_ms']:.2f} ms; "
          f"raw Kuzu, the same reads and writes {GROUP} to a transaction: p50 {raw['p50_ms']:.2f} ms, "
          f"p99 {raw['p99_ms']:.2f} ms ({g['p50_ms'] / raw['p50_ms']:.1f}x)")


if __name__ == "__main__":
    main()
