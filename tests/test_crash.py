"""Crash safety: the real executable killed (SIGKILL) at seeded moments of a write; nothing acknowledged
is lost, an unacknowledged import is there entirely or not at all, and the store stays sound.

Bulk writes (imports above WAL_ROWS statements or entities, ingest, rebuild) load rows with Kuzu's COPY.
A kill while Kuzu 0.11 commits such a transaction can keep some of its tables and lose others (the view
emptied while the statements stayed; the index counters raised while the records were lost). graphmem
marks the store on disk for that window, refuses a marked store and repairs it with ``rebuild``: the
last tests here kill a bulk write inside that window on purpose (docs/semantics.md)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import copy_demo

import graphmem
from graphmem.errors import StoreUnavailable

EXE = [sys.executable, "-c", "from graphmem.cli import main; main()"]


def _run_killed(args: list[str], delay: float) -> tuple[bool, str, float]:
    """Start ``graphmem args``, SIGKILL it after ``delay`` s unless it ended: (acknowledged, stdout, seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen([*EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, _ = p.communicate(timeout=delay)
        return p.returncode == 0, out.decode(), time.monotonic() - t0
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return False, "", time.monotonic() - t0


def _sound(store: Path, lint_errors_before: int) -> graphmem.Memory:
    """The store opens, left no temporary files, its view matches its statements, lint finds nothing new."""
    m = graphmem.open(store)  # opening clears what a killed process left in tmp/
    assert m.rebuild(check=True).ok
    assert m.lint().to_dict()["counts"]["error"] <= lint_errors_before
    if isinstance(store, Path) and (store / "tmp").exists():  # an embedded store's bulk files
        assert not list((store / "tmp").glob("tmp*"))
    return m


@pytest.fixture
def store(tmp_path: Path, demo_dir: Path, request: pytest.FixtureRequest) -> tuple[Path, int]:
    path: Path = copy_demo(demo_dir, tmp_path / "store", request)  # the run's engine
    with graphmem.open(path) as m:
        errors = m.lint().to_dict()["counts"]["error"]
    return path, errors


def test_assert_loop_killed_at_random_loses_no_acknowledged_write(store: tuple[Path, int]) -> None:
    path, errors = store
    rng = random.Random(11)
    # the fastest run to completion sets the scale of the kill moments on this machine: the first run is
    # often slower (a cold file cache), so every acknowledged run can shorten the scale
    ok, out, took = _run_killed(["--store", str(path), "assert", "ledger", "priority", "p2", "--from", "2026-10-01"], 120)
    assert ok
    acked: list[str] = [out.split()[0]]
    kills = 0
    for i in range(30):
        ok, out, ran = _run_killed(["--store", str(path), "assert", "ledger", "priority", f"p{i % 3}",
                                    "--from", f"2026-0{1 + i % 9}-01"], rng.uniform(0.2, 1.3) * took)
        if ok:
            acked.append(out.split()[0])
            took = min(took, ran)
        else:
            kills += 1
        if i >= 9 and kills >= 3:
            break
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
        ok, _, _ = _run_killed(["--store", str(path), "import", str(src)], rng.uniform(0.3, 2.5))
        with _sound(path, errors) as m:
            delta = m.store.statement_count() - before
        assert delta in (0, lines // 2), f"a killed import left {delta} of {lines // 2} statements"
        if ok or delta:
            break


def test_roll_back_takes_an_interrupted_write_back_whole(store: tuple[Path, int]) -> None:
    """What a write's account of itself (WriteUndo) names is taken back: its statements, its entities,
    the aliases it added and the retractions it made of older facts."""
    path, _ = store
    with graphmem.open(path) as m:
        before = m.export()
        target = m.store.all_statements()[0].ref
        atlas = m.entity("atlas")
        with m.store.transaction():
            undo = m.store._undo
            m.retract(target, reason="wrong")
            m.add_entity("Tool", "Rolled back tool")
            m.store.add_aliases(atlas, ("atlas-rolled",), None)
            m.assert_("atlas", "uses", "rolled back tool")
        m.store.roll_back(undo)
        assert m.rebuild().ok
        assert m.export() == before


@pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' one-writer lock (PostgreSQL takes several writers)
def test_a_second_writer_process_exits_3_with_a_clear_line(store: tuple[Path, int]) -> None:
    """A process holding the store to write (a notebook, say) keeps a writer out; the writer names it."""
    path, _ = store
    holder = subprocess.Popen([sys.executable, "-c", "import graphmem, sys; m = graphmem.open(sys.argv[1]); "
                               "print('ready', flush=True); sys.stdin.read()", str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        r = subprocess.run([*EXE, "--store", str(path), "assert", "ledger", "priority", "p1"], capture_output=True,
                           timeout=60)
        assert r.returncode == 3
        err = r.stderr.decode().strip().splitlines()
        assert len(err) == 1 and "Traceback" not in r.stderr.decode(), err
        if sys.platform == "linux":  # fcntl names the process that holds Kuzu's lock
            assert f"in use by process {holder.pid} (" in err[0] and "writing" in err[0], err
        else:
            assert "in use by" in err[0], err
    finally:
        holder.kill()
        holder.wait(timeout=30)
        for f in (holder.stdin, holder.stdout, holder.stderr):
            if f:
                f.close()
    with graphmem.open(path) as m:
        assert m.rebuild(check=True).ok


# a graphmem process that SIGKILLs itself a moment (KILL_AFTER seconds) into the COMMIT of its bulk write
_KILLED_IN_COMMIT = """
import os, signal, sys, threading
from graphmem.store import Store
mark = Store._mark_commit
def killing_mark(self):
    mark(self)
    threading.Timer(float(os.environ["KILL_AFTER"]), lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
Store._mark_commit = killing_mark
from graphmem.cli import main
sys.argv = ["graphmem", *sys.argv[1:]]
main()
"""


def _bulk_file(tmp_path: Path, kind: str) -> Path:
    src = tmp_path / f"{kind}.jsonl"
    with src.open("w") as f:
        if kind == "import-edges":  # entity-valued: the write adds fact edges to the tools it creates
            for i in range(2500):
                f.write(json.dumps({"op": "entity", "type": "Tool", "name": f"Edge tool {i}"}) + "\n")
                f.write(json.dumps({"op": "assert", "subject": "project:ledger", "predicate": "evaluates",
                                    "object": f"tool:edge-tool-{i}", "valid_from": "2026-01-01"}) + "\n")
        elif kind.startswith("import"):  # past WAL_ROWS: statements go through COPY, and entities too unless mixed
            for i in range(520 if kind == "import-mixed" else 3000):
                f.write(json.dumps({"op": "entity", "type": "Tool", "name": f"Bulk tool {i}"}) + "\n")
            for i in range(5000):
                f.write(json.dumps({"op": "assert", "subject": f"tool:bulk-tool-{i % 520}", "predicate": "description",
                                    "object": f"bulk tool, batch {i}", "valid_from": "2026-01-01"}) + "\n")
        else:
            for i in range(3000):
                f.write(json.dumps({"id": f"bulk-{i}", "ts": "2026-02-01T10:00:00Z", "kind": "note",
                                    "text": f"Ledger moved batch {i} to Kuzu; the Atlas team reviewed it"}) + "\n")
    return src


def _cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, "--store", str(path), *args], capture_output=True, text=True, timeout=300)


# import-mixed: its 520 entities are written row by row (through Kuzu's log) and its 5,000 statements by
# COPY, so a kill in the window kept the entities and lost the statements until the repair took the write
# back whole; the later kills land during the checkpoint Kuzu runs in its COMMIT. import-edges: Kuzu kept
# the fact edges of the killed import joined to the wrong tools, which the repair must not copy
@pytest.mark.engine("kuzu", "ladybug")  # the commit mark (commit-pending.json) of an embedded store's bulk COPY
@pytest.mark.parametrize(("kind", "kill_after"), [("import", 0.001), ("import-mixed", 0.001), ("import-mixed", 0.03),
                                                  ("import-edges", 0.03), ("ingest", 0.001), ("ingest", 0.03)])
def test_bulk_write_killed_while_committing_is_refused_then_repaired(store: tuple[Path, int], tmp_path: Path,
                                                                     kind: str, kill_after: float) -> None:
    path, errors = store
    src = _bulk_file(tmp_path, kind)
    clean = tmp_path / "clean"  # the same write, not killed: what "entirely" looks like
    shutil.copytree(path, clean)
    assert _cli(clean, kind.partition("-")[0], str(src)).returncode == 0
    before, after = _cli(path, "export").stdout, _cli(clean, "export").stdout
    search = ["search", "ledger kuzu", "--limit", "50", "--json"]
    searched = {_cli(path, *search).stdout, _cli(clean, *search).stdout}

    verb = kind.partition("-")[0]
    killed = subprocess.run([sys.executable, "-c", _KILLED_IN_COMMIT, "--store", str(path), verb, str(src)],
                            capture_output=True, timeout=300, env={**os.environ, "KILL_AFTER": str(kill_after)})
    assert killed.returncode == -9 and (path / "commit-pending.json").exists()
    refused = _cli(path, "current", "project:ledger")
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 3 and len(lines) == 1 and "graphmem --store" in lines[0] and "rebuild" in lines[0]
    assert _cli(path, "rebuild", "--check").returncode == 3

    repaired = _cli(path, "rebuild", "--json")
    assert repaired.returncode == 0, repaired.stderr
    assert "repaired" in json.loads(repaired.stdout) and not (path / "commit-pending.json").exists()
    assert _cli(path, "export").stdout in (before, after), "the repaired store holds part of the write"
    assert _cli(path, *search).stdout in searched
    with _sound(path, errors):
        pass
    again = _cli(path, kind.partition("-")[0], str(src))  # repeating the write completes it
    assert again.returncode == 0, again.stderr
    with graphmem.open(path) as m, graphmem.open(clean) as c:
        assert (m.store.statement_count(), m.store.entity_count(), m.store.record_count()) == (
            c.store.statement_count(), c.store.entity_count(), c.store.record_count())
        def seen(mem: graphmem.Memory) -> list[str]:  # without ids: the ids a lost write took are not reused
            if kind == "import-edges":
                facts = mem.current("project:ledger").to_dict()["facts"]
            elif kind.startswith("import"):
                facts = mem.current("tool:bulk-tool-7").to_dict()["facts"]
                return [f"{f['predicate']} {json.dumps(f['object'])}" for f in facts]
            return [h.snippet for h in mem.search("ledger kuzu batch", limit=50).results]
        assert seen(m) == seen(c) and seen(m)


@pytest.mark.engine("kuzu", "ladybug")  # the commit mark of an embedded store's bulk COPY, and its repair
def test_repeated_ingests_killed_while_committing_leave_a_store_that_takes_the_next(store: tuple[Path, int],
                                                                                    tmp_path: Path) -> None:
    """Kills of 5,000-record ingests inside their commit, each repaired: a kill during Kuzu's checkpoint
    could leave the Record table's primary-key index out of step with its rows, which the repair kept,
    and every later ingest of that size crashed (exit 139). Now the repair writes such a table again,
    every uncut ingest after it succeeds, and rebuild --check (which looks keys up) stays clean."""
    path, errors = store

    def batch(tag: str) -> Path:
        f = tmp_path / f"{tag}.jsonl"
        f.write_text("".join(json.dumps({"id": f"{tag}-{i}", "kind": "note", "text": f"Record {i} of batch {tag} "
                                         f"about graph stores; we moved project {i % 97} to kuzu"}) + "\n"
                             for i in range(5000)))
        return f

    assert _cli(path, "ingest", str(batch("u0"))).returncode == 0
    for cycle, kill_after in enumerate((0.005, 0.02, 0.035, 0.05, 0.07, 0.1), 1):
        killed = subprocess.run([sys.executable, "-c", _KILLED_IN_COMMIT, "--store", str(path), "ingest",
                                 str(batch(f"k{cycle}"))], capture_output=True, timeout=300,
                                env={**os.environ, "KILL_AFTER": str(kill_after)})
        if killed.returncode == -9:
            repaired = _cli(path, "rebuild")
            assert repaired.returncode == 0, repaired.stderr
        else:
            assert killed.returncode == 0, killed.stderr
        uncut = _cli(path, "ingest", str(batch(f"u{cycle}")))
        assert uncut.returncode == 0, f"cycle {cycle}: the ingest after the repair exited {uncut.returncode}"
        check = _cli(path, "rebuild", "--check", "--json")
        assert check.returncode == 0, (cycle, json.loads(check.stdout)["problems"])
    with graphmem.open(path) as m:
        assert m.store.record_count() >= 7 * 5000
        assert len(m.search("batch u6 kuzu", limit=5).results) == 5


SPEND = """
import json, sys
import graphmem
import graphmem.store.kuzu.database as database
from graphmem.errors import StoreUnavailable
database.DB_BUDGET = 256 << 20  # a small budget, spent in a few dozen checkpoints rather than a million
database.RENEW_AT = None  # the database is never opened again to give it back
m = graphmem.open(sys.argv[1], create=True)
done = 0
try:
    for i in range(400):  # 60 records: a bulk write, its own checkpoint
        m.ingest([json.dumps({"id": f"r{i}-{j}", "ts": "2025-01-01T00:00:00Z", "kind": "note",
                              "text": f"note {i} {j} about Kuzu"}).encode() for j in range(60)])
        done += 1
except StoreUnavailable as e:
    print(json.dumps({"done": done, "first": str(e), "counted": m.store._used}), flush=True)
    said = {}
    for name, call in (("again", lambda: m.add_entity("Project", "After")),
                       ("cypher", lambda: m.cypher("MATCH (r:Record) RETURN count(*)"))):
        try:
            call()
        except StoreUnavailable as later:
            said[name] = str(later)
    print(json.dumps(said), flush=True)
m.close()  # and the interpreter's own teardown after it: neither may reach the engine again
"""


@pytest.mark.engine("kuzu")  # Kuzu 0.11 spends the budget at every checkpoint; LadybugDB gives it back
def test_a_spent_engine_budget_refuses_every_later_write_and_leaves_the_store_whole(tmp_path: Path) -> None:
    store = tmp_path / "s"
    p = subprocess.run([sys.executable, "-c", SPEND, str(store)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    first, later = (json.loads(line) for line in p.stdout.splitlines())
    assert first["done"] >= 3, first  # some bulk writes were acknowledged before the budget ran out
    # what the store counted (the most the engine can have spent: BudgetGuard) is at least what it spent
    assert first["counted"] >= 256 << 20, first
    for said in (first["first"], later.get("again", ""), later.get("cypher", "")):
        assert "used up what it sets aside for this open store" in said and "open the store again" in said, said
    # the last bulk write was refused between its commit and its checkpoint: the store says so, rebuild takes
    # that unacknowledged write back, and every acknowledged one is there
    if (store / "commit-pending.json").exists():
        with pytest.raises(StoreUnavailable, match="rebuild"):
            graphmem.open(store)
        with graphmem.open(store, repair=True) as m:
            m.rebuild()
    with graphmem.open(store) as m:
        assert m.store._q("MATCH (r:Record) RETURN count(*)")[0][0] == 60 * first["done"]
        assert m.rebuild(check=True).ok
        m.add_entity("Project", "Next")  # and it takes the next write
        assert m.entity("project:next").name == "Next"


ROLL_BACK = """
import sys
import graphmem
import graphmem.store.kuzu.database as database
from graphmem.errors import StoreUnavailable
database.DB_BUDGET = 128 << 20
database.RENEW_AT = None
m = graphmem.open(sys.argv[1], create=True)
m.add_entity("Project", "Kept")
for i in range(400):  # writes that fail after writing: each rollback checkpoints, and spends the budget
    try:
        with m.store.transaction():
            m.store._q("MERGE (x:Meta {key: 'probe'}) SET x.value = $v", {"v": str(i)})
            raise ValueError("taken back")
    except ValueError:
        continue
    except StoreUnavailable as e:
        print("refused:", e, flush=True)
        break
m.close()
"""


@pytest.mark.engine("kuzu")  # Kuzu 0.11 spends the budget at every checkpoint; LadybugDB gives it back
def test_a_budget_spent_by_a_rollback_leaves_the_store_whole(tmp_path: Path) -> None:
    store = tmp_path / "s"
    p = subprocess.run([sys.executable, "-c", ROLL_BACK, str(store)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.startswith("refused:") and "used up what it sets aside for this open store" in p.stdout, p.stdout
    with graphmem.open(store) as m:  # no write was acknowledged after the first: the store opens whole with it
        assert m.entity("project:kept").name == "Kept"
        assert m.rebuild(check=True).ok


RENEW = """
import json, subprocess, sys, threading
import graphmem
import graphmem.store.kuzu.database as database
database.DB_BUDGET = 256 << 20  # the budget the test above spends in 14 of these bulk writes
real_open, intruders = database.open_database, []

def open_again(*args, **kwargs):  # the database is closed here: another process tries to take the store
    if len(intruders) < 2:
        p = subprocess.run([sys.executable, "-c", "from graphmem.cli import main; main()", "--store", sys.argv[1],
                            "current", "p0"], capture_output=True, text=True, timeout=120)
        intruders.append([p.returncode, p.stderr])
    return real_open(*args, **kwargs)

m = graphmem.open(sys.argv[1], create=True)
database.open_database = open_again
counts, renewed = [], []
for i in range(40):
    if i == 20:  # then as the service: reads on threads of their own, and the renewal between writes
        renewed.append(m.store.renewals)
        m.store.per_thread_connections()
    if i >= 20:
        m.store.renew_if_due()
    m.ingest([json.dumps({"id": f"r{i}-{j}", "ts": "2025-01-01T00:00:00Z", "kind": "note",
                          "text": f"note {i} {j} about Kuzu"}).encode() for j in range(60)])
    m.add_entity("Project", f"P{i}")
    reader = threading.Thread(target=lambda: counts.append(m.cypher("MATCH (r:Record) RETURN count(*)").rows[0][0]))
    reader.start()
    reader.join()
renewed.append(m.store.renewals - renewed[0])
print(json.dumps({"renewed": renewed, "intruders": intruders, "counts": counts}))
m.close()
"""


@pytest.mark.engine("kuzu")  # Kuzu 0.11 spends the budget at every checkpoint; LadybugDB gives it back
def test_the_database_is_opened_again_before_its_budget_is_spent(tmp_path: Path) -> None:
    """Before the budget can run out, a writer's database is closed and opened again, which gives it back:
    every write goes on, reads on other threads find new connections, and no other process can take the
    store while Kuzu's own lock is let go (graphmem's is held throughout)."""
    store = tmp_path / "s"
    p = subprocess.run([sys.executable, "-c", RENEW, str(store)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    got = json.loads(p.stdout)
    # 20 bulk writes each way, where 14 spent the budget before: reopened in the writes' transactions, then
    # (reads on other threads) between the writes
    assert min(got["renewed"]) >= 2, got["renewed"]
    assert got["counts"] == [60 * (i + 1) for i in range(40)]  # each read after its write, on its own thread
    assert len(got["intruders"]) == 2
    for code, err in got["intruders"]:
        assert code == 3 and "is in use by process" in err and "writing" in err, (code, err)
    with graphmem.open(store) as m:
        assert m.cypher("MATCH (r:Record) RETURN count(*)").rows[0][0] == 60 * 40
        assert [m.entity(f"project:p{i}").name for i in (0, 39)] == ["P0", "P39"]
        assert m.rebuild(check=True).ok


@pytest.mark.engine("kuzu")  # Kuzu 0.11 spends the budget at every checkpoint; LadybugDB gives it back
def test_a_server_opens_the_database_again_only_between_its_writes(tmp_path: Path) -> None:
    """The service reads on many threads at once, and a search writes its use events from its own thread:
    the database is opened again only under the service's write lock, never under a running read. Writes
    enough to spend the budget without that, with searches running all along: every answer is 200, and the
    server is still up."""
    from concurrent.futures import ThreadPoolExecutor

    from test_service import MAIN, Server
    store = tmp_path / "s"
    graphmem.open(store, create=True).close()
    server = Server(store, main="import graphmem.store.kuzu.database as d; d.DB_BUDGET = 256 << 20; " + MAIN)
    try:
        def ingest(i: int) -> int:
            lines = [json.dumps({"id": f"r{i}-{j}", "ts": "2025-01-01T00:00:00Z", "kind": "note",
                                 "text": f"note {i} {j} about Kuzu and graphs"}) for j in range(60)]
            return server.post("/ingest", content="\n".join(lines).encode()).status_code

        def search(i: int) -> int:
            return server.get("/search", q=f"kuzu graphs {i % 7}", limit="5").status_code

        codes = []
        with ThreadPoolExecutor(8) as pool:  # 20 bulk writes (the budget lasts 14 without reopening), each
            for i in range(20):  # followed by searches enough to write their use events (64 at a time)
                codes.append(ingest(i))
                codes += list(pool.map(search, range(100)))
        assert codes == [200] * len(codes), sorted(set(codes))
        assert server.proc.poll() is None
        assert server.get("/search", q="note", limit="1").status_code == 200
    finally:
        assert server.stop() in (0, -signal.SIGTERM)  # ended by the signal, after its requests (not a crash)
    with graphmem.open(store) as m:
        assert m.cypher("MATCH (r:Record) RETURN count(*)").rows[0][0] == 60 * 20
        assert m.rebuild(check=True).ok


@pytest.mark.engine("kuzu", "ladybug")  # graphmem's own lock file beside an embedded store
def test_a_second_open_in_the_same_process_keeps_the_writers_lock(tmp_path: Path) -> None:
    """POSIX locks belong to a process, and closing any descriptor of the lock file lets go of them all:
    a reader opened and closed in the writer's own process must leave the writer's lock held."""
    store = tmp_path / "s"
    probe = ("import fcntl, sys\nf = open(sys.argv[1], 'a+b')\ntry:\n    fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)\n"
             "    print('free')\nexcept OSError:\n    print('held')")

    def lock_state() -> str:
        return subprocess.run([sys.executable, "-c", probe, str(store / "graphmem.lock")], capture_output=True,
                              text=True, timeout=60).stdout.strip()
    with graphmem.open(store, create=True) as writer:
        assert lock_state() == "held"
        graphmem.open(store, read_only=True).close()
        assert lock_state() == "held"  # before: free, and another process could take the store
        writer.add_entity("Project", "Still mine")
    assert lock_state() == "free"
