"""The large-import path (statements streamed to a bulk file, views read back grouped by Kuzu) gives
what the small path gives: the same statements, ids, retractions and views."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE

import graphmem
from graphmem import bulk
from graphmem.transfer import importer
from graphmem.transfer.lines import _count
from graphmem.view import rebuild as view_rebuild


@pytest.fixture
def exported(demo: graphmem.Memory, tmp_path: Path) -> Path:
    f = tmp_path / "demo.jsonl"
    f.write_text(demo.export(), encoding="utf-8")
    return f


def _state(m: graphmem.Memory) -> tuple[str, dict[str, tuple[str, str, str]]]:
    """The export and every subject's stored row (name, log, view), read in the engine's own language."""
    rows = (m.store._q("SELECT ref, name, log, view FROM subject") if TEST_ENGINE == "postgresql"
            else m.store._q("MATCH (s:Subject) RETURN s.ref, s.name, s.log, s.view"))
    subjects = {r: (n, log, view) for r, n, log, view in rows}
    return m.export(), subjects


def _bulk_left(store: Path) -> list[Path]:
    """The bulk files an import left in an embedded store's folder (its tmp/). A PostgreSQL store has no
    folder: its batches gather in memory or in temporary files they remove."""
    return [] if TEST_ENGINE == "postgresql" else list((Path(store) / "tmp").glob("*"))


@pytest.mark.parametrize("reload_all", [True, False])
def test_large_import_equals_small_import(exported: Path, new_store: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch,
                                          reload_all: bool) -> None:
    small, large = graphmem.open(new_store("small"), create=True), graphmem.open(new_store("large"), create=True)
    if not reload_all:  # stores with statements already, and few touched subjects: written one by one
        for m in (small, large):
            m.add_entity("Project", "Seed")
            m.assert_("Seed", "status", "active", valid_from="2020-01-01", recorded_at="2020-01-01T00:00:00Z")
    assert small.import_jsonl(exported).written
    monkeypatch.setattr(importer, "BULK_LINES", 1)  # every file is large
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)  # and streams its statements to a bulk file
    monkeypatch.setattr(importer, "_RELOAD_SUBJECTS", 0 if reload_all else 10_000)
    real = bulk.forked_map
    monkeypatch.setattr(view_rebuild, "forked_map", lambda fn, items: real(fn, items, min_items=0))  # two processes
    report = large.import_jsonl(exported)
    n = sum(1 for line in exported.read_text(encoding="utf-8").splitlines() if json.loads(line)["op"] in ("assert", "end"))
    assert report.written and report.statements == n
    assert _state(large)[1] == _state(small)[1]
    assert large.export() == small.export()
    assert large.rebuild(check=True).drift == ()
    assert not _bulk_left(new_store("large"))  # bulk files removed


def test_large_import_retracts_facts_of_the_same_file_and_of_the_store(exported: Path, tmp_path: Path,
                                                                        new_store: Callable[[str], Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    m = graphmem.open(new_store("s"), create=True)  # (not store_path: the demo copy's, on PostgreSQL)
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
    now = m.current("project:atlas", predicate="status").to_dict()["facts"]
    assert [x["object"]["value"] for x in now] == ["paused"]
    assert m.rebuild(check=True).drift == ()


def test_a_strict_large_import_with_an_error_writes_nothing(exported: Path, tmp_path: Path,
                                                            new_store: Callable[[str], Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    m = graphmem.open(new_store("s"), create=True)  # (not store_path: the demo copy's, on PostgreSQL)
    f = tmp_path / "bad.jsonl"
    f.write_text(exported.read_text(encoding="utf-8") + '{"op": "assert", "subject": "nobody"}\n', encoding="utf-8")
    report = m.import_jsonl(f, strict=True)
    assert not report.written and report.statements == 0
    assert m.store.statement_count() == 0 and m.store.entity_count() == 0
    assert not _bulk_left(new_store("s"))


def _two_core_file(tmp_path: Path, bad: dict[int, str] | None = None) -> tuple[Path, int]:
    """Entities, then 400 plain assert lines (one of them optionally replaced), a retraction of a
    statement in the second half (by the id the file gives it), and more asserts: the plain run
    is read on two cores."""
    lines: list[Any] = [{"op": "entity", "type": "Project", "name": f"P{i}"} for i in range(20)]
    lines += [{"op": "entity", "type": "Tool", "name": f"T{i}"} for i in range(10)]
    for i in range(400):
        lines.append({"op": "assert", "id": f"fact:{1000 + i}", "subject": f"project:p{i % 20}",
                      "predicate": "uses" if i % 3 else "status", "object": f"tool:t{i % 10}" if i % 3 else "active",
                      "valid_from": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", "sources": [f"https://example.org/{i}"],
                      "recorded_at": "2025-01-01T00:00:00Z"})
    lines.append({"op": "retract", "fact": "fact:1390", "at": "2025-02-01T00:00:00Z", "reason": "wrong"})
    lines += [{"op": "assert", "subject": "project:p1", "predicate": "status", "object": "paused",
               "valid_from": "2025-01-01", "recorded_at": "2025-01-02T00:00:00Z"}]
    text = [json.dumps(x) for x in lines]
    for i, line in (bad or {}).items():
        text[i] = line
    f = tmp_path / "plain.jsonl"
    f.write_text("\n".join(text) + "\n", encoding="utf-8")
    return f, len(text)


def _sequential_and_two_core(f: Path, new_store: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch,
                             strict: bool = False) -> tuple[Any, Any, graphmem.Memory, graphmem.Memory, list[int]]:
    from graphmem import store as store_mod
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    seq, two = graphmem.open(new_store("seq"), create=True), graphmem.open(new_store("two"), create=True)
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 10**12)  # no run is this long: one core
    r_seq = seq.import_jsonl(f, strict=strict)
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 0)
    adopted: list[int] = []  # the child's statements, taken when its ids hold
    batch: Any = store_mod.StatementFile  # the engine's batch of imported statements, and what a child hands over
    if TEST_ENGINE == "postgresql":
        from graphmem.store.postgres.statements import PgStatementBatch
        batch = PgStatementBatch

    def rows(other: Any) -> int:  # a Kuzu child's bulk file, or the file a PostgreSQL child's batch finished
        return int(other.rows) if hasattr(other, "rows") else len(pickle.loads(Path(other).read_bytes()))
    real_adopt = batch.adopt
    monkeypatch.setattr(batch, "adopt", lambda self, other: (adopted.append(rows(other)), real_adopt(self, other))[1])
    r_two = two.import_jsonl(f, strict=strict)
    return r_seq, r_two, seq, two, adopted


def test_plain_run_is_the_longest_stretch_of_plain_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 0)
    lines = ['{"op": "entity", "type": "Tool", "name": "A"}'] + ['{"op": "assert", "x": 1}'] * 6 + [
        '{"op": "retract", "fact": "fact:1"}'] + ['{"op": "assert", "x": 2}'] * 3 + [
        '{"op": "assert", "sources": ["rec:1"]}', '{"op": "assert", "s": "\\u00e9"}']
    f = tmp_path / "f.jsonl"
    f.write_bytes(("\n".join(lines) + "\n").encode())
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    run = importer._plain_run(f)
    assert run is not None
    start, middle, end = run
    assert (start, end) == (starts[1], starts[7])  # the six lines after the entity line
    assert middle in starts[2:7]  # a line start inside the run
    assert _count(f, start, middle, nonblank=True) == (starts.index(middle) - 1,) * 2
    assert _count(f, 0, end) == (7, 0) and _count(f, 0, end, nonblank=True) == (7, 7)
    monkeypatch.setattr(importer, "PARALLEL_BYTES", end - start + 1)  # shorter than that: one core
    assert importer._plain_run(f) is None


@pytest.mark.parametrize("seed", range(6))
def test_the_line_count_of_a_half_without_blank_lines_equals_the_count_line_by_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """``_count(..., nonblank=True)`` counts lines without cutting them out when no line may be blank; a
    range that holds a blank line, or one of white space, or a line starting with white space, is counted
    line by line. Both give what counting each line gives, also across the reading's blocks."""
    import random

    from graphmem.transfer import lines as file_lines
    rng = random.Random(seed)
    monkeypatch.setattr(file_lines, "_count_unless_blank", file_lines._count_unless_blank)
    rows = [rng.choice(['{"op": "assert"}', "x", " y", "\tz", "", " ", "\r", "\x0b", "\x0cw", "a b"])
            if rng.random() < (0.3 if seed % 2 else 0) else f'{{"op": "assert", "n": {i}}}' for i in range(400)]
    data = "\n".join(rows) + ("\n" if seed < 4 else "")
    f = tmp_path / "f.jsonl"
    f.write_bytes(data.encode())
    starts = [0] + [i + 1 for i, c in enumerate(data.encode()) if c == 10 and i + 1 < len(data)]
    for lo, hi in [(0, len(data)), (starts[50], starts[300]), (starts[7], starts[7]), (starts[399], len(data))]:
        text = data.encode()[lo:hi]
        expected = (text.count(b"\n"), sum(1 for line in text.split(b"\n") if line.strip()))
        assert _count(f, lo, hi, nonblank=True) == expected
    monkeypatch.setattr(file_lines, "_count_unless_blank", lambda *a: None)  # line by line: the same
    assert _count(f, 0, len(data), nonblank=True) == (data.count("\n"), sum(1 for r in rows if r.strip()))


