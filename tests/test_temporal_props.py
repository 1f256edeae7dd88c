"""Property tests of the temporal semantics (SPEC 4), import/export (SPEC 5) and time parsing.

Three levels:
1. the pure view (``graphmem.view.temporal``) on generated statements with small
   integer instants, checked against a brute-force oracle written from SPEC 4;
2. real Kuzu stores driven through the API and through JSONL import;
3. the time parsers.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
import json
import os
import re
import shutil
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from strategies import (
    ENTITIES,
    HORIZON,
    LAST_DAY,
    PURE_PREDICATES,
    STORE_CHOICES,
    STORE_SUBJECTS,
    Op,
    api_histories,
    day_utc,
    import_histories,
    known_ats,
    pure_statements,
    pure_subject_statements,
)

import graphmem
from graphmem.errors import BadInput, BadTime
from graphmem.model import Interval, Statement
from graphmem.model.times import format_datetime, format_instant, parse_instant, to_us
from graphmem.ontology.schema import load_ontology, load_registry
from graphmem.view.temporal import holding, intervals_for, view_for_subject

REGISTRY = load_registry(load_ontology())
CARDINALITY = {p: REGISTRY.predicates[p].cardinality for p in REGISTRY.predicates}
PURE_SAMPLES = range(-1, HORIZON + 2)  # every integer instant, so every interval boundary

# GRAPHMEM_PROPS_SCALE=10 runs ten times as many examples (a longer bug hunt than `make test`)
SCALE = float(os.environ.get("GRAPHMEM_PROPS_SCALE", "1"))
PURE = settings(max_examples=int(200 * SCALE), deadline=None)
STORE = settings(max_examples=max(1, int(15 * SCALE)), deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                        HealthCheck.data_too_large])

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def replace(obj: Any, **changes: Any) -> Any:
    """A copy with fields changed, for a dataclass or a named tuple."""
    return obj._replace(**changes) if hasattr(obj, "_replace") else dataclasses.replace(obj, **changes)


def us(d: dt.datetime) -> int:
    """Microseconds since the epoch, computed without graphmem."""
    return (d - EPOCH) // dt.timedelta(microseconds=1)


def test_registry_has_the_predicates_the_strategies_use() -> None:
    for pred, (card, _, _) in PURE_PREDICATES.items():
        assert CARDINALITY[pred] == card
    for preds in STORE_CHOICES.values():
        assert set(preds) <= set(CARDINALITY)


# -- the oracle: SPEC 4 read literally, evaluated at one instant -------------------------


def visible(stmts: Iterable[Statement], known_at: int | None) -> list[Statement]:
    """Counts at K iff recorded_at <= K and not retracted at or before K (K=None: now, i.e. +infinity)."""
    if known_at is None:
        return [s for s in stmts if s.retracted_at is None]
    return [s for s in stmts
            if s.recorded_at <= known_at and (s.retracted_at is None or s.retracted_at > known_at)]


def _closed_between(ends: list[Statement], obj: object, lo: int, hi: int) -> bool:
    """Some end for ``obj`` (or for every value) lies in [lo, hi]."""
    return any(lo <= e.valid_from <= hi and (e.object is None or e.object == obj) for e in ends)


def _rank(a: Statement) -> tuple[int, int]:
    """Who wins a tie: the more recently recorded, then (same record time) the higher id."""
    return a.recorded_at, a.id


def oracle(stmts: Iterable[Statement], cardinality: str, known_at: int | None, t: int) -> dict[object, set[int]]:
    """Which objects hold at ``t``, each with the assertion ids that make it hold then.

    An assertion a is in force at t iff valid_from <= t < valid_to and no end for its
    object (or for all) lies in [a.valid_from, t]; for cardinality one also no visible
    assertion of a different value starts in (a.valid_from, t] (supersession: a value
    that loses a tie at its own start still supersedes what ran before it).

    many: o holds iff some assertion of o is in force.

    one: two assertions in force of different values with the same valid_from are a
    tie, decided only where they overlap: the more recently recorded (then the higher
    id) wins there. So v holds at t iff some assertion of v in force loses no tie in
    force at t; the ids behind v are all its assertions in force (a later one of the
    same value continues it).
    """
    vis = visible(stmts, known_at)
    asserts = [s for s in vis if s.op == "assert"]
    ends = [s for s in vis if s.op == "end"]
    in_force = []
    for a in asserts:
        if not (a.valid_from <= t and (a.valid_to is None or t < a.valid_to)):
            continue
        if _closed_between(ends, a.object, a.valid_from, t):
            continue
        if cardinality == "one" and any(a.valid_from < b.valid_from <= t and b.object != a.object for b in asserts):
            continue  # superseded by a different value
        in_force.append(a)
    if cardinality == "one":
        held = {a.object for a in in_force
                if not any(b.valid_from == a.valid_from and b.object != a.object and _rank(b) > _rank(a)
                           for b in in_force)}
        assert len(held) <= 1, f"t={t}: one-valued predicate with {held}"
        in_force = [a for a in in_force if a.object in held]
    out: dict[object, set[int]] = defaultdict(set)
    for a in in_force:
        out[a.object].add(a.id)
    return dict(out)


def check_against_oracle(view: list[Interval], stmts: list[Statement], cardinality: str,
                         known_at: int | None, samples: Iterable[int]) -> None:
    vis_ids = {s.id for s in visible(stmts, known_at)}
    assert_ids = {(s.id, s.object) for s in stmts if s.op == "assert"}
    for iv in view:
        # every id the view cites is a visible statement; supporting ones assert this very object
        assert {(i, iv.object) for i in iv.assertions} <= assert_ids
        assert set(iv.assertions) <= vis_ids and set(iv.conflicts) <= vis_ids
    for t in samples:
        got = holding(view, t)
        want = oracle(stmts, cardinality, known_at, t)
        objs = [iv.object for iv in got]
        assert len(objs) == len(set(objs)), f"t={t}: one object in two intervals {got}"
        assert set(objs) == set(want), f"t={t}: view says {sorted(map(str, objs))}, oracle {sorted(map(str, want))}"
        for iv in got:
            assert want[iv.object] <= set(iv.assertions), f"t={t}: {iv} misses supporting ids {want[iv.object]}"


# -- 1. pure level -----------------------------------------------------------------------


@PURE
@given(st.data())
def test_input_order_does_not_matter(data: st.DataObject) -> None:
    stmts = data.draw(pure_subject_statements(), label="stmts")
    shuffled = data.draw(st.permutations(stmts), label="shuffled")
    k = data.draw(known_ats, label="known_at")
    assert view_for_subject(shuffled, REGISTRY, k) == view_for_subject(stmts, REGISTRY, k)
    for pred in PURE_PREDICATES:
        mine = [s for s in stmts if s.predicate == pred]
        theirs = [s for s in shuffled if s.predicate == pred]
        assert intervals_for(theirs, CARDINALITY[pred], k) == intervals_for(mine, CARDINALITY[pred], k)


@PURE
@pytest.mark.parametrize("pred", sorted(PURE_PREDICATES))
@given(data=st.data())
def test_view_matches_bruteforce_oracle(pred: str, data: st.DataObject) -> None:
    stmts = data.draw(pure_statements(pred), label="stmts")
    k = data.draw(known_ats, label="known_at")
    view = intervals_for(stmts, CARDINALITY[pred], k)
    check_against_oracle(view, stmts, CARDINALITY[pred], k, PURE_SAMPLES)


@PURE
@given(stmts=pure_statements("status"), k=known_ats)
def test_single_value_conflicts_are_reported(stmts: list[Statement], k: int | None) -> None:
    """Ties at one valid_from, and an explicit valid_to cut short by supersession, are conflicts.

    Wherever tied assertions are in force together, the fact holding names the tied assertions of
    other values that the one deciding there (the highest ranked in force) outranks.
    """
    view = intervals_for(stmts, "one", k)
    asserts = [s for s in visible(stmts, k) if s.op == "assert"]
    groups: dict[int, list[Statement]] = defaultdict(list)
    for a in asserts:
        groups[a.valid_from].append(a)
    for t in PURE_SAMPLES:
        held = oracle(stmts, "one", k, t)
        for ids in held.values():
            [iv] = holding(view, t)
            for start, g in groups.items():
                mine = [a for a in g if a.id in ids]
                if not mine:
                    continue
                decider = max(mine, key=_rank)
                losers = {b.id for b in g if b.object != decider.object and _rank(b) < _rank(decider)}
                assert losers <= set(iv.conflicts), f"t={t}, tie at {start}: {iv.conflicts} lacks {losers}"
    for a in asserts:
        if a.valid_to is None:
            continue
        cut = min((b.valid_from for b in asserts if a.valid_from < b.valid_from < a.valid_to and b.object != a.object),
                  default=None)
        # a held right up to the cut: its valid_to was cut short by the values starting at `cut`
        if cut is not None and a.id in oracle(stmts, "one", k, cut - 1).get(a.object, set()):
            [iv] = holding(view, cut - 1)
            others = {b.id for b in groups[cut] if b.object != a.object}
            assert others <= set(iv.conflicts), f"{a} cut short at {cut}: conflicts {iv.conflicts} lack {others}"
    # and nothing else: a fact names only assertions of other values tied with one of its own, or
    # starting inside it or at its end (where they cut an explicit valid_to short)
    by_id = {a.id: a for a in asserts}
    for iv in view:
        starts = {by_id[i].valid_from for i in iv.assertions}
        for c in iv.conflicts:
            b = by_id[c]
            assert b.object != iv.object, f"{iv} names {b} of its own value"
            inside = iv.valid_from < b.valid_from and (iv.valid_to is None or b.valid_from <= iv.valid_to)
            assert b.valid_from in starts or inside, f"{iv} names {b}"


@PURE
@pytest.mark.parametrize("pred", sorted(PURE_PREDICATES))
@given(data=st.data())
def test_intervals_are_disjoint_and_merged(pred: str, data: st.DataObject) -> None:
    stmts = data.draw(pure_statements(pred), label="stmts")
    k = data.draw(known_ats, label="known_at")
    view = intervals_for(stmts, CARDINALITY[pred], k)
    for iv in view:
        assert iv.valid_to is None or iv.valid_from < iv.valid_to, f"empty interval {iv}"
    assert [(iv.valid_from, str(iv.object)) for iv in view] == sorted((iv.valid_from, str(iv.object)) for iv in view)
    by_obj: dict[object, list[Interval]] = defaultdict(list)
    for iv in view:
        by_obj[iv.object].append(iv)
    for ivs in by_obj.values():
        for a, b in zip(ivs, ivs[1:], strict=False):
            assert a.valid_to is not None and a.valid_to < b.valid_from, f"same object overlaps or touches: {a} {b}"
    if CARDINALITY[pred] == "one":
        for a, b in zip(view, view[1:], strict=False):
            assert a.valid_to is not None and a.valid_to <= b.valid_from, f"single value overlaps: {a} {b}"


@PURE
@given(stmts=pure_subject_statements(), k=st.integers(-1, HORIZON))
def test_known_at_equals_view_of_the_history_known_then(stmts: list[Statement], k: int) -> None:
    known_then = [replace(s, retracted_at=None, retract_reason=None) for s in stmts
                  if s.recorded_at <= k and (s.retracted_at is None or s.retracted_at > k)]
    assert view_for_subject(stmts, REGISTRY, k) == view_for_subject(known_then, REGISTRY, None)


def _st(i: int, obj: str | None, vf: int, vt: int | None = None, rec: int = 0, op: str = "assert",
        retracted: int | None = None) -> Statement:
    """A status statement with small integer instants (an end when op is "end"; obj None ends every value)."""
    return Statement(i, op, "project:atlas", "status", obj, "" if obj is None else "literal", vf, vt, rec, retracted)


def _shape(view: list[Interval]) -> list[tuple[Any, ...]]:
    return [(iv.object, iv.valid_from, iv.valid_to, iv.assertions, iv.conflicts) for iv in view]


# SPEC 4: active from 1; paused from 5; later recorded, active from 5 to 7
TIE_EXAMPLE = [_st(1, "active", 1, rec=1), _st(2, "paused", 5, rec=2), _st(3, "active", 5, 7, rec=3)]


@pytest.mark.parametrize(("extra", "want"), [
    # the example itself: the tie is decided only where both hold; paused holds once active ends
    ([], [("active", 1, 7, (1, 3), (2,)), ("paused", 7, None, (2,), ())]),
    # a later start of the same value continues it; of another value, supersedes it
    ([_st(4, "paused", 9, rec=4)], [("active", 1, 7, (1, 3), (2,)), ("paused", 7, None, (2, 4), ())]),
    ([_st(4, "active", 9, rec=4)], [("active", 1, 7, (1, 3), (2,)), ("paused", 7, 9, (2,), ()),
                                    ("active", 9, None, (4,), ())]),
    ([_st(4, "idea", 6, rec=4)], [("active", 1, 6, (1, 3), (2, 4)), ("idea", 6, None, (4,), ())]),  # 3 cut short
    # an end of the winning value: the loser holds from there
    ([_st(4, "active", 6, rec=4, op="end")], [("active", 1, 6, (1, 3), (2,)), ("paused", 6, None, (2,), ())]),
    # an end of the losing value, or of every value
    ([_st(4, "paused", 6, rec=4, op="end")], [("active", 1, 7, (1, 3), (2,))]),
    ([_st(4, None, 8, rec=4, op="end")], [("active", 1, 7, (1, 3), (2,)), ("paused", 7, 8, (2,), ())]),
    # an end closing the winner at its start: the loser holds from the tie on
    ([_st(4, "active", 5, rec=4, op="end")], [("active", 1, 5, (1,), ()), ("paused", 5, None, (2,), ())]),
])
def test_tie_decided_only_where_both_hold(extra: list[Statement], want: list[tuple[Any, ...]]) -> None:
    view = intervals_for(TIE_EXAMPLE + extra, "one")
    assert _shape(view) == want
    check_against_oracle(view, TIE_EXAMPLE + extra, "one", None, PURE_SAMPLES)


def test_tie_example_as_of_and_known_at() -> None:
    [at8] = holding(intervals_for(TIE_EXAMPLE, "one"), 8)
    assert (at8.object, at8.assertions, at8.conflicts) == ("paused", (2,), ())
    [at6] = holding(intervals_for(TIE_EXAMPLE, "one"), 6)
    assert (at6.object, at6.assertions, at6.conflicts) == ("active", (1, 3), (2,))
    # before the short active was recorded, paused ran from 5; retracting it brings that back
    before = [("active", 1, 5, (1,), ()), ("paused", 5, None, (2,), ())]
    assert _shape(intervals_for(TIE_EXAMPLE, "one", known_at=2)) == before
    retracted = TIE_EXAMPLE[:2] + [_st(3, "active", 5, 7, rec=3, retracted=6)]
    assert _shape(intervals_for(retracted, "one", known_at=5)) == _shape(intervals_for(TIE_EXAMPLE, "one"))
    assert _shape(intervals_for(retracted, "one", known_at=6)) == before
    assert _shape(intervals_for(retracted, "one")) == before


@pytest.mark.parametrize(("stmts", "want"), [
    # recorded the other way round: paused is the later record and wins wherever both hold
    ([_st(1, "active", 1, rec=1), _st(2, "active", 5, 7, rec=2), _st(3, "paused", 5, rec=3)],
     [("active", 1, 5, (1,), ()), ("paused", 5, None, (3,), (2,))]),
    # equal record times: the higher id wins
    ([_st(1, "active", 1, rec=1), _st(3, "paused", 5, rec=2), _st(2, "active", 5, 7, rec=2)],
     [("active", 1, 5, (1,), ()), ("paused", 5, None, (3,), (2,))]),
    # the winner is open-ended: the loser never holds, yet still supersedes what ran before it
    ([_st(1, "idea", 1, rec=1), _st(2, "paused", 5, rec=2), _st(3, "active", 5, rec=3)],
     [("idea", 1, 5, (1,), ()), ("active", 5, None, (3,), (2,))]),
    ([_st(1, "active", 1, 10, rec=1), _st(2, "paused", 5, rec=2), _st(3, "active", 5, rec=3)],
     [("active", 1, None, (1, 3), (2,))]),
    # the loser has its own valid_to: it holds only where the winner does not, up to it
    ([_st(1, "active", 1, rec=1), _st(2, "paused", 5, 10, rec=2), _st(3, "active", 5, 7, rec=3)],
     [("active", 1, 7, (1, 3), (2,)), ("paused", 7, 10, (2,), ())]),
    ([_st(1, "active", 1, rec=1), _st(2, "paused", 5, 6, rec=2), _st(3, "active", 5, 7, rec=3)],
     [("active", 1, 7, (1, 3), (2,))]),  # paused superseded active at 5, so nothing holds from 7
    # three values tied: the highest ranked in force decides, and names those it outranks
    ([_st(1, "active", 1, rec=1), _st(2, "idea", 5, rec=2), _st(3, "paused", 5, 9, rec=3),
      _st(4, "active", 5, 7, rec=4)],
     [("active", 1, 7, (1, 4), (2, 3)), ("paused", 7, 9, (3,), (2,)), ("idea", 9, None, (2,), ())]),
    # a tied assertion of the winning value, ranked below a loser, holds only where that loser does not
    ([_st(1, "active", 5, rec=1), _st(2, "paused", 5, 9, rec=2), _st(3, "active", 5, 7, rec=3)],
     [("active", 5, 7, (1, 3), (2,)), ("paused", 7, 9, (2,), (1,)), ("active", 9, None, (1,), ())]),
    # an explicit valid_to cut short by a tie's loser is a conflict with it
    ([_st(1, "active", 1, 10, rec=1), _st(2, "paused", 5, rec=2), _st(3, "active", 5, 7, rec=3)],
     [("active", 1, 7, (1, 3), (2,)), ("paused", 7, None, (2,), ())]),
])
def test_tie_edge_cases(stmts: list[Statement], want: list[tuple[Any, ...]]) -> None:
    view = intervals_for(stmts, "one")
    assert _shape(view) == want
    assert _shape(intervals_for(list(reversed(stmts)), "one")) == want
    check_against_oracle(view, stmts, "one", None, PURE_SAMPLES)


# -- 2. store level ----------------------------------------------------------------------

# instants that hit every boundary api_times produce (00:00, 04:00, 09:00, 10:00, 15:00 UTC)
STORE_TIMES = [day_utc(d, h) for d in range(0, LAST_DAY + 6) for h in (0, 4, 9, 10, 15)]
STORE_TIME_TEXT = [format_instant(us(t)) for t in STORE_TIMES]
FEW_TIME_TEXT = [format_instant(us(day_utc(d, h))) for d, h in ((0, 0), (2, 10), (4, 0), (7, 4), (10, 0), (13, 15))]
FEW_TIME_TEXT.append("now")  # past every write of a test, so equal across stores and across a retraction


_TEMPLATES: dict[bool, Path] = {}
_NEW_SCHEMA: list[Callable[[], str]] = []  # on a PostgreSQL run: a maker of new store addresses


@pytest.fixture(scope="module", autouse=True)
def _store_templates(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[None]:
    """Closed stores to copy, with and without the entities: copying beats creating a schema per example
    (Kuzu, LadybugDB); on a PostgreSQL run each store is a new schema in the session's cluster."""
    if TEST_ENGINE == "postgresql":
        cluster = request.getfixturevalue("pg_cluster")
        _NEW_SCHEMA.append(lambda: str(cluster.url("t_" + uuid.uuid4().hex[:12])))
        yield
        _NEW_SCHEMA.clear()
        return
    for entities in (False, True):
        path = tmp_path_factory.mktemp("template") / "store"
        m = graphmem.open(path, create=True)
        if entities:
            for etype, name in ENTITIES:
                m.add_entity(etype, name)
        m.close()
        _TEMPLATES[entities] = path
    yield
    _TEMPLATES.clear()


