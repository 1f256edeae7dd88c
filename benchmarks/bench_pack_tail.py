"""pack with its budget partitioned (docs/packing.md, "Budget partition"): latency over N records with no
tail, with a tail of the current session's last 4 records (the bundled example's latest message: a session of one), of
a named session's (``slack:``, a quarter of the records), with a tail budget, and with the trust policy.

    python benchmarks/bench_pack_tail.py --records 100000 [--queries 200] [--seed 42]

The records are bench_evidence.py's synthetic team chatter in the bundled example's store (messages of
many sessions, notes, tool results); a hundredth of them carry ``meta.trust`` (low or quarantined), so the
trust policy has something to leave out. The variants run in turn, query by query, so all see the same load.
"""

from __future__ import annotations

import argparse
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

VARIANTS = {"no_tail": {}, "tail_4": {"tail": 4}, "tail_4_session": {"tail": 4, "session": "slack:"},
            "tail_budget_200": {"tail_budget": 200, "session": "slack:"},
            "tail_4_min_trust_medium": {"tail": 4, "session": "slack:", "min_trust": "medium"}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=Path("bench-results"))
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    result: dict[str, object] = {"records": a.records, "queries": a.queries, "seed": a.seed, "budget_tokens": 1000}
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for line in records(a.records, a.seed):
            if rng.random() < 0.01:
                rec = json.loads(line)
                rec["meta"] = {"trust": rng.choice(["low", "quarantined"])}
                line = json.dumps(rec)
            lines.append(line)
        src = Path(tmp) / "records.jsonl"
        src.write_text("\n".join(lines) + "\n")
        m = build_demo(Path(tmp) / "store")
        m.ingest(src)
        vocab, weights = vocabulary(3000, a.seed)
        names = [w.lower() for w in PROJECTS + TOOLS]
        queries = [" ".join(rng.choice(names) if rng.random() < 1 / 3 else rng.choices(vocab, weights)[0]
                            for _ in range(rng.randrange(1, 4))) for _ in range(a.queries)]
        for q in queries[:20]:
            for kw in VARIANTS.values():
                m.pack(q, track=False, **kw)  # warm: postings, lexicon, facets, sessions
        times: dict[str, list[float]] = {k: [] for k in VARIANTS}
        tail_items: dict[str, int] = dict.fromkeys(VARIANTS, 0)
        left_out = 0
        for q in queries:
            for name, kw in VARIANTS.items():
                t = time.perf_counter()
                r = m.pack(q, track=False, **kw)
                times[name].append(time.perf_counter() - t)
                tail_items[name] += sum(c.lane == "tail" for c in r.items)
                left_out += len(r.trust_left_out)
        result["pack"] = {name: {"p50_ms": round(pct(xs, .5), 3), "p99_ms": round(pct(xs, .99), 3),
                                 "tail_items_per_pack": round(tail_items[name] / len(queries), 2)}
                          for name, xs in times.items()}
        result["trust_policy_left_out_per_pack"] = round(left_out / len(queries), 2)
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        m.close()
    a.out.mkdir(exist_ok=True)
    (a.out / f"pack-tail-{a.records}.json").write_text(json.dumps(result, indent=2))
    json.dump(result, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
