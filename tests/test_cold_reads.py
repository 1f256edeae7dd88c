"""What a fresh search or pack process reads of an embedded store, kept small (issue 25, item 3): the records'
facets checked without a scan when no record came after the file, the few records after it read with their
times made in Python, the archived records from ``Meta`` and only the events after it (none while its keys are
current), a hit's columns from the facets, rare names decided by the terms' sizes, the records mentioning
entities one query per type, pendulum imported only for a query that names a time. Each answer is checked
against the tables read directly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import facets_from_table, same_facets

import graphmem

pytestmark = pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' files, Meta and Cypher


def _records(n: int, start: int, old: bool = False) -> list[dict[str, Any]]:
    return [{"text": f"turn {start + i} about the graph", "kind": ("message", "note")[i % 2],
             "source": None if i % 4 == 0 else f"chat:s{i % 3}#m{start + i}", "scope": None if i % 3 else "agent:a",
             # before 1970 with microseconds: the one case where Kuzu's milliseconds and Python's differ
             "ts": f"1969-12-31T23:59:5{i % 10}.{123457 + i:06d}Z" if old and i % 2 else
             f"2024-0{1 + i % 9}-1{i % 10}T10:00:0{i % 10}.25{i % 10}Z"}
            for i in range(n)]


def _queries(m: graphmem.Memory) -> list[str]:
    """Start recording the Cypher text of the store's queries (returns the list that fills)."""
    seen: list[str] = []
    store: Any = m.store
    q, it = store._q, store._iter
    store._q = lambda query, *a, **k: (seen.append(query), q(query, *a, **k))[1]
    store._iter = lambda query, *a, **k: (seen.append(query), it(query, *a, **k))[1]
    return seen


@pytest.fixture
def keep_after_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.kuzu import recordfacets
    monkeypatch.setattr(recordfacets, "KEEP_AFTER", 1)


def test_nothing_after_the_file_is_checked_by_the_tables_count(store_path: Path, keep_after_one: None) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(30, 0, old=True))
        m.store.record_facets()  # the writer's close writes the file
    with graphmem.open(store_path, read_only=True) as m:
        seen = _queries(m)
        facets = m.store.record_facets()
        record_reads = [q for q in seen if "Record" in q]
        assert record_reads == ["MATCH (r:Record) RETURN count(*)"], seen  # no scan by id, nothing after the file
        assert same_facets(facets, facets_from_table(m))


def test_the_records_after_the_file_read_alike_few_or_many(store_path: Path, keep_after_one: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.kuzu import recordfacets
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(20, 0, old=True))
        m.store.record_facets()
    with graphmem.open(store_path) as m:  # records after the file; this writer does not read the facets
        m.ingest(_records(12, 100, old=True))
    for few in (recordfacets._FEW_AFTER, 5):  # the times made in Python (12 <= few), then by Kuzu (12 > 5)
        monkeypatch.setattr(recordfacets, "_FEW_AFTER", few)
        with graphmem.open(store_path, read_only=True) as m:
            seen = _queries(m)
            facets = m.store.record_facets()
            after = [q for q in seen if "r.id > $u" in q]
            assert len(after) == 1 and ("date_part" in after[0]) == (few == 5), seen
            assert m.store._facets_stored == 20  # type: ignore[attr-defined]
            assert len(facets.ids) == 32 and same_facets(facets, facets_from_table(m))


def test_records_mentioning_entities_one_query_per_type(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        for name in ("Atlas", "Borealis"):
            m.add_entity("Project", name)
        m.add_entity("Tool", "Kuzu")
        m.ingest([b'{"text": "Atlas uses Kuzu."}', b'{"text": "Borealis too."}', b'{"text": "Atlas and Borealis."}',
                  b'{"text": "nothing here"}'])
        m.store.replace_mentions([(1, [("project:atlas", 0, 5, "t"), ("tool:kuzu", 10, 14, "t")]),  # type: ignore[attr-defined]
                                  (2, [("project:borealis", 0, 8, "t")]),
                                  (3, [("project:atlas", 0, 5, "t"), ("project:borealis", 10, 18, "t")])])
        refs = ["project:atlas", "project:borealis", "tool:kuzu", "project:nowhere"]
        direct = {ref: sorted(r[0] for r in m.store._q(  # type: ignore[attr-defined]
            f"MATCH (e {{ref: '{ref}'}})<-[:MENTIONS]-(r:Record) RETURN r.id")) for ref in refs}
        assert direct["project:atlas"] and direct["tool:kuzu"]
        m.store._mentioning.clear()  # type: ignore[attr-defined]
        seen = _queries(m)
        got = m.store.records_mentioning(refs)
        assert got.tolist() == sorted({i for ids in direct.values() for i in ids})
        assert len(seen) == 2, seen  # Project's three refs in one query, Tool's in another
        assert all(m.store.records_mentioning([ref]).tolist() == direct[ref] for ref in refs) and len(seen) == 2
        by = m.store.mentioned_by([1, 2, 3, 4])
        assert by == {i: sorted(ref for ref, ids in direct.items() if i in ids) for i in (1, 2, 3, 4)}


def test_a_query_naming_no_time_does_not_import_pendulum(store_path: Path) -> None:
    from graphmem.evidence.query import query_times
    assert query_times("what does Atlas use", 0) == []
    code = ("import sys; from graphmem.evidence.query import query_times; "
            "assert query_times('what does Atlas use', 1_700_000_000_000_000) == []; "
            "assert 'pendulum' not in sys.modules; assert query_times('last year', 1_700_000_000_000_000); "
            "assert 'pendulum' in sys.modules")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_unique_ids_is_numpys_unique() -> None:
    from graphmem.model.arrays import unique_ids
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 5, 1000):
        a = rng.integers(-50, 50, n).astype(np.int64)
        assert np.array_equal(unique_ids(a), np.unique(a))


