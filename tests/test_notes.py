"""Notes and text files as evidence (issue 19, item 4): ``graphmem note``, ``Memory.note``, and
``ingest`` of Markdown and plain-text files (a record per section or paragraph, citing file and
line), with import's exit-code rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import assert_no_store, cli, one_clear_line
from hypothesis import given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.evidence.records import MAX_CHARS
from graphmem.evidence.textfiles import blocks, file_format

NOTES_MD = """\
# Atlas notes

Kickoff notes for the Atlas project.

## March
We decided to move Atlas from SQLite to Kuzu.

```
# a comment in code, not a heading
```

### Empty heading
## April
Redis cache added to Atlas.
"""


def records(m: graphmem.Memory, refs: tuple[str, ...]) -> list[dict[str, object]]:
    return [m.record(r).to_dict() for r in refs]


# note -------------------------------------------------------------------------------------


def test_note_stores_one_record_with_its_fields(mem: graphmem.Memory) -> None:
    r = mem.note("Atlas moved to Kuzu.", kind="doc", source="slack:#atlas", scope="agent:a", ts="2024-03-01")
    assert (r.ref, r.stored) == ("rec:1", True)
    d = mem.record("rec:1").to_dict()
    assert (d["text"], d["kind"], d["source"], d["scope"], d["ts"]) == (
        "Atlas moved to Kuzu.", "doc", "slack:#atlas", "agent:a", "2024-03-01T00:00:00Z")
    assert [h.ref for h in mem.search("kuzu").results] == ["rec:1"]
    doc = r.to_dict()
    assert doc["schema"] == "graphmem.note.v1" and doc["ref"] == "rec:1" and doc["record"]["kind"] == "doc"


def test_note_defaults_and_same_note_twice_writes_nothing(mem: graphmem.Memory) -> None:
    first = mem.note("Lunch at noon, then the Atlas review.")
    assert first.record.kind == "note" and first.record.ts == first.record.ingested_at
    again = mem.note("Lunch at noon, then the Atlas review.")
    assert (again.ref, again.stored) == (first.ref, False)
    assert mem.store.record_count() == 1
    other = mem.note("Lunch at noon, then the Atlas review.", ts="2024-05-01")
    assert other.stored and other.ref == "rec:2"


def test_note_is_redacted_and_bounded(mem: graphmem.Memory) -> None:
    r = mem.note("deploy key AKIAIOSFODNN7EXAMPLE " + "x" * (MAX_CHARS + 10))
    assert "[REDACTED:aws_access_key]" in r.record.text and "AKIA" not in r.record.text
    assert r.record.truncated


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"text": "  "}, "note"),
    ({"text": "ok", "kind": "Big Kind"}, "Big Kind"),
    ({"text": "ok", "ts": "last march"}, "last march"),
    ({"text": "bad \ud800 surrogate"}, "text"),
])
def test_note_bad_input_writes_nothing(mem: graphmem.Memory, kwargs: dict[str, str], named: str) -> None:
    with pytest.raises(graphmem.BadInput, match="expected") as e:
        mem.note(**kwargs)
    assert named in str(e.value)
    assert mem.store.record_count() == 0


def test_cli_note_prints_its_ref_and_json(store_path: Path) -> None:
    store = store_path
    assert cli(store, "init").code == 0
    r = cli(store, "note", "Atlas moved to Kuzu.", "--kind", "doc", "--source", "meeting", "--ts", "2024-03-01")
    assert r.code == 0 and r.out.strip() == "rec:1", r
    j = cli(store, "note", "Second note", "--scope", "user:ana", "--json")
    assert j.code == 0, j
    doc = j.json()
    assert doc["schema"] == "graphmem.note.v1" and doc["ref"] == "rec:2" and doc["stored"] is True
    assert doc["record"]["scope"] == "user:ana"
    again = cli(store, "note", "Second note", "--scope", "user:ana")
    assert again.code == 0 and again.out.strip() == "rec:2" and "already stored as rec:2" in again.err


@pytest.mark.parametrize(("args", "named"), [
    (["note", ""], "note"),
    (["note", "x", "--ts", "someday"], "someday"),
    (["note", "x", "--kind", "Not A Kind"], "Not A Kind"),
])
def test_cli_note_bad_input_one_line_exit_2_no_store_left(store_path: Path, args: list[str], named: str) -> None:
    store = store_path
    assert cli(store, "init").code == 0
    one_clear_line(cli(store, *args), 2, [named])
    assert cli(store, "--json", "export").json()["lines"] == []  # nothing written


# ingest of Markdown and text -------------------------------------------------------------------


def test_markdown_one_record_per_section_citing_file_and_line(mem: graphmem.Memory, tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    f.write_text(NOTES_MD)
    r = mem.ingest(f)
    assert r.errors == () and r.format == "markdown"
    recs = records(mem, r.stored)
    name = "file:" + os.path.normpath(str(f))
    assert [(x["source"], x["kind"]) for x in recs] == [(f"{name}#L1", "doc"), (f"{name}#L5", "doc"),
                                                      (f"{name}#L13", "doc")]
    assert recs[0]["text"] == "# Atlas notes\n\nKickoff notes for the Atlas project."
    assert recs[1]["text"].startswith("## March\nWe decided") and "# a comment in code" in recs[1]["text"]
    assert recs[1]["meta"] == {"file": name, "lines": [5, 10], "headings": ["Atlas notes", "March"]}
    assert recs[2]["text"] == "## April\nRedis cache added to Atlas."
    assert all(x["ts"] == recs[0]["ts"] for x in recs)  # dated by the file's last change
    assert [h.ref for h in mem.search("redis").results] == [r.stored[2]]


def test_reingesting_an_edited_file_adds_only_what_is_new(mem: graphmem.Memory, tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("First paragraph\nstill first.\n\nSecond paragraph.\n")
    one = mem.ingest(f)
    assert len(one.stored) == 2 and one.format == "text"
    assert mem.ingest(f).stored == ()
    f.write_text("A new opening paragraph.\n\nFirst paragraph\nstill first.\n\nSecond paragraph.\n")
    two = mem.ingest(f)
    assert len(two.stored) == 1 and two.duplicates == 2
    assert mem.record(two.stored[0]).text == "A new opening paragraph."


def test_text_paragraphs_and_format_override(mem: graphmem.Memory, tmp_path: Path) -> None:
    f = tmp_path / "log.jsonl"  # named like JSON lines, read as text when told
    f.write_text("one\ntwo\n\n\nthree\n")
    r = mem.ingest(f, format="text")
    assert [mem.record(x).text for x in r.stored] == ["one\ntwo", "three"]
    assert [mem.record(x).source for x in r.stored] == [f"file:{os.path.normpath(str(f))}#L{n}" for n in (1, 5)]
    assert [mem.record(x).kind for x in r.stored] == ["note", "note"]


def test_stdin_markdown_is_named_stdin(mem: graphmem.Memory) -> None:
    r = mem.ingest([b"# Title\n", b"body\n"], format="markdown")
    assert mem.record(r.stored[0]).source == "stdin#L1"


@pytest.mark.parametrize(("name", "expected"), [("a.md", "markdown"), ("a.MARKDOWN", "markdown"), ("a.txt", "text"),
                                                ("a.jsonl", "jsonl"), ("a", "jsonl"), ("-", "jsonl")])
def test_format_by_extension(name: str, expected: str) -> None:
    assert file_format(name) == expected


def test_a_long_section_is_cut_at_paragraphs_not_truncated(mem: graphmem.Memory, tmp_path: Path) -> None:
    para = ("word " * 1000).strip()  # 4,999 characters
    f = tmp_path / "long.md"
    f.write_text("# Big\n\n" + "\n\n".join([para] * 5) + "\n")
    r = mem.ingest(f)
    recs = records(mem, r.stored)
    assert r.truncated == 0 and len(recs) == 2
    assert all(len(str(x["text"])) <= MAX_CHARS for x in recs)
    assert [x["meta"]["lines"] for x in recs] == [[1, 7], [9, 11]]  # type: ignore[index]


def test_a_bad_line_refuses_its_block_only_and_cli_exits_2(tmp_path: Path, store_path: Path) -> None:
    f = tmp_path / "mixed.txt"
    f.write_bytes(b"good first paragraph\n\nbad \xff\xfe line\nin the second\n\nthird is good\n")
    store = store_path
    assert cli(store, "init").code == 0
    r = cli(store, "--json", "ingest", str(f))
    assert r.code == 2, r
    doc = r.json()
    assert doc["stored"] == 2 and doc["errors"] == [
        {"line": 3, "reason": "not valid UTF-8 (byte 4); lines 3-4 were not stored"}]
    assert r.err_lines == ["graphmem: line 3: not valid UTF-8 (byte 4); lines 3-4 were not stored"]
    s = cli(store, "--json", "search", "good")
    assert sorted(h["snippet"] for h in s.json()["results"]) == ["good first paragraph", "third is good"]


def test_cli_ingest_bad_format_is_one_line(tmp_path: Path, store_path: Path) -> None:
    f = tmp_path / "n.md"
    f.write_text("# x\n")
    one_clear_line(cli(store_path, "ingest", str(f), "--format", "yaml"), 2, ["yaml", "markdown"])
    assert_no_store(store_path)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", "  ", "# H1", "## H2", "text", "more text", "```", "~~~", "x" * 30]),
                max_size=40), st.sampled_from(["markdown", "text"]), st.integers(20, 200))
def test_blocks_keep_every_nonblank_line_once_in_order_and_bounded(lines: list[str], fmt: str, limit: int) -> None:
    """No text is lost or repeated (a Markdown heading alone may only drop out), and each block fits."""
    out = blocks(lines, fmt, limit)
    got = [n for b in out for n in range(b.first, b.last + 1) if lines[n - 1].strip()]
    assert got == sorted(set(got))
    want = [n for n, t in enumerate(lines, 1) if t.strip()]
    missing = set(want) - set(got)
    assert fmt == "markdown" or not missing
    assert all(lines[n - 1].lstrip().startswith("#") for n in missing)
    assert all(len(b.text) <= limit or b.first == b.last for b in out)
    for b in out:
        assert b.text == "\n".join(lines[b.first - 1:b.last]) or len("\n".join(lines[b.first - 1:b.last])) > limit


@pytest.mark.parametrize("command", ["import", "ingest"])
def test_bad_lines_into_a_new_store_keep_the_good_ones(tmp_path: Path, store_path: Path, command: str) -> None:
    """Exit 2 for the bad line, and the store keeps what was written."""
    good = ('{"op": "entity", "type": "Tool", "name": "Kuzu"}' if command == "import"
            else '{"text": "Kuzu is the engine."}')
    f = tmp_path / "in.jsonl"
    f.write_text(good + '\n{"op": "bogus", "nothing": 1}\n')
    store = store_path
    assert cli(store, "init").code == 0
    r = cli(store, command, str(f))
    assert r.code == 2 and len(r.err_lines) == 1 and "line 2:" in r.err_lines[0], r
    with graphmem.open(store) as m:
        assert (m.entity("kuzu").ref if command == "import" else m.record("rec:1").text) in (
            "tool:kuzu", "Kuzu is the engine.")
