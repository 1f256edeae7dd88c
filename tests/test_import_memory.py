"""What keeps a large import's memory down (docs/benchmarks.md, "The import's peak memory"): the retractions
of its own statements set in their bulk rows rather than updated after the load, and the two-core read's
halves both read in children, whose progress the main process reports while it waits."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE

import graphmem
from graphmem.bulk import Forked, give_back_memory
from graphmem.transfer import importer


def _lines(odd_object: bool = False) -> list[str]:
    """Entities, 40 plain assert lines with the ids the file gives them, then retractions of three of them
    (with a reason, without one, with another reason); ``odd_object``: one object holds a tab."""
    lines: list[dict[str, Any]] = [{"op": "entity", "type": "Project", "name": f"P{i}"} for i in range(5)]
    lines += [{"op": "entity", "type": "Tool", "name": f"T{i}"} for i in range(3)]
    for i in range(40):
        lines.append({"op": "assert", "id": f"fact:{100 + i}", "subject": f"project:p{i % 5}",
                      "predicate": "uses" if i % 2 else "status", "object": f"tool:t{i % 3}" if i % 2 else "active",
                      "valid_from": f"2024-01-{1 + i % 28:02d}", "sources": [f"https://example.org/{i}"],
                      "recorded_at": "2025-01-01T00:00:00Z"})
    if odd_object:
        lines.append({"op": "assert", "subject": "project:p0", "predicate": "summary", "object": "a\ttab",
                      "valid_from": "2024-02-01", "recorded_at": "2025-01-01T00:00:00Z"})
    lines += [{"op": "retract", "fact": "fact:100", "at": "2025-02-01T00:00:00Z", "reason": "typo"},
              {"op": "retract", "fact": "fact:113", "at": "2025-02-02T00:00:00Z"},
              {"op": "retract", "fact": "fact:139", "at": "2025-02-03T00:00:00Z", "reason": "wrong call"}]
    return [json.dumps(x) for x in lines]


def _state(m: graphmem.Memory) -> tuple[str, list[tuple[Any, ...]]]:
    """The export and every stored statement's retraction, read in the engine's own language."""
    rows = (m.store._q("SELECT id, retracted_at, retract_reason FROM assertion ORDER BY id")
            if TEST_ENGINE == "postgresql"
            else m.store._q("MATCH (a:Assertion) RETURN a.id, a.retracted_at, a.retract_reason ORDER BY a.id"))
    return m.export(), [tuple(r) for r in rows]


def _retraction_updates(m: graphmem.Memory, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The queries that set a retraction on stored rows, as the store runs them from now on."""
    seen: list[str] = []
    name = "_w" if TEST_ENGINE == "postgresql" else "_q"
    real = getattr(type(m.store), name)

    def spy(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        if "retracted_at =" in query:
            seen.append(query)
        return real(self, query, *args, **kwargs)

    monkeypatch.setattr(type(m.store), name, spy)
    return seen


@pytest.mark.parametrize("odd_object", [False, True])
def test_a_large_import_sets_its_own_retractions_in_the_rows_it_loads(tmp_path: Path, new_store: Callable[[str], Path],
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      odd_object: bool) -> None:
    f = tmp_path / "f.jsonl"
    f.write_text("\n".join(_lines(odd_object)) + "\n", encoding="utf-8")
    small, large = graphmem.open(new_store("small"), create=True), graphmem.open(new_store("large"), create=True)
    assert small.import_jsonl(f).retractions == 3
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)  # streamed to bulk files
    updates = _retraction_updates(large, monkeypatch)
    report = large.import_jsonl(f)
    assert report.errors == () and report.retractions == 3
    assert _state(large) == _state(small)
    retracted = {r[0]: (r[1], r[2]) for r in _state(large)[1] if r[1] is not None}
    assert sorted(retracted) == [1, 14, 40]
    assert retracted[1][1] == "typo" and retracted[14][1] is None
    if odd_object and TEST_ENGINE != "postgresql":
        # a chunk of rows with a quoted value is not changed: its retractions are set after the load
        assert len(updates) == 3
    else:
        assert updates == []  # every retraction went in with its row
    assert large.rebuild(check=True).drift == ()


