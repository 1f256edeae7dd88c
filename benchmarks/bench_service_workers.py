#!/usr/bin/env python3
"""The service load test of docs/service.md on PostgreSQL with 1 and several workers, beside one Kuzu process.

    python benchmarks/bench_service_workers.py [--scale 100000] [--root bench-stores/engines] [--workers 1 4]
        [--clients 16] [--requests 2000] [--pg-url postgresql://...] [--out bench-results]

The stores are made from ``bench_engines.py``'s data at ``--scale`` (``synth.py``'s facts and
``benchstore.py``'s records, written once under ``--root``): each imports the same JSONL and ingests the
same records (no ``graphmem copy``, so 100k takes a minute or two), a Kuzu folder and a PostgreSQL
schema (``--pg-url``, else the cluster ``bench_engines.py`` keeps under ``--root``/pg: the server's
default settings, fsync on). Then, in the same run, ``graphmem serve`` on the Kuzu store (one process)
and ``graphmem serve --workers N`` on the PostgreSQL one for each N of ``--workers`` are loaded in turn
by ``bench_service.load`` (``--clients`` keep-alive connections, raw HTTP/1.1 from one asyncio loop)
with ``current`` reads and ``assert`` writes: requests/s, p50 and p99, and the servers' CPU per 1,000
requests (all processes of the server). The load average is noted beside each row: other work on the
machine changes the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_engines import PgServer, make_data, pg_drop_schema, pg_settings  # noqa: E402
from bench_service import MAIN, calls, cpu_seconds, free_port, load  # noqa: E402


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


def build(address: str, data: Path) -> float:
    """A fresh store at ``address`` from the scale's facts and records; seconds."""
    import graphmem
    t0 = time.perf_counter()
    with graphmem.open(address, create=True) as m:
        r = m.import_jsonl(data / "facts.jsonl", strict=True)
        if r.errors:
            raise SystemExit(f"the synthetic facts did not import into {address}: {r.errors[:3]}")
        m.ingest(data / "records.jsonl")
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=10_000)
    ap.add_argument("--root", default="bench-stores/engines")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=2000, help="requests per operation (at most 2000)")
    ap.add_argument("--pg-url", help="a PostgreSQL server (postgresql://...; the schema is the benchmark's)")
    ap.add_argument("--out", default="bench-results")
    a = ap.parse_args(argv)
    if not 1 <= a.requests <= 2000 or any(w < 1 for w in a.workers):
        ap.error(f"--requests {a.requests} / --workers {a.workers}: expected 1-2000 requests and workers >= 1")
    root = Path(a.root).resolve()
    data = make_data(root, a.scale, a.seed)
    info = json.loads((data / "done").read_text())
    work = calls(info["entities"], a.seed)
    server = None
    if a.pg_url:
        base = a.pg_url.split("schema=")[0].rstrip("&?")
    else:
        from tests.pg import server_binaries
        bindir = server_binaries()
        if bindir is None:
            print("no PostgreSQL server binaries (initdb, pg_ctl) and no --pg-url: the workers benchmark is skipped")
            return
        server = PgServer(bindir, root / "pg")
        base = server.url("x").split("schema=")[0].rstrip("&?")
    schema = f"service_{a.scale}_s{a.seed}"
    pg = f"{base}{'&' if '?' in base else '?'}schema={schema}"
    out: dict = {"scale": a.scale, "clients": a.clients, "requests": a.requests, "load_before": os.getloadavg()[0]}
    try:
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            kuzu = str(Path(tmp) / "store")
            pg_drop_schema(pg, schema)
            out["build_s"] = {"kuzu": round(build(kuzu, data), 1), "postgresql": round(build(pg, data), 1)}
            out["server_settings"] = pg_settings(pg)
            rows = {}
            for name, store, args in [("kuzu, 1 process", kuzu, []),
                                      *[(f"postgresql, {w} worker{'s' if w > 1 else ''}", pg,
                                         ["--workers", str(w)] if w > 1 else []) for w in a.workers]]:
                before = os.getloadavg()[0]
                rows[name] = run(store, args, work, a.clients, a.requests)
                rows[name]["load"] = [round(before, 2), round(os.getloadavg()[0], 2)]  # type: ignore[assignment]
            pg_drop_schema(pg, schema)
    finally:
        if server is not None:
            server.stop()
    out["rows"] = rows
    out["load_after"] = os.getloadavg()[0]
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / f"bench-service-workers-{a.scale}.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"{a.scale:,} store, {a.clients} clients, {a.requests} requests per op; built in {out['build_s']} s; "
          f"PostgreSQL fsync={out['server_settings']['fsync']}")
    print(f"{'server':<24}{'op':<9}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'server CPU s/1000':>19}"
          f"{'load':>12}")
    for name, res in rows.items():
        load_ = res.pop("load")
        for op, r in res.items():
            print(f"{name:<24}{op:<9}{r['rps']:>9.0f}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['errors']:>8}"
                  f"{r['server_cpu_s_per_1000']:>19.2f}{load_[0]:>6.1f}-{load_[1]:<5.1f}")


if __name__ == "__main__":
    main()
