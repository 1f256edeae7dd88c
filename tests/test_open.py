"""Opening a store: read-only, so that several processes read at once; through a running
``graphmem serve``, so that the CLI keeps working while a server holds the store; and never made
by accident (only ``init``, ``demo`` and ``create=True`` make one). Real processes, a real server."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE, Run, cli, copy_demo, one_clear_line
from test_service import Server

import graphmem
from graphmem.errors import BadInput, StoreReadOnly, StoreUnavailable

EXE = [sys.executable, "-c", "from graphmem.cli import main; main()"]
HOLD = ("import graphmem, sys; m = graphmem.open(sys.argv[1], read_only=sys.argv[2] == 'ro'); "
        "print(m.current('atlas').subject.ref, flush=True); sys.stdin.read()")


@pytest.fixture
def copy(demo_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A private copy of the demo store on the run's engine."""
    target: Path = copy_demo(demo_dir, tmp_path / "store", request)
    return target


class Holder:
    """Another process that holds the store open (a notebook, say), until the test ends."""

    def __init__(self, path: Path, read_only: bool) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), "ro" if read_only else "rw"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line == "project:atlas", self.proc.stderr.read() if self.proc.stderr else line

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f:
                f.close()


@pytest.fixture
def reader(copy: Path) -> Iterator[Holder]:
    h = Holder(copy, read_only=True)
    yield h
    h.close()


def run(store: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, "--store", str(store), *args], capture_output=True, text=True, timeout=180, **kw)


