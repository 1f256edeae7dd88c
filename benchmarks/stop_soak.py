#!/usr/bin/env python3
"""Stop soak: ``graphmem serve --workers 3`` on a PostgreSQL store stopped by a signal to its process group while
clients write and read without pause, many times (docs/service.md, "Known issue").

    python benchmarks/stop_soak.py [--stops 24] [--clients 12]

Needs the PostgreSQL server binaries (``tests/pg.py`` makes a throwaway cluster). Each stop: a fresh schema,
``init`` and one entity, the server on a free loopback port, ``--clients`` keep-alive clients (a third
asserting, a third asking ``current``, a third searching), then after 1.0-1.5 s SIGTERM and SIGINT in turn to
the whole group, as a supervisor or a terminal's Ctrl-C sends them. Prints per stop the requests answered,
how long the stop took and whether anything was printed as a traceback; then how many stops took over 5 s
or printed a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAIN = "from graphmem.cli import main; main()"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _started(url: str, deadline: float) -> None:
    import httpx
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start")


def one_stop(store: str, k: int, clients: int, env: dict[str, str]) -> tuple[int, float, object, str]:
    """Serve ``store``, load it, signal the group; (requests answered, seconds to stop, exit code, stderr)."""
    import httpx
    for args in (["init"], ["entity", "add", "Project", "Atlas"]):
        subprocess.run([sys.executable, "-c", MAIN, "--store", store, *args], env=env, check=True, capture_output=True,
                       cwd="/tmp")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", MAIN, "--store", store, "serve", "--port", str(port), "--workers",
                             "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True,
                            cwd="/tmp")
    url = f"http://127.0.0.1:{port}"
    _started(url, time.monotonic() + 60)
    stop, count = threading.Event(), [0]

    def client(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            j = 0
            while not stop.is_set():
                try:
                    if i % 3 == 0:
                        c.post("/assert", json={"subject": "atlas", "predicate": "summary", "object": f"w {i} {j}"})
                    elif i % 3 == 1:
                        c.get("/current", params={"subject": "atlas"})
                    else:
                        c.get("/search", params={"q": "atlas"})
                except httpx.TransportError:
                    return
                count[0] += 1
                j += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0 + (k % 5) * 0.13)
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT if k % 2 else signal.SIGTERM)
    code: object
    try:
        code = proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        code = "killed after 90 s"
    took = time.monotonic() - t0
    stop.set()
    return count[0], took, code, proc.stderr.read().decode() if proc.stderr else ""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stops", type=int, default=24)
    ap.add_argument("--clients", type=int, default=12)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from pg import Cluster, server_binaries
    bindir = server_binaries()
    if bindir is None:
        raise SystemExit("PostgreSQL server binaries (initdb, pg_ctl) not found")
    env = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_TOKEN"}
    env["PYTHONPATH"] = str(ROOT)
    cluster = Cluster(bindir)
    slow = traced = 0
    try:
        for k in range(a.stops):
            n, took, code, err = one_stop(cluster.url(f"stop_{k}_{os.getpid()}"), k, a.clients, env)
            traced += "Traceback" in err
            slow += took > 5
            print(f"stop {k} ({'SIGINT' if k % 2 else 'SIGTERM'}): {n} requests answered, stopped in {took:.1f} s, "
                  f"exit {code}{', a traceback printed' if 'Traceback' in err else ''}", flush=True)
    finally:
        cluster.stop()
    print(f"{slow} of {a.stops} stops took over 5 s; {traced} printed a traceback")


if __name__ == "__main__":
    main()
