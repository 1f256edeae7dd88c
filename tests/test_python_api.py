"""The Python API for people and notebooks: results carry UTC datetimes and ``fact:N`` refs, ``ingest`` takes
records as dicts, JSON text and paths, every result has a readable repr with dates, and results become
pandas DataFrames and a timeline draws itself."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import BadInput, MissingExtra
from graphmem.model.facts import Event, Fact
from graphmem.model.times import short_instant

UTC = dt.UTC


def _aware(t: object) -> bool:
    return isinstance(t, dt.datetime) and t.utcoffset() == dt.timedelta(0)


# 11. datetimes and fact refs --------------------------------------------------------------------

def test_current_facts_carry_datetimes_and_refs_every_method_accepts(demo: graphmem.Memory) -> None:
    r = demo.current("atlas", as_of="2025-06-01")
    assert r.as_of == dt.datetime(2025, 6, 1, tzinfo=UTC) and _aware(r.known_at)
    uses = {f.object: f for f in r.facts if f.predicate == "uses"}
    neo = uses["tool:neo4j"]
    assert isinstance(neo, Fact)
    assert (neo.valid_from, neo.valid_to) == (dt.datetime(2025, 3, 3, tzinfo=UTC), dt.datetime(2025, 7, 14, tzinfo=UTC))
    assert neo.assertions == ("fact:35",) and neo.object_name == "Neo4j"
    assert neo.holds_at("2025-06-01") and not neo.holds_at(dt.datetime(2025, 7, 14, tzinfo=UTC))
    why = demo.why(neo.assertions[0])  # the id as the fact carries it is what why() takes
    assert why.statement.fact == "fact:35" and isinstance(why.statement, Event)
    assert why.statement.valid_from == neo.valid_from and _aware(why.statement.recorded_at)
    assert why.in_view == (neo,)
    # the JSON document is what it was: ISO text and fact refs, built from the view, not from the Facts
    doc = r.to_dict()
    assert doc["as_of"] == "2025-06-01T00:00:00Z"
    assert doc["facts"] == [f.to_dict() for f in r.facts] == [iv.to_dict() for iv in r.view]


def test_timeline_intervals_and_events(demo: graphmem.Memory) -> None:
    t = demo.timeline("atlas", predicate="owner")
    assert [(f.object, f.valid_from.date().isoformat(), f.valid_to and f.valid_to.date().isoformat())
            for f in t.intervals] == [("person:maya-chen", "2025-01-06", "2026-02-02"),
                                      ("person:jonas-weber", "2026-02-02", None)]
    assert all(isinstance(e, Event) and _aware(e.recorded_at) and e.fact.startswith("fact:") for e in t.events)
    assert [e.op for e in t.events][:2] == ["assert", "assert"]
    doc = t.to_dict()
    assert [e["fact"] for e in doc["events"]] == [e.fact for e in t.events]
    assert [e["recorded_at"] for e in doc["events"]] == [e.recorded_at.strftime("%Y-%m-%dT%H:%M:%SZ") for e in t.events]


def test_retraction_events_and_why_refs(atlas: graphmem.Memory) -> None:
    one = atlas.assert_("atlas", "status", "active", valid_from="2025-01-01").refs[0]
    two = atlas.assert_("atlas", "status", "paused", valid_from="2025-03-01").refs[0]
    atlas.retract(two, "typo")
    events = atlas.timeline("atlas").events
    assert [(e.op, e.fact) for e in events] == [("assert", one), ("assert", two), ("retract", two)]
    assert events[-1].retract_reason == "typo" and events[-1].recorded_at == events[1].retracted_at
    assert atlas.why(two).statement.retracted_at == events[-1].recorded_at
    three = atlas.assert_("atlas", "status", "done", valid_from="2025-06-01").refs[0]
    assert atlas.why(one).superseded_by == (three,) and atlas.why(three).supersedes == (one,)


def test_facts_search_and_retrieval_results(demo: graphmem.Memory) -> None:
    r = demo.facts(predicate="uses", object="kuzu")
    assert [f.subject for f in r.facts] == ["project:atlas", "project:compass", "repo:graph-core"]
    assert r.subjects["project:atlas"].name == "Atlas" and _aware(r.as_of)
    hit = demo.search("kuzu").results[0]
    assert hit.ref == "rec:18" and hit.ts == dt.datetime(2025, 7, 14, 8, 30, tzinfo=UTC)
    record = demo.record(hit.ref)
    assert record.ts == hit.ts and _aware(record.ingested_at) and record.to_dict()["ts"] == "2025-07-14T08:30:00Z"
    rec = demo.recommend("an embedded graph store like Kuzu", top=1, as_of="2026-01-01")
    assert rec.as_of == dt.datetime(2026, 1, 1, tzinfo=UTC)
    step = rec.results[0].paths[0].steps[-1]
    assert re.fullmatch(r"fact:\d+", step.fact) and _aware(step.valid_from)
    assert demo.why(step.fact).statement.fact == step.fact
    p = demo.paths("atlas", "kuzu", as_of="2026-01-01")
    assert p.as_of == rec.as_of and all(s.fact.startswith("fact:") for s in p.paths[0])
    pack = demo.pack("Atlas graph database", as_of="2026-01-01")
    assert pack.as_of == rec.as_of and pack.to_dict()["meta"]["as_of"] == "2026-01-01T00:00:00Z"


def test_import_report_names_the_facts(mem: graphmem.Memory) -> None:
    lines = [{"op": "entity", "type": "Project", "name": "Atlas"},
             {"op": "assert", "subject": "project:atlas", "predicate": "status", "object": "active",
              "valid_from": "2025-01-01"},
             {"op": "assert", "subject": "project:atlas", "predicate": "status", "object": "paused",
              "valid_from": "2025-02-01"}]
    r = mem.import_jsonl([json.dumps(x) for x in lines])
    assert (r.first_fact, r.last_fact) == ("fact:1", "fact:2")
    assert r.to_dict()["facts"] == ["fact:1", "fact:2"]
    assert mem.why(r.last_fact).statement.object == "paused"


# 12. ingest: dicts, JSON text, paths; search results ------------------------------------------

def test_ingest_takes_dicts_json_text_and_paths(mem: graphmem.Memory, tmp_path: Path) -> None:
    one = {"text": "Atlas moved to Kuzu.", "ts": "2025-07-14", "kind": "note"}
    assert mem.ingest(one).stored == ("rec:1",)
    assert mem.ingest(json.dumps(one)).duplicates == 1  # the same record as a JSON line: nothing twice
    r = mem.ingest('{"text": "Lunch at noon."}\n{"text": "Standup moved."}')
    assert r.stored == ("rec:2", "rec:3") and r.lines == 2
    r = mem.ingest([{"text": "From a dict."}, '{"text": "From a str."}', b'{"text": "From bytes."}', {"txt": "no"}])
    assert r.stored == ("rec:4", "rec:5", "rec:6")
    assert r.errors == ((4, "missing or empty 'text': expected a non-empty string"),)
    f = tmp_path / "notes.jsonl"
    f.write_text('{"text": "From a file."}\n', encoding="utf-8")
    assert mem.ingest(f).stored == ("rec:7",)
    assert mem.ingest(str(f)).duplicates == 1  # a str that is not JSON text is a path, as before
    assert mem.record("rec:4").text == "From a dict."


def test_ingest_of_a_str_that_is_neither_json_nor_a_file(mem: graphmem.Memory) -> None:
    with pytest.raises(BadInput, match=r"cannot read records file 'Atlas moved to Kuzu\.'.*JSON text"):
        mem.ingest("Atlas moved to Kuzu.")
    assert mem.store.record_count() == 0


def test_search_results_is_the_json_name(demo: graphmem.Memory) -> None:
    r = demo.search("kuzu", limit=3)
    assert [h.ref for h in r.results] == [d["ref"] for d in r.to_dict()["results"]]
    with pytest.warns(DeprecationWarning, match="results"):
        assert r.hits == r.results


# 13. repr and HTML with dates ---------------------------------------------------------------------

def _every_result(m: graphmem.Memory) -> list[Any]:
    return [m.current("atlas"), m.current("atlas", as_of="2025-06-01"), m.timeline("atlas"),
            m.facts(predicate="uses"), m.why("fact:35"), m.search("kuzu"), m.lint(), m.rebuild(check=True),
            m.recommend("graph store", top=2), m.paths("atlas", "kuzu"), m.pack("Atlas", budget_tokens=200),
            m.show_entity("atlas"), m.list_entities(), m.info(), m.ontology_doc(), m.registry_doc(),
            m.ingest({"text": "A note."}), m.add_entity("Tool", "Quill2"), m.export_doc(), m.extract_text("Atlas uses Kuzu.")]


def test_every_result_has_a_readable_repr_with_dates(demo: graphmem.Memory) -> None:
    for r in _every_result(demo):
        text = repr(r)
        assert text.startswith(type(r).__name__ + "("), text
        assert not re.search(r"\d{12,}", text), f"an instant as an integer in {text}"
        assert "T00:00:00Z" not in text, f"midnight shown in full in {text}"
    cur = repr(demo.current("atlas", as_of="2025-06-01"))
    assert cur.splitlines()[0].startswith("CurrentResult(Atlas (project:atlas) as of 2025-06-01, known at ")
    assert "  uses Neo4j (tool:neo4j)  2025-03-03 to 2025-07-14  fact:35" in cur.splitlines()
    assert repr(demo.timeline("atlas")).splitlines()[-1] == "  ... and 16 more"
    assert repr(demo.current("atlas").facts[0]).startswith("Fact(project:atlas ")


def test_html_tables_show_a_date_alone_at_midnight(demo: graphmem.Memory) -> None:
    html = demo.current("atlas", as_of="2025-06-01")._repr_html_()
    assert "<td style='text-align:left'>2025-03-03</td>" in html and "T00:00:00Z" not in html
    assert "as of 2025-06-01," in html
    search = demo.search("kuzu")._repr_html_()
    assert "2025-07-14T08:30:00Z" in search  # a time that is not midnight stays whole


@pytest.mark.parametrize(("value", "shown"), [
    ("2025-01-06T00:00:00Z", "2025-01-06"), ("2025-01-06T00:00:01Z", "2025-01-06T00:00:01Z"),
    (dt.datetime(2025, 1, 6, tzinfo=UTC), "2025-01-06"), (1736121600000000, "2025-01-06"),
    (dt.datetime(2025, 1, 6, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))), "2025-01-06"), (None, None),
])
def test_short_instant(value: Any, shown: str | None) -> None:
    assert short_instant(value) == shown


# 14. DataFrames and plots -------------------------------------------------------------------------

def test_to_frame(demo: graphmem.Memory) -> None:
    pd = pytest.importorskip("pandas")
    df = demo.current("atlas", as_of="2025-06-01").to_frame()
    assert isinstance(df, pd.DataFrame) and len(df) == 9
    assert str(df["valid_from"].dtype) == "datetime64[us, UTC]" and str(df["valid_to"].dtype) == "datetime64[us, UTC]"
    row = df[df["object"] == "tool:neo4j"].iloc[0]
    assert row["valid_from"] == pd.Timestamp("2025-03-03", tz="UTC") and row["assertions"] == ["fact:35"]
    now = demo.current("atlas").to_frame()
    assert str(now["valid_to"].dtype) == "datetime64[us, UTC]" and now["valid_to"].isna().all()
    facts = demo.facts(predicate="uses", object="kuzu").to_frame()
    assert list(facts["subject"]) == ["project:atlas", "project:compass", "repo:graph-core"]
    assert list(facts["subject_name"])[:2] == ["Atlas", "Compass"]
    events = demo.timeline("atlas").to_frame(events=True)
    assert len(events) == 33 and str(events["recorded_at"].dtype) == "datetime64[us, UTC]"
    assert list(demo.search("kuzu", limit=2).to_frame()["ref"]) == ["rec:18", "rec:17"]
    assert set(demo.lint().to_frame()["code"]) >= {"missing_source"}
    assert list(demo.recommend("graph store", top=2).to_frame()["rank"]) == [1, 2]
    assert demo.paths("atlas", "kuzu").to_frame()["fact"].str.startswith("fact:").all()
    assert demo.info().to_frame().loc[0, "entities"] > 0
    assert list(demo.list_entities(type_name="Tool").to_frame()["type"].unique()) == ["Tool"]


def test_timeline_plot(demo: graphmem.Memory) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = demo.timeline("atlas")
    ax = t.plot(predicates=["status", "owner"])
    bars = [p for p in ax.patches]
    assert len(bars) == len([f for f in t.intervals if f.predicate in ("status", "owner")]) > 0
    assert ax.get_title() == "Atlas (project:atlas) over time"
    labels = [x.get_text() for x in ax.texts]
    assert " owner: Maya Chen" in labels and " status: active" in labels
    fig, own = plt.subplots()
    assert t.plot(ax=own) is own and len(own.patches) == len(t.intervals)
    plt.close("all")


@pytest.mark.parametrize(("blocked", "call", "needs"), [
    ("pandas", lambda m: m.current("atlas").to_frame(), "to_frame() needs pandas"),
    ("pandas", lambda m: m.timeline("atlas").to_frame(events=True), "to_frame() needs pandas"),
    ("matplotlib", lambda m: m.timeline("atlas").plot(), "plot() needs matplotlib"),
    ("matplotlib.pyplot", lambda m: m.timeline("atlas").plot(), "plot() needs matplotlib"),
])
def test_a_missing_extra_says_what_to_install(demo: graphmem.Memory, monkeypatch: pytest.MonkeyPatch,
                                              blocked: str, call: Any, needs: str) -> None:
    monkeypatch.setitem(sys.modules, blocked, None)  # what Python does when the package is not installed
    with pytest.raises(MissingExtra) as e:
        call(demo)
    assert str(e.value) == f"{needs}, which is not installed: pip install 'graphmem[notebook]'"
    assert isinstance(e.value, ImportError)
