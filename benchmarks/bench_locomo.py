#!/usr/bin/env python3
"""Conversational memory on LoCoMo: turn-level evidence recall of search and pack, beside a plain BM25.

    python benchmarks/bench_locomo.py [--data ../shared/data/locomo-dev/locomo-dev.json] [--budgets 200 500 1000]

Each conversation gets a fresh store, built through the product (``Memory.ingest``, what
``graphmem ingest`` runs): each turn is one record, ``{"id": dia_id, "text": "Speaker: words",
"ts": the session's time, "kind": "message", "source": "<sample>/session_<n>", "meta": {...}}``
(a shared photo's caption is part of the turn's text, as the conversation shows it). For each
question with evidence turns:

- ``search r@k``: the share of the question's evidence turns among ``Memory.search(q, limit=k)``;
- ``bm25 r@k``: the same for a plain Okapi BM25 (k1 1.2, b 0.75; lower-cased words, no stemming, no
  stop list) over the same turns, written here;
- ``pack @B``: the share of evidence turns ``Memory.pack(q, budget_tokens=B)`` cites;
- ``search @B``: search's hits in rank order as evidence lines formatted as pack formats them
  (``benchmarks/pack_quality.py``'s ``search_bundle``), as many as fit the same budget;
- with ``--tail N``, ``tail @B``: the same for ``Memory.pack(q, budget_tokens=B, tail=N)``, the budget
  partitioned (guidance, the last N turns of the current session, then retrieval; docs/packing.md).

Figures are averaged per question, per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and overall; ``bench-results/locomo.json`` keeps them with the per-question ranks.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from pack_quality import search_bundle  # noqa: E402  (one formatter of search-as-a-bundle, not two)

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"], 1)}
_WHEN = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_WORD = re.compile(r"\w+")


def session_time(text: str) -> str:
    """``1:56 pm on 8 May, 2023`` -> ``2023-05-08T13:56:00Z``."""
    m = _WHEN.search(text)
    if not m:
        raise SystemExit(f"bad session time {text!r}: expected like '1:56 pm on 8 May, 2023'")
    h, mi, ap, d, mon, y = m.groups()
    hour = int(h) % 12 + (12 if ap.lower() == "pm" else 0)
    return f"{int(y):04d}-{_MONTHS[mon.lower()]:02d}-{int(d):02d}T{hour:02d}:{int(mi):02d}:00Z"


def turns(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation's turns as ingest lines, in order."""
    conv = sample["conversation"]
    out = []
    n = 1
    while f"session_{n}" in conv:
        ts = session_time(conv[f"session_{n}_date_time"])
        for t in conv[f"session_{n}"]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            out.append({"id": t["dia_id"], "text": text, "ts": ts, "kind": "message",
                        "source": f"{sample['sample_id']}/session_{n}",
                        "meta": {"speaker": t["speaker"], "dia_id": t["dia_id"], "session": n}})
        n += 1
    return out


def evidence(qa: dict[str, Any]) -> set[str]:
    """The question's evidence turns (some are written ``D8:6; D9:17``)."""
    return {e for ev in qa.get("evidence") or [] for e in re.findall(r"D\d+:\d+", str(ev))}