@contextmanager
def fresh_store(entities: bool = True) -> Iterator[graphmem.Memory]:
    """A new store of the run's engine: empty, or holding ENTITIES."""
    if _NEW_SCHEMA:
        m = graphmem.open(_NEW_SCHEMA[0](), create=True)
        try:
            for etype, name in ENTITIES if entities else ():
                m.add_entity(etype, name)
            yield m
        finally:
            m.close()
        return
    with tempfile.TemporaryDirectory() as d:
        shutil.copytree(_TEMPLATES[entities], Path(d) / "store")
        m = graphmem.open(Path(d) / "store", create=True)
        try:
            yield m
        finally:
            m.close()


def apply_history(m: graphmem.Memory, ops: list[Op]) -> list[str]:
    """Run the operations, skipping those the API rejects; returns the fact refs created."""
    facts: list[str] = []
    for op in ops:
        before = m.store.statement_count()
        try:
            if op.kind == "assert":
                facts.append(m.assert_(op.subject, op.predicate, op.object, valid_from=op.at, valid_to=op.to).refs[0])
            elif op.kind == "end":
                facts.append(m.end(op.subject, op.predicate, op.object, at=op.at or "").refs[0])
            elif facts:
                m.retract(facts[op.target % len(facts)])
        except BadInput:
            assert m.store.statement_count() == before, f"{op} was rejected but wrote something"
    return facts


