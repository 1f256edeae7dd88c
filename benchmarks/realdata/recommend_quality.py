#!/usr/bin/env python3
"""How well ``recommend`` matches real ideas to real projects: the awesome-python list.

    python benchmarks/realdata/recommend_quality.py [--data ../shared/data] [--holdout 0.2] [--seed 7]

The list becomes a store: each section (### heading) a Concept, described by its
italic blurb and its sub-headings; each library a Project, described by its own
one-line description, that RELATES_TO its section; a library that other
libraries' descriptions name (Django, Pydantic, PyTorch...) is a Tool instead, and
a library whose description names a Tool USES it. A seeded share of the Projects
is held out: they and their section links are not in the store. Each held-out
library's description is an idea; a hit is a Project of the held-out library's
section. Reported for ``recommend`` (top 10, now) and, in the same harness, for
a BM25-only baseline over the same Project descriptions (graphmem's own BM25,
names and descriptions, as the ``text`` lane indexes them):

- hit@1: the first result is in the right section; hit@10: one of the first ten is;
- MRR: the mean of 1 / rank of the first right result (0 when none of the ten is).

Leakage, as the data's README warns: section blurbs and item descriptions come from
the same authors, so the words of an item often echo its section's blurb; both
methods see the same text, and held-out items never are in the store.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

_ITEM = re.compile(r"^(\s*)- \[([^\]]+)\]\([^)]*\)\s*(?:-\s*(.*))?$")
_SUB = re.compile(r"^- ([^\[].*)$")


@dataclass
class Library:
    name: str
    section: str
    description: str


@dataclass
class Section:
    name: str
    blurb: str = ""
    subs: list[str] = field(default_factory=list)


def data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    for cand in (REPO.parent / "shared" / "data", REPO / "shared" / "data"):
        if cand.exists():
            return cand
    return REPO.parent / "shared" / "data"


def parse(readme: str) -> tuple[dict[str, Section], list[Library]]:
    """The sections and libraries under '## Projects' (up to the next '## ' heading)."""
    sections: dict[str, Section] = {}
    libs: list[Library] = []
    inside = False
    current: Section | None = None
    for line in readme.splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## Projects"
            continue
        if not inside:
            continue
        if line.startswith("### "):
            current = sections.setdefault(line[4:].strip(), Section(line[4:].strip()))
            continue
        if current is None:
            continue
        if line.startswith("_") and line.rstrip().endswith("_") and not current.blurb:
            current.blurb = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", line.strip().strip("_"))
            continue
        m = _ITEM.match(line)
        if m:
            desc = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", m[3] or "").strip()
            libs.append(Library(m[2].strip(), current.name, desc))
            continue
        s = _SUB.match(line)
        if s:
            current.subs.append(s[1].strip())
    return sections, libs


def _key(name: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", name.lower()))


def split(sections: dict[str, Section], libs: list[Library], share: float, seed: int
          ) -> tuple[list[Library], list[Library], set[str]]:
    """(kept, held out, names that become Tools). Unique names only; a Tool (named by another
    library's description) is never held out; a section keeps at least two Projects."""
    counts = defaultdict(int)
    for lib in libs:
        counts[_key(lib.name)] += 1
    libs = [x for x in libs if counts[_key(x.name)] == 1 and len(_key(x.name)) >= 3]
    names = {_key(x.name): x.name for x in libs}
    tools: set[str] = set()
    for lib in libs:
        words = f" {_key(lib.description)} "
        for k, n in names.items():
            if k != _key(lib.name) and f" {k} " in words:
                tools.add(n)
    rng = random.Random(seed)
    by_section: dict[str, list[Library]] = defaultdict(list)
    for lib in libs:
        if lib.name not in tools:
            by_section[lib.section].append(lib)
    held: list[Library] = []
    for _, members in sorted(by_section.items()):
        pool = sorted(members, key=lambda x: x.name)
        rng.shuffle(pool)
        n = min(round(len(pool) * share), len(pool) - 2)
        held.extend(pool[:max(n, 0)])
    held_names = {x.name for x in held}
    return [x for x in libs if x.name not in held_names], sorted(held, key=lambda x: x.name), tools


def store_lines(sections: dict[str, Section], kept: list[Library], tools: set[str]) -> list[str]:
    from graphmem.memory import slug
    out: list[dict[str, Any]] = []
    for s in sections.values():
        out.append({"op": "entity", "type": "Concept", "name": s.name,
                    "description": " ".join([s.blurb, *s.subs]).strip()})
    for lib in kept:
        out.append({"op": "entity", "type": "Tool" if lib.name in tools else "Project", "name": lib.name,
                    "description": lib.description})
    keys = {_key(lib.name): lib.name for lib in kept if lib.name in tools}
    when = "2025-01-01"
    for lib in kept:
        kind = "tool" if lib.name in tools else "project"
        ref = f"{kind}:{slug(lib.name)}"
        out.append({"op": "assert", "subject": ref, "predicate": "relates_to", "object": f"concept:{slug(lib.section)}",
                    "valid_from": when, "sources": ["https://github.com/vinta/awesome-python"]})
        words = f" {_key(lib.description)} "
        if kind == "project":
            for k, n in sorted(keys.items()):
                if f" {k} " in words:
                    out.append({"op": "assert", "subject": ref, "predicate": "uses", "object": f"tool:{slug(n)}",
                                "valid_from": when, "sources": ["https://github.com/vinta/awesome-python"]})
    return [json.dumps(x) for x in out]


def rank_of_first_hit(ranked: list[str], right: set[str]) -> int | None:
    return next((i for i, ref in enumerate(ranked, 1) if ref in right), None)


def scores(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    return {"hit@1": sum(1 for r in ranks if r == 1) / n, "hit@10": sum(1 for r in ranks if r is not None) / n,
            "mrr": sum(1 / r for r in ranks if r is not None) / n}


def evaluate(sections: dict[str, Section], libs: list[Library], share: float, seed: int) -> dict[str, Any]:
    """One split: build the store without the held-out libraries, ask with each one's description."""
    import graphmem
    from graphmem.memory import slug
    from graphmem.model.textindex import bm25_top, postings_of, terms, weights
    kept, held, tools = split(sections, libs, share, seed)
    with tempfile.TemporaryDirectory() as tmp:
        m = graphmem.open(Path(tmp) / "store", create=True)
        try:
            report = m.import_jsonl(store_lines(sections, kept, tools), strict=True)
            if not report.ok:
                raise SystemExit(f"the list did not import: {report.errors[:3]}")
            projects = m.store.entities("Project")
            section_of = {f"project:{slug(x.name)}": x.section for x in kept}
            right_of: dict[str, set[str]] = defaultdict(set)
            for e in projects:
                right_of[section_of[e.ref]].add(e.ref)
            postings, n_docs, n_tokens = postings_of(
                (i, " ".join([e.name, *e.aliases, e.description])) for i, e in enumerate(projects))

            def bm25(idea: str) -> list[str]:
                lists = []
                for t in sorted(set(terms(idea))):
                    p = postings.get(t)
                    if p is not None:
                        lists.append((p.ids, weights(p, n_docs, n_tokens)))
                return [projects[i].ref for i, _ in bm25_top(lists, 10)]

            ours: list[int | None] = []
            base: list[int | None] = []
            times: list[float] = []
            examples = []
            for lib in held:
                idea = lib.description or lib.name
                right = right_of[lib.section]
                t = time.perf_counter()
                doc = m.recommend(idea, top=10)
                times.append((time.perf_counter() - t) * 1000)
                ranked = [r.project.ref for r in doc.results]
                ours.append(rank_of_first_hit(ranked, right))
                base.append(rank_of_first_hit(bm25(idea), right))
                if len(examples) < 5 and doc.results:
                    examples.append({"library": lib.name, "section": lib.section, "idea": idea, "top": ranked[:3],
                                     "best_path": doc.results[0].paths[0].to_dict()["line"]})
        finally:
            m.close()
    times.sort()
    return {"seed": seed, "kept": len(kept), "tools": len(tools), "held_out": len(held),
            "recommend": scores(ours), "bm25_only": scores(base),
            "recommend_p50_ms": round(times[len(times) // 2], 2), "examples": examples}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="folder holding awesome-python/ (default: ../shared/data)")
    ap.add_argument("--holdout", type=float, default=0.2, help="share of each section's projects held out")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first split")
    ap.add_argument("--splits", type=int, default=5, help="held-out splits (seeds seed, seed+1, ...)")
    ap.add_argument("--out", default=str(REPO / "bench-results"))
    a = ap.parse_args(argv)
    readme = data_dir(a.data) / "awesome-python" / "README.md"
    if not readme.exists():
        raise SystemExit(f"no awesome-python list at {readme}; pass --data")
    sections, libs = parse(readme.read_text(encoding="utf-8"))
    runs = [evaluate(sections, libs, a.holdout, a.seed + i) for i in range(a.splits)]
    mean = {k: {m: sum(r[k][m] for r in runs) / len(runs) for m in ("hit@1", "hit@10", "mrr")}
            for k in ("recommend", "bm25_only")}
    res = {"data": str(readme), "sections": len(sections), "libraries": len(libs), "holdout": a.holdout,
           "splits": runs, "mean": mean}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "recommend-quality.json").write_text(json.dumps(res, indent=2) + "\n")
    r0 = runs[0]
    print(f"awesome-python: {len(sections)} sections, {len(libs)} libraries; per split {r0['kept']} in the store "
          f"({r0['tools']} of them Tools) and {r0['held_out']} held out as ideas")
    print(f"{'split':<8}{'method':<12}{'hit@1':>8}{'hit@10':>8}{'MRR':>8}")
    for r in [*runs, {"seed": "mean", **mean}]:
        for name, key in (("recommend", "recommend"), ("BM25 only", "bm25_only")):
            s = r[key]
            print(f"{r['seed']!s:<8}{name:<12}{s['hit@1']:>8.3f}{s['hit@10']:>8.3f}{s['mrr']:>8.3f}")
    print(f"recommend p50 per idea: {', '.join(str(r['recommend_p50_ms']) for r in runs)} ms")


if __name__ == "__main__":
    main()
