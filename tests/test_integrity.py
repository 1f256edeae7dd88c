"""``rebuild --check`` verifies more than the view: entities behind every statement, the id counters,
the record keys and the full-text index against the records, and times that export can write and
import read back. Each damage below is made by hand with Cypher, as a crash or an older graphmem
could leave it; the check must name it, and a healthy store must pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import graphmem


@pytest.fixture
def rich(atlas: graphmem.Memory) -> graphmem.Memory:
    m = atlas
    m.ingest([json.dumps({"id": f"n{i}", "text": f"Atlas note {i}: we moved search to Kuzu"}).encode()
              for i in range(60)])
    m.assert_("atlas", "uses", "kuzu", valid_from="2025-01-01", sources=["rec:3"])
    m.assert_("atlas", "status", "active", valid_from="2025-02-01")
    return m


def test_a_healthy_store_has_no_problems(rich: graphmem.Memory) -> None:
    r = rich.rebuild(check=True)
    assert r.ok and r.problems == () and r.to_dict()["problems"] == []


DAMAGE: dict[str, tuple[Callable[[graphmem.Memory], Any], str]] = {
    "entity gone": (lambda m: m.store.cypher("MATCH (t:Tool {ref: 'tool:kuzu'}) DETACH DELETE t"), "dangling_object"),
    "subject gone": (lambda m: m.store.cypher("MATCH (p:Project {ref: 'project:atlas'}) DETACH DELETE p"),
                     "dangling_subject"),
    "fact counter": (lambda m: m.store.cypher("MATCH (x:Meta {key: 'next_fact'}) SET x.value = '2'"), "counter_behind"),
    "record counter": (lambda m: m.store.cypher("MATCH (x:Meta {key: 'next_record'}) SET x.value = '5'"),
                       "counter_behind"),
    "record lost": (lambda m: m.store.cypher("MATCH (r:Record {ref: 'rec:7'}) DETACH DELETE r"), "record_key_mismatch"),
    "key lost": (lambda m: m.store.cypher("MATCH (k:RecordKey {key: 'id:n9'}) DELETE k"), "record_key_mismatch"),
    "index counts": (lambda m: m.store.cypher("MATCH (x:Meta {key: 'index_docs'}) SET x.value = '61'"),
                     "index_stats_mismatch"),
    "term lost": (lambda m: m.store.cypher("MATCH (t:Term) WHERE t.term = 'kuzu' DELETE t"), "index_term_mismatch"),
    "time out of range": (lambda m: m.store.cypher("MATCH (a:Assertion {id: 2}) SET a.valid_to = 253402300800000000"),
                          "time_out_of_range"),
}


@pytest.mark.engine("kuzu", "ladybug")  # each damage is made in Cypher on the embedded engines' tables
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_the_check_names_each_damage(rich: graphmem.Memory, damage: str) -> None:
    do, code = DAMAGE[damage]
    do(rich)
    r = rich.rebuild(check=True)
    codes = {p["code"] for p in r.problems}
    assert code in codes and not r.ok, (damage, r.problems)
    assert r.to_dict()["ok"] is False
