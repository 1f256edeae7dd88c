"""Rebuild: the fact view recomputed from the statements and compared with the stored rows (SPEC 4),
and a store's repair after an interrupted bulk commit or migration. Functions of the store and the
registry; the view is never the authority, so a rebuild rewrites whatever differs."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from graphmem.bulk import forked_map, gc_paused
from graphmem.model import Interval, Statement
from graphmem.model.progress import EVERY, Progress, here_only, no_progress
from graphmem.reports import MigrateReport, RebuildReport
from graphmem.store import StorageEngine, ViewBatch
from graphmem.view.temporal import view_for_subject

if TYPE_CHECKING:
    from graphmem.ontology.schema import Registry

R = TypeVar("R")
_REWRITE_MAX = 2000  # a rebuild rewrites up to this many subjects one by one, more in one bulk load
_DRIFT_MAX = 50  # subjects listed in a drift report
# primary-key lookups per table a plain rebuild makes to find a table a killed checkpoint left unsound
# (rebuild --check makes 2,000; a repair writes the tables it suspects again without looking): about
# 0.2 s over every table
_PK_PROBES_REBUILD = 200
_RANGE_STATEMENTS = 250_000  # statements per grouped read when the whole view is reloaded


class Upgrade(Protocol):
    """What ``finish_migration`` reads of ``migrations.upgrade_layout``'s answer (named here, so the view
    does not import the engine's migrations, which open a ``Memory``)."""

    @property
    def from_version(self) -> int: ...
    @property
    def steps(self) -> tuple[str, ...]: ...
    @property
    def backup(self) -> Path | None: ...
    @property
    def restarted(self) -> bool: ...
    @property
    def reindex(self) -> bool: ...
    @property
    def mark(self) -> Path | None: ...


def _same_statements(store: StorageEngine, ref: str, stored_log: str, log: list[Statement]) -> bool:
    """Whether a stored log (of any row form, the store's own) holds the statements of ``log``, names aside."""
    stored, _ = store.statements_from_log(ref, stored_log, lambda _: None)
    return [s[:14] for s in stored] == [s[:14] for s in log]


