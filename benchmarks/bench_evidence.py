"""Evidence benchmarks: ingest rate with extraction off and on, search p50/p99 beside the raw
Kuzu full-text query and beside SQLite FTS5 (Python's own sqlite3) over the same texts and terms,
the store queries a search makes, search with each filter beside search without it, and the
extraction rate.

    python benchmarks/bench_evidence.py --records 100000 [--extract-records 2000] [--seed 42]

Records are synthetic team chatter built from a fixed seed: sentences naming
the bundled example's projects and tools in the phrasings the extractor knows,
mixed with filler words, so full-text scores and extraction see realistic text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from graphmem.demo import build_demo
from graphmem.evidence.query import search_terms
from graphmem.evidence.records import importance
from graphmem.evidence.search import record_filter
from graphmem.model.textindex import query_terms, terms

PROJECTS = ["Atlas", "Beacon", "Compass", "Ferry", "Quill", "Sextant", "Ledger", "Tidewater", "Lighthouse"]
TOOLS = ["Kuzu", "SQLite", "PostgreSQL", "DuckDB", "spaCy", "FastAPI", "Redis", "Tantivy", "pytest", "Docker"]
TEMPLATES = [
    "{p} uses {t} for the {w} layer.", "We switched {p} from {t} to {t2} on 2026-0{m}-1{d}.",
    "{p} is now paused while we {w} the {w2}.", "{p} is blocked by {p2}: {w} {w2} still open.",
    "Standup: {w} {w2} on {p}, {t} upgrade done.", "Does {p} still depend on {t}?",
    "{t} latency is {n} ms after the {w} change.", "We don't use {t} in {p} any more.",
]
SOURCES = ("slack:#team", "slack:#ops", "git:atlas", "file:notes/n{i}.md#L{n}")
# the filtered searches: a quarter of the records (kind), half (source prefix), a ninth (a month of ts), the
# records that mention Atlas (MENTIONS), and all four at once
FILTERS = {"kind": {"kind": "message"}, "source": {"source": "slack:"},
           "since_until": {"since": "2026-03-01", "until": "2026-04-01"}, "about": {"about": "Atlas"},
           "all": {"kind": "message", "source": "slack:", "since": "2026-01-01", "until": "2026-07-01",
                   "about": "Atlas"}}
FILLER = ("index", "cache", "schema", "deploy", "review", "migration", "query", "latency", "backup",
          "cluster", "ingest", "parser", "token", "shard", "replica", "release", "ticket", "alert",
          "dashboard", "budget", "roadmap", "sprint", "retro", "vendor", "audit", "export", "import")


def vocabulary(size: int, seed: int) -> tuple[list[str], list[float]]:
    """The filler words and their Zipf weights: FILLER first, then made-up words (``size`` 0: FILLER only)."""
    rng = random.Random(seed + 1)
    syll = ["ka", "lo", "mi", "ne", "tor", "vex", "qua", "ri", "sen", "dul", "pra", "gho", "zin", "bel", "fas"]
    words = list(FILLER)
    while len(words) < size:
        w = "".join(rng.choice(syll) for _ in range(rng.randrange(2, 4)))
        if w not in words:
            words.append(w)
    return words, [1 / (r + 1) ** 1.1 for r in range(len(words))]


def records(n: int, seed: int, vocab: int = 3000) -> list[str]:
    rng = random.Random(seed)
    words, weights = vocabulary(vocab, seed)
    out = []
    for i in range(n):
        filler = rng.choices(words, weights, k=12)
        text = " ".join(rng.choice(TEMPLATES).format(
            p=rng.choice(PROJECTS), p2=rng.choice(PROJECTS), t=rng.choice(TOOLS), t2=rng.choice(TOOLS),
            w=filler[0], w2=filler[1], n=rng.randrange(5, 500), m=rng.randrange(1, 9),
            d=rng.randrange(0, 9)) for _ in range(rng.randrange(1, 4))) + " " + " ".join(filler[2:2 + rng.randrange(0, 10)])
        out.append(json.dumps({"id": f"b{i}", "ts": f"2026-0{1 + i % 9}-{10 + i % 18}T09:00:00Z",
                               "kind": rng.choice(["message", "note", "tool_result"]), "text": text,
                               "source": SOURCES[i % len(SOURCES)].format(i=i % 50, n=1 + i % 200)}))
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def mention_names(m: object, lines: list[str]) -> int:
    """MENTIONS of each project a record names, written directly (extracting 100,000 records would take
    minutes, and the filter reads only the edges); the number of edges."""
    refs = {}
    for name in PROJECTS:
        try:
            refs[name] = m.resolve(name).ref  # type: ignore[attr-defined]
        except Exception:  # a project the bundled example does not have
            continue
    items = []
    for rid, line in enumerate(lines, 1):
        text = json.loads(line)["text"]
        found = [(ref, text.index(name), text.index(name) + len(name), "bench") for name, ref in refs.items()
                 if name in text]
        if found:
            items.append((rid + FIRST_BENCH_RECORD - 1, found))
    with m.store.transaction():  # type: ignore[attr-defined]
        return int(m.store.replace_mentions(items))  # type: ignore[attr-defined]


FIRST_BENCH_RECORD = 0  # set once the records are ingested (the bundled example has records of its own)


def filtered_searches(m: object, queries: list[str]) -> dict[str, object]:
    """Each filter over the same queries, warm, beside the same queries without it; and the first
    filtered search after the filter columns were dropped (they are read from the store once)."""
    out: dict[str, object] = {}
    m.store.forget_postings()  # type: ignore[attr-defined]
    m.search(queries[0])  # type: ignore[attr-defined]
    t = time.perf_counter()
    m.search(queries[0], kind="message")  # type: ignore[attr-defined]
    out["first_filtered_search_ms"] = round((time.perf_counter() - t) * 1000, 1)
    for q in queries:  # the postings the queries read, decoded again (dropped above)
        m.search(q, limit=10)  # type: ignore[attr-defined]
    terms = [query_terms(search_terms(q)) for q in queries]
    # "ranking": the filter and BM25 alone (what a filter changes), without reading the 10 hits' rows
    for name, kw in {"none": {}, **FILTERS}.items():
        times, ranking, hits = [], [], 0
        for q, ts in zip(queries, terms, strict=True):
            t = time.perf_counter()
            r = m.search(q, limit=10, **kw)  # type: ignore[attr-defined]
            times.append(time.perf_counter() - t)
            hits += len(r.results)
            t = time.perf_counter()
            within = record_filter(**kw, resolve=m.resolve).within(m.store)  # type: ignore[attr-defined]
            m.store.rank_records(ts, 10, within)  # type: ignore[attr-defined]
            ranking.append(time.perf_counter() - t)
        allowed = record_filter(**kw, resolve=m.resolve).within(m.store)  # type: ignore[attr-defined]
        out[name] = {"p50_ms": round(pct(times, .5), 3), "p99_ms": round(pct(times, .99), 3),
                     "ranking_p50_ms": round(pct(ranking, .5), 3), "ranking_p99_ms": round(pct(ranking, .99), 3),
                     "mean_hits": round(hits / len(queries), 2),
                     "records_allowed": m.store.record_count() if allowed is None else len(allowed), "filter": kw}
    return out


def fts5_searches(lines: list[str], queries: list[str], first_id: int, k: int = 10) -> tuple[list[float], list[list[int]], float]:
    """The same searches in SQLite FTS5 (an in-memory table, Python's own sqlite3): each record's index
    terms (graphmem's own, so both engines index and look up the same terms) in the one indexed column,
    its text, ts, kind, source, scope and importance beside it; a query is its terms quoted and joined by
    OR, ranked by ``bm25()``, top ``k``, those columns fetched. The times (seconds, each including the
    query's terms, as a search's do), each query's ids, and the table's build time (seconds)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE r USING fts5(terms, text UNINDEXED, ts UNINDEXED, kind UNINDEXED, "
               "source UNINDEXED, scope UNINDEXED, importance UNINDEXED, tokenize='unicode61 remove_diacritics 0')")
    t = time.perf_counter()
    rows = ((first_id + i, " ".join(terms(d["text"])), d["text"], d["ts"], d["kind"], d.get("source"), d.get("scope"),
             importance(d["text"], d["kind"]))
            for i, d in enumerate(map(json.loads, lines)))
    db.executemany("INSERT INTO r(rowid, terms, text, ts, kind, source, scope, importance) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   rows)
    db.commit()
    build = time.perf_counter() - t
    sql = ("SELECT rowid, bm25(r), text, ts, kind, source, scope, importance FROM r WHERE r MATCH ? "
           f"ORDER BY bm25(r) LIMIT {int(k)}")

    def one(q: str) -> list[int]:
        match = " OR ".join(f'"{x}"' for x in query_terms(search_terms(q)))
        return [row[0] for row in db.execute(sql, (match,)).fetchall()]

    for q in queries[:20]:
        one(q)  # warm
    times, found = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(one(q))
        times.append(time.perf_counter() - t)
    db.close()
    return times, found, build


def queries_per_search(m: object, queries: list[str]) -> float:
    """The store queries a warm search makes, on average (a counter around the store's query methods)."""
    store: Any = m.store  # type: ignore[attr-defined]
    real_q, real_iter, n = store._q, store._iter, [0]

    def q(*a: object, **k: object) -> object:
        n[0] += 1
        return real_q(*a, **k)

    def it(*a: object, **k: object) -> object:
        n[0] += 1
        return real_iter(*a, **k)

    store._q, store._iter = q, it
    try:
        for x in queries:
            m.search(x, limit=10)  # type: ignore[attr-defined]
    finally:
        del store._q, store._iter
    return n[0] / len(queries)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--extract-records", type=int, default=2000)
    ap.add_argument("--single-records", type=int, default=300, help="records ingested one per call")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--vocab", type=int, default=3000,
                    help="filler vocabulary, Zipf-distributed (0: the 26 FILLER words only, a worst case for BM25)")
    ap.add_argument("--out", type=Path, default=Path("bench-results"))
    a = ap.parse_args(argv)
    result: dict[str, object] = {"records": a.records, "seed": a.seed, "vocab": a.vocab}
    with tempfile.TemporaryDirectory() as tmp:
        lines = records(a.records, a.seed, a.vocab)
        src = Path(tmp) / "records.jsonl"
        src.write_text("\n".join(lines) + "\n")
        m = build_demo(Path(tmp) / "store")
        t0 = time.perf_counter()
        rep = m.ingest(src)
        dt = time.perf_counter() - t0
        result["ingest_no_extraction"] = {"seconds": round(dt, 2), "records_per_s": round(len(rep.stored) / dt)}
        global FIRST_BENCH_RECORD
        FIRST_BENCH_RECORD = int(rep.stored[0].removeprefix("rec:"))
        t0 = time.perf_counter()
        result["mentions_written"] = {"edges": mention_names(m, lines), "seconds": round(time.perf_counter() - t0, 2)}
        rng = random.Random(a.seed)
        vocab, weights = vocabulary(a.vocab, a.seed)
        names = [w.lower() for w in PROJECTS + TOOLS]
        # a query: one to three words, each a project or tool name a third of the time, else a filler word
        # drawn with the corpus's own frequencies (so common words are asked for as often as they occur)
        queries = [" ".join(rng.choice(names) if rng.random() < 1 / 3 else rng.choices(vocab, weights)[0]
                            for _ in range(rng.randrange(1, 4))) for _ in range(a.queries)]
        for q in queries[:20]:
            m.search(q)  # warm
        # the raw query: Kuzu's own full-text index over the same records (built here, outside the timings)
        t = time.perf_counter()
        m.store.cypher("CALL CREATE_FTS_INDEX('Record', 'bench_text', ['text'])")
        result["kuzu_fts_index_build_s"] = round(time.perf_counter() - t, 2)
        # three passes over the same queries, each on its own, so one kind of query does not evict what the
        # other keeps warm: graphmem warm, graphmem with no postings held in memory, Kuzu's own index
        ours, cold, raw = [], [], []
        for q in queries:
            t = time.perf_counter()
            m.search(q, limit=10)
            ours.append(time.perf_counter() - t)
        for q in queries:
            m.store.forget_postings()
            t = time.perf_counter()
            m.search(q, limit=10)
            cold.append(time.perf_counter() - t)
        for q in queries[:20]:
            m.store.cypher("CALL QUERY_FTS_INDEX('Record', 'bench_text', $q, top := 10) RETURN node.id, score", {"q": q})
        for q in queries:
            t = time.perf_counter()
            m.store.cypher("CALL QUERY_FTS_INDEX('Record', 'bench_text', $q, top := 10) RETURN node.id, score",
                           {"q": q})
            raw.append(time.perf_counter() - t)
        # SQLite FTS5 over the same texts and terms, in the same run, right after the passes above
        fts, fts_ids, fts_build = fts5_searches(lines, queries, FIRST_BENCH_RECORD)
        ours_ids = [[int(h.ref.removeprefix("rec:")) for h in m.search(q, limit=10).results] for q in queries]
        overlap = statistics.mean(len(set(a) & set(b)) / max(len(a), 1) for a, b in zip(ours_ids, fts_ids, strict=True))
        per_search = queries_per_search(m, queries)
        result["search_filtered"] = filtered_searches(m, queries)
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        result["search"] = {"p50_ms": round(pct(ours, .5), 3), "p99_ms": round(pct(ours, .99), 3),
                            "uncached_p50_ms": round(pct(cold, .5), 3), "uncached_p99_ms": round(pct(cold, .99), 3),
                            "raw_p50_ms": round(pct(raw, .5), 3), "raw_p99_ms": round(pct(raw, .99), 3),
                            "ratio_p50": round(statistics.median(ours) / statistics.median(raw), 2),
                            "fts5_p50_ms": round(pct(fts, .5), 3), "fts5_p99_ms": round(pct(fts, .99), 3),
                            "ratio_fts5_p50": (ratio := round(statistics.median(ours) / statistics.median(fts), 2)),
                            "fts5_build_s": round(fts_build, 2), "top10_overlap_with_fts5": round(overlap, 3),
                            "store_queries_per_search": round(per_search, 2)}
        print(f"search p50 {pct(ours, .5):.2f} ms, SQLite FTS5 p50 {pct(fts, .5):.2f} ms: ratio "
              f"{ratio} (target <= 2); {per_search:.2f} store queries per search",
              file=sys.stderr)
        m.store.cypher("CALL DROP_FTS_INDEX('Record', 'bench_text')")
        # one record per ingest call: the index's per-call cost (block appends and merges)
        singles = [json.dumps({**json.loads(x), "id": "s" + json.loads(x)["id"]}).encode()
                   for x in lines[: a.single_records]]
        t = time.perf_counter()
        for line in singles:
            m.ingest([line])
        dt = time.perf_counter() - t
        result["ingest_one_per_call"] = {"records": len(singles), "records_per_s": round(len(singles) / dt)}
        t = time.perf_counter()
        ex = m.extractor()
        result["extractor_build_s"] = round(time.perf_counter() - t, 3)
        texts = [json.loads(x)["text"] for x in lines[: a.extract_records]]
        t = time.perf_counter()
        proposals = sum(len(ex.extract(x, default_time=0).assertions) for x in texts)
        dt = time.perf_counter() - t
        result["extraction"] = {"records": len(texts), "records_per_s": round(len(texts) / dt),
                                "proposals": proposals}
        extra = [json.dumps({**json.loads(x), "id": "x" + json.loads(x)["id"]}) for x in lines[: a.extract_records]]
        src2 = Path(tmp) / "more.jsonl"
        src2.write_text("\n".join(extra) + "\n")
        t = time.perf_counter()
        rep2 = m.ingest(src2)
        applied = m.extract_records(list(rep2.stored), apply=True)
        dt = time.perf_counter() - t
        result["ingest_with_extraction"] = {"records": len(rep2.stored), "seconds": round(dt, 2),
                                            "records_per_s": round(len(rep2.stored) / dt),
                                            "assertions_written": len(applied.written)}
        m.close()
    a.out.mkdir(exist_ok=True)
    (a.out / f"evidence-{a.records}-v{a.vocab}.json").write_text(json.dumps(result, indent=2))
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
