"""The stored linking lexicon (store/kuzu/lexicon.py, docs/recommend.md "The stored lexicon"): after any
entity writes it says what a lexicon built afresh from the entities says, in the writing process, in a
fresh reader, after a bulk import and after ``rebuild``; ``rebuild --check`` finds one that does not."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import graphmem
from graphmem.errors import BadInput
from graphmem.retrieval.linking import Lexicon, fresh_lexicon, stored_lexicon

WORDS = ["graph", "database", "search", "full-text", "Kuzu", "vector", "store", "engines", "index", "Atlas",
         "running", "ran", "mice", "geese", "data", "query", "planner", "é", "naïve", "x"]


def _label(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


def link_both(m: graphmem.Memory, lazy: Lexicon, whole: Lexicon, text: str) -> bool:
    """Linking ``text`` through the stored lexicon read part by part and through a whole one agree."""
    from graphmem.retrieval.linking import Linker, link
    a = link(Linker(lambda: lazy, m.ontology, m.store), text)
    b = link(Linker(lambda: whole, m.ontology, m.store), text)
    ws = [w for w in text.lower().split()]
    return a == b and lazy.text_scores(ws, [e.ref for e in m.entities()]) == whole.text_scores(
        ws, [e.ref for e in m.entities()]) and lazy.describe(ws, set(), 5) == whole.describe(ws, set(), 5)


def _same(m: graphmem.Memory) -> None:
    """The lexicon read from the store equals one built from every entity, and so does the writer's own."""
    fresh = fresh_lexicon(m.store).state()
    assert stored_lexicon(m.store)[0].state() == fresh
    assert m.lexicon().state() == fresh


@pytest.mark.parametrize("seed", range(4))
def test_stored_lexicon_equals_a_fresh_one_after_random_writes(store_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = store_path
    refs: list[str] = []
    with graphmem.open(path, create=True) as m:
        for step in range(60):
            op = rng.random()
            try:
                if op < 0.45 or not refs:
                    r = m.add_entity(rng.choice(["Tool", "Project", "Concept"]), f"{_label(rng)} {step}",
                                     aliases=[_label(rng) for _ in range(rng.randint(0, 2))],
                                     description=_label(rng) if rng.random() < 0.6 else "")
                    refs.append(r.to_dict()["entity"]["ref"] if "entity" in r.to_dict() else m.entities()[-1].ref)
                elif op < 0.65:
                    m.rename_entity(rng.choice(refs), f"{_label(rng)} r{step}")
                elif op < 0.85:
                    m.add_aliases(rng.choice(refs), [_label(rng)])
                else:
                    ref = rng.choice(refs)
                    aliases = m.entity(ref).aliases
                    if aliases:
                        m.remove_aliases(ref, [rng.choice(aliases)])
            except BadInput:
                pass  # a name taken already, say: nothing written
            if step % 7 == 0:
                _same(m)
        _same(m)
    with graphmem.open(path, read_only=True) as r:  # the writer stored it on closing: nothing to patch
        assert r.store.lexicon_changes() == []
        assert Lexicon.from_parts(r.store.lexicon_parts(None)).state() == fresh_lexicon(r.store).state()
        lazy, as_stored = stored_lexicon(r.store)  # read part by part: what linking looks up is the same
        assert as_stored and type(lazy).__name__ == "StoredLexicon"
        whole = fresh_lexicon(r.store)
        for e in r.entities():
            assert lazy.by_ref[e.ref] == whole.by_ref[e.ref] and lazy.index[e.ref] == whole.index[e.ref]
            assert lazy.entities[whole.index[e.ref]] == e
        for key in whole.names:
            assert lazy.names[key] == whole.names[key]
        for key in whole.lemmas:
            assert lazy.lemmas.get(key) == whole.lemmas[key]
        for term in whole.postings:
            assert [x.tolist() for x in lazy.postings[term]] == [x.tolist() for x in whole.postings[term]]
        assert lazy.names.get("no such name") is None and "nobody:x" not in lazy.by_ref
        assert (lazy.n_docs, lazy.n_tokens, lazy.longest) == (whole.n_docs, whole.n_tokens, whole.longest)
        for text in ["graph database search", "Kuzu running x", "naïve geese index planner"]:
            assert link_both(r, lazy, whole, text)
        assert r.rebuild(check=True).ok


def test_a_reader_patches_the_stored_lexicon_with_the_entities_written_since(store_path: Path) -> None:
    path = store_path
    with graphmem.open(path, create=True) as m:
        m.add_entity("Tool", "Kuzu", description="an embedded graph database")
        m.add_entity("Project", "Atlas")
    with graphmem.open(path) as m:
        stored = m.store.lexicon_parts(None)
        m.store.entity_writes = 0  # as if the writer had been killed before closing: the changes stay
        m.rename_entity("Atlas", "Atlas Two")
        m.add_aliases("Kuzu", ["kuzudb"])
        m.add_entity("Tool", "Neo4j", description="a graph database server")
        assert m.store.lexicon_parts(None) == stored
        assert m.store.lexicon_changes() == ["project:atlas", "tool:kuzu", "tool:neo4j"]
        m.store.entity_writes = 0
        m.store.close()  # closed without storing the lexicon again (Memory.close would)
    with graphmem.open(path, read_only=True) as r:
        lx, as_stored = stored_lexicon(r.store)
        assert not as_stored and lx.state() == fresh_lexicon(r.store).state()
        assert [s.ref for s in r.link("Atlas Two runs on kuzudb")] == ["project:atlas", "tool:kuzu"]
        assert r.rebuild(check=True).ok


def test_rebuild_check_finds_a_stored_lexicon_that_differs_and_rebuild_makes_it_again(store_path: Path) -> None:
    path = store_path
    with graphmem.open(path, create=True) as m:
        m.add_entity("Tool", "Kuzu")
    with graphmem.open(path) as m:
        m.store.store_lexicon(Lexicon([]).to_parts())  # a lexicon that knows no entity
        report = m.rebuild(check=True)
        assert not report.ok and [p["code"] for p in report.problems] == ["lexicon_drift"]
        report = m.rebuild()
        assert report.counts["lexicon_entities"] == 1
        assert m.rebuild(check=True).ok
        assert Lexicon.from_parts(m.store.lexicon_parts(None)).state() == fresh_lexicon(m.store).state()


def test_a_bulk_import_drops_the_stored_lexicon_and_closing_stores_it_again(tmp_path: Path, store_path: Path) -> None:
    path = store_path
    lines = [json.dumps({"op": "entity", "type": "Tool", "name": f"Tool {i}", "description": f"engine {i % 7}"})
             for i in range(3000)]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    with graphmem.open(path, create=True) as m:
        m.add_entity("Project", "Atlas")
        _same(m)
        assert m.import_jsonl(src).ok
        _same(m)
    with graphmem.open(path, read_only=True) as r:
        assert r.store.lexicon_parts([0]) and not r.store.lexicon_changes()
        assert Lexicon.from_parts(r.store.lexicon_parts(None)).state() == fresh_lexicon(r.store).state()
        assert r.lexicon().n_docs == 3001 and r.lexicon().by_ref["tool:tool-2999"].description == "engine 3"
