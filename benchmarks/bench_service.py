#!/usr/bin/env python3
"""The service under load, beside the same calls in-process (bounded, loopback only).

    python benchmarks/bench_service.py [--scale 100000] [--root bench-stores] [--requests 300]
        [--ops noop current search assert] [--clients 1 8 32] [--no-in-process] [--warm]

A copy of the benchstore store at ``--scale`` is served by ``graphmem serve`` on a
free loopback port (a subprocess). The load comes from this process: 1, 8 and 32
keep-alive connections driven by one asyncio loop with raw HTTP/1.1 (the requests'
bytes made before the clock starts, so the client costs as little CPU as it can:
about 0.05 ms a request), ``--requests`` requests in all per operation: ``noop``
(a path that is no endpoint, answered 404: what a request costs with no work),
``current`` of a random subject, ``search`` of a random entity name, and
``assert`` of a status. Reported: requests/s and p50/p99 latency per operation and
concurrency, with the CPU seconds per 1,000 requests of the server (its process,
all threads) and of the client, so a figure says what the server needs whoever
shares its cores (counted in clock ticks of 10 ms: use ``--requests 1000`` or
more for steady CPU figures); then the same calls in-process on the same store (after the
server stops), and the ratio of server to in-process p50 at 1 client; then asserts
32 to a ``write_group`` (what the service's group commit does with 32 writers),
wall and CPU per assert, beside raw Kuzu doing the same reads and writes 32 to a
transaction, batched as graphmem batches them and a query each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

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


def _request(method: str, path: str, params: dict[str, Any], port: int) -> bytes:
    """The bytes of one HTTP/1.1 request, made before the clock starts (the client should cost little)."""
    head = f"Host: 127.0.0.1:{port}\r\n"
    if method == "GET":
        return f"GET {path}?{urlencode(params)} HTTP/1.1\r\n{head}\r\n".encode()
    body = json.dumps(params).encode()
    return (f"POST {path} HTTP/1.1\r\n{head}Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            .encode() + body)


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far, all its threads (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(url: str, work: list[tuple[str, str, dict[str, Any]]], clients: int, server_pid: int | None = None
         ) -> dict[str, Any]:
    """``clients`` keep-alive connections from one asyncio loop, raw HTTP/1.1 (requests made beforehand), each
    sending its next request when the last is answered. Reported beside the rate and latency: the CPU
    seconds per 1,000 requests of the server (``server_pid``) and of this client."""
    port = int(url.rsplit(":", 1)[1])
    reqs = [_request(m, path, p, port) for m, path, p in work]
    lat: list[float] = []
    statuses: list[int] = []

    async def client(it: Iterator[bytes]) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        clock = time.perf_counter
        try:
            for req in it:
                t = clock()
                writer.write(req)
                head = await reader.readuntil(b"\r\n\r\n")
                i = head.lower().find(b"content-length:")
                n = int(head[i + 15:head.index(b"\r\n", i)])
                await reader.readexactly(n)
                lat.append((clock() - t) * 1000)
                statuses.append(int(head[9:12]))
        finally:
            writer.close()

    async def run() -> float:
        it = iter(reqs)  # shared: each connection takes the next request when it is free
        t0 = time.perf_counter()
        await asyncio.gather(*(client(it) for _ in range(clients)))
        return time.perf_counter() - t0

    c0, s0 = os.times(), cpu_seconds(server_pid) if server_pid else 0.0
    wall = asyncio.run(run())
    c1, s1 = os.times(), cpu_seconds(server_pid) if server_pid else 0.0
    n = len(lat)
    out = {"clients": clients, "n": n, "errors": sum(s != 200 for s in statuses), "rps": n / wall,
           "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
           "client_cpu_s_per_1000": (c1.user - c0.user + c1.system - c0.system) * 1000 / n}
    if server_pid:
        out["server_cpu_s_per_1000"] = (s1 - s0) * 1000 / n
    return out


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
        if "assert" not in work:
            return out
        # what group commit does with 32 concurrent asserts: one transaction, one commit (per assert)
        jobs = work["assert"][-n:]
        lat, cpu = [], []
        for k in range(0, len(jobs) - GROUP + 1, GROUP):
            t, c = time.perf_counter(), time.process_time()
            with m.write_group():
                for _, _, params in jobs[k:k + GROUP]:
                    fns["assert"](params)
            lat.append((time.perf_counter() - t) * 1000 / GROUP)
            cpu.append((time.process_time() - c) * 1000 / GROUP)
        out["assert_grouped"] = {"n": len(lat) * GROUP, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
                                 "cpu_ms": sum(cpu) / len(cpu)}
        next_id = m.store.next_fact_id()
    out["raw_grouped"] = raw_grouped(store, jobs, next_id + 10_000, batched=True)
    out["raw_grouped_per_row"] = raw_grouped(store, jobs, next_id + 20_000, batched=False)
    return out


GROUP = 32
RAW_CREATE = ("CREATE (:Assertion {id: $id, op: 'assert', subject: $s, predicate: 'status', object: $o, "
              "object_type: 'string', valid_from: $t, recorded_at: $t, sources: '[]', asserted_by: 'agent', "
              "trust: 'low'})")
RAW_CREATES = ("UNWIND $rows AS x CREATE (:Assertion {id: x.id, op: 'assert', subject: x.s, predicate: 'status', "
               "object: x.o, object_type: 'string', valid_from: x.t, recorded_at: x.t, sources: '[]', "
               "asserted_by: 'agent', trust: 'low'})")
RAW_WRITE = "MERGE (s:Subject {ref: $r}) SET s.name = $n, s.log = $l, s.view = $v"
RAW_WRITES = ("UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
              "SET s.name = $n[i], s.log = $l[i], s.view = $v[i]")


def raw_grouped(store: Path, jobs: list[tuple[str, str, dict[str, Any]]], next_id: int, batched: bool
                ) -> dict[str, Any]:
    """The raw Kuzu floor under a group of asserts, GROUP of them in one transaction (per assert, wall
    and CPU): each assert's entity and subject row read; then a statement created and the row written
    back for each (``batched``: all the group's statements in one query, all its rows in another, as
    graphmem writes them)."""
    import warnings

    import kuzu
    warnings.simplefilter("ignore", DeprecationWarning)  # prepared plans, as graphmem keeps them
    conn = kuzu.Connection(kuzu.Database(str(store / "graph.kuzu")))
    ps = {q: conn.prepare(q) for q in (
        "MATCH (e:Project {ref: $r}) RETURN e.name", "MATCH (s:Subject {ref: $r}) RETURN s.name, s.log, s.view",
        RAW_CREATE, RAW_WRITE, RAW_CREATES, RAW_WRITES)}
    entity, read, create, write, creates, writes = ps.values()
    lat, cpu = [], []
    for k in range(0, len(jobs) - GROUP + 1, GROUP):
        t, c = time.perf_counter(), time.process_time()
        conn.execute("BEGIN TRANSACTION")
        new, rows = [], []
        for _, _, p in jobs[k:k + GROUP]:
            conn.execute(entity, {"r": p["subject"]}).get_all()
            name, log, view = conn.execute(read, {"r": p["subject"]}).get_all()[0]
            us = int(time.time() * 1e6)
            if batched:
                new.append({"id": next_id, "s": p["subject"], "o": p["object"], "t": us})
                rows.append({"r": p["subject"], "n": name, "l": log, "v": view})
            else:
                conn.execute(create, {"id": next_id, "s": p["subject"], "o": p["object"], "t": us})
                conn.execute(write, {"r": p["subject"], "n": name, "l": log, "v": view})
            next_id += 1
        if batched:
            conn.execute(creates, {"rows": new})
            conn.execute(writes, {"refs": [r["r"] for r in rows], **{k: [r[k] for r in rows] + [""] for k in "nlv"}})
        conn.execute("COMMIT")
        lat.append((time.perf_counter() - t) * 1000 / GROUP)
        cpu.append((time.process_time() - c) * 1000 / GROUP)
    return {"n": len(lat) * GROUP, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "cpu_ms": sum(cpu) / len(cpu)}


def serve(store: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``graphmem serve`` on the store, on a free loopback port, once it answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", str(store), "serve", "--port", str(port)],
                            stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=100_000)
    ap.add_argument("--root", default="bench-stores")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--requests", type=int, default=300,
                    help="requests per operation and concurrency (past the 2,000 made, they are sent again from the first)")
    ap.add_argument("--ops", nargs="+", default=["noop", "current", "search", "assert"],
                    help="operations to load (noop: a path that is no endpoint, answered 404 without work)")
    ap.add_argument("--clients", nargs="+", type=int, default=[1, 8, 32], help="concurrent connections")
    ap.add_argument("--no-in-process", action="store_true", help="only the server's figures")
    ap.add_argument("--warm", action="store_true",
                    help="send each operation's requests once, unmeasured, before the measured pass (a server "
                         "that has written these subjects before: what its groups remember, docs/service.md)")
    ap.add_argument("--out", default="bench-results")
    a = ap.parse_args(argv)
    src = ensure(Path(a.root), a.scale, a.seed)
    info = json.loads((src / ".benchstore.json").read_text())
    work = {op: jobs for op, jobs in calls(info["entities"], a.seed).items() if op in a.ops}
    res: dict[str, Any] = {"scale": a.scale, "server": {}}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(src, store)
        proc, url = serve(store)
        try:
            load(url, work.get("current", [("GET", "/current", {"subject": "x"})] * 50)[:50], 4)  # warm up
            pos = 0
            for op in a.ops:
                res["server"][op] = []
                jobs = work.get(op) or [("GET", "/nothing", {})] * 2000
                for clients in a.clients:
                    chunk = [jobs[(pos + i) % len(jobs)] for i in range(a.requests)]  # longer runs go round again
                    pos += a.requests
                    if a.warm:
                        load(url, chunk, clients)
                    res["server"][op].append(load(url, chunk, clients, proc.pid))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        if not a.no_in_process:
            res["in_process"] = in_process(store, work, a.requests)
            res["ratio_p50_1_client"] = {op: res["server"][op][0]["p50_ms"] / res["in_process"][op]["p50_ms"]
                                         for op in work if op in res["in_process"] and a.clients[0] == 1}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"bench-service-{a.scale}.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"service on the {a.scale:,} store ({info['entities']:,} entities, {info['records']:,} records)")
    print(f"{'op':<9}{'clients':>8}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}"
          f"{'server CPU s/1000':>19}{'client CPU s/1000':>19}")
    for op, rows in res["server"].items():
        for r in rows:
            print(f"{op:<9}{r['clients']:>8}{r['rps']:>9.1f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['errors']:>8}"
                  f"{r['server_cpu_s_per_1000']:>19.2f}{r['client_cpu_s_per_1000']:>19.2f}")
        if op in res.get("in_process", {}):
            ip = res["in_process"][op]
            ratio = res["ratio_p50_1_client"].get(op)
            print(f"{op:<9}{'in-proc':>8}{'':>9}{ip['p50_ms']:>9.2f}{ip['p99_ms']:>9.2f}"
                  + ("" if ratio is None else f"   server/in-process p50 at 1 client: {ratio:.1f}x"))
    if "assert_grouped" in res.get("in_process", {}):
        ip = res["in_process"]
        g, raw, row = ip["assert_grouped"], ip["raw_grouped"], ip["raw_grouped_per_row"]
        print(f"per assert, {GROUP} to a transaction (p50 / p99 wall, mean CPU ms): write_group "
              f"{g['p50_ms']:.2f} / {g['p99_ms']:.2f}, CPU {g['cpu_ms']:.2f}; raw Kuzu, two reads per assert and "
              f"the group's statements and rows written by one query each {raw['p50_ms']:.2f} / {raw['p99_ms']:.2f}, "
              f"CPU {raw['cpu_ms']:.2f} ({g['p50_ms'] / raw['p50_ms']:.1f}x); raw Kuzu, a query each "
              f"{row['p50_ms']:.2f} / {row['p99_ms']:.2f}, CPU {row['cpu_ms']:.2f}")


if __name__ == "__main__":
    main()
