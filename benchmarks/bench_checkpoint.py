"""Kuzu's checkpoint under graphmem's sustained writes, layout by layout, in raw Kuzu.

Every graphmem write replaces a subject's whole ``Subject.log`` and ``Subject.view`` texts and its
``SubjectFacet`` texts; Kuzu 0.11 checkpoints an updated text column by writing the node group's
whole column again elsewhere in the file, so each checkpoint costs the size of the store's views and
logs, not the size of what was written (docs/service.md, "Why Kuzu's checkpoint stalls"). This
script replays one stream of per-subject writes (``--writes`` status asserts of random projects, as
``bench_service.py``'s asserts pick them, ``--group`` distinct subjects a transaction) on a copy of a
graphmem store under several candidate layouts, each in its own process with Kuzu's default
checkpoint threshold (16 MB of write-ahead log), and prints per layout:

- the transactions' p50 / p99 / max wall time (ms), the write-ahead log being checkpointed by the
  commit that passes the threshold (a commit after which the log is shorter: its time is the
  checkpoint's);
- each such checkpoint's time (ms), the last one forced by ``CHECKPOINT`` at the end;
- the database file's size before the stream and after it (MB), and the process's peak RSS (MB);
- the read cost of what graphmem reads for one subject (its log and its view, as
  ``subject_log_and_view`` reads and parses them; p50 / p99 ms over 300 random subjects, and p50 over 300
  of the subjects the stream wrote), of its view alone (what ``current`` reads: its name and view) and of the
  all-subjects predicate scan (``facts -p status`` at now, ``_FACET_SCAN`` and its texts parsed; the
  median of 5, ms).

Layouts (``--layouts``, comma-separated):

- ``a``: today's (layout 8): the subject's log and view texts and its status facet texts replaced.
- ``b``: the log as rows, one per statement (``SubjectLog``, key ``ref seq``; a counter
  ``Subject.n``), the view and facets still replaced.
- ``c``: ``b``, and the view only as ``SubjectFacet`` rows, a changed facet's row deleted and created
  again (no text updated anywhere); ``Subject.view`` no longer written.
- ``cu``: ``c``, with a subject's log rows and facets read 16 keys a query (a ``UNION ALL`` of
  primary-key lookups) rather than a query each.
- ``cl``: ``c``, with a subject's log in rows of 1, 2, 4, ... statements as the bits of its count: a new
  statement merges the rows of the count's trailing ones into one (deleted and created, no text updated),
  so a subject has at most log2(n) + 1 log rows.
- ``r``: ``c``, and each log row linked from its subject by a rel (``LOGGED``): the log read by one
  query from the subject's row.
- ``w``: ``c``, and the whole view as a row per version (``SubjectView``, key ``ref v``, a counter
  ``Subject.v``): each write creates the next version's row and deletes the last one (a subject's view
  is still one lookup); ``Subject.view`` no longer written.
- ``v``: today's two texts (the packed log and the view) together as a row per version
  (``SubjectText``, key ``ref v``, a counter ``Subject.v``): each write creates the next version's row
  and deletes the last one; facets as in ``c``. No text is updated, and a subject is still two lookups.
- ``af``: ``a``, with a changed facet's row deleted and created again (``c``'s facets alone).
- ``d``: today's two texts kept as each subject's base, never updated; a write adds its statement as a
  ``SubjectLog`` row after the base's and sets ``Subject.n`` (INT64), facets as ``c``. A subject not
  written since its base is read as today; one written since, from its base log and its later rows, and
  its view from its facets.
- ``i``: ``b``, and the view as one row per interval (``SubjectIv``, key ``ref k``, a
  counter ``Subject.niv``) whose text is written once: an interval's end is an INT64 set in place,
  a corroborated interval is deleted and created again; ``Subject.view`` and ``SubjectFacet`` no
  longer written.

``--kinds`` times a checkpoint after 3,200 writes of one kind alone (rows created in ``Assertion``,
``SubjectLog``; ``SubjectFacet`` rows deleted and created; an INT64 and a STRING column set), on layout
``c`` made from a copy of ``--store``. ``--probe`` instead runs the raw-Kuzu probes behind the write-up: which column updates a checkpoint
writes in place (STRING of the same length, shorter, BLOB, INT64), what appending rows costs as the
last node group fills, whether deleted rows' room is used again, and whether the file ever shrinks; then
how a subject's 20 rows among 1M are best found (a list of keys, a lookup each, a range, a rel) and what
rows and rels created cost a checkpoint.

Run from the repository root (it copies the store; the original is only read)::

    PYTHONPATH=. python benchmarks/bench_checkpoint.py [--store DIR] [--writes 12000] [--group 32]
        [--layouts a,b,c,r,w,v,i] [--seed 7] [--threshold MB] [--engine kuzu|ladybug] [--json OUT]
    PYTHONPATH=. python benchmarks/bench_checkpoint.py --probe

The default store is /work/bench-engines/kuzu-100000-s42 (100k statements, 5,000 subjects): about
three minutes for the seven layouts on two cores; the 1M store (``--store /work/scan-data/store8``)
about ten. ``--kinds`` takes about a minute, ``--probe`` about five (it builds a table of 1M rows).
Results are printed a line per layout (``--json`` writes them whole, with each checkpoint's log size).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import orjson

from graphmem.store.common.codecs import pack, unpack

DEFAULT_STORE = "/work/bench-engines/kuzu-100000-s42"
DB_FILES = {"kuzu": "graph.kuzu", "ladybug": "graph.lbug"}  # engine (its Python module) -> a store's database file


def _engine(name: str) -> Any:
    """The engine's Python module (``kuzu`` or ``ladybug``: the same API)."""
    import importlib
    warnings.simplefilter("ignore", DeprecationWarning)
    return importlib.import_module(name)
STATUSES = ["active", "paused", "done"]


def key(ref: str, seq: int) -> str:
    """A subject's row key: its ref and the row's sequence number (an key ``ref seq`` was
    tried: Kuzu 0.11's lookups of such keys took 2-4 ms each, against 0.05 ms for these texts)."""
    return f"{ref} {seq}"
_SCAN_AT = 2_000_000_000_000_000  # a time after every interval's start: "now" for the scan


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def mb(path: Path) -> float:
    return path.stat().st_size / 2**20 if path.exists() else 0.0


_PREPARED: dict[tuple[int, str], Any] = {}


