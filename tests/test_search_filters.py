"""Filters for search and pack (issue 19, item 6): kind, source, record time, the entities a record
mentions; ranked within the records they allow, combined with the query and with each other."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import TEST_ENGINE, cli, one_clear_line
from hypothesis import given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.evidence.search import source_matches
from graphmem.model.times import format_instant, parse_instant, utc

KINDS = ("note", "message", "doc", "tool_result")
SOURCES = ("file:notes.md#L1", "file:notes.md#L9", "file:notes.mdx", "slack:#atlas", "slack:#random", "rec:1",
           "rec:12", None)


def _lines() -> list[bytes]:
    """60 records: the first 50 say 'kuzu' three times (strong BM25), the last 10 once (weak)."""
    out = []
    for i in range(60):
        text = ("kuzu kuzu kuzu graph " if i < 50 else "kuzu and a longer sentence with other words in it ") + f"n{i}"
        out.append(json.dumps({"text": text, "kind": KINDS[i % 4] if i < 50 else "decision",
                               "ts": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}", "source": SOURCES[i % len(SOURCES)]}
                              ).encode())
    return out


def _build(path: Path) -> Path:
    with graphmem.open(path, create=True) as m:
        m.add_entity("Project", "Atlas", aliases=["atlas-app"])
        m.add_entity("Tool", "Redis")
        m.ingest(_lines())
        m.ingest([json.dumps({"text": f"Atlas uses Redis for kuzu caching, note {i}.", "ts": "2024-06-01",
                              "kind": "note"}).encode() for i in range(3)])
        m.extract_pending(apply=True)  # MENTIONS of Atlas and Redis in rec:61..63
    return path


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store built once, as a folder to copy (the embedded runs only)."""
    return _build(tmp_path_factory.mktemp("filters") / "store")


@pytest.fixture
def private(store_path: Path, request: pytest.FixtureRequest) -> Path:
    """A store of the test's own: a copy of the template folder on the embedded runs, built in the test's
    schema on PostgreSQL (a hundred rows cost less there than a copy)."""
    if isinstance(store_path, Path):
        shutil.copytree(request.getfixturevalue("template"), store_path)
        return store_path
    return _build(store_path)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[graphmem.Memory]:
    """A store for the tests that only search: a copy of the template on the embedded runs, a schema of
    its own in the session's cluster on PostgreSQL."""
    if TEST_ENGINE == "postgresql":
        path = _build(request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12]))
    else:
        path = tmp_path_factory.mktemp("shared") / "store"
        shutil.copytree(request.getfixturevalue("template"), path)
    m = graphmem.open(path)
    yield m
    m.close()


def refs(r: graphmem.SearchResult) -> list[str]:  # type: ignore[name-defined]
    return [h.ref for h in r.results]


def test_a_filter_ranks_within_the_records_it_allows(shared: graphmem.Memory) -> None:
    """The 10 weak 'decision' records are all below the 10 best overall: post-filtering the top 10
    would return none of them; ranking within the filter returns all 10."""
    top = shared.search("kuzu", limit=10)
    assert all(h.kind != "decision" for h in top.results)
    only = shared.search("kuzu", limit=10, kind="decision")
    assert len(only.results) == 10 and {h.kind for h in only.results} == {"decision"}
    every = {h.ref: h.score for h in shared.search("kuzu", limit=1000).results}
    assert all(h.score == every[h.ref] for h in only.results)  # a filter does not change a score
    assert only.to_dict()["filters"]["kind"] == ["decision"]


def test_kinds_are_alternatives_and_filters_combine(shared: graphmem.Memory) -> None:
    both = shared.search("kuzu", limit=1000, kind=["doc", "message"])
    assert {h.kind for h in both.results} == {"doc", "message"}
    combined = shared.search("kuzu", limit=1000, kind=["doc", "message"], since="2025-06-01")
    assert combined.results and all(h.kind in ("doc", "message") and h.ts >= utc(parse_instant("2025-06-01"))
                                 for h in combined.results)
    assert set(refs(combined)) < set(refs(both))


