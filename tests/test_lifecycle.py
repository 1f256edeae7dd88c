"""The lifecycle of evidence records (docs/lifecycle.md): use tracking (packed and searched, kept
apart; nothing on read-only opens, --no-track or past reads), the policy's rules one by one, soft
archive and revive as recorded events, archived records out of search and pack unless asked for and
still in why, export and timeline, plans, and the same over the CLI and the service."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import address, cli, jl, one_clear_line
from hypothesis import HealthCheck, given, settings
from strategies import LIFE_WORDS, life_records, life_runs

import graphmem
from graphmem.errors import BadInput, ConfigError
from graphmem.evidence.lifecycle import Policy, load_policy, plan_items


def _later(days: float) -> str:
    """Now plus ``days``, as ISO 8601 (a record's idle clock starts when it is ingested)."""
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).isoformat()


def _events(m: graphmem.Memory) -> list[str]:
    """The ops of the store's record events, the use not written yet written first."""
    m._use_log.flush(m.store)
    return [op for _, op, *_ in m.store.record_events()]


def _archived(m: graphmem.Memory) -> set[str]:
    return {f"rec:{i}" for i in m.store.archived_at()}


# -- use tracking ---------------------------------------------------------------------------


def test_pack_and_search_record_use_apart(mem: graphmem.Memory) -> None:
    mem.ingest(jl({"text": "Atlas moved to Kuzu.", "kind": "note"}, {"text": "Lunch at noon.", "kind": "note"}))
    assert _events(mem) == []  # ingest is not use
    assert [h.ref for h in mem.search("kuzu").results] == ["rec:1"]
    u = mem.record_use("rec:1")
    assert (u["searched"], u["packed"], u["last_packed"]) == (1, 0, None) and u["last_searched"]
    p = mem.pack("kuzu")
    assert p.refreshed == ("rec:1",)
    mem.pack("kuzu")
    u = mem.record_use("rec:1")
    assert (u["searched"], u["packed"]) == (1, 2) and u["last_packed"] >= u["last_searched"]
    assert mem.record_use("rec:2")["packed"] == 0  # never packed nor found
    assert _events(mem) == ["searched", "packed", "packed"]


