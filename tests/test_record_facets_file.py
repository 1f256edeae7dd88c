"""The records' facets kept with an embedded store (``store/kuzu/recordfacets.py``): what a fresh process
reads from the file and the records written after it is what the ``Record`` table gives, after more
records, a damaged file, records removed, and never written by a read-only process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import facets_from_table, same_facets

import graphmem

pytestmark = pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' file beside the database


def _records(n: int, start: int) -> list[dict[str, Any]]:
    return [{"text": f"turn {start + i} about the graph", "kind": ("message", "note", "doc")[i % 3],
             "source": None if i % 4 == 0 else f"chat:s{(start + i) % 5}#m{start + i}",
             "scope": None if i % 3 else f"agent:{i % 2}", "ts": f"2024-0{1 + i % 9}-1{i % 10}T10:00:0{i % 10}Z"}
            for i in range(n)]


def _files(m: graphmem.Memory) -> list[Path]:
    return sorted(Path(m.store.path).glob("record-facets-*.bin"))  # type: ignore[attr-defined]


@pytest.fixture
def keep_after_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.kuzu import recordfacets
    monkeypatch.setattr(recordfacets, "KEEP_AFTER", 1)


def test_a_fresh_process_reads_the_file_and_the_records_after_it(store_path: Path, keep_after_one: None) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(30, 0))
        assert m.store.meta("record_facets") is None  # type: ignore[attr-defined]
        m.store.record_facets()
    for round_ in range(3):  # each process reads the file, adds records, and writes the file again at close
        with graphmem.open(store_path) as m:
            named = m.store.meta("record_facets")  # type: ignore[attr-defined]
            assert named and [p.name for p in _files(m)] == [named]
            read = m.store.record_facets()
            assert m.store._facets_stored == 30 + 7 * round_  # type: ignore[attr-defined]
            assert same_facets(read, facets_from_table(m))
            m.ingest(_records(7, 100 * (round_ + 1)))
            assert same_facets(m.store.record_facets(), facets_from_table(m))
        with graphmem.open(store_path, read_only=True) as m:  # the records after the file, from the table
            assert same_facets(m.store.record_facets(), facets_from_table(m))
    with graphmem.open(store_path, read_only=True) as m:
        m.store.record_facets()
        written = _files(m)
    with graphmem.open(store_path, read_only=True) as m:
        assert _files(m) == written  # a read-only process writes none


def test_a_damaged_or_missing_file_counts_as_none(store_path: Path, keep_after_one: None) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(20, 0))
        m.store.record_facets()
    with graphmem.open(store_path, read_only=True) as m:
        (path,) = _files(m)
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # one byte of the columns changed: the name's hash no longer agrees
    path.write_bytes(bytes(blob))
    with graphmem.open(store_path, read_only=True) as m:
        assert m.store._stored_record_facets() is None  # type: ignore[attr-defined]
        assert same_facets(m.store.record_facets(), facets_from_table(m))
    path.unlink()
    with graphmem.open(store_path) as m:
        assert same_facets(m.store.record_facets(), facets_from_table(m))
    with graphmem.open(store_path, read_only=True) as m:  # the writer above wrote a whole file again
        assert m.store._stored_record_facets() is not None and same_facets(m.store.record_facets(), facets_from_table(m))  # type: ignore[attr-defined]


def test_records_removed_since_the_file_make_it_count_as_none(store_path: Path, keep_after_one: None) -> None:
    """A rollback of a bulk write removes records the file may hold (``Repair.roll_back`` also stops naming
    it): the count of records up to the file's last id no longer agrees, so the table is read."""
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(25, 0))
        m.store.record_facets()
    with graphmem.open(store_path) as m:
        m.store._q("MATCH (r:Record) WHERE r.id >= 20 DETACH DELETE r")  # type: ignore[attr-defined]
    with graphmem.open(store_path, read_only=True) as m:
        # no record was given after the file (the counter says so), so the count of every record is checked
        assert m.store.meta("next_record") == "26"  # type: ignore[attr-defined]
        assert m.store._stored_record_facets() is None  # type: ignore[attr-defined]
        facets = m.store.record_facets()
        assert len(facets.ids) == 19 and same_facets(facets, facets_from_table(m))


def test_search_answers_alike_from_the_file(store_path: Path, keep_after_one: None) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(_records(40, 0))
        fresh = [h.ref for h in m.search("graph turn", limit=10, track=False).results]
    with graphmem.open(store_path, read_only=True) as m:
        assert m.store.meta("record_facets")  # type: ignore[attr-defined]
        assert [h.ref for h in m.search("graph turn", limit=10, track=False).results] == fresh