def _without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


ALL_REFS = tuple(f"{etype.lower()}:{name.lower()}" for etype, name in ENTITIES)


def store_snapshot(m: graphmem.Memory, known_at: str | None = None, times: list[str] = FEW_TIME_TEXT) -> dict[str, Any]:
    """timeline JSON of every entity and current JSON of the subjects, without the as_of/known_at stamps."""
    return {ref: {"timeline": _without(m.timeline(ref, known_at=known_at).to_dict(), "known_at"),
                  "current": [_without(m.current(ref, as_of=t, known_at=known_at).to_dict(), "as_of", "known_at")
                              for t in (times if ref in STORE_SUBJECTS else ())]}
            for ref in ALL_REFS}


@STORE
@given(ops=api_histories)
def test_store_incremental_view_equals_rebuild_and_rebuild_is_idempotent(ops: list[Op]) -> None:
    with fresh_store() as m:
        apply_history(m, ops)
        report = m.rebuild(check=True)
        assert report.drift == (), f"incremental view drifted from a rebuild: {report.drift}"
        views = dict(m.store.all_subject_views())  # the order of subjects is not part of the contract
        edges = sorted(map(repr, m.store.edges()))
        m.rebuild()
        assert dict(m.store.all_subject_views()) == views
        assert sorted(map(repr, m.store.edges())) == edges
        m.rebuild()
        assert dict(m.store.all_subject_views()) == views
        assert sorted(map(repr, m.store.edges())) == edges
        assert m.rebuild(check=True).drift == ()