def _rows(conn: Any, q: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
    """A query's rows, its plan prepared once (as graphmem keeps them)."""
    return _run(conn, q, params).get_all()


def _run(conn: Any, q: str, params: dict[str, Any] | None = None) -> Any:
    key = (id(conn), q)
    ps = _PREPARED.get(key)
    if ps is None:
        ps = _PREPARED[key] = conn.prepare(q)
    return conn.execute(ps, params or {})


def _set_counts(c: Any, column: str, counts: list[tuple[str, int]]) -> None:
    """Each subject's count (ref, n) into its ``Subject`` row's INT64 ``column``, 5,000 subjects a query."""
    for k in range(0, len(counts), 5000):
        part = counts[k:k + 5000]
        c.execute(f"UNWIND $refs AS r MATCH (s:Subject {{ref: r}}) WITH s, list_position($refs, r) AS i "
                  f"SET s.{column} = $n[i]", {"refs": [r for r, _ in part], "n": [n for _, n in part]})


def _copy_rows(conn: Any, table: str, rows: list[list[Any]], tmp: Path) -> None:
    """Rows into a new table by Kuzu's COPY from a CSV file (its quoting: a doubled quote)."""
    f = tmp / f"{table}.csv"
    with f.open("w", newline="") as out:
        w = csv.writer(out, quoting=csv.QUOTE_MINIMAL, doublequote=True)
        w.writerows(["" if v is None else v for v in r] for r in rows)
    conn.execute(f"COPY {table} FROM '{f}' (HEADER=false, PARALLEL=false)")
    f.unlink()


# ---------------------------------------------------------------------------------------------
# what one status assert does to a subject's view (the view's rows: predicate, object, kind, from,
# to, assertions, sources, conflicts, name; a facet row is a view row without its predicate)


def _apply(view: list[list[Any]], obj: str, fid: int, now: int) -> tuple[list[list[Any]], str]:
    """The view after asserting ``status = obj`` at ``now`` (status holds one value at a time: the
    open interval of another value ends, one of the same value gains the assertion), and what
    happened: "corroborated" or "changed"."""
    out = [list(r) for r in view]
    for r in out:
        if r[0] == "status" and r[4] is None:
            if r[1] == obj:
                r[5] = [*r[5], fid]
                return out, "corroborated"
            r[4] = now
    out.append(["status", obj, "literal", now, None, [fid], [], [], None])
    out.sort(key=lambda r: r[0])
    return out, "changed"


def _facet(view: list[list[Any]], pred: str) -> list[Any]:
    """The ``SubjectFacet`` values (open, since, ended, first, last) of ``pred`` in ``view``."""
    ivs = [r[1:] for r in view if r[0] == pred]
    opened = [r for r in ivs if r[3] is None]
    ended = [r for r in ivs if r[3] is not None]
    return [orjson.dumps(opened).decode() if opened else None, min(r[2] for r in opened) if opened else None,
            orjson.dumps(ended).decode() if ended else None, min(r[2] for r in ended) if ended else None,
            max(r[3] for r in ended) if ended else None]


def _stmt(fid: int, obj: str, now: int) -> list[Any]:
    return [fid, "assert", "status", obj, "literal", now, None, now, None, None, [], "bench", "medium"]


_CREATE_ASSERTIONS = ("UNWIND $rows AS x CREATE (:Assertion {id: x.id, op: 'assert', subject: x.s, predicate: 'status', "
                      "object: x.o, object_type: 'literal', valid_from: x.t, recorded_at: x.t, sources: '[]', "
                      "asserted_by: 'bench', trust: 'medium'})")
_SET_META = "MATCH (m:Meta {key: 'next_fact'}) SET m.value = $v"
_SET_FACETS = ("UNWIND $keys AS k MATCH (f:SubjectFacet {key: k}) WITH f, list_position($keys, k) AS i "
               "SET f.open = $o[i], f.since = $s[i], f.ended = $e[i], f.first = $f[i], f.last = $l[i]")
_CREATE_FACETS = ("UNWIND range(1, size($k)) AS i CREATE (:SubjectFacet {key: $k[i], ref: $r[i], predicate: 'status', "
                  "open: $o[i], since: $s[i], ended: $e[i], first: $f[i], last: $l[i]})")


def _remake_facets(conn: Any, facets: list[tuple[str, str, list[Any]]]) -> None:
    """Status facets (ref, predicate, [open, since, ended, first, last]) deleted (a lookup each) and made
    again, never set (layouts ``c`` and ``af``)."""
    for ref, _, _ in facets:
        _run(conn, "MATCH (f:SubjectFacet {key: $k}) DELETE f", {"k": ref + " status"})
    _create_facets(conn, [(ref + " status", ref, v) for ref, _, v in facets])


def _create_facets(conn: Any, rows: list[tuple[str, str, list[Any]]]) -> None:
    """Status facet rows (key, ref, [open, since, ended, first, last]) created by one query, a list per
    column, each ending in one typed value never read (a list of nulls alone has no type)."""
    cols = {c: [v[j] for _, _, v in rows] + [t] for j, (c, t) in enumerate(zip("osefl", ["", 0, "", 0, 0], strict=True))}
    _run(conn, _CREATE_FACETS, {"k": [k for k, _, _ in rows], "r": [r for _, r, _ in rows], **cols})
_FACET_SCAN = ("MATCH (f:SubjectFacet) WHERE f.predicate = $p AND (f.since <= $a OR f.first <= $a AND $a < f.last) "
               "RETURN f.ref, CASE WHEN f.since <= $a THEN f.open END, CASE WHEN f.first <= $a AND $a < f.last "
               "THEN f.ended END")
_NAMES = "MATCH (s:Subject) RETURN s.ref, s.name"


class Layout:
    """Today's layout (``a``): the subject's texts replaced."""

    name = "a"

    def __init__(self, conn: Any, tmp: Path) -> None:
        self.conn, self.tmp = conn, tmp

    def setup(self) -> None:
        """Make the layout's tables from the store's (not timed)."""

    def _group_common(self, items: list[tuple[str, str, int, int]]) -> None:
        _run(self.conn, _CREATE_ASSERTIONS, {"rows": [{"id": f, "s": r, "o": o, "t": t} for r, o, f, t in items]})
        _run(self.conn, _SET_META, {"v": str(items[-1][2] + 1)})

    def _set_facets(self, facets: list[tuple[str, str, list[Any]]]) -> None:
        rows = [(ref + " status", ref, v) for ref, _, v in facets]
        have = {k for (k,) in _rows(self.conn, "UNWIND $k AS k MATCH (f:SubjectFacet {key: k}) RETURN f.key",
                                     {"k": [k for k, _, _ in rows]})}
        old = [r for r in rows if r[0] in have]
        if old:
            # each list ends in one typed value never read (a list of nulls alone has no type)
            cols = {c: [v[j] for _, _, v in old] + [t] for j, (c, t) in enumerate(zip("osefl", ["", 0, "", 0, 0], strict=True))}
            _run(self.conn, _SET_FACETS, {"keys": [k for k, _, _ in old], **cols})
        new = [r for r in rows if r[0] not in have]
        if new:
            _create_facets(self.conn, new)

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, logs, views, facets = [], [], [], []
        for ref, obj, fid, now in items:
            _, log, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.log, s.view", {"r": ref})[0]
            rows = orjson.loads(unpack(log))
            rows.append(_stmt(fid, obj, now))
            new, _ = _apply(orjson.loads(view or "[]"), obj, fid, now)
            refs.append(ref)
            logs.append(pack(orjson.dumps(rows).decode()))
            views.append(orjson.dumps(new).decode())
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
                          "SET s.log = $l[i], s.view = $v[i]", {"refs": refs, "l": logs + [""], "v": views + [""]})
        self._set_facets(facets)

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, log, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.log, s.view", {"r": ref})[0]
        return orjson.loads(unpack(log)), orjson.loads(view or "[]")

    def read_view(self, ref: str) -> list[Any]:
        """What ``current`` reads: the subject's name and view."""
        _, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.view", {"r": ref})[0]
        return orjson.loads(view or "[]")

    def scan(self, pred: str, at: int) -> int:
        rows = _rows(self.conn, _FACET_SCAN, {"p": pred, "a": at})
        names = dict(_rows(self.conn, _NAMES))
        n = 0
        for ref, opened, ended in rows:
            n += len([r for r in orjson.loads(opened or "[]") if r[2] <= at])
            if ended:
                n += len([r for r in orjson.loads(ended) if r[2] <= at < r[3]])
            names.get(ref)
        return n


