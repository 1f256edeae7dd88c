"""pack (SPEC 10): within budget, every line cited and resolvable, nothing excluded in the text, repeatable."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, one_clear_line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.model.times import parse_instant
from graphmem.retrieval.packlines import count_tokens

NAMES = {"project": ("Orchid", "Birch", "Cedar"), "tool": ("Alpha", "Beta"), "concept": ("Search",)}
WORDS = ("latency", "migration", "index", "review", "deploy", "budget", "graph", "cache")
LAST_DAY = 14


def _at(day: int, hour: int = 12) -> str:
    return f"2025-01-{day:02d}T{hour:02d}:00:00Z"


def _ref(kind: str, name: str) -> str:
    return f"{kind}:{name.lower()}"


@st.composite
def stores(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(import lines: entities, asserts, ends, retractions, with past record times; ingest lines)."""
    lines: list[dict[str, Any]] = [{"op": "entity", "type": k.capitalize(), "name": n, "description": f"The {n} {k}."}
                                   for k, ns in NAMES.items() for n in ns]
    projects = [_ref("project", n) for n in NAMES["project"]]
    tools = [_ref("tool", n) for n in NAMES["tool"]]
    facts = 0
    live: list[int] = []
    for day in range(1, draw(st.integers(2, LAST_DAY))):
        kind = draw(st.sampled_from(("uses", "uses", "status", "status", "end", "retract", "extractor")))
        if kind == "retract" and live:
            i = draw(st.sampled_from(live))
            live.remove(i)
            lines.append({"op": "retract", "fact": f"fact:{i}", "reason": "wrong", "at": _at(day, 18)})
            continue
        subject = draw(st.sampled_from(projects))
        if kind == "end":
            lines.append({"op": "end", "subject": subject, "predicate": "uses", "object": draw(st.sampled_from(tools)),
                          "at": _at(draw(st.integers(1, LAST_DAY)), 0), "recorded_at": _at(day)})
        else:
            pred, obj = (("status", draw(st.sampled_from(("active", "paused", "done")))) if kind == "status"
                         else ("uses", draw(st.sampled_from(tools))))
            line = {"op": "assert", "subject": subject, "predicate": pred, "object": obj,
                    "valid_from": _at(draw(st.integers(1, LAST_DAY)), 0), "recorded_at": _at(day)}
            if kind == "extractor":
                line["asserted_by"] = "extractor"
            lines.append(line)
        facts += 1
        live.append(facts)
    records = []
    for i in range(draw(st.integers(0, 8))):
        who = draw(st.sampled_from([n for ns in NAMES.values() for n in ns]))
        text = f"{who} {' '.join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))}."
        kind = draw(st.sampled_from(("note", "message", "rule", "constraint", "doc")))
        records.append({"id": f"r{i}", "ts": _at(draw(st.integers(1, LAST_DAY)), 9), "kind": kind, "text": text})
    return lines, records


def _open(path: Path, lines: list[dict[str, Any]], records: list[dict[str, Any]]) -> graphmem.Memory:
    m = graphmem.open(path, create=True)
    try:
        if records:
            ingested = m.ingest([json.dumps(r).encode() for r in records])
            assert not ingested.errors
        report = m.import_jsonl([json.dumps(x) for x in lines], strict=True)
        assert report.ok, report.errors
    except BaseException:
        m.close()
        raise
    return m


def check_pack(m: graphmem.Memory, doc: dict[str, Any], as_of: str, known_at: str | None) -> None:
    meta = doc["meta"]
    assert meta["used_tokens"] <= meta["budget_tokens"]
    assert meta["used_tokens"] == count_tokens(doc["bundle_text"])
    a = parse_instant(as_of)
    k = parse_instant(known_at) if known_at else None
    for item in doc["items"]:
        assert item["citations"], item
        assert item["line"] in doc["bundle_text"].splitlines()
        for ref in item["citations"]:
            _resolves(m, ref, item, as_of, known_at, a, k)
    for lane in doc.get("trace", {}).get("lanes", []):
        for c in lane["candidates"]:
            if not c["included"] and "duplicate" not in c["reasons"]:
                assert f"{c['text']} [" not in doc["bundle_text"], c
            assert c["included"] == ("within_budget" in c["reasons"])