@STORE
@given(ops=api_histories, times=st.lists(st.sampled_from(STORE_TIME_TEXT), min_size=20, max_size=20, unique=True))
def test_store_current_is_the_slice_of_the_timeline(ops: list[Op], times: list[str]) -> None:
    with fresh_store() as m:
        apply_history(m, ops)
        for subj in STORE_SUBJECTS:
            timeline = m.timeline(subj).intervals
            for text in times:
                t = parse_instant(text)
                assert m.current(subj, as_of=text).facts == tuple(f for f in timeline if f.holds_at(t)), text


@STORE
@given(ops=api_histories, pick=st.integers(0, 30))
def test_store_retraction_keeps_the_past_as_known_then(ops: list[Op], pick: int) -> None:
    with fresh_store() as m:
        facts = apply_history(m, ops)
        live = [f for f in facts if m.why(f).statement.retracted_at is None]
        if not live:
            return
        fact = live[pick % len(live)]
        before = store_snapshot(m)
        m.retract(fact, "wrong")
        st_ = m.why(fact).statement
        assert st_.retracted_at is not None and st_.retracted_at > st_.recorded_at
        just_before = format_datetime(st_.retracted_at - dt.timedelta(microseconds=1))
        assert store_snapshot(m, known_at=just_before) == before
        for subj in STORE_SUBJECTS:
            for f in m.timeline(subj).intervals:
                assert fact not in f.assertions and fact not in f.conflicts, f"retracted {fact} still in {f}"
            for text in FEW_TIME_TEXT:
                for f in m.current(subj, as_of=text).facts:
                    assert fact not in f.assertions and fact not in f.conflicts
        assert m.rebuild(check=True).drift == ()


