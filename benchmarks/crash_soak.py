#!/usr/bin/env python3
"""Crash soak: the real executable killed (SIGKILL) at random moments of writes, many times.

    python benchmarks/crash_soak.py [--kills 20] [--seconds 600] [--seed 1] [--ops assert import-small ...]
                                    [--aim commit]

Per operation, on a fresh copy of the bundled example: run the command, kill it at a
random moment within 1.3x its own duration (timed once), then check that the store
opens with no temporary files left (or, after a bulk write killed while committing,
that it is refused with exit 3 and that `graphmem rebuild` repairs it), that every acknowledged write is there and an
unacknowledged import or ingest is there entirely or not at all, that `rebuild
--check` finds no drift and that lint finds no more errors than before. Prints kills
and failures per operation (docs/semantics.md, crash safety).

With ``--aim commit`` every kill is aimed at the window Kuzu cannot recover from: the soak
waits for the bulk write's commit mark to appear and kills 0-60 ms later (a command that
writes no mark is not killed). The store is then kept from run to run, so kills and repairs
pile up on one store, and after each repair the same write is run again uncut: it must
succeed (a repaired store once made every later bulk ingest crash).
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXE = [sys.executable, "-c", "from graphmem.cli import main; main()"]


def run(args: list[str], delay: float | None, mark: Path | None = None) -> tuple[bool | None, str]:
    """Run ``graphmem args``, SIGKILLed after ``delay`` s unless it ended: (acknowledged, stdout), where
    acknowledged is None when it was killed and False when it ended with another exit code than 0.
    With ``mark``, the delay counts from the moment that file appears (no kill if it never does)."""
    p = subprocess.Popen([*EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if mark is not None and delay is not None:
        while p.poll() is None and not mark.exists():
            time.sleep(0.0005)
        if p.poll() is not None:
            out, _ = p.communicate()
            return p.returncode == 0, out.decode()
    try:
        out, _ = p.communicate(timeout=delay)
        return p.returncode == 0, out.decode()
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None, ""


def files(tmp: Path) -> dict[str, Path]:
    def facts(n: int, name: str) -> Path:  # n new tools and n statements naming them
        f = tmp / f"{name}.jsonl"
        with f.open("w") as out:
            for i in range(n):
                out.write(json.dumps({"op": "entity", "type": "Tool", "name": f"Soak {name} {i}"}) + "\n")
                out.write(json.dumps({"op": "assert", "subject": "project:ledger", "predicate": "evaluates",
                                      "object": f"tool:soak-{name}-{i}", "valid_from": "2026-01-01"}) + "\n")
        return f
    recs = tmp / "records.jsonl"
    recs.write_text("".join(json.dumps({"id": f"s{i}", "ts": "2026-11-01T09:00:00Z", "kind": "note",
                                        "text": f"Soak note {i}: Ledger uses Kuzu now."}) + "\n" for i in range(3000)))
    mixed = tmp / "mixed.jsonl"  # entities row by row (under WAL_ROWS), statements by COPY
    with mixed.open("w") as out:
        for i in range(520):
            out.write(json.dumps({"op": "entity", "type": "Tool", "name": f"Soak mixed {i}"}) + "\n")
        for i in range(5000):  # a tool's summaries each from its own day (one day for all: 520 lint errors)
            day = datetime.date(2026, 1, 1) + datetime.timedelta(days=i // 520)
            out.write(json.dumps({"op": "assert", "subject": f"tool:soak-mixed-{i % 520}", "predicate": "summary",
                                  "object": f"mixed statement {i}", "valid_from": day.isoformat()}) + "\n")
    return {"small": facts(150, "small"), "bulk": facts(2500, "bulk"), "records": recs,  # bulk: past WAL_ROWS
            "mixed": mixed}


def state(store: Path) -> dict[str, Any]:
    import graphmem
    with graphmem.open(store) as m:
        left = list((store / "tmp").glob("tmp*")) if (store / "tmp").exists() else []
        return {"statements": m.store.statement_count(), "records": m.store.record_count(),
                "drift": not m.rebuild(check=True).ok, "errors": m.lint().to_dict()["counts"]["error"],
                "tmp_left": len(left)}


OPS: dict[str, Any] = {
    "assert": (lambda s, f, i: ["--store", s, "assert", "ledger", "priority", f"p{i % 3}"], None),
    "import-small": (lambda s, f, i: ["--store", s, "import", str(f["small"])], "statements"),
    "import-bulk": (lambda s, f, i: ["--store", s, "import", str(f["bulk"])], "statements"),
    "import-mixed": (lambda s, f, i: ["--store", s, "import", str(f["mixed"])], "statements"),
    "ingest": (lambda s, f, i: ["--store", s, "ingest", str(f["records"])], "records"),
    "rebuild": (lambda s, f, i: ["--store", s, "rebuild"], None),
    "rebuild-all": (lambda s, f, i: ["--store", s, "rebuild"], None),  # every view blanked first: a bulk reload
    "extract": (lambda s, f, i: ["--store", s, "extract", "--pending", "--apply"], None),
}


def repair(store: Path) -> list[str] | None:
    """The way out of a bulk write killed while it was being committed: every command refuses the
    store (exit 3) until ``graphmem rebuild`` repairs it. None when the store was not marked, else
    the problems found on the way."""
    if not (store / "commit-pending.json").exists():
        return None
    refused = subprocess.run([*EXE, "--store", str(store), "export"], capture_output=True, text=True)
    problems = [] if refused.returncode == 3 and "rebuild" in refused.stderr else ["a marked store was not refused"]
    ok, _ = run(["--store", str(store), "rebuild"], None)
    if not ok or (store / "commit-pending.json").exists():
        problems.append("rebuild did not repair the store")
    return problems


WRITTEN = {"import-small": 150, "import-bulk": 2500, "import-mixed": 5000, "ingest": 3000}


def soak(op: str, kills: int, deadline: float, rng: random.Random, demo: Path, tmp: Path,
         aim: str | None = None) -> dict[str, Any]:
    make, counted = OPS[op]
    f = files(tmp)
    done = {"kills": 0, "finished": 0, "repaired": 0, "failures": []}
    store = tmp / f"store-{op}"
    timing = None
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(demo, store)
    for i in range(kills):
        if time.monotonic() > deadline:
            break
        if aim is None or i == 0:
            shutil.rmtree(store, ignore_errors=True)
            shutil.copytree(demo, store)
        else:  # the next write's ids and keys must be new: a fresh copy of the records under other ids
            f = {**f, "records": _renumbered(f["records"], tmp, i)}
        if op == "rebuild-all":
            _blank_views(store)
        before = state(store)
        if timing is None:
            t = time.monotonic()
            if not run(make(str(store), f, i), None)[0]:  # the soak means nothing if the command fails anyway
                raise SystemExit(f"{op}: the command fails without a kill: {make(str(store), f, i)}")
            timing = time.monotonic() - t
            shutil.rmtree(store)
            shutil.copytree(demo, store)
            if op == "rebuild-all":
                _blank_views(store)
        if aim == "commit":
            ok, out = run(make(str(store), f, i), rng.uniform(0, 0.06), mark=store / "commit-pending.json")
        else:
            ok, out = run(make(str(store), f, i), rng.uniform(0.1, 1.3) * timing)
        done["finished" if ok is not None else "kills"] += 1
        if ok is False:
            done["failures"].append({"run": i, "killed": False, "problems": ["the command failed on its own"]})
            continue
        repaired = repair(store)
        done["repaired"] += repaired is not None
        problems = repaired or []
        after = state(store)
        if after["drift"]:
            problems.append("view drift")
        if after["errors"] > before["errors"]:
            problems.append(f"lint errors {before['errors']} -> {after['errors']}")
        if after["tmp_left"]:
            problems.append("temporary files left")
        if counted:
            delta = after[counted] - before[counted]
            if delta not in (0, WRITTEN[op]):
                # a killed import or ingest: all of its statements or records, or none
                problems.append(f"{counted}: {delta} written (all or nothing expected)")
            if ok and delta == 0:
                problems.append("acknowledged but not written")
        if op == "assert" and ok and after["statements"] != before["statements"] + 1:
            problems.append("acknowledged assert lost")
        if aim is not None and repaired is not None:  # the repaired store takes the same write, uncut
            again = subprocess.run([*EXE, *make(str(store), f, i)], capture_output=True, text=True)
            if again.returncode != 0:
                problems.append(f"the write repeated after the repair exited {again.returncode}: "
                                f"{again.stderr.strip()[-200:]}")
            elif state(store)["drift"]:
                problems.append("view drift after the repeated write")
        if problems:
            done["failures"].append({"run": i, "killed": ok is None, "problems": problems})
    return done


def _blank_views(store: Path) -> None:
    import graphmem
    with graphmem.open(store) as m:
        m.store.cypher("MATCH (s:Subject) SET s.view = '[]'")


def _renumbered(records: Path, tmp: Path, i: int) -> Path:
    out = tmp / f"records-{i}.jsonl"
    with records.open() as src, out.open("w") as dst:
        for line in src:
            obj = json.loads(line)
            obj["id"] = f"{obj['id']}-{i}"
            dst.write(json.dumps(obj) + "\n")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20, help="runs per operation")
    ap.add_argument("--seconds", type=float, default=600, help="time bound for the whole soak")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", nargs="+", choices=list(OPS),
                    help="default: all but rebuild-all (a whole-view reload, for --aim commit: a kill before its "
                    "commit leaves the blanked view, which only that mode repairs)")
    ap.add_argument("--aim", choices=["commit"], help="kill only inside a bulk write's commit window, "
                    "keeping one store across runs")
    a = ap.parse_args(argv)
    from graphmem.demo import build_demo
    rng = random.Random(a.seed)
    deadline = time.monotonic() + a.seconds
    results = {}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        demo = tmp / "demo"
        build_demo(demo).close()
        for op in a.ops or [op for op in OPS if op != "rebuild-all" or a.aim]:
            results[op] = soak(op, a.kills, deadline, rng, demo, tmp, a.aim)
            r = results[op]
            print(f"{op:<13} runs {r['kills'] + r['finished']:>3}  killed {r['kills']:>3}  finished {r['finished']:>3}  "
                  f"repaired {r['repaired']:>3}  "
                  f"failures {len(r['failures'])}" + (f"  e.g. {r['failures'][0]['problems']}" if r["failures"] else ""),
                  flush=True)
    Path("bench-results").mkdir(exist_ok=True)
    Path(f"bench-results/crash-soak{'-' + a.aim if a.aim else ''}.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
