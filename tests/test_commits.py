"""Group commit (graphmem/service/commits.py): concurrent writes share a transaction, each keeps its own
outcome and record time, and none is answered before its commit. The kill -9 test under 32 concurrent
writers is in tests/test_service.py."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from helpers import copy_demo

import graphmem
from graphmem.errors import BadInput, StoreUnavailable, UnknownEntity
from graphmem.model import fact_ref
from graphmem.service.commits import Committer


def _committer(m: graphmem.Memory) -> tuple[Committer, threading.Lock]:
    lock = threading.Lock()

    def run(fn: Any) -> Any:
        with lock:
            return fn(m)
    c = Committer(run)
    c.start()
    return c, lock


def _outcome(f: Future[Any]) -> Any:
    e = f.exception(timeout=60)
    return e if e is not None else f.result()


def _half_written(m: graphmem.Memory) -> Any:
    """A write that wrote, then failed: the group is rolled back and run again without it."""
    m.note("a note that a failed write left behind", source="test:half")
    raise BadInput("bad input after a write")


def test_a_group_keeps_each_writes_outcome_and_record_time(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    m = graphmem.open(store)
    first = m.store.next_fact_id()
    next_record = m.store.next_record_id()
    c, _ = _committer(m)
    try:
        started, gate = threading.Event(), threading.Event()

        def opening(m: graphmem.Memory) -> Any:  # holds the committer while the rest gather into one group
            started.set()
            gate.wait(60)
            return m.assert_("compass", "summary", "opening", by="agent").to_dict()
        opener = c.submit("assert", opening)
        assert started.wait(60)
        writes: list[tuple[str, Any]] = [
            ("assert", lambda m: m.assert_("compass", "summary", "one", by="agent").to_dict()),
            ("assert", lambda m: m.assert_("no-such-project", "summary", "x", by="agent").to_dict()),
            ("assert", lambda m: m.assert_("ledger", "summary", "two", by="agent").to_dict()),
            ("note", lambda m: m.note("grouped note about compass", source="test:group").to_dict()),
            ("note", _half_written),
            ("assert", lambda m: m.assert_("atlas", "status", "sleeping", by="agent").to_dict()),
            # cites and retracts the assert two places before it, in the same group (not applied yet)
            ("cite", lambda m: m.cite(fact_ref(first + 1), ["https://example.org/one"], by="agent").to_dict()),
            ("retract", lambda m: m.retract(fact_ref(first + 2), "wrong").to_dict()),
            ("end", lambda m: m.end("ledger", "uses", "no-such-tool", at="2026-01-01", by="agent").to_dict()),
            ("assert", lambda m: m.assert_("atlas", "summary", "three", by="agent").to_dict()),
        ]
        futures = [c.submit(name, fn) for name, fn in writes]
        assert not opener.done()
        gate.set()
        got = [_outcome(f) for f in [opener, *futures]]
        assert c.groups == 2 and c.writes == 7
    finally:
        c.stop()
    opened, one, unknown, two, note, half, bad_enum, cite, retract, end, three = got
    assert isinstance(unknown, UnknownEntity) and "no-such-project" in str(unknown)
    assert isinstance(bad_enum, BadInput) and "sleeping" in str(bad_enum)
    assert isinstance(end, UnknownEntity) and "no-such-tool" in str(end)
    assert isinstance(half, BadInput) and str(half) == "bad input after a write"
    refs = [d["created"][0] for d in (opened, one, two, cite, three)]
    assert refs == [fact_ref(first + i) for i in (0, 1, 2, 3, 4)]  # ids in the order of the writes
    assert retract["schema"] == "graphmem.retract.v1"
    assert note["ref"] == f"rec:{next_record}" and note["stored"]
    m.close()
    with graphmem.open(store) as again:  # everything acknowledged is there after a reopen, nothing else
        stmts = [again.store.statement(first + i) for i in range(5)]
        assert [s.object for s in stmts if s is not None and s.op == "assert"] == ["opening", "one", "two", "three"]
        times = [s.recorded_at for s in stmts if s is not None]
        assert len(times) == 5 and times == sorted(set(times))  # distinct, increasing in the order of the writes
        assert stmts[2] is not None and stmts[2].retracted_at is not None
        assert again.store.statement(first + 5) is None
        assert again.current("compass", predicate="summary").facts[0].sources == ("https://example.org/one",)
        assert again.store.next_record_id() == next_record + 1  # the half-written note was taken back
        assert [h.ref for h in again.search("grouped note compass", source="test:group").results] == [note["ref"]]
        assert not again.search("failed write left behind", source="test:half").results
        assert again.rebuild(check=True).ok


def test_a_failed_group_acknowledges_none_of_its_writes(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    m = graphmem.open(store)
    first = m.store.next_fact_id()
    lock = threading.Lock()
    closing = threading.Event()

    def run(fn: Any) -> Any:
        with lock:
            if closing.is_set():  # as the server's run does once the store is closed
                raise StoreUnavailable("the store is closed: the server is shutting down")
            return fn(m)
    c = Committer(run)
    c.start()
    try:
        with lock:
            futures = [c.submit("assert", lambda m, i=i: m.assert_("compass", "summary", f"s{i}", by="agent"))
                       for i in range(5)]
            closing.set()
        outcomes = [_outcome(f) for f in futures]
    finally:
        c.stop()
    assert all(isinstance(o, StoreUnavailable) for o in outcomes)
    assert m.store.next_fact_id() == first and m.store.statement(first) is None
    with pytest.raises(StoreUnavailable, match="shutting down"):
        c.submit("assert", lambda m: None)
    m.close()


def test_writes_that_do_not_group_run_alone_in_their_turn(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> None:
    store = copy_demo(demo_dir, tmp_path / "store", request)
    m = graphmem.open(store)
    c, lock = _committer(m)
    try:
        with lock:  # all three are waiting when the committer starts
            order = [c.submit("assert", lambda m: m.assert_("compass", "summary", "before", by="agent").refs),
                     c.submit("add_entity", lambda m: m.add_entity("Tool", "Valkey").to_dict()),
                     c.submit("assert", lambda m: m.assert_("compass", "uses", "valkey", by="agent").refs)]
        outcomes = [_outcome(f) for f in order]
    finally:
        c.stop()
    assert not any(isinstance(o, Exception) for o in outcomes), outcomes
    assert c.groups == 3  # the entity is added alone, between the two
    assert any(f.object == "tool:valkey" for f in m.current("compass", predicate="uses").facts)
    m.close()


def test_a_group_writes_its_statements_and_subjects_as_one_at_a_time_would(new_store: Callable[[str], Path]) -> None:
    """A group's statements are created by one query and its subjects' rows set by another (new subjects
    made on their own): the store ends as the same writes made one by one leave it, and a rebuild agrees."""
    stores = []
    for name in ("grouped", "alone"):
        m = graphmem.open(new_store(name), create=True)
        for n in ("Atlas", "Borealis", "Cygnus"):
            m.add_entity("Project", n)
        m.add_entity("Tool", "Kuzu")
        m.assert_("Atlas", "status", "active", valid_from="2024-01-01")  # Atlas has a stored row; the others none
        stores.append(m)
    writes = [
        lambda m: m.assert_("Atlas", "status", "paused", valid_from="2024-03-01", scope="team"),
        lambda m: m.assert_("Borealis", "uses", "Kuzu", valid_from="2024-02-01", valid_to="2024-05-01",
                            sources=["https://example.org/b"], by="agent"),
        lambda m: m.assert_("Cygnus", "status", "done", valid_from="2024-04-01"),
        lambda m: m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01"),
    ]
    grouped, alone = stores
    with grouped.write_group():
        refs = [w(grouped).refs for w in writes]
    assert refs == [w(alone).refs for w in writes] == [("fact:2",), ("fact:3",), ("fact:4",), ("fact:5",)]
    for m in stores:
        assert m.rebuild(check=True).drift == ()
    for subject in ("Atlas", "Borealis", "Cygnus"):
        for at in ("2024-02-15", "2024-04-15", "2024-06-01"):
            got = [(f.predicate, f.object, f.valid_to, f.sources)
                   for f in grouped.current(subject, as_of=at).facts]
            assert got == [(f.predicate, f.object, f.valid_to, f.sources)
                           for f in alone.current(subject, as_of=at).facts]
    assert [f.object for f in grouped.current("Borealis", as_of="2024-03-01").facts] == ["tool:kuzu"]
    for fid in range(1, 6):  # every column as written one at a time (nulls where a statement has none)
        assert grouped.store.statement(fid) == alone.store.statement(fid)._replace(
            recorded_at=grouped.store.statement(fid).recorded_at)
    assert grouped.store.statement(2).scope == "team" and grouped.store.statement(3).valid_to is not None
    assert grouped.paths("Atlas", "Kuzu", as_of="2024-03-01").to_dict()["paths"] == \
        alone.paths("Atlas", "Kuzu", as_of="2024-03-01").to_dict()["paths"] != []
    for m in stores:
        m.close()


def _logs(m: graphmem.Memory, refs: list[str]) -> list[list[tuple[Any, ...]]]:
    """Each subject's stored log, record and retraction times left out (two stores write them apart)."""
    return [[(s.id, s.op, s.predicate, s.object, s.object_name, s.valid_from, s.valid_to, s.sources, s.scope,
              s.retracted_at is None) for s in m.store.subject_log(r)] for r in refs]