@STORE
@given(ops=api_histories)
def test_store_export_import_round_trip(ops: list[Op]) -> None:
    with fresh_store() as m1, fresh_store(entities=False) as m2:
        facts = apply_history(m1, ops)
        exported = m1.export()
        report = m2.import_jsonl(exported.splitlines())
        assert report.ok, report.errors
        assert m2.export() == exported  # same entities, fact:N ids, ends and retractions
        assert store_snapshot(m2) == store_snapshot(m1)
        # as known at each statement's record time (retractions after it not yet in effect)
        for ref in facts[:2]:
            k = format_datetime(m1.why(ref).statement.recorded_at)
            assert store_snapshot(m2, known_at=k) == store_snapshot(m1, known_at=k), k
        assert m2.rebuild(check=True).drift == ()


ENTITY_LINES = [{"op": "entity", "type": t, "name": n} for t, n in ENTITIES]
# valid times in import_histories are whole days at 00:00, or a default valid_from at 12:00
IMPORT_SAMPLES = [us(day_utc(d, h)) for d in range(0, LAST_DAY + 6) for h in (0, 6, 12)]


def model_statements(lines: list[dict[str, Any]]) -> list[Statement]:
    """The statements an import of ``lines`` into an empty store must hold, built without graphmem's parser."""

    def instant(text: str) -> int:
        if len(text) == 10:
            return us(dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC))
        return us(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))

    out: list[Statement] = []
    for line in lines:
        if line["op"] == "retract":
            i = int(line["fact"].split(":")[1]) - 1
            out[i] = replace(out[i], retracted_at=instant(line["at"]))
            continue
        rec = instant(line["recorded_at"])
        pred = line["predicate"]
        kind = "entity" if REGISTRY.predicates[pred].entity_valued else "literal"
        if line["op"] == "assert":
            vf = rec if line["valid_from"] is None else instant(line["valid_from"])
            vt = None if line["valid_to"] is None else instant(line["valid_to"])
            out.append(Statement(len(out) + 1, "assert", line["subject"], pred, line["object"], kind, vf, vt, rec))
        else:
            obj = line.get("object")
            out.append(Statement(len(out) + 1, "end", line["subject"], pred, obj, "" if obj is None else kind,
                                 instant(line["at"]), None, rec))
    return out