class LogRows(Layout):
    """``b``: the log as rows (``SubjectLog``), the view and facets still replaced."""

    name = "b"

    def setup(self) -> None:
        c = self.conn
        c.execute("CREATE NODE TABLE SubjectLog(key STRING PRIMARY KEY, row STRING)")
        c.execute("ALTER TABLE Subject ADD n INT64")
        subjects = _rows(c, "MATCH (s:Subject) RETURN s.ref, s.log ORDER BY s.ref")
        rows, sids = [], []
        for ref, log in subjects:
            stmts = orjson.loads(unpack(log))
            rows += [[key(ref, k), orjson.dumps(s).decode()] for k, s in enumerate(stmts)]
            sids.append((ref, len(stmts)))
        _copy_rows(c, "SubjectLog", rows, self.tmp)
        _set_counts(c, "n", sids)

    def _log_rows(self, ref: str, n: int, first: int = 0) -> list[Any]:
        # a lookup each: a list of keys (UNWIND, IN) is planned as a scan of the table (1M rows: 20 keys
        # 18-46 ms against 20 x 0.05 ms)
        out = []
        for k in range(first, n):
            got = _rows(self.conn, "MATCH (l:SubjectLog {key: $k}) RETURN l.row", {"k": key(ref, k)})
            out += [orjson.loads(r) for (r,) in got]
        return out

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, ns, views, facets, logrows = [], [], [], [], []
        for ref, obj, fid, now in items:
            _, n, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.view",
                                    {"r": ref})[0]
            new, _ = _apply(orjson.loads(view or "[]"), obj, fid, now)
            logrows.append({"k": key(ref, n), "row": orjson.dumps(_stmt(fid, obj, now)).decode()})
            refs.append(ref)
            ns.append(n + 1)
            views.append(orjson.dumps(new).decode())
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectLog {key: x.k, row: x.row})", {"rows": logrows})
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
                          "SET s.n = $n[i], s.view = $v[i]", {"refs": refs, "n": ns + [0], "v": views + [""]})
        self._set_facets(facets)

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, n, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.view",
                                {"r": ref})[0]
        return self._log_rows(ref, n), orjson.loads(view or "[]")


class FacetRows(LogRows):
    """``c``: ``b``, and the view only as ``SubjectFacet`` rows, a changed row deleted and created again."""

    name = "c"

    def setup(self) -> None:
        super().setup()
        self.preds = [p for (p,) in _rows(self.conn, "MATCH (f:SubjectFacet) RETURN DISTINCT f.predicate")]

    def _set_facets(self, facets: list[tuple[str, str, list[Any]]]) -> None:
        _remake_facets(self.conn, facets)

    def _view(self, ref: str) -> list[list[Any]]:
        view = []
        got = []
        for p in self.preds:
            got += _rows(self.conn, "MATCH (f:SubjectFacet {key: $k}) RETURN f.predicate, f.open, f.ended",
                         {"k": ref + " " + p})
        for p, o, e in got:
            view += [[p, *r] for r in orjson.loads(e or "[]") + orjson.loads(o or "[]")]
        view.sort(key=lambda r: (r[0], r[3]))
        return view

    def _count_and_view(self, ref: str) -> tuple[int, list[list[Any]]]:
        """What a write reads of a subject: its statements' count and its view."""
        _, n = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n", {"r": ref})[0]
        return n, self._view(ref)

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, ns, facets, logrows = [], [], [], []
        for ref, obj, fid, now in items:
            n, view = self._count_and_view(ref)
            new, _ = _apply(view, obj, fid, now)
            logrows.append({"k": key(ref, n), "row": orjson.dumps(_stmt(fid, obj, now)).decode()})
            refs.append(ref)
            ns.append(n + 1)
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectLog {key: x.k, row: x.row})", {"rows": logrows})
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
                          "SET s.n = $n[i]", {"refs": refs, "n": ns + [0]})
        self._set_facets(facets)

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, n = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n", {"r": ref})[0]
        return self._log_rows(ref, n), self._view(ref)

    def read_view(self, ref: str) -> list[Any]:
        _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name", {"r": ref})
        return self._view(ref)


class BatchedFacetRows(FacetRows):
    """``cu``: ``c``, with a subject's log rows and facets read 16 keys a query (a ``UNION ALL`` of
    primary-key lookups, as graphmem reads records by key), not a query each."""

    name = "cu"

    def _by_keys(self, keys: list[str], table: str, cols: str) -> list[list[Any]]:
        out: list[list[Any]] = []
        for at in range(0, len(keys), 16):
            part = keys[at:at + 16]
            q = " UNION ALL ".join(f"MATCH (x:{table} {{key: $k{i}}}) RETURN {cols}" for i in range(len(part)))
            out += _rows(self.conn, q, {f"k{i}": k for i, k in enumerate(part)})
        return out

    def _log_rows(self, ref: str, n: int) -> list[Any]:
        got = self._by_keys([key(ref, k) for k in range(n)], "SubjectLog", "x.key, x.row")
        order = {key(ref, k): k for k in range(n)}
        return [orjson.loads(r) for _, r in sorted(got, key=lambda kr: order[kr[0]])]

    def _view(self, ref: str) -> list[list[Any]]:
        view = []
        for p, o, e in self._by_keys([ref + " " + p for p in self.preds], "SubjectFacet",
                                     "x.predicate, x.open, x.ended"):
            view += [[p, *r] for r in orjson.loads(e or "[]") + orjson.loads(o or "[]")]
        view.sort(key=lambda r: (r[0], r[3]))
        return view


def _chunks(n: int) -> list[tuple[int, int]]:
    """The log rows of a subject of ``n`` statements in layout ``cl``: (first statement, how many), one per
    bit of ``n`` from the highest (13 statements: 8, 4 and 1)."""
    out, start = [], 0
    for b in range(n.bit_length() - 1, -1, -1):
        if n >> b & 1:
            out.append((start, 1 << b))
            start += 1 << b
    return out


