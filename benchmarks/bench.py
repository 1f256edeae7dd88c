#!/usr/bin/env python3
"""graphmem benchmarks (SPEC 12): a seeded synthetic store per scale, each operation beside raw Kuzu.

    python benchmarks/bench.py --scales 10000 100000 1000000 [--seed 42] [--reps N] [--out bench-results/]

For every scale: generate the synthetic JSONL (benchmarks/synth.py, timed on its
own), import it into a fresh store in a child process (wall time of
``import_jsonl``, view included, and the child's peak RSS), load the import's
own bulk files into an empty store in raw Kuzu (the floor under the import: the
same rows, with no parsing, checking or view work), then, in this
process on the same store: warm latencies of ``current``, ``timeline`` and
``facts``, each interleaved with the raw Kuzu query that reads the same rows,
then rebuild, rebuild --check and lint, and finally a cold
``graphmem current X --json`` as a fresh process.
A table per scale goes to stdout (progress to stderr) and the figures to
``<out>/bench-<scale>.json``. See docs/benchmarks.md for what each figure means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SYNTH = HERE / "synth.py"
PY = sys.executable
MB = 1024 * 1024
# the predicate scan's raw read in layout 8: the facets of a predicate that may hold at $a (store/kuzu/views.py)
FACET_SCAN = ("MATCH (f:SubjectFacet) WHERE f.predicate = $p AND (f.since <= $a OR f.first <= $a AND $a < f.last) "
              "RETURN f.ref, CASE WHEN f.since <= $a THEN f.open END, CASE WHEN f.first <= $a AND $a < f.last "
              "THEN f.ended END")

# SPEC 12, stated for 1,000,000 assertions on 100,000 entities, 2 cores.
# name -> (threshold, "min" (value must be >=) or "max" (value must be <=), unit)
TARGETS: dict[str, tuple[float, str, str]] = {
    "import_vs_raw_load": (2.0, "max", "x raw Kuzu"),  # import wall / raw Kuzu load of the same rows, same run
    "import_peak_rss_mb": (1536, "max", "MB"),
    "rebuild_s": (10.0, "max", "s"),
    "lint_s": (15.0, "max", "s"),
    "current_p50_ms": (1.0, "max", "ms"),
    "current_p99_ms": (5.0, "max", "ms"),
    "timeline_p50_ms": (3.0, "max", "ms"),
    "cold_cli_ms": (400.0, "max", "ms"),
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# the import, in a child process (so its peak RSS is its own)
# ---------------------------------------------------------------------------

def _rss_now_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _keep_bulk_files(folder: Path) -> list[str]:
    """Hard-link every file the import bulk-loads into ``folder`` as its COPY runs, and note the COPY
    (naming the kept files), so that ``raw_load_child`` can replay the same loads in raw Kuzu."""
    from graphmem import store as store_mod

    folder.mkdir(parents=True, exist_ok=True)
    real = store_mod.Store._q
    copies: list[str] = []

    def q(self: Any, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        if query.startswith("COPY "):
            kept_query = query
            for path in re.findall(r"'(/[^']+)'", query):
                kept = folder / f"{len(copies)}-{Path(path).name}"
                try:
                    os.link(path, kept)
                except OSError:  # another file system
                    shutil.copyfile(path, kept)
                kept_query = kept_query.replace(f"'{path}'", f"'{kept}'")
            copies.append(kept_query)
        return real(self, query, params)

    store_mod.Store._q = q  # type: ignore[method-assign]
    return copies


def import_child(store: str, jsonl: str, keep: str | None = None) -> None:
    """Run by the child: open a fresh store, import, print one JSON line. With ``keep``, the bulk
    files are kept there for the raw Kuzu load of the same rows."""
    t0 = time.perf_counter()
    import graphmem
    t_imp = time.perf_counter() - t0
    t0 = time.perf_counter()
    m = graphmem.open(store, create=True)
    t_open = time.perf_counter() - t0
    copies = _keep_bulk_files(Path(keep)) if keep else []
    rss_before = _rss_now_kb()
    t0 = time.perf_counter()
    r = m.import_jsonl(jsonl)
    wall = time.perf_counter() - t0
    rss_after = _rss_now_kb()
    t0 = time.perf_counter()
    m.close()
    t_close = time.perf_counter() - t0
    if keep:
        (Path(keep) / "copies.json").write_text(json.dumps(copies), "utf-8")
    print(json.dumps({
        "seconds": wall, "report_seconds": r.seconds, "import_module_seconds": t_imp, "open_seconds": t_open,
        "close_seconds": t_close, "statements": r.statements, "retractions": r.retractions,
        "entities": r.entities_created, "lines": r.lines, "errors": len(r.errors),
        "first_errors": [list(e) for e in r.errors[:3]], "written": r.written,
        "rss_before_import_kb": rss_before, "rss_after_import_kb": rss_after,
        "self_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }), flush=True)


def raw_load_child(store: str, folder: str) -> None:
    """Run by a fresh child: the import's own bulk loads (its files, its COPY statements) replayed in raw
    Kuzu into an empty store of the same schema, in one transaction with its checkpoint, as JSON. This is
    the least any import of these rows into this layout costs: no parsing, no checks, no view computed."""
    import kuzu

    import graphmem

    graphmem.open(store, create=True).close()  # the schema, nothing else
    copies = json.loads((Path(folder) / "copies.json").read_text("utf-8"))
    conn = kuzu.Connection(kuzu.Database(str(Path(store) / "graph.kuzu")))
    c0, t0 = time.process_time(), time.perf_counter()
    # per table loaded, then the commit with its checkpoint: seconds, and CPU seconds (Kuzu's threads included)
    tables: dict[str, float] = {}
    tables_cpu: dict[str, float] = {}

    def timed(name: str, *queries: str) -> None:
        t, c = time.perf_counter(), time.process_time()
        for query in queries:
            conn.execute(query)
        tables[name] = tables.get(name, 0.0) + time.perf_counter() - t
        tables_cpu[name] = tables_cpu.get(name, 0.0) + time.process_time() - c

    conn.execute("BEGIN TRANSACTION")
    for query in copies:
        timed(query.split()[1], query)
    timed("commit", "COMMIT", "CHECKPOINT")
    wall = time.perf_counter() - t0
    print(json.dumps({"seconds": wall, "cpu_seconds": time.process_time() - c0, "copies": len(copies),
                      "tables": tables, "tables_cpu": tables_cpu,
                      "self_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}), flush=True)


def run_raw_load(store: Path, folder: Path) -> dict[str, Any]:
    p = subprocess.run([PY, str(Path(__file__).resolve()), "--raw-load-child", str(store), str(folder)],
                       capture_output=True, text=True, check=True)
    res: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return res


def cold_child(store: str, ref: str) -> None:
    """Run by a fresh child: the phases of a cold ``current`` through the Python API, as JSON."""
    t0 = time.perf_counter()
    import graphmem.cli  # noqa: F401  (what the command imports)
    t1 = time.perf_counter()
    import graphmem
    m = graphmem.open(store, create=False)
    t2 = time.perf_counter()
    doc = json.dumps(m.current(ref).to_dict())
    t3 = time.perf_counter()
    m.close()
    t4 = time.perf_counter()
    print(json.dumps({"import_cli_ms": (t1 - t0) * 1000, "open_ms": (t2 - t1) * 1000, "current_ms": (t3 - t2) * 1000,
                      "close_ms": (t4 - t3) * 1000, "in_process_ms": (t4 - t0) * 1000, "bytes": len(doc)}))


def cold_breakdown(store: Path, ref: str, runs: int, env: dict[str, str]) -> dict[str, Any]:
    """Median phase times of a cold ``current`` in fresh processes; the rest of the wall time is
    interpreter start-up and exit (including the database's teardown)."""
    cmd = [PY, str(Path(__file__).resolve()), "--cold-child", str(store), ref]
    subprocess.run(cmd, capture_output=True, env=env, check=True)
    phases: list[dict[str, float]] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        wall = (time.perf_counter() - t0) * 1000
        d = json.loads(p.stdout)
        d["wall_ms"] = wall
        d["startup_and_exit_ms"] = wall - d["in_process_ms"]
        phases.append(d)
    return {k: statistics.median(d[k] for d in phases) for k in phases[0]}


def run_import(store: Path, jsonl: Path, keep: Path | None = None) -> dict[str, Any]:
    """Import in a fresh child; its peak RSS comes from wait4, i.e. that child alone."""
    t0 = time.perf_counter()
    p = subprocess.Popen([PY, str(Path(__file__).resolve()), "--import-child", str(store), str(jsonl),
                          *([str(keep)] if keep else [])], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    process_wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"import child failed with exit code {p.returncode}")
    res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    res["process_wall_seconds"] = process_wall
    res["peak_rss_mb"] = ru.ru_maxrss / 1024
    res["baseline_rss_mb"] = res["rss_before_import_kb"] / 1024
    res["rate_per_s"] = res["statements"] / res["seconds"] if res["seconds"] else 0.0
    return res


# ---------------------------------------------------------------------------
# timing helpers
# ---------------------------------------------------------------------------

def pct(xs: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between closest ranks."""
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary(ms: Sequence[float]) -> dict[str, Any]:
    return {"n": len(ms), "p50_ms": pct(ms, 50), "p99_ms": pct(ms, 99), "mean_ms": statistics.fmean(ms),
            "min_ms": min(ms), "max_ms": max(ms)}


def sample(fns: Sequence[Callable[[Any], Any]], args: Sequence[Any], *, budget_s: float = 60.0,
           warm: int = 20) -> list[list[float]]:
    """Time each of ``fns`` on each ``a`` in turn, interleaved so they share the machine's load (after
    ``warm`` untimed rounds); stop before a round would overrun the budget. Milliseconds, one list per fn.
    """
    for a in list(args)[:warm]:
        for fn in fns:
            fn(a)
    out: list[list[float]] = [[] for _ in fns]
    start = time.perf_counter()
    for a in args:
        r0 = time.perf_counter()
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn(a)
            out[i].append((time.perf_counter() - t0) * 1000)
        spent = time.perf_counter() - start
        if spent + (time.perf_counter() - r0) > budget_s:
            break
    return out


def timed_runs(fn: Callable[[], Any], reps: int) -> tuple[list[float], Any]:
    runs, last = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        last = fn()
        runs.append(time.perf_counter() - t0)
    return runs, last


def median_wall(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Median wall time of a fresh process (one untimed run first, to warm the page cache)."""
    subprocess.run(cmd, capture_output=True, env=env, check=False)
    times = []
    rc = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, env=env, check=False)
        times.append((time.perf_counter() - t0) * 1000)
        rc = rc or p.returncode
    return {"median_ms": statistics.median(times), "min_ms": min(times), "runs_ms": times, "returncode": rc}


