"""A search reads its hits in batches (issue 20, item 2): the terms' rows and the posting blocks not
held each in one store query, the hits' rows in one query per BY_KEYS_LOOKUPS hits, so a search makes
2 queries up to 16 hits and at most 64 at the largest limit, not one per hit; and what the batched
reads return is what the one-record reads return."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from helpers import TEST_ENGINE

import graphmem
from graphmem.store.kuzu.base import BY_KEYS_LOOKUPS

N = 150  # more hits than two batches of BY_KEYS_LOOKUPS


def _lines() -> list[bytes]:
    out = []
    for i in range(N):
        words = "kuzu " * (1 + i % 5) + ("graph " if i % 3 == 0 else "") + ("Atlas uses Redis. " if i % 10 == 0 else "")
        out.append(json.dumps({"text": f"{words}note n{i}", "ts": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
                               "kind": ("note", "message")[i % 2], "source": f"slack:#c{i % 4}",
                               "scope": "team" if i % 7 == 0 else None}).encode())
    return out


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[graphmem.Memory]:
    """The store the tests share (a schema of its own on a PostgreSQL run)."""
    path = (request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12]) if TEST_ENGINE == "postgresql"
            else tmp_path_factory.mktemp("batches") / "store")
    with graphmem.open(path, create=True) as mem:
        mem.add_entity("Project", "Atlas")
        mem.add_entity("Tool", "Redis")
        mem.ingest(_lines())
        mem.extract_pending(apply=True)  # MENTIONS of Atlas and Redis in every tenth record
        yield mem


@contextmanager
def counted(store: Any) -> Iterator[list[str]]:
    """Every query the store runs (its ``_q`` and ``_iter``), in order."""
    seen: list[str] = []
    real_q, real_iter = store._q, store._iter

    def q(query: str, *a: Any, **k: Any) -> Any:
        seen.append(query)
        return real_q(query, *a, **k)

    def it(query: str, *a: Any, **k: Any) -> Any:
        seen.append(query)
        return real_iter(query, *a, **k)

    store._q, store._iter = q, it
    try:
        yield seen
    finally:
        del store._q, store._iter


# The query counts below are the embedded store's (store/kuzu: BY_KEYS_LOOKUPS keys a query, Cypher text). The
# PostgreSQL store reads any number of keys in one query and checks what it caches against other writers on
# each search (the newest record event, the index counts): a fixed 7 queries a search, whatever the limit.


def _expected(hits: int) -> int:
    return 1 + -(-hits // BY_KEYS_LOOKUPS)  # the terms' rows, then the hits' rows, BY_KEYS_LOOKUPS a query


@pytest.mark.engine("kuzu", "ladybug")  # counts the embedded store's Cypher reads; PostgreSQL's SQL reads differ (below)
@pytest.mark.parametrize("query", ["kuzu", "kuzu graph", "graph note n3 n4 n5 kuzu"])
def test_a_search_makes_a_few_queries_not_one_per_hit(m: graphmem.Memory, query: str) -> None:
    m.search(query)  # the postings held
    counts = {}
    for limit in (1, 10, BY_KEYS_LOOKUPS, BY_KEYS_LOOKUPS + 1, 1000):
        with counted(m.store) as seen:
            r = m.search(query, limit=limit)
        assert len(r.results) == min(limit, N)
        counts[limit] = len(seen)
    assert counts == {limit: _expected(min(limit, N)) for limit in counts}, counts
    assert counts[1] == counts[10] == counts[BY_KEYS_LOOKUPS] == 2
    assert max(counts.values()) <= _expected(1000)  # the largest limit: 64 queries, not 1,001
    m.store.forget_postings()
    with counted(m.store) as seen:
        r = m.search(query, limit=10)
    # and the posting blocks, every term's at once; and, read again after the postings are dropped, the archived
    # records and the records' columns (the sessions a turn is ranked in: the name of the file that keeps
    # them, none in a small store, then the table)
    assert len(seen) == 6, seen
    assert sum("RecordEvent" in q for q in seen) == 1, seen
    assert len(r.results) == 10


@pytest.mark.engine("kuzu", "ladybug")  # counts the embedded store's Cypher reads; PostgreSQL's SQL reads differ (below)
def test_a_long_query_looks_its_words_up_in_batches(m: graphmem.Memory) -> None:
    words = " ".join(f"n{i}" for i in range(64))  # the most words a query keeps
    m.store.forget_postings()
    with counted(m.store) as seen:
        r = m.search(words, limit=5)
    # the terms', the blocks' (one each), the hits' rows; the archived records, and the records' columns
    # (the name of the file that keeps them, none in a small store, then the table)
    assert len(seen) == 2 * _expected(64) + 2, seen
    assert len(r.results) == 5


@pytest.mark.engine("kuzu", "ladybug")  # counts the embedded store's Cypher reads; PostgreSQL's SQL reads differ (below)
def test_nothing_found_reads_no_records(m: graphmem.Memory) -> None:
    with counted(m.store) as seen:
        assert m.search("zzzunknownword", limit=1000).results == ()
    assert len(seen) == 1  # the terms' rows only


@pytest.mark.parametrize("limit", [1, 10, BY_KEYS_LOOKUPS + 1, 1000])
def test_batched_hits_are_the_records_as_read_one_by_one(m: graphmem.Memory, limit: int) -> None:
    r = m.search("kuzu graph", limit=limit)
    ids = [int(h.ref.removeprefix("rec:")) for h in r.results]
    assert len(ids) == min(limit, N)
    batch = m.store.record_hits(ids)
    assert sorted(batch) == sorted(ids)
    for h, i in zip(r.results, ids, strict=True):
        one = m.store.record_hit(i)
        assert batch[i] == one
        text, ts, kind, source, scope, importance = one
        assert (h.kind, h.source, h.scope, h.importance) == (kind, source, scope, importance)
        assert int(h.ts.timestamp() * 1_000_000) == ts
        assert h.snippet.strip("…") in " ".join(text.split())
    assert any(h.scope == "team" for h in m.search("kuzu", limit=1000).results)
    assert m.store.record_hits([10**9]) == {}  # a record that is not there is left out


def test_terms_postings_matches_term_postings(m: graphmem.Memory) -> None:
    terms = ["kuzu", "graph", "nope", "n3"]
    many = m.store.terms_postings(terms)
    m.store.forget_postings()
    for t, got in zip(terms, many, strict=True):
        one = m.store.term_postings(t)
        if one is None:
            assert got is None
            continue
        assert got is not None
        assert got[0].ids.tolist() == one[0].ids.tolist() and got[1].tolist() == one[1].tolist()
    assert len(many[0][0]) == N  # type: ignore[index]


@pytest.mark.engine("kuzu", "ladybug")  # counts the embedded store's Cypher reads; PostgreSQL's SQL reads differ (below)
@pytest.mark.parametrize("n", [3, BY_KEYS_LOOKUPS + 1])
def test_mentions_of_many_records_in_one_query(m: graphmem.Memory, n: int) -> None:
    ids = list(range(1, N + 1))[:n] if n > 3 else [1, 11, 2]
    m.store.mentioned_by([1])  # the entities' refs by node, read once per store
    with counted(m.store) as seen:
        by = m.store.mentioned_by(ids)
        spans = m.store.mentions_of_records(ids)
    assert len(seen) == 2 * _expected(len(ids)) - 2
    for i in ids:
        assert by[i] == m.store.mentions_of(i)
        assert sorted({ref for ref, *_ in spans[i]}) == by[i]
        assert [s for _, s, _, _ in spans[i]] == sorted(s for _, s, _, _ in spans[i])
    assert by[1] == ["project:atlas", "tool:redis"] and by[2] == []


@pytest.mark.engine("kuzu", "ladybug")  # counts the embedded store's Cypher reads; PostgreSQL's SQL reads differ (below)
def test_the_best_turns_names_cost_one_read_then_none(new_store: Callable[[str], Any]) -> None:
    """A search whose best turns name a name makes one more query (the names' Term rows); what a name
    gives is kept with the records' columns, so the same search again makes none (docs/evidence.md)."""
    with graphmem.open(new_store("s"), create=True) as mem:
        mem.ingest([json.dumps({"text": f"Ana: filler {i} about the weather", "ts": "2024-01-01",
                                "kind": "message", "source": f"c/{i}"}).encode() for i in range(40)]
                   + [json.dumps({"text": t, "ts": "2024-02-01", "kind": "message", "source": s}).encode()
                      for t, s in (("Ana: I hiked near Rosalind's farm", "a/1"), ("Ben: Rosalind sent pears", "b/1"))])
        with counted(mem.store) as first:
            r = mem.search("hiked farm", limit=5)
        assert [h.snippet for h in r.results][:2] == ["Ana: I hiked near Rosalind's farm", "Ben: Rosalind sent pears"]
        with counted(mem.store) as again:
            assert mem.search("hiked farm", limit=5).results == r.results
        terms_reads = [sum("(x:Term" in q for q in seen) for seen in (first, again)]
        assert terms_reads == [2, 1], (first, again)  # the query's terms and the names; then the query's only
        assert not any("Posting" in q for q in again)
