"""An import's plain ``assert`` lines (``write.plain.plain_assertion``, built from what earlier lines checked) give
the statements and the errors the full checks give; the view read back from the statements' side files is the
view of the same lines imported in small."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.model.times import now_us
from graphmem.transfer import importer
from graphmem.write.plain import plain_assertion
from graphmem.write.validate import Memo, Resolver

ENTITIES: list[dict[str, Any]] = [
    {"op": "entity", "type": "Project", "name": "Atlas"},
    {"op": "entity", "type": "Project", "name": "Hermes"},
    {"op": "entity", "type": "Tool", "name": "KuzuDB"},
]
A = {"op": "assert", "subject": "project:atlas"}
GOOD: list[dict[str, Any]] = [
    A | {"predicate": "status", "object": "active", "valid_from": "2024-01-01", "sources": ["https://a.example/1"]},
    A | {"predicate": "status", "object": "Paused", "valid_from": "2024-02-01", "valid_to": "2024-03-01",
         "sources": ["https://a.example/2", "https://a.example/2"], "id": "fact:9"},
    A | {"predicate": "status", "object": "active", "valid_from": "2024-03-01",
         "sources": ["https://u:hunter22@a.example/3?token=abcdef123456"], "recorded_at": "2024-03-02T10:00:00Z"},
    A | {"predicate": "uses", "object": "tool:kuzudb", "valid_from": "2024-01-05", "sources": []},
    A | {"predicate": "uses", "object": "KuzuDB", "valid_from": "now"},
    A | {"predicate": "uses", "object": "tool:kuzudb", "valid_from": " 2024-01-06 ", "sources": None},
    {"op": "assert", "subject": "Hermes", "predicate": "status", "object": "done", "valid_from": "2023-05-01"},
    {"op": "assert", "subject": "Hermes", "predicate": "status", "object": "done", "valid_from": "2023-05-01",
     "asserted_by": "agent"},  # not plain: the full checks
    A | {"predicate": "status", "object": "active", "valid_from": "2024-04-01", "scope": "team"},
]
BAD: list[dict[str, Any]] = [  # each after lines that filled the memo for its subject and predicate
    A | {"predicate": "status", "object": "active", "valid_from": "2024-05-01", "valid_to": "2024-04-01"},
    A | {"predicate": "status", "object": "active", "valid_from": "2024-05-01", "sources": ["not a uri"]},
    A | {"predicate": "status", "object": "active", "valid_from": "2024-05-01", "sources": ["rec:99"]},
    A | {"predicate": "status", "object": "active", "valid_from": "2024-05-01", "sources": ["https://a.example/\ud800"]},
    A | {"predicate": "status", "object": "active", "valid_from": "2024-05-01", "recorded_at": "2999-01-01"},
    A | {"predicate": "status", "object": "active", "valid_from": "2024-13-01"},
    A | {"predicate": "status", "object": "shipped", "valid_from": "2024-05-01"},
    A | {"predicate": "status", "object": True, "valid_from": "2024-05-01"},
    A | {"predicate": "status", "object": "active", "valid_from": 20240501},
    A | {"predicate": "status", "object": "active", "sources": "https://a.example/1"},
    A | {"predicate": "uses", "object": "project:hermes", "valid_from": "2024-05-01"},
    A | {"predicate": "uses", "object": "tool:nothing", "valid_from": "2024-05-01"},
]


def _read(store: graphmem.Memory, lines: list[dict[str, Any]], now: int, plain: bool,
          monkeypatch: pytest.MonkeyPatch) -> tuple[importer._Reader, int]:
    """The lines read as an import reads them (nothing written), with or without the plain path; how
    many statements the plain path built."""
    built = []

    def counted(*a: Any, **k: Any) -> Any:
        st = plain_assertion(*a, **k) if plain else None
        built.extend([st] if st is not None else [])
        return st

    monkeypatch.setattr(importer, "plain_assertion", counted)
    r = importer._Reader(store.store, store._checks, now, Resolver(store.store, batch=True), 1, 1, None, None)
    r.read(enumerate([json.dumps(x) for x in lines], 1))
    monkeypatch.setattr(importer, "plain_assertion", plain_assertion)
    return r, len(built)


def test_plain_lines_give_the_statements_and_errors_of_the_full_checks(mem: graphmem.Memory,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    now = now_us()
    lines: list[dict[str, Any]] = ENTITIES + GOOD + [x for bad in BAD for x in (GOOD[0], bad)]
    full, n_full = _read(mem, lines, now, False, monkeypatch)
    fast, n_fast = _read(mem, lines, now, True, monkeypatch)
    assert n_full == 0 and n_fast == len(GOOD) - 2 + len(BAD)  # every good line but two not plain; no bad one
    assert fast.stmts == full.stmts and len(full.stmts) == len(GOOD) + len(BAD)
    assert fast.errors == full.errors and len(full.errors) == len(BAD)  # every bad line: its own error
    assert fast.file_ids == full.file_ids == {"fact:9": 2}
    by_line = dict(full.errors)
    assert "bad valid_to" in by_line[len(ENTITIES) + len(GOOD) + 2]
    assert "REDACTED" in str(full.stmts[2].sources) and full.stmts[1].sources == ("https://a.example/2",)


def test_plain_assertion_gives_what_assertion_gives(mem: graphmem.Memory) -> None:
    mem.add_entity("Project", "Atlas")
    mem.add_entity("Tool", "KuzuDB")
    memo, checks, now = Memo(), mem._checks, now_us()
    line = A | {"predicate": "status", "object": "active", "valid_from": "2024-01-01"}
    full = checks.assertion(1, "project:atlas", "status", "active", "2024-01-01", None, [], "import", None, now)
    assert plain_assertion(checks, 1, line, now, memo) == full and memo.heads and memo.objects  # checked, kept
    assert plain_assertion(checks, 1, line, now, memo) == full  # from the memo
    uses = A | {"predicate": "uses", "object": "KuzuDB", "valid_from": "2024-01-01T10:20:30Z",
                "recorded_at": "2024-02-01T00:00:00Z", "sources": ["https://a.example/x"]}
    assert plain_assertion(checks, 2, uses, now, memo) == checks.assertion(
        2, "project:atlas", "uses", "KuzuDB", "2024-01-01T10:20:30Z", None, ["https://a.example/x"], "import",
        "2024-02-01T00:00:00Z", now)
    assert plain_assertion(checks, 1, line | {"note": "x"}, now, memo) is None  # a field it does not know
    assert plain_assertion(checks, 1, line | {"object": "shipped"}, now, memo) is None  # a bad value: the full
    assert plain_assertion(checks, 1, line | {"subject": "nobody"}, now, memo) is None  # check gives its error
    assert plain_assertion(checks, 1, line | {"recorded_at": "2999-01-01T00:00:00Z"}, now, memo) is None


def test_view_read_back_from_the_side_files_equals_the_view_of_a_small_import(tmp_path: Path,
                                                                             new_store: Callable[[str], Path],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps(x) for x in ENTITIES]
    for i in range(300):
        lines.append(json.dumps(A | {"subject": ["project:atlas", "project:hermes"][i % 2], "predicate": "status",
                                     "object": ["active", "paused"][i // 2 % 2], "valid_from": f"2020-01-{i % 28 + 1:02d}",
                                     "recorded_at": "2024-01-01T00:00:00Z", "sources": [f"https://a.example/{i}"]}))
    lines.append(json.dumps({"op": "retract", "fact": "fact:7", "at": "2024-02-01T00:00:00Z"}))
    f = tmp_path / "f.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    small = graphmem.open(new_store("small"), create=True)
    assert small.import_jsonl(f).written
    monkeypatch.setattr(importer, "BULK_LINES", 1)
    monkeypatch.setattr(importer, "STREAM_BYTES", 0)  # streamed to bulk files, the view read back from them
    read_back: list[int] = []
    real = importer._views_from_files

    def counted(*a: Any) -> Any:
        read_back.append(1)
        return real(*a)

    monkeypatch.setattr(importer, "_views_from_files", counted)
    large = graphmem.open(new_store("large"), create=True)
    report = large.import_jsonl(f)
    assert read_back and report.written and report.statements == 300 and report.retractions == 1
    assert large.export() == small.export()
    assert large.rebuild(check=True).drift == ()
    assert large.why("fact:7").statement.retracted_at is not None
    assert [x["object"] for x in large.current("Atlas").to_dict()["facts"]] == \
        [x["object"] for x in small.current("Atlas").to_dict()["facts"]]
    if (Path(new_store("large")) / "tmp").is_dir():
        assert not list((Path(new_store("large")) / "tmp").glob("*"))  # bulk and side files removed
