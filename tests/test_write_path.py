"""One write path: the same input gives the same answer through assert, import, the service and the
command line, and a retraction follows one rule whichever way it comes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, jl

import graphmem
from graphmem.errors import GraphmemError
from graphmem.model import fact_ref
from graphmem.write.inputs import parse_fact_ref, when

BAD: list[tuple[str, dict[str, Any], str]] = [
    ("unknown-predicate", {"subject": "atlas", "predicate": "flavor", "object": "x"}, "unknown predicate 'flavor'"),
    ("bad-enum", {"subject": "atlas", "predicate": "status", "object": "flying"}, "bad value 'flying' for 'status'"),
    ("subject-type", {"subject": "kuzu", "predicate": "status", "object": "active"}, "subject 'tool:kuzu' is a Tool"),
    ("object-type", {"subject": "atlas", "predicate": "uses", "object": "ada"}, "object 'person:ada-lovelace'"),
    ("bad-date", {"subject": "atlas", "predicate": "status", "object": "active", "valid_from": "2025-02-30"},
     "bad valid_from '2025-02-30'"),
    ("interval", {"subject": "atlas", "predicate": "status", "object": "active", "valid_from": "2025-02-01",
                  "valid_to": "2025-01-01"}, "bad valid_to 2025-01-01T00:00:00Z"),
    ("bad-source", {"subject": "atlas", "predicate": "status", "object": "active", "sources": ["nowhere"]},
     "bad source 'nowhere'"),
]


def _assert_error(m: graphmem.Memory, line: dict[str, Any]) -> str:
    kw = {k: v for k, v in line.items() if k in ("valid_from", "valid_to", "sources")}
    with pytest.raises(GraphmemError) as e:
        m.assert_(line["subject"], line["predicate"], line["object"], **kw)
    return str(e.value)


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")  # its test client, as the service tests use httpx
@pytest.mark.parametrize("line,expect", [(x[1], x[2]) for x in BAD], ids=[x[0] for x in BAD])
def test_bad_input_gives_one_message_through_assert_import_service_and_cli(
        atlas: graphmem.Memory, store_path: Path, line: dict[str, Any], expect: str) -> None:
    from starlette.testclient import TestClient

    from graphmem.service.http import create_app
    through_assert = _assert_error(atlas, line)
    assert expect in through_assert
    report = atlas.import_jsonl(jl({"op": "assert", **line}))
    assert report.errors == ((1, through_assert),) and report.statements == 0
    args = [line["subject"], line["predicate"], line["object"]]
    args += [a for k, flag in (("valid_from", "--from"), ("valid_to", "--to")) if k in line for a in (flag, line[k])]
    args += [a for s in line.get("sources", []) for a in ("--source", s)]
    atlas.close()
    r = cli(store_path, "assert", *args)
    assert r.code == 2 and through_assert in r.err
    app = create_app(store_path, allow_hosts=("testserver",))
    with TestClient(app) as client:
        resp = client.post("/assert", json=line)
    assert resp.status_code == 400 and resp.json()["message"] == through_assert


def _fact(m: graphmem.Memory) -> str:
    return m.assert_("atlas", "status", "active", valid_from="2025-01-01").refs[0]


def _import_retract(m: graphmem.Memory, **line: Any) -> str:
    report = m.import_jsonl([json.dumps({"op": "retract", **line})])
    assert len(report.errors) == 1 and report.retractions == 0
    return report.errors[0][1]


def test_retraction_follows_one_rule_through_memory_and_import(atlas: graphmem.Memory) -> None:
    ref = _fact(atlas)
    # a fact that does not exist: the same message either way
    with pytest.raises(GraphmemError) as e:
        atlas.retract("fact:999")
    assert _import_retract(atlas, fact="fact:999") == str(e.value) == "unknown fact 'fact:999': no statement has that id"
    # not before the fact was recorded, not in the future (only an import line can say when)
    assert "expected a time after the fact was recorded" in _import_retract(atlas, fact=ref, at="2000-01-01")
    assert "a retraction cannot lie in the future" in _import_retract(atlas, fact=ref, at="2999-01-01")
    # withdrawn once: a second retraction is refused by both
    assert atlas.import_jsonl([json.dumps({"op": "retract", "fact": ref})]).retractions == 1
    with pytest.raises(GraphmemError, match="already retracted"):
        atlas.retract(ref)
    # the same retraction again is what the store holds: unchanged (import is idempotent); another is refused
    again = atlas.import_jsonl([json.dumps({"op": "retract", "fact": ref})])
    assert (again.errors, again.retractions, again.unchanged) == ((), 0, 1)
    assert "already retracted" in _import_retract(atlas, fact=ref, reason="another reason")
    other = _fact(atlas)
    atlas.retract(other, reason="typo")
    assert "already retracted" in _import_retract(atlas, fact=other)
    assert atlas.rebuild(check=True).drift == ()


def test_a_retraction_of_the_same_import_and_a_second_one_in_it(atlas: graphmem.Memory) -> None:
    lines = [{"op": "assert", "id": "fact:7", "subject": "atlas", "predicate": "status", "object": "paused"},
             {"op": "retract", "fact": "fact:7"}, {"op": "retract", "fact": "fact:7"}]
    report = atlas.import_jsonl(jl(*lines))
    assert report.retractions == 1 and report.errors == ((3, "fact 'fact:7' is already retracted"),)
    assert atlas.current("atlas").facts == ()
    assert atlas.rebuild(check=True).drift == ()


def test_extraction_apply_and_assert_write_the_same_statement(atlas: graphmem.Memory) -> None:
    out = atlas.extract_text("Atlas uses Kuzu.", at="2025-03-01", apply=True)
    (ref,) = out.written
    st = atlas.why(ref).statement
    assert (st.subject, st.predicate, st.object, st.asserted_by, st.trust) == (
        "project:atlas", "uses", "tool:kuzu", "extractor", "low")
    assert atlas.rebuild(check=True).drift == ()


@pytest.mark.parametrize("n", [0, 1, 42, 10**17])
def test_fact_refs_round_trip(n: int) -> None:
    assert parse_fact_ref(fact_ref(n)) == n


def test_one_now_for_a_read() -> None:
    t = when(None, None, now=100)
    assert (t.as_of, t.known_at, t.known, t.past) == (100, None, 100, False)
    t = when("now", "1970-01-01", now=100)
    assert (t.as_of, t.known, t.past) == (100, 0, True)