def files(path: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under the store: size, modification time and a hash of its bytes."""
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(path.rglob("*")) if p.is_file()}


def held(store: Path) -> Any:
    """All the store holds: every file of a folder store (``files``), or every row of every table of a
    PostgreSQL store, read over a connection of its own."""
    if TEST_ENGINE != "postgresql":
        return files(store)
    import psycopg

    from graphmem.store.postgres.base import TABLES, split_url
    conninfo, schema = split_url(str(store))
    with psycopg.connect(conninfo) as c:
        return {t: sorted(repr(r) for r in c.execute(f"SELECT * FROM {schema}.{t}").fetchall()) for t in TABLES}


# 1. read-only: several readers at once, nothing written ----------------------------------------

READS = [["current", "atlas"], ["timeline", "atlas", "-p", "status"], ["facts", "-p", "uses", "-o", "kuzu"],
         ["why", "fact:100"], ["search", "tantivy"], ["entity", "show", "kuzu"], ["entity", "list", "-t", "Tool"],
         ["export"], ["recommend", "graph database", "--top", "2"], ["path", "quill", "kuzu"],
         ["pack", "-q", "Atlas Kuzu", "-b", "300"], ["lint"], ["rebuild", "--check"],
         ["extract", "--text", "Quill is now paused"]]


def test_cli_reads_side_by_side_with_a_reader_that_holds_the_store(copy: Path, reader: Holder) -> None:
    """A notebook holds the store read-only; this process opens it read-only too, and every read command
    of the CLI runs beside both, in its own process (two at a time)."""
    with graphmem.open(copy, read_only=True) as m:
        assert m.read_only and m.current("atlas").subject.ref == "project:atlas"
        for i in range(0, len(READS), 2):
            procs = [(argv, subprocess.Popen([*EXE, "--store", str(copy), "--json", *argv], stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True)) for argv in READS[i:i + 2]]
            for argv, p in procs:
                out, err = p.communicate(timeout=180)
                assert p.returncode == (1 if argv == ["lint"] else 0), (argv, err)  # the demo has lint errors
                assert json.loads(out)["schema"].startswith("graphmem."), argv
                assert err == "", (argv, err)


@pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' lock on the folder: one writer or several readers
def test_a_writer_finds_the_store_busy_and_names_the_reader(copy: Path, reader: Holder) -> None:
    before = files(copy)
    r = run(copy, "assert", "ledger", "priority", "p1")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 3 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"graphmem: error: store {str(copy)!r} is in use by "), lines
    if sys.platform == "linux":  # fcntl names the process that holds Kuzu's lock
        assert f"process {reader.proc.pid} (" in lines[0] and "reading" in lines[0], lines
    with pytest.raises(StoreUnavailable, match="is in use by"):
        graphmem.open(copy)  # nor from Python
    assert files(copy) == before


@pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' lock on the folder: one writer or several readers
def test_a_reader_waits_for_no_one_but_a_writer(copy: Path) -> None:
    """Kuzu lets one process write or several read: a process that writes keeps readers out too."""
    writer = Holder(copy, read_only=False)
    try:
        r = run(copy, "current", "atlas")
        assert r.returncode == 3 and f"process {writer.proc.pid}" * (sys.platform == "linux") in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    finally:
        writer.close()


WRITES: list[tuple[str, Any]] = [
    ("add_entity", lambda m: m.add_entity("Tool", "Valkey")),
    ("assert_", lambda m: m.assert_("ledger", "priority", "p1")),
    ("end", lambda m: m.end("atlas", "uses", "kuzu", at="2030-01-01")),
    ("retract", lambda m: m.retract("fact:100")),
    ("import_jsonl", lambda m: m.import_jsonl(['{"op": "entity", "type": "Tool", "name": "Valkey"}'])),
    ("ingest", lambda m: m.ingest([b'{"text": "Ledger moves to Valkey."}'])),
    ("extract_text", lambda m: m.extract_text("Quill is now paused", apply=True)),
    ("extract_pending", lambda m: m.extract_pending(apply=True)),
    ("rebuild", lambda m: m.rebuild()),
    ("query", lambda m: m.store._q("INSERT INTO meta VALUES ('x', 'y')") if TEST_ENGINE == "postgresql"
     else m.store.cypher("CREATE (:Tool {ref: 'tool:x', name: 'x'})")),  # the engine's own language
]


def test_a_write_through_a_read_only_memory_is_one_clear_error(copy: Path) -> None:
    before = held(copy)
    with graphmem.open(copy, read_only=True) as m:
        export = m.export()
        for name, write in WRITES:
            with pytest.raises(StoreReadOnly) as e:
                write(m)
            message = str(e.value)
            assert "\n" not in message and message.startswith(f"store {str(copy)!r} is open read-only: cannot "), name
            assert message.endswith("open it without read_only=True to write"), (name, message)
        assert m.export() == export  # and it still reads
    assert held(copy) == before


def test_opening_read_only_writes_nothing_at_all(copy: Path, tmp_path: Path) -> None:
    """No tmp/ clean-up, no registry upkeep, no checkpoint: the store's files (or tables) are as they were."""
    leftover = Path(copy) / "tmp" / "tmpk1ll3d.csv"
    if TEST_ENGINE != "postgresql":  # an embedded store's folder
        leftover.parent.mkdir(exist_ok=True)
        leftover.write_text("1\tassert\n", "utf-8")  # as a killed import leaves it; a writer's open removes it
    extra = tmp_path / "preds"
    extra.mkdir()
    (extra / "x.toml").write_text('[predicates.mood]\ndescription = "A mood."\nsubject_types = ["Project"]\n'
                                  'object = { type = "string" }\ncardinality = "one"\n', "utf-8")
    before = held(copy)
    with graphmem.open(copy, read_only=True, predicate_dirs=[extra]) as m:  # a predicate the store has not recorded
        m.lint()
        m.pack("Atlas Kuzu")
    assert held(copy) == before
    graphmem.open(copy, predicate_dirs=[extra]).close()
    assert not leftover.exists()
    assert held(copy) != before  # a writer's open records the new predicate: what the reader did not


@pytest.mark.parametrize("other", ["create", "repair"])
def test_read_only_with_create_or_repair_is_bad_input(copy: Path, other: str) -> None:
    with pytest.raises(BadInput, match=rf"^read_only=True with {other}=True: expected one of them"):
        graphmem.open(copy, read_only=True, **{other: True})


@pytest.mark.engine("kuzu", "ladybug")  # a node table per entity type (PostgreSQL: one entity table for every type)
def test_a_type_the_store_has_no_table_for_needs_one_writable_open(copy: Path, tmp_path: Path) -> None:
    ont = tmp_path / "ont"
    ont.mkdir()
    (ont / "x.toml").write_text('[entity_types.Planet]\ndescription = "A world."\n', "utf-8")
    with pytest.raises(StoreReadOnly, match="no table for 'Planet'.*open it to write once"):
        graphmem.open(copy, read_only=True, ontology_dirs=[ont])
    graphmem.open(copy, ontology_dirs=[ont]).close()
    with graphmem.open(copy, read_only=True, ontology_dirs=[ont]) as m:
        assert m.list_entities("Planet").entities == ()


OPEN_ALL = """
import json, sys
from pathlib import Path
import graphmem
from graphmem.errors import StoreUnavailable
root, opened = Path(sys.argv[1]), []
try:
    while len(opened) < 40:
        opened.append(graphmem.open(root / f"s{len(opened)}", create=True))
        opened[-1].add_entity("Project", f"P{len(opened) - 1}")
    refused = None
except StoreUnavailable as e:
    refused = str(e)
n = len(opened)
made = sorted(p.name for p in (root / f"s{n}").glob("*")) if refused else []
opened.pop().close()
with graphmem.open(root / f"s{n}", create=True) as m:  # one closed, one more opens
    m.add_entity("Project", "Last")
    last = m.entity("project:last").name
names = [m.entity(f"project:p{i}").name for i, m in enumerate(opened)]
for m in opened:
    m.close()
print(json.dumps({"open": n, "refused": refused, "made": made, "last": last, "names": names}))
"""


@pytest.mark.engine("kuzu", "ladybug")  # each open database reserves the engine's largest size in address space
def test_a_sixteenth_store_open_at_once_is_one_clear_error(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-c", OPEN_ALL, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["open"] == 15, got  # in a process of its own: 15 of 8 TiB each in 128 TiB
    assert re.fullmatch(r"store '.*/s15' cannot be opened: this process holds as many stores open as it can \(15\); "
                        r"close one first \(.*\)", got["refused"]), got["refused"]
    assert not [f for f in got["made"] if f.startswith("graph.")]  # no database made in the refused folder
    assert got["last"] == "Last" and got["names"] == [f"P{i}" for i in range(14)]


# 2. while a server holds the store, the CLI goes through it -------------------------------------

@pytest.fixture(scope="module")
def served(demo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """A server on one copy of the demo, and a twin copy the CLI opens itself."""
    root = tmp_path_factory.mktemp("through")
    shutil.copytree(demo_dir, root / "served")
    shutil.copytree(demo_dir, root / "twin")
    s = Server(root / "served")
    yield s, root / "twin"
    s.stop()


WHEN = ["--known-at", "2026-12-01"]
SAME = [["current", "atlas", "--as-of", "2025-06-01", *WHEN], ["timeline", "atlas", *WHEN],
        ["facts", "-p", "uses", "-o", "kuzu", "--as-of", "2025-06-01"], ["why", "fact:100"],
        ["entity", "show", "atlas-app"], ["entity", "list", "-t", "Tool", "-m", "d"], ["search", "tantivy", "-n", "3"],
        ["export"], ["export", "-f", "graphml", "--as-of", "2025-06-01"],
        ["recommend", "an embedded graph store like Kuzu", "--as-of", "2025-05-01", *WHEN],
        ["path", "quill", "kuzu", "--as-of", "2025-06-01", *WHEN],
        ["pack", "-q", "Why did Atlas move to Kuzu?", "-b", "400", "--as-of", "2025-09-01", *WHEN, "--trace"],
        ["lint", "--fail-on", "warning"],
        ["extract", "--record", "rec:3"], ["current", "nobody"], ["why", "fact:99999"], ["pack", "-q", "x", "-b", "-1"],
        ["timeline", "atlas", "--known-at", "someday"], ["facts", "-t", "Planet"], ["lint", "--fail-on", "info"]]


def _notice(r: Run, server: Server) -> list[str]:
    """The stderr lines after the one that says the command goes through the server."""
    lines = r.err_lines
    assert lines and lines[0] == (f"graphmem: store {str(server.store)!r} is held by a graphmem server "
                                  f"(pid {server.proc.pid}, {server.url}); this command goes through it"), r
    return lines[1:]


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
@pytest.mark.parametrize("argv", SAME, ids=lambda a: " ".join(a[:2]))
def test_a_command_through_the_server_prints_and_exits_as_it_would_alone(
        served: tuple[Server, Path], argv: list[str], as_json: bool) -> None:
    server, twin = served
    args = (["--json"] if as_json else []) + argv
    there, here = cli(server.store, *args), cli(twin, *args)
    assert there.code == here.code and _normalize(there.out) == _normalize(here.out), (there, here)
    if argv == ["lint", "--fail-on", "info"]:  # refused before the store is opened, so before the server is asked
        assert there.err_lines == here.err_lines
    else:
        assert _notice(there, server) == here.err_lines, (there, here)
    assert "Traceback" not in there.out + there.err


def _normalize(out: str) -> str:
    """Output with the seconds a command took left out (the only part that may differ)."""
    try:
        doc = json.loads(out)
    except ValueError:
        return out
    doc.pop("seconds", None)
    return json.dumps(doc)


def _without_times(doc: Any) -> Any:
    """A write's document without the record times it took (now, which differs between two stores)."""
    if isinstance(doc, dict):
        return {k: _without_times(v) for k, v in doc.items()
                if k not in ("seconds", "recorded_at", "retracted_at", "ingested_at", "extracted_at")}
    if isinstance(doc, list):
        return [_without_times(x) for x in doc]
    if isinstance(doc, str):  # a time inside a message ("already retracted (at ...)")
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<time>", doc)
    return doc


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
def test_writes_through_the_server_are_the_writes_it_would_make_alone(served: tuple[Server, Path],
                                                                      tmp_path: Path) -> None:
    server, twin = served
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join([json.dumps({"op": "entity", "type": "Tool", "name": "Valkey"}), "",
                                  json.dumps({"op": "assert", "subject": "ledger", "predicate": "uses",
                                              "object": "valkey", "valid_from": "2026-11-01"}),
                                  '{"op": "assert", "subject": "nobody"}',
                                  json.dumps({"op": "entity", "type": "Tool", "name": "Line\u2028Sep"})]) + "\n", "utf-8")
    notes = tmp_path / "notes.jsonl"
    notes.write_text("\n".join([json.dumps({"id": "n1", "ts": "2026-11-03T09:00:00Z", "text": "Ledger now uses Valkey; "
                                            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}), "not json", "",
                                json.dumps({"id": "n2", "ts": "2026-11-04", "text": "Quill is paused."})]) + "\n", "utf-8")
    steps = [["entity", "add", "Tool", "Memcached", "-a", "memcache", "-d", "A cache."],
             ["assert", "ledger", "uses", "memcached", "--from", "2026-10-01", "-s", "https://example.org/x"],
             ["end", "ledger", "uses", "memcached", "--at", "2026-10-20"],
             ["retract", "fact:100", "-r", "typo"], ["retract", "fact:100"],
             ["import", str(history)], ["ingest", str(notes), "--no-redact"], ["ingest", str(notes)],
             ["extract", "--pending", "--apply"], ["end", "ledger", "uses"],
             ["current", "ledger", "--as-of", "2026-10-10", "--known-at", "2099-01-01"]]
    for argv in steps:
        there, here = cli(server.store, "--json", *argv), cli(twin, "--json", *argv)
        assert there.code == here.code, (argv, there, here)
        assert _without_times(json.loads(there.out or "{}")) == _without_times(json.loads(here.out or "{}")), argv
        assert _stamped(_notice(there, server)) == _stamped(here.err_lines), (argv, there, here)
    for argv in (["import", "-"], ["ingest", "-"]):  # stdin too
        data = '{"op": "entity", "type": "Tool", "name": "Etcd"}\n' if argv[0] == "import" else '{"text": "Etcd."}\n'
        there, here = cli(server.store, *argv, input=data), cli(twin, *argv, input=data)
        assert (there.code, _normalize_text(there.out)) == (here.code, _normalize_text(here.out)), (there, here)


def _stamped(lines: list[str]) -> list[str]:
    """Lines with the instants a write took (now) left out."""
    return [re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<now>", line) for line in lines]


def _normalize_text(out: str) -> str:
    return re.sub(r"\d+(\.\d+)? s\b", "<seconds> s", out)  # "... in 0.01 s", "(0.008 s)"


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
def test_init_through_the_server_reports_the_store(served: tuple[Server, Path]) -> None:
    server, _ = served
    r = cli(server.store, "--json", "init")
    assert r.code == 0 and r.json()["schema"] == "graphmem.init.v1" and r.json()["entities"] >= 48, r
    assert r.json()["store"] == str(server.store)


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
def test_extra_ontology_options_are_refused_while_a_server_holds_the_store(served: tuple[Server, Path],
                                                                           tmp_path: Path) -> None:
    server, _ = served
    r = cli(server.store, "--predicates", str(tmp_path), "current", "atlas")
    one_clear_line(r, 3, ["in use by a graphmem server", "--predicates"])


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
def test_the_cli_uses_the_token_the_server_requires(copy: Path) -> None:
    s = Server(copy, "--token", "s3cret-t0ken")
    try:
        marker = copy / "server.json"
        assert marker.stat().st_mode & 0o777 == 0o600  # readable by its owner alone
        assert json.loads(marker.read_text())["token"] == "s3cret-t0ken"
        r = run(copy, "--json", "entity", "show", "kuzu")
        assert r.returncode == 0 and json.loads(r.stdout)["entity"]["ref"] == "tool:kuzu", r.stderr
        marker.write_text(json.dumps({**json.loads(marker.read_text()), "token": "wrong"}))
        r = run(copy, "current", "atlas")
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 3 and len(lines) == 2 and "refused the command" in lines[1] and "token" in lines[1], lines
    finally:
        s.stop()
    assert not (copy / "server.json").exists()


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
def test_a_server_bound_to_every_address_is_reached_on_loopback(copy: Path) -> None:
    s = Server(copy, "--host", "0.0.0.0", "--token", "t")
    try:
        r = run(copy, "--json", "current", "atlas", "-p", "status")
        assert r.returncode == 0 and json.loads(r.stdout)["schema"] == "graphmem.current.v1", r.stderr
        assert f"http://0.0.0.0:{s.port}" in r.stderr  # the server as it names itself
    finally:
        s.stop()


@pytest.mark.engine("kuzu", "ladybug")  # the marker in an embedded store's folder sends the CLI through its server
def test_a_server_that_stopped_answering_is_one_clear_line(copy: Path, tmp_path: Path) -> None:
    """A marker naming a live process that is no server (here: this test) is a refusal, not a hang."""
    from test_service import free_port
    (copy / "server.json").write_text(json.dumps({"pid": os.getpid(), "url": f"http://127.0.0.1:{free_port()}"}))
    r = cli(copy, "current", "atlas")
    assert r.code == 3 and len(r.err_lines) == 2 and "did not answer" in r.err_lines[1], r


# 3. a store is made on purpose -------------------------------------------------------------------

def test_open_on_a_path_without_a_store_is_store_unavailable(tmp_path: Path, new_store: Callable[[str], Path]) -> None:
    missing, empty = new_store("missing"), tmp_path / "empty"
    empty.mkdir()
    for path in (missing, empty) if TEST_ENGINE != "postgresql" else (missing,):  # an empty folder: no store either
        for kw in ({}, {"read_only": True}):
            with pytest.raises(StoreUnavailable, match=rf"^no store at {re.escape(repr(str(path)))}"
                                                       r"( \(schema \w+ holds no graphmem tables\))?: expected one made "
                                                       r"by 'graphmem init' \(or graphmem.open\((path|address), "
                                                       r"create=True\)\)$"):
                graphmem.open(path, **kw)
    assert TEST_ENGINE == "postgresql" or not missing.exists() and list(empty.iterdir()) == []
    with graphmem.open(missing, create=True) as m:
        assert m.info().entities == 0
    with graphmem.open(missing) as m:  # now there is one
        assert m.info().statements == 0


def test_only_init_makes_a_store_from_the_command_line(new_store: Callable[[str], Path]) -> None:
    store = new_store("s")
    for argv in (["entity", "add", "Tool", "Kuzu"], ["current", "kuzu"], ["lint"], ["export"]):
        one_clear_line(cli(store, *argv), 3, [f"no store at {str(store)!r}", "graphmem init"])
    assert TEST_ENGINE == "postgresql" or not store.exists()  # (on every engine: each command above found none)
    assert cli(store, "init").code == 0
    assert cli(store, "entity", "add", "Tool", "Kuzu").out.strip() == "tool:kuzu"


def test_serve_on_a_path_without_a_store_is_one_clear_line(new_store: Callable[[str], Path]) -> None:
    import socket
    store = new_store("s")
    with socket.socket() as busy:  # a port in use, so that a server that did start would stop at once
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        r = cli(store, "serve", "--port", str(busy.getsockname()[1]))
    one_clear_line(r, 3, [f"no store at {str(store)!r}", "graphmem init"])
    assert TEST_ENGINE == "postgresql" or not store.exists()
    one_clear_line(cli(store, "current", "atlas"), 3, [f"no store at {str(store)!r}", "graphmem init"])  # none made


LEAVE = """
import os, sys, graphmem
from graphmem.store import leave_open_until_exit
leave_open_until_exit()
with graphmem.open(sys.argv[1], create=True) as m:
    m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu"), m.add_entity("Tool", "Redis")
    m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
with graphmem.open(sys.argv[1], read_only=True) as m:  # the same store again: what the first close left is closed first
    seen = [f.object for f in m.current("Atlas").facts]
with graphmem.open(sys.argv[1]) as m:  # the last close a writer's: its log folded into the store
    m.assert_("Atlas", "uses", "Redis", valid_from="2024-02-01")
    seen += [f.object for f in m.current("Atlas").facts]
print(" ".join(seen), flush=True)
os._exit(0)
"""


def test_a_process_that_ends_after_closing_leaves_its_store_whole(store_path: Path) -> None:
    """``leave_open_until_exit`` (the command line's way): each close folds a writer's log into the store and
    leaves the engine to the process's end; the same process opens the store again, and after ``os._exit``
    another process reads everything written, with no write-ahead log left to replay."""
    r = subprocess.run([sys.executable, "-c", LEAVE, str(store_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["tool:kuzu", "tool:kuzu", "tool:redis"]
    if TEST_ENGINE != "postgresql":
        logs = [p for p in Path(store_path).iterdir() if p.name.endswith(".wal") and p.stat().st_size > 0]
        assert logs == []
    with graphmem.open(store_path, read_only=True) as m:
        assert sorted(f.object for f in m.current("Atlas").facts) == ["tool:kuzu", "tool:redis"]


@pytest.mark.engine("kuzu", "ladybug")  # graphmem's lock of an embedded store's folder
def test_a_second_open_to_write_in_the_same_process_is_refused_and_loses_nothing(tmp_path: Path) -> None:
    """Two writable opens of one store in one process would each keep their own pages and log, and each
    commit over the other's writes (both acknowledged ``fact:1``, one statement kept): the second is one clear
    error, and every write through the first is kept."""
    store = tmp_path / "s"
    with graphmem.open(store, create=True) as m:
        for t, n in (("Project", "Orchid"), ("Concept", "Graph"), ("Tool", "Alpha"), ("Tool", "Beta")):
            m.add_entity(t, n)
    first = graphmem.open(store)
    try:
        with pytest.raises(graphmem.StoreUnavailable, match="open to write already in this process"):
            graphmem.open(store)
        assert first.assert_("project:orchid", "evaluates", "concept:graph").refs == ("fact:1",)
        reader = graphmem.open(store, read_only=True)  # a reader beside it stays allowed
        reader.close()
        assert first.assert_("tool:alpha", "replaces", "tool:beta").refs == ("fact:2",)
    finally:
        first.close()
    with graphmem.open(store) as again:  # the first closed: the store opens to write again
        assert [s.ref for s in again.store.all_statements()] == ["fact:1", "fact:2"]  # type: ignore[attr-defined]