def test_what_a_sole_writer_remembers_between_groups_is_what_the_store_holds(new_store: Callable[[str], Path]) -> None:
    """The store's only writer keeps the entities its groups resolved and the subjects' logs they wrote
    (write.apply.Known): after groups, an ``end`` in a group, an entity renamed between groups and a group
    rolled back, every answer and stored row is what the same writes one at a time give, and each log it
    remembers is the store's. A store other processes write (PostgreSQL) remembers nothing."""
    stores = []
    for name in ("grouped", "alone"):
        m = graphmem.open(new_store(name), create=True)
        for n in ("Atlas", "Borealis"):
            m.add_entity("Project", n)
        m.add_entity("Tool", "Kuzu")
        stores.append(m)
    grouped, alone = stores
    known = grouped._writer._known
    assert (known is None) == (grouped.store.engine == "postgresql")
    refs = ["project:atlas", "project:borealis"]

    def both(*writes: Callable[[graphmem.Memory], Any]) -> list[Any]:
        """The writes as one group in ``grouped`` and one at a time in ``alone``: the same answers."""
        out = []
        with grouped.write_group():
            for w in writes:
                out.append(_result(lambda w=w: w(grouped)))
        assert out == [_result(lambda w=w: w(alone)) for w in writes]
        assert _logs(grouped, refs) == _logs(alone, refs)
        if known is not None:
            for ref, log in known.logs.items():
                assert log == grouped.store.subject_log(ref)
        return out

    both(lambda m: m.assert_("Atlas", "status", "active", valid_from="2024-01-01").refs,
         lambda m: m.assert_("Borealis", "uses", "Kuzu", valid_from="2024-01-01").refs)
    if known is not None:
        assert set(known.logs) == set(refs) and "Atlas" in known.entities
    both(lambda m: m.assert_("Atlas", "status", "paused", valid_from="2024-02-01").refs,
         lambda m: m.end("Atlas", "status", at="2024-03-01").refs,  # the logs are read again after it
         lambda m: m.assert_("Atlas", "status", "done", valid_from="2024-04-01").refs,
         lambda m: m.assert_("Borealis", "status", "active", valid_from="2024-02-01").refs)
    for m in stores:  # between groups: a write of a subject the groups wrote, a name they resolved renamed
        m.end("Borealis", "uses", "Kuzu", at="2024-04-01")
        m.rename_entity("project:atlas", "Apollo")
    both(lambda m: m.assert_("Atlas", "status", "active", valid_from="2024-05-01").refs,
         lambda m: m.assert_("Apollo", "status", "active", valid_from="2024-05-01").refs,
         lambda m: m.assert_("Borealis", "uses", "Kuzu", valid_from="2024-05-01").refs)
    now = {"as_of": None, "known_at": None}
    assert {**grouped.current("project:atlas").to_dict(), **now} == {**alone.current("project:atlas").to_dict(), **now}
    for m in stores:  # an import makes a name the groups resolved ambiguous
        assert m.import_jsonl(['{"op": "entity", "type": "Tool", "name": "Borealis"}']).entities_created == 1
    assert "AmbiguousEntity" in both(lambda m: m.assert_("Borealis", "status", "paused", valid_from="2024-05-15").refs)[0]
    with pytest.raises(RuntimeError), grouped.write_group():  # rolled back: nothing of it is remembered
        grouped.assert_("project:borealis", "status", "paused", valid_from="2024-06-01")
        grouped._writer.flush()
        raise RuntimeError("the group fails after it wrote")
    if known is not None:
        assert not known.logs and not known.entities
    both(lambda m: m.assert_("project:borealis", "status", "done", valid_from="2024-07-01").refs)
    for m in stores:
        assert m.rebuild(check=True).drift == ()
        m.close()


def _result(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(e).__name__}: {e}"