def test_record_hits_alike_with_the_facets_held_or_not(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(12, 0, old=True))
        ids = [1, 2, 3, 5, 8, 12, 40]  # 40: no such record
        whole = m.store.record_hits(ids)  # the facets not read yet: every column from the table
        assert m.store._facets is None and sorted(whole) == [1, 2, 3, 5, 8, 12]  # type: ignore[attr-defined]
        assert whole == {i: m.store.record_hit(i) for i in whole}
        m.store.record_facets()
        seen = _queries(m)
        assert m.store.record_hits(ids) == whole
        assert len(seen) == 2 and "x.ts" not in seen[0], seen  # time, kind, source and scope from the facets ...
        assert seen[1].count("UNION ALL") == 0 and "x.ts" in seen[1], seen  # ... but for rec:40, not held: whole
        m.ingest(_records(3, 50))  # kept in the facets as they are written
        assert m.store.record_hits([13, 14, 15, 1]) == {i: m.store.record_hit(i) for i in (13, 14, 15, 1)}


def _rare_by_postings(store: Any, asked: list[str]) -> dict[str, Any]:
    """What ``rare_name_records`` gives, from every name's postings read whole (the oracle)."""
    from graphmem.evidence.search import NAME_FLOOR, RARE_NAME
    from graphmem.model.names import lookup_terms
    cap = max(NAME_FLOOR, RARE_NAME * store.index_stats()[0])
    out = {}
    for t in asked:
        parts = [got[0].ids for x in lookup_terms(t) if (got := store.term_postings(x)) is not None]
        if parts and max(len(p) for p in parts) <= cap:
            union = np.unique(np.concatenate(parts))
            if 1 < len(union) <= cap:
                out[t] = union
    return out


@pytest.mark.engine("kuzu", "ladybug", "postgresql")
def test_rare_names_decided_by_the_terms_sizes_read_no_common_postings(store_path: Path) -> None:
    from graphmem.evidence.search import rare_name_records
    from graphmem.model.names import name_terms
    lines = [f'{{"text": "Caroline: we talked about the graph {i}.", "kind": "message", "source": "chat:c#m{i}"}}'
             for i in range(60)]
    lines += [f'{{"text": "I met Zed and Anna Lee at the lake {i}.", "kind": "message", "source": "chat:z#m{i}"}}'
              for i in range(3)]
    with graphmem.open(store_path, create=True) as m:
        m.ingest([line.encode() for line in lines])
        asked = name_terms("Caroline said Zed met Anna Lee; Nobody came.")
        assert {"^caroline", "@zed", "@anna_lee"} <= set(asked)
        old = _rare_by_postings(m.store, asked)  # every name's postings read
        m.store.forget_postings()
        read: list[list[str]] = []
        terms_postings = m.store.terms_postings
        m.store.terms_postings = lambda ts, *a: (read.append(list(ts)), terms_postings(ts, *a))[1]  # type: ignore[method-assign]
        new = rare_name_records(m.store, asked)
        assert {t: v.tolist() for t, v in new.items()} == {t: v.tolist() for t, v in old.items()}
        assert set(new) == {"@zed", "@anna_lee"}  # Caroline speaks every other turn: too common to tell any apart
        assert not any(t.endswith("caroline") for ts in read for t in ts), read  # its postings were never read


def _archived_oracle(m: graphmem.Memory) -> list[int]:
    """The archived records replayed from every archive and revive event."""
    from graphmem.store.common.events import STATE_OPS, archived_from
    return sorted(archived_from(m.store.record_events(STATE_OPS)))


def _fresh_archived(path: Path) -> tuple[list[int], list[int], list[str]]:
    """A read-only process's archived records, the oracle's, and the queries it made for them."""
    with graphmem.open(path, read_only=True) as m:
        seen = _queries(m)
        ids = [int(i) for i in m.store.archived_record_ids()]
        asked = list(seen)
        return ids, _archived_oracle(m), asked


