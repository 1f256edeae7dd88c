"""A seeded synthetic store for benchmarks: entities and a history of statements as import JSONL.

Shape at N assertions: N/10 entities (projects, tools, people, concepts, repos,
decisions), each project with a status history, owners changing hands, tools
adopted and ended, priorities and summaries; about 1% of statements are ends
and 0.1% are retracted. Same seed, same file, byte for byte.

    python benchmarks/synth.py 100000 --out /tmp/synth-100k.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator

STATUSES = ["idea", "planned", "active", "paused", "blocked", "done", "archived"]
DAY = 86400
BASE = 1_577_836_800  # 2020-01-01


def _iso(ts: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _day(ts: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d")


def generate(n_assertions: int, seed: int = 42, n_entities: int | None = None) -> Iterator[dict[str, object]]:
    """Import lines: entities first, then ~``n_assertions`` statements in record-time order."""
    rng = random.Random(seed)
    n_ent = n_entities or max(60, n_assertions // 10)
    kinds = {"Project": 0.5, "Tool": 0.2, "Person": 0.1, "Concept": 0.1, "Repo": 0.05, "Decision": 0.05}
    refs: dict[str, list[str]] = {k: [] for k in kinds}
    for kind, share in kinds.items():
        prefix = kind.lower()
        for i in range(max(3, int(n_ent * share))):
            name = f"{kind} {i}"
            refs[kind].append(f"{prefix}:{kind.lower()}-{i}")
            yield {"op": "entity", "type": kind, "name": name, "description": f"synthetic {kind.lower()} number {i}"}
    subjects = refs["Project"]
    stmts: list[tuple[int, dict[str, object]]] = []
    fact = 0
    per_subject = max(1, n_assertions // len(subjects))
    for s in subjects:
        t = BASE + rng.randrange(0, 400) * DAY
        using: list[str] = []
        for _ in range(per_subject):
            t += rng.randrange(1, 30) * DAY
            r = rng.random()
            src = [f"https://notes.example.org/{rng.randrange(10**6)}"] if rng.random() < 0.8 else []
            line: dict[str, object]
            if r < 0.3:
                line = {"op": "assert", "subject": s, "predicate": "status", "object": rng.choice(STATUSES),
                        "valid_from": _day(t)}
            elif r < 0.65:
                tool = rng.choice(refs["Tool"])
                line = {"op": "assert", "subject": s, "predicate": "uses", "object": tool, "valid_from": _day(t)}
                using.append(tool)
            elif r < 0.66 and using:
                tool = using.pop(rng.randrange(len(using)))
                line = {"op": "end", "subject": s, "predicate": "uses", "object": tool, "at": _day(t + DAY)}
            elif r < 0.75:
                line = {"op": "assert", "subject": s, "predicate": "owner", "object": rng.choice(refs["Person"]),
                        "valid_from": _day(t)}
            elif r < 0.85:
                line = {"op": "assert", "subject": s, "predicate": "relates_to", "object": rng.choice(refs["Concept"]),
                        "valid_from": _day(t)}
            elif r < 0.93:
                line = {"op": "assert", "subject": s, "predicate": "priority", "object": f"p{rng.randrange(4)}",
                        "valid_from": _day(t)}
            else:
                line = {"op": "assert", "subject": s, "predicate": "summary",
                        "object": f"state of {s} at step {fact}", "valid_from": _day(t)}
            line["sources"] = src
            line["recorded_at"] = _iso(t + rng.randrange(0, 3 * DAY))
            fact += 1
            stmts.append((fact, line))
    for _, line in stmts:
        yield line
    for f in range(1, fact + 1, 997):
        yield {"op": "retract", "fact": f"fact:{f}", "reason": "synthetic correction", "at": "2026-01-01T00:00:00Z"}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("assertions", type=int)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--entities", type=int, default=None, help="entity count (default: assertions / 10)")
    ap.add_argument("--out", default="-")
    a = ap.parse_args(argv)
    out = sys.stdout if a.out == "-" else open(a.out, "w", encoding="utf-8")  # noqa: SIM115
    with out:
        for line in generate(a.assertions, a.seed, a.entities):
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