class ChunkedFacetRows(FacetRows):
    """``cl``: ``c``, with a subject's log in rows of 1, 2, 4, ... statements, as the bits of its count
    (``_chunks``): a new statement merges the rows of the count's trailing ones into one row of the next
    size (those rows deleted, one created: no text updated), so that a subject has at most log2(n) + 1
    rows, each statement rewritten about log2(n) times over its life."""

    name = "cl"

    def setup(self) -> None:
        c = self.conn
        c.execute("CREATE NODE TABLE SubjectLog(key STRING PRIMARY KEY, row STRING)")
        c.execute("ALTER TABLE Subject ADD n INT64")
        rows, sids = [], []
        for ref, log in _rows(c, "MATCH (s:Subject) RETURN s.ref, s.log ORDER BY s.ref"):
            stmts = orjson.loads(unpack(log))
            rows += [[key(ref, a), orjson.dumps(stmts[a:a + k]).decode()] for a, k in _chunks(len(stmts))]
            sids.append((ref, len(stmts)))
        _copy_rows(c, "SubjectLog", rows, self.tmp)
        _set_counts(c, "n", sids)
        self.preds = [p for (p,) in _rows(self.conn, "MATCH (f:SubjectFacet) RETURN DISTINCT f.predicate")]

    def _log_rows(self, ref: str, n: int) -> list[Any]:
        out = []
        for a, _ in _chunks(n):
            for (r,) in _rows(self.conn, "MATCH (l:SubjectLog {key: $k}) RETURN l.row", {"k": key(ref, a)}):
                out += orjson.loads(r)
        return out

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, ns, facets, creates, drops = [], [], [], [], []
        for ref, obj, fid, now in items:
            _, n = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n", {"r": ref})[0]
            new, _ = _apply(self._view(ref), obj, fid, now)
            merged = [(a, k) for a, k in _chunks(n) if a >= n + 1 - (n + 1 & -(n + 1))]  # the trailing ones' rows
            stmts: list[Any] = []
            for a, _ in merged:
                for (r,) in _rows(self.conn, "MATCH (l:SubjectLog {key: $k}) RETURN l.row", {"k": key(ref, a)}):
                    stmts += orjson.loads(r)
                drops.append(key(ref, a))
            start = merged[0][0] if merged else n
            creates.append({"k": key(ref, start), "row": orjson.dumps([*stmts, _stmt(fid, obj, now)]).decode()})
            refs.append(ref)
            ns.append(n + 1)
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        for k in drops:
            _run(self.conn, "MATCH (l:SubjectLog {key: $k}) DELETE l", {"k": k})
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectLog {key: x.k, row: x.row})", {"rows": creates})
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
                          "SET s.n = $n[i]", {"refs": refs, "n": ns + [0]})
        self._set_facets(facets)


class LinkedLogRows(FacetRows):
    """``r``: ``c``, and each log row linked from its subject by a rel (``LOGGED``), so that a subject's log
    is read by one query from its row instead of a lookup per statement."""

    name = "r"

    def setup(self) -> None:
        super().setup()
        c = self.conn
        c.execute("CREATE REL TABLE LOGGED(FROM Subject TO SubjectLog)")
        _copy_rows(c, "LOGGED", [[ref, key(ref, k)] for ref, n in _rows(c, "MATCH (s:Subject) RETURN s.ref, s.n")
                                 for k in range(n)], self.tmp)

    def _log_rows(self, ref: str, n: int) -> list[Any]:
        got = _rows(self.conn, "MATCH (:Subject {ref: $r})-[:LOGGED]->(l:SubjectLog) RETURN l.key, l.row", {"r": ref})
        got.sort(key=lambda r: int(r[0].rpartition(" ")[2]))
        return [orjson.loads(r) for _, r in got]

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, ns, facets, logrows = [], [], [], []
        for ref, obj, fid, now in items:
            _, n = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n", {"r": ref})[0]
            new, _ = _apply(self._view(ref), obj, fid, now)
            logrows.append({"r": ref, "k": key(ref, n), "row": orjson.dumps(_stmt(fid, obj, now)).decode()})
            refs.append(ref)
            ns.append(n + 1)
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        for x in logrows:  # a query each: a list of subjects to match is planned as a scan
            _run(self.conn, "MATCH (s:Subject {ref: $r}) CREATE (s)-[:LOGGED]->(:SubjectLog {key: $k, row: $row})", x)
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
             "SET s.n = $n[i]", {"refs": refs, "n": ns + [0]})
        self._set_facets(facets)


class ViewRows(FacetRows):
    """``w``: ``c``, and the whole view kept as a row per version (``SubjectView``, key ``ref v``, a counter
    ``Subject.v``): a write creates the next version's row and deletes the last one, so that a subject's
    view is still one lookup."""

    name = "w"

    def setup(self) -> None:
        super().setup()
        c = self.conn
        c.execute("CREATE NODE TABLE SubjectView(key STRING PRIMARY KEY, view STRING)")
        c.execute("ALTER TABLE Subject ADD v INT64 DEFAULT 0")
        _copy_rows(c, "SubjectView", [[key(ref, 0), view] for ref, view in
                                      _rows(c, "MATCH (s:Subject) RETURN s.ref, s.view")], self.tmp)

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, ns, vs, facets, logrows, views = [], [], [], [], [], []
        for ref, obj, fid, now in items:
            _, n, v = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.v", {"r": ref})[0]
            (view,), = _rows(self.conn, "MATCH (w:SubjectView {key: $k}) RETURN w.view", {"k": key(ref, v)})
            new, _ = _apply(orjson.loads(view or "[]"), obj, fid, now)
            logrows.append({"k": key(ref, n), "row": orjson.dumps(_stmt(fid, obj, now)).decode()})
            views.append({"old": key(ref, v), "k": key(ref, v + 1), "v": orjson.dumps(new).decode()})
            refs.append(ref)
            ns.append(n + 1)
            vs.append(v + 1)
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectLog {key: x.k, row: x.row})", {"rows": logrows})
        for x in views:
            _run(self.conn, "MATCH (w:SubjectView {key: $k}) DELETE w", {"k": x["old"]})
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectView {key: x.k, view: x.v})",
             {"rows": [{"k": x["k"], "v": x["v"]} for x in views]})
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
             "SET s.n = $n[i], s.v = $v[i]", {"refs": refs, "n": ns + [0], "v": vs + [0]})
        self._set_facets(facets)

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, n, v = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.v", {"r": ref})[0]
        (view,), = _rows(self.conn, "MATCH (w:SubjectView {key: $k}) RETURN w.view", {"k": key(ref, v)})
        return self._log_rows(ref, n), orjson.loads(view or "[]")

    def read_view(self, ref: str) -> list[Any]:
        _, v = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.v", {"r": ref})[0]
        (view,), = _rows(self.conn, "MATCH (w:SubjectView {key: $k}) RETURN w.view", {"k": key(ref, v)})
        return orjson.loads(view or "[]")


