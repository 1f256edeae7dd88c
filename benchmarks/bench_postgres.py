"""PostgreSQL beside Kuzu on the same synthetic store: import, current, facts (status scan and by object),
search, recommend and pack, each graphmem call beside the raw engine query that reads the same rows.

Starts a throwaway cluster (tests/pg.py: initdb and pg_ctl in a temporary folder, a Unix socket).

    PYTHONPATH=. python benchmarks/bench_postgres.py 100000 --out /tmp/bench-postgres.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synth import generate  # noqa: E402
from graphmem.memory import Memory  # noqa: E402
from graphmem.model.times import now_us  # noqa: E402
from tests.pg import Cluster, server_binaries  # noqa: E402

WORDS = ["graph", "database", "migration", "latency", "budget", "review", "incident", "rollout", "schema", "index",
         "cache", "replica", "backup", "agent", "memory", "search", "ranking", "release", "plan", "owner", "decision",
         "security", "audit"]


_STATUS_SQL = ("SELECT i.subject, s.name, i.row FROM view_interval i JOIN subject s ON s.ref = i.subject WHERE "
               "i.predicate = %s AND i.valid_from <= %s AND (i.valid_to IS NULL OR i.valid_to > %s) ORDER BY i.subject, i.pos")


def p50(fn: Callable[[Any], Any], args: list[Any]) -> float:
    fn(args[0])  # warm
    ms = []
    for a in args:
        t = time.perf_counter()
        fn(a)
        ms.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(ms), 3)


def records(n: int, names: list[str], seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [json.dumps({"text": " ".join(rng.choice(WORDS) for _ in range(12)) + " about " + rng.choice(names),
                        "kind": rng.choice(["note", "decision", "chat"]), "ts": f"2025-{1 + i % 12:02d}-01"})
            for i in range(n)]


def raw_queries(name: str, st: Any, now: int) -> dict[str, tuple[str, Callable[[Any], Any]]]:
    """The engine's own query for the rows each graphmem call reads, by call."""
    if name == "postgres":
        raw: dict[str, tuple[str, Callable[[Any], Any]]] = {
            "current": ("SELECT name, view FROM subject WHERE ref = %s",
                        lambda r: st._q("SELECT name, view FROM subject WHERE ref = %s", (r,))),
            "facts_status_scan": (_STATUS_SQL, lambda _: st._q(_STATUS_SQL, ("status", now, now))),
            "facts_uses_object": ("SELECT src, ... FROM fact_edge WHERE dst = %s AND predicate = 'uses' AND valid",
                                  lambda r: st._q("SELECT f.src, f.valid_from, f.valid_to, f.assertions, e.name "
                                                  "FROM fact_edge f JOIN entity e ON e.ref = f.dst WHERE f.dst = %s "
                                                  "AND f.predicate = 'uses' AND f.valid_from <= %s AND "
                                                  "(f.valid_to IS NULL OR f.valid_to > %s)", (r, now, now))),
            "neighbourhood": ("SELECT ... FROM fact_edge WHERE src = %s AND valid UNION ... dst = %s",
                              lambda r: st._q("SELECT label, src, dst FROM fact_edge WHERE src = %s AND "
                                              "valid_from <= %s AND (valid_to IS NULL OR valid_to > %s) UNION "
                                              "SELECT label, src, dst FROM fact_edge WHERE dst = %s AND "
                                              "valid_from <= %s AND (valid_to IS NULL OR valid_to > %s)",
                                              (r, now, now, r, now, now)))}
    else:
        from graphmem.model.times import to_datetime
        t_now = to_datetime(now)
        raw = {
            "current": ("MATCH (s:Subject {ref: $r}) RETURN s.name, s.view",
                        lambda r: st.cypher("MATCH (s:Subject {ref: $r}) RETURN s.name, s.view", {"r": r})),
            "facts_status_scan": ("MATCH (s:Subject) RETURN s.ref, s.name, s.view",
                                  lambda _: st.cypher("MATCH (s:Subject) RETURN s.ref, s.name, s.view")),
            "facts_uses_object": ("MATCH (a)-[e:USES]->(b:Tool {ref: $r}) WHERE valid RETURN ...",
                                  lambda r: st.cypher("MATCH (a)-[e:USES]->(b:Tool {ref: $r}) WHERE e.predicate "
                                                      "= 'uses' AND e.valid_from <= $t AND (e.valid_to IS NULL OR "
                                                      "e.valid_to > $t) RETURN a.ref, e.valid_from, e.valid_to, "
                                                      "e.assertions, b.name", {"r": r, "t": t_now})),
            "neighbourhood": ("graphmem's fact_edges_at([ref]): one key lookup and an edge scan per label and direction",
                              lambda r: st.fact_edges_at([r], now))}
    return raw


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scale", type=int)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--out")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    jsonl = tmp / "synth.jsonl"
    with open(jsonl, "w", encoding="utf-8") as f:
        for line in generate(args.scale):
            f.write(json.dumps(line) + "\n")
    cluster = Cluster(server_binaries())  # type: ignore[arg-type]
    out: dict[str, Any] = {"scale": args.scale, "records": args.records}
    try:
        url = cluster.url("bench")
        engines = {"kuzu": Memory(tmp / "kuzu", create=True),
                   "postgres": Memory(url, create=True)}
        rng = random.Random(1)
        for name, m in engines.items():
            res: dict[str, Any] = out.setdefault(name, {})
            t = time.perf_counter()
            m.import_jsonl(jsonl)
            res["import_s"] = round(time.perf_counter() - t, 2)
            names = sorted(e.name for e in m.store.all_entities())
            t = time.perf_counter()
            m.ingest(records(args.records, names))
            res["ingest_s"] = round(time.perf_counter() - t, 2)
        subjects = sorted({s.subject for s in engines["postgres"].store.all_statements()})
        refs = rng.sample(subjects, min(args.samples, len(subjects)))
        tools = sorted(e.ref for e in engines["postgres"].store.entities("Tool"))[:50]
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.samples)]
        now = now_us()
        for name, m in engines.items():
            res = out[name]
            raw = raw_queries(name, m.store, now)
            st = m.store
            res["current_ms"] = p50(lambda r, m=m: m.current(r), refs)
            res["facts_status_scan_ms"] = p50(lambda _, m=m: m.facts(predicate="status"), list(range(5)))
            res["facts_uses_object_ms"] = p50(lambda r, m=m: m.facts(predicate="uses", object=r), tools)
            res["search_ms"] = p50(lambda q, m=m: m.search(q), queries[:100])
            res["recommend_ms"] = p50(lambda q, m=m: m.recommend(q), queries[:30])
            res["pack_ms"] = p50(lambda q, m=m: m.pack(q), queries[:30])
            res["raw"] = {}
            for k, (query, fn) in raw.items():
                args_k = refs if k in ("current", "neighbourhood") else tools if k == "facts_uses_object" else [0] * 5
                res["raw"][k] = {"query": query, "p50_ms": p50(fn, args_k)}
            res["search_raw_terms_ms"] = p50(lambda q, st=st: st.rank_records(q.split(), 10), queries[:100])
            print(name, json.dumps(res, indent=1), flush=True)
        for m in engines.values():
            m.close()
    finally:
        cluster.stop()
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
