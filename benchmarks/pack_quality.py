#!/usr/bin/env python3
"""How much of the answering evidence a context bundle holds: pack against search alone.

    python benchmarks/pack_quality.py [--questions benchmarks/data/pack_questions.jsonl] [--budgets 200 500 1000]

The questions (``benchmarks/data/pack_questions.jsonl``, written for this over the
bundled example) each list the records and facts that answer them (``gold``) and,
for questions about the past, an ``as_of``. The example store is built fresh;
for each question and budget:

- ``pack``: ``Memory.pack(q, budget_tokens=B, as_of=...)``; what it finds is every
  ref its bundle cites;
- ``search``: ``Memory.search(q)`` with the records as evidence lines, in rank
  order, formatted as the packer formats evidence (``record_text``: the
  date and a 200-character snippet, then ``[rec:N]``), as many as fit the same budget by the same
  token counter.

Evidence recall is the share of a question's gold refs the bundle cites, averaged
over the questions; ``records`` counts the gold records only (all search can cite).
Gold facts are checked to be current at the question's as_of before scoring.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def search_bundle(m: Any, q: str, budget: int, as_of: int) -> set[str]:
    from graphmem.memory import search_terms
    from graphmem.retrieval.packlines import count_tokens, record_text
    terms = search_terms(q)
    used = count_tokens("Evidence:")
    cited: set[str] = set()
    for hit in m.search(q, limit=50).results:
        rid = int(hit.ref[4:])
        text, ts, kind, source, _, _ = m.store.record_hit(rid)
        if ts > as_of:
            continue
        line = f"- {record_text(text, ts, terms)} [{hit.ref}]"  # as pack writes an evidence line
        cost = count_tokens(line)
        if used + cost > budget:
            continue
        used += cost
        cited.add(hit.ref)
    return cited


def check_gold(m: Any, qs: list[dict[str, Any]]) -> None:
    """Every gold fact is current at the question's as_of; every gold record exists then."""
    from graphmem.model.times import now_us, parse_instant
    bad = []
    for x in qs:
        as_of = x.get("as_of")
        a = parse_instant(as_of) if as_of else now_us()
        for ref in x["gold"]:
            if ref.startswith("rec:"):
                rec = m.store.record_hit(int(ref[4:]))
                if rec is None or rec[1] > a:
                    bad.append(f"{x['q']!r}: {ref} does not exist at {as_of or 'now'}")
            else:
                s = m.store.statement(int(ref[5:]))
                held = m.current(s.subject, as_of=as_of).to_dict()["facts"] if s else []
                if not any(ref in f["assertions"] or ref in f.get("conflicts", []) for f in held):
                    bad.append(f"{x['q']!r}: {ref} is not current at {as_of or 'now'}")
    if bad:
        raise SystemExit("gold refs that cannot be right:\n" + "\n".join(bad))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, default=HERE / "data" / "pack_questions.jsonl")
    ap.add_argument("--budgets", type=int, nargs="+", default=[200, 500, 1000])
    ap.add_argument("--out", default=str(REPO / "bench-results"))
    a = ap.parse_args(argv)
    from graphmem.demo import build_demo
    from graphmem.model.times import now_us, parse_instant
    qs = load(a.questions)
    res: dict[str, Any] = {"questions": len(qs), "budgets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        m = build_demo(Path(tmp) / "demo")
        try:
            check_gold(m, qs)
            for budget in a.budgets:
                rows: dict[str, list[float]] = {"pack": [], "pack_records": [], "search": [], "search_records": []}
                misses = []
                for x in qs:
                    as_of = x.get("as_of")
                    at = parse_instant(as_of) if as_of else now_us()
                    gold = set(x["gold"])
                    gold_recs = {g for g in gold if g.startswith("rec:")}
                    doc = m.pack(x["q"], budget_tokens=budget, as_of=as_of).to_dict()
                    got = {c for item in doc["items"] for c in item["citations"]}
                    base = search_bundle(m, x["q"], budget, at)
                    rows["pack"].append(len(gold & got) / len(gold))
                    rows["search"].append(len(gold & base) / len(gold))
                    if gold_recs:
                        rows["pack_records"].append(len(gold_recs & got) / len(gold_recs))
                        rows["search_records"].append(len(gold_recs & base) / len(gold_recs))
                    if gold - got:
                        misses.append({"q": x["q"], "missed": sorted(gold - got)})
                res["budgets"][str(budget)] = {k: sum(v) / len(v) for k, v in rows.items()} | {"pack_misses": misses}
        finally:
            m.close()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pack-quality.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"{len(qs)} questions over the bundled example; evidence recall of the bundle (all gold refs / records only)")
    print(f"{'budget':>8}{'pack':>10}{'search':>10}{'pack rec':>10}{'search rec':>12}")
    for budget, r in res["budgets"].items():
        print(f"{budget:>8}{r['pack']:>10.3f}{r['search']:>10.3f}{r['pack_records']:>10.3f}{r['search_records']:>12.3f}")
    worse = [b for b, r in res["budgets"].items() if r["pack"] <= r["search"]]
    if worse:
        print(f"pack finds no more than search alone at budget(s) {', '.join(worse)}", file=sys.stderr)


if __name__ == "__main__":
    main()