@STORE
@given(lines=import_histories(), data=st.data())
def test_import_with_past_record_times(lines: list[dict[str, Any]], data: st.DataObject) -> None:
    split = data.draw(st.integers(0, len(lines)), label="split")
    model = model_statements(lines)
    # record times that matter: each recording or retraction, and the instant just before it
    events = sorted({s.recorded_at for s in model} | {s.retracted_at for s in model if s.retracted_at is not None})
    candidates = sorted({k for e in events for k in (e - 1, e)})
    picked = data.draw(st.lists(st.sampled_from(candidates), max_size=6, unique=True), label="known_ats")
    known_ats: list[str | None] = [format_instant(k) for k in sorted(picked)] + [None]
    with fresh_store(entities=False) as m1, fresh_store(entities=False) as m2:
        # in two parts: the first import into an empty store, the second onto existing statements
        r1 = m1.import_jsonl([json.dumps(x) for x in ENTITY_LINES + lines[:split]])
        r2 = m1.import_jsonl([json.dumps(x) for x in lines[split:]])
        assert r1.ok and r2.ok, (r1.errors, r2.errors)
        assert m1.rebuild(check=True).drift == ()
        # at each known_at, at every instant: the store agrees with the oracle
        timelines = {}
        for k_text in known_ats:
            k = None if k_text is None else parse_instant(k_text)
            for subj in STORE_SUBJECTS:
                view = list(m1.timeline(subj, known_at=k_text).view)
                timelines[(subj, k_text)] = view
                for pred in STORE_CHOICES[subj]:
                    stmts = [s for s in model if s.subject == subj and s.predicate == pred]
                    check_against_oracle([iv for iv in view if iv.predicate == pred], stmts, CARDINALITY[pred], k,
                                         IMPORT_SAMPLES)
        # current(as_of, known_at) is the slice of timeline(known_at), spot-checked
        for k_text in known_ats:
            t_text = data.draw(st.sampled_from(STORE_TIME_TEXT), label="as_of")
            t = parse_instant(t_text)
            for subj in STORE_SUBJECTS:
                got = m1.current(subj, as_of=t_text, known_at=k_text).view
                assert got == tuple(iv for iv in timelines[(subj, k_text)] if iv.contains(t)), (k_text, t_text)
        # the round trip keeps ids, record times and retraction times
        exported = m1.export()
        report = m2.import_jsonl(exported.splitlines())
        assert report.ok, report.errors
        assert m2.export() == exported
        for k_text in known_ats:
            for subj in STORE_SUBJECTS:
                tl1 = m1.timeline(subj, known_at=k_text).to_dict()
                tl2 = m2.timeline(subj, known_at=k_text).to_dict()
                assert _without(tl2, "known_at") == _without(tl1, "known_at"), k_text