def test_source_matches_at_a_boundary(shared: graphmem.Memory) -> None:
    file_hits = shared.search("kuzu", limit=1000, source="file:notes.md")
    assert {h.source for h in file_hits.results} == {"file:notes.md#L1", "file:notes.md#L9"}
    assert {h.source for h in shared.search("kuzu", limit=1000, source="rec:1").results} == {"rec:1"}
    assert {h.source for h in shared.search("kuzu", limit=1000, source="slack:").results} == {"slack:#atlas",
                                                                                          "slack:#random"}
    assert shared.search("kuzu", source="nowhere:").results == ()


@pytest.mark.parametrize(("source", "wanted", "matches"), [
    ("file:a.md#L3", "file:a.md", True), ("file:a.mdx", "file:a.md", False), ("rec:12", "rec:1", False),
    ("rec:1", "rec:1", True), ("slack:#x", "slack:", True), ("https://h/p?q=1", "https://h/p", True),
    ("https://h/pq", "https://h/p", False), ("x", "xy", False)])
def test_source_rule(source: str, wanted: str, matches: bool) -> None:
    assert source_matches(source, wanted) is matches


def test_since_is_inclusive_until_exclusive(shared: graphmem.Memory) -> None:
    march = shared.search("kuzu", limit=1000, since="2025-03-01", until="2025-04-01")
    assert march.results and all("2025-03" in h.to_dict()["ts"] for h in march.results)
    first = shared.search("kuzu", limit=1000, since="2025-03-03", until="2025-03-04")  # i = 2, 14: March 3
    assert {h.to_dict()["ts"] for h in first.results} == {"2025-03-03T00:00:00Z"}
    assert shared.search("kuzu", limit=1000, since="2025-03-03T00:00:00.000001Z", until="2025-03-04").results == ()
    assert shared.search("kuzu", limit=1000, since="2025-03-02", until="2025-03-03").results == ()


def test_about_finds_the_records_that_mention_an_entity(shared: graphmem.Memory) -> None:
    by_name = shared.search("kuzu", limit=1000, about="Atlas")
    assert refs(by_name) and set(refs(by_name)) == {"rec:61", "rec:62", "rec:63"}
    assert refs(shared.search("kuzu", limit=1000, about="atlas-app")) == refs(by_name)
    assert shared.search("kuzu", limit=1000, about="tool:redis", kind="doc").results == ()
    assert by_name.to_dict()["filters"]["about"] == ["project:atlas"]


def test_filters_follow_new_records(private: Path) -> None:
    with graphmem.open(private) as m:
        assert m.search("kuzu", kind="runbook").results == ()  # reads the filter columns
        m.note("kuzu restart runbook", kind="runbook", source="wiki:ops", ts="2026-01-01")
        assert [h.kind for h in m.search("kuzu", kind="runbook", source="wiki:").results] == ["runbook"]
        assert refs(m.search("kuzu", since="2026-01-01")) == ["rec:64"]
        assert refs(m.search("kuzu", about="Redis")) == ["rec:61", "rec:62", "rec:63"]  # held per entity
        new = m.note("Redis sits in front of kuzu now.", ts="2026-02-01").ref
        m.extract_records([new], apply=True)
        assert refs(m.search("kuzu", about="Redis", since="2026-01-01")) == [new]


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.sampled_from([*KINDS, "decision"]), max_size=2),
       sources=st.lists(st.sampled_from(["file:notes.md", "slack:", "rec:1", "rec:12"]), max_size=2),
       since=st.none() | st.sampled_from(["2025-02-01", "2025-06-15"]),
       until=st.none() | st.sampled_from(["2025-07-01", "2026-01-01"]),
       about=st.sampled_from([[], ["Atlas"], ["Redis", "Atlas"]]),
       limit=st.integers(1, 80))
def test_filtered_search_is_the_full_ranking_cut_to_the_filter(shared: graphmem.Memory, kinds: list[str],
                                                              sources: list[str], since: str | None,
                                                              until: str | None, about: list[str],
                                                              limit: int) -> None:
    """The general rule: the hits of a filtered search are the unfiltered ranking's records that
    pass the filter, in the same order, as many as the limit allows."""
    lo = utc(parse_instant(since)) if since else None
    hi = utc(parse_instant(until)) if until else None
    mentioning = {"rec:61", "rec:62", "rec:63"} if about else None

    def passes(h: graphmem.SearchHit) -> bool:  # type: ignore[name-defined]
        return ((not kinds or h.kind in kinds) and (not sources or any(source_matches(h.source or "", s) and h.source
                                                                         for s in sources))
                and (lo is None or h.ts >= lo) and (hi is None or h.ts < hi)
                and (mentioning is None or h.ref in mentioning))
    every = shared.search("kuzu", limit=1000)
    want = [h.ref for h in every.results if passes(h)][:limit]
    got = shared.search("kuzu", limit=limit, kind=kinds or None, source=sources or None, since=since, until=until,
                        about=about or None)
    assert refs(got) == want


