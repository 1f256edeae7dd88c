"""The PostgreSQL engine (graphmem/store/postgres/) against a throwaway cluster (tests/pg.py): it has
every storage role, and the main operations through Memory answer on it as they do on Kuzu after the
same writes; several processes write at once without colliding; record times come from the server."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from graphmem.demo import load_example
from graphmem.errors import StoreReadOnly, StoreUnavailable
from graphmem.memory import Memory
from graphmem.store import StatementBatch, StorageEngine, ViewBatch
from graphmem.store.postgres.store import PgStore
from graphmem.store.roles import ROLES
from tests.pg import Cluster, pg_cluster, pg_url  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parent.parent


def open_pg(url: str, **kw: Any) -> Memory:
    """Memory on the PostgreSQL store at ``url``, opened by its address as every caller's is."""
    m = Memory(url, **kw)
    assert isinstance(m.store, PgStore)
    return m


def _strip(d: Any) -> Any:
    """A result's document without the instants of the call itself (now)."""
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k not in ("as_of", "known_at")}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    return d


@pytest.fixture(scope="module")
def both(pg_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Any:  # noqa: F811
    """The bundled example built the same way on Kuzu and on PostgreSQL."""
    kuzu = Memory(tmp_path_factory.mktemp("kuzu") / "store", create=True)
    pg = open_pg(pg_cluster.url("demo_both"), create=True)
    for m in (kuzu, pg):
        load_example(m)
    yield kuzu, pg
    kuzu.close()
    pg.close()


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.__name__)
def test_pg_store_has_every_role(pg_url: str, role: type) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    try:
        assert isinstance(m.store, PgStore)
        assert isinstance(m.store, role), [n for n in role.__dict__ if not hasattr(m.store, n)]
    finally:
        m.close()