class PlainBM25:
    """Okapi BM25 (k1 1.2, b 0.75) over lower-cased words: no stemming, no stop list."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.tfs = [Counter(_WORD.findall(d.lower())) for d in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        df: Counter[str] = Counter(w for tf in self.tfs for w in tf)
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        words = list(dict.fromkeys(_WORD.findall(query.lower())))
        scores = []
        for i, tf in enumerate(self.tfs):
            s = 0.0
            for w in words:
                f = tf.get(w)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg))
            if s > 0:
                scores.append((-s, i))
        return [i for _, i in sorted(scores)[:k]]


def recall(gold: set[str], got: set[str] | list[str]) -> float:
    return len(gold & set(got)) / len(gold)


def run_conversation(sample: dict[str, Any], budgets: list[int], root: Path, rows: list[dict[str, Any]],
                     timings: dict[str, list[float]], tail: int = 0) -> None:
    import graphmem
    from graphmem.model.times import now_us
    lines = turns(sample)
    m = graphmem.open(root / sample["sample_id"], create=True)
    try:
        t0 = time.perf_counter()
        report = m.ingest(lines)
        timings["ingest_s"].append(time.perf_counter() - t0)
        if report.errors:
            raise SystemExit(f"{sample['sample_id']}: ingest errors {report.errors[:3]}")
        dia = {ref: line["id"] for ref, line in zip(report.stored, lines, strict=True)}
        bm25 = PlainBM25([line["text"] for line in lines])
        now = now_us()
        for qa in sample["qa"]:
            gold = evidence(qa)
            if not gold:
                continue
            q = str(qa["question"])
            row: dict[str, Any] = {"sample": sample["sample_id"], "q": q, "category": qa["category"],
                                   "gold": sorted(gold)}
            t0 = time.perf_counter()
            hits = [dia[h.ref] for h in m.search(q, limit=10).results]
            timings["search_ms"].append((time.perf_counter() - t0) * 1e3)
            plain = [lines[i]["id"] for i in bm25.top(q, 10)]
            row["search"], row["bm25"] = hits, plain
            for k in (5, 10):
                row[f"search_r{k}"] = recall(gold, hits[:k])
                row[f"bm25_r{k}"] = recall(gold, plain[:k])
            for b in budgets:
                t0 = time.perf_counter()
                doc = m.pack(q, budget_tokens=b)
                timings[f"pack_ms_{b}"].append((time.perf_counter() - t0) * 1e3)
                if doc.used_tokens > b:
                    raise SystemExit(f"pack over budget: {doc.used_tokens} > {b} for {q!r}")
                got = {dia[c] for item in doc.items for c in item.citations if c in dia}
                base = {dia[c] for c in search_bundle(m, q, b, now) if c in dia}
                row[f"pack_{b}"] = recall(gold, got)
                row[f"cut_{b}"] = recall(gold, base)
                row[f"pack_items_{b}"] = len(doc.items)
                row[f"pack_used_{b}"] = doc.used_tokens
                if tail:
                    t0 = time.perf_counter()
                    with_tail = m.pack(q, budget_tokens=b, tail=tail)
                    timings.setdefault(f"pack_tail_ms_{b}", []).append((time.perf_counter() - t0) * 1e3)
                    if with_tail.used_tokens > b:
                        raise SystemExit(f"pack over budget with a tail: {with_tail.used_tokens} > {b} for {q!r}")
                    row[f"tail_{b}"] = recall(gold, {dia[c] for item in with_tail.items for c in item.citations
                                                     if c in dia})
                    row[f"tail_items_{b}"] = sum(item.lane == "tail" for item in with_tail.items)
            rows.append(row)
    finally:
        m.close()


def table(rows: list[dict[str, Any]], budgets: list[int], tail: int = 0) -> tuple[list[str], list[list[Any]]]:
    kinds = ("pack", "cut", "tail") if tail else ("pack", "cut")
    cols = ["search_r5", "search_r10", "bm25_r5", "bm25_r10", *(f"{k}_{b}" for b in budgets for k in kinds)]
    head = ["category", "n", "srch@5", "srch@10", "bm25@5", "bm25@10",
            *(f"{k}@{b}" for b in budgets for k in kinds)]
    out = []
    groups = [(f"{c} {CATEGORIES[c]}", [r for r in rows if r["category"] == c]) for c in sorted(CATEGORIES)]
    for name, rs in [*groups, ("all", rows)]:
        if rs:
            out.append([name, len(rs), *(sum(r[c] for r in rs) / len(rs) for c in cols)])
    return head, out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo-dev" / "locomo-dev.json")
    ap.add_argument("--budgets", type=int, nargs="+", default=[200, 500, 1000])
    ap.add_argument("--limit", type=int, default=0, help="only the first N conversations (0: all)")
    ap.add_argument("--out", default=str(REPO / "bench-results"))
    ap.add_argument("--tail", type=int, default=0, metavar="N",
                    help="also pack with a tail of the current session's last N turns (tail@B columns)")
    a = ap.parse_args(argv)
    if not a.data.is_file():
        raise SystemExit(f"bad --data {str(a.data)!r}: expected the LoCoMo JSON file")
    samples = json.loads(a.data.read_text(encoding="utf-8"))
    if a.limit:
        samples = samples[:a.limit]
    rows: list[dict[str, Any]] = []
    timings: dict[str, list[float]] = {"ingest_s": [], "search_ms": [], **{f"pack_ms_{b}": [] for b in a.budgets}}
    with tempfile.TemporaryDirectory() as tmp:
        for s in samples:
            run_conversation(s, a.budgets, Path(tmp), rows, timings, a.tail)
    head, body = table(rows, a.budgets, a.tail)
    p50 = {k: sorted(v)[len(v) // 2] for k, v in timings.items() if v}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"locomo-tail{a.tail}.json" if a.tail else "locomo.json"
    (out / name).write_text(json.dumps({"table": [head, *body], "p50": p50, "tail": a.tail, "rows": rows},
                                       indent=1) + "\n")
    print(f"{len(samples)} conversations, {len(rows)} questions with evidence; turn-level evidence recall")
    print(f"{head[0]:<16}{head[1]:>5}" + "".join(f"{h:>9}" for h in head[2:]))
    for r in body:
        print(f"{r[0]:<16}{r[1]:>5}" + "".join(f"{100 * v:>9.1f}" for v in r[2:]))
    print("p50: " + ", ".join(f"{k} {v:.1f}" for k, v in p50.items()))
    worse = [b for b in a.budgets if body[-1][head.index(f"pack@{b}")] < body[-1][head.index(f"cut@{b}")]]
    if worse:
        print(f"pack finds less than search cut to the same budget at {', '.join(map(str, worse))}", file=sys.stderr)


if __name__ == "__main__":
    main()
