"""The openclaw-mem fact-view workload, rebuilt: 200,000 facts on 10,000 projects, half status changes with
their ends, half ``uses``, each with a source; imported into a fresh store and timed (issue 25, item 2).

    python benchmarks/bench_openclaw.py [--facts 200000] [--projects 10000] [--tools 1000] [--runs 3]

Each project gets a history of status changes (idea, planned, active, paused, blocked, done), each change
an ``assert`` with ``valid_to`` set to the next change (its end; the last one open), and as many ``uses``
of tools, adopted on their own days and left open; every line cites one URL. The entities (projects and
tools) come first in the same file. Each run imports the file into a fresh store in a fresh process
(``Memory.import_jsonl``, opening the store not timed) and prints facts per second; the median is the
figure.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

STATUSES = ["idea", "planned", "active", "paused", "blocked", "done"]
CHILD = """
import sys, time, graphmem
m = graphmem.open(sys.argv[1], create=True)
t = time.perf_counter()
r = m.import_jsonl(sys.argv[2], strict=True)
dt = time.perf_counter() - t
assert r.ok, r.errors[:3]
print(dt)
"""


def lines(facts: int, projects: int, tools: int, seed: int = 25) -> list[str]:
    rng = random.Random(seed)
    out = [json.dumps({"op": "entity", "type": "Project", "name": f"Claw Project {i}"}) for i in range(projects)]
    out += [json.dumps({"op": "entity", "type": "Tool", "name": f"Claw Tool {i}"}) for i in range(tools)]
    per = facts // 2 // projects
    for p in range(projects):
        subject = f"project:claw-project-{p}"
        days = sorted(rng.sample(range(1, 3000), per + 1))
        for k in range(per):  # status changes, each ended by the next
            out.append(json.dumps({"op": "assert", "subject": subject, "predicate": "status",
                                   "object": STATUSES[(k + p) % len(STATUSES)], "valid_from": _day(days[k]),
                                   "valid_to": _day(days[k + 1]) if k + 1 < per else None,
                                   "sources": [f"https://claw.example.org/{p}/s{k}"]}))
        for k, t in enumerate(rng.sample(range(tools), per)):  # uses, each adopted on its day
            out.append(json.dumps({"op": "assert", "subject": subject, "predicate": "uses",
                                   "object": f"tool:claw-tool-{t}", "valid_from": _day(days[k]),
                                   "sources": [f"https://claw.example.org/{p}/u{k}"]}))
    return out


def _day(n: int) -> str:
    return (datetime.date(2015, 1, 1) + datetime.timedelta(days=n)).isoformat()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=200_000)
    ap.add_argument("--projects", type=int, default=10_000)
    ap.add_argument("--tools", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "claw.jsonl"
        src.write_text("\n".join(lines(a.facts, a.projects, a.tools)) + "\n", encoding="utf-8")
        times = []
        for r in range(a.runs):
            store = Path(tmp) / f"store{r}"
            out = subprocess.run([sys.executable, "-c", CHILD, str(store), str(src)], check=True,
                                 capture_output=True, text=True).stdout
            times.append(float(out.strip().splitlines()[-1]))
            print(f"run {r + 1}: {times[-1]:.2f} s, {a.facts / times[-1]:,.0f} facts/s")
        t = statistics.median(times)
        print(f"median: {t:.2f} s, {a.facts / t:,.0f} facts/s (target 85,000)")


if __name__ == "__main__":
    main()
