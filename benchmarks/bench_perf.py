"""The predicate scan and cold retrieval commands at 1M, each beside its floor, in one run (issue 25).

    python benchmarks/bench_perf.py STORE [--runs 5] [--scan-reps 7] [--scan-at now 2021-06-01 ...]
        [--other-root DIR --other-store STORE]

``STORE`` is a benchstore store (``benchmarks/benchstore.py 1000000``). Two measurements:

- scan: ``Memory.facts(predicate="status").facts`` beside the raw Kuzu reads of the same rows, ``get_all()``,
  interleaved call by call in one process: in layout 8 the ``SubjectFacet`` rows of ``status`` whose time
  bounds admit now, with only the texts that may hold then (``FACETS`` below, the query the scan runs), and
  ``MATCH (s:Subject) RETURN s.ref, s.name`` (the names); in layout 7 and before,
  ``MATCH (s:Subject) RETURN s.ref, s.view``. The raw reads are timed twice: with the driver's ``get_all()``
  (the figure issue 25 compares with), and with the rows taken from the driver's result object one by one
  as graphmem's store reads them (``_query_result.getNext``, skipping the Python wrapper's checks per row),
  so the second ratio says what graphmem adds to the very same reads;
- cold: ``graphmem --json current|search|recommend|pack`` as fresh processes, interleaved run by run, each
  as a multiple of the cold ``current``.

With ``--other-root`` (another checkout, e.g. main) and ``--other-store`` (a copy of the store in the layout
that checkout reads), every measurement is also made with that code, runs alternating with this one's, so
before and after come from the same minutes of a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
COLD = {"current": ["current", "project:project-12"],
        "search": ["search", "latency review"],
        "recommend": ["recommend", "a tool for graph search and latency"],
        "pack": ["pack", "-q", "what does Project 12 use"]}
SCAN = """
FACETS = ("MATCH (f:SubjectFacet) WHERE f.predicate = $p AND (f.since <= $a OR f.first <= $a AND $a < f.last) "
          "RETURN f.ref, CASE WHEN f.since <= $a THEN f.open END, CASE WHEN f.first <= $a AND $a < f.last THEN f.ended END")
import json, sys, time, gc
import graphmem
m = graphmem.open(sys.argv[1], read_only=True)
conn = m.store._conn
tables = {r[0] for r in conn.execute("CALL show_tables() RETURN name").get_all()}
if "SubjectFacet" in tables:  # layout 8: the facets that may hold now, and the subjects' names
    from graphmem.model.times import parse_instant
    now = int(time.time() * 1e6) if sys.argv[3] == "now" else parse_instant(sys.argv[3])
    def raw():
        conn.execute(FACETS, {"p": "status", "a": now}).get_all()
        return conn.execute("MATCH (s:Subject) RETURN s.ref, s.name").get_all()
    def direct(res):  # the rows from the driver's result object, as graphmem reads them
        q = res._query_result
        return [q.getNext() for _ in range(q.getNumTuples())]
    def raw_direct():
        direct(conn.execute(FACETS, {"p": "status", "a": now}))
        return direct(conn.execute("MATCH (s:Subject) RETURN s.ref, s.name"))
else:
    raw = raw_direct = lambda: conn.execute("MATCH (s:Subject) RETURN s.ref, s.view").get_all()
at = None if sys.argv[3] == "now" else sys.argv[3]
ours = lambda: len(m.facts(predicate="status", as_of=at).facts)
raw(); raw_direct(); n = ours()
t = {"raw": [], "raw_direct": [], "ours": []}
for _ in range(int(sys.argv[2])):
    for k, f in (("raw", raw), ("raw_direct", raw_direct), ("ours", ours)):
        s = time.perf_counter(); f(); t[k].append(time.perf_counter() - s)
print(json.dumps({"rows": n, **t}))
"""


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": f"/tmp/graphmem-pyc-{abs(hash(str(root)))}"}


def scan(root: Path, store: Path, reps: int, at: str = "now") -> dict[str, float]:
    out = json.loads(subprocess.run([PY, "-c", SCAN, str(store), str(reps), at], env=_env(root), check=True, cwd=root,
                                    capture_output=True, text=True).stdout)
    ours, raw = statistics.median(out["ours"]) * 1000, statistics.median(out["raw"]) * 1000
    direct = statistics.median(out["raw_direct"]) * 1000
    return {"at": at, "rows": out["rows"], "ours_ms": round(ours, 1), "raw_ms": round(raw, 1), "ratio": round(ours / raw, 2),
            "raw_direct_ms": round(direct, 1), "ratio_direct": round(ours / direct, 2)}


def cold_once(root: Path, store: Path, name: str) -> float:
    cmd = [PY, "-c", "import sys; from graphmem.cli import main; sys.argv = ['graphmem', *sys.argv[1:]]; main()",
           "--store", str(store), "--json", *COLD[name]]
    t = time.perf_counter()
    subprocess.run(cmd, env=_env(root), check=True, capture_output=True, cwd=root)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scan-reps", type=int, default=7)
    ap.add_argument("--other-root", type=Path)
    ap.add_argument("--other-store", type=Path)
    ap.add_argument("--scan-at", nargs="+", default=["now"], help="times of the scan: now or ISO-8601 dates")
    a = ap.parse_args(argv)
    sides = {"this": (HERE.parent, a.store)}
    if a.other_root:
        sides["other"] = (a.other_root, a.other_store or a.store)
    res: dict[str, dict[str, object]] = {k: {"scan": [], "cold": {c: [] for c in COLD}} for k in sides}
    load = [os.getloadavg()[0]]
    for _ in range(2):  # the scan, alternating sides
        for at in a.scan_at:
            for side, (root, store) in sides.items():
                res[side]["scan"].append(scan(root, store, a.scan_reps, at))  # type: ignore[attr-defined]
    for r in range(a.runs + 1):  # cold processes: one untimed round, then interleaved by command and side
        for name in COLD:
            for side, (root, store) in sides.items():
                dt = cold_once(root, store, name)
                if r:
                    res[side]["cold"][name].append(dt)  # type: ignore[index]
    load.append(os.getloadavg()[0])
    for side, r in res.items():
        cold = {k: statistics.median(v) * 1000 for k, v in r["cold"].items()}  # type: ignore[attr-defined]
        print(f"{side} ({sides[side][0]}):")
        for s in r["scan"]:  # type: ignore[attr-defined]
            print(f"  facts(status) scan at {s['at']}: {s['ours_ms']:.0f} ms, raw Kuzu {s['raw_ms']:.0f} ms, ratio {s['ratio']:.2f} "
                  f"({s['rows']} rows); raw with the rows read as graphmem reads them {s['raw_direct_ms']:.0f} ms, "
                  f"ratio {s['ratio_direct']:.2f}")
        for k, v in cold.items():
            print(f"  cold {k:9s} p50 {v:6.0f} ms  x cold current {v / cold['current']:.2f}")
    print(f"load average {load[0]:.2f} -> {load[1]:.2f}")


if __name__ == "__main__":
    main()