class TextRows(FacetRows):
    """``v``: today's texts (the packed log and the view) kept together as a row per version
    (``SubjectText``, key ``ref v``, a counter ``Subject.v``): a write creates the next version's row and
    deletes the last one; facets as in ``c``. A subject is still read by two lookups."""

    name = "v"

    def setup(self) -> None:
        c = self.conn
        self.preds = [p for (p,) in _rows(c, "MATCH (f:SubjectFacet) RETURN DISTINCT f.predicate")]
        c.execute("CREATE NODE TABLE SubjectText(key STRING PRIMARY KEY, log STRING, view STRING)")
        c.execute("ALTER TABLE Subject ADD v INT64 DEFAULT 0")
        _copy_rows(c, "SubjectText", [[key(ref, 0), log, view] for ref, log, view in
                                      _rows(c, "MATCH (s:Subject) RETURN s.ref, s.log, s.view")], self.tmp)

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, vs, facets, texts = [], [], [], []
        for ref, obj, fid, now in items:
            _, v = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.v", {"r": ref})[0]
            (log, view), = _rows(self.conn, "MATCH (t:SubjectText {key: $k}) RETURN t.log, t.view", {"k": key(ref, v)})
            rows = orjson.loads(unpack(log))
            rows.append(_stmt(fid, obj, now))
            new, _ = _apply(orjson.loads(view or "[]"), obj, fid, now)
            texts.append({"old": key(ref, v), "k": key(ref, v + 1), "l": pack(orjson.dumps(rows).decode()),
                          "v": orjson.dumps(new).decode()})
            refs.append(ref)
            vs.append(v + 1)
            facets.append((ref, "status", _facet(new, "status")))
        self._group_common(items)
        for x in texts:
            _run(self.conn, "MATCH (t:SubjectText {key: $k}) DELETE t", {"k": x["old"]})
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectText {key: x.k, log: x.l, view: x.v})",
             {"rows": [{"k": x["k"], "l": x["l"], "v": x["v"]} for x in texts]})
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
             "SET s.v = $v[i]", {"refs": refs, "v": vs + [0]})
        self._set_facets(facets)

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, v = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.v", {"r": ref})[0]
        (log, view), = _rows(self.conn, "MATCH (t:SubjectText {key: $k}) RETURN t.log, t.view", {"k": key(ref, v)})
        return orjson.loads(unpack(log)), orjson.loads(view or "[]")

    def read_view(self, ref: str) -> list[Any]:
        _, v = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.v", {"r": ref})[0]
        (view,), = _rows(self.conn, "MATCH (t:SubjectText {key: $k}) RETURN t.view", {"k": key(ref, v)})
        return orjson.loads(view or "[]")


_IV_SCAN = ("MATCH (i:SubjectIv) WHERE i.predicate = $p AND i.vf <= $a AND (i.vt IS NULL OR $a < i.vt) "
            "RETURN i.ref, i.vt, i.row")


class IntervalRows(LogRows):
    """``i``: ``b``, and the view as rows per interval whose text is written once (ends set in place)."""

    name = "i"

    def setup(self) -> None:
        super().setup()
        c = self.conn
        c.execute("CREATE NODE TABLE SubjectIv(key STRING PRIMARY KEY, ref STRING, predicate STRING, vf INT64, vt INT64, "
                  "row STRING)")
        c.execute("ALTER TABLE Subject ADD niv INT64")
        rows, counts = [], []
        for ref, view in _rows(c, "MATCH (s:Subject) RETURN s.ref, s.view"):
            ivs = orjson.loads(view or "[]")
            rows += [[key(ref, k), ref, r[0], r[3], r[4], orjson.dumps([r[1], r[2], r[3], *r[5:]]).decode()]
                     for k, r in enumerate(ivs)]
            counts.append((ref, len(ivs)))
        _copy_rows(c, "SubjectIv", rows, self.tmp)
        _set_counts(c, "niv", counts)

    def _ivs(self, ref: str, niv: int) -> list[list[Any]]:
        """A subject's intervals: [id, predicate, object, kind, from, to, assertions, sources, conflicts, name]."""
        out = []
        got = []
        for k in range(niv):
            got += _rows(self.conn, "MATCH (v:SubjectIv {key: $k}) RETURN v.key, v.predicate, v.vt, v.row",
                         {"k": key(ref, k)})
        for i, p, vt, row in got:
            o, kind, vf, *rest = orjson.loads(row)
            out.append([i, p, o, kind, vf, vt, *rest])
        out.sort(key=lambda r: (r[1], r[4]))
        return out

    def write_group(self, items: list[tuple[str, str, int, int]]) -> None:
        refs, ns, nivs, logrows, ends, drops, creates = [], [], [], [], [], [], []
        for ref, obj, fid, now in items:
            _, n, niv = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.niv",
                                   {"r": ref})[0]
            ivs = self._ivs(ref, niv)
            logrows.append({"k": key(ref, n), "row": orjson.dumps(_stmt(fid, obj, now)).decode()})
            row = [obj, "literal", now, [fid], [], [], None]
            for iv in ivs:
                if iv[1] == "status" and iv[5] is None:
                    if iv[2] == obj:  # corroborated: the interval's text changes, so a new row replaces it
                        drops.append(iv[0])
                        row = [obj, "literal", iv[4], [*iv[6], fid], iv[7], iv[8], iv[9]]
                    else:
                        ends.append({"id": iv[0], "t": now})
            creates.append({"k": key(ref, niv), "r": ref, "vf": row[2], "row": orjson.dumps(row).decode()})
            refs.append(ref)
            ns.append(n + 1)
            nivs.append(niv + 1)
        self._group_common(items)
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectLog {key: x.k, row: x.row})", {"rows": logrows})
        for x in ends:
            _run(self.conn, "MATCH (v:SubjectIv {key: $k}) SET v.vt = $t", {"k": x["id"], "t": x["t"]})
        for i in drops:
            _run(self.conn, "MATCH (v:SubjectIv {key: $k}) DELETE v", {"k": i})
        _run(self.conn, "UNWIND $rows AS x CREATE (:SubjectIv {key: x.k, ref: x.r, predicate: 'status', vf: x.vf, "
                          "row: x.row})", {"rows": creates})
        _run(self.conn, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
                          "SET s.n = $n[i], s.niv = $v[i]", {"refs": refs, "n": ns + [0], "v": nivs + [0]})

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, n, niv = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.niv", {"r": ref})[0]
        return self._log_rows(ref, n), self._ivs(ref, niv)

    def read_view(self, ref: str) -> list[Any]:
        _, niv = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.niv", {"r": ref})[0]
        return self._ivs(ref, niv)

    def scan(self, pred: str, at: int) -> int:
        rows = _rows(self.conn, _IV_SCAN, {"p": pred, "a": at})
        names = dict(_rows(self.conn, _NAMES))
        n = 0
        for ref, _, row in rows:
            orjson.loads(row)
            names.get(ref)
            n += 1
        return n


class FacetsRemade(Layout):
    """``af``: today's (``a``), but a changed facet's row deleted and created again rather than its texts
    set (what ``c`` does with facets, without its other changes)."""

    name = "af"

    def _set_facets(self, facets: list[tuple[str, str, list[Any]]]) -> None:
        _remake_facets(self.conn, facets)


class DeltaRows(FacetRows):
    """``d``: today's two texts kept as each subject's base and never updated (made by a bulk load, or
    with the subject's row); a write adds its statement as a ``SubjectLog`` row (key ``ref seq``, ``seq``
    from the base's length on) and sets the counters ``Subject.n`` (INT64); facets as ``c``. A subject not
    written since its base (``n`` equal to ``base``) is read as today, from its two texts; one written
    since, from its base log and its later rows, and its view from its facets."""

    name = "d"

    def setup(self) -> None:
        c = self.conn
        c.execute("CREATE NODE TABLE SubjectLog(key STRING PRIMARY KEY, row STRING)")
        c.execute("ALTER TABLE Subject ADD n INT64")
        c.execute("ALTER TABLE Subject ADD base INT64")
        counts = [(ref, len(orjson.loads(unpack(log)))) for ref, log in _rows(c, "MATCH (s:Subject) RETURN s.ref, s.log")]
        _set_counts(c, "n", counts)
        _set_counts(c, "base", counts)
        self.preds = [p for (p,) in _rows(self.conn, "MATCH (f:SubjectFacet) RETURN DISTINCT f.predicate")]

    def _count_and_view(self, ref: str) -> tuple[int, list[list[Any]]]:
        _, n, base, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.base, s.view",
                                 {"r": ref})[0]
        return n, orjson.loads(view or "[]") if n == base else self._view(ref)

    def read_subject(self, ref: str) -> tuple[list[Any], list[Any]]:
        _, n, base, log, view = _rows(self.conn, "MATCH (s:Subject {ref: $r}) RETURN s.name, s.n, s.base, s.log, s.view",
                                      {"r": ref})[0]
        if n == base:
            return orjson.loads(unpack(log)), orjson.loads(view or "[]")
        return orjson.loads(unpack(log)) + self._log_rows(ref, n, base), self._view(ref)

    def read_view(self, ref: str) -> list[Any]:
        return self._count_and_view(ref)[1]


