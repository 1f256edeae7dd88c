"""A store's history crosses an export and a copy whole: an entity renamed since it was made keeps its
ref through export and import (the export names it), and ``graphmem copy`` carries the entity events
(renames, merges: a merged entity's name still finds the entity it was merged into) and the record
events (use, archive: archived records stay archived) with their ids and times (docs/engines.md)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

from helpers import cli, jl, one_clear_line

import graphmem


def _later(days: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).isoformat()


def _history(new_store: Callable[[str], Path]) -> Path:
    """A store with a rename, a merge, record use and an archived record."""
    src = new_store("src")
    with graphmem.open(src, create=True) as m:
        m.add_entity("Project", "Atlas")
        m.add_entity("Project", "Atlas Two")
        m.add_entity("Tool", "Kuzu")
        m.assert_("Atlas Two", "uses", "Kuzu", valid_from="2025-01-01")
        m.ingest(jl({"text": "Atlas runs on Kuzu now.", "ts": "2025-02-01", "importance": 0.9},
                    {"text": "lunch menu for the week", "ts": "2025-02-01", "kind": "note", "importance": 0.05}))
        m.rename_entity("tool:kuzu", "KuzuDB")
        m.merge_entities("project:atlas", "project:atlas-two")
        assert [h.ref for h in m.search("kuzu").results] == ["rec:1"]  # a use event
        assert m.lifecycle(at=_later(4000)).counts["archived"] >= 1
    return src


def _state(address: Path) -> tuple[object, ...]:
    with graphmem.open(address, read_only=True) as m:
        return (m.export(), [e.to_dict() for e in m.store.entity_events()], m.store.record_events(),
                sorted(m.store.archived_at()), m.current("Atlas Two").to_dict()["subject"]["ref"],
                [f["object"]["ref"] for f in m.current("Atlas").to_dict()["facts"]])


def test_a_renamed_entity_keeps_its_ref_through_export_and_import(new_store: Callable[[str], Path],
                                                                    tmp_path: Path) -> None:
    src = new_store("src")
    with graphmem.open(src, create=True) as m:
        m.add_entity("Tool", "Kuzu")
        m.add_entity("Project", "Atlas")
        m.assert_("Atlas", "uses", "Kuzu", valid_from="2025-01-01")
        m.rename_entity("tool:kuzu", "KuzuDB")
        text = m.export()
        lines = [json.loads(x) for x in text.splitlines()]
        assert {"op": "entity", "type": "Tool", "name": "KuzuDB", "aliases": [], "description": "",
                "ref": "tool:kuzu"} in lines
        assert all("ref" not in x for x in lines if x["op"] == "entity" and x["name"] == "Atlas")
        (tmp_path / "export.jsonl").write_text(text, "utf-8")
        again = m.import_jsonl(tmp_path / "export.jsonl")  # into the store it came from: nothing new
        assert again.ok and m.export() == text and m.store.entity_count() == 2
    with graphmem.open(new_store("dst"), create=True) as m:
        report = m.import_jsonl(tmp_path / "export.jsonl", strict=True)
        assert report.ok, report.errors
        assert m.export() == text
        assert [f["object"]["ref"] for f in m.current("Atlas").to_dict()["facts"]] == ["tool:kuzu"]


def test_a_bad_ref_on_an_entity_line_is_one_line_and_nothing_written(new_store: Callable[[str], Path],
                                                                       tmp_path: Path) -> None:
    store = new_store("s")
    assert cli(store, "init").code == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"op": "entity", "type": "Tool", "name": "Kuzu", "ref": "project:kuzu"}) + "\n", "utf-8")
    r = cli(store, "import", str(bad), "--strict")
    one_clear_line(r, 2, ["'project:kuzu'", "Tool 'Kuzu'"], ["expected 'tool:'"])
    with graphmem.open(store, read_only=True) as m:
        assert m.store.entity_count() == 0


def test_copy_carries_renames_merges_and_archived_records(new_store: Callable[[str], Path]) -> None:
    src = _history(new_store)
    before = _state(src)
    report = graphmem.copy_store(src, new_store("dst"))
    assert report.events == len(before[1]) + len(before[2]) and report.events >= 4
    after = _state(new_store("dst"))
    assert after == before
    assert after[4] == "project:atlas"  # the merged entity's name still finds the one it was merged into
    assert after[3]  # the archived record is still archived
    with graphmem.open(new_store("dst"), read_only=True) as m:
        assert [h.ref for h in m.search("lunch").results] == []
        assert [h.ref for h in m.search("lunch", include_archived=True).results] == ["rec:2"]