def _replayed_all(queries: list[str]) -> bool:
    return any("e.op IN" in q for q in queries)


def _read_later(queries: list[str]) -> bool:
    return any("e.id >" in q for q in queries)


def test_a_fresh_process_reads_the_archived_records_from_meta_and_only_the_events_after_it(store_path: Path) -> None:
    from graphmem.model.times import now_us
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(12, 0))
        assert m.store.archived_record_ids().tolist() == []
        with m.store.transaction():
            m.store.add_record_event("archive", [1, 2, 3, 5, 9], {}, now_us())
            m.store.add_record_event("packed", [4], {}, now_us())
            m.store.add_record_event("revive", [2], {}, now_us())
            m.store.add_record_event("searched", [4, 6], {}, now_us())
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [1, 3, 5, 9]
    assert not _replayed_all(asked) and not _read_later(asked)  # the keys were current: no event read
    # a graphmem that does not keep the keys writes events: they are read after the keys, never lost
    with graphmem.open(store_path) as m, m.store.transaction():
        top = m.store.next_record_event_id()
        for i, (op, recs) in enumerate((("archive", "[7, 8]"), ("packed", "[1]"), ("revive", "[3, 8]"))):
            m.store._q(f"CREATE (:RecordEvent {{id: {top + i}, op: '{op}', recs: '{recs}', detail: '{{}}', "
                       "recorded_at: 1})")
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [1, 5, 7, 9]
    assert _read_later(asked) and not _replayed_all(asked)
    # the next event written here brings the keys up to date again
    with graphmem.open(store_path) as m, m.store.transaction():
        m.store.add_record_event("packed", [5], {}, now_us())
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [1, 5, 7, 9] and not _read_later(asked) and not _replayed_all(asked)


@pytest.mark.parametrize("state", [None, "not json", "[3]", "[99, [[1, 2]]]", "[0, [[\"a\", 2]]]"])
def test_archive_keys_missing_or_out_of_step_are_replayed_from_the_events_and_written_again(
        store_path: Path, state: str | None) -> None:
    from graphmem.model.times import now_us
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(6, 0))
        with m.store.transaction():
            m.store.add_record_event("archive", [2, 3, 4], {}, now_us())
            m.store.add_record_event("revive", [3], {}, now_us())
        with m.store.transaction():  # what a store written before the keys existed, or a damaged one, holds
            if state is None:
                m.store._q("MATCH (k:Meta) WHERE k.key = 'archive_state' DELETE k")
            else:
                m.store._set_meta("archive_state", state)
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [2, 4] and _replayed_all(asked)
    with graphmem.open(store_path) as m, m.store.transaction():
        m.store.add_record_event("searched", [1], {}, now_us())
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [2, 4] and not _replayed_all(asked) and not _read_later(asked)


def test_an_archive_taken_back_leaves_the_keys_as_they_were(store_path: Path) -> None:
    from graphmem.model.times import now_us
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(6, 0))
        with m.store.transaction():
            m.store.add_record_event("archive", [1, 2], {}, now_us())
        with pytest.raises(RuntimeError), m.store.transaction():
            m.store.add_record_event("revive", [1], {}, now_us())
            m.store.add_record_event("archive", [5, 6], {}, now_us())
            raise RuntimeError("taken back")
        assert m.store.archived_record_ids().tolist() == [1, 2]
        with m.store.transaction():
            m.store.add_record_event("archive", [4], {}, now_us())
        assert m.store.archived_record_ids().tolist() == [1, 2, 4]
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [1, 2, 4] and not _replayed_all(asked) and not _read_later(asked)


def test_rebuild_checks_the_archive_keys_and_makes_them_again(store_path: Path) -> None:
    from graphmem.model.times import now_us
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(8, 0))
        with m.store.transaction():
            m.store.add_record_event("archive", [1, 2, 6], {}, now_us())
            m.store.add_record_event("packed", [3], {}, now_us())
        assert [p["code"] for p in m.rebuild(check=True).problems] == []
        with m.store.transaction():  # keys that hold together but say otherwise than the events (a bug's)
            m.store._set_meta("archive_state", "[2, [[7, 7]]]")
        m.store.forget_record_events()
        assert m.store.archived_record_ids().tolist() == [7]
        assert [p["code"] for p in m.rebuild(check=True).problems] == ["archive_state_drift"]
        assert [p["code"] for p in m.rebuild().problems] == []
        assert [p["code"] for p in m.rebuild(check=True).problems] == []
    ids, oracle, asked = _fresh_archived(store_path)
    assert ids == oracle == [1, 2, 6] and not _replayed_all(asked) and not _read_later(asked)
