"""The large-import path (statements streamed to a bulk file, views read back grouped by Kuzu) gives
what the small path gives: the same statements, ids, retractions and views."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphmem
from graphmem import bulk, importer, memory


@pytest.fixture
def exported(demo: graphmem.Memory, tmp_path: Path) -> Path:
    f = tmp_path / "demo.jsonl"
    f.write_text(demo.export(), encoding="utf-8")
    return f


def _state(m: graphmem.Memory) -> tuple[str, dict[str, tuple[str, str, str]]]:
    subjects = {r: (n, log, view) for r, n, log, view in m.store._q("MATCH (s:Subject) RETURN s.ref, s.name, s.log, s.view")}
    return m.export(), subjects


@pytest.mark.parametrize("reload_all", [True, False])
def test_large_import_equals_small_import(exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          reload_all: bool) -> None:
    small, large = graphmem.open(tmp_path / "small"), graphmem.open(tmp_path / "large")
    if not reload_all:  # stores with statements already, and few touched subjects: written one by one
        for m in (small, large):
            m.add_entity("Project", "Seed")
            m.assert_("Seed", "status", "active", valid_from="2020-01-01", recorded_at="2020-01-01T00:00:00Z")
    assert small.import_jsonl(exported).written
    monkeypatch.setattr(importer, "BULK_LINES", 1)  # every file is large
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)  # and streams its statements to a bulk file
    monkeypatch.setattr(importer, "_RELOAD_SUBJECTS", 0 if reload_all else 10_000)
    real = bulk.forked_map
    monkeypatch.setattr(memory, "forked_map", lambda fn, items: real(fn, items, min_items=0))  # two processes
    report = large.import_jsonl(exported)
    n = sum(1 for line in exported.read_text(encoding="utf-8").splitlines() if json.loads(line)["op"] in ("assert", "end"))
    assert report.written and report.statements == n
    assert _state(large)[1] == _state(small)[1]
    assert large.export() == small.export()
    assert large.rebuild(check=True).drift == ()
    assert not list((tmp_path / "large" / "tmp").glob("*"))  # bulk files removed


def test_large_import_retracts_facts_of_the_same_file_and_of_the_store(exported: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    m = graphmem.open(tmp_path / "s")
    assert m.import_jsonl(exported).written
    first = m.store.next_fact_id()
    lines = [
        {"op": "assert", "subject": "project:atlas", "predicate": "status", "object": "paused",
         "valid_from": "2026-01-05", "recorded_at": "2026-01-06T00:00:00Z", "sources": ["https://example.org/a"]},
        {"op": "assert", "subject": "project:atlas", "predicate": "status", "object": "active",
         "valid_from": "2026-01-07", "recorded_at": "2026-01-08T00:00:00Z", "sources": ["https://example.org/b"]},
        {"op": "retract", "fact": f"fact:{first + 1}", "at": "2026-01-09T00:00:00Z", "reason": "typo"},
        {"op": "retract", "fact": "fact:1", "at": "2026-01-09T00:00:00Z"},
        {"op": "retract", "fact": f"fact:{first + 1}", "at": "2026-01-10T00:00:00Z"},
    ]
    f = tmp_path / "more.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n" + "\n" * 500, encoding="utf-8")
    report = m.import_jsonl(f)
    assert [e[0] for e in report.errors] == [5]  # the second retraction of the same fact
    assert "already retracted" in report.errors[0][1]
    assert m.why(f"fact:{first + 1}").statement.retracted_at is not None
    assert m.why("fact:1").statement.retracted_at is not None
    now = m.current("project:atlas", predicate="status").to_json()["facts"]
    assert [x["object"]["value"] for x in now] == ["paused"]
    assert m.rebuild(check=True).drift == ()


def test_a_strict_large_import_with_an_error_writes_nothing(exported: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    m = graphmem.open(tmp_path / "s")
    f = tmp_path / "bad.jsonl"
    f.write_text(exported.read_text(encoding="utf-8") + '{"op": "assert", "subject": "nobody"}\n', encoding="utf-8")
    report = m.import_jsonl(f, strict=True)
    assert not report.written and report.statements == 0
    assert m.store.statement_count() == 0 and m.store.entity_count() == 0
    assert not list((tmp_path / "s" / "tmp").glob("*"))