def test_store_tie_example(store_path: Path) -> None:
    """SPEC 4's example through the API: incremental writes, rebuild, lint and known_at agree."""
    m = graphmem.open(store_path, create=True)
    try:
        m.add_entity("Project", "Atlas")
        a1 = m.assert_("project:atlas", "status", "active", valid_from="2025-01-01").refs[0]
        p = m.assert_("project:atlas", "status", "paused", valid_from="2025-01-05").refs[0]
        a2 = m.assert_("project:atlas", "status", "active", valid_from="2025-01-05", valid_to="2025-01-07").refs[0]

        def now_at(day: str, known_at: str | None = None) -> list[tuple[Any, ...]]:
            facts = m.current("project:atlas", as_of=day, known_at=known_at).to_dict()["facts"]
            return [(f["object"]["value"], f["assertions"], f["conflicts"]) for f in facts]

        assert now_at("2025-01-08") == [("paused", [p], [])]
        assert now_at("2025-01-06") == [("active", [a1, a2], [p])]
        timeline = m.timeline("project:atlas", predicate="status").to_dict()["intervals"]
        assert [(iv["object"]["value"], iv["valid_from"], iv["valid_to"]) for iv in timeline] == [
            ("active", "2025-01-01T00:00:00Z", "2025-01-07T00:00:00Z"), ("paused", "2025-01-07T00:00:00Z", None)]
        issues = [i for i in m.lint().issues if i.code == "single_value_conflict"]
        assert [(i.fact, i.subject) for i in issues] == [(a2, "project:atlas")]
        assert p in issues[0].message
        assert m.rebuild(check=True).drift == ()
        m.rebuild()
        assert now_at("2025-01-08") == [("paused", [p], [])]
        # as known before the short active was recorded, and after it is retracted
        known_then = m.why(a2).statement.recorded_at - dt.timedelta(microseconds=1)
        assert now_at("2025-01-08", format_datetime(known_then)) == [("paused", [p], [])]
        assert now_at("2025-01-06", format_datetime(known_then)) == [("paused", [p], [])]
        m.retract(a2, "wrong")
        assert now_at("2025-01-06") == [("paused", [p], [])]
        assert m.rebuild(check=True).drift == ()
    finally:
        m.close()


# -- 3. parsers --------------------------------------------------------------------------

ISO_OUT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$")
offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
# local datetimes whose UTC instant stays inside years 1000..9999 for any offset
safe_local = st.datetimes(min_value=dt.datetime(1000, 1, 2), max_value=dt.datetime(9999, 12, 30))


def _iso(aware: dt.datetime, zulu: bool) -> str:
    text = aware.isoformat()
    return text[:-6] + "Z" if zulu and text.endswith("+00:00") else text


@settings(max_examples=300, deadline=None)
@given(local=safe_local, tz=offsets, zulu=st.booleans())
def test_parse_instant_converts_any_offset_to_utc(local: dt.datetime, tz: dt.timezone, zulu: bool) -> None:
    aware = local.replace(tzinfo=tz)
    assert parse_instant(_iso(aware, zulu)) == us(aware)
    # a bare date is 00:00 UTC
    assert parse_instant(local.date().isoformat()) == us(dt.datetime.combine(local.date(), dt.time(),
                                                                             tzinfo=dt.UTC))


