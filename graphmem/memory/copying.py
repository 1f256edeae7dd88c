"""``graphmem copy``: a whole store moved to another place or engine, through export and import.

Kuzu's and LadybugDB's Python modules cannot both be loaded in one process (they register the same
native type names), so each side runs in a child process of its own (``spawn``: a fresh interpreter
that loads only its engine): the first exports the source to a JSONL file, the second imports it into
the new store with ``strict`` (nothing written if a line fails) and exports the result again; the copy
is kept only when that export equals the source's (same SHA-256), else it is removed. Fact ids, record
ids and record times come across as the export writes them. The entity events (renames, merges) and the
record events (use, archive, revive), which an export leaves out, go beside it in a second file and are
written into the new store with their ids and times, in the import's process, and checked the same way
(docs/engines.md).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphmem import errors as _errors
from graphmem.config import ENGINE_FILES, StoreAddress, has_store, store_address
from graphmem.errors import BadInput, GraphmemError, StoreUnavailable
from graphmem.model.progress import Progress, no_progress
from graphmem.reports import CopyReport
from graphmem.store.engines import cleanup_on_failure, describe


def copy_store(source: str | Path | StoreAddress, dest: str | Path | StoreAddress, *,
               progress: Progress = no_progress, **memory_options: Any) -> CopyReport:
    """Copy the whole store at ``source`` to ``dest``, which must hold no store (``graphmem copy``).

    Parameters
    ----------
    source, dest : str, Path or StoreAddress
        Store addresses: a folder (Kuzu, or the engine whose database it holds), ``ladybug:PATH``,
        ``postgresql://...`` (docs/engines.md). A new folder is a Kuzu store unless named otherwise.
    progress : Progress, optional
        Told how far the copy has got (the CLI draws a bar with it).
    **memory_options
        Passed to ``Memory`` on both sides (``ontology_dirs``, ``predicate_dirs``).

    Returns
    -------
    CopyReport
        Both addresses and engines, what was copied, and how long it took.

    Raises
    ------
    BadInput
        ``dest`` holds a store already, or is ``source`` itself.
    StoreUnavailable
        No store at ``source``, or either engine cannot open its side.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> src, dest = tempfile.mkdtemp(), tempfile.mkdtemp() + "/copy"
    >>> with graphmem.open(src, create=True) as m:
    ...     _ = m.add_entity("Tool", "Kuzu")
    >>> r = graphmem.copy_store(src, dest)
    >>> r.entities, r.source_engine, r.dest_engine
    (1, 'kuzu', 'kuzu')
    >>> graphmem.copy_store(src, dest)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.BadInput: bad copy destination '...': it holds a store already; expected a new place
    """
    started = time.perf_counter()
    src, dst = store_address(source), store_address(dest)
    if src.folder is not None and dst.folder is not None and src.folder.resolve() == dst.folder.resolve() \
            or src.url is not None and src.url == dst.url:
        raise BadInput(f"bad copy destination {dst.display!r}: it is the source; expected another place")
    if dst.folder is not None and any((dst.folder / f).exists() for f in ENGINE_FILES.values()):
        raise BadInput(f"bad copy destination {dst.display!r}: it holds a store already; expected a new place")
    if src.folder is not None and not has_store(src):
        raise StoreUnavailable(f"no store at {str(src.folder)!r}: expected the store to copy")
    with tempfile.TemporaryDirectory(prefix="graphmem-copy-") as tmp:
        lines = Path(tmp) / "export.jsonl"
        progress("exporting the source", 0, None)
        exported = _in_child(_export_side, (src, str(lines), memory_options), progress)
        imported = _in_child(_import_side, (dst, str(lines), memory_options), progress)
    if imported["sha256"] != exported["sha256"]:  # _import_side has removed the copy
        raise StoreUnavailable(f"the copy at {dst.display!r} did not export as its source did, so it was removed")
    return CopyReport(src.display, dst.display, src.engine, dst.engine, exported["engine_version"],
                      imported["engine_version"], exported["entities"], exported["records"], exported["statements"],
                      exported["retractions"], time.perf_counter() - started, exported["events"])


def _export_lines(m: Any, out: Path) -> dict[str, Any]:
    """Write ``m``'s export to ``out``; its counts and SHA-256."""
    from graphmem.transfer.export import export_lines
    digest = hashlib.sha256()
    counts = {"entity": 0, "record": 0, "retract": 0}
    statements = 0
    with open(out, "w", encoding="utf-8") as f:
        for line in export_lines(m.store):
            text = json.dumps(line, ensure_ascii=False) + "\n"
            f.write(text)
            digest.update(text.encode("utf-8"))
            op = line["op"]
            if op in counts:
                counts[op] += 1
            else:
                statements += 1
    return {"sha256": digest.hexdigest(), "entities": counts["entity"], "records": counts["record"],
            "statements": statements, "retractions": counts["retract"], "engine_version": describe(m.store)[1]}


