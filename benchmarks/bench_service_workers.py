#!/usr/bin/env python3
"""The service load test of docs/service.md on PostgreSQL with several workers, beside one Kuzu process.

    python benchmarks/bench_service_workers.py [--scale 10000] [--root bench-stores] [--workers 4]
        [--clients 16] [--requests 2000] [--pg-url postgresql://...]

The benchstore store at ``--scale`` (Kuzu) is copied with ``graphmem copy`` to a PostgreSQL schema
(``--pg-url``, else a throwaway cluster made with tests/pg.py's ``Cluster``). Then, in the same run,
``graphmem serve`` on the Kuzu store (one process) and ``graphmem serve --workers N`` on the
PostgreSQL one are loaded in turn by ``bench_service.load`` (``--clients`` keep-alive connections,
raw HTTP/1.1 from one asyncio loop) with ``current`` reads and ``assert`` writes: requests/s, p50 and
p99, and the servers' CPU per 1,000 requests (all processes of the server). The machine's load
average (``uptime``) is printed before and after: other work on the machine changes the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_service import MAIN, calls, cpu_seconds, free_port, load  # noqa: E402
from benchstore import ensure  # noqa: E402


def serve(store: str, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", store, "serve", "--port", str(port), *args],
                            stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                time.sleep(1.0)  # the workers open their connections
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (the workers), so far."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    total = cpu_seconds(pid)
    for p in out.split():
        with contextlib.suppress(OSError):  # a worker that just ended
            total += cpu_seconds(int(p))
    return total


def run(store: str, args: list[str], work: dict, clients: int, n: int) -> dict[str, dict]:
    proc, url = serve(store, *args)
    try:
        load(url, work["current"][:100], 4)  # warm up
        out = {}
        for op in ("current", "assert"):
            c0 = tree_cpu(proc.pid)
            r = load(url, work[op][:n], clients)
            r["server_cpu_s_per_1000"] = (tree_cpu(proc.pid) - c0) * 1000 / r["n"]
            out[op] = r
        return out
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=10_000)
    ap.add_argument("--root", default="bench-stores")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=2000, help="requests per operation (at most 2000)")
    ap.add_argument("--pg-url", help="a PostgreSQL store address to copy into (else a throwaway cluster)")
    a = ap.parse_args(argv)
    import json
    src = ensure(Path(a.root), a.scale, a.seed)
    info = json.loads((src / ".benchstore.json").read_text())
    work = calls(info["entities"], a.seed)
    cluster = None
    if a.pg_url:
        pg = a.pg_url
    else:
        from tests.pg import Cluster, server_binaries
        bindir = server_binaries()
        if bindir is None:
            raise SystemExit("no PostgreSQL server binaries: give --pg-url")
        cluster = Cluster(bindir)
        pg = cluster.url("bench_" + uuid.uuid4().hex[:8])
    print("load before:", os.getloadavg())
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kuzu = str(Path(tmp) / "store")
            subprocess.run([sys.executable, "-c", MAIN, "copy", str(src), kuzu], check=True, capture_output=True)
            subprocess.run([sys.executable, "-c", MAIN, "copy", str(src), pg], check=True, capture_output=True)
            rows = {"kuzu, 1 process": run(kuzu, [], work, a.clients, a.requests),
                    f"postgresql, {a.workers} workers": run(pg, ["--workers", str(a.workers)], work, a.clients,
                                                            a.requests)}
    finally:
        if cluster is not None:
            cluster.stop()
    print("load after:", os.getloadavg())
    print(f"{a.scale:,} store, {a.clients} clients, {a.requests} requests per op")
    print(f"{'server':<24}{'op':<9}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'server CPU s/1000':>19}")
    for name, res in rows.items():
        for op, r in res.items():
            print(f"{name:<24}{op:<9}{r['rps']:>9.0f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['errors']:>8}"
                  f"{r['server_cpu_s_per_1000']:>19.2f}")


if __name__ == "__main__":
    main()
