"""Entities, assertions and the view through the Python API."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DB_FILE

import graphmem
from graphmem.errors import AmbiguousEntity, BadInput, TypeMismatch, UnknownEntity, UnknownPredicate
from graphmem.memory import slug


@pytest.mark.parametrize(("name", "expected"), [
    ("Ada Lovelace", "ada-lovelace"), ("  Kuzu  DB!! ", "kuzu-db"), ("C++ / Rust", "c-rust"), ("Zürich", "zürich"),
])
def test_slug(name: str, expected: str) -> None:
    assert slug(name) == expected


def test_entity_refs_and_resolution(atlas: graphmem.Memory) -> None:
    assert atlas.entity("atlas-app").ref == "project:atlas"
    assert atlas.entity("ADA").ref == "person:ada-lovelace"
    assert atlas.entity("person:ada-lovelace").name == "Ada Lovelace"
    with pytest.raises(UnknownEntity, match="atlaz"):
        atlas.entity("atlaz")


def test_ambiguous_name_lists_candidates(atlas: graphmem.Memory) -> None:
    atlas.add_entity("Concept", "Atlas")
    with pytest.raises(AmbiguousEntity, match="concept:atlas.*project:atlas"):
        atlas.entity("Atlas")
    assert atlas.entity("project:atlas").type == "Project"


def test_duplicate_entity_is_bad_input(atlas: graphmem.Memory) -> None:
    with pytest.raises(BadInput, match="already exists"):
        atlas.add_entity("Project", "atlas")


def test_assert_supersede_and_current(atlas: graphmem.Memory) -> None:
    atlas.assert_("atlas", "status", "active", valid_from="2025-01-01")
    atlas.assert_("atlas", "status", "paused", valid_from="2025-06-01")
    now = atlas.current("atlas", predicate="status").facts
    assert [f.object for f in now] == ["paused"]
    then = atlas.current("atlas", predicate="status", as_of="2025-03-01").facts
    assert [(f.object, f.valid_to) for f in then] == [("active", now[0].valid_from)]


def test_many_valued_and_end(atlas: graphmem.Memory) -> None:
    atlas.assert_("atlas", "uses", "sqlite", valid_from="2025-01-01")
    atlas.assert_("atlas", "uses", "kuzu", valid_from="2025-03-01")
    atlas.end("atlas", "uses", "sqlite", at="2025-04-01")
    objs = {f.object for f in atlas.current("atlas", predicate="uses").facts}
    assert objs == {"tool:kuzu"}
    objs = {f.object for f in atlas.current("atlas", predicate="uses", as_of="2025-03-15").facts}
    assert objs == {"tool:kuzu", "tool:sqlite"}


def test_end_of_nothing_is_bad_input(atlas: graphmem.Memory) -> None:
    with pytest.raises(BadInput, match="nothing holds"):
        atlas.end("atlas", "uses", "kuzu", at="2025-04-01")


def test_retract_keeps_history(atlas: graphmem.Memory) -> None:
    ok = atlas.assert_("atlas", "owner", "ada", valid_from="2024-01-01").refs[0]
    assert atlas.current("atlas", predicate="owner").facts[0].object == "person:ada-lovelace"
    atlas.retract(ok, "wrong")
    assert atlas.current("atlas", predicate="owner").facts == ()
    why = atlas.why(ok).to_dict()
    assert why["retraction"]["reason"] == "wrong"
    with pytest.raises(BadInput, match="already retracted"):
        atlas.retract(ok)


def test_conflict_reported_on_fact(atlas: graphmem.Memory) -> None:
    a = atlas.assert_("atlas", "priority", "p1", valid_from="2025-01-01").refs[0]
    b = atlas.assert_("atlas", "priority", "p2", valid_from="2025-01-01").refs[0]
    facts = atlas.current("atlas", predicate="priority").to_dict()["facts"]
    assert [f["object"]["value"] for f in facts] == ["p2"]
    assert facts[0]["assertions"] == [b] and facts[0]["conflicts"] == [a]
    codes = [i.code for i in atlas.lint().issues]
    assert "single_value_conflict" in codes


def test_cut_short_valid_to_is_a_conflict(atlas: graphmem.Memory) -> None:
    a = atlas.assert_("atlas", "status", "active", valid_from="2025-01-01", valid_to="2025-12-01").refs[0]
    b = atlas.assert_("atlas", "status", "paused", valid_from="2025-06-01").refs[0]
    ivs = atlas.timeline("atlas", predicate="status").to_dict()["intervals"]
    assert ivs[0]["assertions"] == [a] and ivs[0]["valid_to"] == "2025-06-01T00:00:00Z"
    assert ivs[0]["conflicts"] == [b]


@pytest.mark.parametrize(("args", "error", "text"), [
    (("nobody", "status", "active"), UnknownEntity, "nobody"),
    (("atlas", "flavor", "sweet"), UnknownPredicate, "flavor"),
    (("atlas", "status", "sleeping"), BadInput, "one of idea"),
    (("atlas", "uses", "ada"), TypeMismatch, "Person"),
    (("kuzu", "status", "active"), TypeMismatch, "Tool"),
    (("atlas", "deadline", "2025-02-30"), BadInput, "2025-02-30"),
])
def test_bad_assertions(atlas: graphmem.Memory, args: tuple[str, str, str], error: type, text: str) -> None:
    before = atlas.store.statement_count()
    with pytest.raises(error, match=text):
        atlas.assert_(*args)
    assert atlas.store.statement_count() == before


def test_valid_to_must_follow_valid_from(atlas: graphmem.Memory) -> None:
    with pytest.raises(BadInput, match="after valid_from"):
        atlas.assert_("atlas", "status", "active", valid_from="2025-02-01", valid_to="2025-01-01")


def test_predicate_alias_accepted(atlas: graphmem.Memory) -> None:
    ref = atlas.assert_("atlas", "built on", "kuzu").refs[0]
    assert atlas.why(ref).statement.predicate == "uses"


@pytest.mark.engine("kuzu", "ladybug")  # Cypher over the embedded engines' typed edge tables
def test_typed_edges_queryable_in_cypher(atlas: graphmem.Memory) -> None:
    atlas.assert_("atlas", "uses", "kuzu", valid_from="2025-01-01")
    rows = atlas.store.cypher("MATCH (p:Project)-[e:USES]->(t:Tool) RETURN p.ref, t.ref, e.assertions, e.valid_to")
    assert rows == [["project:atlas", "tool:kuzu", [1], None]]
    atlas.end("atlas", "uses", "kuzu", at="2025-06-01")
    rows = atlas.store.cypher("MATCH (p:Project)-[e:USES]->(t:Tool) RETURN e.valid_to")
    assert str(rows[0][0]) == "2025-06-01 00:00:00"


def test_facts_filters(atlas: graphmem.Memory) -> None:
    atlas.add_entity("Project", "Beacon")
    atlas.assert_("atlas", "uses", "kuzu", valid_from="2025-01-01")
    atlas.assert_("beacon", "uses", "kuzu", valid_from="2025-05-01")
    atlas.assert_("beacon", "status", "paused", valid_from="2025-05-01")
    users = [f.subject for f in atlas.facts(predicate="uses", object="kuzu").facts]
    assert users == ["project:atlas", "project:beacon"]
    early = [f.subject for f in atlas.facts(predicate="uses", object="kuzu", as_of="2025-02-01").facts]
    assert early == ["project:atlas"]
    paused = [f.subject for f in atlas.facts(predicate="status", object="paused").facts]
    assert paused == ["project:beacon"]


def test_cli_reference_is_current() -> None:
    """docs/cli.md is generated from --help; regenerate it when a command changes."""
    from pathlib import Path

    from graphmem.cli.reference import reference
    doc = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
    assert doc.read_text(encoding="utf-8") == reference(), "run: python -m graphmem.cli.reference > docs/cli.md"


def test_smaller_buffer_pool_reads_the_same(atlas: graphmem.Memory, store_path) -> None:  # type: ignore[no-untyped-def]
    atlas.assert_("Atlas", "status", "active", valid_from="2024-01-01")
    atlas.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    want = atlas.current("Atlas", as_of="2025-01-01").to_dict()
    atlas.close()
    with graphmem.open(store_path, create=False, buffer_pool_mb=64) as m:
        got = m.current("Atlas", as_of="2025-01-01").to_dict()
        assert got["facts"] == want["facts"] and got["subject"] == want["subject"]
        assert {f["predicate"]: f["object"].get("ref", f["object"].get("value")) for f in got["facts"]} == {
            "status": "active", "uses": "tool:kuzu"}


@pytest.mark.parametrize("size", [0, 63, -1, 1.5, "512", True])
def test_bad_buffer_pool_is_bad_input(store_path, size: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match=r"^bad buffer_pool_mb .*: expected a whole number of MiB, at least 64$"):
        graphmem.open(store_path, buffer_pool_mb=size)
    if isinstance(store_path, Path):  # a PostgreSQL run's store is a schema's address
        assert not store_path.exists()  # nothing written


@pytest.mark.engine("kuzu", "ladybug")  # the bulk files an embedded store's folder holds
def test_opening_removes_bulk_files_a_killed_import_left(atlas: graphmem.Memory, store_path) -> None:  # type: ignore[no-untyped-def]
    atlas.close()
    tmp = store_path / "tmp"
    tmp.mkdir(exist_ok=True)
    (tmp / "tmpk1ll3d.csv").write_text("1\tassert\n", "utf-8")  # as a forked reader leaves it when killed
    (tmp / "notes.txt").write_text("not ours", "utf-8")
    with graphmem.open(store_path, create=False) as m:
        assert m.entity("Atlas").ref == "project:atlas"
    assert sorted(p.name for p in tmp.iterdir()) == ["notes.txt"]


# store location and cleanup (graphmem.config) ---------------------------------------------


def test_default_store_from_env_else_user_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from graphmem.config import default_store, store_location
    assert default_store() == tmp_path / "default-store"  # conftest sets GRAPHMEM_STORE
    assert store_location(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    assert store_location(None) == tmp_path / "default-store"
    monkeypatch.delenv("GRAPHMEM_STORE")
    assert default_store() == tmp_path / "xdg" / "graphmem"  # conftest points XDG_DATA_HOME here


def test_open_without_a_path_opens_the_default_store(new_store, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    default = new_store("default-store")  # the run's engine: GRAPHMEM_STORE names it
    monkeypatch.setenv("GRAPHMEM_STORE", str(default))
    with graphmem.open(create=True) as m:
        m.add_entity("Tool", "Kuzu")
    if isinstance(default, Path):
        assert (default / DB_FILE).exists()
    with graphmem.open(default) as m:
        assert m.entity("kuzu").ref == "tool:kuzu"


@pytest.mark.engine("kuzu", "ladybug")  # the folders it made, in the embedded engines' own layout
def test_failed_first_write_leaves_no_store(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from graphmem.store.engines import cleanup_on_failure
    target = tmp_path / "new" / "deeper" / "store"
    with pytest.raises(UnknownEntity), cleanup_on_failure(target), graphmem.open(target, create=True) as m:
        m.assert_("nobody", "status", "active")
    assert not (tmp_path / "new").exists()  # the folders it made too
    with cleanup_on_failure(target), graphmem.open(target, create=True) as m:  # a write that succeeds keeps the store
        m.add_entity("Tool", "Kuzu")
    assert (target / DB_FILE).exists()


def test_a_failed_first_write_leaves_no_store_on_any_engine(new_store) -> None:  # type: ignore[no-untyped-def]
    """The new store a failed first write made is taken back (a folder's files, or on PostgreSQL its
    schema: ``store.engines.cleanup_on_failure``, which ``init`` and ``copy`` use); the store a write that
    succeeds made, and a store that was there before, are kept."""
    from graphmem.store.engines import cleanup_on_failure
    target = new_store("s")
    with pytest.raises(UnknownEntity), cleanup_on_failure(target), graphmem.open(target, create=True) as m:
        m.assert_("nobody", "status", "active")
    with pytest.raises(graphmem.StoreUnavailable, match="no store at"):
        graphmem.open(target)
    with cleanup_on_failure(target), graphmem.open(target, create=True) as m:
        m.add_entity("Tool", "Kuzu")
    with pytest.raises(UnknownEntity), cleanup_on_failure(target), graphmem.open(target, create=True) as m:
        m.assert_("nobody", "status", "active")  # a store there before: kept whole
    with graphmem.open(target) as m:
        assert [e.ref for e in m.store.all_entities()] == ["tool:kuzu"]


@pytest.mark.engine("kuzu", "ladybug")  # the files of an embedded store's folder
def test_failure_on_an_existing_store_removes_nothing(atlas: graphmem.Memory, store_path) -> None:  # type: ignore[no-untyped-def]
    from graphmem.store.engines import cleanup_on_failure
    atlas.close()
    before = sorted(p.name for p in store_path.iterdir())
    with pytest.raises(UnknownEntity), cleanup_on_failure(store_path), graphmem.open(store_path) as m:
        m.assert_("nobody", "status", "active")
    assert sorted(p.name for p in store_path.iterdir()) == before
    with graphmem.open(store_path) as m:
        assert m.entity("Atlas").ref == "project:atlas"


@pytest.mark.engine("kuzu", "ladybug")  # the files of an embedded store's folder beside others in it
def test_failure_in_an_empty_folder_removes_only_the_store_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from graphmem.store.engines import cleanup_on_failure
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("not ours", "utf-8")
    with pytest.raises(UnknownEntity), cleanup_on_failure(folder), graphmem.open(folder, create=True) as m:
        m.assert_("nobody", "status", "active")
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("fail_on", ["bogus", "info", ""])
def test_lint_fail_on_is_checked_by_the_library(atlas: graphmem.Memory, fail_on: str) -> None:
    report = atlas.lint()
    for call in (report.to_dict, report.fails):
        with pytest.raises(BadInput, match=rf"^bad fail_on {fail_on!r}: expected error or warning$"):
            call(fail_on)
    assert report.to_dict("warning")["fail_on"] == "warning" and report.fails("error") is False
