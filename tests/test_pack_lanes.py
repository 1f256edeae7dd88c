"""pack on conversations (docs/packing.md): the neighbours lane, query words and times, cheap headers,
importance that chat does not trigger, budget and determinism."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.evidence.query import content_words, query_times
from graphmem.evidence.records import importance
from graphmem.model.records import importance_band
from graphmem.model.times import format_instant, parse_instant
from graphmem.retrieval.packlines import count_tokens, record_text

CHAT = [  # one session of a conversation, one turn a record
    ("Ana", "Guess what, I adopted a greyhound from the shelter on Saturday!"),
    ("Ben", "No way! What did you name the dog?"),
    ("Ana", "Her name is Pepper, she loves the beach already."),
    ("Ben", "Pepper is a great name. I always wanted one, it is important to remember to walk them."),
]
OTHER = [("Ana", "The bakery on Elm street sells sourdough on Mondays."),
         ("Ben", "I must try it, never had proper sourdough.")]


def turns(session: int, rows: list[tuple[str, str]], ts: str, first: int = 1) -> list[dict[str, Any]]:
    return [{"id": f"D{session}:{i}", "text": f"{who}: {text}", "ts": ts, "kind": "message",
             "source": f"chat/session_{session}"} for i, (who, text) in enumerate(rows, first)]


@pytest.fixture
def chat(new_store: Callable[[str], Path]) -> Iterator[graphmem.Memory]:
    m = graphmem.open(new_store("store"), create=True)
    m.ingest(turns(1, CHAT, "2023-05-08T13:56:00Z") + turns(2, OTHER, "2023-06-02T10:00:00Z"))
    yield m
    m.close()


def packed(p: graphmem.results.PackResult) -> dict[str, str]:  # type: ignore[name-defined]
    return {c.ref: c.lane for c in p.items}


def test_a_turn_ranks_with_the_turns_around_it_in_its_session(chat: graphmem.Memory) -> None:
    """'Her name is Pepper' shares no word with the question; the turn before it does."""
    q = "What name did Ana give the dog she adopted?"
    hits = chat.search(q, limit=4).results
    assert "rec:3" in [h.ref for h in hits]
    alone = chat.search("greyhound shelter", limit=5).results
    assert [h.ref for h in alone][0] == "rec:1" and "rec:2" in [h.ref for h in alone]  # lent by rec:1
    assert next(h for h in alone if h.ref == "rec:2").score == pytest.approx(0.5 * alone[0].score)
    p = chat.pack("greyhound shelter", budget_tokens=200, trace=True)
    rec2 = next(c for c in p.items if c.ref == "rec:2")
    assert rec2.scores["bm25"] == rec2.scores["context"] > 0 and "from the turns around it" in rec2.why


def test_the_turn_after_a_hit_in_its_session_is_packed(new_store: Callable[[str], Path]) -> None:
    """With a pool too small for the context ranking to reach it, the neighbours lane still finds it."""
    import graphmem.retrieval.packing as packing
    m = graphmem.open(new_store("s"), create=True)
    pool = packing.RECORD_POOL, packing.RECORD_POOL_MIN
    try:
        m.ingest(turns(1, CHAT, "2023-05-08T13:56:00Z"))
        packing.RECORD_POOL = packing.RECORD_POOL_MIN = 1
        p = m.pack("adopted greyhound shelter", budget_tokens=200, trace=True)
    finally:
        packing.RECORD_POOL, packing.RECORD_POOL_MIN = pool
        m.close()
    got = packed(p)
    assert got["rec:1"] == "records" and got.get("rec:2") == "neighbours"
    lane = next(c for name, _, cands in p.lanes if name == "neighbours" for c in cands if c.ref == "rec:2")
    assert lane.why == "after rec:1 in chat/session_1" and lane.score < p.items[0].score


def test_a_neighbour_in_another_session_is_not_one(new_store: Callable[[str], Path]) -> None:
    m = graphmem.open(new_store("s"), create=True)
    try:
        m.ingest(turns(1, CHAT[:1], "2023-05-08") + turns(2, OTHER[:1], "2023-05-09"))
        p = m.pack("adopted greyhound shelter", trace=True)
        assert [c.ref for c in p.items] == ["rec:1"]
        assert not next(c for name, _, c in p.lanes if name == "neighbours")
    finally:
        m.close()


def test_records_sharing_an_entity_with_a_hit_are_a_lane(new_store: Callable[[str], Path]) -> None:
    m = graphmem.open(new_store("s"), create=True)
    try:
        m.add_entity("Project", "Atlas")
        m.ingest([{"text": "Atlas moved its index to a new disk layout.", "ts": "2024-03-01", "kind": "note",
                   "source": "notes-a"},
                  {"text": "Lunch was good today.", "ts": "2024-03-02", "kind": "note", "source": "notes-b"},
                  {"text": "Atlas will ship on Friday after the review.", "ts": "2024-03-03", "kind": "note",
                   "source": "notes-c"}], extract=True)
        p = m.pack("disk layout", trace=True)
        lane = {c.ref: c for name, _, cands in p.lanes if name == "neighbours" for c in cands}
        assert set(lane) == {"rec:3"} and lane["rec:3"].why == "shares an entity with rec:1"
        assert packed(p).get("rec:3") == "neighbours"
        assert "rec:2" not in packed(p)
    finally:
        m.close()


def test_the_neighbours_lane_keeps_to_the_filter(chat: graphmem.Memory, tmp_path: Path) -> None:
    p = chat.pack("What did Ana adopt from the shelter?", budget_tokens=200, source="chat/session_2", trace=True)
    assert all(c.ref in ("rec:5", "rec:6") for c in p.items)
    p = chat.pack("What did Ana adopt from the shelter?", budget_tokens=200, until="2023-05-01", trace=True)
    assert not p.items


def test_question_and_stop_words_are_not_looked_up(chat: graphmem.Memory) -> None:
    assert content_words(["what", "did", "you", "name", "the", "dog"]) == ["name", "dog"]
    assert content_words(["who", "are", "you"]) == ["who", "are", "you"]  # nothing else: all of them
    hits = chat.search("What is it that you did name the dog?", limit=2).results
    assert hits[0].ref == "rec:2"  # not the turns that share only 'the' and 'you'


@pytest.mark.parametrize(("query", "span"), [
    ("What did she do yesterday?", ("2023-05-06", "2023-05-09")),
    ("What happened last week?", ("2023-04-30", "2023-05-09")),
    ("What did he paint last year?", ("2021-12-31", "2023-01-02")),
    ("Where did they go last month?", ("2023-03-31", "2023-05-02")),
    ("plans for this year", ("2022-12-31", "2024-01-02")),
    ("the trip 3 days ago", ("2023-05-04", "2023-05-07")),
    ("the party on 8 May 2023", ("2023-05-07", "2023-05-10")),
    ("the party on May 8, 2023", ("2023-05-07", "2023-05-10")),
    ("what happened in June 2023", ("2023-05-31", "2023-07-02")),
    ("the release 2023-05-08", ("2023-05-07", "2023-05-10")),
    ("what did we do in 2022", ("2021-12-31", "2023-01-02")),
])
def test_relative_and_absolute_times_resolve_against_the_time_asked(query: str, span: tuple[str, str]) -> None:
    now = parse_instant("2023-05-08T13:56:00Z")
    got = [(format_instant(a)[:10], format_instant(b)[:10]) for a, b in query_times(query, now)]  # type: ignore[index]
    assert got == [span]


def test_no_time_and_a_bad_date_give_no_preference() -> None:
    now = parse_instant("2023-05-08")
    assert query_times("the lasting yesterdays of 31 February 2023", now) == []
    assert query_times("nothing of time at all", now) == []
    assert query_times("today", parse_instant("9999-12-31T23:59:59.999999Z")) == []  # past the calendar
    assert query_times("yesterday", parse_instant("0001-01-01T00:00:00Z")) == []


def test_a_named_time_prefers_the_records_written_then(new_store: Callable[[str], Path]) -> None:
    m = graphmem.open(new_store("s"), create=True)
    try:
        m.ingest([{"text": "We went hiking in the hills.", "ts": "2022-07-01", "source": "a"},
                  {"text": "We went hiking in the hills.!", "ts": "2023-05-07", "source": "b"}])
        later = m.pack("hiking yesterday", as_of="2023-05-08", trace=True)
        first = [c.ref for c in later.items]
        assert first[0] == "rec:2"
        earlier = m.pack("hiking last year", as_of="2023-05-08", trace=True)
        assert [c.ref for c in earlier.items][0] == "rec:1"  # a preference, not a filter: both are there
        assert set(first) == {c.ref for c in earlier.items} == {"rec:1", "rec:2"}
    finally:
        m.close()


def test_a_time_a_record_names_counts_as_its_time(new_store: Callable[[str], Path]) -> None:
    """Times as mentions: "last Saturday", said on Monday 8 May 2023, is 6 May; a question about 6 May
    prefers that turn to an equal one about another day, though both were written after it."""
    m = graphmem.open(new_store("s"), create=True)
    try:
        m.ingest([{"text": "Ana: We went hiking in the hills last Saturday.", "ts": "2023-05-08T13:56:00Z",
                   "source": "a"},
                  {"text": "Ben: We went hiking in the hills last Friday!", "ts": "2023-05-20T10:00:00Z",
                   "source": "b"}])
        p = m.pack("Who went hiking on 6 May 2023?", as_of="2023-06-01", trace=True)
        times = {c.ref: c.scores["time"] for name, _, cands in p.lanes if name == "records" for c in cands}
        assert times == {"rec:1": 1.0, "rec:2": 0.8}
        assert [c.ref for c in p.items][0] == "rec:1"
        # the same question about the other day turns it round ("last Friday" said on Saturday 20 May: 19 May)
        q = m.pack("Who went hiking on 19 May 2023?", as_of="2023-06-01", trace=True)
        assert [c.ref for c in q.items][0] == "rec:2"
    finally:
        m.close()


@pytest.mark.parametrize(("said", "day"), [("2023-05-08T13:56:00Z", "2023-05-06"),  # a Monday: two days back
                                            ("2023-05-06T09:00:00Z", "2023-04-29"),  # a Saturday: a week back
                                            ("2023-05-07T09:00:00Z", "2023-05-06")])
def test_last_weekday_is_the_one_before_the_day_said(said: str, day: str) -> None:
    (lo, hi), = query_times("last Saturday", parse_instant(said))
    assert format_instant(lo)[:10] < day < format_instant(hi)[:10]  # the day, widened by a day either side
    assert (hi - lo) == 3 * 86_400_000_000


def test_an_evidence_line_costs_few_tokens_beyond_its_text(chat: graphmem.Memory) -> None:
    p = chat.pack("Pepper beach", budget_tokens=200)
    for c in p.items:
        body = c.text.split(": ", 1)[1]
        assert count_tokens(c.line) - count_tokens(body) <= 12, c.line  # date, colon, ref and brackets
    line = "- " + record_text("Ana: hi there", parse_instant("2023-05-08"), ["hi"]) + " [rec:12345]"
    assert line == "- 2023-05-08: Ana: hi there [rec:12345]"
    assert count_tokens(line) - count_tokens("Ana: hi there") == 13


@pytest.mark.parametrize("text", [
    "I always remember how important my family is to me.",
    "You must come to the concert, it is critical that you never miss it!",
    "Don't forget, the homework is due tomorrow, it is really important.",
    "I own a small bakery and I always bake bread on Sundays.",
])
def test_importance_does_not_fire_on_chat_words(text: str) -> None:
    assert importance(text, "message") == 0.3 and importance_band(importance(text, "message")) == "ignore"


def test_importance_still_fires_on_decisions() -> None:
    assert importance("We decided to switch to Postgres; the migration deadline is 2025-09-01.", "note") >= 0.8
    assert importance("The team agreed the old API is deprecated.", "message") >= 0.6


@pytest.mark.parametrize("budget", [0, 5, 20, 40, 80, 120, 200, 500])
def test_pack_never_goes_over_budget(chat: graphmem.Memory, budget: int) -> None:
    for q in ("What did Ana adopt from the shelter?", "Pepper", "sourdough bakery Elm", "dog beach name"):
        p = chat.pack(q, budget_tokens=budget)
        assert p.used_tokens == count_tokens(p.bundle_text) <= budget


def test_pack_is_deterministic(chat: graphmem.Memory, new_store: Callable[[str], Path]) -> None:
    q = "What did Ana name the dog she adopted?"
    a = chat.pack(q, budget_tokens=120, as_of="2024-01-01", known_at="2024-01-01", trace=True).to_dict()
    b = chat.pack(q, budget_tokens=120, as_of="2024-01-01", known_at="2024-01-01", trace=True).to_dict()
    assert a == b
    other = graphmem.open(new_store("again"), create=True)
    try:
        other.ingest(turns(1, CHAT, "2023-05-08T13:56:00Z") + turns(2, OTHER, "2023-06-02T10:00:00Z"))
        c = other.pack(q, budget_tokens=120, as_of="2024-01-01", known_at="2024-01-01", trace=True).to_dict()
        assert a["bundle_text"] == c["bundle_text"] and a["trace"] == c["trace"]
    finally:
        other.close()