def test_no_track_past_reads_and_read_only_opens_record_nothing(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(jl({"text": "Atlas moved to Kuzu.", "ts": "2024-01-01"}))
        assert m.pack("kuzu", track=False).refreshed == ()
        assert m.pack("kuzu", as_of="2025-01-01").refreshed == ()
        assert m.pack("kuzu", known_at="2025-01-01").refreshed == ()
        m.search("kuzu", track=False)
        assert _events(m) == []
    with graphmem.open(store_path, read_only=True) as m:
        assert m.pack("kuzu").refreshed == () and m.search("kuzu").results
    with graphmem.open(store_path) as m:
        assert _events(m) == []
        assert m.pack("kuzu").refreshed == ("rec:1",)
    with graphmem.open(store_path, read_only=True) as m:  # written when the store closed
        assert [op for _, op, *_ in m.store.record_events()] == ["packed"]


def test_cli_pack_trace_names_the_records_it_refreshed(store_path: Path, tmp_path: Path) -> None:
    assert cli(store_path, "init").code == 0
    f = tmp_path / "r.jsonl"
    f.write_bytes(b"\n".join(jl({"text": "Atlas moved to Kuzu.", "kind": "note"}, {"text": "Kuzu is fast."})))
    assert cli(store_path, "ingest", str(f)).code == 0
    r = cli(store_path, "pack", "-q", "kuzu", "--trace", "--json")
    doc = json.loads(r.out)
    assert sorted(doc["trace"]["refreshed"]) == sorted(i["ref"] for i in doc["items"] if i["kind"] == "record")
    assert doc["trace"]["refreshed"]
    r = cli(store_path, "pack", "-q", "kuzu", "--trace", "--json", "--no-track")
    assert json.loads(r.out)["trace"]["refreshed"] == []
    r = cli(store_path, "pack", "-q", "kuzu", "--trace")
    assert "use recorded for: rec:" in r.err
    assert cli(store_path, "search", "kuzu", "--no-track").code == 0
    with graphmem.open(store_path) as m:
        assert _events(m) == ["packed", "packed"]


# -- the policy, rule by rule -------------------------------------------------------------------


def test_retention_by_tier(mem: graphmem.Memory) -> None:
    mem.ingest(jl({"text": "low", "importance": 0.1}, {"text": "mid", "importance": 0.6},
                  {"text": "high", "importance": 0.9}))
    c = mem.lifecycle(at=_later(29), dry_run=True).counts
    assert c["archived"] == 0 and c["kept"] == {"kept": 2, "must_remember": 1}
    c = mem.lifecycle(at=_later(31), dry_run=True).counts
    assert (c["archived"], c["by_tier"], c["by_reason"]) == (1, {"ignore": 1}, {"retention": 1})
    c = mem.lifecycle(at=_later(91), dry_run=True).counts
    assert (c["archived"], c["by_tier"]) == (2, {"nice_to_have": 1, "ignore": 1})
    assert c["by_importance"] == {"0.0-0.2": 1, "0.6-0.8": 1}
    assert mem.lifecycle(at=_later(3650), dry_run=True).counts["kept"] == {"must_remember": 1}


def test_rules_constraints_and_decisions_never_archive(mem: graphmem.Memory) -> None:
    mem.ingest(jl(*({"text": f"a {k}", "kind": k, "importance": 0.0} for k in ("rule", "constraint", "decision"))))
    c = mem.lifecycle(at=_later(36500)).counts
    assert (c["archived"], c["kept"]) == (0, {"protected_kind": 3})


@pytest.mark.engine("kuzu", "ladybug")  # the policy file lifecycle.toml sits in an embedded store's folder
def test_decay_with_frequency_boost(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.ingest(jl({"text": "alpha", "importance": 0.6}, {"text": "beta", "importance": 0.6}))
        for _ in range(3):
            m.search("beta")  # three uses: score x (1 + 0.5 ln 4) = x 1.69
    (store_path / "lifecycle.toml").write_text("[decay]\nthreshold = 0.5\n[retention]\nnice_to_have = 1000\n")
    p = load_policy(store_path)
    assert p.threshold == 0.5 and p.retention_days("nice_to_have") == 1000 and p.half_life_days == 14
    assert p.decay(14, 0) == pytest.approx(0.5) and p.decay(0, 3) == pytest.approx(1 + 0.5 * 1.3862944)
    with graphmem.open(store_path) as m:
        c = m.lifecycle(at=_later(15)).counts  # 0.5 ** (15 / 14) = 0.476 < 0.5; beta: 0.80
        assert (c["archived"], c["by_reason"]) == (1, {"decay": 1})
        assert _archived(m) == {"rec:1"}
        assert p.files[-1] in m.lifecycle(dry_run=True).policy["files"]


def test_use_restarts_the_idle_clock(mem: graphmem.Memory) -> None:
    from graphmem.model.times import parse_instant
    mem.ingest(jl({"text": "low one", "importance": 0.1}, {"text": "low two", "importance": 0.1}))
    mem._use_log.flush(mem.store)
    with mem.store.transaction():  # a pack twenty days after the ingest
        mem.store.add_record_event("packed", [2], {}, parse_instant(_later(20)))
    c = mem.lifecycle(at=_later(40), dry_run=True).counts
    assert c["archived"] == 1 and c["kept"] == {"kept": 1}


def test_plans_not_yet_due_are_kept(mem: graphmem.Memory) -> None:
    mem.note("ship the migration", due=_later(400), ts="2024-01-01")
    mem.note("write the docs", due=_later(10), ts="2024-01-01")
    for n in (mem.store.record(1), mem.store.record(2)):
        assert n.kind == "plan" and n.meta["due"]
    c = mem.lifecycle(at=_later(100), dry_run=True).counts
    assert c["kept"] == {"plan_not_due": 1} and c["archived"] == 1


@pytest.mark.engine("kuzu", "ladybug")  # the policy file lifecycle.toml sits in an embedded store's folder
def test_use_never_promotes_trust(store_path: Path) -> None:
    with graphmem.open(store_path, create=True) as m:
        m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        m.ingest(jl({"text": "Atlas uses Kuzu.", "importance": 0.1}))
        m.extract_pending(apply=True)
        before = [(s.id, s.trust) for s in m.store.all_statements()]
        assert before
        for _ in range(5):
            m.pack("atlas kuzu")
            m.search("kuzu")
        assert [(s.id, s.trust) for s in m.store.all_statements()] == before
        assert m.lifecycle(at=_later(365), dry_run=True).counts["by_trust"] == {"unrated": 1}
    (store_path / "lifecycle.toml").write_text("[trust]\nuse_promotes_trust = true\n")
    with pytest.raises(ConfigError, match="use_promotes_trust"):
        load_policy(store_path)


@pytest.mark.engine("kuzu", "ladybug")  # the policy file lifecycle.toml sits in an embedded store's folder
@pytest.mark.parametrize(("text", "names"), [
    ("[decay]\nhalf_life = 3\n", ["half_life", "lifecycle.toml"]),
    ("[retention]\nignore = -1\n", ["ignore", "lifecycle.toml"]),
    ("[tiers]\nnice_to_have = 0.9\n", ["nice_to_have", "must_remember"]),
    ("[kinds]\nnever_archive = 'rule'\n", ["never_archive"]),
    ("[colours]\nx = 1\n", ["colours"]),
    ("retention = [", ["not valid TOML"]),
])
def test_a_bad_policy_file_is_one_clear_line(store_path: Path, text: str, names: list[str]) -> None:
    assert cli(store_path, "init").code == 0
    (store_path / "lifecycle.toml").write_text(text)
    r = cli(store_path, "lifecycle", "--dry-run")
    one_clear_line(r, 2, names)


# -- archive, revive, and where archived records go ------------------------------------------------


def test_archive_and_revive_are_recorded_and_reversible(store_path: Path) -> None:
    assert cli(store_path, "init").code == 0
    with graphmem.open(store_path) as m:
        m.ingest(jl({"text": "secret lunch plans at noon", "importance": 0.1},
                    {"text": "rule: deploy on fridays never", "kind": "rule"}))
    dry = cli(store_path, "lifecycle", "--dry-run", "--at", _later(60), "--json")
    assert dry.code == 0 and json.loads(dry.out)["archived"] == 1 and json.loads(dry.out)["events"] == []
    r = cli(store_path, "lifecycle", "--at", _later(60), "--json")
    doc = json.loads(r.out)
    assert doc["schema"] == "graphmem.lifecycle.v1" and doc["archived"] == 1 and len(doc["events"]) == 1
    assert "lunch" not in r.out and "deploy" not in r.out  # counts only, never a record's text
    again = json.loads(cli(store_path, "lifecycle", "--at", _later(60), "--json").out)
    assert (again["archived"], again["already_archived"], again["events"]) == (0, 1, [])
    assert json.loads(cli(store_path, "search", "lunch", "--json").out)["results"] == []
    found = json.loads(cli(store_path, "search", "lunch", "--include-archived", "--json").out)["results"]
    assert [h["ref"] for h in found] == ["rec:1"]
    packed = json.loads(cli(store_path, "pack", "-q", "lunch", "--json").out)
    assert packed["items"] == []
    packed = json.loads(cli(store_path, "pack", "-q", "lunch", "--include-archived", "--json", "--no-track").out)
    assert [i["ref"] for i in packed["items"]] == ["rec:1"]
    one_clear_line(cli(store_path, "revive", "rec:2"), 2, ["rec:2"], ["archived"])
    one_clear_line(cli(store_path, "revive", "rec:9"), 2, ["rec:9"])
    one_clear_line(cli(store_path, "revive", "nine"), 2, ["nine"], ["rec:N"])
    r = cli(store_path, "revive", "rec:1", "--json")
    assert json.loads(r.out) == {"schema": "graphmem.revive.v1", "revived": ["rec:1"], "event": 3}
    assert [h["ref"] for h in json.loads(cli(store_path, "search", "lunch", "--json").out)["results"]] == ["rec:1"]
    with graphmem.open(store_path) as m:
        assert _events(m) == ["archive", "searched", "revive", "searched"]
        # revived: its idle clock starts again at the revive
        assert m.lifecycle(at=_later(20), dry_run=True).counts["archived"] == 0


def test_archived_records_stay_in_why_export_and_timeline(mem: graphmem.Memory) -> None:
    mem.add_entity("Project", "Atlas"), mem.add_entity("Tool", "Kuzu")
    mem.ingest(jl({"text": "Atlas uses Kuzu now.", "importance": 0.1, "ts": "2024-01-01"}))
    fact = mem.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01", sources=["rec:1"]).refs[0]
    export = mem.export()
    mem.lifecycle(at=_later(60))
    assert _archived(mem) == {"rec:1"} and mem.search("kuzu").results == ()
    assert "Atlas uses Kuzu now." in json.dumps(mem.why(fact).to_dict())
    assert mem.export() == export
    assert [e["fact"] for e in mem.timeline("Atlas").to_dict()["events"] if "fact" in e] == [fact]
    assert mem.current("Atlas").facts  # the fact stays: only evidence archives


def test_service_and_client_offer_lifecycle_and_revive(store_path: Path) -> None:
    from graphmem.service.operations import OPERATIONS, check, document
    ops = {op.name: op for op in OPERATIONS}
    assert ops["lifecycle"].write and ops["revive"].write
    with graphmem.open(store_path, create=True) as m:
        m.ingest(jl({"text": "lunch at noon", "importance": 0.1}))
        doc = document(ops["lifecycle"].call(m, check(ops["lifecycle"], {"at": _later(60)}, "http", from_text=True)))
        assert doc["schema"] == "graphmem.lifecycle.v1" and doc["archived"] == 1
        got = document(ops["search"].call(m, check(ops["search"], {"q": "lunch"}, "http", from_text=True)))
        assert got["results"] == []
        got = document(ops["search"].call(m, check(ops["search"], {"q": "lunch", "include_archived": "true"}, "http",
                                                   from_text=True)))
        assert [h["ref"] for h in got["results"]] == ["rec:1"]
        doc = document(ops["revive"].call(m, check(ops["revive"], {"refs": "rec:1"}, "http", from_text=True)))
        assert doc["revived"] == ["rec:1"]
        with pytest.raises(BadInput, match="rec:1"):
            ops["revive"].call(m, check(ops["revive"], {"refs": ["rec:1"]}, "mcp", from_text=False))


# -- plans ------------------------------------------------------------------------------------


def test_plans_are_shown_as_plans_due_and_overdue_first(mem: graphmem.Memory) -> None:
    mem.add_entity("Project", "Atlas"), mem.add_entity("Tool", "Kuzu")
    mem.note("Atlas will write its docs.", kind="plan", ts="2024-01-05")
    mem.note("Ship the Atlas migration to Kuzu.", due="2024-03-01", ts="2024-01-01")
    mem.note("Atlas adds Kuzu backups.", due="2024-06-01", ts="2024-01-02")
    ex = mem.extract_pending(apply=True).to_dict()
    assert ex["assertions"] == [] and len(ex["mentions"]) >= 3  # a plan is never a fact
    plans = mem.current("Atlas", as_of="2024-04-01").to_dict()["plans"]
    assert [(p["ref"], p["status"]) for p in plans] == [("rec:2", "overdue"), ("rec:3", "due"), ("rec:1", "no_due")]
    assert mem.current("Atlas", as_of="2024-04-01").facts == ()
    text = mem.pack("Atlas migration Kuzu backups docs", as_of="2024-04-01").bundle_text
    lines = text.splitlines()
    assert lines[0].startswith("Plans (")
    assert "due 2024-03-01 (overdue)" in lines[1] and "due 2024-06-01 (due)" in lines[2] and "no due" in lines[3]
    mem.close()  # (a process may hold an embedded store open to write once at a time)
    one_clear_line(cli(address(mem), "note", "x", "--due", "soon"), 2, ["soon"])


def test_extraction_proposes_plans_instead_of_facts(demo: graphmem.Memory) -> None:
    doc = demo.extract_text("We plan to move Atlas to Kuzu by 1 March.", at="2026-01-10").to_dict()
    assert doc["assertions"] == []
    assert [(p["due"], p["mentions"]) for p in doc["plans"]] == [("2026-03-01T00:00:00Z", ["project:atlas", "tool:kuzu"])]
    doc = demo.extract_text("Atlas uses Kuzu.", at="2026-01-10").to_dict()
    assert doc["plans"] == [] and doc["assertions"]
    for text in ("Would Atlas use Kuzu?", "If Atlas used Kuzu, it would be fast.", "We will not move Atlas to Kuzu."):
        assert demo.extract_text(text, at="2026-01-10").to_dict()["plans"] == [], text


def test_plan_items_order() -> None:
    rows = [(1, "a", 10, "{}"), (2, "b", 5, '{"due": "2024-01-02"}'), (3, "c", 5, '{"due": "2024-01-01"}'),
            (4, "d", 5, '{"due": "2030-01-01"}'), (5, "e", 20, "{}")]
    from graphmem.model.times import parse_instant
    items = plan_items(rows, parse_instant("2025-01-01"), archived=[4])
    assert [i["ref"] for i in items] == ["rec:3", "rec:2", "rec:5", "rec:1"]
    assert Policy().tier(0.8) == "must_remember" and Policy().tier(0.79) == "nice_to_have" and Policy().tier(None) == "nice_to_have"


# -- properties -------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=life_records(), runs=life_runs)
def test_lifecycle_never_loses_a_record(new_store: Callable[[str], Path], records: list[dict[str, object]],
                                        runs: list[int]) -> None:
    path = new_store(f"s{abs(hash((json.dumps(records), tuple(runs))))}")
    with graphmem.open(path, create=True) as m:
        m.ingest(jl(*records))
        export = m.export()
        count = m.store.record_count()
        for d in runs:
            m.lifecycle(at=_later(d))
        archived = sorted(_archived(m))
        if archived:
            m.revive(archived)
        assert m.export() == export and m.store.record_count() == count and _archived(m) == set()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=life_records(), runs=life_runs)
def test_archived_records_never_in_search_or_pack_without_the_flag(new_store: Callable[[str], Path],
                                                                   records: list[dict[str, object]],
                                                                   runs: list[int]) -> None:
    path = new_store(f"s{abs(hash((json.dumps(records), tuple(runs))))}")
    with graphmem.open(path, create=True) as m:
        m.ingest(jl(*records))
        for d in runs:
            m.lifecycle(at=_later(d))
        archived = _archived(m)
        for word in LIFE_WORDS:
            hits = {h.ref for h in m.search(word, limit=50, track=False).results}
            every = {h.ref for h in m.search(word, limit=50, track=False, include_archived=True).results}
            assert not hits & archived and hits == every - archived
            packed = {c.ref for c in m.pack(word, track=False).items}
            assert not packed & archived
            for c in m.pack(word, track=False, trace=True).lanes:
                assert not {x.ref for x in c[2]} & archived


@pytest.mark.parametrize("n", [3, 20])  # a few plans are looked up one by one, many through the entity's mentions
def test_current_finds_plans_however_many(mem: graphmem.Memory, n: int) -> None:
    mem.add_entity("Project", "Atlas"), mem.add_entity("Project", "Beacon")
    mem.ingest(jl(*({"text": f"Atlas step {i}.", "kind": "plan", "meta": {"due": f"2024-02-{i + 1:02d}"}}
                    for i in range(n)), {"text": "Beacon later.", "kind": "plan"}, {"text": "Atlas is fine."}))
    mem.extract_pending(apply=True)
    assert mem.store.plan_record_ids() == list(range(1, n + 2))
    plans = mem.current("Atlas", as_of="2024-02-10").plans
    assert [p["ref"] for p in plans] == [f"rec:{i}" for i in range(1, n + 1)]
    assert [p["status"] for p in plans] == ["overdue"] * min(n, 9) + ["due"] * max(0, n - 9)
    assert [p["ref"] for p in mem.current("Beacon").plans] == [f"rec:{n + 1}"]


def test_use_is_written_in_batches(mem: graphmem.Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphmem.evidence.lifecycle as lifecycle
    from graphmem.evidence.lifecycle import FLUSH_EVENTS
    monkeypatch.setattr(lifecycle, "FLUSH_SECONDS", 3600.0)  # by count only, however slow the machine
    mem.ingest(jl({"text": "Atlas moved to Kuzu."}))
    for _ in range(FLUSH_EVENTS - 1):
        mem.search("kuzu")
    assert mem.store.record_events() == [] and len(mem._use_log.pending) == FLUSH_EVENTS - 1
    mem.search("kuzu")  # the 64th: all are written, one transaction
    assert len(mem.store.record_events()) == FLUSH_EVENTS and mem._use_log.pending == []
    mem.pack("kuzu")
    assert mem.record_use("rec:1")["packed"] == 1  # reading use writes what waits first
