"""pack's budget partition (docs/packing.md, "Budget partition"): guidance first, then a protected tail of
the most recent records, then retrieval; never over budget, repeatable; and the trust policy."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE, cli, one_clear_line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.retrieval.packlines import count_tokens

CHAT = [("Ana", "Guess what, I adopted a greyhound from the shelter on Saturday!"),
        ("Ben", "No way! What did you name the dog?"),
        ("Ana", "Her name is Pepper, she loves the beach already."),
        ("Ben", "Pepper is a great name.")]
LATER = [("Ana", "The bakery on Elm street sells sourdough on Mondays."),
         ("Ben", "I should try it, I never had proper sourdough."),
         ("Ana", "Bring a bag, they sell out by ten."),
         ("Ben", "Noted, see you there at nine.")]


def turns(session: int, rows: list[tuple[str, str]], day: str) -> list[dict[str, Any]]:
    return [{"id": f"D{session}:{i}", "text": f"{who}: {text}", "ts": f"{day}T10:{i:02d}:00Z", "kind": "message",
             "source": f"chat/session_{session}#{i}"} for i, (who, text) in enumerate(rows, 1)]


RECORDS = [*turns(1, CHAT, "2023-05-08"), *turns(2, LATER, "2023-06-02"),
           {"id": "rule", "text": "Rule: never share the greyhound's vet records.", "ts": "2023-05-01", "kind": "rule"},
           {"id": "q", "text": "The greyhound shelter asked for donations.", "ts": "2023-05-09", "kind": "note",
            "meta": {"trust": "quarantined"}},
           {"id": "lo", "text": "Someone said the greyhound shelter closes in July.", "ts": "2023-05-10",
            "kind": "note", "meta": {"trust": "low"}},
           {"id": "hi", "text": "The greyhound shelter opens at eight.", "ts": "2023-05-11", "kind": "note",
            "meta": {"trust": "high"}}]
# rec:1-4 session 1, rec:5-8 session 2 (the current one), rec:9 the rule, rec:10 quarantined, rec:11 low, rec:12 high


def build(path: Path) -> Path:
    with graphmem.open(path, create=True) as m:
        assert not m.ingest([json.dumps(r).encode() for r in RECORDS]).errors
        m.add_entity("Project", "Shelter", description="The greyhound shelter.")
        m.add_entity("Tool", "Kennel", description="A kennel.")
        m.assert_("Shelter", "uses", "Kennel", valid_from="2023-01-01", by="extractor", sources=["rec:1"])
    return path


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[graphmem.Memory]:
    """The store, shared by the tests that only read (a schema of its own on a PostgreSQL run)."""
    path = (request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12]) if TEST_ENGINE == "postgresql"
            else tmp_path_factory.mktemp("tail") / "store")
    m = graphmem.open(build(path))
    yield m
    m.close()


@pytest.fixture
def closed(store_path: Path) -> Path:
    """The same store, closed, for the command line."""
    return build(store_path)


def pack(m: graphmem.Memory, q: str = "greyhound shelter", **kw: Any) -> dict[str, Any]:
    kw.setdefault("track", False)
    kw.setdefault("as_of", "2023-07-01")
    kw.setdefault("known_at", "2030-01-01")
    doc: dict[str, Any] = m.pack(q, trace=True, **kw).to_dict()
    return doc


def parts(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["part"]: p for p in doc["trace"]["parts"]}


def candidates(doc: dict[str, Any], lane: str) -> list[dict[str, Any]]:
    return next(x["candidates"] for x in doc["trace"]["lanes"] if x["lane"] == lane)


def reasons(doc: dict[str, Any], ref: str) -> list[str]:
    return [r for x in doc["trace"]["lanes"] for c in x["candidates"] if c["ref"] == ref for r in c["reasons"]]


def test_the_tail_holds_the_last_turns_of_the_current_session_even_off_the_query(chat: graphmem.Memory) -> None:
    """Session 2 is about sourdough, not greyhounds: its last two turns are still packed, oldest first, last."""
    doc = pack(chat, tail=2)
    lines = doc["bundle_text"].splitlines()
    at = lines.index("Recent (oldest first):")
    assert lines[at + 1:] == ["- 2023-06-02: Ana: Bring a bag, they sell out by ten. [rec:7]",
                              "- 2023-06-02: Ben: Noted, see you there at nine. [rec:8]"]
    assert [c["ref"] for c in candidates(doc, "tail")] == ["rec:8", "rec:7"]  # the most recent first
    assert {i["ref"]: i["lane"] for i in doc["items"]}["rec:8"] == "tail"
    without = pack(chat)
    assert "rec:8" not in {i["ref"] for i in without["items"]}  # retrieval alone does not bring them
    assert parts(without)["tail"] == {"part": "tail", "budget": 0, "used": 0, "items": 0}
    assert doc["meta"]["tail"] == 2 and "session chat/session_2 (the current one)" in next(
        x["searched"] for x in doc["trace"]["lanes"] if x["lane"] == "tail")


def test_guidance_still_comes_first_and_the_parts_add_up(chat: graphmem.Memory) -> None:
    doc = pack(chat, tail=3, budget_tokens=300)
    assert doc["bundle_text"].startswith("Guidance:\n- 2023-05-01 rule: Rule: never share")
    p = parts(doc)
    assert [x["part"] for x in doc["trace"]["parts"]] == ["guidance", "tail", "retrieval"]
    assert p["guidance"]["budget"] == 300 and p["guidance"]["items"] == 1
    assert p["tail"]["budget"] == 300 - p["guidance"]["used"] and p["tail"]["items"] == 3
    assert p["retrieval"]["budget"] == 300 - p["guidance"]["used"] - p["tail"]["used"]
    assert sum(x["used"] for x in p.values()) == doc["meta"]["used_tokens"] == count_tokens(doc["bundle_text"])


def test_a_tail_budget_caps_the_tail_and_passes_the_rest_on(chat: graphmem.Memory) -> None:
    one = count_tokens("Recent (oldest first):") + count_tokens("- 2023-06-02: Ben: Noted, see you there at nine. [rec:8]")
    doc = pack(chat, tail_budget=one + 5, budget_tokens=400)
    p = parts(doc)
    assert p["tail"]["budget"] == one + 5 and p["tail"]["used"] == one and p["tail"]["items"] == 1
    assert p["retrieval"]["budget"] == 400 - p["guidance"]["used"] - one  # the 5 left pass on
    assert reasons(doc, "rec:7") == ["budget_exceeded"]
    contiguous = pack(chat, tail=4, tail_budget=one + 5)  # the first that does not fit ends the tail
    assert [c["reasons"] for c in candidates(contiguous, "tail")] == [
        ["within_budget"], ["budget_exceeded"], ["budget_exceeded"], ["budget_exceeded"]]


def test_a_named_session_a_filter_and_as_of_choose_the_tail(chat: graphmem.Memory) -> None:
    named = pack(chat, tail=2, session="chat/session_1")
    assert [c["ref"] for c in candidates(named, "tail")] == ["rec:4", "rec:3"]
    earlier = pack(chat, tail=2, as_of="2023-05-20")
    assert [c["ref"] for c in candidates(earlier, "tail")] == ["rec:4", "rec:3"]  # session 2 is after as_of
    notes = pack(chat, tail=2, kind="note")  # no message: the most recent records the filter allows
    assert [c["ref"] for c in candidates(notes, "tail")] == ["rec:12", "rec:11"]


def test_a_record_in_the_tail_is_not_packed_twice(chat: graphmem.Memory) -> None:
    doc = pack(chat, q="sourdough Elm bakery", tail=4)
    refs = [i["ref"] for i in doc["items"]]
    assert len(refs) == len(set(refs)) and {"rec:5", "rec:6", "rec:7", "rec:8"} <= set(refs)
    assert "duplicate" in reasons(doc, "rec:5")  # its records-lane candidate
    assert doc["bundle_text"].count("[rec:5]") == 1


def test_the_trust_policy_leaves_low_trust_and_quarantined_out(chat: graphmem.Memory) -> None:
    open_ = pack(chat)
    assert {"rec:10", "rec:11", "rec:12"} <= {i["ref"] for i in open_["items"]}  # no policy: all in
    low = pack(chat, min_trust="low")
    assert reasons(low, "rec:10") == ["trust_policy"] and low["trace"]["trust_policy"] == {
        "min_trust": "low", "left_out": ["rec:10"]}
    assert {"rec:11", "rec:12", "rec:1"} <= {i["ref"] for i in low["items"]}  # unrated rec:1 stays
    medium = pack(chat, min_trust="medium", tail=2)
    out = set(medium["trace"]["trust_policy"]["left_out"])
    assert {"rec:10", "rec:11"} <= out and "rec:12" not in out and "fact:1" in out  # the extractor's fact: low
    assert reasons(medium, "fact:1") == ["low_trust", "trust_policy"]
    assert not out & {i["ref"] for i in medium["items"]}
    assert medium["meta"]["min_trust"] == "medium" and "rec:8" in {i["ref"] for i in medium["items"]}
    high = pack(chat, min_trust="high")
    assert "rec:12" in {i["ref"] for i in high["items"]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(0, 1500), tail=st.integers(0, 12), tail_share=st.one_of(st.none(), st.floats(0, 1)),
       max_items=st.integers(1, 20), query=st.sampled_from(["greyhound shelter", "sourdough", "name the dog", "zzz"]),
       min_trust=st.sampled_from([None, "low", "medium", "high"]),
       session=st.sampled_from([None, None, "chat/session_1"]))
def test_never_over_budget_and_repeatable(chat: graphmem.Memory, budget: int, tail: int, tail_share: float | None,
                                          max_items: int, query: str, min_trust: str | None,
                                          session: str | None) -> None:
    tail_budget = None if tail_share is None else int(budget * tail_share)
    if session is not None and not tail and tail_budget is None:
        session = None
    kw = {"budget_tokens": budget, "tail": tail, "tail_budget": tail_budget, "max_items": max_items,
          "min_trust": min_trust, "session": session}
    doc = pack(chat, query, **kw)
    meta = doc["meta"]
    assert meta["used_tokens"] == count_tokens(doc["bundle_text"]) <= budget
    assert len(doc["items"]) <= max_items
    p = parts(doc)
    assert sum(x["used"] for x in p.values()) == meta["used_tokens"]
    assert all(x["used"] <= x["budget"] for x in p.values())
    if tail_budget is not None:
        assert p["tail"]["used"] <= tail_budget
    tail_refs = [c["ref"] for c in candidates(doc, "tail") if c["included"]]
    offered = [c["ref"] for c in candidates(doc, "tail")]
    assert tail_refs == offered[:len(tail_refs)] or min_trust  # the most recent ones, with no gap
    assert not set(doc["trace"]["trust_policy"]["left_out"]) & {i["ref"] for i in doc["items"]}
    lines = doc["bundle_text"].splitlines()
    if any(i["lane"] == "guidance" for i in doc["items"]):
        assert lines[0] == "Guidance:"
    assert json.dumps(pack(chat, query, **kw)) == json.dumps(doc)


def test_use_is_recorded_for_the_tail_too(new_store: Callable[[str], Path]) -> None:
    with graphmem.open(new_store("s"), create=True) as m:
        m.ingest([json.dumps(r).encode() for r in turns(1, CHAT, "2023-05-08")])
        r = m.pack("greyhound", tail=1, trace=True)
        assert "rec:4" in r.refreshed and m.record_use("rec:4")["packed"] == 1


def test_cli_options_and_trace(closed: Path) -> None:
    store = closed
    r = cli(store, "pack", "-q", "greyhound shelter", "--as-of", "2023-07-01", "--tail", "2", "--min-trust", "low",
            "--no-track", "--trace")
    assert r.code == 0 and r.out.rstrip().endswith("Noted, see you there at nine. [rec:8]")
    assert "budget: guidance" in r.err and "tail " in r.err and "trust policy: at least low; left out: rec:10" in r.err
    doc = cli(store, "pack", "-q", "greyhound shelter", "--as-of", "2023-07-01", "--tail-budget", "100",
              "--session", "chat/session_1", "--no-track", "--json", "--trace").json()
    assert doc["meta"]["tail_budget"] == 100 and doc["meta"]["session"] == "chat/session_1"
    assert parts(doc)["tail"]["budget"] == 100 and parts(doc)["tail"]["items"] >= 1


@pytest.mark.parametrize("args,names", [
    (["--tail", "-1"], ["tail", "-1"]),
    (["--tail", "1001"], ["tail", "1001"]),
    (["-b", "500", "--tail-budget", "600"], ["tail budget", "600", "500"]),
    (["--tail-budget", "-3"], ["tail budget", "-3"]),
    (["--min-trust", "trusted"], ["min trust", "trusted", "low, medium or high"]),
    (["--session", "chat/session_1"], ["session", "chat/session_1", "tail"]),
    (["--tail", "2", "--session", "chat/nowhere"], ["session", "chat/nowhere"]),
])
def test_bad_values_are_one_line_exit_2(closed: Path, args: list[str], names: list[str]) -> None:
    one_clear_line(cli(closed, "pack", "-q", "greyhound", "--no-track", *args), 2, names)


def test_through_a_running_server(closed: Path) -> None:
    """The service takes the same parameters, and the CLI's pack goes through it (Remote.pack)."""
    from test_service import Server
    store = closed
    server = Server(store)
    try:
        doc = server.get("/pack", q="greyhound shelter", as_of="2023-07-01", tail="2", min_trust="low",
                         trace="true", track="false").json()
        assert doc["meta"]["tail"] == 2 and doc["trace"]["trust_policy"]["left_out"] == ["rec:10"]
        assert [c["ref"] for c in candidates(doc, "tail")] == ["rec:8", "rec:7"]
        bad = server.get("/pack", q="greyhound", min_trust="trusted")
        assert bad.status_code == 400 and "min_trust" in bad.json()["message"]
        r = cli(store, "pack", "-q", "greyhound shelter", "--as-of", "2023-07-01", "--tail", "1", "--json")
        assert r.code == 0 and r.json()["meta"]["tail"] == 1
        assert {i["ref"]: i["lane"] for i in r.json()["items"]}["rec:8"] == "tail"
        over = cli(store, "pack", "-q", "greyhound", "-b", "50", "--tail-budget", "60")
        assert over.code == 2 and over.err_lines[-1] == (  # the first line says the server takes the command
            "graphmem: error: bad tail budget 60: expected at most the budget (50)")
    finally:
        server.stop()
