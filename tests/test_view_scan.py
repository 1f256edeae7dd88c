"""The predicate scan over the view kept by predicate (``SubjectFacet``, store/kuzu/views.py
``subject_facts_holding``): text that looked like a stored row to the scan of layout 7 (which cut a
predicate's rows out of each whole view) or that JSON must escape, in a source, an object or an
entity's name, reads back as what filtering whole views gives, at every time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import graphmem
from graphmem.model.times import parse_instant, to_us
from graphmem.view.temporal import holding

TRICKY = ['"],["status",', 'null],["status",', '["status",', '"],["', 'null],["', ']', '\\', '"', "status", "a\nb"]


def _slow(m: graphmem.Memory, predicate: str, at: int) -> list[tuple[str, object]]:
    rows = [(ref, iv) for ref, _, view in m.store.all_subject_rows() for iv in holding(view, at)
            if iv.predicate == predicate]
    return sorted(rows, key=lambda r: (r[0], r[1].valid_from, str(r[1].object)))


@pytest.mark.parametrize("where", ["source", "name", "object"])
def test_scan_equals_the_whole_view_with_tricky_text(new_store: Callable[[str], Path], where: str) -> None:
    with graphmem.open(new_store("s"), create=True) as m:
        for i, weird in enumerate(TRICKY):
            p = m.add_entity("Project", f"P{i}").refs[0] if where != "name" else None
            if where == "name":
                p = m.add_entity("Project", f"P{i} {weird}").refs[0]
            t = m.add_entity("Tool", f"T{i} {weird}" if where == "name" else f"T{i}").refs[0]
            src = ["urn:x:" + weird.replace("\n", "%0A") if where == "source" else "https://a.example/1",
                   "https://a.example/2"]
            m.assert_(p, "status", "paused", valid_from="2020-01-01", valid_to="2021-01-01", sources=src)
            m.assert_(p, "status", "active", valid_from="2021-01-01", sources=src)
            m.assert_(p, "uses", t, valid_from="2020-06-01", sources=src)
            m.assert_(p, "summary", weird if where == "object" else "plain", valid_from="2019-01-01", sources=src)
        for text in ["2019-06-01", "2020-03-01", "2021-01-01", "2030-01-01"]:
            at = parse_instant(text)
            for pred in ("status", "uses", "summary"):
                facts, named = m.store.subject_facts_holding(at, pred)
                got = [(f.subject, f.interval()) for f in facts]  # in the store's order, not sorted here
                assert got == _slow(m, pred, at), (text, pred)
                assert [ref for ref, _ in named] == list(dict.fromkeys(f.subject for f in facts)), (text, pred)
                view = m.facts(predicate=pred, as_of=text).view
                assert all(e.name == m.entity(e.ref).name for e, _ in view)


def test_the_scan_gives_subjects_in_ref_order_whatever_the_store_order(new_store: Callable[[str], Path]) -> None:
    """Refs whose order by code point differs from the order they were made in and from a locale's order
    (capitals, digits, an accented letter, a hyphen): ``facts -p`` lists them by ref, each subject's facts
    by start, at now and at a past time, with and without an object filter."""
    names = ["zeta", "Éclair", "alpha-2", "alpha", "Beta", "10", "9", "alpha z", "ábc", "Zulu"]
    with graphmem.open(new_store("s"), create=True) as m:
        tools = [m.add_entity("Tool", t).refs[0] for t in ("T1", "T2", "T3")]
        for n in names:
            ref = m.add_entity("Project", n).refs[0]
            m.assert_(ref, "uses", tools[0], valid_from="2020-01-01", valid_to="2021-01-01")
            m.assert_(ref, "uses", tools[2], valid_from="2021-06-01")
            m.assert_(ref, "uses", tools[1], valid_from="2021-01-01")
        for at in [None, "2020-06-01"]:
            r = m.facts(predicate="uses", as_of=at)
            got = [(f.subject, f.valid_from, f.object) for f in r.facts]
            assert got == sorted(got) and len({s for s, _, _ in got}) == len(names)
            assert len(got) == (2 if at is None else 1) * len(names)
            # the subjects, made on first use, are each fact's in the same order, with their types and names
            assert list(r.subjects) == list(dict.fromkeys(f.subject for f in r.facts))
            assert all(e == m.entity(ref) or (e.type, e.name) == ("Project", m.entity(ref).name)
                       for ref, e in r.subjects.items())
            assert {e.type for e in r.subjects.values()} == {"Project"}
            assert [(e.ref, iv.subject, iv.valid_from) for e, iv in r.view] == [
                (f.subject, f.subject, to_us(f.valid_from)) for f in r.facts]
        only = [f.subject for f in m.facts(predicate="uses", object="T2").facts]
        assert only == sorted(only) and len(only) == len(names)


def test_times_outside_a_datetime_read_exactly(new_store: Callable[[str], Path]) -> None:
    """A store written before times were checked may hold a time before the year 1 or after 9999, which no
    datetime holds: ``facts`` then reads the view's intervals, so its JSON, order and ``view`` keep the
    stored instants, as ``current`` does (a ``Fact`` of them cannot)."""
    from graphmem.model import Interval
    from graphmem.model.times import MAX_US, MIN_US
    early, later, end = MIN_US - 7 * 10**12, MIN_US - 5 * 10**12, MAX_US + 10**9
    with graphmem.open(new_store("s"), create=True) as m:
        m.add_entity("Project", "Old")
        m.add_entity("Project", "New")
        m.assert_("New", "status", "active", valid_from="2019-01-01")
        m.store.rewrite_subject("project:old", "Old", "", [
            Interval("project:old", "status", obj, "literal", start, end, (n,), (), (), None)
            for obj, start, n in (("idea", early, 1), ("done", later, 2))])
        for predicate in ("status", None):
            r = m.facts(predicate=predicate, as_of="2020-01-01")
            cur = m.current("project:old", as_of="2020-01-01").to_dict()["facts"]
            old = [(f["object"], f["valid_from"], f["valid_to"]) for f in r.to_dict()["facts"]
                   if f["subject"]["ref"] == "project:old"]
            assert old == [(f["object"], f["valid_from"], f["valid_to"]) for f in cur]
            assert old[0][1].startswith("+0000-") and old[0][2].startswith("+10000-"), old
            assert [(e.ref, iv.valid_from) for e, iv in r.view] == [
                ("project:new", parse_instant("2019-01-01")), ("project:old", early), ("project:old", later)]
            assert [f.subject for f in r.facts] == ["project:new", "project:old", "project:old"]