LAYOUTS: dict[str, type[Layout]] = {k.name: k for k in (Layout, LogRows, FacetRows, BatchedFacetRows, ChunkedFacetRows,
                                                         LinkedLogRows,
                                                         ViewRows, TextRows, IntervalRows, FacetsRemade, DeltaRows)}


def stream(refs: list[str], writes: int, group: int, seed: int, first_id: int) -> list[list[tuple[str, str, int, int]]]:
    """The writes, ``group`` distinct random subjects a transaction: (ref, object, fact id, time)."""
    rng = random.Random(seed)
    out, fid, now = [], first_id, 1_800_000_000_000_000
    for _ in range(writes // group):
        g = []
        for ref in rng.sample(refs, group):
            g.append((ref, rng.choice(STATUSES), fid, now))
            fid += 1
            now += 1_000_000
        out.append(g)
    return out


def run_one(store: Path, layout: str, writes: int, group: int, seed: int, threshold_mb: float = 0,
            engine: str = "kuzu") -> dict[str, Any]:
    """One layout on a copy of ``store``: its setup, then the stream, then the reads (in this process)."""
    kuzu = _engine(engine)
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-", dir=os.environ.get("BENCH_TMP")))
    try:
        db_path = tmp / DB_FILES[engine]
        shutil.copy2(store / DB_FILES[engine], db_path)
        db = kuzu.Database(str(db_path), **({"checkpoint_threshold": int(threshold_mb * 2**20)} if threshold_mb else {}))
        conn = kuzu.Connection(db)
        lay = LAYOUTS[layout](conn, tmp)
        t = time.perf_counter()
        lay.setup()
        conn.execute("CHECKPOINT")
        setup_s = time.perf_counter() - t
        size0 = mb(db_path)
        refs = [r for (r,) in _rows(conn, "MATCH (s:Subject) WHERE starts_with(s.ref, 'project:') RETURN s.ref")]
        first = int(_rows(conn, "MATCH (m:Meta {key: 'next_fact'}) RETURN m.value")[0][0])
        wal = Path(str(db_path) + ".wal")
        txn, ckpts = [], []
        for k, items in enumerate(stream(sorted(refs), writes, group, seed, first)):
            before = mb(wal)
            t = time.perf_counter()
            conn.execute("BEGIN TRANSACTION")
            lay.write_group(items)
            c = time.perf_counter()
            conn.execute("COMMIT")
            e = time.perf_counter()
            txn.append((e - t) * 1000)
            if mb(wal) < before:
                ckpts.append({"txn": k, "ms": round((e - c) * 1000, 1), "file_mb": round(mb(db_path), 1),
                              "wal_mb": round(before, 1)})
        t = time.perf_counter()
        wal_left = mb(wal)
        conn.execute("CHECKPOINT")
        ckpts.append({"txn": "end", "ms": round((time.perf_counter() - t) * 1000, 1), "file_mb": round(mb(db_path), 1),
                      "wal_mb": round(wal_left, 1)})
        rng = random.Random(seed + 1)
        reads, views, written_reads, written_views = [], [], [], []
        written = sorted({ref for items in stream(sorted(refs), writes, group, seed, first) for ref, *_ in items})
        for sample, rs, vs in ((rng.sample(refs, min(300, len(refs))), reads, views),
                               (rng.sample(written, min(300, len(written))), written_reads, written_views)):
            for ref in sample:
                t = time.perf_counter()
                log, view = lay.read_subject(ref)
                rs.append((time.perf_counter() - t) * 1000)
                assert log and view, ref
                t = time.perf_counter()
                assert lay.read_view(ref), ref
                vs.append((time.perf_counter() - t) * 1000)
        scans, held = [], 0
        for _ in range(5):
            t = time.perf_counter()
            held = lay.scan("status", _SCAN_AT)
            scans.append((time.perf_counter() - t) * 1000)
        return {"layout": layout, "writes": len(txn) * group, "setup_s": round(setup_s, 1),
                "txn_p50_ms": round(pct(txn, 50), 1), "txn_p99_ms": round(pct(txn, 99), 1),
                "txn_max_ms": round(max(txn), 1), "checkpoints": ckpts, "file_mb_before": round(size0, 1),
                "file_mb_after": round(mb(db_path), 1), "peak_rss_mb": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "read_p50_ms": round(pct(reads, 50), 2), "read_p99_ms": round(pct(reads, 99), 2),
                "view_p50_ms": round(pct(views, 50), 2), "view_p99_ms": round(pct(views, 99), 2),
                "written_read_p50_ms": round(pct(written_reads, 50), 2),
                "written_view_p50_ms": round(pct(written_views, 50), 2),
                "scan_ms": round(statistics.median(scans), 1), "scan_rows": held}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# probes


def probe(rows: int = 100_000, rounds: int = 3, engine: str = "kuzu") -> list[dict[str, Any]]:
    """Raw-Kuzu probes: what a checkpoint writes for each kind of change (see the module's docstring)."""
    kuzu = _engine(engine)
    out: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-probe-", dir=os.environ.get("BENCH_TMP")))
    try:
        path = tmp / "p.kuzu"
        db = kuzu.Database(str(path))
        c = kuzu.Connection(db)
        c.execute("CREATE NODE TABLE T(id INT64 PRIMARY KEY, s STRING, b BLOB, i INT64)")
        rng = random.Random(3)
        text = [f"x{k:07d}" * 25 for k in range(rows)]  # 200 characters each
        _copy_rows(c, "T", [[k, text[k], text[k], k] for k in range(rows)], tmp)
        c.execute("CHECKPOINT")
        base = mb(path)
        out.append({"probe": "table", "rows": rows, "file_mb": round(base, 1)})

        def rounds_of(name: str, query: str, value: Any) -> None:
            for r in range(rounds):
                ids = rng.sample(range(rows), 3200)
                for k in range(0, 3200, 32):
                    c.execute(query, {"ids": ids[k:k + 32], "v": value(r)})
                t = time.perf_counter()
                c.execute("CHECKPOINT")
                out.append({"probe": name, "round": r, "ckpt_ms": round((time.perf_counter() - t) * 1000, 1),
                            "file_mb": round(mb(path), 1)})

        rounds_of("STRING, same length", "UNWIND $ids AS i MATCH (t:T {id: i}) SET t.s = $v", lambda r: "y" * 200)
        rounds_of("STRING, shorter", "UNWIND $ids AS i MATCH (t:T {id: i}) SET t.s = $v", lambda r: "z" * 20)
        rounds_of("BLOB, same length", "UNWIND $ids AS i MATCH (t:T {id: i}) SET t.b = BLOB($v)", lambda r: "y" * 200)
        rounds_of("INT64", "UNWIND $ids AS i MATCH (t:T {id: i}) SET t.i = $v", lambda r: r)
        rounds_of("INT64, one row", "UNWIND $ids[0:1] AS i MATCH (t:T {id: i}) SET t.i = $v", lambda r: r + 10)
        rounds_of("STRING, one row", "UNWIND $ids[0:1] AS i MATCH (t:T {id: i}) SET t.s = $v", lambda r: "w" * 200)

        # appending 3,200 rows a checkpoint to a table whose last node group fills (131,072 rows each)
        c.execute("CREATE NODE TABLE A(id INT64 PRIMARY KEY, s STRING)")
        nxt = 0
        for r in range(60):
            for k in range(0, 3200, 32):
                c.execute("UNWIND range($a, $a + 31) AS i CREATE (:A {id: i, s: $v})", {"a": nxt + k, "v": "q" * 200})
            nxt += 3200
            t = time.perf_counter()
            c.execute("CHECKPOINT")
            if r % 6 == 0 or r in (39, 40, 41, 42):
                out.append({"probe": "append 3,200 rows", "rows_after": nxt,
                            "ckpt_ms": round((time.perf_counter() - t) * 1000, 1), "file_mb": round(mb(path), 1)})

        # deleted rows: is their room used again; does the file ever shrink
        before = mb(path)
        c.execute("MATCH (t:T) WHERE t.id % 2 = 0 DELETE t")
        c.execute("CHECKPOINT")
        out.append({"probe": "delete half of T", "file_mb": round(mb(path), 1), "before_mb": round(before, 1)})
        _copy_rows(c, "T", [[rows + k, text[k], text[k], k] for k in range(rows // 2)], tmp)
        c.execute("CHECKPOINT")
        out.append({"probe": "insert as many again", "file_mb": round(mb(path), 1),
                    "T_rows": _rows(c, "MATCH (t:T) RETURN count(*)")[0][0]})
        c.execute("MATCH (t:T) DELETE t")
        c.execute("CHECKPOINT")
        out.append({"probe": "delete all of T", "file_mb": round(mb(path), 1)})
        c.execute("DROP TABLE T")
        c.execute("CHECKPOINT")
        out.append({"probe": "drop T", "file_mb": round(mb(path), 1)})
        c.execute("CREATE NODE TABLE T2(id INT64 PRIMARY KEY, s STRING)")
        _copy_rows(c, "T2", [[k, text[k]] for k in range(rows)], tmp)
        c.execute("CHECKPOINT")
        out.append({"probe": "new table of T's strings", "file_mb": round(mb(path), 1)})
        c.close()
        db.close()
        out.append({"probe": "closed", "file_mb": round(mb(path), 1)})
        kuzu.Database(str(path)).close()
        out.append({"probe": "reopened and closed", "file_mb": round(mb(path), 1)})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def probe_keys(subjects: int = 50_000, per: int = 20, engine: str = "kuzu") -> list[dict[str, Any]]:
    """How a subject's ``per`` rows are found among ``subjects * per`` (1M): by a list of keys, by a lookup
    each (text keys ``"ref seq"``, INT64 keys ``sid << 20 | seq`` and ``sid * per + seq``), by a range, by a
    rel from the subject; then what 3,200 rows or rels created (100 transactions of 32) cost a checkpoint."""
    kuzu = _engine(engine)
    out: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-keys-", dir=os.environ.get("BENCH_TMP")))
    try:
        path = tmp / "k.kuzu"
        c = kuzu.Connection(kuzu.Database(str(path)))
        c.execute("CREATE NODE TABLE S(ref STRING PRIMARY KEY)")
        c.execute("CREATE NODE TABLE KT(key STRING PRIMARY KEY, row STRING)")
        c.execute("CREATE NODE TABLE KS(id INT64 PRIMARY KEY, row STRING)")
        c.execute("CREATE NODE TABLE KD(id INT64 PRIMARY KEY, row STRING)")
        c.execute("CREATE REL TABLE HAS(FROM S TO KD)")
        _copy_rows(c, "S", [[f"project:project-{s}"] for s in range(subjects)], tmp)
        row = lambda s, k: f"[{s},{k},\"assert\",\"status\",\"active\"]" + "x" * 80  # noqa: E731
        _copy_rows(c, "KT", [[f"project:project-{s} {k}", row(s, k)] for s in range(subjects) for k in range(per)], tmp)
        _copy_rows(c, "KS", [[s << 20 | k, row(s, k)] for s in range(subjects) for k in range(per)], tmp)
        _copy_rows(c, "KD", [[s * per + k, row(s, k)] for s in range(subjects) for k in range(per)], tmp)
        _copy_rows(c, "HAS", [[f"project:project-{s}", s * per + k] for s in range(subjects) for k in range(per)], tmp)
        c.execute("CHECKPOINT")
        rng = random.Random(5)
        sample = rng.sample(range(subjects), 100)

        def timed(name: str, one: Any) -> None:
            ts = []
            for s in sample:
                t = time.perf_counter()
                n = one(s)
                ts.append((time.perf_counter() - t) * 1000)
                assert n == per, (name, n)
            out.append({"probe": f"{per} rows of a subject: {name}", "p50_ms": round(pct(ts, 50), 3),
                        "p90_ms": round(pct(ts, 90), 3)})
            print(json.dumps(out[-1]), flush=True)

        timed("UNWIND text keys", lambda s: len(_rows(c, "UNWIND $k AS k MATCH (x:KT {key: k}) RETURN x.row", {
            "k": [f"project:project-{s} {k}" for k in range(per)]})))
        timed("IN text keys", lambda s: len(_rows(c, "MATCH (x:KT) WHERE x.key IN $k RETURN x.row", {
            "k": [f"project:project-{s} {k}" for k in range(per)]})))
        timed("a lookup per text key", lambda s: sum(len(_rows(c, "MATCH (x:KT {key: $k}) RETURN x.row", {
            "k": f"project:project-{s} {k}"})) for k in range(per)))
        timed("a lookup per INT64 key sid << 20 | seq", lambda s: sum(len(_rows(
            c, "MATCH (x:KS {id: $k}) RETURN x.row", {"k": s << 20 | k})) for k in range(per)))
        timed("a lookup per INT64 key sid * 20 + seq", lambda s: sum(len(_rows(
            c, "MATCH (x:KD {id: $k}) RETURN x.row", {"k": s * per + k})) for k in range(per)))
        timed("a range of INT64 keys", lambda s: len(_rows(c, "MATCH (x:KS) WHERE x.id >= $a AND x.id < $b RETURN x.row",
                                                           {"a": s << 20, "b": (s + 1) << 20})))
        timed("a rel from the subject", lambda s: len(_rows(c, "MATCH (:S {ref: $r})-[:HAS]->(x:KD) RETURN x.row",
                                                            {"r": f"project:project-{s}"})))
        nxt = subjects * per
        for name, q in (("rows created", "CREATE (:KD {id: $i, row: $v})"),
                        ("rows and rels created", "MATCH (s:S {ref: $r}) CREATE (s)-[:HAS]->(:KD {id: $i, row: $v})")):
            for r in range(3):
                for _ in range(100):
                    c.execute("BEGIN TRANSACTION")
                    for _ in range(32):
                        args = {"i": nxt, "v": row(0, nxt)}
                        if "$r" in q:
                            args["r"] = f"project:project-{rng.randrange(subjects)}"
                        _run(c, q, args)
                        nxt += 1
                    c.execute("COMMIT")
                t = time.perf_counter()
                c.execute("CHECKPOINT")
                out.append({"probe": f"3,200 {name}", "round": r, "ckpt_ms": round((time.perf_counter() - t) * 1000, 1),
                            "file_mb": round(mb(path), 1)})
                print(json.dumps(out[-1]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def kinds(store: Path, rounds: int = 3, seed: int = 7, engine: str = "kuzu") -> list[dict[str, Any]]:
    """What each kind of write of layout ``c`` costs a checkpoint on a copy of ``store``: ``rounds`` times
    3,200 of one kind (100 transactions of 32), then ``CHECKPOINT``, timed, with the file's size."""
    kuzu = _engine(engine)
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-kinds-", dir=os.environ.get("BENCH_TMP")))
    out: list[dict[str, Any]] = []
    try:
        path = tmp / DB_FILES[engine]
        shutil.copy2(store / DB_FILES[engine], path)
        db = kuzu.Database(str(path))
        c = kuzu.Connection(db)
        lay = FacetRows(c, tmp)
        lay.setup()
        c.execute("CHECKPOINT")
        refs = sorted(r for (r,) in _rows(c, "MATCH (s:Subject) WHERE starts_with(s.ref, 'project:') RETURN s.ref"))
        fid = int(_rows(c, "MATCH (m:Meta {key: 'next_fact'}) RETURN m.value")[0][0])
        counts = dict(_rows(c, "MATCH (s:Subject) RETURN s.ref, s.n"))
        rng = random.Random(seed)
        ops: dict[str, Any] = {
            "Assertion rows created": lambda g: _run(c, _CREATE_ASSERTIONS, {"rows": [
                {"id": f, "s": r, "o": "done", "t": 1} for r, f in g]}),
            "SubjectLog rows created": lambda g: _run(c, "UNWIND $rows AS x CREATE (:SubjectLog {key: x.k, row: x.row})",
                                                      {"rows": [{"k": key(r, counts[r] + f), "row": f"[{f}]"}
                                                                for r, f in g]}),
            "SubjectFacet rows deleted and created": lambda g: lay._set_facets(
                [(r, "status", [f'[["done","literal",1,null,[{f}],[],[],null]]', 1, None, None, None]) for r, f in g]),
            "Subject.n set (INT64)": lambda g: _run(c, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) "
                                                    "WITH s, list_position($refs, r) AS i SET s.n = $n[i]",
                                                    {"refs": [r for r, _ in g], "n": [f for _, f in g] + [0]}),
            "Meta.value set (a 1-row STRING)": lambda g: _run(c, _SET_META, {"v": str(g[-1][1])}),
            "Subject.view set (STRING)": lambda g: _run(c, "UNWIND $refs AS r MATCH (s:Subject {ref: r}) "
                                                        "WITH s, list_position($refs, r) AS i SET s.view = s.view",
                                                        {"refs": [r for r, _ in g]}),
        }
        for name, op in ops.items():
            for r in range(rounds):
                for _ in range(100):
                    g = [(ref, fid + k) for k, ref in enumerate(rng.sample(refs, 32))]
                    fid += 32
                    c.execute("BEGIN TRANSACTION")
                    op(g)
                    c.execute("COMMIT")
                t = time.perf_counter()
                wal = mb(Path(str(path) + ".wal"))
                c.execute("CHECKPOINT")
                out.append({"kind": name, "round": r, "wal_mb": round(wal, 1),
                            "ckpt_ms": round((time.perf_counter() - t) * 1000, 1), "file_mb": round(mb(path), 1)})
                print(json.dumps(out[-1]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", default=DEFAULT_STORE, help="a graphmem Kuzu store (a folder with graph.kuzu): copied")
    ap.add_argument("--writes", type=int, default=12_000)
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--layouts", default="a,b,c,r,w,v,i")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threshold", type=float, default=0,
                    help="Kuzu's checkpoint threshold in MB of write-ahead log (default: Kuzu's, 16 MB)")
    ap.add_argument("--engine", choices=sorted(DB_FILES), default="kuzu",
                    help="the engine's Python module (its store's file: graph.kuzu or graph.lbug)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--probe", action="store_true", help="run the raw-Kuzu probes instead")
    ap.add_argument("--kinds", action="store_true",
                    help="time a checkpoint after each kind of write of layout c alone, on a copy of --store")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # run one layout in this process (a child's work)
    a = ap.parse_args(argv)
    if a.probe:
        for row in probe(engine=a.engine):
            print(json.dumps(row), flush=True)
        probe_keys(engine=a.engine)
        return
    if a.kinds:
        kinds(Path(a.store), seed=a.seed, engine=a.engine)
        return
    if a.one:
        print(json.dumps(run_one(Path(a.store), a.one, a.writes, a.group, a.seed, a.threshold, a.engine)), flush=True)
        return
    results = []
    for name in a.layouts.split(","):
        if name not in LAYOUTS:
            sys.exit(f"bench_checkpoint: unknown layout {name!r}: expected one of {', '.join(LAYOUTS)}")
        load = os.getloadavg()
        p = subprocess.run([sys.executable, __file__, "--one", name, "--store", a.store, "--writes", str(a.writes),
                            "--group", str(a.group), "--seed", str(a.seed), "--threshold", str(a.threshold), "--engine", a.engine],
                           capture_output=True, text=True)
        if p.returncode:
            print(p.stderr[-3000:], file=sys.stderr)
            sys.exit(f"bench_checkpoint: layout {name} failed")
        r = json.loads(p.stdout.strip().splitlines()[-1])
        r["load"] = [round(x, 2) for x in (*load, *os.getloadavg())]
        r["threshold_mb"] = a.threshold or 16
        r["engine"] = a.engine
        results.append(r)
        ck = r["checkpoints"]
        print(f"{name}: {r['writes']} writes, txn p50 {r['txn_p50_ms']} p99 {r['txn_p99_ms']} max {r['txn_max_ms']} ms; "
              f"checkpoints {[c['ms'] for c in ck]} ms; file {r['file_mb_before']} -> {r['file_mb_after']} MB "
              f"({[c['file_mb'] for c in ck]}); peak RSS {r['peak_rss_mb']} MB; subject read p50 {r['read_p50_ms']} "
              f"p99 {r['read_p99_ms']} ms; view read p50 {r['view_p50_ms']} p99 {r['view_p99_ms']} ms; "
              f"of subjects written: subject p50 {r['written_read_p50_ms']} view p50 {r['written_view_p50_ms']} ms; "
              f"scan {r['scan_ms']} ms ({r['scan_rows']} rows); setup {r['setup_s']} s; "
              f"load {r['load']}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
