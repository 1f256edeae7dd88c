"""Readable tables (fitted to the width, nothing cut, --wide, open ends, the trust mark), lint's summary,
--code and --limit, and progress: the library's callback and the CLI's bar (docs/cli-output.md)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE, copy_demo
from typer.testing import CliRunner

import graphmem
from graphmem.cli import app
from graphmem.cli.progress import Bar
from graphmem.cli.tables import KEEP, LIST, TEXT, Col, layout
from graphmem.errors import BadInput

runner = CliRunner()


def run(store: Path, *args: str, columns: int | None = 80) -> Any:
    env = {"COLUMNS": str(columns)} if columns else {"COLUMNS": ""}
    r = runner.invoke(app, ["--store", str(store), *args], env=env)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r


@pytest.fixture(scope="module")
def demo_copy(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The demo store with the extractor's facts applied (so some facts only the extractor asserted)."""
    target = copy_demo(demo_dir, tmp_path_factory.mktemp("tables") / "store", request)
    with graphmem.open(target) as m:
        assert m.extract_pending(apply=True).written
    return target


def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


# the layout -------------------------------------------------------------------------------------


def test_layout_keeps_values_whole_and_leaves_out_the_least_useful_columns() -> None:
    cols = [Col("ref"), Col("name", TEXT), Col("when"), Col("ids", LIST, drop=1), Col("url", KEEP, drop=2)]
    url = "https://example.org/a/rather/long/path/to/some/evidence"
    cells = [["project:atlas", "Atlas, the knowledge graph of services", "2025-01-06", "fact:1 fact:22", url]]
    fit = layout(cols, cells, 60)
    assert [cols[i].name for i in fit.shown] == ["ref", "name", "when", "ids"] and fit.left_out == ["url"]
    widths = dict(zip([cols[i].name for i in fit.shown], fit.widths, strict=True))
    assert widths["ref"] == len("project:atlas") and widths["when"] == len("2025-01-06")
    assert widths["ids"] >= len("fact:22")  # a list wraps between items, never inside one
    assert fit.total <= 60
    narrower = layout(cols, cells, 40)
    assert narrower.left_out == ["url", "ids"]  # the highest drop goes first
    wide = layout(cols, cells, None, wide=True)
    assert [cols[i].name for i in wide.shown] == [c.name for c in cols] and wide.widths[-1] == len(url)


def test_layout_leaves_out_empty_columns_and_never_drops_a_kept_one() -> None:
    cols = [Col("a"), Col("b", drop=1), Col("c", TEXT)]
    fit = layout(cols, [["x" * 30, "", "word " * 10], ["y", "-", "z"]], 20)
    assert [cols[i].name for i in fit.shown] == ["a", "c"]  # b is empty: left out, not for width
    assert fit.left_out == [] and fit.widths[0] == 30  # a does not fit, and is still whole
    # no rows: every column keeps its header
    assert layout(cols, [], 80).shown == [0, 1, 2]


# the commands' tables --------------------------------------------------------------------------


def test_current_at_80_columns_cuts_nothing(demo_copy: Path) -> None:
    doc = json.loads(run(demo_copy, "--json", "current", "atlas").stdout)
    r = run(demo_copy, "current", "atlas")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert all(len(line) <= 80 for line in lines_of(out))
    assert "…" not in out
    words = set(re.split(r"[\s│┃]+", out))
    for f in doc["facts"]:
        for ref in f["assertions"]:
            assert ref in words  # whole, on one line
        assert f["valid_from"][:10] in words
    assert "(not shown, for width: sources; --wide shows every column)" in out
    # an open interval reads "open", never the mark of a cut value
    assert all(f["valid_to"] is None for f in doc["facts"]) and "open" in words


def test_wide_shows_every_column_and_every_source_whole(demo_copy: Path) -> None:
    doc = json.loads(run(demo_copy, "--json", "current", "atlas").stdout)
    out = run(demo_copy, "current", "atlas", "--wide").stdout
    header = next(line for line in out.splitlines() if line.startswith("predicate"))
    assert "sources" in header and "not shown" not in out
    words = set(re.split(r"[\s│┃]+", out))
    assert {s for f in doc["facts"] for s in f["sources"]} <= words


def test_dates_at_midnight_read_as_dates_and_json_is_unchanged(demo_copy: Path) -> None:
    doc = json.loads(run(demo_copy, "--json", "timeline", "atlas").stdout)
    assert doc["intervals"][0]["valid_from"].endswith("T00:00:00Z")
    out = run(demo_copy, "timeline", "atlas").stdout
    assert "T00:00:00Z" not in out
    assert doc["intervals"][0]["valid_from"][:10] in out
    assert "trust" not in doc["intervals"][0] and "asserted_by" not in doc["intervals"][0]


