"""A write to one predicate of a subject with many predicates and intervals, on PostgreSQL layout 1 (every
``view_interval`` row of the subject rewritten, positions over the whole view) beside layout 2 (only the
written predicate's rows; positions within a predicate). docs/engines.md ("Layout migrations") quotes it.

Starts a throwaway cluster (tests/pg.py). For each size, one store per layout holds a project whose view has
that many intervals over nine predicates; then 40 ``assert_`` of its ``summary`` (one new interval each) are
timed, whole and the store's writing of the subject's rows alone (``write_subjects``). Layout 1 is the table
as layout 1 made it and layout 1's write (``_put_subject`` as it was).

    PYTHONPATH=. python benchmarks/bench_pg_subject_write.py 200 2000 10000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphmem.memory import Memory  # noqa: E402
from graphmem.store.common.codecs import pack, view_text  # noqa: E402
from graphmem.store.postgres import views  # noqa: E402
from tests.pg import Cluster, server_binaries  # noqa: E402

MANY = ("uses", "depends_on", "blocked_by", "evaluates")
ONE = {"status": ["idea", "planned", "active", "paused"], "priority": ["p0", "p1", "p2", "p3"], "owner": None,
       "deadline": None}
WRITES = 40

_LAYOUT_1 = ("ALTER TABLE view_interval DROP CONSTRAINT view_interval_pkey",
             "CREATE INDEX view_interval_subject ON view_interval(subject, predicate)")


def _put_subject_layout_1(self: Any, ref: str, name: str, log: str, view: list[Any], predicates: set[str] | None) -> None:
    """Layout 1's write of a subject (store/postgres/views.py before layout 2): all its interval rows again."""
    self._w("INSERT INTO subject(ref, name, log, view) VALUES (%s, %s, %s, %s) ON CONFLICT (ref) DO UPDATE "
            "SET name = EXCLUDED.name, log = EXCLUDED.log, view = EXCLUDED.view", (ref, name, pack(log), view_text(view)))
    if predicates is None:
        self._w("DELETE FROM fact_edge WHERE src = %s", (ref,))
    elif predicates:
        self._w("DELETE FROM fact_edge WHERE src = %s AND predicate = ANY(%s)", (ref, sorted(predicates)))
    self._w("DELETE FROM view_interval WHERE subject = %s", (ref,))
    self._many(f"INSERT INTO view_interval({views._IV_COLS}) VALUES (%s, %s, %s, %s, %s, %s)",
               [(ref, iv.predicate, pos, iv.valid_from, iv.valid_to, view_text([iv])[1:-1]) for pos, iv in enumerate(view)])
    rows = self._edge_rows(ref, view, predicates)
    if rows:
        self._many(f"INSERT INTO fact_edge({views._EDGE_COLS}) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s "
                   "WHERE EXISTS (SELECT 1 FROM entity WHERE ref = %s) AND EXISTS (SELECT 1 FROM entity WHERE ref = %s)",
                   [(*r, r[1], r[2]) for r in rows])


def lines(n: int) -> list[str]:
    """Entities and ``n`` statements about ``project:big`` (about ``n`` intervals over 9 predicates)."""
    out = [json.dumps({"op": "entity", "type": "Project", "name": "Big"}),
           json.dumps({"op": "entity", "type": "Person", "name": "Owner"})]
    tools = max(1, n // 2)
    out += [json.dumps({"op": "entity", "type": "Tool", "name": f"T{i}"}) for i in range(tools)]
    for i in range(n):
        day = f"{2000 + i // 365 % 20}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
        if i % 10 < 7:
            pred, obj = MANY[i % len(MANY)], f"tool:t{i % tools}"
        else:
            pred = list(ONE)[i % len(ONE)]
            obj = {"status": ONE["status"][i % 4], "priority": ONE["priority"][i % 4], "owner": "person:owner",
                   "deadline": f"2030-01-{1 + i % 28:02d}"}[pred]
            if pred == "owner" and i % 3:
                pred, obj = "summary", f"summary {i}"
        out.append(json.dumps({"op": "assert", "subject": "project:big", "predicate": pred, "object": obj,
                               "valid_from": day, "sources": ["https://bench.example.org/big"]}))
    return out


def run(cluster: Cluster, n: int, layout: int) -> dict[str, Any]:
    url = cluster.url(f"bench_l{layout}_{n}")
    m = Memory(url, create=True)
    try:
        report = m.import_jsonl(lines(n), strict=True)
        assert report.ok, report
        if layout == 1:
            with m.store.transaction():
                for ddl in _LAYOUT_1:
                    m.store._w(ddl)  # type: ignore[attr-defined]
                m.store.rewrite_subject("project:big", "Big", *_log_and_view(m))
        intervals = len(m.store.subject_view("project:big"))
        predicates = len({iv.predicate for iv in m.store.subject_view("project:big")})
        ms, rows, spent = [], [], []
        write_subjects = m.store.write_subjects

        def timed(batch: Any) -> None:  # the store's part of the write: the subject's rows
            t0 = time.perf_counter()
            write_subjects(batch)
            spent.append((time.perf_counter() - t0) * 1000)
        m.store.write_subjects = timed  # type: ignore[method-assign]
        for i in range(WRITES):
            t = time.perf_counter()
            m.assert_("Big", "summary", f"written {i}", valid_from=f"2031-01-{1 + i % 28:02d}T{i % 24:02d}:00:00Z")
            ms.append((time.perf_counter() - t) * 1000)
            (xid,) = m.store._q("SELECT max(xmin::text::bigint) FROM view_interval WHERE subject = 'project:big'")[0]  # type: ignore[attr-defined]
            rows.append(m.store._q("SELECT count(*) FROM view_interval WHERE subject = 'project:big' "  # type: ignore[attr-defined]
                                   "AND xmin::text::bigint = %s", (xid,))[0][0])
        check = m.rebuild(check=True).to_dict()
        assert check["ok"], check
        return {"layout": layout, "intervals": intervals, "predicates": predicates, "p50_ms": round(statistics.median(ms), 2),
                "p90_ms": round(sorted(ms)[int(len(ms) * 0.9)], 2),
                "view_write_p50_ms": round(statistics.median(spent), 2), "rows_written_p50": statistics.median(rows)}
    finally:
        m.close()


def _log_and_view(m: Memory) -> tuple[str, list[Any]]:
    (log,) = m.store._q("SELECT log FROM subject WHERE ref = 'project:big'")[0]  # type: ignore[attr-defined]
    from graphmem.store.common.codecs import unpack
    return unpack(log), m.store.subject_view("project:big")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[200, 2000, 10000])
    args = ap.parse_args()
    bindir = server_binaries()
    if bindir is None:
        sys.exit("no PostgreSQL server binaries (initdb, pg_ctl) found")
    cluster = Cluster(bindir)
    current = views.PgViews._put_subject
    try:
        for n in args.sizes:
            for layout in (1, 2):
                views.PgViews._put_subject = _put_subject_layout_1 if layout == 1 else current  # type: ignore[method-assign]
                print(json.dumps({"statements": n, **run(cluster, n, layout)}), flush=True)
    finally:
        views.PgViews._put_subject = current  # type: ignore[method-assign]
        cluster.stop()


if __name__ == "__main__":
    main()