def test_the_count_reads_across_blocks(tmp_path: Path) -> None:
    """A line break at the end of one 16 MB block and a blank line at the start of the next is found."""
    from graphmem.transfer import lines as file_lines
    block = 16 * 2**20
    line = b"x" * 1023 + b"\n"
    f = tmp_path / "f.jsonl"
    f.write_bytes(line * (block // len(line)) + b"\n" + line)
    assert file_lines._count_unless_blank(f, 0, f.stat().st_size) is None
    assert _count(f, 0, f.stat().st_size, nonblank=True) == (block // len(line) + 2, block // len(line) + 1)
    f.write_bytes(line * (block // len(line)) + line)
    assert file_lines._count_unless_blank(f, 0, f.stat().st_size) == (block // len(line) + 1,) * 2


def test_a_file_without_a_backslash_is_not_searched_for_escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An escape (``\\u``) ends a run of plain lines; a file holding no backslash has none, and a backslash
    that starts no escape ends no run."""
    monkeypatch.setattr(importer, "PARALLEL_BYTES", 0)
    f = tmp_path / "f.jsonl"
    plain = [f'{{"op": "assert", "x": {i}}}' for i in range(8)]
    f.write_text("\n".join(plain) + "\n")
    assert importer._plain_run(f)[::2] == (0, f.stat().st_size)  # type: ignore[index]
    f.write_text("\n".join(plain[:3] + ['{"op": "assert", "s": "a\\\\b"}'] + plain[3:]) + "\n")
    assert importer._plain_run(f)[::2] == (0, f.stat().st_size)  # type: ignore[index]
    f.write_text("\n".join(plain[:2] + ['{"op": "assert", "s": "\\u00e9"}'] + plain[2:]) + "\n")
    start, _, end = importer._plain_run(f)  # type: ignore[misc]
    assert start > 0 and end == f.stat().st_size  # the five lines after the escape


def test_two_core_import_equals_one_core(tmp_path: Path, new_store: Callable[[str], Path],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    f, _ = _two_core_file(tmp_path)
    r_seq, r_two, seq, two, adopted = _sequential_and_two_core(f, new_store, monkeypatch)
    assert len(adopted) == 2 and 0 < adopted[0] < 400 and sum(adopted) == 400  # each half came from a child
    assert r_two.to_dict() | {"seconds": 0} == r_seq.to_dict() | {"seconds": 0}
    assert r_two.errors == () and r_two.statements == 401 and r_two.retractions == 1
    assert _state(two) == _state(seq)
    # fact:1390 in the file is its 391st statement, read by the child
    assert two.why("fact:391").statement.retracted_at is not None
    assert two.why("fact:390").statement.retracted_at is None
    assert two.rebuild(check=True).drift == ()
    assert not _bulk_left(new_store("two"))


@pytest.mark.parametrize("where", [35, 380])  # an error in the first half (the child's ids are off), in the second
def test_two_core_import_with_a_bad_line_equals_one_core(tmp_path: Path, new_store: Callable[[str], Path],
                                                         monkeypatch: pytest.MonkeyPatch, where: int) -> None:
    f, _ = _two_core_file(tmp_path, bad={where: '{"op": "assert", "subject": "project:p1", "predicate": "nope", '
                                                '"object": "x"}'})
    r_seq, r_two, seq, two, adopted = _sequential_and_two_core(f, new_store, monkeypatch)
    assert [n for n, _ in r_two.errors] == [where + 1] and "nope" in r_two.errors[0][1]
    assert r_two.to_dict() | {"seconds": 0} == r_seq.to_dict() | {"seconds": 0}
    assert _state(two) == _state(seq)
    # the first half always comes from a child; after an error before the middle the second is read again here
    assert len(adopted) == (2 if where > 230 else 1)
    assert not _bulk_left(new_store("two"))


def test_strict_two_core_import_with_an_error_in_the_second_half_writes_nothing(tmp_path: Path,
                                                                               new_store: Callable[[str], Path],
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    f, _ = _two_core_file(tmp_path, bad={400: "not json"})
    _, r_two, _, two, _ = _sequential_and_two_core(f, new_store, monkeypatch, strict=True)
    assert not r_two.written and [n for n, _ in r_two.errors] == [401]
    assert two.store.statement_count() == 0 and two.store.entity_count() == 0
    assert not _bulk_left(new_store("two"))


def test_a_large_import_reads_awkward_values_back_from_its_bulk_files(tmp_path: Path, new_store: Callable[[str], Path],
                                                                      odd_predicates: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Into an empty store, the large path computes the view from its own bulk files: every value must
    come back as it went in (text with tabs, line breaks and quotes, numbers, bools, ends, retractions)."""
    day = "2024-01-0{}".format
    lines: list[dict[str, Any]] = [
        {"op": "entity", "type": "Project", "name": "Odd"}, {"op": "entity", "type": "Tool", "name": "Quill"},
        {"op": "entity", "type": "Tool", "name": "Ink"},
        {"op": "assert", "subject": "Odd", "predicate": "summary", "object": '"starts with a quote', "valid_from": day(1)},
        {"op": "assert", "subject": "Odd", "predicate": "summary", "object": 'tab\there\nnew "line" é 中 😀 \\',
         "valid_from": day(2)},
        {"op": "assert", "subject": "Odd", "predicate": "score", "object": "1e-05", "valid_from": day(1)},
        {"op": "assert", "subject": "Odd", "predicate": "score", "object": -2.5e300, "valid_from": day(2)},
        {"op": "assert", "subject": "Odd", "predicate": "seats", "object": "-9007199254740993", "valid_from": day(1)},
        {"op": "assert", "subject": "Odd", "predicate": "public", "object": "yes", "valid_from": day(1)},
        {"op": "assert", "subject": "Odd", "predicate": "uses", "object": "Quill", "valid_from": day(1),
         "sources": ['https://x.example/a"b\\c', "https://x.example/2"]},
        {"op": "assert", "subject": "Odd", "predicate": "uses", "object": "Ink", "valid_from": day(2), "id": "fact:77"},
        {"op": "end", "subject": "Odd", "predicate": "uses", "object": "Quill", "at": day(5)},
        {"op": "end", "subject": "Odd", "predicate": "score", "at": day(6)},
        {"op": "assert", "subject": "Odd", "predicate": "homepage", "object": "https://odd.example/x?y=1",
         "valid_from": day(3)},
        {"op": "assert", "subject": "Odd", "predicate": "status", "object": "active", "valid_from": day(1),
         "asserted_by": "agent", "recorded_at": "2024-01-02T03:04:05.000250Z"},
        {"op": "retract", "fact": "fact:77", "at": "2025-01-01T00:00:00Z", "reason": 'typo: "x" \\ again\tand\nmore'},
    ]
    for x in lines:
        if x["op"] in ("assert", "end"):
            x.setdefault("recorded_at", "2024-02-01T00:00:00Z")
    f = tmp_path / "odd.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    small = graphmem.open(new_store("small"), predicate_dirs=[odd_predicates], create=True)
    large = graphmem.open(new_store("large"), predicate_dirs=[odd_predicates], create=True)
    assert small.import_jsonl(f).errors == ()
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)
    read_back: list[int] = []
    real = importer._views_from_files
    monkeypatch.setattr(importer, "_views_from_files", lambda *a: read_back.append(1) or real(*a))
    report = large.import_jsonl(f)
    assert report.errors == ()
    if TEST_ENGINE != "postgresql":  # PostgreSQL: the view is computed again from the rows just loaded
        assert read_back == [1]  # the view came from the bulk files
    assert _state(large) == _state(small)
    assert large.timeline("Odd", known_at="2026-01-01").to_dict() == small.timeline("Odd", known_at="2026-01-01").to_dict()
    assert large.rebuild(check=True).drift == ()
    assert not _bulk_left(new_store("large"))


def test_view_computed_in_a_thread_equals_the_view_computed_after_the_load(exported: Path, new_store: Callable[[str], Path],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An import into an empty store of THREAD_VIEW_STATEMENTS or more statements (held in memory) computes
    its view in a thread while its statements load: the same rows as the view computed after the load."""
    here, forked = graphmem.open(new_store("here"), create=True), graphmem.open(new_store("forked"), create=True)
    monkeypatch.setattr(importer, "THREAD_VIEW_STATEMENTS", 10**9)
    assert here.import_jsonl(exported).written
    children = []
    real = importer._views_from_list

    def counted(*args: Any) -> Any:
        children.append(1)
        return real(*args)

    monkeypatch.setattr(importer, "THREAD_VIEW_STATEMENTS", 1)
    monkeypatch.setattr(importer, "_views_from_list", counted)
    assert forked.import_jsonl(exported).written
    assert children  # the forked path was taken
    assert _state(forked) == _state(here)
    assert forked.rebuild(check=True).drift == ()
    assert not _bulk_left(new_store("forked"))  # view files removed


def test_a_name_an_entity_line_adds_later_resolves_on_the_lines_after_it(store_path: Path) -> None:
    """Statement lines check each distinct subject and object once (``Memo``); an entity line in between
    can make a name resolve otherwise (here: ambiguous), and the lines after it see that."""
    m = graphmem.open(store_path, create=True)
    lines = [
        {"op": "entity", "type": "Project", "name": "Atlas"},
        {"op": "entity", "type": "Person", "name": "Ada", "aliases": ["Lead"]},
        {"op": "assert", "subject": "Atlas", "predicate": "owner", "object": "Lead", "valid_from": "2024-01-01"},
        {"op": "entity", "type": "Person", "name": "Bo", "aliases": ["Lead"]},
        {"op": "assert", "subject": "Atlas", "predicate": "owner", "object": "Lead", "valid_from": "2024-02-01"},
        {"op": "assert", "subject": "Atlas", "predicate": "owner", "object": "Ada", "valid_from": "2024-03-01"},
    ]
    report = m.import_jsonl([json.dumps(x) for x in lines])
    assert [e[0] for e in report.errors] == [5]
    assert "ambiguous" in report.errors[0][1]
    assert report.statements == 2


def test_bulk_rows_of_long_values_are_quoted_when_one_starts_with_a_quote() -> None:
    """Rows of long values (a view's JSON, a log) are checked for a leading quote value by value; a row
    whose value starts with one is written quoted, as rows of short values are."""
    from graphmem.store.kuzu.bulkfiles import _tsv
    long = "[" + ", ".join(['["status", "active"]'] * 20) + "]"
    plain = [["project:a", "A", long, long], ["project:b", "B", long, long]]
    assert _tsv(plain, False) == ("\n".join("\t".join(r) for r in plain) + "\n", False)
    for at in range(4):
        odd = [list(r) for r in plain]
        odd[1][at] = '"' + odd[1][at]
        text, breaks = _tsv(odd, False)
        assert not breaks and text.splitlines()[1].split("\t")[at] == '"' + odd[1][at].replace('"', '""') + '"'
        short = [[v[:3] for v in r] for r in odd]  # short values: the text is searched instead
        assert _tsv(short, False)[0].splitlines()[1].split("\t")[at].startswith('""')


def test_a_subject_named_with_a_leading_quote_keeps_its_name_through_the_bulk_view(
        tmp_path: Path, new_store: Callable[[str], Path]) -> None:
    """A subject whose name starts with a quote, with a long log and view: its bulk row is quoted, and
    the stored name is the entity's."""
    lines = [{"op": "entity", "type": "Project", "name": '"Quoted" Atlas'}]
    lines += [{"op": "assert", "subject": "project:quoted-atlas", "predicate": "status",
               "object": ["idea", "active", "done"][k % 3], "valid_from": f"2024-01-{k + 1:02d}",
               "sources": [f"https://q.example/{k}"]} for k in range(25)]
    f = tmp_path / "quoted.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    m = graphmem.open(new_store("quoted"), create=True)
    assert m.import_jsonl(f, strict=True).statements == 25
    name, view = m.store.subject_name_and_view("project:quoted-atlas")
    assert name == '"Quoted" Atlas' and len(view) == 25
    assert m.rebuild(check=True).drift == ()


def _grouped_file(tmp_path: Path, tail: list[dict[str, Any]]) -> Path:
    """Entities, then 400 plain assert lines grouped by subject (20 each, so one subject straddles the
    middle), then ``tail``: the children of a two-core read hold their subjects' statements alone."""
    lines: list[Any] = [{"op": "entity", "type": "Project", "name": f"P{i}"} for i in range(20)]
    lines += [{"op": "entity", "type": "Tool", "name": f"T{i}"} for i in range(10)]
    for i in range(400):
        lines.append({"op": "assert", "id": f"fact:{1000 + i}", "subject": f"project:p{(i // 20 + 7) % 20}",
                      "predicate": "uses" if i % 3 else "status", "object": f"tool:t{i % 10}" if i % 3 else
                      ["active", "paused", "done"][i % 2], "valid_from": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
                      "valid_to": None if i % 4 else "2025-03-01", "sources": [f"https://example.org/{i}"],
                      "recorded_at": "2025-01-01T00:00:00Z"})
    f = tmp_path / "grouped.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines + tail) + "\n", encoding="utf-8")
    return f


def _spy_views(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """How many view parts the reading children made (one list entry an import), and how often the view
    was computed by a second pair of children instead."""
    fused: list[int] = []
    again: list[int] = []
    real_views, real_files = importer._Halves.views, importer._views_from_files

    def views(self: Any, *args: Any) -> Any:
        got = real_views(self, *args)
        fused.append(0 if got is None else len(got))
        return got
    monkeypatch.setattr(importer._Halves, "views", views)
    monkeypatch.setattr(importer, "_views_from_files", lambda *a: again.append(1) or real_files(*a))
    return fused, again


@pytest.mark.parametrize("tail", [[], [{"op": "retract", "fact": "fact:1003", "at": "2025-02-01T00:00:00Z", "reason": "no"},
                                       {"op": "retract", "fact": "fact:1390", "at": "2025-02-02T00:00:00Z"}]])
def test_the_reading_children_compute_the_view_of_a_file_grouped_by_subject(
        tmp_path: Path, new_store: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, tail: list[Any]) -> None:
    """A file grouped by subject: each reading child computes the view of the subjects only it read (with
    the retractions read after it, in either half), the subject both read is computed here; the store
    holds what reading it on one core gives."""
    fused, again = _spy_views(monkeypatch)
    f = _grouped_file(tmp_path, tail)
    r_seq, r_two, seq, two, adopted = _sequential_and_two_core(f, new_store, monkeypatch)
    assert len(adopted) == 2 and r_two.errors == () and r_two.retractions == len(tail)
    assert r_two.to_dict() | {"seconds": 0} == r_seq.to_dict() | {"seconds": 0}
    assert _state(two) == _state(seq)
    if bulk._can_fork([0, 1], 2):
        # two children's parts and the straddling subject's (the one-core import computed its own as before)
        assert fused == [3] and again == [1]
    assert two.rebuild(check=True).drift == ()
    assert not _bulk_left(new_store("two"))


def test_a_file_in_random_order_has_its_view_computed_as_before(tmp_path: Path, new_store: Callable[[str], Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Subjects spread over both halves: the children end without a view; two more compute it from the
    bulk files. The same goes for a file whose later lines add statements (read here, not by the children)."""
    fused, again = _spy_views(monkeypatch)
    f, _ = _two_core_file(tmp_path)  # (its last line is a statement, read here)
    r_seq, r_two, seq, two, _ = _sequential_and_two_core(f, new_store, monkeypatch)
    assert _state(two) == _state(seq) and fused == [0] and again == [1, 1]  # (one of them the one-core import's)
    import random
    lines = f.read_text().splitlines()
    entities, asserts = lines[:30], [x for x in lines[30:] if '"fact:1' in x and '"assert"' in x]
    random.Random(4).shuffle(asserts)  # every statement read by the children, subjects in both halves
    f.write_text("\n".join(entities + asserts) + "\n")
    fused.clear()
    again.clear()
    r_seq, r_two, seq, two, _ = _sequential_and_two_core(f, lambda name: new_store(name + "-shuffled"), monkeypatch)
    assert _state(two) == _state(seq) and r_two.errors == () and r_two.statements == 400
    if bulk._can_fork([0, 1], 2):
        assert fused == [0] and again == [1, 1]


def test_a_reading_child_that_fails_on_the_view_leaves_it_to_the_others(
        tmp_path: Path, new_store: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A child that fails while it computes its view: what the other made is dropped, the view computed as
    without them, nothing left behind."""
    fused, again = _spy_views(monkeypatch)
    from graphmem.transfer import halves
    real = halves._view_of_kept
    parent = os.getpid()

    def failing(store: Any, registry: Any, kept: Any, names: Any, reply: Any) -> Any:
        if os.getpid() != parent and "project:p7" in kept:  # the first child
            raise RuntimeError("no room")
        return real(store, registry, kept, names, reply)
    monkeypatch.setattr(halves, "_view_of_kept", failing)
    f = _grouped_file(tmp_path, [])
    _, r_two, seq, two, _ = _sequential_and_two_core(f, new_store, monkeypatch)
    assert r_two.errors == () and _state(two) == _state(seq)
    if bulk._can_fork([0, 1], 2):
        assert fused == [0] and again == [1, 1]
    assert not _bulk_left(new_store("two"))