def no_pyc_env() -> dict[str, str]:
    """No bytecode written: in an editable checkout graphmem's own modules are compiled on every run
    (site-packages keep the .pyc files pip wrote at install)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def importtime_top(module: str, env: dict[str, str], n: int = 12) -> list[dict[str, Any]]:
    """The costliest imports (cumulative) under ``python -X importtime -c 'import module'``, per package."""
    p = subprocess.run([PY, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True,
                       check=False, env=env)
    best: dict[str, tuple[int, str]] = {}
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            name = m[4]
            top = name if name.startswith("graphmem") else name.split(".")[0]
            if int(m[2]) > best.get(top, (0, ""))[0]:
                best[top] = (int(m[2]), name)
    rows = [{"package": k, "module": v[1], "cumulative_ms": v[0] / 1000} for k, v in best.items()]
    rows.sort(key=lambda r: -r["cumulative_ms"])
    return rows[:n]


# ---------------------------------------------------------------------------
# one scale
# ---------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cpus": os.cpu_count(), "platform": platform.platform(),
                            "python": platform.python_version()}
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            info["mem_total_gb"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        pass
    info["graphmem_source"] = source_fingerprint()
    try:
        import kuzu
        info["kuzu"] = kuzu.__version__
        import graphmem
        info["graphmem"] = graphmem.__version__
    except Exception:  # versions are informational
        pass
    return info


def source_fingerprint() -> dict[str, Any]:
    """Which graphmem code was measured: a hash of its Python sources and their newest mtime."""
    import hashlib
    files = sorted((REPO / "graphmem").rglob("*.py"))
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(REPO).as_posix().encode() + b"\0" + f.read_bytes())
    newest = max((f.stat().st_mtime for f in files), default=0)
    return {"sha256": h.hexdigest()[:16], "newest_mtime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(newest))}


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def graphmem_exe() -> str:
    exe = Path(PY).parent / "graphmem"
    return str(exe) if exe.exists() else (shutil.which("graphmem") or "graphmem")


def subject_columns(m: Any) -> set[str]:
    """The Subject table's columns (the raw baseline reads what graphmem's lookup reads)."""
    try:
        return {str(r[1]) for r in m.store.cypher("CALL table_info('Subject') RETURN *")}
    except Exception:
        return {"ref", "log", "view"}


def bench_scale(scale: int, args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    entities = args.entities or max(60, scale // 10)
    reps = args.reps or (3 if scale <= 100_000 else 1)
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix=f"graphmem-bench-{scale}-", dir=args.tmp))
    out_dir.mkdir(parents=True, exist_ok=True)
    out_file = out_dir / f"bench-{scale}.json"
    partial = out_dir / f"bench-{scale}.partial.json"  # progress; becomes out_file when the run ends
    res: dict[str, Any] = {"scale": scale, "seed": args.seed, "entities_requested": entities, "reps": reps,
                           "complete": False, "errors": {}, "machine": machine(),
                           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "loadavg_start": os.getloadavg()}

    def save(final: bool = False) -> None:
        """Write what has been measured so far, so a crash keeps the earlier figures (and the last
        finished run's file stays until this one finishes)."""
        res["loadavg_end"] = os.getloadavg()
        res["targets"] = check_targets(res)
        partial.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        if final:
            partial.replace(out_file)

    def phase(name: str, fn: Callable[[], Any]) -> Any:
        try:
            value = fn()
        except Exception as e:  # a benchmark keeps going and says what failed
            res["errors"][name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            log(f"{scale}: {name} FAILED: {res['errors'][name]}")
            value = None
        save()
        return value

    store = tmp / "store"
    jsonl = tmp / f"synth-{scale}.jsonl"
    try:
        # 1. generate (not part of the import)
        log(f"{scale}: generating {jsonl.name} ({entities} entities)")
        t0 = time.perf_counter()
        subprocess.run([PY, str(SYNTH), str(scale), "--seed", str(args.seed), "--entities", str(entities),
                        "--out", str(jsonl)], check=True)
        with jsonl.open("rb") as f:
            n_lines = sum(1 for _ in f)
        res["generate"] = {"seconds": time.perf_counter() - t0, "lines": n_lines, "bytes": jsonl.stat().st_size}

        # 2. import into a fresh store, in a child process
        log(f"{scale}: importing in a child process")
        kept = tmp / "bulk-files"
        res["import"] = run_import(store, jsonl, kept)
        res["store_bytes"] = dir_bytes(store)
        log(f"{scale}: imported {res['import']['statements']} statements in {res['import']['seconds']:.1f}s "
            f"({res['import']['rate_per_s']:.0f}/s, peak {res['import']['peak_rss_mb']:.0f} MB)")
        save()
        # 2b. raw Kuzu: the same bulk files loaded into an empty store (the floor under any import)
        log(f"{scale}: loading the import's bulk files in raw Kuzu")
        raw_store = tmp / "raw-store"
        res["import"]["raw_load"] = run_raw_load(raw_store, kept)
        shutil.rmtree(raw_store, ignore_errors=True)
        shutil.rmtree(kept, ignore_errors=True)
        save()
        if not args.keep_jsonl:
            jsonl.unlink()

        m = open_retrying(store, scale)
        try:
            measure_reads(m, scale, args, rng, res, phase)
            measure_whole_store(m, scale, reps, res, phase)
        finally:
            m.close()  # the cold CLI opens the store itself
        phase("cold_cli", lambda: measure_cold(store, tmp, args, res, scale))
    finally:
        if args.keep:
            log(f"{scale}: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    res["machine_end"] = {"graphmem_source": source_fingerprint()}
    if res["machine_end"]["graphmem_source"] != res["machine"]["graphmem_source"]:
        res["warning"] = "graphmem's sources changed during this run; figures may mix two versions"
    res["complete"] = not res["errors"]
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    save(final=True)
    return res


def open_retrying(store: Path, scale: int, attempts: int = 6) -> Any:
    """graphmem.open, retried for a couple of minutes: in a working tree the sources may be caught
    half-edited (a config file ahead of its parser), and losing the import already done is costly."""
    import importlib

    import graphmem
    for i in range(attempts):
        try:
            return graphmem.open(store)
        except Exception as e:
            if i == attempts - 1:
                raise
            log(f"{scale}: graphmem.open failed ({type(e).__name__}: {str(e).splitlines()[0]}); retrying in 20 s")
            time.sleep(20)
            for name in sorted(n for n in sys.modules if n == "graphmem" or n.startswith("graphmem.")):
                del sys.modules[name]
            importlib.invalidate_caches()
            graphmem = importlib.import_module("graphmem")
    raise AssertionError("unreachable")


def measure_reads(m: Any, scale: int, args: argparse.Namespace, rng: random.Random, res: dict[str, Any],
                  phase: Callable[[str, Callable[[], Any]], Any]) -> None:
    """Warm point reads and facts queries, each beside the raw Kuzu query that reads the same rows."""
    from graphmem.model.times import now_us, to_datetime

    conn = getattr(m.store, "_conn", None)

    def raw(query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        if conn is None:  # the store changed shape: fall back to its read hook
            return m.store.cypher(query, params)
        return conn.execute(query, params or {}).get_all()

    prepared_cache: dict[str, Any] = {}

    def raw_prepared(query: str, params: dict[str, Any]) -> list[list[Any]]:
        if conn is None:
            return m.store.cypher(query, params)
        with warnings.catch_warnings():  # kuzu 0.11 calls prepare() deprecated; it still works
            warnings.simplefilter("ignore", DeprecationWarning)
            if query not in prepared_cache:
                prepared_cache[query] = conn.prepare(query)
            return conn.execute(prepared_cache[query], params).get_all()

    subjects = sorted(r[0] for r in m.store.cypher("MATCH (s:Subject) RETURN s.ref"))
    refs = rng.sample(subjects, min(args.samples, len(subjects)))
    res["sample_subjects"] = len(refs)
    res["cold_ref"] = refs[0]
    q: dict[str, Any] = res.setdefault("queries", {})
    cols = subject_columns(m)
    name_col = "s.name, " if "name" in cols else ""

    def point(name: str, ours: Callable[[str], Any], query: str) -> None:
        log(f"{scale}: {name} x{len(refs)}")
        t_ours, t_raw, t_prep = sample([ours, lambda r: raw(query, {"r": r}),
                                        lambda r: raw_prepared(query, {"r": r})], refs, budget_s=90)
        mine, r1, r2 = summary(t_ours), summary(t_raw), summary(t_prep)
        q[name] = {**mine, "raw_query": query, "raw": r1, "raw_prepared": r2,
                   "ratio_p50": mine["p50_ms"] / r1["p50_ms"], "ratio_p99": mine["p99_ms"] / r1["p99_ms"],
                   "ratio_p50_prepared": mine["p50_ms"] / r2["p50_ms"]}

    phase("current", lambda: point("current", lambda r: m.current(r),
                                   f"MATCH (s:Subject {{ref: $r}}) RETURN {name_col}s.view"))
    phase("timeline", lambda: point("timeline", lambda r: m.timeline(r),
                                    f"MATCH (s:Subject {{ref: $r}}) RETURN {name_col}s.log, s.view"))

    def facts_uses() -> None:
        """facts (a): an entity object given, read along the typed edges."""
        tools = sorted(r[0] for r in m.store.cypher("MATCH (t:Tool) RETURN t.ref"))
        tool_refs = rng.sample(tools, min(args.samples, len(tools)))
        uses = m.registry.predicates["uses"]
        tool_type = m.ontology.type_for_prefix(tools[0].partition(":")[0])
        edge_q = (f"MATCH (a)-[e:{uses.edge}]->(b:{tool_type} {{ref: $r}}) WHERE e.predicate = $p AND "
                  "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t) RETURN a.ref, e.valid_from, "
                  "e.valid_to, e.assertions, e.conflicts, b.name ORDER BY a.ref, e.valid_from")
        log(f"{scale}: facts(predicate=uses, object=<tool>) x<={len(tool_refs)}")
        sizes: list[int] = []

        def ours(t: str) -> None:
            sizes.append(len(m.facts(predicate="uses", object=t).facts))

        t_ours, t_raw = sample([ours, lambda t: raw(edge_q, {"r": t, "p": "uses", "t": to_datetime(now_us())})],
                               tool_refs, budget_s=args.budget, warm=3)
        mine, r1 = summary(t_ours), summary(t_raw)
        q["facts_uses_object"] = {**mine, "rows_mean": statistics.fmean(sizes) if sizes else 0,
                                  "raw_query": edge_q, "raw": r1, "ratio_p50": mine["p50_ms"] / r1["p50_ms"],
                                  "ratio_p99": mine["p99_ms"] / r1["p99_ms"]}

    def facts_status() -> None:
        """facts (b): a literal predicate only, a scan of every subject's view."""
        scan_q = "MATCH (s:Subject) RETURN s.ref, s.view"
        scan = lambda _: raw(scan_q)  # noqa: E731
        if "SubjectFacet" in {r[0] for r in raw("CALL show_tables() RETURN name")}:
            # layout 8: the facets that may hold now and the subjects' names, the two reads the scan makes
            scan_q = FACET_SCAN + "; MATCH (s:Subject) RETURN s.ref, s.name"

            def scan(_: Any) -> None:
                raw(FACET_SCAN, {"p": "status", "a": now_us()})
                raw("MATCH (s:Subject) RETURN s.ref, s.name")
        log(f"{scale}: facts(predicate=status) (scan)")
        sizes: list[int] = []

        def ours(_: Any) -> None:
            sizes.append(len(m.facts(predicate="status").facts))

        warm = 1 if scale <= 100_000 else 0  # at 1M one scan takes long; the first run is timed
        t_ours, t_raw = sample([ours, scan], range(args.scan_reps), budget_s=args.budget,
                               warm=warm)
        mine, r1 = summary(t_ours), summary(t_raw)
        q["facts_status_scan"] = {**mine, "rows_mean": statistics.fmean(sizes) if sizes else 0,
                                  "raw_query": scan_q, "raw": r1, "ratio_p50": mine["p50_ms"] / r1["p50_ms"],
                                  "ratio_p99": mine["p99_ms"] / r1["p99_ms"]}

    phase("facts_uses_object", facts_uses)
    phase("facts_status_scan", facts_status)


def measure_whole_store(m: Any, scale: int, reps: int, res: dict[str, Any],
                        phase: Callable[[str, Callable[[], Any]], Any]) -> None:
    def rebuild() -> None:
        log(f"{scale}: rebuild x{reps}")
        runs, rep = timed_runs(lambda: m.rebuild(), reps)
        res["rebuild"] = {"seconds": statistics.median(runs), "runs": runs, "counts": rep.counts}

    def check() -> None:
        log(f"{scale}: rebuild --check x{reps}")
        runs, rep = timed_runs(lambda: m.rebuild(check=True), reps)
        res["rebuild_check"] = {"seconds": statistics.median(runs), "runs": runs, "drift": len(rep.drift)}

    def lint() -> None:
        log(f"{scale}: lint x{reps}")
        runs, rep = timed_runs(lambda: m.lint(), reps)
        by_code = Counter(i.code for i in rep.issues)
        res["lint"] = {"seconds": statistics.median(runs), "runs": runs, "issues": len(rep.issues),
                       "by_code": dict(sorted(by_code.items()))}

    def rebuild_full() -> None:
        # every stored view wrong (a registry or code change could do that): the rebuild rewrites the whole view
        log(f"{scale}: rebuild after every view was blanked")
        m.store._q("MATCH (s:Subject) SET s.view = '[]'")
        t = time.perf_counter()
        rep = m.rebuild()
        res["rebuild_full"] = {"seconds": time.perf_counter() - t, "counts": rep.counts}
        if m.rebuild(check=True).drift:
            raise RuntimeError("the full rebuild left drift")

    phase("rebuild", rebuild)
    phase("rebuild_check", check)
    phase("lint", lint)
    phase("rebuild_full", rebuild_full)


def measure_cold(store: Path, tmp: Path, args: argparse.Namespace, res: dict[str, Any], scale: int) -> None:
    """A fresh process per call: the graphmem command, the API's phases, and the import cost alone."""
    exe = graphmem_exe()
    ref = res.get("cold_ref") or _first_subject(store)
    log(f"{scale}: cold 'graphmem current {ref} --json' x{args.cold_runs}")
    cmd = [exe, "--store", str(store), "--json", "current", ref]
    pyc_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    pyc_env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")  # bytecode cached outside the repo
    cold = median_wall(cmd, args.cold_runs, env=pyc_env)
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    cold["json_ok"] = p.returncode == 0 and json.loads(p.stdout)["subject"]["ref"] == ref
    if p.returncode != 0:
        cold["stderr"] = p.stderr.strip().splitlines()[-1:] if p.stderr else []
    cold["command"] = " ".join(cmd)
    trailing = subprocess.run([exe, "--store", str(store), "current", ref, "--json"], capture_output=True,
                              text=True, check=False)
    cold["trailing_json_flag_ok"] = trailing.returncode == 0
    res["cold_cli"] = cold
    cold["no_bytecode_cache"] = median_wall(cmd, args.cold_runs, env=no_pyc_env())
    try:
        cold["api_breakdown"] = cold_breakdown(store, ref, args.cold_runs, pyc_env)
    except subprocess.CalledProcessError as e:
        err = e.stderr if isinstance(e.stderr, str) else (e.stderr or b"").decode(errors="replace")
        cold["api_breakdown"] = {"error": err.strip().splitlines()[-1:]}
    res["import_cost"] = {
        "python_startup": median_wall([PY, "-c", "pass"], args.cold_runs, env=pyc_env),
        "import_kuzu": median_wall([PY, "-c", "import kuzu"], args.cold_runs, env=pyc_env),
        "import_graphmem_cli": median_wall([PY, "-c", "import graphmem.cli"], args.cold_runs, env=pyc_env),
        "import_graphmem_cli_no_bytecode_cache": median_wall([PY, "-c", "import graphmem.cli"], args.cold_runs,
                                                             env=no_pyc_env()),
        "importtime_top": importtime_top("graphmem.cli", pyc_env),
    }


def _first_subject(store: Path) -> str:
    import graphmem
    with graphmem.open(store, create=False) as m:
        return str(m.store.cypher("MATCH (s:Subject) RETURN s.ref ORDER BY s.ref LIMIT 1")[0][0])


def _import_ratio(imp: dict[str, Any]) -> float | None:
    raw = imp.get("raw_load")
    return imp["seconds"] / raw["seconds"] if raw and raw.get("seconds") else None


def check_targets(res: dict[str, Any]) -> dict[str, dict[str, Any]]:
    q = res.get("queries", {})
    values = {
        "import_vs_raw_load": _import_ratio(res.get("import", {})),
        "import_peak_rss_mb": res.get("import", {}).get("peak_rss_mb"),
        "rebuild_s": res.get("rebuild", {}).get("seconds"),
        "lint_s": res.get("lint", {}).get("seconds"),
        "current_p50_ms": q.get("current", {}).get("p50_ms"),
        "current_p99_ms": q.get("current", {}).get("p99_ms"),
        "timeline_p50_ms": q.get("timeline", {}).get("p50_ms"),
        "cold_cli_ms": res.get("cold_cli", {}).get("median_ms"),
    }
    out = {}
    for name, (limit, kind, unit) in TARGETS.items():
        v = values[name]
        ok = None if v is None else (v >= limit if kind == "min" else v <= limit)
        out[name] = {"value": v, "target": limit, "kind": kind, "unit": unit, "pass": ok}
    return out


# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------

def _t(name: str, res: dict[str, Any]) -> tuple[str, str]:
    t = res["targets"][name]
    if t["value"] is None:
        return "", ""
    sign = ">=" if t["kind"] == "min" else "<="
    limit = f"{t['target']:,.0f}" if t["target"] >= 100 else f"{t['target']:g}"
    return f"{sign} {limit} {t['unit']}", {True: "pass", False: "FAIL", None: "-"}[t["pass"]]


def table(res: dict[str, Any]) -> str:
    """The per-scale table; parts that failed or were not reached are left out."""
    imp, q = res.get("import", {}), res.get("queries", {})
    rows: list[tuple[str, ...]] = []

    def add(label: str, value: str, raw: str = "", prep: str = "", ratio: str = "", target: str | None = None,
            ratio_prep: str = "") -> None:
        tgt, status = _t(target, res) if target else ("", "")
        rows.append((label, value, raw, prep, ratio, ratio_prep, tgt, status))

    if "generate" in res:
        add("generate synth JSONL (not import)", f"{res['generate']['seconds']:.2f} s")
    if imp:
        raw = imp.get("raw_load")
        if raw:
            add("import wall (view included)", f"{imp['seconds']:.2f} s", f"{raw['seconds']:.2f} s", "",
                f"{imp['seconds'] / raw['seconds']:.1f}x", target="import_vs_raw_load")
            add("import rate", f"{imp['rate_per_s']:,.0f} /s", f"{imp['statements'] / raw['seconds']:,.0f} /s")
            tables, cpu = raw.get("tables", {}), raw.get("tables_cpu", {})
            if tables:
                # what every layout must store: entities, statements, fact edges (all but the stored view)
                add("  raw load without the stored view", "",
                    f"{sum(v for k, v in tables.items() if k != 'Subject'):.2f} s, "
                    f"CPU {sum(v for k, v in cpu.items() if k != 'Subject'):.2f} s")
                for k, v in sorted(tables.items(), key=lambda kv: -kv[1])[:5]:
                    add(f"  raw load: {k}", "", f"{v:.2f} s, CPU {cpu.get(k, 0.0):.2f} s")
        else:
            add("import wall (view included)", f"{imp['seconds']:.2f} s")
            add("import rate", f"{imp['rate_per_s']:,.0f} /s")
        add("import peak RSS (child)", f"{imp['peak_rss_mb']:,.0f} MB", target="import_peak_rss_mb")
        add("  RSS before import (store open)", f"{imp['baseline_rss_mb']:,.0f} MB")
        add("store size on disk", f"{res['store_bytes'] / MB:,.0f} MB")
    for key, label, tgt in (("rebuild", "rebuild", "rebuild_s"), ("rebuild_check", "rebuild --check", None),
                            ("lint", "lint", "lint_s"), ("rebuild_full", "rebuild, every view wrong", None)):
        if key in res:
            add(label, f"{res[key]['seconds']:.2f} s", target=tgt)
    for key, label, p50t, p99t in (("current", "current", "current_p50_ms", "current_p99_ms"),
                                   ("timeline", "timeline", "timeline_p50_ms", None),
                                   ("facts_uses_object", "facts(uses, object=tool)", None, None),
                                   ("facts_status_scan", "facts(status) scan", None, None)):
        d = q.get(key)
        if not d:
            continue
        for pc, tgt in (("p50", p50t), ("p99", p99t)):
            prep = d.get("raw_prepared", {}).get(f"{pc}_ms")
            add(f"{label} {pc}" + (f" (n={d['n']})" if pc == "p50" else ""), f"{d[f'{pc}_ms']:.3f} ms",
                f"{d['raw'][f'{pc}_ms']:.3f} ms", "" if prep is None else f"{prep:.3f} ms",
                f"{d[f'ratio_{pc}']:.1f}x", tgt, "" if prep is None else f"{d[f'{pc}_ms'] / prep:.1f}x")
    cold, ic = res.get("cold_cli", {}), res.get("import_cost", {})
    if cold:
        add("cold `graphmem current X --json`", f"{cold['median_ms']:.0f} ms", target="cold_cli_ms")
        if "no_bytecode_cache" in cold:
            add("  same, no graphmem bytecode cache", f"{cold['no_bytecode_cache']['median_ms']:.0f} ms")
        bd = cold.get("api_breakdown", {})
        if "wall_ms" in bd:
            add("  API in a fresh process: wall", f"{bd['wall_ms']:.0f} ms")
            for k, label in (("import_cli_ms", "import graphmem.cli"), ("open_ms", "graphmem.open (kuzu + schema)"),
                             ("current_ms", "current + to_dict"), ("close_ms", "close"),
                             ("startup_and_exit_ms", "interpreter start + exit")):
                add(f"    {label}", f"{bd[k]:.0f} ms")
    if ic:
        add("  python -c 'import graphmem.cli'", f"{ic['import_graphmem_cli']['median_ms']:.0f} ms")
        add("  same, no graphmem bytecode cache",
            f"{ic['import_graphmem_cli_no_bytecode_cache']['median_ms']:.0f} ms")
        add("  python -c 'import kuzu'", f"{ic['import_kuzu']['median_ms']:.0f} ms")
        add("  python -c pass", f"{ic['python_startup']['median_ms']:.0f} ms")
    head = ("measure", "graphmem", "raw kuzu", "raw prepared", "ours/raw", "ours/prep", "SPEC 12 target", "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    mach = res["machine"]
    lines = [f"== scale {res['scale']:,} assertions, {imp.get('entities', res['entities_requested']):,} entities, "
             f"seed {res['seed']} ({mach.get('cpus')} cpus, {mach.get('mem_total_gb')} GB, load avg "
             f"{res['loadavg_start'][0]:.1f} at start, {res.get('loadavg_end', [0])[0]:.1f} at end; graphmem "
             f"source {mach.get('graphmem_source', {}).get('sha256')}) ==",
             fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    if res["scale"] != 1_000_000:
        lines.append("(SPEC 12 targets are stated for 1,000,000 assertions; shown here for reference)")
    if "lint" in res:
        lines.append(f"lint issues: {res['lint']['issues']:,} {res['lint']['by_code']}")
    if "rebuild_check" in res:
        lines.append(f"rebuild --check drift: {res['rebuild_check']['drift']}")
    if imp:
        lines.append(f"import errors: {imp['errors']}")
    if cold and not cold.get("trailing_json_flag_ok"):
        lines.append("note: 'graphmem --store S current X --json' (flag after the subcommand) is rejected; "
                     "timed as 'graphmem --store S --json current X'")
    for name, err in res.get("errors", {}).items():
        lines.append(f"FAILED {name}: {err}")
    if res.get("warning"):
        lines.append(f"WARNING: {res['warning']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--import-child"]:
        import_child(argv[1], argv[2], argv[3] if len(argv) > 3 else None)
        return
    if argv[:1] == ["--raw-load-child"]:
        raw_load_child(argv[1], argv[2])
        return
    if argv[:1] == ["--cold-child"]:
        cold_child(argv[1], argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[10_000])
    ap.add_argument("--show", nargs="+", metavar="JSON", help="print the tables of saved results and exit")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--entities", type=int, default=None,
                    help="entity count passed to synth.py (default: scale / 10, i.e. 100,000 at 1M)")
    ap.add_argument("--reps", type=int, default=None,
                    help="runs of rebuild, rebuild --check and lint (median reported; default 3, 1 at >100k)")
    ap.add_argument("--samples", type=int, default=500, help="random subjects for current/timeline (default 500)")
    ap.add_argument("--scan-reps", type=int, default=20, help="max runs of the facts(status) scan (default 20)")
    ap.add_argument("--budget", type=float, default=60.0,
                    help="seconds allowed per facts measurement (ours and raw together) before stopping early "
                         "(default 60)")
    ap.add_argument("--cold-runs", type=int, default=5, help="fresh-process runs for the cold CLI (default 5)")
    ap.add_argument("--out", default=str(REPO / "bench-results"), help="folder for bench-<scale>.json")
    ap.add_argument("--tmp", default=None, help="where to put the temporary JSONL and store (default: system tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary store")
    ap.add_argument("--keep-jsonl", action="store_true", help="keep the generated JSONL")
    args = ap.parse_args(argv)
    if args.show:
        for f in args.show:
            print(table(json.loads(Path(f).read_text("utf-8"))), end="\n\n")
        return
    out_dir = Path(args.out)
    for scale in args.scales:
        res = bench_scale(scale, args, out_dir)
        print(table(res), flush=True)
        print(flush=True)
        log(f"{scale}: wrote {out_dir / f'bench-{scale}.json'}")


if __name__ == "__main__":
    main()
