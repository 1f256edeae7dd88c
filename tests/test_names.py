"""Names in records (docs/evidence.md, "Names in records"): what a turn names, the name terms ingest
posts, MENTIONS to entities the store has, and pack's neighbours lane through shared names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.model.names import lookup_terms, name_terms, names
from graphmem.model.textindex import postings_of


def keys(text: str) -> list[tuple[str, str]]:
    return [(n.key, n.rule) for n in names(text)]


def test_speaker_prefix_and_capitalized_runs() -> None:
    assert keys("Caroline: I went to the LGBTQ support group with Anna Lee.") == [
        ("caroline", "speaker"), ("lgbtq", "capitalized"), ("anna lee", "capitalized")]
    # the spans are the text's own
    n = names("Melanie: we saw Mount Hood!")[1]
    assert "Melanie: we saw Mount Hood!"[n.start:n.end] == "Mount Hood" == n.text


def test_sentence_initial_words_are_only_initial() -> None:
    assert keys("Great, that was fun. Sweden next.") == [("great", "initial"), ("sweden", "initial")]
    # a first word the text also writes capitalized inside a sentence is a name
    assert keys("Rosa called. I told Rosa about it.") == [("rosa", "capitalized"), ("rosa", "capitalized")]
    # function words, question words, I, times and months start no name
    assert keys("Did you see it on Monday in May? I did. Yesterday too.") == []


def test_possessive_and_punctuation() -> None:
    assert keys("Ben: I read Melanie's book, then O'Brien's.") == [
        ("ben", "speaker"), ("melanie", "capitalized"), ("o'brien", "capitalized")]
    assert name_terms("Ben: I read O'Brien's book. Ben laughed.") == ["@ben", "@o_brien", "^ben"]
    assert lookup_terms("@ben") == ["@ben", "^ben"] and lookup_terms("^ben") == ["@ben"]


def test_no_name_in_plain_text_and_determinism() -> None:
    assert names("lunch at noon, nothing else") == []
    text = "Ana: Pepper loves the beach near Santa Cruz, said Ben."
    assert names(text) == names(text) and name_terms(text) == ["@ana", "^pepper", "@santa_cruz", "@ben"]


def test_name_terms_leave_bm25_statistics_alone() -> None:
    plain, docs, tokens = postings_of([(1, "ana likes the beach"), (2, "ben likes it")])
    named, docs2, tokens2 = postings_of([(1, "Ana: likes the beach"), (2, "I met Ben there")])
    assert (docs, tokens) == (2, 7) and (docs2, tokens2) == (2, 8)
    assert "@ana" in named and list(named["@ana"].ids) == [1] and list(named["@ben"].ids) == [2]
    assert not any(t.startswith(("@", "^")) for t in plain)


CHAT = [
    ("Ana", "I visited my aunt Rosalind in the hills last weekend.", "2024-03-01T10:00:00Z", "chat/s1"),
    ("Ben", "Rosalind sent me pictures of her garden.", "2024-04-20T10:00:00Z", "chat/s2"),
    ("Ana", "Maya asked about the Atlas release.", "2024-04-21T10:00:00Z", "chat/s2"),
]


def lines(extra: int = 30) -> list[dict[str, Any]]:
    filler = [{"text": f"{'Ana' if i % 2 else 'Ben'}: filler turn {i} about the weather and the news",
               "ts": f"2024-02-{1 + i % 28:02d}T09:00:00Z", "source": f"chat/f{i}", "kind": "message"}
              for i in range(extra)]
    return filler + [{"text": f"{who}: {t}", "ts": ts, "source": src, "kind": "message"} for who, t, ts, src in CHAT]


@pytest.fixture
def store(store_path: Path) -> Iterator[graphmem.Memory]:
    m = graphmem.open(store_path, create=True)
    yield m
    m.close()


def test_ingest_links_a_name_to_the_existing_entity(store: graphmem.Memory) -> None:
    store.add_entity("Person", "Maya Chen", aliases=["Maya"])
    store.add_entity("Project", "Atlas")
    before = [e.ref for e in store.entities()]
    report = store.ingest(lines(4))
    last = int(report.stored[-1].split(":")[1])
    mentions = store.store.mentions_of_records([last])[last]
    assert [(ref, rule) for ref, _, _, rule in mentions] == [("person:maya-chen", "name"), ("project:atlas", "name")]
    assert [e.ref for e in store.entities()] == before  # no new entity: names are not entities
    assert store.rebuild(check=True).problems == ()


def test_an_ambiguous_name_links_to_neither(store: graphmem.Memory) -> None:
    store.add_entity("Person", "Maya Chen", aliases=["Maya"])
    store.add_entity("Tool", "Maya")
    report = store.ingest([{"text": "Ana: Maya again.", "ts": "2024-01-01"}])
    rid = int(report.stored[0].split(":")[1])
    assert store.store.mentions_of_records([rid])[rid] == []


def test_search_ranks_a_record_naming_a_rare_name_a_best_hit_names(store: graphmem.Memory) -> None:
    """'Rosalind sent me pictures' shares no word with the question; the best hit names Rosalind too,
    and lends it NAME_SHARE of its score (docs/evidence.md, "Query words and ranking")."""
    from graphmem.evidence.search import NAME_SHARE
    store.ingest(lines())
    hits = store.search("Who did Ana visit in the hills?", limit=5).results
    assert "Rosalind in the hills" in hits[0].snippet
    other = next(h for h in hits if "pictures of her garden" in h.snippet)
    assert other.score >= NAME_SHARE * hits[0].score  # and the turn after it, by Ana, lends its context
    # the filter holds: a record it leaves out is never lent in
    assert not any("pictures" in h.snippet for h in store.search("visit hills", until="2024-03-31").results)


def test_a_document_neither_lends_nor_borrows(store: graphmem.Memory) -> None:
    """Only turns of conversations lend their names: a note naming Rosalind stands alone, as a note
    does in the session context (docs/evidence.md)."""
    store.ingest(lines() + [{"text": "Seed order for Rosalind: tomatoes.", "ts": "2024-04-01", "kind": "note",
                             "source": "notes"}])
    hits = store.search("Who did Ana visit in the hills?", limit=10).results
    assert any("pictures of her garden" in h.snippet for h in hits)  # a turn: lent
    assert not any("Seed order" in h.snippet for h in hits)  # a note: not lent


def test_a_name_the_query_names_lends_nothing(store: graphmem.Memory) -> None:
    """Asked about Rosalind, the turns naming her match the query's word already: no share on top."""
    from graphmem.model.textindex import query_terms
    store.ingest(lines())
    hits = {h.snippet: h.score for h in store.search("Rosalind hills", limit=5).results}
    other = next(score for text, score in hits.items() if "pictures of her garden" in text)
    own = dict(store.store.rank_records(query_terms(["rosalind", "hills"]), 50))
    rid = next(r for r, _ in own.items() if "pictures" in store.store.record_hit(r)[0])
    assert other == pytest.approx(own[rid])  # its own BM25: nothing lent (its session neighbour shares no word)