def _resolves(m: graphmem.Memory, ref: str, item: dict[str, Any], as_of: str, known_at: str | None, a: int,
              k: int | None) -> None:
    if ref.startswith("rec:"):
        assert m.store.record_hit(int(ref[4:])) is not None, ref
        return
    if not ref.startswith("fact:"):
        assert m.store.entity(ref) is not None, ref
        return
    s = m.store.statement(int(ref[5:]))
    assert s is not None and s.op == "assert" and s.visible_at(k), f"{ref} is not visible at {known_at}"
    if item["lane"] in ("facts", "guidance"):  # current at as_of, as known at known_at
        held = m.current(s.subject, as_of=as_of, known_at=known_at).to_dict()["facts"]
        assert any(ref in f["assertions"] for f in held), f"{ref} is not current at {as_of} known at {known_at}"
        assert s.valid_from <= a and (s.valid_to is None or s.valid_to > a)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=stores(), query=st.lists(st.sampled_from([*WORDS, "Orchid", "Alpha", "Beta", "Cedar", "search"]),
                                     min_size=1, max_size=4).map(" ".join),
       budget=st.integers(0, 4000), as_day=st.integers(1, LAST_DAY + 1),
       known_day=st.one_of(st.none(), st.integers(1, LAST_DAY + 1)))
def test_pack_properties(new_store: Callable[[str], Path], data: tuple[list[Any], list[Any]], query: str,
                         budget: int, as_day: int, known_day: int | None) -> None:
    lines, records = data
    as_of = _at(as_day, 6)
    known_at = _at(known_day, 20) if known_day is not None else None
    with _open(new_store(f"pack-{uuid.uuid4().hex[:8]}"), lines, records) as m:  # a new store per example
        kw: dict[str, Any] = {"budget_tokens": budget, "as_of": as_of, "known_at": known_at or "2099-01-01",
                              "trace": True}
        doc = m.pack(query, **kw).to_dict()
        check_pack(m, doc, as_of, known_at)
        assert json.dumps(m.pack(query, **kw).to_dict()) == json.dumps(doc)


# -- examples -------------------------------------------------------------------------------------

@pytest.fixture
def lab(mem: graphmem.Memory) -> graphmem.Memory:
    for t, n in (("Project", "Ledger"), ("Project", "Atlas"), ("Tool", "Kuzu"), ("Tool", "Oracle"),
                 ("Person", "Ada"), ("Person", "Bo")):
        mem.add_entity(t, n, description=f"{n}, a {t.lower()} here.")
    mem.ingest([json.dumps(r).encode() for r in (
        {"id": "a", "ts": "2025-05-20T09:00:00Z", "kind": "note", "text": "Ledger will move off Oracle to Kuzu in June."},
        {"id": "b", "ts": "2025-06-02T09:00:00Z", "kind": "message", "text": "Ledger now runs on Kuzu; Oracle is gone."},
        {"id": "c", "ts": "2025-06-03T09:00:00Z", "kind": "rule",
         "text": "Rule: Ledger must not store card numbers in Kuzu."},
        {"id": "d", "ts": "2025-06-04T09:00:00Z", "kind": "message", "text": "Lunch is at noon on Friday."})])
    mem.assert_("ledger", "uses", "oracle", valid_from="2024-01-01", sources=["rec:1"])
    mem.end("ledger", "uses", "oracle", at="2025-06-01")
    mem.assert_("ledger", "uses", "kuzu", valid_from="2025-06-01", sources=["rec:2"])
    return mem


def _lines(doc: dict[str, Any]) -> list[str]:
    return doc["bundle_text"].splitlines()


