"""The full-text index (graphmem/model/textindex.py and its tables in graphmem/store/kuzu/postings.py): terms, postings, BM25, upkeep."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from helpers import TEST_ENGINE
from hypothesis import given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.model.textindex import (
    K1,
    B,
    Postings,
    allowed_mask,
    bm25_top,
    idf,
    merge_plan,
    postings_of,
    terms,
    weights,
)


def test_terms_split_lower_and_stem() -> None:
    assert terms("We MIGRATED the graph-core; p95 was 120ms in 2025!") == [
        "we", "migrat", "the", "graph", "core", "p95", "was", "120ms", "in", "2025"]
    assert terms("Migration, migrating") == ["migrat", "migrat"]
    assert terms("naïve Zürich") == ["naïv", "zürich"]  # accents are kept
    assert terms("x" * 65 + " ok") == ["ok"]  # longer runs (hashes, base64) are not words
    assert terms("snake_case") == ["snake", "case"]


def test_the_english_stemmer_alone_stems_as_the_package_does() -> None:
    """``_stem`` loads only snowballstemmer's English module (the package's import loads 36 languages):
    it stems every word of the lemma table, its lemmas and a few more as ``snowballstemmer.stemmer``."""
    import snowballstemmer  # type: ignore[import-untyped]

    from graphmem.model.textindex import _english_stemmer
    from graphmem.retrieval.lexicon import lemma_table
    ours, theirs = _english_stemmer(), snowballstemmer.stemmer("english")
    assert type(ours).__name__ == type(theirs).__name__ == "EnglishStemmer"
    table = lemma_table()
    words = {w.lower() for w in [*table, *table.values(), "migrated", "latencies", "naïve", "p95", "zürich"]}
    assert len(words) > 40_000
    assert [w for w in sorted(words) if ours.stemWord(w) != theirs.stemWord(w)] == []


def test_lemmas_of_a_few_words_are_the_tables() -> None:
    """``lemmas_of`` finds a few words' entries in the lemma table's file without parsing it: the same
    lemmas as the parsed table, for words in it (with accents too), words not in it, and many words."""
    from graphmem.retrieval import lexicon
    table = json.loads(lexicon._lemma_text())
    words = sorted({w.lower() for w in table})
    rng = random.Random(7)
    batches = [rng.sample(words, 40) for _ in range(20)] + [
        [w for w in words if not w.isascii()][:60], ["graphs", "databases", "kuzu", "qwzx", "ran", "Ran", "a", "a"]]
    for batch in batches:
        lexicon._lemma_memo.clear()
        assert lexicon.lemmas_of(batch) == [table.get(w, w) for w in batch]
    assert lexicon.lemmas_of(words[:500]) == [table.get(w, w) for w in words[:500]]  # many: the table read whole
    # the file is one entry a line, each key once (what the lookup by line relies on)
    lines = lexicon._lemma_text().split(b"\n")
    assert lines[0] == b"{" and lines[-2:] == [b"}", b""]
    keys = [json.loads(b"{" + line.rstrip(b",") + b"}").popitem()[0] for line in lines[1:-2]]
    assert all(line.startswith(b'    "') for line in lines[1:-2]) and len(keys) == len(set(keys)) == len(table)


@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(1, 65535), st.integers(1, 65535)), max_size=50))
def test_postings_round_trip(rows: list[tuple[int, int, int]]) -> None:
    p = Postings(np.array([r[0] for r in rows], "<u4"), np.array([r[1] for r in rows], "<u2"),
                 np.array([r[2] for r in rows], "<u2"))
    q = Postings.decode(p.encode())
    assert [q.ids.tolist(), q.tfs.tolist(), q.dls.tolist()] == [p.ids.tolist(), p.tfs.tolist(), p.dls.tolist()]


@given(st.lists(st.integers(1, 500), min_size=1, max_size=300))
def test_merge_plan_keeps_every_posting_in_few_blocks(batches: list[int]) -> None:
    sizes: list[int] = []
    for n in batches:
        before = list(sizes)
        sizes, first = merge_plan(sizes, n)
        assert sizes[:first] == before[:first]  # blocks before the first rewritten one stay as they are
        assert first <= len(before)
    assert sum(sizes) == sum(batches)
    assert len(sizes) <= math.log2(sum(batches)) + 2
    assert all(sizes[i] > 2 * sizes[i + 1] for i in range(len(sizes) - 1))


def brute_bm25(docs: dict[int, list[str]], query: list[str]) -> dict[int, float]:
    n = len(docs)
    avgdl = sum(len(t) for t in docs.values()) / n
    out: dict[int, float] = {}
    for d, ts in docs.items():
        c = Counter(ts)
        s = sum(idf(n, sum(q in t for t in docs.values())) * c[q] * (K1 + 1) / (c[q] + K1 * (1 - B + B * len(ts) / avgdl))
                for q in query if c[q])
        if s > 0:
            out[d] = s
    return out


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_bm25_top_is_exact(data: st.DataObject) -> None:
    """The pruned ranking equals scoring every record by hand: same records, same order, same scores."""
    words = ["w" + str(i) for i in range(data.draw(st.integers(2, 8)))]
    n_docs = data.draw(st.integers(1, 120))
    rng = random.Random(data.draw(st.integers(0, 10**6)))
    # skewed word frequencies, so some terms are rare and some are in most records (the pruning's cases)
    docs = {i + 1: rng.choices(words, [1 / (r + 1) ** 2 for r in range(len(words))], k=rng.randrange(1, 12))
            for i in range(n_docs)}
    query = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=4, unique=True))
    k = data.draw(st.integers(1, 15))
    post, n, tokens = postings_of((d, " ".join(ts)) for d, ts in docs.items())
    got = bm25_top([(post[q].ids, weights(post[q], n, tokens)) for q in query if q in post], k)
    want = sorted(brute_bm25(docs, query).items(), key=lambda x: (-round(x[1], 9), x[0]))[:k]
    assert [d for d, _ in got] == [d for d, _ in want]
    assert all(math.isclose(a, b, rel_tol=1e-9) for (_, a), (_, b) in zip(got, want, strict=True))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_bm25_top_within_allowed_records_is_the_full_ranking_cut_to_them(data: st.DataObject) -> None:
    """A filter ranks within the records it allows: the same records, order and scores as scoring every
    record by hand and keeping the allowed ones (so a filter never returns too few)."""
    words = ["w" + str(i) for i in range(data.draw(st.integers(2, 8)))]
    n_docs = data.draw(st.integers(1, 120))
    rng = random.Random(data.draw(st.integers(0, 10**6)))
    docs = {i + 1: rng.choices(words, [1 / (r + 1) ** 2 for r in range(len(words))], k=rng.randrange(1, 12))
            for i in range(n_docs)}
    query = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=4, unique=True))
    k = data.draw(st.integers(1, 15))
    share = data.draw(st.sampled_from([0.02, 0.2, 0.6, 1.0]))
    within = np.array(sorted(d for d in docs if rng.random() < share), np.int64)
    post, n, tokens = postings_of((d, " ".join(ts)) for d, ts in docs.items())
    lists = [(post[q].ids, weights(post[q], n, tokens)) for q in query if q in post]
    got = bm25_top(lists, k, allowed_mask(within, lists))
    want = sorted(((d, s) for d, s in brute_bm25(docs, query).items() if d in set(within.tolist())),
                  key=lambda x: (-round(x[1], 9), x[0]))[:k]
    assert [d for d, _ in got] == [d for d, _ in want]
    assert all(math.isclose(a, b, rel_tol=1e-9) for (_, a), (_, b) in zip(got, want, strict=True))


def _hits(m: graphmem.Memory, q: str) -> list[tuple[str, float]]:
    return [(h["ref"], h["score"]) for h in m.search(q, limit=50).to_dict()["results"]]


def test_index_kept_in_batches_equals_one_built_at_once(new_store: Callable[[str], Path]) -> None:
    """Records added one by one, in small batches and all at once rank the same, also after reopening."""
    rng = random.Random(7)
    vocab = ["kuzu", "graph", "index", "migration", "latency", "atlas", "beacon", "cache", "query", "p95"]
    lines = [json.dumps({"text": " ".join(rng.choices(vocab, [9, 5, 4, 3, 3, 2, 2, 1, 1, 1], k=rng.randrange(2, 15)))
                         + f" note{i}"}).encode() for i in range(400)]
    whole = graphmem.open(new_store("whole"), create=True)
    whole.ingest(lines)
    parts = graphmem.open(new_store("parts"), create=True)
    i = 0
    while i < len(lines):
        step = rng.choice([1, 1, 1, 2, 5, 60])
        parts.ingest(lines[i:i + step])
        i += step
    queries = ["kuzu", "p95 latency", "atlas beacon cache", "migration", "note17", "note399 kuzu", "graph index query"]
    for q in queries:
        assert _hits(parts, q) == _hits(whole, q), q
    assert len(_hits(whole, "kuzu")) == 50
    want = {q: _hits(whole, q) for q in queries}
    whole.close()
    parts.close()
    reopened = graphmem.open(new_store("parts"))
    assert {q: _hits(reopened, q) for q in queries} == want


def _term_blocks(m: graphmem.Memory, term: str) -> tuple[str, int]:
    """A term's block sizes as stored, and how many posting blocks its key names, in the engine's own tables."""
    if TEST_ENGINE == "postgresql":
        q = m.store._q  # type: ignore[attr-defined]
        (blocks,), = q("SELECT blocks FROM term WHERE term = %s", (term,))
        (n,), = q("SELECT count(*) FROM posting WHERE key LIKE %s", (term + " %",))
        return blocks, n
    (blocks,) = m.store.cypher("MATCH (t:Term {term: $t}) RETURN t.blocks", {"t": term})[0]
    n = m.store.cypher("MATCH (p:Posting) WHERE p.key STARTS WITH $k RETURN count(p)", {"k": term + " "})[0][0]
    return blocks, n


def test_blocks_stay_few_under_one_record_per_call(store_path: Path) -> None:
    m = graphmem.open(store_path, create=True)
    for i in range(130):
        m.ingest([json.dumps({"text": f"shared word {i}"}).encode()])
    blocks, n_blocks = _term_blocks(m, "share")
    sizes = [int(x) for x in blocks.split(",")]
    assert sum(sizes) == 130 and len(sizes) <= 8
    assert n_blocks == len(sizes)  # merged blocks are gone, not left behind
    assert [h["ref"] for h in m.search("shared", limit=200).to_dict()["results"]] == [f"rec:{i}" for i in range(1, 131)]