def reload_view(store: StorageEngine, registry: Registry, names: dict[str, str],
                progress: Progress = no_progress) -> dict[str, int]:
    """Recompute every subject's view from the store and bulk-load the whole view (in the caller's
    transaction). The subjects are read in ranges of about 250,000 statements, so Kuzu's grouping
    stays small (peak memory at 1M: 1.1 GB in one read, 0.5 GB in ranges), and each range is shared
    out between two processes, each writing its own bulk files."""
    get = names.get

    def chunk(part: list[tuple[str, str]]) -> ViewBatch:
        def subjects() -> Iterator[tuple[str, str, str, list[Interval]]]:
            for ref, text in part:
                log, stored_form = store.decode_log(ref, text, get)
                yield ref, get(ref, ref), stored_form, view_for_subject(log, registry)
        return store.write_view_files(subjects())

    files: list[ViewBatch] = []
    try:
        ranges = store.subject_ranges(store.statement_count() // _RANGE_STATEMENTS + 1)
        for n, (lo, hi) in enumerate(ranges):
            progress("computing the view", n, len(ranges))
            files.extend(forked_map(chunk, list(store.subject_logs(lo=lo, hi=hi))))
    except BaseException:
        for f in files:
            f.discard()
        raise
    progress("loading the view", 0, None)
    return store.load_view(files)


def compare_views(store: StorageEngine, registry: Registry, names: dict[str, str], content_only: bool,
                  each: Callable[[str, list[Statement], str, list[Interval], int, list[str]], R],
                  write_changed: bool = False, progress: Progress = no_progress) -> tuple[list[R], list[ViewBatch]]:
    """Recompute every subject from its statements, compare it with its stored rows, and collect
    ``each(ref, statements, log text, view, edge count, parts that differ)``; then, for stored
    subjects or edges that have no statements, ``each(ref, [], "", [], 0, ["orphan"])``.

    Parts are ``name``, ``log``, ``view`` and ``edges``. ``content_only`` (checks) does not count
    a log stored in another row form or order that holds the same statements; a rebuild rewrites it.
    The subjects are shared out between two processes (``bulk.forked_map``), so ``each`` must not
    touch the store. With ``write_changed``, the rows of the subjects that differ also go to bulk
    files, returned for ``store.load_view`` (a rebuild that finds every subject changed loads
    them instead of reading everything again); the caller discards them. ``progress`` hears of
    the read and of the subjects done (this process's half, counted as if the child kept pace).
    """
    progress("reading the statements", 0, None)
    stored_read = store.stored_view_rows()  # read beside the logs
    rows = list(store.subject_logs())
    stored, stored_edges = stored_read()
    get = names.get
    absent = (None, None, None)
    total = len(rows)
    tell = here_only(progress)

    def chunk(part: list[tuple[str, str]]) -> tuple[list[R], ViewBatch | None]:
        out = []
        changed: list[tuple[str, str, str, list[Interval]]] = []
        scale = total / max(len(part), 1)
        for n, (ref, text) in enumerate(part):
            if not n % EVERY:
                tell("comparing subjects", int(n * scale), total)
            stored_name, packed_log, stored_view = stored.get(ref, absent)
            log, text = store.decode_log(ref, text, get)  # Kuzu may group rows out of id order
            stored_log = store.unpack(packed_log)
            view = view_for_subject(log, registry)
            parts = []
            if stored_name != get(ref, ref):
                parts.append("name")
            # a log stored in an older row form holds the same statements: a rebuild rewrites it, a check does not count it
            if stored_log != text and not (content_only and stored_log and _same_statements(store, ref, stored_log, log)):
                parts.append("log")
            if not store.same_view(stored_view, store.view_text(view)):  # the engine's own stored form
                parts.append("view")
            edges = store.edge_keys(ref, view)
            if edges != stored_edges.get(ref, []):
                parts.append("edges")
            out.append(each(ref, log, text, view, len(edges), parts))
            if parts and write_changed:
                changed.append((ref, get(ref, ref), text, view))
        return out, store.write_view_files(changed) if write_changed else None

    done = forked_map(chunk, rows)
    progress("comparing subjects", total, total)
    results = [r for part, _ in done for r in part]
    files = [f for _, f in done if f is not None]
    seen = {row[0] for row in rows}
    del rows
    for ref in sorted((set(stored) | set(stored_edges)) - seen):
        results.append(each(ref, [], "", [], 0, ["orphan"]))
    return results, files


def rebuild_view(store: StorageEngine, registry: Registry, check: bool, progress: Progress = no_progress) -> RebuildReport:
    """Recompute every subject's log, view and edges and compare them with the stored rows; then
    (unless checking) rewrite what differs: subject by subject when few do, else the whole view
    in one bulk load. Either way the view ends up as a full recomputation makes it.
    """
    t0 = time.perf_counter()
    names = store.entity_names()

    def each(ref: str, log: list[Statement], text: str, view: list[Interval], n_edges: int,
             parts: list[str]) -> tuple[str, int, int, list[str], tuple[str, list[Interval]] | None]:
        return ref, len(view) if log else -1, n_edges, parts, (text, view) if parts and log else None

    counts = {"subjects": 0, "intervals": 0, "edges": 0, "rewritten": 0}
    changed_subjects = 0  # rewritten subjects that have statements (not orphans)
    drift: list[dict[str, Any]] = []
    changed: dict[str, tuple[str, list[Interval]] | None] = {}  # None: no statements (drop its rows)
    results, files = compare_views(store, registry, names, check, each, write_changed=not check, progress=progress)
    try:
        for ref, n_intervals, n_edges, parts, item in results:
            if n_intervals >= 0:
                counts["subjects"] += 1
                counts["intervals"] += n_intervals
                counts["edges"] += n_edges
            if not parts:
                continue
            counts["rewritten"] += 1
            changed_subjects += n_intervals >= 0
            if len(changed) < _REWRITE_MAX:
                changed[ref] = item
            if len(drift) < _DRIFT_MAX:
                drift.append(drift_entry(store, ref, item[1] if item else [], parts))
        if check:
            progress("checking the other tables", 0, None)
            problems = tuple(store.integrity_problems(names))
            return RebuildReport(True, tuple(drift), counts, time.perf_counter() - t0, problems=problems)
        # a subject rewritten row by row costs about 25 ms, reloading the whole view about 0.6 ms a subject
        if counts["rewritten"] * 40 > counts["subjects"] + 320 or counts["rewritten"] > _REWRITE_MAX:
            with store.transaction():
                if changed_subjects == counts["subjects"]:  # the compare wrote every subject's rows already
                    progress("loading the view", 0, None)
                    store.load_view(files)
                else:
                    reload_view(store, registry, names, progress)
        elif changed:
            progress("writing the subjects that differ", 0, None)
            with store.transaction():
                for ref, item in changed.items():
                    if item is None:
                        store.drop_subject(ref)
                    else:
                        store.rewrite_subject(ref, names.get(ref, ref), *item)
    finally:
        for f in files:
            f.discard()
    return RebuildReport(False, (), counts, time.perf_counter() - t0)


def drift_entry(store: StorageEngine, ref: str, view: list[Interval], parts: list[str]) -> dict[str, Any]:
    """How the stored rows of ``ref`` differ from ``view``: intervals stored only and missing, and which parts."""
    stored = {iv.key() for iv in store.subject_view(ref)}
    want = {iv.key() for iv in view}
    return {"subject": ref, "stored_only": len(stored - want), "missing": len(want - stored), "parts": parts}


def rebuild(store: StorageEngine, registry: Registry, *, check: bool = False,
            forget: Callable[[], None] = lambda: None, progress: Progress = no_progress) -> RebuildReport:
    """Recompute the view from the statements; with ``check``, only compare. A store marked by an
    interrupted bulk commit (opened with ``repair``) first has that write taken back whole (what
    Kuzu kept of it is removed, rows it changed get their old values), then gets its name index,
    record keys and full-text index made again from the entities and records, and loses the mark.
    ``forget`` is called when a repair rewrote what a cache of entity names may hold; ``progress`` hears
    how far it has got."""
    with gc_paused():
        if check:
            return rebuild_view(store, registry, check, progress)
        store.check_writable("rebuild")  # before the whole-store pass
        t0 = time.perf_counter()
        if not store.interrupted_commit():
            # a table whose primary-key index a killed checkpoint left out of step with its rows (one a
            # repair before this one did not write again, or whose rewrite was cut short)
            broken = [t for t in store.node_tables() if store.pk_index_misses(t, _PK_PROBES_REBUILD)[1]]
            rewritten = {f"rewritten_{t}": store.rewrite_node_table(t) for t in broken}
            report = rebuild_view(store, registry, False, progress)
            if not rewritten:
                return report
            forget()
            return dataclasses.replace(report, repaired=rewritten, seconds=time.perf_counter() - t0)
        undo = store.interrupted_write()
        # first the tables the interrupted write inserted into: a kill during its checkpoint can have
        # left their primary-key index out of step with their rows (the store's rewrite_node_table), and the
        # steps below look rows up by key
        rewritten = {f"rewritten_{t}": store.rewrite_node_table(t) for t in store.tables_to_rewrite(undo)}
        with store.transaction():
            taken_back = store.roll_back(undo) if undo is not None else {}
            repaired = {"names": store.rebuild_names(), "records": store.rebuild_record_index(),
                        **{f"removed_{k}": v for k, v in taken_back.items()}, **rewritten}
        report = rebuild_view(store, registry, False, progress)
        store.clear_commit_mark()
        forget()
        return dataclasses.replace(report, repaired=repaired, seconds=time.perf_counter() - t0)


def finish_migration(store: StorageEngine, registry: Registry, path: Path, up: Upgrade) -> MigrateReport:
    """After ``migrations.upgrade_layout``: the full-text index (when the old layout had none) and
    the view made by the current code, then the migration's mark (if the engine keeps one) removed."""
    from graphmem.store import SCHEMA_VERSION, remove_mark
    t0 = time.perf_counter()
    with gc_paused():
        if up.reindex:
            with store.transaction():
                store.rebuild_record_index()
        rebuild_view(store, registry, False)
    if up.mark is not None:  # a folder engine's mark (PostgreSQL's migration leaves none)
        remove_mark(up.mark)
    counts = {"entities": store.entity_count(), "statements": store.statement_count(),
              "records": store.record_count()}
    return MigrateReport(str(path), up.from_version, SCHEMA_VERSION, up.steps,
                         str(up.backup) if up.backup else None, up.restarted, counts,
                         time.perf_counter() - t0)

