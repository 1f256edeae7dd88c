"""Score the extractor against a labelled file: precision and recall of mentions and assertions.

    python benchmarks/extract_score.py tests/data/extraction_labelled.jsonl [--store PATH] [--json]

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


def score(m: Any, labelled: Path) -> dict[str, Any]:
    """Compare ``m.extract_text`` proposals with each labelled line's ``expected``."""
    counts = {k: [0, 0, 0] for k in ("mentions", "assertions", "assertions_dated")}
    errors: list[dict[str, Any]] = []
    n = 0
    for line in labelled.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        n += 1
        ts = parse_instant(item["ts"])
        ex = m.extract_text(item["text"], at=item["ts"]).items[0][1]
        got_m = {x.ref for x in ex.mentions}
        want_m = set(item["expected"]["mentions"])
        got_a = {p.key() for p in ex.assertions}
        want_a = {(a["subject"], a["predicate"], str(a["object"])) for a in item["expected"]["assertions"]}
        day = (format_instant(ts) or "")[:10]
        got_d = {(*p.key(), (format_instant(p.valid_from) or "")[:10]) for p in ex.assertions}
        want_d = {(a["subject"], a["predicate"], str(a["object"]), a["valid_from"] or day)
                  for a in item["expected"]["assertions"]}
        for key, got, want in (("mentions", got_m, want_m), ("assertions", got_a, want_a),
                               ("assertions_dated", got_d, want_d)):
            c = counts[key]
            c[0] += len(got & want)
            c[1] += len(got - want)
            c[2] += len(want - got)
        if got_a != want_a:
            errors.append({"id": item["id"], "text": item["text"], "extra": sorted(map(list, got_a - want_a)),
                           "missed": sorted(map(list, want_a - got_a))})
    return {"schema": "graphmem.extract-score.v1", "records": n,
            **{k: _pr(*v) for k, v in counts.items()}, "assertion_errors": errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labelled", type=Path)
    ap.add_argument("--store", type=Path, default=None, help="a store holding the labelled records' entities")
    ap.add_argument("--json", action="store_true", help="print the full report as JSON")
    a = ap.parse_args(argv)
    import graphmem
    from graphmem.demo import build_demo
    with tempfile.TemporaryDirectory() as tmp:
        m = graphmem.open(a.store) if a.store else build_demo(Path(tmp) / "store")
        try:
            report = score(m, a.labelled)
        finally:
            m.close()
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['records']} labelled records")
        for k in ("mentions", "assertions", "assertions_dated"):
            r = report[k]
            print(f"{k:17} precision {r['precision']:.3f}  recall {r['recall']:.3f}  f1 {r['f1']:.3f}  "
                  f"(tp {r['tp']}, fp {r['fp']}, fn {r['fn']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
