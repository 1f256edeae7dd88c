#!/usr/bin/env python3
"""graphmem on real temporal data: YAGO11k and WIKIDATA12k (see docs/realdata.md and docs/benchmarks.md).

    python benchmarks/realdata/bench_real.py [--datasets yago11k wikidata12k] [--data-dir DIR] [--out bench-results/]

For each dataset: convert it with benchmarks/realdata/convert.py (timed on its
own), import it into a fresh store opened with the extra ontology and
predicates of benchmarks/realdata/, then lint (time, counts by code, three
example messages per code), rebuild --check, warm ``current`` latencies, and a
few sample answers (a footballer's club as of a year, their timeline, and who
played for that club then). A table goes to stdout and the figures to
``<out>/real-<name>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONVERT = HERE / "convert.py"
ONTOLOGY = HERE / "ontology"
PREDICATES = HERE / "predicates"
PY = sys.executable

# Sample questions: a well-known footballer and a date inside a club spell (in the data). Wikidata
# has no labels in these files: Q615 is Lionel Messi, Q7156 FC Barcelona, Q79800 the Argentina
# national team. If a subject is missing (the converter changed), the person with the most
# plays_for statements is asked about instead.
SAMPLES: dict[str, dict[str, str]] = {
    "yago11k": {"subject": "person:frank-lampard", "label": "Frank Lampard", "as_of": "2010-06-01"},
    "wikidata12k": {"subject": "person:q615", "label": "Q615 (Lionel Messi)", "as_of": "2010-06-01"},
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def default_data_dir() -> Path:
    """The shared data folder: ``shared/data`` beside the repository (i.e. ``../shared/data``)."""
    for cand in (REPO.parent / "shared" / "data", REPO / "shared" / "data"):
        if (cand / "yago11k").is_dir():
            return cand
    return REPO.parent / "shared" / "data"


def brief(iv: dict[str, Any]) -> str:
    o = iv["object"] or {}
    obj = o.get("name") or o.get("ref") if o.get("kind") == "entity" else o.get("value")
    to = (iv["valid_to"] or "...")[:10]
    conf = f" conflicts {','.join(iv['conflicts'])}" if iv["conflicts"] else ""
    return f"{iv['predicate']} {obj} [{iv['valid_from'][:10]}, {to}) {','.join(iv['assertions'])}{conf}"


def bench_dataset(name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    import graphmem

    sys.path.insert(0, str(HERE.parent))
    from bench import machine  # benchmarks/bench.py: cpus, memory, versions, graphmem source hash

    res: dict[str, Any] = {"dataset": name, "data_dir": str(args.data_dir), "machine": machine(),
                           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "loadavg_start": os.getloadavg()}
    jsonl = tmp / f"{name}.jsonl"
    summary_json = tmp / f"{name}-summary.json"
    log(f"{name}: converting")
    t0 = time.perf_counter()
    subprocess.run([PY, str(CONVERT), name, "--data-dir", str(args.data_dir), "--out", str(jsonl),
                    "--summary-json", str(summary_json)], check=True, stderr=subprocess.DEVNULL)
    summ = json.loads(summary_json.read_text("utf-8"))
    res["convert"] = {"seconds": time.perf_counter() - t0, "assert_lines": summ.get("assert_lines"),
                      "entities_by_type": summ.get("entities_by_type"), "bytes": jsonl.stat().st_size}

    store = tmp / f"store-{name}"
    t0 = time.perf_counter()
    m = graphmem.open(store, ontology_dirs=[ONTOLOGY], predicate_dirs=[PREDICATES], create=True)
    res["open_seconds"] = time.perf_counter() - t0
    log(f"{name}: importing")
    t0 = time.perf_counter()
    rep = m.import_jsonl(jsonl)
    wall = time.perf_counter() - t0
    res["import"] = {"seconds": wall, "statements": rep.statements, "entities": rep.entities_created,
                     "lines": rep.lines, "errors": len(rep.errors), "first_errors": [list(e) for e in rep.errors[:3]],
                     "rate_per_s": rep.statements / wall if wall else 0.0}

    log(f"{name}: lint")
    t0 = time.perf_counter()
    lint = m.lint()
    res_lint: dict[str, Any] = {"seconds": time.perf_counter() - t0, "issues": len(lint.issues)}
    by_code = Counter(i.code for i in lint.issues)
    examples: dict[str, list[str]] = defaultdict(list)
    for i in lint.issues:
        if len(examples[i.code]) < 3:
            examples[i.code].append(i.message)
    res_lint["by_code"] = dict(sorted(by_code.items()))
    res_lint["by_severity"] = dict(sorted(Counter(i.severity for i in lint.issues).items()))
    res_lint["examples"] = dict(sorted(examples.items()))
    res["lint"] = res_lint

    log(f"{name}: rebuild --check, rebuild")
    t0 = time.perf_counter()
    chk = m.rebuild(check=True)
    res["rebuild_check"] = {"seconds": time.perf_counter() - t0, "drift": len(chk.drift)}
    t0 = time.perf_counter()
    rb = m.rebuild()
    res["rebuild"] = {"seconds": time.perf_counter() - t0, "counts": rb.counts}

    # warm current over random subjects
    subjects = sorted(r[0] for r in m.store.cypher("MATCH (s:Subject) RETURN s.ref"))
    refs = random.Random(args.seed).sample(subjects, min(args.samples, len(subjects)))
    for r in refs[:20]:
        m.current(r)
    ms = []
    for r in refs:
        t0 = time.perf_counter()
        m.current(r)
        ms.append((time.perf_counter() - t0) * 1000)
    res["current"] = {"n": len(ms), "p50_ms": pct(ms, 50), "p99_ms": pct(ms, 99), "mean_ms": statistics.fmean(ms)}

    # sample answers
    sample = dict(SAMPLES.get(name, {}))
    if not sample or m.store.entity(sample["subject"]) is None:
        top = m.store.cypher("MATCH (a:Assertion) WHERE a.predicate = 'plays_for' RETURN a.subject, count(*) AS n "
                             "ORDER BY n DESC, a.subject LIMIT 1")
        ref = top[0][0]
        first = m.timeline(ref, predicate="plays_for").intervals[0]
        sample = {"subject": ref, "label": ref, "as_of": first.valid_from.date().isoformat()}
    subj, as_of = sample["subject"], sample["as_of"]
    t0 = time.perf_counter()
    cur = m.current(subj, as_of=as_of)
    t_cur = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    tl = m.timeline(subj, predicate="plays_for")
    t_tl = (time.perf_counter() - t0) * 1000
    clubs = [iv for iv in cur.facts if iv.predicate == "plays_for"]
    who: dict[str, Any] = {}
    if clubs:
        club = str(clubs[0].object)
        t0 = time.perf_counter()
        fr = m.facts(predicate="plays_for", object=club, as_of=as_of)
        who = {"club": club, "club_name": clubs[0].object_name, "as_of": as_of,
               "ms": (time.perf_counter() - t0) * 1000, "players": len(fr.facts),
               "first": [f"{e.ref} ({e.name}) {brief(iv.to_dict())}" for e, iv in fr.view[:5]]}
    res["sample"] = {
        **sample,
        "current": {"ms": t_cur, "facts": [brief(iv.to_dict()) for iv in cur.facts]},
        "timeline_plays_for": {"ms": t_tl, "intervals": [brief(iv.to_dict()) for iv in tl.intervals],
                               "events": len(tl.events),
                               "statements": [f"{e.fact} {e.object_name} [{e.valid_from:%Y-%m-%d}, "
                                              f"{'...' if e.valid_to is None else f'{e.valid_to:%Y-%m-%d}'})"
                                              for e in tl.events if e.op == "assert"]},
        "facts_plays_for_club": who,
    }
    m.close()
    res["loadavg_end"] = os.getloadavg()
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return res


def table(res: dict[str, Any]) -> str:
    imp, lint, s = res["import"], res["lint"], res["sample"]
    rows = [
        ("convert (not import)", f"{res['convert']['seconds']:.2f} s"),
        ("import wall (view included)", f"{imp['seconds']:.2f} s"),
        ("import rate", f"{imp['rate_per_s']:,.0f} statements/s"),
        ("statements / entities / errors", f"{imp['statements']:,} / {imp['entities']:,} / {imp['errors']}"),
        ("lint", f"{lint['seconds']:.2f} s, {lint['issues']:,} issues {lint['by_severity']}"),
        ("rebuild --check", f"{res['rebuild_check']['seconds']:.2f} s, drift {res['rebuild_check']['drift']}"),
        ("rebuild", f"{res['rebuild']['seconds']:.2f} s {res['rebuild']['counts']}"),
        (f"current p50 / p99 (n={res['current']['n']})",
         f"{res['current']['p50_ms']:.3f} / {res['current']['p99_ms']:.3f} ms"),
    ]
    w = max(len(a) for a, _ in rows)
    out = [f"== {res['dataset']} (load avg {res['loadavg_start'][0]:.1f} at start) =="]
    out += [f"{a:<{w}}  {b}" for a, b in rows]
    out.append("lint by code:")
    for code, n in lint["by_code"].items():
        out.append(f"  {code:<24} {n:>6,}")
        out += [f"      e.g. {msg}" for msg in lint["examples"][code]]
    out.append(f"current {s['label']} as of {s['as_of']} ({s['current']['ms']:.1f} ms):")
    out += [f"  {f}" for f in s["current"]["facts"]]
    tl = s["timeline_plays_for"]
    out.append(f"timeline {s['label']} plays_for ({tl['ms']:.1f} ms): {len(tl['statements'])} statements")
    out += [f"  stated: {f}" for f in tl["statements"]]
    out.append(f"  -> {len(tl['intervals'])} intervals in the view (plays_for is one-valued):")
    out += [f"  {f}" for f in tl["intervals"]]
    who = s["facts_plays_for_club"]
    if who:
        out.append(f"facts plays_for object={who['club']} ({who['club_name']}) as of {who['as_of']}: "
                   f"{who['players']} players ({who['ms']:.1f} ms); first:")
        out += [f"  {f}" for f in who["first"]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["yago11k", "wikidata12k"], choices=["yago11k", "wikidata12k"])
    ap.add_argument("--data-dir", type=Path, default=default_data_dir(),
                    help="the folder holding yago11k/ and wikidata12k/ (default: ../shared/data beside the repo)")
    ap.add_argument("--out", type=Path, default=REPO / "bench-results", help="folder for real-<name>.json")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--samples", type=int, default=500, help="random subjects for the current latency (default 500)")
    ap.add_argument("--tmp", default=None, help="where to put the temporary JSONL and stores")
    ap.add_argument("--keep", action="store_true", help="keep the temporary files and stores")
    args = ap.parse_args(argv)
    if not (args.data_dir / "yago11k").is_dir():
        raise SystemExit(f"no data in {args.data_dir}: pass --data-dir (the folder holding yago11k/)")
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="graphmem-real-", dir=args.tmp))
    try:
        for name in args.datasets:
            res = bench_dataset(name, args, tmp)
            (args.out / f"real-{name}.json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n",
                                                        encoding="utf-8")
            print(table(res), flush=True)
            print(flush=True)
            log(f"{name}: wrote {args.out / f'real-{name}.json'}")
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
