"""The demo's data: the JSONL files the package ships are what tools/make_demo.py builds, and
the package holds the data, not the tool."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from helpers import ROOT, load_script


def test_shipped_demo_data_is_what_the_tool_builds() -> None:
    make_demo = load_script("tools/make_demo.py")
    assert make_demo.stale() == [], "run: python tools/make_demo.py"
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "make_demo.py"), "--check"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "", p.stdout + p.stderr


def test_the_tool_notices_a_changed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_demo = load_script("tools/make_demo.py")
    changed = tmp_path / "demo.jsonl"
    changed.write_text(make_demo.OUT.read_text(encoding="utf-8").replace("Kuzu", "Kuzu DB", 1), encoding="utf-8")
    monkeypatch.setattr(make_demo, "OUT", changed)
    assert make_demo.stale() == [changed]


def test_the_package_ships_the_data_and_not_the_tools() -> None:
    examples = resources.files("graphmem").joinpath("examples")
    assert {"demo.jsonl", "records.jsonl"} <= {p.name for p in examples.iterdir()}
    package = ROOT / "graphmem"
    assert not list(package.rglob("make_demo.py")) and not list(package.rglob("extract_score.py"))
