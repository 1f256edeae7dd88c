"""What the engines share (graphmem/store/common/) answers alike on PostgreSQL: the checks of
``rebuild --check`` name each damage with the codes docs/semantics.md lists, as on Kuzu
(tests/test_integrity.py makes the same damage in Cypher). Against the throwaway cluster of tests/pg.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import graphmem
from tests.pg import pg_cluster, pg_url  # noqa: F401  (fixtures)

DAMAGE: dict[str, tuple[Callable[[Any], Any], str]] = {
    "entity gone": (lambda s: s._w("DELETE FROM entity WHERE ref = 'tool:kuzu'"), "dangling_object"),
    "subject gone": (lambda s: s._w("DELETE FROM entity WHERE ref = 'project:atlas'"), "dangling_subject"),
    "fact counter": (lambda s: s._set_meta("next_fact", "1"), "counter_behind"),
    "record counter": (lambda s: s._set_meta("next_record", "1"), "counter_behind"),
    "index counts": (lambda s: s._set_meta("index_docs", "61"), "index_stats_mismatch"),
    "term lost": (lambda s: s._w("DELETE FROM term WHERE term = 'kuzu'"), "index_term_mismatch"),
    "time out of range": (lambda s: s._w("UPDATE assertion SET valid_to = 253402300800000000 WHERE id = 1"),
                          "time_out_of_range"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_the_check_names_each_damage_as_on_kuzu(pg_url: str, damage: str) -> None:  # noqa: F811
    with graphmem.open(pg_url, create=True) as m:
        m.add_entity("Project", "Atlas")
        m.add_entity("Tool", "Kuzu")
        m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
        m.ingest([json.dumps({"text": "Atlas moved to Kuzu last spring."}).encode()])
        assert m.rebuild(check=True).ok
        do, code = DAMAGE[damage]
        with m.store.transaction():
            do(m.store)
        r = m.rebuild(check=True)
        assert code in {p["code"] for p in r.problems} and not r.ok, (damage, r.problems)