@pytest.mark.skipif(TEST_ENGINE == "postgresql", reason="the bulk files of an embedded store")
def test_retracting_in_a_bulk_file_writes_the_rows_a_retracted_statement_has(store_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.kuzu import statements
    m = graphmem.open(store_path, create=True)
    assert m.import_jsonl([x for x in _lines() if '"retract"' not in x]).statements == 40
    stmts = sorted((s for ref in sorted({f"project:p{i}" for i in range(5)}) for s in m.store.subject_log(ref)),
                   key=lambda s: s.id)
    monkeypatch.setattr(statements, "_CHUNK", 4)  # chunks of four rows
    at = 1_750_000_000_000_000
    # the file's first row, a chunk's first and last rows, the file's last row, and a reason that needs quoting
    retract = {1: (at, "typo"), 5: (at + 1, None), 12: (at + 2, "why not"), 40: (at + 3, None),
               21: (at + 4, "a\ttab")}
    mine, theirs = m.store.statement_file(), m.store.statement_file()
    for s in stmts:
        mine.add(s)
        r = retract.get(s.id)
        theirs.add(s if r is None else s._replace(retracted_at=r[0], retract_reason=r[1]))
    got, want = mine.finish(), theirs.finish()
    left = dict(retract)
    got.retract(left)
    assert left == {21: (at + 4, "a\ttab")}  # left for the caller to set after the load
    written = Path(got.bulk.name).read_bytes().split(b"\n")
    expected = Path(want.bulk.name).read_bytes().split(b"\n")
    assert [i for i, (a, b) in enumerate(zip(written, expected, strict=True)) if a != b] == [20]  # fact 21's row
    mine.discard()
    theirs.discard()
    assert list((Path(store_path) / "tmp").glob("*.csv")) == []


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                    reason="forks on Linux with two cores")
def test_forked_work_reports_while_it_is_waited_for() -> None:
    calls: list[float] = []

    def slow(part: list[int]) -> int:
        time.sleep(0.6)
        return sum(part)

    assert Forked(slow, [1, 2, 3, 4]).result(while_waiting=lambda: calls.append(time.monotonic())) == [3, 7]
    assert len(calls) >= 2  # about five times a second
    give_back_memory()  # (nothing to see: the process goes on)



def test_the_two_core_read_where_no_child_can_fork_equals_one_core(tmp_path: Path, new_store: Callable[[str], Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem import bulk
    f = tmp_path / "f.jsonl"
    f.write_text("\n".join(_lines()) + "\n", encoding="utf-8")
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    seq, two = graphmem.open(new_store("seq"), create=True), graphmem.open(new_store("two"), create=True)
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 10**12)  # no run this long: one core
    r_seq = seq.import_jsonl(f)
    assert r_seq.statements == 40
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(bulk, "_can_fork", lambda items, min_items: False)  # one core, or not Linux
    runs: list[int] = []
    real = importer._read_on_two_cores
    monkeypatch.setattr(importer, "_read_on_two_cores", lambda *a, **k: (runs.append(1), real(*a, **k))[1])
    assert two.import_jsonl(f).to_dict() | {"seconds": 0} == r_seq.to_dict() | {"seconds": 0}
    assert runs == [1]
    assert _state(two) == _state(seq)


def _second_after(seconds: float) -> Callable[[list[int], Any], Any]:
    def work(half: list[int], ask: Any) -> Any:
        if ask is None:
            return sum(half)
        ask(sum(half))
        time.sleep(seconds)
        return b"x" * 300_000  # more than a pipe holds: the child blocks writing it until it is read
    return work


def _first_after(seconds: float) -> Callable[[list[int], Any], Any]:
    def work(half: list[int], ask: Any) -> Any:
        time.sleep(seconds)
        return sum(half) if ask is None else ask(sum(half))
    return work


def _gone(pid: int) -> bool:
    """Whether a child has ended and been reaped (a zombie still answers ``kill(pid, 0)``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                    reason="forks only on Linux with two cores")
@pytest.mark.parametrize("where", ["first answers", "second answers"])
def test_forked_children_interrupted_while_waited_for_are_ended_and_reaped(where: str) -> None:
    """Ctrl-C (here an alarm) while ``result`` or ``then`` waits: the children are killed and reaped, none is left
    holding its half of the work, and no pipe stays open."""
    import signal

    from graphmem import bulk

    class Interrupted(Exception):
        pass

    def interrupt(*_: Any) -> None:
        raise Interrupted

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        if where == "first answers":
            work = Forked(_first_after(5), [1, 2, 3, 4], talk=True)
            pids = [pid for pid, _ in work._children]
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(Interrupted):
                work.result()
        else:
            work = Forked(_second_after(5), [1, 2, 3, 4], talk=True)
            assert work.result() == [3, 7]
            pids = [pid for pid, _, _ in work._replies]
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(Interrupted):
                work.then([1, 1])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(pids) == 2 and all(_gone(pid) for pid in pids)
    assert work.waiting == 0 and bulk._FDS == {}
