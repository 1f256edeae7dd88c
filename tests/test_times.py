"""Any time the parser accepts can be stored and read back; a time it cannot hold is refused before
anything is written.

An instant is kept in the years 1 to 9999 of UTC, the range Python's datetime, Kuzu's TIMESTAMP and
ISO-8601 text all hold. A time with an offset can leave that range once shifted to UTC
(``0001-01-01T00:00:00+01:00`` is year 0): such a time is bad input (exit 2, 400), never a statement
that breaks every later read."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphmem
from graphmem.errors import BadInput, BadTime
from graphmem.model.times import MAX_US, MIN_US, format_instant, parse_instant

EXE = [sys.executable, "-c", "from graphmem.cli import main; main()"]
EDGES = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:59:59.999999+01:00",
         "9999-12-31T10:00:00-14:00", "0001-01-01", "9999-12-31", "0001-01-01T00:00:00-01:00",
         "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999+00:01"]


@st.composite
def time_texts(draw: st.DrawFn) -> str:
    """ISO-8601 text near and far from both ends of the calendar, with any offset."""
    year = draw(st.one_of(st.integers(1, 2), st.integers(9998, 9999), st.integers(1, 9999)))
    day = draw(st.dates(dt.date(year, 1, 1), dt.date(year, 12, 31)))
    if draw(st.booleans()):
        return day.isoformat()
    clock = draw(st.times())
    minutes = draw(st.integers(-14 * 60, 14 * 60))
    off = "Z" if minutes == 0 and draw(st.booleans()) else (
        f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}")
    return f"{day.isoformat()}T{clock.isoformat()}{off}"


@contextmanager
def _store(root: Path, name: str) -> Iterator[graphmem.Memory]:
    with graphmem.open(root / name, create=True) as m:
        yield m


def _fresh(root: Path) -> graphmem.Memory:
    m = graphmem.open(root, create=True)
    m.add_entity("Project", "Atlas")
    return m


@given(text=st.one_of(time_texts(), st.sampled_from(EDGES)))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_time_the_parser_accepts_is_written_read_exported_and_imported(new_store: Callable[[str], Path],
                                                                          text: str) -> None:
    example = uuid.uuid4().hex[:8]  # the fixture is made once for every example: each example's stores are new
    with _fresh(new_store("a" + example)) as m:
        before = m.export()
        try:
            us = parse_instant(text)
        except BadTime:
            for write in (lambda: m.assert_("atlas", "summary", "x", valid_from=text),
                          lambda: m.assert_("atlas", "summary", "x", valid_to=text),
                          lambda: m.assert_("atlas", "deadline", text),
                          lambda: m.end("atlas", "summary", at=text),
                          lambda: m.current("atlas", as_of=text)):
                with pytest.raises(BadInput):
                    write()
            assert m.export() == before, "a refused time wrote something"
            return
        assert MIN_US <= us <= MAX_US
        fid = m.assert_("atlas", "summary", "x", valid_from=text).refs[0]
        m.assert_("atlas", "owner", m.add_entity("Person", "Ada").refs[0], valid_from=format_instant(MIN_US),
                  valid_to=text if us > MIN_US else None)
        if format_instant(us).endswith("T00:00:00Z"):  # a date value
            m.assert_("atlas", "deadline", text)
        now = m.current("atlas", as_of=text).to_dict()
        assert any(f["assertions"] == [fid] for f in now["facts"])
        assert m.timeline("atlas").to_dict()["intervals"]
        assert m.why(fid).to_dict()["fact"]["valid_from"] == format_instant(us)
        m.facts(as_of=text)
        m.pack("atlas", as_of=text)
        out = m.export()
        assert m.rebuild(check=True).ok
    with graphmem.open(new_store("b" + example), create=True) as b:
        report = b.import_jsonl(out.splitlines(), strict=True)
        assert not report.errors
        assert b.export() == out


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00"])
def test_a_time_outside_the_calendar_is_exit_2_and_writes_nothing(tmp_path: Path, store_path: Path, text: str) -> None:
    store = store_path

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*EXE, "--store", str(store), *args], capture_output=True, text=True, timeout=120)

    assert cli("init").returncode == 0
    assert cli("entity", "add", "Project", "Atlas").returncode == 0
    before = cli("export").stdout
    for args in (["assert", "atlas", "summary", "x", "--from", text], ["assert", "atlas", "deadline", text],
                 ["assert", "atlas", "summary", "x", "--to", text], ["end", "atlas", "summary", "--at", text],
                 ["current", "atlas", "--as-of", text], ["current", "atlas", "--known-at", text]):
        r = cli(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and text in lines[0] and "9999" in lines[0], (args, r.stderr)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"op": "assert", "subject": "project:atlas", "predicate": "summary", "object": "x",
                               "valid_from": text}) + "\n")
    r = cli("import", "--strict", str(bad))
    assert r.returncode == 2 and "line 1" in r.stderr
    assert cli("export").stdout == before
    for args in (["export"], ["timeline", "atlas"], ["facts"], ["lint"]):
        assert cli(*args).returncode == 0


def test_an_instant_already_stored_outside_the_calendar_still_reads() -> None:
    """A store written before the check may hold one: reading it never fails (expanded years)."""
    assert format_instant(MIN_US - 3_600_000_000) == "+0000-12-31T23:00:00Z"
    assert format_instant(MAX_US + 1) == "+10000-01-01T00:00:00Z"
    assert format_instant(MIN_US) == "0001-01-01T00:00:00Z"
