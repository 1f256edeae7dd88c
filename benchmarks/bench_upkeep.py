#!/usr/bin/env python3
"""Entity upkeep at scale: a merge of an entity with many statements, beside the raw Kuzu work it does.

    python benchmarks/bench_upkeep.py --scale 1000000 --statements 10000 [--root bench-stores] [--seed 42]

Builds (once per scale and seed, under ``--root``) the synthetic store of ``benchmarks/synth.py``
plus two projects, ``Merge Target`` and ``Merge Source``, the second with ``--statements``
statements of its own (``uses`` over the synthetic tools, a status history) and 100 statements of
other projects naming it. On a fresh copy of that store it times:

- ``merge``: ``Memory.merge_entities("Merge Target", "Merge Source")`` (wall, the store open and warm);
- ``rename`` and ``alias add`` of the merged-into entity, then ``unmerge`` of the merge;
- ``raw``: on another fresh copy, the same writes in raw Kuzu in one transaction: the new statement
  rows loaded with COPY from a ready-made file, the originals' retraction set by one query over
  their ids (the fastest form found, as the store does it), and the two touched subjects' rows
  written once (no reading, checking, view or edge work).

Prints one JSON document.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synth import generate  # noqa: E402

import graphmem  # noqa: E402


def build(root: Path, scale: int, statements: int, seed: int) -> Path:
    path = root / f"upkeep-{scale}-{statements}-{seed}"
    if (path / ".built").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "synth.jsonl"
        with open(lines, "w") as f:
            for obj in generate(scale, seed):
                f.write(json.dumps(obj) + "\n")
            f.write(json.dumps({"op": "entity", "type": "Project", "name": "Merge Target"}) + "\n")
            f.write(json.dumps({"op": "entity", "type": "Project", "name": "Merge Source",
                                "aliases": ["merge-src"]}) + "\n")
            statuses = ["idea", "planned", "active", "paused", "blocked", "done"]
            first = datetime.date(1990, 1, 1)
            for i in range(statements):
                day = (first + datetime.timedelta(days=i)).isoformat()  # every statement a different one
                if i % 3:
                    line = {"op": "assert", "subject": "project:merge-source", "predicate": "uses",
                            "object": f"tool:tool-{i % 50}", "valid_from": day}
                else:
                    line = {"op": "assert", "subject": "project:merge-source", "predicate": "status",
                            "object": statuses[i % 6], "valid_from": day, "sources": ["https://example.org/s"]}
                f.write(json.dumps(line) + "\n")
            for i in range(100):
                f.write(json.dumps({"op": "assert", "subject": f"project:project-{i}", "predicate": "depends_on",
                                    "object": "project:merge-source", "valid_from": "2024-01-01"}) + "\n")
        t = time.perf_counter()
        with graphmem.open(path, create=True) as m:
            rep = m.import_jsonl(str(lines), strict=True)
            assert rep.ok, rep.errors[:3]
        (path / ".built").write_text(json.dumps({"import_s": time.perf_counter() - t}))
    return path


def fresh_copy(src: Path, tmp: Path, name: str) -> Path:
    dst = tmp / name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.lock"))
    return dst


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


RAW_PARTS: dict[str, float] = {}


def raw_merge(path: Path, rows: list[list[Any]], retract_ids: list[int], subject_rows: list[tuple[str, str, str]],
              at: int) -> float:
    """The merge's writes in raw Kuzu (see the module docstring); wall ms."""
    import kuzu
    db = kuzu.Database(str(path / "graph.kuzu"))
    conn = kuzu.Connection(db)
    import csv as csvlib
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, dir=path, newline="") as f:
        w = csvlib.writer(f, delimiter="\t", quotechar='"', lineterminator="\n")
        for r in rows:
            w.writerow(["" if v is None else str(v) for v in r])
        csv = f.name
    ids = ", ".join(str(i) for i in retract_ids)
    parts: dict[str, float] = {}
    t = time.perf_counter()

    def part(name: str, query: str, params: dict[str, Any] | None = None) -> None:
        t0 = time.perf_counter()
        conn.execute(query, params) if params else conn.execute(query)
        parts[name] = parts.get(name, 0.0) + (time.perf_counter() - t0) * 1000

    part("begin", "BEGIN TRANSACTION")
    part("copy", f"COPY Assertion FROM '{csv}' (HEADER=false, AUTO_DETECT=false, DELIM='\t', QUOTE='\"', "
                 "ESCAPE='\"')")
    part("retract", f"UNWIND [{ids}] AS i MATCH (a:Assertion {{id: i}}) SET a.retracted_at = {at}, "
                    "a.retract_reason = 'merged'")
    for ref, log, view in subject_rows:
        part("subjects", "MATCH (s:Subject {ref: $r}) SET s.log = $l, s.view = $v", {"r": ref, "l": log, "v": view})
    part("commit", "COMMIT")
    part("checkpoint", "CHECKPOINT")
    ms = (time.perf_counter() - t) * 1000
    RAW_PARTS.update({k: round(v, 1) for k, v in parts.items()})
    conn.close()
    db.close()
    Path(csv).unlink()
    return ms


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=100_000)
    ap.add_argument("--statements", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--root", type=Path, default=Path("bench-stores"))
    args = ap.parse_args(argv)
    args.root.mkdir(parents=True, exist_ok=True)
    src = build(args.root, args.scale, args.statements, args.seed)
    res: dict[str, Any] = {"scale": args.scale, "statements": args.statements, "seed": args.seed}
    with tempfile.TemporaryDirectory(dir=args.root) as tmp_dir:
        tmp = Path(tmp_dir)
        store = fresh_copy(src, tmp, "merge")
        with graphmem.open(store) as m:
            res["store_statements"] = m.store.statement_count()
            m.current("Merge Target")  # warm
            before = m.store.statement_count()
            res["merge_ms"], r = timed(lambda: m.merge_entities("Merge Target", "Merge Source"))
            doc = r.to_dict()
            res["carried"] = len(doc["event"]["carried"])
            res["retracted"] = len(doc["retracted"])
            res["written"] = m.store.statement_count() - before
            # what the raw writes need: the new rows, the retracted ids, the two subjects' rows as written
            created = {int(x[5:]) for x in doc["created"]}
            new = [s for s in m.store.subject_log("project:merge-target") if s.id in created]
            subjects = [(ref, next(m.store.subject_logs(refs=[ref]))[1], "[]")
                        for ref in ("project:merge-target", "project:merge-source")]
            at = new[0].recorded_at if new else 0
            rows = [[s.id + 10_000_000, s.op, s.subject, s.predicate, s.object, s.object_kind, s.valid_from,
                     s.valid_to, s.recorded_at, None, None, json.dumps(list(s.sources)), s.asserted_by, s.trust]
                    for s in new]
            retract_ids = [int(a[5:]) for a in doc["retracted"]]
            res["rename_ms"], _ = timed(lambda: m.rename_entity("Merge Target", "Merge Target Renamed"))
            res["alias_add_ms"], _ = timed(lambda: m.add_aliases("project:merge-target", ["mt-alias"]))
            res["current_after_ms"], cur = timed(lambda: m.current("project:merge-source"))
            res["current_facts_after"] = len(cur.facts)
            res["unmerge_ms"], un = timed(lambda: m.unmerge_entity("project:merge-source"))
            res["restored"] = len(un.refs)
        raw_store = fresh_copy(src, tmp, "raw")
        res["raw_ms"] = raw_merge(raw_store, rows, retract_ids, subjects, at)
        res["raw_parts_ms"] = RAW_PARTS
        res["ratio"] = round(res["merge_ms"] / res["raw_ms"], 2) if res["raw_ms"] else None
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
