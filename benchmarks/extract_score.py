"""Score the extractor against a labelled file: precision and recall of mentions and assertions.

    python benchmarks/extract_score.py tests/data/extraction_labelled.jsonl [--store PATH] [--split dev|test] [--json]

Without ``--store`` the bundled example is built in a temporary folder, since the
labelled records speak of its entities. A proposal matches a label when subject,
predicate and object agree; for dates, a label's null ``valid_from`` means "the
record's time".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from graphmem.model.times import format_instant, parse_instant


def _pr(tp: int, fp: int, fn: int) -> dict[str, Any]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": round(p, 3), "recall": round(r, 3), "f1": round(f1, 3)}


def score(m: Any, labelled: Path, split: str | None = None) -> dict[str, Any]:
    """Compare ``m.extract_text`` proposals with each labelled line's ``expected`` (only the lines of
    ``split``, "dev" or "test", when given). ``applied`` scores what ``--apply`` writes: the proposed
    assertions and ends together; ``duplicate_entities`` counts proposed new entities whose name an
    existing entity already has (a name or alias, any case)."""
    counts = {k: [0, 0, 0] for k in ("mentions", "assertions", "assertions_dated", "ends", "applied", "plans")}
    by_category: dict[str, list[int]] = {}
    known = {n.lower() for names in m.store.all_names().values() for n in names} | {
        n.lower() for n in m.store.all_names()}
    duplicates: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    n = 0
    for line in labelled.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if split and item.get("meta", {}).get("split") != split:
            continue
        n += 1
        ts = parse_instant(item["ts"])
        ex = m.extract_text(item["text"], at=item["ts"]).items[0][1]
        expected = item["expected"]
        got_m = {x.ref for x in ex.mentions}
        want_m = set(expected["mentions"])
        got_a = {p.key() for p in ex.assertions}
        want_a = {(a["subject"], a["predicate"], str(a["object"])) for a in expected["assertions"]}
        got_e = {p.key() for p in getattr(ex, "ends", ())}
        want_e = {(a["subject"], a["predicate"], str(a["object"])) for a in expected.get("ends", [])}
        day = (format_instant(ts) or "")[:10]
        got_d = {(*p.key(), (format_instant(p.valid_from) or "")[:10]) for p in ex.assertions}
        want_d = {(a["subject"], a["predicate"], str(a["object"]), a["valid_from"] or day)
                  for a in expected["assertions"]}
        got_w = {("assert", *k) for k in got_a} | {("end", *k) for k in got_e}
        want_w = {("assert", *k) for k in want_a} | {("end", *k) for k in want_e}
        for key, got, want in (("mentions", got_m, want_m), ("assertions", got_a, want_a),
                               ("assertions_dated", got_d, want_d), ("ends", got_e, want_e),
                               ("applied", got_w, want_w)):
            c = counts[key]
            c[0] += len(got & want)
            c[1] += len(got - want)
            c[2] += len(want - got)
        # plans: a line of the plan category should give a plan (docs/lifecycle.md), any other line none
        planned, is_plan = bool(getattr(ex, "plans", ())), item.get("meta", {}).get("category") == "plan"
        counts["plans"][0 if planned and is_plan else 1 if planned else 2 if is_plan else 0] += planned or is_plan
        cat = by_category.setdefault(item.get("meta", {}).get("category", "?"), [0, 0, 0])
        cat[0] += len(got_w & want_w)
        cat[1] += len(got_w - want_w)
        cat[2] += len(want_w - got_w)
        for e in ex.entities:
            if e.name.lower() in known:
                duplicates.append({"id": item["id"], "name": e.name})
        if got_w != want_w:
            errors.append({"id": item["id"], "text": item["text"], "extra": sorted(map(list, got_w - want_w)),
                           "missed": sorted(map(list, want_w - got_w))})
    return {"schema": "graphmem.extract-score.v1", "records": n, "split": split,
            **{k: _pr(*v) for k, v in counts.items()},
            "by_category": {k: _pr(*v) for k, v in sorted(by_category.items())},
            "duplicate_entities": duplicates, "assertion_errors": errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labelled", type=Path)
    ap.add_argument("--store", type=Path, default=None, help="a store holding the labelled records' entities")
    ap.add_argument("--split", choices=("dev", "test"), help="score only the labelled lines of this half")
    ap.add_argument("--json", action="store_true", help="print the full report as JSON")
    a = ap.parse_args(argv)
    import graphmem
    from graphmem.demo import build_demo
    with tempfile.TemporaryDirectory() as tmp:
        m = graphmem.open(a.store) if a.store else build_demo(Path(tmp) / "store")
        try:
            report = score(m, a.labelled, a.split)
        finally:
            m.close()
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['records']} labelled records" + (f" ({a.split} half)" if a.split else ""))
        for k in ("mentions", "assertions", "assertions_dated", "ends", "applied", "plans"):
            r = report[k]
            print(f"{k:17} precision {r['precision']:.3f}  recall {r['recall']:.3f}  f1 {r['f1']:.3f}  "
                  f"(tp {r['tp']}, fp {r['fp']}, fn {r['fn']})")
        print("applied, by category:")
        for cat, r in report["by_category"].items():
            print(f"  {cat:15} precision {r['precision']:.3f}  recall {r['recall']:.3f}  (tp {r['tp']}, fp {r['fp']}, fn {r['fn']})")
        print(f"new entities proposed under an existing name: {len(report['duplicate_entities'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
