"""Engines chosen by the store address (docs/engines.md): a folder is Kuzu's (or the engine whose database
the folder holds), ``ladybug:PATH`` LadybugDB's, ``postgresql://...`` PostgreSQL's; ``graphmem info`` and
``init`` name the engine; ``graphmem copy`` moves a whole store between engines, its export unchanged."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import TEST_ENGINE, Run, assert_no_store, cli, one_clear_line, runner

import graphmem
from graphmem.cli import app
from graphmem.config import StoreAddress, store_address
from graphmem.errors import BadInput
from graphmem.store import SCHEMA_VERSION

# the engines a copy goes between; PostgreSQL joins when its engine is in this build (the cluster comes from
# the postgres_cluster fixture, tests/conftest.py)
HAS_POSTGRES = importlib.util.find_spec("graphmem.store.postgres") is not None
COPY_ENGINES = ["kuzu", "ladybug", *(["postgresql"] if HAS_POSTGRES else [])]
PREFIX = {"kuzu": "kuzu:", "ladybug": "ladybug:"}


def PG_SCHEMA_VERSION() -> int:  # noqa: N802  (a PostgreSQL store's layout version: its own numbering)
    from graphmem.store.postgres.base import SCHEMA_VERSION as PG
    return PG


def address(engine: str, folder: Path, pg_url: str | None = None, request: pytest.FixtureRequest | None = None) -> str:
    if engine == "postgresql":
        if pg_url is None:  # another schema of the session's cluster
            assert request is not None
            pg_url = request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12])
        return pg_url
    return PREFIX[engine] + str(folder)


def export_of(store: str) -> str:
    """The store's export, from a process of its own (this one holds the run's engine only)."""
    r = subprocess.run([sys.executable, "-c", "from graphmem.cli import main; main()", "--store", store, "export"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


# addresses -----------------------------------------------------------------------------------------


def test_a_folder_is_kuzu_unless_named_or_made_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_ENGINE", raising=False)
    assert store_address(tmp_path / "new") == StoreAddress("kuzu", tmp_path / "new")
    assert store_address(f"ladybug:{tmp_path}/x") == StoreAddress("ladybug", tmp_path / "x")
    assert store_address(f"kuzu:{tmp_path}/x").engine == "kuzu"
    pg = store_address("postgresql://me@db.example/graphmem")
    assert (pg.engine, pg.folder, pg.display) == ("postgresql", None, "postgresql://me@db.example/graphmem")
    (tmp_path / "lb").mkdir()
    (tmp_path / "lb" / "graph.lbug").write_text("")
    assert store_address(tmp_path / "lb").engine == "ladybug"  # the folder says which engine made it
    assert store_address(str(tmp_path / "lb")).display == f"ladybug:{tmp_path / 'lb'}"
    with pytest.raises(BadInput, match="made by LadybugDB, not Kuzu"):
        store_address(f"kuzu:{tmp_path / 'lb'}")
    with pytest.raises(BadInput, match="expected a folder after 'ladybug:'"):
        store_address("ladybug:")
    monkeypatch.setenv("GRAPHMEM_ENGINE", "ladybug")
    assert store_address(tmp_path / "new").engine == "ladybug"
    monkeypatch.setenv("GRAPHMEM_ENGINE", "sqlite")
    with pytest.raises(BadInput, match="bad GRAPHMEM_ENGINE 'sqlite'"):
        store_address(tmp_path / "new")


def test_store_env_takes_an_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_STORE", f"ladybug:{tmp_path}/env-store")
    assert store_address(None) == StoreAddress("ladybug", tmp_path / "env-store")


@pytest.mark.skipif(HAS_POSTGRES, reason="this build has the PostgreSQL engine")
def test_postgresql_without_its_engine_is_one_line(tmp_path: Path) -> None:
    r = runner.invoke(app, ["--store", "postgresql://localhost/none", "info"])
    one_clear_line(Run(r), 3, ["PostgreSQL engine"], ["not in this build"])


@pytest.mark.engine("kuzu", "ladybug")  # the engine of a new folder (GRAPHMEM_ENGINE): the embedded engines
def test_a_store_opens_with_its_own_engine_whatever_the_default(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with graphmem.open(tmp_path / "s", create=True) as m:  # the run's engine (GRAPHMEM_ENGINE)
        m.add_entity("Tool", "Kuzu")
        made_by = m.store.engine
    assert made_by == TEST_ENGINE
    monkeypatch.setenv("GRAPHMEM_ENGINE", "kuzu" if TEST_ENGINE == "ladybug" else "ladybug")
    with graphmem.open(tmp_path / "s", read_only=True) as m:
        assert m.store.engine == made_by and m.entity("kuzu").ref == "tool:kuzu"


@pytest.mark.folder_store("a Kuzu and a LadybugDB store, in a child process: the refusal under test")
def test_one_process_cannot_load_both_embedded_engines(tmp_path: Path) -> None:
    """Kuzu's and LadybugDB's modules register the same native types: the second open is one clear error."""
    code = ("import graphmem, sys\n"
            "graphmem.open(sys.argv[1], create=True).close()\n"
            "try:\n    graphmem.open(sys.argv[2], create=True)\n"
            "except graphmem.StoreUnavailable as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code, f"kuzu:{tmp_path}/k", f"ladybug:{tmp_path}/l"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "cannot open a LadybugDB store: this process has loaded Kuzu" in out.stdout


# info and init -------------------------------------------------------------------------------------


def test_info_and_init_name_the_engine(atlas: graphmem.Memory, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    atlas.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    atlas.ingest(['{"text": "Atlas moved to Kuzu.", "ts": "2024-02-01"}'])
    info = atlas.info()
    version = atlas.store.engine_version()
    assert (info.engine, info.engine_version, info.entities, info.statements, info.records) == (
        TEST_ENGINE, version, 6, 1, 1)
    assert info.layout == (PG_SCHEMA_VERSION() if TEST_ENGINE == "postgresql" else SCHEMA_VERSION)
    store = atlas.address.display
    atlas.close()
    r = runner.invoke(app, ["--store", store, "info", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == {"schema": "graphmem.info.v1", "store": atlas.address.url or str(atlas.path), "statements": 1, "entities": 6,
                   "records": 1, "engine": TEST_ENGINE, "engine_version": version, "layout": info.layout,
                   "address": store}
    human = runner.invoke(app, ["--store", store, "info"]).stdout
    name = {"kuzu": "Kuzu", "ladybug": "LadybugDB", "postgresql": "PostgreSQL"}[TEST_ENGINE]
    assert f"engine:     {name} {version}, layout {info.layout}" in human and "records:    1" in human
    r = runner.invoke(app, ["--store", address(TEST_ENGINE, tmp_path / "fresh", request=request), "init"])
    assert r.exit_code == 0 and f"({name} {version}, layout {info.layout}; 0 entities, 0 statements)" in r.stdout


def test_info_on_a_missing_store_is_exit_3(new_store: Callable[[str], Path]) -> None:
    nothing = new_store("nothing")
    one_clear_line(cli(nothing, "info"), 3, [str(nothing)], ["graphmem init"])
    assert_no_store(nothing)


# copy ----------------------------------------------------------------------------------------------


@pytest.fixture
def rich_store(demo: graphmem.Memory) -> str:
    """The demo store, plus text that needs escaping everywhere (quotes, backslashes, control characters)."""
    demo.assert_("Atlas", "status", "paused", valid_from="2026-01-01", sources=["rec:1"])
    demo.add_entity("Tool", 'Odd "quoted" \\ tool', description="tab\there\nnewline \x01 and é")
    demo.ingest(['{"text": "a \\"quote\\", a backslash \\\\ and a bell \\u0007", "ts": "2026-02-01"}'])
    where = demo.address.display
    demo.close()
    return where


@pytest.mark.parametrize("dest_engine", COPY_ENGINES)
def test_copy_keeps_the_export_both_ways(rich_store: str, tmp_path: Path, dest_engine: str,
                                         request: pytest.FixtureRequest) -> None:
    before = export_of(rich_store)
    there = address(dest_engine, tmp_path / "there", request=request)  # a schema of its own on PostgreSQL
    r = runner.invoke(app, ["copy", rich_store, there, "--json"])
    assert r.exit_code == 0, (r.stderr, r.stdout, rich_store, there)
    doc = json.loads(r.stdout)
    assert (doc["source_engine"], doc["dest_engine"], doc["dest"]) == (TEST_ENGINE, dest_engine,
                                                                       store_address(there).display)
    assert doc["entities"] == 49 and doc["statements"] == 197 and doc["retractions"] == 1 and doc["records"] == 47
    assert export_of(there) == before  # fact ids, record ids and record times kept
    back = address(TEST_ENGINE, tmp_path / "back", request=request)
    r = runner.invoke(app, ["copy", there, back])
    assert r.exit_code == 0, r.stderr
    assert f"to {store_address(back).display} ({TEST_ENGINE} " in " ".join(r.stdout.split())  # lines wrap
    assert export_of(back) == before
    with graphmem.open(back, read_only=True) as m:  # what was copied reads the same
        assert [f.object for f in m.current("atlas").facts if f.predicate == "status"] == ["paused"]
        assert m.search("backslash").results[0].ref == "rec:47"


def test_copy_refuses_a_destination_that_holds_a_store(rich_store: str, new_store: Callable[[str], Path]) -> None:
    other = new_store("other")
    with graphmem.open(other, create=True) as m:
        m.add_entity("Tool", "SQLite")
        kept = m.export()
    # a folder named with the other embedded engine is refused too
    named = [f"{PREFIX['ladybug' if TEST_ENGINE == 'kuzu' else 'kuzu']}{other}"] if isinstance(other, Path) else []
    for dest in (str(other), *named):
        r = Run(runner.invoke(app, ["copy", rich_store, dest]))
        assert r.code == 2 and len(r.err_lines) == 1, r
        assert str(other) in r.err_lines[0] and ("holds a store already" in r.err_lines[0]
                                                   or "made by" in r.err_lines[0])
    with graphmem.open(other, read_only=True) as m:
        assert m.export() == kept
    one_clear_line(Run(runner.invoke(app, ["copy", rich_store, rich_store])), 2, [rich_store], ["another place"])
    none, n2 = new_store("none"), new_store("n2")
    one_clear_line(Run(runner.invoke(app, ["copy", str(none), str(n2)])), 3, [str(none)], ["expected"])
    assert_no_store(n2)


def test_free_text_that_needs_escaping_reads_back_whole(atlas: graphmem.Memory) -> None:
    """The grouped statement read writes free text as JSON in the engine's own query (docs/engines.md): quotes,
    backslashes and control characters come back exactly, and the stored logs match what it reads."""
    text = 'a "quoted" \\ back\\slash\ttab\nline \x01 bell \x07 é'
    atlas.assert_("Atlas", "summary", text, valid_from="2024-01-01")
    fact = atlas.assert_("Atlas", "summary", "short", valid_from="2024-02-01").refs[0]
    atlas.retract(fact, reason='wrong "one" \\ \n again')
    logs = dict(atlas.store.subject_logs(refs=["project:atlas"]))
    rows = json.loads(logs["project:atlas"])
    assert [r[3] for r in rows] == [text, "short"] and rows[1][9] == 'wrong "one" \\ \n again'
    assert [f.object for f in atlas.current("Atlas").facts if f.predicate == "summary"] == [text]
    report = atlas.rebuild(check=True)
    assert report.ok and report.drift == (), report.to_dict()