def test_bundle_groups_guidance_facts_evidence_with_citations(lab: graphmem.Memory) -> None:
    doc = lab.pack("Ledger database Kuzu", budget_tokens=1000, as_of="2025-09-01").to_dict()
    lines = _lines(doc)
    assert lines[0] == "Guidance:" and "Rule: Ledger must not store card numbers in Kuzu." in lines[1]
    assert lines[1].endswith("[rec:3]")
    assert "Current facts (as of 2025-09-01):" in lines and "Evidence:" in lines
    assert lines.index("Current facts (as of 2025-09-01):") < lines.index("Evidence:")
    assert "- Ledger uses: Kuzu (tool:kuzu), since 2025-06-01 [fact:3; rec:2]" in lines
    evidence = lines[lines.index("Evidence:") + 1:]
    assert evidence and all(line.startswith("- 2025-") and line.endswith("]") for line in evidence)
    assert not any("Lunch" in line for line in lines)
    check_pack(lab, lab.pack("Ledger database Kuzu", as_of="2025-09-01", trace=True).to_dict(), "2025-09-01", None)


def test_as_of_before_migration_packs_the_old_tool(lab: graphmem.Memory) -> None:
    before = lab.pack("Ledger", as_of="2025-03-01", trace=True).to_dict()
    assert any(line.startswith("- Ledger uses: Oracle") for line in _lines(before))
    assert not any(line.startswith("- Ledger uses: Kuzu") for line in _lines(before))
    after = lab.pack("Ledger", as_of="2025-09-01", trace=True).to_dict()
    assert not any(line.startswith("- Ledger uses: Oracle") for line in _lines(after))
    facts = next(x for x in after["trace"]["lanes"] if x["lane"] == "facts")["candidates"]
    oracle = [c for c in facts if c["text"].startswith("Ledger uses: Oracle")]
    assert oracle and oracle[0]["reasons"] == ["superseded"] and not oracle[0]["included"]
    # records written after as_of are not evidence then
    records = next(x for x in before["trace"]["lanes"] if x["lane"] == "records")["candidates"]
    assert all("after_as_of" in c["reasons"] for c in records if c["ref"] in ("rec:1", "rec:2"))


def test_retracted_fact_is_traced_not_packed(lab: graphmem.Memory) -> None:
    fact = lab.assert_("atlas", "uses", "kuzu").to_dict()["created"][0]
    lab.retract(fact, "wrong project")
    doc = lab.pack("Atlas", trace=True).to_dict()
    assert fact not in doc["bundle_text"]
    facts = next(x for x in doc["trace"]["lanes"] if x["lane"] == "facts")["candidates"]
    assert [c["reasons"] for c in facts if c["ref"] == fact] == [["retracted"]]


def test_conflict_brings_its_dissent_line(lab: graphmem.Memory) -> None:
    lab.assert_("atlas", "owner", "ada", valid_from="2025-02-01")
    lab.assert_("atlas", "owner", "bo", valid_from="2025-02-01")
    doc = lab.pack("Atlas owner", as_of="2025-03-01").to_dict()
    lines = _lines(doc)
    owner = next(i for i, line in enumerate(lines) if line.startswith("- Atlas owner: Bo"))
    assert lines[owner + 1].startswith("  ! dissent: fact:4 says Atlas owner: Ada (person:ada)")
    assert any(i["lane"] == "dissent" and i["citations"] == ["fact:4"] for i in doc["items"])


def test_low_trust_ranks_below_and_says_so(lab: graphmem.Memory) -> None:
    lab.assert_("atlas", "uses", "oracle", valid_from="2025-01-01", by="extractor", sources=["rec:1"])
    lab.assert_("atlas", "status", "active", valid_from="2025-01-01")
    doc = lab.pack("Atlas", as_of="2025-03-01", trace=True).to_dict()
    facts = {c["text"].split(",")[0]: c for c in next(x for x in doc["trace"]["lanes"] if x["lane"] == "facts")["candidates"]}
    low, high = facts["Atlas uses: Oracle (tool:oracle)"], facts["Atlas status: active"]
    assert "low_trust" in low["reasons"] and low["score"] < high["score"]
    assert "low trust" in next(i["why"] for i in doc["items"] if i["text"].startswith("Atlas uses: Oracle"))