@given(now=st.integers(0, 2**50), text=st.sampled_from(["now", "NOW", " Now ", "now\n"]))
def test_parse_now(now: int, text: str) -> None:
    assert parse_instant(text, now=now) == now


@settings(max_examples=300, deadline=None)
@example(instant=us(dt.datetime(999, 5, 1, tzinfo=dt.UTC)))  # years before 1000 keep 4 digits
@example(instant=us(dt.datetime(2243, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC)))  # far from the epoch, exact
@given(instant=st.integers(us(dt.datetime(1, 1, 1, tzinfo=dt.UTC)),
                           us(dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC))))
def test_format_instant_is_iso_utc_and_reparses(instant: int) -> None:
    text = format_instant(instant)
    assert text is not None and ISO_OUT.match(text), text
    assert parse_instant(text) == instant


@settings(max_examples=200, deadline=None)
@example(local=dt.datetime(1, 1, 1, 0, 30), tz=dt.timezone(dt.timedelta(hours=1)), zulu=False)
@example(local=dt.datetime(9999, 12, 31, 23), tz=dt.timezone(dt.timedelta(hours=-2)), zulu=False)
@given(local=st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)),
       tz=offsets, zulu=st.booleans())
def test_parse_instant_any_year_gives_the_instant_or_bad_time(local: dt.datetime, tz: dt.timezone,
                                                              zulu: bool) -> None:
    """Near year 1 or 9999 the UTC conversion may leave the calendar: exact or BadTime, never a crash."""
    aware = local.replace(tzinfo=tz)
    try:
        got = parse_instant(_iso(aware, zulu))
    except BadTime:
        return
    assert got == us(aware)


def _days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]  # December 9999 too, which has no next month to step back from


@st.composite
def impossible_dates(draw: st.DrawFn) -> str:
    year = draw(st.integers(1, 9999))
    kind = draw(st.sampled_from(["month", "day", "zero-day", "feb"]))
    if kind == "month":
        month, day = draw(st.one_of(st.just(0), st.integers(13, 99))), draw(st.integers(1, 28))
    elif kind == "day":
        month = draw(st.integers(1, 12))
        day = draw(st.integers(_days_in_month(year, month) + 1, 99))
    elif kind == "zero-day":
        month, day = draw(st.integers(1, 12)), 0
    else:
        month, day = 2, draw(st.integers(_days_in_month(year, 2) + 1, 31))  # Feb 30, Feb 29 off leap years
    date = f"{year:04d}-{month:02d}-{day:02d}"
    return date + draw(st.sampled_from(["", "T10:00:00Z", "T10:00:00+02:00", "T00:00:00.5-05:30"]))


@settings(max_examples=300, deadline=None)
@given(text=impossible_dates())
@example(text="2025-02-30")
@example(text="2025-13-01")
@example(text="2023-02-29T12:00:00Z")
@example(text="9999-12-32")  # the last month of the calendar
def test_impossible_dates_are_bad_time(text: str) -> None:
    with pytest.raises(BadTime):
        parse_instant(text)


def _facts_slow(m: graphmem.Memory, predicate: str | None, at: int, prefix: str | None) -> list[tuple[str, Interval]]:
    """``facts`` the slow way: every subject's whole view, ``holding``, one sort (what the scan replaced)."""
    rows = [(ref, iv) for ref, _, view in m.store.all_subject_rows(prefix) for iv in holding(view, at)
            if predicate is None or iv.predicate == predicate]
    return sorted(rows, key=lambda r: (r[0], r[1].predicate, r[1].valid_from, str(r[1].object)))


@STORE
@given(ops=api_histories, times=st.lists(st.sampled_from(STORE_TIME_TEXT), min_size=4, max_size=4, unique=True))
def test_store_facts_scan_equals_the_whole_view_filtered(ops: list[Op], times: list[str]) -> None:
    """The predicate scan (the predicate's SubjectFacet rows whose bounds admit the time) gives what filtering whole views gives."""
    with fresh_store() as m:
        apply_history(m, ops)
        preds = sorted({p for choices in STORE_CHOICES.values() for p in choices})
        for text in [*times, "now"]:
            for pred in [None, *preds]:
                for stype, prefix in ((None, None), ("Project", "project:")):
                    got = m.facts(predicate=pred, subject_type=stype, as_of=text)
                    want = _facts_slow(m, pred, to_us(got.as_of), prefix)
                    assert [(e.ref, iv) for e, iv in got.view] == want, (text, pred, stype)
                    assert all(e.name == m.entity(e.ref).name for e, _ in got.view)