def _events(m: Any) -> dict[str, list[Any]]:
    """``m``'s entity events and record events, as JSON values, in the order they were recorded."""
    return {"entity": [[e.id, e.op, e.ref, e.other, e.detail, e.recorded_at] for e in m.store.entity_events()],
            "record": [list(e) for e in m.store.record_events()]}


def _events_digest(events: dict[str, list[Any]]) -> str:
    return hashlib.sha256(json.dumps(events, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _write_events(m: Any, events: dict[str, list[Any]]) -> None:
    """Write the source's events into the new store ``m`` with their ids and times, in one transaction."""
    from graphmem.model import EntityEvent
    with m.store.transaction():
        for i, op, ref, other, detail, at in events["entity"]:
            m.store.add_entity_event(EntityEvent(i, op, ref, other, detail, at))
        for i, op, recs, detail, at in events["record"]:
            if m.store.next_record_event_id() != i:  # a gap in the source's ids (none is made today)
                raise StoreUnavailable(f"the source's record event {i} cannot keep its id in the copy")
            m.store.add_record_event(op, recs, detail, at)


def _export_side(src: StoreAddress, lines: str, memory_options: dict[str, Any], tell: Progress) -> dict[str, Any]:
    from graphmem.memory import Memory
    with Memory(src, read_only=True, **memory_options) as m:
        result = _export_lines(m, Path(lines))
        events = _events(m)
    Path(lines + ".events").write_text(json.dumps(events, ensure_ascii=False), "utf-8")
    return result | {"events": len(events["entity"]) + len(events["record"]), "events_sha256": _events_digest(events)}


def _import_side(dst: StoreAddress, lines: str, memory_options: dict[str, Any], tell: Progress) -> dict[str, Any]:
    from graphmem.memory import Memory
    with cleanup_on_failure(dst):
        with Memory(dst, create=True, **memory_options) as m:
            if m.store.entity_count() or m.store.statement_count() or m.store.record_count():
                raise BadInput(f"bad copy destination {dst.display!r}: it holds a store already; expected a new place")
            report = m.import_jsonl(lines, strict=True, progress=tell)
            if not report.ok:
                line, why = report.errors[0]
                raise BadInput(f"the source's export line {line} does not import: {why}")
            events = json.loads(Path(lines + ".events").read_text("utf-8"))
            _write_events(m, events)
            tell("checking the copy", 0, None)
            check = _export_lines(m, Path(lines + ".copy"))
            if _events_digest(_events(m)) != _events_digest(events):
                raise StoreUnavailable(f"the copy at {dst.display!r} did not keep its source's events, so it was removed")
        with open(lines, "rb") as f:
            if hashlib.file_digest(f, "sha256").hexdigest() != check["sha256"]:
                raise StoreUnavailable(f"the copy at {dst.display!r} did not export as its source did, so it was removed")
    return check


def _child(side: Callable[..., dict[str, Any]], args: tuple[Any, ...], conn: Any) -> None:
    """A child's work: its result, or its error as (class name, message), sent back on ``conn``."""
    def tell(task: str, done: int, total: int | None = None) -> None:
        conn.send(("progress", task, done, total))
    try:
        conn.send(("done", side(*args, tell)))
    except GraphmemError as e:
        conn.send(("error", type(e).__name__, str(e)))
    except BaseException as e:  # noqa: BLE001  (handed to the parent as one line)
        conn.send(("error", "StoreUnavailable", f"copy failed: {type(e).__name__}: {e}"))
    finally:
        conn.close()


def _in_child(side: Callable[..., dict[str, Any]], args: tuple[Any, ...], progress: Progress) -> dict[str, Any]:
    """Run ``side(*args, tell)`` in a fresh process (see the module docstring), passing on its progress."""
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(side, args, theirs), daemon=True)
    proc.start()
    theirs.close()
    result: dict[str, Any] | None = None
    try:
        while True:
            try:
                msg = ours.recv()
            except EOFError:
                break
            if msg[0] == "progress":
                progress(msg[1], msg[2], msg[3])
            elif msg[0] == "done":
                result = msg[1]
            else:
                cls = getattr(_errors, msg[1], StoreUnavailable)
                raise (cls if isinstance(cls, type) and issubclass(cls, GraphmemError) else StoreUnavailable)(msg[2])
    finally:
        proc.join()
        ours.close()
    if result is None:
        raise StoreUnavailable(f"copy failed: its {'export' if side is _export_side else 'import'} process "
                               f"ended with exit code {proc.exitcode}")
    return result


__all__ = ["copy_store"]
