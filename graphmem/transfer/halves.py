"""The two-core read of a large import (``importer._read_on_two_cores``): the longest run of plain lines
read by two forked children, which then compute the view of their subjects when they can (``beside._Halves``;
docs/architecture.md). ``r`` is the import's reader (``importer._Reader``), whose lines before and after
the run it reads itself."""

from __future__ import annotations

import mmap
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphmem.bulk import Forked
from graphmem.model import Statement
from graphmem.model.progress import Progress, here_only, no_progress
from graphmem.transfer.beside import _Halves, _view_of_kept
from graphmem.transfer.lines import _count, _span


def _read_on_two_cores(r: Any, path: Path, start: int, middle: int, end: int,
                       progress: Progress = no_progress) -> None:
    """Read the file with its longest run of plain lines (``_plain_run``) split between two forked
    children; the rest is read here, in order.

    The second child reads its half as if every line of the first half were a valid statement, so
    its ids start that many after the first half's first id. When the first half has an error (or
    the second child fails), the second child's work is dropped and this process reads the second half
    itself: the result is always that of reading the file in order. This process reads neither half
    (a child that fails has its half read here): the objects of a million lines made and dropped here
    would leave its memory fragmented, and Kuzu's loads that follow add to it (docs/benchmarks.md, "The
    import's peak memory"). ``progress`` hears of the bytes read (of the halves, as if the second child
    kept pace with the first, which tells this process how far it got).
    """
    assert r.sink is not None
    size = path.stat().st_size
    task = f"reading {path.name}"
    tell = here_only(progress)

    def at(pos: int) -> None:
        tell(task, pos, size)

    report = None if progress is no_progress else at
    r.read(_span(path, 0, start, 1, report))
    # the line numbers at the three offsets, and the second half's first id if all goes well
    first_half, statements = _count(path, start, middle, nonblank=True)
    line_at = {start: _count(path, 0, start)[0] + 1}
    line_at[middle] = line_at[start] + first_half
    line_at[end] = line_at[middle] + _count(path, middle, end)[0]
    base = r.next_id + statements
    store = r.store
    reached = mmap.mmap(-1, 8)  # how far the first half's reader got (shared with its child)

    def paced(pos: int) -> None:  # in the first half's child
        reached[:8] = pos.to_bytes(8, "little")

    def part(halves: list[tuple[int, int]], ask: Callable[[Any], Any] | None = None) -> Any:
        """Read the halves (both where no child can fork); in a child (``ask``), keep the statements, hand
        over what was read, and compute the view of this half's subjects when the reply asks for it."""
        kept: dict[str, list[Statement]] | None = defaultdict(list) if ask is not None else None
        got = [half(lo, hi, kept) for lo, hi in halves]
        if ask is None or kept is None:
            return got
        reply = ask(got)
        del got  # (what was handed over: not held while the view is computed)
        return _view_of_kept(store, r.checks.registry, kept, {ref: e.name for ref, e in r.created.items()}, reply)

    def half(lo: int, hi: int, kept: dict[str, list[Statement]] | None = None) -> dict[str, Any]:
        child = type(r)(r.store, r.checks, r.now, r.resolve, r.next_id if lo == start else base, r.next_record,
                        store.statement_file(), scope=r.scope)
        child.memo = r.memo
        child.record_refs = r.record_refs
        child.kept = kept
        assert child.sink is not None
        try:
            child.read(_span(path, lo, hi, line_at[lo], paced if lo == start and report is not None else None))
            if child.created or child.updated or child.records or child.retractions:
                raise AssertionError("a plain line changed more than statements")
        except BaseException:
            child.sink.discard()
            raise
        return {"next_id": child.next_id, "n_lines": child.n_lines, "errors": child.errors,
                "touched": dict(child.touched), "file_ids": child.file_ids, "failed_ids": child.failed_ids,
                "recorded": child.recorded.tobytes(), "heads": child.heads.tobytes(),
                "bulk": child.sink.finish()}

    def waiting() -> None:
        pos = int.from_bytes(reached[:8], "little")
        if pos:
            tell(task, min(start + 2 * (pos - start), end), size)

    before = (r.first_id, r.next_id, len(r.created), len(r.updated))
    work = Forked(part, [(start, middle), (middle, end)], min_items=2, talk=True)
    r.halves = _Halves(work)  # (ended by ``_read_and_write`` whatever happens)
    ours, theirs = [h for got in work.result(while_waiting=None if report is None else waiting) for h in got]
    reached.close()
    _adopt(r, ours)
    both = r.next_id == base
    if both:
        _adopt(r, theirs)
    else:  # the first half had an error, so the second half's ids are not those: read it here
        theirs["bulk"].discard()
        r.read(_span(path, middle, end, line_at[middle], report))
    if not both:
        r.halves.drop()  # (the children's view is out of the question: let them go before the rest is read)
    after = r.next_id
    r.read(_span(path, end, size, line_at[end], report))
    # the children compute their subjects' view only when they read every statement and the entities
    # they name are those they had (nothing read here before or after them changed either)
    if (both and work.waiting == 2 and before[0] == before[1] and r.next_id == after
            and (len(r.created), len(r.updated)) == before[2:]):
        r.halves.touched = [set(ours["touched"]), set(theirs["touched"])]


def _adopt(r: Any, half: dict[str, Any]) -> None:
    """Take what a child of ``_read_on_two_cores`` read (its statements come after ``r``'s)."""
    assert r.sink is not None
    r.sink.adopt(half["bulk"])
    r.next_id = half["next_id"]
    r.n_lines += half["n_lines"]
    r.errors += half["errors"]
    for subject, preds in half["touched"].items():
        r.touched[subject] |= preds
    r.file_ids.update(half["file_ids"])
    r.failed_ids.update(half["failed_ids"])
    r.recorded.frombytes(half["recorded"])
    r.heads.frombytes(half["heads"])