def test_pg_store_is_a_storage_engine(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    try:
        assert isinstance(m.store, StorageEngine)
        assert isinstance(m.store.statement_file(), StatementBatch)
        batch = m.store.write_view_files([])
        assert isinstance(batch, ViewBatch)
        batch.discard()
    finally:
        m.close()


def test_a_missing_store_is_refused_until_created(pg_url: str) -> None:  # noqa: F811
    with pytest.raises(StoreUnavailable, match="no store at .*expected one made by 'graphmem init'"):
        open_pg(pg_url)
    open_pg(pg_url, create=True).close()
    m = open_pg(pg_url)
    assert m.store.entity_count() == 0
    assert m.store.engine == "postgresql" and m.store.engine_version().startswith("1")  # type: ignore[attr-defined]
    m.close()


def test_a_bad_schema_name_is_refused(pg_cluster: Cluster) -> None:  # noqa: F811
    with pytest.raises(StoreUnavailable, match="bad schema 'Bad-Name'"):
        open_pg(pg_cluster.url("Bad-Name"), create=True)


def test_cypher_is_refused_with_one_line(pg_url: str) -> None:  # noqa: F811
    from graphmem.errors import BadInput
    m = open_pg(pg_url, create=True)
    try:
        with pytest.raises(BadInput, match="does not run Cypher queries"):
            m.cypher("RETURN 1")
    finally:
        m.close()


def test_read_only_refuses_writes(pg_url: str) -> None:  # noqa: F811
    open_pg(pg_url, create=True).close()
    m = open_pg(pg_url, read_only=True)
    try:
        with pytest.raises(StoreReadOnly, match="open read-only"):
            m.add_entity("Project", "Atlas")
        assert m.store.entity_count() == 0
    finally:
        m.close()


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
def test_export_is_the_same_as_on_kuzu(both: Any) -> None:
    kuzu, pg = both
    assert pg.export() == kuzu.export()
    assert pg.store.statement_count() == kuzu.store.statement_count() == 196
    assert pg.store.record_count() == kuzu.store.record_count() == 46


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
@pytest.mark.parametrize("call", [
    lambda m: m.current("Atlas", as_of="2026-01-01"),
    lambda m: m.current("Atlas"),
    lambda m: m.timeline("Atlas"),
    lambda m: m.facts(predicate="status"),
    lambda m: m.facts(object="Kuzu"),
    lambda m: m.why("fact:3"),
    lambda m: m.search("graph database migration"),
    lambda m: m.search("kuzu", kind="decision"),
    lambda m: m.recommend("a graph database for agents"),
    lambda m: m.paths("Atlas", "Kuzu"),
    lambda m: m.paths("Maya Chen", "Neo4j"),
    lambda m: m.pack("what does Atlas use?"),
], ids=["current-as-of", "current", "timeline", "facts-status", "facts-object", "why", "search", "search-kind",
        "recommend", "path", "path-far", "pack"])
def test_reads_answer_as_on_kuzu(both: Any, call: Any) -> None:
    kuzu, pg = both
    assert _strip(call(pg).to_dict()) == _strip(call(kuzu).to_dict())


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
def test_lint_finds_what_it_finds_on_kuzu(both: Any) -> None:
    kuzu, pg = both
    found = pg.lint().to_dict()
    assert found == kuzu.lint().to_dict()
    assert found["counts"]["by_code"]["single_value_conflict"] == 1  # the example's deliberate conflict


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
def test_search_scores_match_kuzu(both: Any) -> None:
    kuzu, pg = both
    terms = ["graph", "databas", "kuzu"]
    assert pg.store.rank_records(terms, 20) == kuzu.store.rank_records(terms, 20)
    assert pg.store.rank_records(terms, 20)  # something was ranked


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
def test_graph_reads_match_kuzu(both: Any) -> None:
    kuzu, pg = both
    refs = ["project:atlas", "tool:kuzu"]
    at = 1_780_000_000_000_000
    assert pg.store.fact_edges_at(refs, at) == kuzu.store.fact_edges_at(refs, at)
    assert pg.store.fact_edges_at(refs, at, "Person") == kuzu.store.fact_edges_at(refs, at, "Person")
    assert list(pg.store.edges(at)) == list(kuzu.store.edges(at))
    assert pg.store.edges_into("tool:kuzu", "uses", "USES", None) == kuzu.store.edges_into("tool:kuzu", "uses", "USES", None)


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
def test_writes_leave_the_same_store_as_on_kuzu(pg_url: str, tmp_path: Path) -> None:  # noqa: F811
    kuzu = Memory(tmp_path / "store", create=True)
    pg = open_pg(pg_url, create=True)
    try:
        for m in (kuzu, pg):
            m.add_entity("Project", "Atlas", aliases=["atlas-app"])
            m.add_entity("Tool", "Kuzu")
            m.add_entity("Tool", "Neo4j")
            m.add_entity("Person", "Ada Lovelace")
            m.assert_("Atlas", "uses", "Neo4j", valid_from="2024-01-01", recorded_at="2024-01-02")
            m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01", recorded_at="2024-02-02")
            m.end("Atlas", "uses", "Neo4j", at="2024-03-01")
            m.assert_("Atlas", "owner", "Ada Lovelace", valid_from="2024-01-01", recorded_at="2024-01-03")
            m.assert_("Atlas", "status", "active", valid_from="2024-01-01", recorded_at="2024-01-03")
            m.retract("fact:5", reason="wrong")
            with m.write_group():
                m.assert_("Atlas", "status", "paused", valid_from="2024-05-01", recorded_at="2024-05-01")
            m.rename_entity("Ada Lovelace", "Ada King")
        assert _strip(pg.current("Atlas", as_of="2024-06-01").to_dict()) == \
            _strip(kuzu.current("Atlas", as_of="2024-06-01").to_dict())
        assert _strip(pg.timeline("Atlas").to_dict())["intervals"] == _strip(kuzu.timeline("Atlas").to_dict())["intervals"]
        assert [s[:8] for s in pg.store.all_statements()] == [s[:8] for s in kuzu.store.all_statements()]
        assert pg.store.statement(5).retract_reason == "wrong"  # type: ignore[union-attr]
        assert pg.resolve("ada king").ref == "person:ada-lovelace"
        assert pg.store.entity_events() and len(pg.store.entity_events()) == len(kuzu.store.entity_events())
    finally:
        kuzu.close()
        pg.close()


def test_a_failed_write_leaves_nothing(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    try:
        m.add_entity("Project", "Atlas")
        m.add_entity("Tool", "Kuzu")
        with pytest.raises(RuntimeError), m.write_group():
            m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
            raise RuntimeError("stop")
        assert m.store.statement_count() == 0
        assert m.current("Atlas").facts == [] or len(m.current("Atlas").facts) == 0
        assert m.store.next_fact_id() == 1
    finally:
        m.close()


def test_rebuild_check_finds_nothing_wrong(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    try:
        load_example(m)
        report = m.rebuild(check=True).to_dict()
        assert report["ok"] and not report["problems"] and not report["drift"], report
        assert m.store.integrity_problems({e.ref for e in m.store.all_entities()}) == []
        assert m.store.pk_index_misses("assertion")[0] > 0 and m.store.pk_index_misses("assertion")[1] == 0
        before = m.export()
        m.rebuild()
        assert m.export() == before
    finally:
        m.close()



def test_a_write_to_one_predicate_keeps_the_subjects_other_interval_rows_in_step(
        pg_url: str, demo: Memory) -> None:  # noqa: F811
    """A new interval of one predicate moves the positions of the intervals after it in the subject's view:
    the stored interval rows must follow, or the check finds the view drifted."""
    m = open_pg(pg_url, create=True)
    try:
        assert m.import_jsonl(demo.export().splitlines(), strict=True).ok
        assert len({iv.predicate for iv in m.store.subject_view("project:atlas")}) > 2
        m.assert_("atlas", "status", "paused")
        report = m.rebuild(check=True).to_dict()
        assert report["ok"] and not report["drift"], report
    finally:
        m.close()


_WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from tests.test_postgres import open_pg
    m = open_pg({url!r})
    while not m.store.entity("tool:go"):  # both writers start together
        time.sleep(0.01)
    for i in range({n}):
        if i % 4:
            m.assert_("Atlas", "uses", "Tool{who}-" + str(i), valid_from="2024-01-01")
        else:
            with m.write_group():
                m.assert_("Tool{who}-" + str(i), "description", "written by {who}")
    m.ingest(['{{"text": "note %d from {who}", "kind": "note"}}' % i for i in range(5)])
    m.close()
""")


def test_two_processes_write_at_once(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    n = 40
    m.add_entity("Project", "Atlas")
    for who in "ab":
        for i in range(n):
            m.add_entity("Tool", f"Tool{who}-{i}")
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER.format(repo=str(REPO), url=pg_url, n=n, who=who)],
                              stderr=subprocess.PIPE, text=True) for who in "ab"]
    time.sleep(1.5)
    m.add_entity("Tool", "Go")
    errors = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    stmts = m.store.all_statements()
    assert [s.id for s in stmts] == list(range(1, 2 * n + 1))  # every id once, none lost
    assert m.store.next_fact_id() == 2 * n + 1
    assert sorted(r.id for r in m.store.all_records()) == list(range(1, 11))
    uses = {f.object for f in m.current("Atlas").facts}
    assert len(uses) == n * 3 // 2  # both writers' facts are in Atlas's view
    assert m.rebuild(check=True).to_dict()["ok"]
    assert len(m.search("note").results) == 10
    m.close()


_SKEWED = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    real = time.time_ns
    time.time_ns = lambda: real() + 3_600 * 10**9  # this machine's clock is an hour fast
    from tests.test_postgres import open_pg
    m = open_pg({url!r})
    print(m.assert_("Atlas", "status", "active").to_dict()["fact"]["recorded_at"])
    m.close()
""")


def test_record_times_come_from_the_server_clock(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    m.add_entity("Project", "Atlas")
    server = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
    before = m.store._q(server)[0][0]  # type: ignore[attr-defined]
    out = subprocess.run([sys.executable, "-c", _SKEWED.format(repo=str(REPO), url=pg_url)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    after = m.store._q(server)[0][0]  # type: ignore[attr-defined]
    recorded = m.store.statement(1).recorded_at  # type: ignore[union-attr]
    assert before <= recorded <= after, (before, recorded, after)  # not an hour ahead
    m.close()


def test_lexicon_and_entity_changes_are_kept(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    m.add_entity("Project", "Atlas")
    m.close()
    m = open_pg(pg_url)
    try:
        assert m.store.lexicon_parts(None)  # the lexicon the first close stored
        assert m.store.lexicon_changes() == []
        assert [s.ref for s in m.link("We moved Atlas to a new server.")][:1] == ["project:atlas"]
    finally:
        m.close()


def test_rebuild_mends_interval_rows_out_of_step(pg_url: str) -> None:  # noqa: F811
    m = open_pg(pg_url, create=True)
    try:
        load_example(m)
        before = _strip(m.facts(predicate="status").to_dict())
        with m.store.transaction():
            m.store._w("DELETE FROM view_interval WHERE subject = 'project:atlas'")  # type: ignore[attr-defined]
        assert _strip(m.facts(predicate="status").to_dict()) != before
        check = m.rebuild(check=True).to_dict()
        assert not check["ok"] and [d["subject"] for d in check["drift"]] == ["project:atlas"]
        m.rebuild()
        assert _strip(m.facts(predicate="status").to_dict()) == before
        assert m.rebuild(check=True).to_dict()["ok"]
    finally:
        m.close()


def test_a_writer_holding_the_lock_is_named_not_waited_on(pg_url: str) -> None:  # noqa: F811
    first = open_pg(pg_url, create=True)
    second = open_pg(pg_url)
    try:
        first.store.next_fact_id()  # an id read to number a write: the store's lock is held until that write
        second.store._q("SET lock_timeout = '200ms'")  # type: ignore[attr-defined]
        with pytest.raises(StoreUnavailable, match="another process has held the store's write lock"):
            second.add_entity("Project", "Atlas")
        first.add_entity("Tool", "Kuzu")  # the holder's write releases it
        second.add_entity("Project", "Atlas")
        assert second.store.entity_count() == 2
    finally:
        first.close()
        second.close()


@pytest.mark.folder_store("the same writes on an embedded store beside it, to compare")
def test_bulk_loads_keep_awkward_text(pg_url: str, tmp_path: Path) -> None:  # noqa: F811
    import json as _json
    texts = [f"line {i}\twith a tab\nand a break, a backslash \\ and \\N and \\t written out, é ✓" for i in range(60)]
    lines = [_json.dumps({"text": t, "kind": "note", "source": f"src\\{i}", "ts": "2025-01-02T03:04:05Z"})
             for i, t in enumerate(texts)]
    kuzu = Memory(tmp_path / "store", create=True)
    pg = open_pg(pg_url, create=True)
    try:
        for m in (kuzu, pg):
            assert not m.ingest(lines).errors  # more than 50 records: the COPY path
        assert [r.text for r in pg.store.all_records()] == [r.text for r in kuzu.store.all_records()]
        assert [dataclasses.replace(r, ingested_us=0) for r in pg.store.all_records()] == \
            [dataclasses.replace(r, ingested_us=0) for r in kuzu.store.all_records()]
        assert pg.export() == kuzu.export()
    finally:
        kuzu.close()
        pg.close()


def test_an_ingest_of_many_new_terms_is_searchable(pg_url: str) -> None:  # noqa: F811
    # more than 5,000 new terms in one ingest: the postings go through a temporary table (dropped at the
    # commit), and the planner statistics gathered after the commit are the real tables'
    lines = [f'{{"text": "note {i} about w{i}x and v{i}y", "kind": "note"}}' for i in range(3000)]
    pg = open_pg(pg_url, create=True)
    try:
        assert not pg.ingest(lines).errors
        assert [h.ref for h in pg.search("w2999x").results] == ["rec:3000"]
    finally:
        pg.close()


_IMPORTER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from tests.test_postgres import open_pg
    m = open_pg({url!r})
    print("start", flush=True)
    m.import_jsonl({path!r})
    print("done", flush=True)
""")


@pytest.mark.parametrize("delay", [0.1, 0.4, 0.7, 3.0])
def test_a_killed_writer_leaves_all_or_nothing(pg_url: str, tmp_path: Path, delay: float) -> None:  # noqa: F811
    import signal

    from benchmarks.synth import generate
    path = tmp_path / "synth.jsonl"
    path.write_text("".join(json_line(x) for x in generate(5000)), encoding="utf-8")
    m = open_pg(pg_url, create=True)
    child = subprocess.Popen([sys.executable, "-c", _IMPORTER.format(repo=str(REPO), url=pg_url, path=str(path))],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "start\n"
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    n, entities = m.store.statement_count(), m.store.entity_count()
    assert (n, entities) in ((0, 0), (5000, 500)), (n, entities)  # the whole import or none of it
    assert m.rebuild(check=True).to_dict()["ok"]
    started = time.perf_counter()
    m.add_entity("Project", "After the kill")  # the killed session's lock went with it
    assert time.perf_counter() - started < 5
    m.close()


def json_line(x: Any) -> str:
    import json as _json
    return _json.dumps(x) + "\n"
