"""graphmem migrate: stores of each earlier layout (made by tests/layouts.py) upgraded in place keep
their export, their view, their fact ids, their evidence edges and their search; an old store is
refused with the way forward; a migration killed part-way is finished by running it again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kuzu
import pytest
from helpers import cli
from layouts import write_old_layout

import graphmem
from graphmem.store import SCHEMA_VERSION

AWKWARD = ["0001-01-01T00:00:00Z", "1850-03-01T00:00:00.000250Z", "1969-12-31T23:59:59.999500Z",
           "1969-12-31T23:59:58.000001Z", "1970-01-01T00:00:00.500000Z", "2021-01-09T00:00:00.000001Z"]
QUERIES = ["kuzu", "migration latency", "ledger budget"]
STEPS = ["records_keyed_by_ref", "statement_times_as_microseconds", "entity_events", "record_events", "stored_lexicon",
         "statement_scopes", "view_facets"]


@pytest.fixture(scope="module")
def source(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of this version with what the layouts differ in: statement times before 1970 and with
    microseconds, ended and retracted statements, evidence records with MENTIONS edges."""
    path = tmp_path_factory.mktemp("migrate") / "source"
    shutil.copytree(demo_dir, path)
    with graphmem.open(path) as m:
        m.add_entity("Project", "Old Works", aliases=["oldw"])
        for i, t in enumerate(AWKWARD):
            m.add_entity("Tool", f"Relic {i}")
            m.assert_("Old Works", "uses", f"Relic {i}", valid_from=t, recorded_at="2000-01-01T00:00:00.000001Z")
        m.end("Old Works", "uses", "Relic 2", at="1969-12-31T23:59:59.999900Z")
        m.retract(m.assert_("Old Works", "status", "paused", valid_from="1969-06-01").to_dict()["fact"]["fact"], "typo")
        assert m.extract_pending(apply=True).to_dict()["records"]
        # extraction gives its statements the scope of their record; the layouts before 7 hold no scopes
        m.store._q("MATCH (a:Assertion) SET a.scope = NULL")
        m.rebuild()
    return path


def _state(path: Path) -> dict[str, Any]:
    """Everything a migration must keep, as this version reads it."""
    with graphmem.open(path) as m:
        refs = sorted(e.ref for e in m.store.all_entities())
        return {
            "export": m.export_doc("jsonl", None).text,
            "views": {r: [m.current(r, as_of=t).to_dict()["facts"] for t in ("1969-12-31T23:59:59.999600Z", "2025-05-01")]
                      for r in refs},
            "timelines": {r: m.timeline(r).to_dict()["intervals"] for r in refs},
            "facts": [s.id for s in m.store.all_statements()],
            "mentions": m.store.all_mentions(),
            "search": [m.search(q, limit=20).to_dict()["results"] for q in QUERIES],
            "lint": m.lint().to_dict()["counts"],
            "next": (m.store.next_fact_id(), m.store.next_record_id()),
        }


def _layout(path: Path) -> int:
    db = kuzu.Database(str(path / "graph.kuzu"), read_only=True)
    try:
        return int(kuzu.Connection(db).execute("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value").get_all()[0][0])
    finally:
        db.close()


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6, 7])
def test_migrate_keeps_everything(source: Path, tmp_path: Path, version: int) -> None:
    expected = _state(source)
    old = tmp_path / "old"
    write_old_layout(source, old, version)

    refused = cli(old, "current", "Old Works")
    assert refused.code == 3 and f"layout {version}" in refused.err and "migrate" in refused.err
    assert len(refused.err.strip().splitlines()) == 1 and "Traceback" not in refused.err

    r = cli(old, "migrate", "--json")
    assert r.code == 0, r.err
    doc = r.json()
    assert (doc["from"], doc["to"], doc["migrated"], doc["steps"]) == (version, SCHEMA_VERSION, True, STEPS[version - 1:])
    backup = Path(doc["backup"])
    assert backup.name == f"old.layout{version}-backup" and _layout(backup) == version  # the store as it was
    assert _layout(old) == SCHEMA_VERSION and not (old / "migrating.json").exists()

    assert _state(old) == expected
    with graphmem.open(old) as m:
        assert m.rebuild(check=True).ok
        # the migration stored the linking lexicon (LEXICON_LAYOUT)
        assert m.store.lexicon_parts([0]) and not m.store.lexicon_changes()
        m.assert_("Old Works", "status", "active", valid_from="2026-01-01")  # it takes writes as any store does
        m.ingest([json.dumps({"id": "after-migrate", "ts": "2026-03-01T00:00:00Z", "kind": "note",
                              "text": "Old Works now runs on zeppelins"}).encode()])
        assert [h.ref for h in m.search("zeppelins").results] == [f"rec:{expected['next'][1]}"]
        assert m.current("Old Works", predicate="status").to_dict()["facts"][0]["object"]["value"] == "active"

    again = cli(old, "migrate", "--json")  # a current store is left alone
    assert again.code == 0 and not again.json()["migrated"] and again.json()["backup"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", f"old.layout{version}-backup"]


_KILLED_IN_STEP = """
import os, signal, sys
from graphmem.store.kuzu import migrations
def killed(conn):
    os.kill(os.getpid(), signal.SIGKILL)
migrations.MIGRATIONS[2] = killed  # the first step is done and checkpointed; the second never ends
from graphmem.cli import main
sys.argv = ["graphmem", *sys.argv[1:]]
main()
"""


def test_a_killed_migration_is_finished_by_running_it_again(source: Path, tmp_path: Path) -> None:
    expected = _state(source)
    old = tmp_path / "old"
    write_old_layout(source, old, 1)
    killed = subprocess.run([sys.executable, "-c", _KILLED_IN_STEP, "--store", str(old), "migrate"],
                            capture_output=True, timeout=300)
    assert killed.returncode == -9 and _layout(old) == 2 and (old / "migrating.json").exists()

    refused = cli(old, "search", "kuzu")
    assert refused.code == 3 and "interrupted" in refused.err and "migrate" in refused.err

    r = cli(old, "migrate", "--json")
    assert r.code == 0, r.err
    doc = r.json()
    assert doc["restarted"] and doc["from"] == 1 and doc["steps"] == STEPS
    assert _state(old) == expected and _layout(Path(doc["backup"])) == 1


def test_a_store_of_a_newer_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    graphmem.open(path, create=True).close()
    db = kuzu.Database(str(path / "graph.kuzu"))
    kuzu.Connection(db).execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = '99'")
    db.close()
    for args in (["export"], ["migrate"]):
        r = cli(path, *args)
        assert r.code == 3 and "layout 99" in r.err and "upgrade graphmem" in r.err
    assert not list(tmp_path.glob("*backup*"))


def test_migrate_needs_a_store(tmp_path: Path) -> None:
    r = cli(tmp_path / "nothing", "migrate")
    assert r.code == 3 and "no store" in r.err and not (tmp_path / "nothing").exists()


def test_a_second_migrate_is_refused_while_one_runs(source: Path, tmp_path: Path) -> None:
    import fcntl
    old = tmp_path / "old"
    write_old_layout(source, old, 2)
    with open(old / "migrate.lock", "a") as held:  # what a running migrate holds
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = cli(old, "migrate")
        assert r.code == 3 and "being migrated by another process" in r.err
    assert not list(tmp_path.glob("*backup*")) and _layout(old) == 2
    assert cli(old, "migrate").code == 0 and _layout(old) == SCHEMA_VERSION
