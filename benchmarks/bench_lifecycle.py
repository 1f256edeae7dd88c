"""Lifecycle benchmarks (docs/lifecycle.md): ``lifecycle`` over N records (dry run and the real run: time
and counts archived by reason), pack and search latency with use tracking on and off, the cost of one
use event, and pack and search once a share of the records is archived.

    python benchmarks/bench_lifecycle.py --records 100000 [--queries 200] [--seed 42]
    python benchmarks/bench_lifecycle.py --benchstore bench-stores/1000000-s42   # pack on a benchstore.py store

The records are bench_evidence.py's synthetic team chatter in the bundled example's store. A tenth of
them get use (search events spread over the following 60 days) so the decay's frequency boost and the
idle clock have something to work on; the policy is applied as of 75 days after the ingest.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_evidence import PROJECTS, TOOLS, pct, records, vocabulary  # noqa: E402

from graphmem.demo import build_demo  # noqa: E402
from graphmem.model.times import now_us  # noqa: E402

DAY_US = 86_400_000_000
PACK_TARGET_P50_MS = 50.0


def timed(calls: list[tuple[str, object]], reps: int = 1) -> dict[str, list[float]]:
    """Each (label, thunk) run in turn, alternating, so both see the same load."""
    out: dict[str, list[float]] = {label: [] for label, _ in calls}
    for _ in range(reps):
        for label, fn in calls:
            t = time.perf_counter()
            fn()  # type: ignore[operator]
            out[label].append(time.perf_counter() - t)
    return out


def summary(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(pct(xs, .5), 3), "p99_ms": round(pct(xs, .99), 3), "n": len(xs)}


def on_benchstore(store: Path, queries: int, seed: int) -> dict[str, object]:
    """Pack and search with tracking on and off on a benchstore.py store (its facts, records and
    mentions: the store of SPEC 12's pack target), with bench_recommend.py's pack questions."""
    from bench_recommend import pack_questions

    import graphmem
    info = json.loads((store / ".benchstore.json").read_text())
    m = graphmem.open(store)
    try:
        qs = pack_questions(queries, info["entities"], seed)
        for q in qs[:20]:
            m.pack(q, track=False)
        r: dict[str, list[float]] = {"pack_on": [], "pack_off": [], "search_on": [], "search_off": []}
        for q in qs:
            for label, fn in (("pack_on", lambda q=q: m.pack(q, budget_tokens=1000)),
                              ("pack_off", lambda q=q: m.pack(q, budget_tokens=1000, track=False)),
                              ("search_on", lambda q=q: m.search(q)),
                              ("search_off", lambda q=q: m.search(q, track=False))):
                t = time.perf_counter()
                fn()
                r[label].append(time.perf_counter() - t)
        return {"store": info, **{k: summary(v) for k, v in r.items()},
                "pack_on_within_target": pct(r["pack_on"], .5) <= PACK_TARGET_P50_MS,
                "load_average": [round(x, 2) for x in os.getloadavg()]}
    finally:
        m.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=Path("bench-results"))
    ap.add_argument("--benchstore", type=Path, help="instead: pack and search on this benchstore.py store")
    a = ap.parse_args(argv)
    if a.benchstore is not None:
        res = on_benchstore(a.benchstore, a.queries, a.seed)
        json.dump(res, sys.stdout, indent=2)
        return
    result: dict[str, object] = {"records": a.records, "seed": a.seed}
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "records.jsonl"
        src.write_text("\n".join(records(a.records, a.seed)) + "\n")
        m = build_demo(Path(tmp) / "store")
        t = time.perf_counter()
        rep = m.ingest(src)
        result["ingest_s"] = round(time.perf_counter() - t, 2)
        ids = [int(r.removeprefix("rec:")) for r in rep.stored]
        vocab, weights = vocabulary(3000, a.seed)
        names = [w.lower() for w in PROJECTS + TOOLS]
        queries = [" ".join(rng.choice(names) if rng.random() < 1 / 3 else rng.choices(vocab, weights)[0]
                            for _ in range(rng.randrange(1, 4))) for _ in range(a.queries)]
        for q in queries[:20]:
            m.pack(q, track=False)  # warm: postings, lexicon, facets
        # pack and search, tracking on and off, alternating query by query
        packs: dict[str, list[float]] = {"on": [], "off": []}
        searches: dict[str, list[float]] = {"on": [], "off": []}
        for q in queries:
            r = timed([("on", lambda q=q: m.pack(q)), ("off", lambda q=q: m.pack(q, track=False))])
            packs["on"] += r["on"]
            packs["off"] += r["off"]
            r = timed([("on", lambda q=q: m.search(q)), ("off", lambda q=q: m.search(q, track=False))])
            searches["on"] += r["on"]
            searches["off"] += r["off"]
        from graphmem.evidence.lifecycle import FLUSH_EVENTS, UseLog
        one, batch = [], []
        for i in range(100):  # one event written alone, and a batch as the use log writes them
            log = UseLog()
            log.pending = [("packed", ids[i * 5:i * 5 + 5], now_us())]
            t = time.perf_counter()
            log.flush(m.store)
            one.append(time.perf_counter() - t)
            log.pending = [("packed", ids[j * 5:j * 5 + 5], now_us()) for j in range(FLUSH_EVENTS)]
            t = time.perf_counter()
            log.flush(m.store)
            batch.append(time.perf_counter() - t)
        result["tracking"] = {"pack_on": summary(packs["on"]), "pack_off": summary(packs["off"]),
                              "search_on": summary(searches["on"]), "search_off": summary(searches["off"]),
                              "one_use_event_5_records": summary(one),
                              "use_batch_of_64_events": summary(batch),
                              "pack_target_p50_ms": PACK_TARGET_P50_MS,
                              "pack_on_within_target": pct(packs["on"], .5) <= PACK_TARGET_P50_MS}
        m._use_log.flush(m.store)
        # use: a tenth of the records found by search at times over the next 60 days, 100 records an event
        start = now_us()
        used = rng.sample(ids, len(ids) // 10)
        with m.store.transaction():
            for i in range(0, len(used), 100):
                m.store.add_record_event("searched", used[i:i + 100], {}, start + rng.randrange(60) * DAY_US)
        at = (dt.datetime.now(dt.UTC) + dt.timedelta(days=75)).isoformat()
        t = time.perf_counter()
        dry = m.lifecycle(at=at, dry_run=True)
        dry_s = time.perf_counter() - t
        t = time.perf_counter()
        real = m.lifecycle(at=at)
        real_s = time.perf_counter() - t
        t = time.perf_counter()
        again = m.lifecycle(at=at, dry_run=True)
        result["lifecycle"] = {"at_days_after_ingest": 75, "dry_run_s": round(dry_s, 3), "run_s": round(real_s, 3),
                               "second_dry_run_s": round(time.perf_counter() - t, 3),
                               "archived": real.counts["archived"], "by_reason": real.counts["by_reason"],
                               "by_tier": real.counts["by_tier"], "kept": real.counts["kept"],
                               "events": len(real.events), "dry_equals_run": dry.counts == real.counts,
                               "then_already_archived": again.counts["already_archived"]}
        # pack and search with the archived left out (the filter's archived facet)
        for q in queries[:20]:
            m.pack(q, track=False)
        after = timed([(f"{kind}{i}", (lambda q=q, kind=kind: m.pack(q, track=False) if kind == "pack"
                                       else m.search(q, track=False)))
                       for i, q in enumerate(queries) for kind in ("pack", "search")])
        result["with_archived"] = {
            "archived_share": round(real.counts["archived"] / max(1, len(ids)), 3),
            "pack": summary([v for k, xs in after.items() if k.startswith("pack") for v in xs]),
            "search": summary([v for k, xs in after.items() if k.startswith("search") for v in xs])}
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        m.close()
    a.out.mkdir(exist_ok=True)
    (a.out / f"lifecycle-{a.records}.json").write_text(json.dumps(result, indent=2))
    json.dump(result, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
