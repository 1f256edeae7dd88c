"""Scoped reads beside unscoped ones (docs/scopes.md): ``current``, ``facts`` and ``search`` with
``scope=`` one of ten scopes, and without, on a store of N synthetic statements and N records.

    python benchmarks/bench_scopes.py --scale 100000 [--seed 42] [--samples 300] [--out results.json]

Statements come from ``synth.py`` (each given one of ten scopes, ``agent:0`` to ``agent:9``, by a
seeded draw), records from ``bench_evidence.records`` (each with a scope the same way). Times are
wall-clock milliseconds of the library call on an open store (p50 and p95 over ``--samples`` calls;
``facts`` over 3 runs each).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_evidence import records  # noqa: E402
from synth import generate  # noqa: E402

import graphmem  # noqa: E402

SCOPES = [f"agent:{i}" for i in range(10)]
QUERIES = ["kuzu latency", "atlas migration", "beacon deploy review", "spacy parser", "ledger budget",
           "redis cache", "quill schema", "docker release", "compass query", "tantivy index"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 3)


def timed(fn: object, args: list[tuple[object, ...]]) -> dict[str, float]:
    ms = []
    for a in args:
        t0 = time.perf_counter()
        fn(*a)  # type: ignore[operator]
        ms.append(time.perf_counter() - t0)
    return {"p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95), "n": len(ms)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    res: dict[str, object] = {"scale": args.scale, "seed": args.seed}
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for line in generate(args.scale, args.seed):
            if line["op"] in ("assert", "end"):
                line["scope"] = rng.choice(SCOPES)
            lines.append(json.dumps(line))
        recs = [json.dumps({**json.loads(r), "scope": rng.choice(SCOPES)}) for r in records(args.scale, args.seed)]
        with graphmem.open(Path(tmp) / "s", create=True) as m:
            t0 = time.perf_counter()
            imp = m.import_jsonl(lines)
            res["import_s"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            m.ingest([r.encode() for r in recs])
            res["ingest_s"] = round(time.perf_counter() - t0, 2)
            res["statements"] = imp.statements
        with graphmem.open(Path(tmp) / "s", read_only=True) as m:
            subjects = sorted({json.loads(x)["subject"] for x in lines if '"subject"' in x})
            picks = [(rng.choice(subjects),) for _ in range(args.samples)]
            scopes = [rng.choice(SCOPES) for _ in range(args.samples)]
            res["current"] = timed(lambda s: m.current(s), picks)
            res["current_scope"] = timed(lambda s, sc: m.current(s, scope=sc), [
                (p[0], sc) for p, sc in zip(picks, scopes, strict=True)])
            res["facts_uses"] = timed(lambda: m.facts(predicate="uses"), [()] * 3)
            res["facts_uses_scope"] = timed(lambda sc: m.facts(predicate="uses", scope=sc), [(s,) for s in SCOPES[:3]])
            qs = [(rng.choice(QUERIES),) for _ in range(args.samples)]
            m.search("warm up", limit=10)
            m.search("warm up", limit=10, scope="agent:0")
            res["search"] = timed(lambda q: m.search(q, limit=10), qs)
            res["search_scope"] = timed(lambda q, sc: m.search(q, limit=10, scope=sc), [
                (q[0], sc) for q, sc in zip(qs, scopes, strict=True)])
    print(json.dumps(res, indent=1))
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
