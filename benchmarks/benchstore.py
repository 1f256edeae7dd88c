"""A seeded benchmark store with facts, evidence records and mentions, for the read paths that use all three.

    python benchmarks/benchstore.py 1000000 --root bench-stores [--seed 42]

At N assertions the store holds what ``benchmarks/synth.py`` makes (N/10
entities, N statements with their history), N/10 evidence records of team
chatter that name those entities (1 in 50 a rule or a constraint), and the
MENTIONS edges that graphmem's own extractor finds in them (its mentions only:
no proposal is applied, so the statements stay those of the synthetic file).
The store is built once per (N, seed) under ``--root`` and reused; a marker
file holds its parameters and build times. Kuzu lets one process open a store
at a time: copy it before using it from two processes at once.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_evidence import vocabulary  # noqa: E402
from synth import BASE, DAY, _iso, generate  # noqa: E402

import graphmem  # noqa: E402

MARKER = ".benchstore.json"
VERSION = 1  # bump when the store's content changes
TEMPLATES = [
    "{p} uses {t} for the {w} layer.",
    "We moved {p} from {t} to {t2} after the {w} review.",
    "{p} is now paused while we {w} the {w2}.",
    "{p} is blocked by {p2}: {w} {w2} still open.",
    "Standup: {w} {w2} on {p}, {t} upgrade done.",
    "Does {p} still depend on {t}? The {w} numbers say {n} ms.",
    "{t} latency is {n} ms after the {w} change in {p}.",
    "{p} is about {c}; see the {w} notes.",
    "{person} took over {p} this sprint.",
    "{t} is a good fit for {c} but the {w} cost is high.",
]
RULES = [
    "Rule: {p} must not use {t} in production until the {w} audit passes.",
    "Constraint: every change to {p} needs a {w} review by {person}.",
]


def _names(n_entities: int) -> dict[str, list[str]]:
    """The entity names synth.generate makes for ``n_entities`` (same shares, same numbering)."""
    kinds = {"Project": 0.5, "Tool": 0.2, "Person": 0.1, "Concept": 0.1, "Repo": 0.05, "Decision": 0.05}
    return {k: [f"{k} {i}" for i in range(max(3, int(n_entities * share)))] for k, share in kinds.items()}


def record_lines(n: int, n_entities: int, seed: int) -> list[str]:
    """``n`` ingest lines naming the synthetic entities, with filler words of Zipf frequencies."""
    rng = random.Random(seed + 7)
    names = _names(n_entities)
    words, weights = vocabulary(3000, seed)
    out = []
    for i in range(n):
        filler = rng.choices(words, weights, k=12)
        rule = rng.random() < 0.02
        kind = rng.choice(["rule", "constraint"]) if rule else rng.choice(["message", "note", "tool_result"])
        templates = RULES if rule else TEMPLATES
        text = " ".join(rng.choice(templates).format(
            p=rng.choice(names["Project"]), p2=rng.choice(names["Project"]), t=rng.choice(names["Tool"]),
            t2=rng.choice(names["Tool"]), c=rng.choice(names["Concept"]), person=rng.choice(names["Person"]),
            w=filler[0], w2=filler[1], n=rng.randrange(5, 500)) for _ in range(rng.randrange(1, 3)))
        text += " " + " ".join(filler[2:2 + rng.randrange(0, 8)])
        ts = _iso(BASE + rng.randrange(0, 2400) * DAY + rng.randrange(DAY))
        out.append(json.dumps({"id": f"b{i}", "ts": ts, "kind": kind, "text": text.strip(),
                               "importance": round(rng.random(), 2) if rng.random() < 0.3 else None}))
    return out


def build(path: Path, scale: int, seed: int = 42) -> dict[str, float | int]:
    """Build the store at ``path`` (which must not exist); returns the counts and build times."""
    n_entities = max(60, scale // 10)
    n_records = max(100, scale // 10)
    info: dict[str, float | int] = {"version": VERSION, "scale": scale, "seed": seed,
                                    "entities": n_entities, "records": n_records}
    with tempfile.TemporaryDirectory() as tmp:
        facts = Path(tmp) / "facts.jsonl"
        with facts.open("w", encoding="utf-8") as f:
            for line in generate(scale, seed, n_entities):
                f.write(json.dumps(line) + "\n")
        recs = Path(tmp) / "records.jsonl"
        recs.write_text("\n".join(record_lines(n_records, n_entities, seed)) + "\n", encoding="utf-8")
        with graphmem.open(path, create=True) as m:
            t = time.perf_counter()
            report = m.import_jsonl(facts, strict=True)
            info["import_s"] = round(time.perf_counter() - t, 2)
            if not report.ok:
                raise SystemExit(f"synthetic facts did not import: {report.errors[:3]}")
            t = time.perf_counter()
            ingested = m.ingest(recs)
            info["ingest_s"] = round(time.perf_counter() - t, 2)
            if ingested.errors:
                raise SystemExit(f"synthetic records did not ingest: {ingested.errors[:3]}")
            t = time.perf_counter()
            info["mentions"] = mention_all(m)
            info["mentions_s"] = round(time.perf_counter() - t, 2)
            info["statements"] = m.store.statement_count()
    return info


def mention_all(m: graphmem.Memory, batch: int = 20_000) -> int:
    """MENTIONS edges for every record, as graphmem's extractor finds them (no proposals applied)."""
    extractor = m.extractor()
    now = int(time.time() * 1_000_000)
    total = 0
    ids = m.store.pending_record_ids(None)
    for lo in range(0, len(ids), batch):
        part = ids[lo:lo + batch]
        recs = m.store.records_between(part[0], part[-1])
        items = []
        for rid in part:
            ex = extractor.extract(recs[rid].text, default_time=recs[rid].ts_us)
            items.append((rid, [(mm.ref, mm.span[0], mm.span[1], "name-or-alias") for mm in ex.mentions]))
        with m.store.transaction():
            total += m.store.replace_mentions(items)
            m.store.mark_extracted_many(part, now)
    return total


def ensure(root: Path, scale: int, seed: int = 42) -> Path:
    """The benchmark store for (scale, seed) under ``root``, built if it is missing or out of date."""
    path = root / f"store-{scale}-s{seed}"
    marker = path / MARKER
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("version") == VERSION:
            return path
    if path.exists():
        import shutil
        shutil.rmtree(path)
    info = build(path, scale, seed)
    marker.write_text(json.dumps(info, indent=2) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scale", type=int, help="assertions (entities and records: a tenth of it each)")
    ap.add_argument("--root", type=Path, default=Path("bench-stores"))
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args(argv)
    path = ensure(a.root, a.scale, a.seed)
    print(path)
    print((path / MARKER).read_text(), end="")


if __name__ == "__main__":
    main()