def test_tiny_budget_gives_an_empty_bundle_and_says_why(lab: graphmem.Memory) -> None:
    doc = lab.pack("Ledger Kuzu", budget_tokens=5, trace=True).to_dict()
    assert doc["bundle_text"] == "" and doc["items"] == [] and doc["meta"]["used_tokens"] == 0
    assert "holds nothing" in doc["trace"]["message"]
    assert all(not c["included"] for lane in doc["trace"]["lanes"] for c in lane["candidates"])


def test_guidance_is_never_crowded_out(lab: graphmem.Memory) -> None:
    for budget in (30, 60, 120):
        doc = lab.pack("Ledger Kuzu Oracle June", budget_tokens=budget, trace=True).to_dict()
        guidance = next(x for x in doc["trace"]["lanes"] if x["lane"] == "guidance")["candidates"]
        rule = next(c for c in guidance if c["ref"] == "rec:3")
        fits = count_tokens("Guidance:\n- " + rule["text"] + " [rec:3]") <= budget
        assert rule["included"] == fits
        if fits:
            assert _lines(doc)[:2][0] == "Guidance:"


def test_max_items(lab: graphmem.Memory) -> None:
    doc = lab.pack("Ledger Kuzu Oracle", max_items=2, trace=True).to_dict()
    assert len(doc["items"]) == 2
    assert any("max_items" in c["reasons"] for lane in doc["trace"]["lanes"] for c in lane["candidates"])


def test_a_plugged_in_counter(lab: graphmem.Memory) -> None:
    def words(text: str) -> int:
        return len(text.split())
    doc = lab.pack("Ledger Kuzu", budget_tokens=40, tokenizer=words).to_dict()
    assert doc["meta"]["tokenizer"] == "words" and doc["meta"]["used_tokens"] == words(doc["bundle_text"]) <= 40


@pytest.mark.parametrize("query", ['"Ledger" AND (Kuzu OR *) NOT -x', "Ledger über Kùzu — 数据库 ✓", "x" * 5000,
                                   "ledger' OR 1=1; DROP TABLE Record; --"])
def test_odd_queries_get_an_answer(lab: graphmem.Memory, query: str) -> None:
    doc = lab.pack(query, trace=True).to_dict()
    assert doc["schema"] == "graphmem.context-pack.v1"
    assert doc["bundle_text"] or doc["meta"]["message"]


def test_cli_prints_the_bundle_alone(lab: graphmem.Memory, store_path: Path) -> None:
    lab.close()
    r = cli(store_path, "pack", "-q", "Ledger Kuzu", "--as-of", "2025-09-01")
    assert r.code == 0 and r.out.startswith("Guidance:\n") and "trace" not in r.out
    doc = cli(store_path, "pack", "-q", "Ledger Kuzu", "--as-of", "2025-09-01", "--json").json()
    assert doc["bundle_text"] + "\n" == r.out and "trace" not in doc
    traced = cli(store_path, "pack", "-q", "Ledger Kuzu", "--as-of", "2025-09-01", "--trace")
    assert traced.code == 0 and traced.out == r.out  # stdout stays the bundle alone (pack ... | llm)
    assert "within_budget" in traced.err and "trace:" in traced.err
    empty = cli(store_path, "pack", "-q", "zebra")
    assert empty.code == 0 and empty.out == "" and "empty bundle" in empty.err


@pytest.mark.parametrize("args,names", [
    (["pack", "-q", "!!! ???"], ["!!! ???"]), (["pack", "-q", "x", "-b", "-1"], ["budget", "-1"]),
    (["pack", "-q", "x", "--max-items", "0"], ["max items", "0"]), (["pack", "-q", "x", "--as-of", "soon"], ["soon"]),
])
def test_bad_input_is_one_line_exit_2(lab: graphmem.Memory, store_path: Path, args: list[str], names: list[str]) -> None:
    lab.close()
    one_clear_line(cli(store_path, *args), 2, names)