def test_piped_without_columns_each_row_is_one_line(demo_copy: Path) -> None:
    doc = json.loads(run(demo_copy, "--json", "current", "atlas").stdout)
    out = run(demo_copy, "current", "atlas", columns=None).stdout
    rows = [line for line in lines_of(out) if "│" in line]
    assert len(rows) == len(doc["facts"])  # nothing wrapped
    assert "not shown" not in out and "sources" in out


def test_empty_columns_are_left_out(demo_copy: Path) -> None:
    header = run(demo_copy, "current", "atlas", columns=None).stdout.splitlines()[1]
    assert "note" not in header and "trust" not in header  # no conflict, nothing the extractor alone said
    compass = run(demo_copy, "current", "compass", columns=None).stdout
    assert "note" in compass.splitlines()[1] and "conflict: fact:166" in compass


def test_trust_marks_facts_only_the_extractor_asserted(demo_copy: Path) -> None:
    with graphmem.open(demo_copy) as m:
        by = m.asserted_by([f"fact:{n}" for n in range(1, 400)])
        extracted = sorted((k for k, v in by.items() if v == "extractor"), key=lambda r: int(r[5:]))
        assert extracted and by["fact:1"] == "operator"
        st = m.why(extracted[0]).statement
        with pytest.raises(BadInput, match="bad fact ref"):
            m.asserted_by(["atlas"])
    facts = run(demo_copy, "facts", "-p", st.predicate, "--wide").stdout
    marked = [line for line in facts.splitlines() if "low (extractor)" in line]
    assert marked and all(extracted[0] in line or "fact:" in line for line in marked)
    assert any(re.search(rf"\b{extracted[0]}\b", line) for line in marked)
    operator_rows = [line for line in facts.splitlines() if "fact:" in line and "low (extractor)" not in line]
    assert operator_rows  # the operator's own facts carry no mark
    subject = st.subject
    cur = run(demo_copy, "current", subject, "--wide").stdout
    assert "low (extractor)" in cur
    tl = run(demo_copy, "timeline", subject, "--wide").stdout
    assert "low (extractor)" in tl


# lint: summary, --code, --limit ------------------------------------------------------------------


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A store with 1 error (a conflict) and 60 warnings (statements without sources), on the run's engine."""
    path: Path = (request.getfixturevalue("pg_cluster").url("t_noisy_" + uuid.uuid4().hex[:8]) if TEST_ENGINE == "postgresql"
                  else tmp_path_factory.mktemp("noisy") / "store")
    lines = [json.dumps({"op": "entity", "type": "Project", "name": f"P{i}"}) for i in range(60)]
    lines += [json.dumps({"op": "assert", "subject": f"P{i}", "predicate": "status", "object": "active",
                          "valid_from": "2025-01-01"}) for i in range(60)]
    lines += [json.dumps({"op": "assert", "subject": "P0", "predicate": "priority", "object": p,
                          "valid_from": "2025-01-01", "sources": ["https://example.org/x"]}) for p in ("p1", "p2")]
    with graphmem.open(path, create=True) as m:
        assert not m.import_jsonl(lines).errors
    return path


def test_lint_prints_a_summary_by_code_and_at_most_50_issues(noisy: Path) -> None:
    r = run(noisy, "lint", columns=None)
    assert r.exit_code == 1
    out = lines_of(r.stdout)
    assert out[0] == "lint: 1 error, 60 warnings (62 statements, 60 entities)"
    assert re.match(r"single_value_conflict\s+│ error\s+│ 1$", out[3]) and re.match(
        r"missing_source\s+│ warning\s+│ 60$", out[4])
    issues = [line for line in out if re.match(r"(error|warning)\s+│", line)]
    assert len(issues) == 50 and issues[0].startswith("error")  # errors first
    assert out[-1] == "... and 11 more issues (--limit N shows more, --code CODE one code)"


def test_lint_code_and_limit(noisy: Path) -> None:
    r = run(noisy, "lint", "--code", "missing_source", "--limit", "3", columns=None)
    assert r.exit_code == 0  # the chosen codes decide: only warnings
    issues = [line for line in lines_of(r.stdout) if re.match(r"warning\s+│", line)]
    assert len(issues) == 3 and "57 more issues" in r.stdout
    d = json.loads(run(noisy, "--json", "lint", "--code", "missing_source", "--limit", "3").stdout)
    assert d["schema"] == "graphmem.lint.v1" and d["ok"] is True
    assert d["codes"] == ["missing_source"] and d["limit"] == 3 and d["matched"] == 60 and d["more"] == 57
    assert [i["code"] for i in d["issues"]] == ["missing_source"] * 3
    assert d["counts"]["error"] == 1 and d["counts"]["by_code"] == {"missing_source": 60, "single_value_conflict": 1}
    assert d["summary"] == [{"code": "single_value_conflict", "severity": "error", "count": 1},
                            {"code": "missing_source", "severity": "warning", "count": 60}]
    full = json.loads(run(noisy, "--json", "lint").stdout)  # --json alone: every issue, as before
    assert len(full["issues"]) == 61 and full["more"] == 0 and full["ok"] is False
    assert run(noisy, "lint", "--code", "single_value_conflict", "--code", "stale_fact").exit_code == 1


