"""Crash safety: the real executable killed (SIGKILL) at seeded moments of a write; nothing acknowledged
is lost, an unacknowledged import is there entirely or not at all, and the store stays sound.

Bulk writes (imports above WAL_ROWS statements, ingest) load rows with Kuzu's COPY, which 0.11 keeps
outside its write-ahead log until a checkpoint: a kill between commit and checkpoint can lose them. Those
paths are not in this suite (their outcome depends on timing); docs/semantics.md says what is known."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import graphmem

EXE = [sys.executable, "-c", "from graphmem.cli import main; main()"]


def _run_killed(args: list[str], delay: float) -> tuple[bool, str]:
    """Start ``graphmem args``, SIGKILL it after ``delay`` s unless it ended: (acknowledged, stdout)."""
    p = subprocess.Popen([*EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, _ = p.communicate(timeout=delay)
        return p.returncode == 0, out.decode()
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return False, ""


def _sound(store: Path, lint_errors_before: int) -> graphmem.Memory:
    """The store opens, left no temporary files, its view matches its statements, lint finds nothing new."""
    m = graphmem.open(store)  # opening clears what a killed process left in tmp/
    assert m.rebuild(check=True).ok
    assert m.lint().to_json()["counts"]["error"] <= lint_errors_before
    assert not list((store / "tmp").glob("tmp*")) if (store / "tmp").exists() else True
    return m


@pytest.fixture
def store(tmp_path: Path, demo_dir: Path) -> tuple[Path, int]:
    path = tmp_path / "store"
    shutil.copytree(demo_dir, path)
    with graphmem.open(path) as m:
        errors = m.lint().to_json()["counts"]["error"]
    return path, errors


def test_assert_loop_killed_at_random_loses_no_acknowledged_write(store: tuple[Path, int]) -> None:
    path, errors = store
    rng = random.Random(11)
    t0 = time.monotonic()  # one run to completion sets the scale of the kill moments on this machine
    ok, out = _run_killed(["--store", str(path), "assert", "ledger", "priority", "p2", "--from", "2026-10-01"], 120)
    took = time.monotonic() - t0
    assert ok
    acked: list[str] = [out.split()[0]]
    kills = 0
    for i in range(10):
        ok, out = _run_killed(["--store", str(path), "assert", "ledger", "priority", f"p{i % 3}",
                               "--from", f"2026-0{1 + i % 9}-01"], rng.uniform(0.2, 1.3) * took)
        if ok:
            acked.append(out.split()[0])
        else:
            kills += 1
    assert kills >= 3  # the seeds kill most runs part-way
    with _sound(path, errors) as m:
        for fact in acked:
            assert m.store.statement(int(fact.split(":")[1])) is not None, f"acknowledged {fact} was lost"


@pytest.mark.parametrize("lines,seed", [(300, 3), (300, 4), (1200, 5)], ids=["small-a", "small-b", "small-c"])
def test_import_killed_is_all_or_nothing(store: tuple[Path, int], tmp_path: Path, lines: int, seed: int) -> None:
    path, errors = store
    src = tmp_path / "facts.jsonl"
    with src.open("w") as f:
        for i in range(lines // 2):
            f.write(json.dumps({"op": "entity", "type": "Tool", "name": f"Crash tool {i}"}) + "\n")
            f.write(json.dumps({"op": "assert", "subject": "project:ledger", "predicate": "evaluates",
                                "object": f"tool:crash-tool-{i}", "valid_from": "2026-01-01"}) + "\n")
    with graphmem.open(path) as m:
        before = m.store.statement_count()
    rng = random.Random(seed)
    for _ in range(3):
        ok, _ = _run_killed(["--store", str(path), "import", str(src)], rng.uniform(0.3, 2.5))
        with _sound(path, errors) as m:
            delta = m.store.statement_count() - before
        assert delta in (0, lines // 2), f"a killed import left {delta} of {lines // 2} statements"
        if ok or delta:
            break


def test_a_second_writer_process_exits_3_with_a_clear_line(store: tuple[Path, int]) -> None:
    path, _ = store
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    holder = subprocess.Popen([*EXE, "--store", str(path), "serve", "--port", str(port)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (path / "server.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        r = subprocess.run([*EXE, "--store", str(path), "assert", "ledger", "priority", "p1"], capture_output=True,
                           timeout=60)
        assert r.returncode == 3
        err = r.stderr.decode().strip().splitlines()
        assert len(err) == 1 and "in use by" in err[0] and "Traceback" not in r.stderr.decode()
    finally:
        holder.terminate()
        holder.wait(timeout=30)
        for f in (holder.stdout, holder.stderr):
            if f:
                f.close()
    with graphmem.open(path) as m:
        assert m.rebuild(check=True).ok
