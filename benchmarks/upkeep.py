"""Upkeep on a large store: `cite` beside a raw Kuzu single-row insert, and the re-import of an export
(every line unchanged, nothing written).

    python benchmarks/upkeep.py STORE [--cites 200] [--export-lines 100000]

STORE is a store built by ``benchmarks/bench.py --keep`` (``<tmp>/store``); it is copied first, so the
kept store stays as it was. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def summary(ms: list[float]) -> dict[str, float]:
    return {"n": len(ms), "p50_ms": pct(ms, 0.5), "p99_ms": pct(ms, 0.99)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", type=Path)
    ap.add_argument("--cites", type=int, default=200)
    ap.add_argument("--export-lines", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    import graphmem

    tmp = Path(tempfile.mkdtemp(prefix="graphmem-upkeep-"))
    try:
        store = tmp / "store"
        shutil.copytree(args.store, store)
        res: dict[str, Any] = {}
        m = graphmem.open(store)
        n_statements = m.store.statement_count()
        res["statements"] = n_statements
        rng = random.Random(args.seed)
        # re-import: the store's own export (its first --export-lines lines), every line unchanged
        t0 = time.perf_counter()
        lines = m.export().splitlines()
        res["export_seconds"] = time.perf_counter() - t0
        part = lines[: args.export_lines]
        f = tmp / "export.jsonl"
        f.write_text("\n".join(part) + "\n", encoding="utf-8")
        before = (m.store.statement_count(), m.store.next_fact_id(), m.store.next_record_id())
        t0 = time.perf_counter()
        r = m.import_jsonl(f)
        res["reimport"] = {"lines": len(part), "seconds": time.perf_counter() - t0, "unchanged": r.unchanged,
                           "statements_written": r.statements, "entities_created": r.entities_created,
                           "nothing_written": before == (m.store.statement_count(), m.store.next_fact_id(),
                                                         m.store.next_record_id())}
        # cite: one at a time on random assertions, beside a raw single-row CREATE in Kuzu (rolled back)
        parsed = [json.loads(x) for x in lines]
        retracted = {x["fact"] for x in parsed if x.get("op") == "retract"}
        asserts = [int(x["id"].split(":")[1]) for x in parsed if x.get("op") == "assert" and x["id"] not in retracted]
        targets = rng.sample(asserts, min(args.cites, len(asserts)))
        ours: list[float] = []
        for i, fid in enumerate(targets):
            t0 = time.perf_counter()
            m.cite(f"fact:{fid}", [f"https://example.org/evidence/{i}"])
            ours.append((time.perf_counter() - t0) * 1000)
        conn = m.store._conn  # type: ignore[attr-defined]
        raw: list[float] = []
        for i in range(len(targets)):
            t0 = time.perf_counter()
            conn.execute("BEGIN TRANSACTION")
            conn.execute("CREATE (:Assertion {id: $id, op: 'cite', subject: 's', predicate: 'p', valid_from: 1, "
                         "recorded_at: 1, sources: '[]', asserted_by: 'operator', trust: 'low'})",
                         {"id": 10**12 + i})
            conn.execute("COMMIT")
            raw.append((time.perf_counter() - t0) * 1000)
        conn.execute("MATCH (a:Assertion) WHERE a.id >= $lo DELETE a", {"lo": 10**12})
        res["cite"] = {**summary(ours), "raw_single_row_insert": summary(raw),
                       "ratio_p50": pct(ours, 0.5) / pct(raw, 0.5)}
        res["rebuild_check_clean"] = m.rebuild(check=True).drift == ()
        m.close()
        json.dump(res, sys.stdout, indent=2)
        sys.stdout.write("\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
