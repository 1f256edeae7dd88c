#!/usr/bin/env python3
"""``graphmem cypher`` beside the raw Kuzu query, and the cost of a mistyped name's suggestions.

    python benchmarks/bench_cypher.py [--assertions 100000] [--reps 30] [--store PATH]

Builds a synthetic store (benchmarks/synth.py, N assertions on N/10 entities) unless ``--store``
names one, then for each query: warm p50/p99 of ``Memory.cypher`` (prepare, read-only transaction,
JSON-safe values) beside raw Kuzu (``Connection.execute(q).get_all()`` on a second connection to the
same open database), timed turn about, and the cold time of ``graphmem cypher Q --json`` as a fresh process beside a fresh Python
process that opens the store with Kuzu and runs the query. Last, the warm time of an unknown
subject's error (the suggestions read the name index: a typo's two last letters swapped) beside
``current`` of the subject itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PY = sys.executable
GRAPHMEM = str(Path(PY).parent / "graphmem")

QUERIES = {
    "edges": "MATCH (p:Project)-[u:USES]->(t:Tool) WHERE u.valid_to IS NULL RETURN p.ref, t.ref, u.valid_from LIMIT 100",
    "aggregate": "MATCH (a:Assertion) RETURN a.predicate, count(*) AS n ORDER BY a.predicate",
    "lookup": "MATCH (p:Project {ref: $ref}) RETURN p.ref, p.name, p.created_at",
}


def timed_pair(a: Callable[[], Any], b: Callable[[], Any], reps: int) -> tuple[list[float], list[float]]:
    """``a`` and ``b`` timed turn about (so a burst of load on the machine hits both alike), in ms."""
    a(), b()
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(reps):
        for fn, out in ((a, ta), (b, tb)):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1000)
    return ta, tb


def stats(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"p50 {statistics.median(ms):8.2f} ms  p99 {ms[min(len(ms) - 1, int(len(ms) * 0.99))]:8.2f} ms"


def cold_pair(a: list[str], b: list[str], reps: int) -> tuple[float, float]:
    """Median wall ms of fresh processes running ``a`` and ``b``, turn about."""
    ts: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(reps):
        for i, argv in enumerate((a, b)):
            t = time.perf_counter()
            p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ))
            ts[i].append((time.perf_counter() - t) * 1000)
            if p.returncode != 0:
                raise SystemExit(f"{argv[:3]}... failed: {p.stderr.decode()[:300]}")
    return statistics.median(ts[0]), statistics.median(ts[1])


def build(n: int, root: Path) -> Path:
    import graphmem
    jsonl = root / f"synth-{n}.jsonl"
    with open(jsonl, "w") as f:
        subprocess.run([PY, str(HERE / "synth.py"), str(n), "--out", "-"], stdout=f, check=True)
    store = root / f"store-{n}"
    t = time.perf_counter()
    with graphmem.open(store, create=True) as m:
        m.import_jsonl(str(jsonl), strict=True)
    print(f"built {store} from {n:,} assertions in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assertions", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--cold-reps", type=int, default=7)
    ap.add_argument("--store", type=Path, default=None)
    args = ap.parse_args()
    import kuzu

    import graphmem
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or build(args.assertions, Path(tmp))
        with graphmem.open(store, create=False) as m:
            ref = m.cypher("MATCH (p:Project) RETURN p.ref ORDER BY p.ref LIMIT 1").rows[0][0]
            names = m.cypher("MATCH (n:Name) RETURN count(*)").rows[0][0]
            queries = {k: q.replace("$ref", f"'{ref}'") for k, q in QUERIES.items()}
            conn = kuzu.Connection(m.store._db)  # raw Kuzu on the same open database, its own connection
            pairs = {k: timed_pair(lambda q=q: m.cypher(q), lambda q=q: conn.execute(q).get_all(), args.reps)
                     for k, q in queries.items()}
            typo = ref.split(":")[1][:-2] + ref.split(":")[1][-1:-3:-1]  # the last two letters swapped
            said: list[str] = []

            def unknown() -> None:
                try:
                    m.current(typo)
                except graphmem.UnknownEntity as e:
                    said[:] = [str(e)]

            def known() -> None:
                m.current(ref)
            suggest, lookup = timed_pair(unknown, known, args.reps)
            conn.close()
        print(f"store {store}: {names:,} names")
        print(f"{'query':<10} {'Memory.cypher':<34} {'raw Kuzu':<34} ratio of p50")
        for k, (ours, raw) in pairs.items():
            print(f"{k:<10} {stats(ours):<34} {stats(raw):<34} {statistics.median(ours) / statistics.median(raw):.2f}")
        print(f"unknown subject {typo!r} (with suggestions): {stats(suggest)}; current of a known one: {stats(lookup)}")
        print(f"  {said[0] if said else ''}")
        raw_script = ("import kuzu, sys; c = kuzu.Connection(kuzu.Database(sys.argv[1] + '/graph.kuzu')); "
                      "print(c.execute(sys.argv[2]).get_all())")
        for k, q in queries.items():
            ours_cold, raw_cold = cold_pair([GRAPHMEM, "--store", str(store), "cypher", q, "--json"],
                                            [PY, "-c", raw_script, str(store), q], args.cold_reps)
            print(f"cold {k:<10} graphmem cypher --json {ours_cold:7.0f} ms   python + kuzu {raw_cold:7.0f} ms")


if __name__ == "__main__":
    main()