def test_lint_bad_code_or_limit_is_exit_2_naming_the_codes(noisy: Path) -> None:
    r = run(noisy, "lint", "--code", "missing_sources")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("graphmem: error: unknown lint --code value 'missing_sources': expected one of ")
    assert "missing_source, object_type_mismatch" in r.stderr and len(r.stderr.splitlines()) == 1
    r = run(noisy, "lint", "--limit", "-1")
    assert r.exit_code == 2 and "bad --limit -1" in r.stderr
    with graphmem.open(noisy) as m, pytest.raises(BadInput, match="unknown lint code 'x'"):
        m.lint().to_dict(codes=["x"])


# progress ----------------------------------------------------------------------------------------


class Calls:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int | None]] = []

    def __call__(self, task: str, done: int, total: int | None = None) -> None:
        self.calls.append((task, done, total))

    def tasks(self) -> list[str]:
        return list(dict.fromkeys(t for t, _, _ in self.calls))

    def check(self) -> None:
        last: dict[str, int] = {}
        for task, done, total in self.calls:
            assert done >= last.get(task, 0) and (total is None or 0 <= done <= total)
            last[task] = done


def big_import(path: Path, n: int) -> Path:
    lines = [json.dumps({"op": "entity", "type": "Project", "name": f"P{i}"}) for i in range(n)]
    lines += [json.dumps({"op": "assert", "subject": f"project:p{i}", "predicate": "status", "object": "active",
                          "valid_from": "2025-01-01", "sources": ["https://example.org"]}) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_library_tells_a_progress_callback_how_far_it_has_got(tmp_path: Path, store_path: Path) -> None:
    src = big_import(tmp_path / "in.jsonl", 5000)
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps({"text": f"P{i} uses nothing new."}) + "\n" for i in range(30)))
    with graphmem.open(store_path, create=True) as m:
        p = Calls()
        assert m.import_jsonl(src, progress=p).statements == 5000
        p.check()
        assert p.tasks()[0] == "reading in.jsonl" and "writing to the store" in p.tasks()
        assert p.calls[0][2] == src.stat().st_size
        p = Calls()
        assert len(m.ingest(records, progress=p).stored) == 30
        p.check()
        assert p.tasks() == ["reading records.jsonl", "writing records and their index"]
        p = Calls()
        assert len(m.extract_pending(progress=p).items) == 30
        p.check()
        assert ("extracting from records", 30, 30) in p.calls
        for run_it in (m.lint, m.rebuild, lambda progress: m.rebuild(check=True, progress=progress)):
            p = Calls()
            run_it(progress=p)
            p.check()
            assert p.tasks()[p.tasks().index("comparing subjects") - 1] == "reading the statements"
            assert ("comparing subjects", 5000, 5000) in p.calls  # both halves (a forked child had one)
        p = Calls()
        assert m.import_jsonl([line for line in src.read_text().splitlines()[:3]], progress=p).lines == 3
        assert p.calls[0] == ("checking lines", 0, 3)


def test_the_bar_draws_on_a_terminal_only_and_survives_a_fork(tmp_path: Path, store_path: Path) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped = Bar(io.StringIO(), delay=0)
    piped("task", 1, 2)
    assert piped.shown is None
    early = Bar(Tty(), delay=60)
    early("task", 1, 2)
    assert early.shown is None  # not before the work has run the delay
    screen = Tty()
    bar = Bar(screen, delay=0)
    with graphmem.open(store_path, create=True) as m:
        m.import_jsonl(big_import(tmp_path / "in.jsonl", 3000))
        report = m.lint(progress=bar)  # 3,000 subjects: shared with a forked child while the bar is up
        bar.close()
        assert report.to_dict() == m.lint().to_dict()
    assert "comparing subjects" in screen.getvalue()


def test_no_rich_at_cold_start_or_when_piped(demo_copy: Path) -> None:
    code = ("import sys\nfrom graphmem.cli.app import app\n"
            "try:\n    app(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich'), file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for args in (["current", "atlas", "--json"], ["lint", "--json"]):
        r = subprocess.run([sys.executable, "-c", code, "--store", str(demo_copy), *args], capture_output=True,
                           text=True, env=env, check=False)
        assert r.stderr.strip().splitlines()[-1] == "[]", (args, r.stderr)
    r = subprocess.run([sys.executable, "-c", code, "--store", str(demo_copy), "lint"], capture_output=True,
                       text=True, env=env, check=False)
    assert "rich.progress" not in r.stderr  # a table, but no bar: stderr is not a terminal
