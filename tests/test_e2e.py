"""The installed ``graphmem`` executable, run as a user would, in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import copy_demo

import graphmem


def _executable() -> str:
    beside = Path(sys.executable).parent / "graphmem"
    if beside.exists():
        return str(beside)
    found = shutil.which("graphmem")
    if found is None:
        pytest.skip("the graphmem executable is not installed")
    return found


GRAPHMEM = _executable()


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GRAPHMEM, *args], capture_output=True, text=True, timeout=120,
                          env=env if env is not None else dict(os.environ), cwd=cwd)


@pytest.fixture
def demo_copy(demo_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return copy_demo(demo_dir, tmp_path / "demo", request)  # type: ignore[no-any-return]


@pytest.mark.engine("kuzu", "ladybug")  # PostgreSQL: graphmem demo builds its example in a folder, see docs/engines.md Limits
def test_demo_walkthrough(tmp_path: Path) -> None:
    store = tmp_path / "d"
    p = run("--store", str(store), "demo")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert p.stdout.startswith(f"Built the example store at {store}")
    for text in ("# What is true about Atlas now?", f"$ graphmem --store {store} current atlas",
                 "# Who owned Atlas on 2025-09-05", "person:tomas-ortega", "fact:120",
                 "# Which projects use Kuzu now?", "project:compass", "# Is the store consistent?",
                 "single_value_conflict", f"export GRAPHMEM_STORE={store}"):
        assert text in p.stdout, text
    assert "Traceback" not in p.stdout
    assert (store / ".graphmem-demo").exists()
    # the store it built answers afterwards, in a new process
    q = run("--store", str(store), "--json", "current", "atlas", "--predicate", "owner")
    assert q.returncode == 0, q.stderr
    assert [f["object"]["ref"] for f in json.loads(q.stdout)["facts"]] == ["person:jonas-weber"]


def _status_values(stdout: str) -> list[str]:
    d = json.loads(stdout)
    assert d["schema"] == "graphmem.current.v1"
    assert d["subject"] == {"ref": "project:atlas", "type": "Project", "name": "Atlas"}
    return [f["object"]["value"] for f in d["facts"] if f["predicate"] == "status"]


def test_current_json(demo_copy: Path) -> None:
    p = run("--store", str(demo_copy), "--json", "current", "atlas")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert _status_values(p.stdout) == ["active"]
    then = run("--store", str(demo_copy), "--json", "current", "atlas", "--as-of", "2025-11-01")
    assert _status_values(then.stdout) == ["paused"]


def test_current_json_after_the_command(demo_copy: Path) -> None:
    p = run("--store", str(demo_copy), "current", "atlas", "--json")
    assert p.returncode == 0, p.stderr
    assert _status_values(p.stdout) == ["active"]


def test_graphmem_store_env_var(demo_copy: Path, tmp_path: Path, new_store: Callable[[str], Path]) -> None:
    env = dict(os.environ, GRAPHMEM_STORE=str(demo_copy))
    p = run("--json", "current", "atlas", "--predicate", "status", env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert _status_values(p.stdout) == ["active"]
    # init and writes go to the store the variable names, and --store wins over it
    other = new_store("other")
    env2 = dict(os.environ, GRAPHMEM_STORE=str(other))
    assert run("init", env=env2).returncode == 0
    add = run("entity", "add", "Tool", "Valkey", env=env2)
    assert add.returncode == 0 and add.stdout.strip() == "tool:valkey", add.stderr
    listed = run("--store", str(other), "--json", "entity", "list", env=env)
    assert [e["ref"] for e in json.loads(listed.stdout)["entities"]] == ["tool:valkey"]
    over = run("--store", str(demo_copy), "--json", "entity", "list", "--match", "valkey", env=env2)
    assert over.returncode == 0 and json.loads(over.stdout)["entities"] == []
    # without --store and without the variable, nothing touches the test's stores
    unset = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_STORE"}
    unset["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    none = run("--json", "entity", "list", env=unset)
    assert none.returncode == 3 and none.stderr == "", none.stderr
    err = json.loads(none.stdout)  # with --json the error is one graphmem.error.v1 document
    assert err["schema"] == "graphmem.error.v1" and err["code"] == "StoreUnavailable" and "init" in err["message"]


def test_bad_input_one_line_exit_2(demo_copy: Path) -> None:
    before = run("--store", str(demo_copy), "export").stdout
    p = run("--store", str(demo_copy), "assert", "atlas", "status", "sleeping")
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "'sleeping'" in lines[0] and "expected" in lines[0] and "active" in lines[0]
    assert "Traceback" not in p.stderr
    q = run("--store", str(demo_copy), "--json", "current", "nobody")
    assert q.returncode == 2 and q.stderr == "", q.stderr
    err = json.loads(q.stdout)
    assert err["schema"] == "graphmem.error.v1" and err["code"] == "UnknownEntity" and "'nobody'" in err["message"]
    assert run("--store", str(demo_copy), "export").stdout == before


def test_missing_store_exit_3(new_store: Callable[[str], Path]) -> None:
    nope = new_store("nope")
    p = run("--store", str(nope), "current", "atlas")
    assert p.returncode == 3
    assert len(p.stderr.strip().splitlines()) == 1 and "init" in p.stderr and "Traceback" not in p.stderr
    if isinstance(nope, Path):
        assert not nope.exists()
    else:  # nothing made in the schema either
        with pytest.raises(graphmem.StoreUnavailable, match="no store"):
            graphmem.open(nope)


def test_help_runs(tmp_path: Path) -> None:
    p = run("--help")
    assert p.returncode == 0 and p.stdout.startswith("Usage: graphmem")
    for cmd in ("init", "demo", "assert", "current", "timeline", "facts", "why", "lint", "export", "import"):
        assert cmd in p.stdout
    bare = run()
    assert "Usage: graphmem" in bare.stdout + bare.stderr