def test_a_common_name_lends_nothing(store: graphmem.Memory) -> None:
    """A name in more than RARE_NAME of the records (and more than NAME_FLOOR) tells none apart."""
    common = [{"text": f"Ben: weather report {i} from Lisbon", "ts": "2024-02-01", "source": f"c/{i}",
               "kind": "message"} for i in range(4)]
    rare = [{"text": f"Ben: weather report {i} from Porto", "ts": "2024-02-01", "source": f"r/{i}",
             "kind": "message"} for i in range(2)]
    store.ingest(lines() + common + rare + [
        {"text": "Ana: the castle tour went through Lisbon and Porto", "ts": "2024-02-02", "source": "t/1",
         "kind": "message"}])
    hits = store.search("castle tour", limit=10).results
    assert "castle tour" in hits[0].snippet
    assert {h.snippet for h in hits[1:]} == {f"Ben: weather report {i} from Porto" for i in range(2)}


def test_the_neighbours_lane_finds_a_record_sharing_a_name(store: graphmem.Memory) -> None:
    import graphmem.retrieval.packing as packing
    store.ingest(lines())
    doc = store.pack("Who did Ana visit in the hills?", budget_tokens=300, trace=True, as_of="2024-05-01")
    items = {i.ref: i for i in doc.items}
    hit = next(i for i in doc.items if "Rosalind in the hills" in i.text)
    other = next(i for i in doc.items if "pictures of her garden" in i.text)
    assert hit.lane == "records" and other.lane == "records"  # ranked by search's ranking, the names lending
    assert "from the turns around it or a best hit's names" in other.why
    pool = packing.RECORD_POOL, packing.RECORD_POOL_MIN
    try:  # a pool too small for the ranking to reach it: the neighbours lane still finds it
        packing.RECORD_POOL = packing.RECORD_POOL_MIN = 1
        small = store.pack("Who did Ana visit in the hills?", budget_tokens=300, trace=True, as_of="2024-05-01")
    finally:
        packing.RECORD_POOL, packing.RECORD_POOL_MIN = pool
    lane = next(i for i in small.items if "pictures of her garden" in i.text)
    assert lane.lane == "neighbours" and lane.why == f"names rosalind as {hit.ref} does"
    # the speakers are in most turns: they bring no neighbour of their own
    assert not any("names ana" in i.why or "names ben" in i.why for i in items.values())
    again = store.pack("Who did Ana visit in the hills?", budget_tokens=300, trace=True, as_of="2024-05-01")
    assert [(i.ref, i.score) for i in again.items] == [(i.ref, i.score) for i in doc.items]


def test_the_lane_respects_the_filter(store: graphmem.Memory) -> None:
    store.ingest(lines())
    doc = store.pack("Who did Ana visit in the hills?", budget_tokens=300, until="2024-03-31")
    assert not any("pictures of her garden" in i.text for i in doc.items)


def test_ingesting_a_file_twice_stays_idempotent(store: graphmem.Memory, tmp_path: Path) -> None:
    import json
    store.add_entity("Person", "Maya Chen", aliases=["Maya"])
    f = tmp_path / "chat.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines(6)), encoding="utf-8")
    first = store.ingest(f)
    terms_before = {t: list(p.ids) for t in ("@rosalind", "^rosalind", "@maya")
                    if (got := store.store.term_postings(t)) is not None for p in [got[0]]}
    mentions_before = store.store.all_mentions()
    second = store.ingest(f)
    assert len(first.stored) == 9 and second.stored == () and second.duplicates == 9
    assert store.store.all_mentions() == mentions_before and len(mentions_before) == 1
    assert {t: list(p.ids) for t in ("@rosalind", "^rosalind", "@maya")
            if (got := store.store.term_postings(t)) is not None for p in [got[0]]} == terms_before
    assert terms_before["@rosalind"] and terms_before["^rosalind"]
    assert store.rebuild(check=True).problems == ()
