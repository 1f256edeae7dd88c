#!/usr/bin/env python3
"""recommend beside a hub: the same store with and without one Tool that 700 projects use.

    python benchmarks/bench_recommend_hub.py --scales 10000 100000 [--root bench-stores] [--hub 700]

Per scale, two copies of the store ``benchstore.py`` builds (N assertions) get the same
Tool, "Keystone", related to two Concepts. In the *hub* copy ``--hub`` projects (drawn
with a fixed seed) USE it; in the *plain* copy three of them do, an ordinary tool. Every
idea is one of ``bench_recommend.py``'s ideas with "on Keystone" added, so each walk
starts at the tool (the worst case: the hub is a seed, and its concepts are one hop away).
Both stores are timed in one process, interleaved idea by idea, warm (the first call of
each is left out). The target (issue 20): hub p50 <= 1.5 x plain p50. Results go to
``<out>/bench-recommend-hub-<scale>.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import machine, sample, summary  # noqa: E402
from bench_recommend import ideas  # noqa: E402
from benchstore import _names, ensure  # noqa: E402

import graphmem  # noqa: E402

TARGET_RATIO = 1.5
HUB = "tool:keystone"


def add_hub(m: graphmem.Memory, projects: list[str], concepts: list[str]) -> None:
    lines: list[dict[str, Any]] = [{"op": "entity", "type": "Tool", "name": "Keystone",
                                    "description": "A shared platform library every team builds on."}]
    lines += [{"op": "assert", "subject": HUB, "predicate": "relates_to", "object": c, "valid_from": "2024-01-01"}
              for c in concepts]
    lines += [{"op": "assert", "subject": p, "predicate": "uses", "object": HUB, "valid_from": "2024-01-01"}
              for p in projects]
    report = m.import_jsonl([json.dumps(x) for x in lines], strict=True)
    if not report.ok:
        raise SystemExit(f"the hub did not import: {report.errors[:3]}")


def bench_scale(scale: int, a: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    src = ensure(Path(a.root), scale, a.seed)
    info = json.loads((src / ".benchstore.json").read_text())
    names = _names(info["entities"])
    rng = random.Random(a.seed + 17)
    slug = lambda kind, n: f"{kind}:{n.lower().replace(' ', '-')}"  # noqa: E731
    n_hub = min(a.hub, len(names["Project"]) * 4 // 5)  # a 10k store has 500 projects: 400 of them
    users = [slug("project", n) for n in rng.sample(names["Project"], n_hub)]
    concepts = [slug("concept", n) for n in rng.sample(names["Concept"], 2)]
    stores = {}
    for kind, n in (("plain", 3), ("hub", n_hub)):
        path = tmp / f"{kind}-{scale}"
        shutil.copytree(src, path)
        m = graphmem.open(path)
        add_hub(m, users[:n], concepts)
        stores[kind] = m
    try:
        idea_list = [f"{i} on Keystone" for i in ideas(a.ideas, info["entities"], a.seed)]
        for m in stores.values():
            m.recommend(idea_list[0])
        plain, hub = sample([lambda i: stores["plain"].recommend(i), lambda i: stores["hub"].recommend(i)],
                            idea_list, budget_s=a.budget, warm=5)
        top = stores["hub"].recommend(idea_list[0]).to_dict()["results"]
        res = {"scale": scale, "hub_projects": n_hub, "store": info, "machine": machine(),
               "plain": summary(plain), "hub": summary(hub),
               "ratio_p50": summary(hub)["p50_ms"] / summary(plain)["p50_ms"],
               "example": {"idea": idea_list[0], "top": [r["project"]["ref"] for r in top]}}
    finally:
        for m in stores.values():
            m.close()
    return res


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[10_000])
    ap.add_argument("--root", default="bench-stores", help="where benchstore.py keeps its stores")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--hub", type=int, default=700, help="projects that use the hub tool")
    ap.add_argument("--ideas", type=int, default=300)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per scale (both stores together)")
    ap.add_argument("--out", default="bench-results")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{'scale':>10}{'hub':>6}{'n':>6}{'plain p50':>11}{'hub p50':>10}{'plain p99':>11}{'hub p99':>10}{'ratio':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for scale in a.scales:
            res = bench_scale(scale, a, Path(tmp))
            (out / f"bench-recommend-hub-{scale}.json").write_text(json.dumps(res, indent=2) + "\n")
            p, h = res["plain"], res["hub"]
            ok = "met" if res["ratio_p50"] <= TARGET_RATIO else "MISSED"
            print(f"{scale:>10,}{res['hub_projects']:>6}{h['n']:>6}{p['p50_ms']:>11.1f}{h['p50_ms']:>10.1f}{p['p99_ms']:>11.1f}"
                  f"{h['p99_ms']:>10.1f}{res['ratio_p50']:>8.2f}  (target <= {TARGET_RATIO}: {ok})")


if __name__ == "__main__":
    main()