def test_pack_uses_only_the_records_the_filter_allows(shared: graphmem.Memory) -> None:
    r = shared.pack("kuzu", trace=True, kind="decision", budget_tokens=400)
    records = [c for name, _, cands in r.lanes if name in ("records", "guidance") for c in cands if c.kind == "record"]
    assert records and all(shared.record(c.ref).kind == "decision" for c in records)
    assert r.to_dict()["meta"]["filters"]["kind"] == ["decision"]
    plain = shared.pack("kuzu", trace=True, budget_tokens=400)
    assert plain.to_dict()["meta"]["filters"] == {}
    ranked = {c.ref for name, _, cands in plain.lanes if name in ("records", "guidance") for c in cands
              if c.kind == "record"}
    assert len(ranked) >= 10 and ranked == set(refs(shared.search("kuzu", limit=len(ranked))))  # the plain ranking's best
    assert {c.ref for c in records} != ranked


@pytest.mark.parametrize(("args", "named"), [
    (["--kind", "Not A Kind"], "Not A Kind"),
    (["--since", "soon"], "soon"),
    (["--until", "2024-01-01", "--since", "2025-01-01"], "2024-01-01"),
    (["--about", "nobody-here"], "nobody-here"),
    (["--source", " "], "source"),
])
@pytest.mark.parametrize("command", ["search", "pack"])
def test_cli_bad_filters_are_one_line_exit_2(private: Path, args: list[str], named: str, command: str) -> None:
    path = private
    head = ["search", "kuzu"] if command == "search" else ["pack", "--query", "kuzu"]
    one_clear_line(cli(path, *head, *args), 2, [named])


def test_cli_search_and_pack_filters(private: Path) -> None:
    path = private
    r = cli(path, "--json", "search", "kuzu", "--kind", "decision", "--kind", "doc", "--source", "file:notes.md",
            "--since", "2025-01-01", "--until", "2026-01-01", "-n", "50")
    assert r.code == 0, r
    doc = r.json()
    assert doc["filters"] == {"kind": ["decision", "doc"], "source": ["file:notes.md"],
                              "since": "2025-01-01T00:00:00Z", "until": "2026-01-01T00:00:00Z", "about": []}
    assert doc["results"] and all(h["kind"] in ("decision", "doc") and h["source"].startswith("file:notes.md#")
                                  for h in doc["results"])
    a = cli(path, "--json", "search", "kuzu", "--about", "Atlas")
    assert [h["ref"] for h in a.json()["results"]] == ["rec:61", "rec:62", "rec:63"]
    p = cli(path, "--json", "pack", "--query", "kuzu", "--about", "Redis", "--trace")
    assert p.code == 0, p
    cands = [c for lane in p.json()["trace"]["lanes"] if lane["lane"] == "records" for c in lane["candidates"]]
    assert cands and {c["ref"] for c in cands} <= {"rec:61", "rec:62", "rec:63"}


@pytest.mark.parametrize("ts", ["1969-12-31T23:59:59.999500Z", "1900-05-01T10:00:00.123456Z", "1969-12-31T23:59:59.999Z",
                                "2025-03-03T00:00:00.000001Z", "0001-01-01T00:00:00.000007Z",
                                "9999-12-31T23:59:59.999998Z"])
def test_record_time_filters_are_exact_to_the_microsecond(mem: graphmem.Memory, ts: str) -> None:
    """The filter columns hold each record's ts as stored (Kuzu's milliseconds are cut toward zero)."""
    ref = mem.note(f"kuzu at {ts}", ts=ts).ref
    us = mem.record(ref).ts_us
    assert int(mem.store.record_facets().ts[-1]) == us
    assert refs(mem.search("kuzu", since=ts)) == [ref]
    assert refs(mem.search("kuzu", until=ts)) == []
    later = format_instant(us + 1)
    assert later is not None and later != ts
    assert refs(mem.search("kuzu", since=later)) == []
    assert refs(mem.search("kuzu", until=later)) == [ref]
