"""Bad input through the CLI (SPEC 5 and 13): exit 2 with one clear line on stderr, no traceback, store unchanged;
exit 3 when the store cannot be used."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import DB_FILE, TEST_ENGINE, cli, one_clear_line

import graphmem

SRC = "https://example.org/evidence"


def export(store: Path) -> str:
    r = cli(store, "export")
    assert r.code == 0, r
    return r.out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> tuple[Path, str]:
    """A small store with history (assertions, an end, a retraction) and an ambiguous name, on the run's
    engine; and its export."""
    path: Path = (request.getfixturevalue("pg_cluster").url("t_bad_tpl_" + uuid.uuid4().hex[:8])
                  if TEST_ENGINE == "postgresql" else tmp_path_factory.mktemp("bad-tpl") / "store")
    m = graphmem.open(path, create=True)
    m.add_entity("Project", "Atlas", aliases=["atlas-app"], description="The knowledge graph.")
    m.add_entity("Tool", "Kuzu")
    m.add_entity("Tool", "SQLite")
    m.add_entity("Person", "Ada Lovelace", aliases=["Ada"])
    m.add_entity("Tool", "Mercury")
    m.add_entity("Person", "Mercury")
    m.assert_("atlas", "uses", "sqlite", valid_from="2025-01-01", sources=[SRC])
    m.assert_("atlas", "uses", "kuzu", valid_from="2025-03-01", sources=[SRC])
    m.end("atlas", "uses", "sqlite", at="2025-04-01")
    m.assert_("atlas", "status", "active", valid_from="2025-01-01", sources=[SRC])
    m.assert_("atlas", "owner", "ada", valid_from="2025-01-01")
    m.retract("fact:5", "test")
    m.close()
    exported = export(path)
    assert exported.count('"op": "assert"') == 4 and '"op": "retract"' in exported
    return path, exported


@pytest.fixture
def store(template: tuple[Path, str], tmp_path: Path, new_store: Callable[[str], Path]) -> Iterator[Path]:
    """A private copy of the template: its folder copied, or on PostgreSQL its export imported into a new schema."""
    if TEST_ENGINE == "postgresql":
        target = new_store("store")
        with graphmem.open(target, create=True) as m:
            assert m.import_jsonl(template[1].splitlines(), strict=True).ok
    else:
        target = tmp_path / "store"
        shutil.copytree(template[0], target)
    yield target


@pytest.fixture
def before(template: tuple[Path, str]) -> str:
    return template[1]


CASES: list[tuple[str, list[str], list[str], list[str]]] = [
    # id, argv, values the line must name, words saying what was expected
    ("unknown-entity", ["assert", "nobody", "status", "active"], ["'nobody'"], ["expected"]),
    ("unknown-entity-read", ["current", "nobody"], ["'nobody'"], ["expected"]),
    ("unknown-object", ["assert", "atlas", "uses", "nothing-here"], ["'nothing-here'"], ["expected"]),
    ("ambiguous-subject", ["current", "mercury"], ["'mercury'", "person:mercury", "tool:mercury"], ["ambiguous"]),
    ("ambiguous-object", ["assert", "atlas", "uses", "Mercury"], ["'Mercury'", "person:mercury", "tool:mercury"],
     ["candidates"]),
    ("unknown-predicate", ["assert", "atlas", "flavor", "sweet"], ["'flavor'"], ["status", "uses"]),
    ("unknown-predicate-read", ["current", "atlas", "--predicate", "flavor"], ["'flavor'"], ["status"]),
    ("object-type", ["assert", "atlas", "uses", "person:ada-lovelace"], ["person:ada-lovelace", "Person"],
     ["expects", "Tool"]),
    ("object-type-owner", ["assert", "atlas", "owner", "kuzu"], ["tool:kuzu", "Tool"], ["expects", "Person"]),
    ("subject-type", ["assert", "kuzu", "status", "active"], ["tool:kuzu", "Tool"], ["expects", "Project"]),
    ("enum", ["assert", "atlas", "status", "sleeping"], ["'sleeping'"], ["expected", "active", "archived"]),
    ("enum-priority", ["assert", "atlas", "priority", "p9"], ["'p9'"], ["expected", "p0", "p3"]),
    ("malformed-date", ["assert", "atlas", "status", "paused", "--from", "yesterdayish"], ["'yesterdayish'"],
     ["expected", "ISO-8601"]),
    ("malformed-date-read", ["current", "atlas", "--as-of", "soonish"], ["'soonish'"], ["expected"]),
    ("malformed-date-known-at", ["timeline", "atlas", "--known-at", "01/02/2025"], ["'01/02/2025'"], ["expected"]),
    ("impossible-date", ["assert", "atlas", "status", "paused", "--from", "2025-02-30"], ["'2025-02-30'"],
     ["calendar date"]),
    ("impossible-date-to", ["assert", "atlas", "status", "paused", "--from", "2025-01-01", "--to", "2025-13-01"],
     ["2025-13-01"], ["date"]),
    ("impossible-date-object", ["assert", "atlas", "deadline", "2025-02-30"], ["'2025-02-30'"], ["date"]),
    ("impossible-date-read", ["current", "atlas", "--as-of", "2025-02-30"], ["2025-02-30"], ["date"]),
    ("valid-to-before-from", ["assert", "atlas", "status", "paused", "--from", "2025-02-01", "--to", "2025-01-01"],
     ["2025-01-01"], ["after", "2025-02-01"]),
    ("valid-to-equals-from", ["assert", "atlas", "status", "paused", "--from", "2025-02-01", "--to", "2025-02-01"],
     ["2025-02-01"], ["after"]),
    ("end-of-nothing", ["end", "atlas", "uses", "sqlite", "--at", "2025-06-01"], ["tool:sqlite"], ["expected"]),
    ("end-before-start", ["end", "atlas", "uses", "kuzu", "--at", "2024-01-01"], ["tool:kuzu"], ["expected"]),
    ("end-of-nothing-predicate", ["end", "atlas", "priority", "--at", "2025-06-01"], ["priority"], ["expected"]),
    ("retract-unknown", ["retract", "fact:999"], ["'fact:999'"], ["no statement"]),
    ("retract-twice", ["retract", "fact:5"], ["'fact:5'"], ["already retracted"]),
    ("malformed-fact-ref", ["retract", "fact:abc"], ["'fact:abc'"], ["expected fact:N"]),
    ("malformed-fact-ref-why", ["why", "42"], ["'42'"], ["expected fact:N"]),
    ("import-missing-file", ["import", "/nonexistent/dir/x.jsonl"], ["x.jsonl"], ["no such file"]),
    ("bad-fail-on", ["lint", "--fail-on", "info"], ["'info'"], ["expected", "error", "warning"]),
    ("export-bad-format", ["export", "--format", "xml"], ["'xml'"], ["expected", "jsonl", "graphml"]),
    ("export-jsonl-as-of", ["export", "--as-of", "2025-01-01"], ["--as-of"], ["graphml"]),
    ("export-graphml-bad-date", ["export", "--format", "graphml", "--as-of", "2025-02-30"], ["2025-02-30"],
     ["date"]),
    ("unknown-entity-type", ["entity", "add", "Planet", "Mars"], ["'Planet'"], ["expected", "Project"]),
    ("unknown-entity-type-list", ["entity", "list", "--type", "Planet"], ["'Planet'"], ["expected"]),
    ("unknown-subject-type", ["facts", "--subject-type", "Planet"], ["'Planet'"], ["expected"]),
    ("duplicate-entity", ["entity", "add", "Project", "atlas"], ["project:atlas"], ["already exists"]),
    ("entity-name-without-letters", ["entity", "add", "Project", "!!!"], ["'!!!'"], ["letters"]),
    ("bad-asserter", ["assert", "atlas", "status", "paused", "--by", "robot"], ["'robot'"], ["expected", "operator"]),
    ("bad-source", ["assert", "atlas", "status", "paused", "--source", "not a uri"], ["'not a uri'"], ["expected"]),
    ("bad-url", ["assert", "atlas", "homepage", "notaurl"], ["'notaurl'"], ["expected", "URL"]),
    ("unknown-entity-show", ["entity", "show", "atlaz"], ["'atlaz'"], ["expected"]),
    ("facts-unknown-object", ["facts", "--predicate", "uses", "--object", "nothing-here"], ["'nothing-here'"],
     ["expected"]),
    ("facts-bad-literal", ["facts", "--predicate", "status", "--object", "sleeping"], ["'sleeping'"], ["expected"]),
]


@pytest.mark.parametrize(("argv", "names", "expects"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_exit_2_one_line_store_unchanged(store: Path, before: str, argv: list[str], names: list[str],
                                                    expects: list[str]) -> None:
    r = cli(store, *argv)
    one_clear_line(r, 2, names, expects)
    assert r.out == ""
    assert export(store) == before


@pytest.mark.parametrize(("argv", "names", "code"), [
    (["assert", "nobody", "status", "active"], ["'nobody'"], "UnknownEntity"),
    (["current", "atlas", "--as-of", "soonish"], ["'soonish'"], "BadTime"),
    (["lint", "--fail-on", "info"], ["'info'"], "BadInput"),
    (["import", "/nonexistent/dir/x.jsonl"], ["x.jsonl"], "BadInput"),
    (["assert", "atlas", "status"], ["OBJECT"], "usage_error"),
    (["current", "atlas", "--bogus"], ["--bogus"], "usage_error"),
    (["curent", "atlas"], ["'curent'", "'current'"], "usage_error"),
])
@pytest.mark.parametrize("where", ["before", "after"])
def test_bad_input_with_json_is_one_error_document(store: Path, before: str, argv: list[str], names: list[str],
                                                   code: str, where: str) -> None:
    """With --json (before or after the command) an error is one graphmem.error.v1 document on stdout,
    the service's shape, with the same exit code; nothing on stderr and nothing written."""
    r = cli(store, "--json", *argv) if where == "before" else cli(store, *argv, "--json")
    assert r.code == 2, r
    assert r.err == "", r
    doc = r.json()
    assert set(doc) == {"schema", "code", "message"}, doc
    assert doc["schema"] == "graphmem.error.v1" and doc["code"] == code, doc
    assert "\n" not in doc["message"] and all(n in doc["message"] for n in names), doc
    assert export(store) == before


# usage errors (Click's parser) -----------------------------------------------------------


@pytest.mark.parametrize("argv", [["assert", "atlas", "status"], ["current", "atlas", "--bogus"]],
                         ids=["missing-argument", "unknown-option"])
def test_usage_errors_are_one_line(store: Path, argv: list[str]) -> None:
    r = cli(store, *argv)
    assert r.code == 2
    assert len(r.err_lines) == 1, r


def test_usage_errors_exit_2_without_traceback(store: Path, before: str) -> None:
    for argv in (["assert", "atlas", "status"], ["current", "atlas", "--bogus"], ["no-such-command"]):
        r = cli(store, *argv)
        assert r.code == 2, r
        assert "Traceback" not in r.out + r.err and r.err.strip()
    assert export(store) == before


# import ----------------------------------------------------------------------------------

VALID_ENTITY = b'{"op": "entity", "type": "Tool", "name": "Valkey", "description": "A cache."}\n'
VALID_ASSERT = (b'{"op": "assert", "subject": "project:atlas", "predicate": "uses", "object": "valkey", '
                b'"valid_from": "2025-05-01", "sources": ["https://example.org/v"]}\n')

BAD_LINES: list[tuple[str, bytes, list[str]]] = [
    ("not-json", b"{oops\n", ["JSON"]),
    ("not-an-object", b"[1, 2]\n", ["object"]),
    ("string-json", b'"entity"\n', ["object"]),
    ("unknown-op", b'{"op": "frobnicate"}\n', ["'frobnicate'", "expected"]),
    ("missing-op", b'{"subject": "project:atlas"}\n', ["op", "expected"]),
    ("missing-object", b'{"op": "assert", "subject": "project:atlas", "predicate": "status"}\n', ["'object'"]),
    ("missing-subject", b'{"op": "assert", "predicate": "status", "object": "active"}\n', ["'subject'"]),
    ("missing-fact", b'{"op": "retract"}\n', ["'fact'"]),
    ("bad-date", b'{"op": "assert", "subject": "project:atlas", "predicate": "priority", "object": "p0", '
                 b'"valid_from": "2025-02-30"}\n', ["2025-02-30"]),
    ("malformed-date", b'{"op": "end", "subject": "project:atlas", "predicate": "uses", "at": "someday"}\n',
     ["'someday'"]),
    ("unknown-entity", b'{"op": "assert", "subject": "nobody", "predicate": "status", "object": "paused"}\n',
     ["'nobody'"]),
    ("unknown-predicate", b'{"op": "assert", "subject": "atlas", "predicate": "flavor", "object": "x"}\n',
     ["'flavor'"]),
    ("bad-enum", b'{"op": "assert", "subject": "atlas", "predicate": "status", "object": "sleeping"}\n',
     ["'sleeping'"]),
    ("unknown-entity-type", b'{"op": "entity", "type": "Planet", "name": "Mars"}\n', ["'Planet'"]),
    ("retract-unknown", b'{"op": "retract", "fact": "fact:999"}\n', ["fact:999"]),
    ("future-recorded-at", b'{"op": "assert", "subject": "atlas", "predicate": "status", "object": "paused", '
                           b'"recorded_at": "2999-01-01"}\n', ["future"]),
    ("non-utf8", b'{"op": "assert", "subject": "project:atlas", "predicate": "summary", "object": "caf\xe9"}\n',
     ["UTF-8"]),
    ("non-utf8-garbage", b"\xff\xfe\x00\x01\n", ["UTF-8"]),
]


@pytest.mark.parametrize(("bad", "words"), [b[1:] for b in BAD_LINES], ids=[b[0] for b in BAD_LINES])
def test_import_one_bad_line(store: Path, before: str, tmp_path: Path, bad: bytes, words: list[str]) -> None:
    f = tmp_path / "in.jsonl"
    f.write_bytes(VALID_ENTITY + b"\n" + bad + VALID_ASSERT)  # the bad line is line 3
    r = cli(store, "import", str(f))
    one_clear_line(r, 2, ["line 3"], words)
    after = export(store)
    assert after != before
    new_lines = [json.loads(x) for x in after.splitlines() if x not in before.splitlines()]
    assert [(x["op"], x.get("name") or x.get("object")) for x in new_lines] == [
        ("entity", "Valkey"), ("assert", "tool:valkey")]


def test_import_many_bad_lines_reported_by_number(store: Path, before: str, tmp_path: Path) -> None:
    lines = [VALID_ENTITY] + [b[1] for b in BAD_LINES] + [b"\n", b"   \n", VALID_ASSERT, b"\n"]
    f = tmp_path / "in.jsonl"
    f.write_bytes(b"".join(lines))
    bad_numbers = list(range(2, 2 + len(BAD_LINES)))

    strict = cli(store, "--json", "import", "--strict", str(f))
    assert strict.code == 2, strict
    assert "Traceback" not in strict.out + strict.err
    rep = json.loads(strict.out)
    assert rep["schema"] == "graphmem.import.v1" and rep["ok"] is False and rep["written"] is False
    assert [e["line"] for e in rep["errors"]] == bad_numbers
    assert rep["lines"] == 2 + len(BAD_LINES)  # empty and blank lines do not count
    assert export(store) == before

    r = cli(store, "import", str(f))
    assert r.code == 2, r
    assert "Traceback" not in r.out + r.err
    reported = [int(x.split("line ", 1)[1].split(":")[0]) for x in r.err_lines]
    assert reported == bad_numbers
    assert len(r.err_lines) == len(BAD_LINES)
    assert "1 entity created" in r.out and "1 statement " in r.out
    cur = cli(store, "--json", "current", "atlas", "--predicate", "uses")
    assert "tool:valkey" in {f["object"]["ref"] for f in json.loads(cur.out)["facts"]}
    new = [x for x in export(store).splitlines() if x not in before.splitlines()]
    assert len(new) == 2  # only the two valid lines were written


def test_import_empty_lines_are_fine(store: Path, before: str, tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    f.write_bytes(b"\n" + VALID_ENTITY + b"\n\n  \n" + VALID_ASSERT + b"\n")
    r = cli(store, "import", "--strict", str(f))
    assert r.code == 0, r
    assert r.err == ""
    assert len(export(store).splitlines()) == len(before.splitlines()) + 2


def test_import_from_stdin(store: Path, before: str) -> None:
    r = cli(store, "import", "-", input=VALID_ENTITY + b"{oops\n" + VALID_ASSERT)
    one_clear_line(r, 2, ["line 2"], ["JSON"])
    assert len(export(store).splitlines()) == len(before.splitlines()) + 2


def test_import_from_stdin_non_utf8(store: Path, before: str) -> None:
    bad = b'{"op": "assert", "subject": "project:atlas", "predicate": "summary", "object": "caf\xe9"}\n'
    r = cli(store, "import", "--strict", "-", input=VALID_ENTITY + bad)
    one_clear_line(r, 2, ["line 2"], ["UTF-8"])
    assert export(store) == before


# the store cannot be used: exit 3 --------------------------------------------------------


@pytest.mark.engine("kuzu", "ladybug")  # the embedded engines' lock: one process writes (PostgreSQL: many)
def test_locked_store_exit_3(store: Path, before: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import graphmem,time,sys; m=graphmem.open(sys.argv[1]); print('ready', flush=True); "
         "time.sleep(30)", str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        for argv in (["current", "atlas"], ["assert", "atlas", "status", "paused"], ["lint"]):
            r = cli(store, *argv)
            one_clear_line(r, 3, [str(store)], ["locked"])
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert export(store) == before


@pytest.fixture
def v999(store: Path) -> Path:
    m = graphmem.open(store)
    m.store._q("MATCH (x:Meta {key:'schema_version'}) SET x.value='999'")
    m.close()
    return store


@pytest.mark.engine("kuzu", "ladybug")  # reads the version marker in the embedded engine's files
@pytest.mark.parametrize("argv", [["current", "atlas"], ["init"], ["assert", "atlas", "status", "paused"],
                                  ["export"], ["rebuild"]], ids=lambda a: a[0])
def test_incompatible_version_exit_3(v999: Path, argv: list[str]) -> None:
    r = cli(v999, *argv)
    one_clear_line(r, 3, [str(v999), "999"], ["version"])
    from graphmem.store.kuzu.database import driver  # the version marker is untouched (no silent migration): read it raw
    engine = driver(TEST_ENGINE)
    db = engine.Database(str(v999 / DB_FILE))
    try:
        rows = engine.Connection(db).execute("MATCH (x:Meta {key:'schema_version'}) RETURN x.value")
        assert not isinstance(rows, list)
        assert rows.get_next() == ["999"]
    finally:
        db.close()


@pytest.mark.parametrize("argv", [["current", "atlas"], ["timeline", "atlas"], ["facts"], ["why", "fact:1"],
                                  ["entity", "list"], ["entity", "show", "atlas"], ["lint"], ["rebuild", "--check"],
                                  ["export"]], ids=lambda a: " ".join(a))
def test_read_on_missing_store_exit_3(tmp_path: Path, new_store: Callable[[str], Path], argv: list[str]) -> None:
    missing = new_store("no/such/store")
    r = cli(missing, *argv)
    one_clear_line(r, 3, [str(missing)], ["init"])
    assert TEST_ENGINE == "postgresql" or not missing.exists() and not (tmp_path / "no").exists()
    one_clear_line(cli(missing, *argv), 3, [str(missing)], ["init"])  # still none: the read made nothing


@pytest.mark.engine("kuzu", "ladybug")  # an embedded store's address is a folder: here it names a file
def test_store_path_is_a_file_exit_3(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("not a store")
    one_clear_line(cli(f, "current", "atlas"), 3, [str(f)], [])
    one_clear_line(cli(f, "init"), 3, [str(f)], ["expected a directory"])
    one_clear_line(cli(f, "entity", "add", "Tool", "X"), 3, [str(f)], ["expected a directory"])
    assert f.read_text() == "not a store"


@pytest.mark.parametrize("argv", [["assert", "atlas", "status", "active"], ["retract", "fact:1"],
                                  ["end", "atlas", "uses", "--at", "2025-01-01"], ["entity", "add", "Tool", "Kuzu"],
                                  ["import", "-"], ["ingest", "-"], ["extract", "--text", "Atlas uses Kuzu", "--apply"]],
                         ids=lambda a: "-".join(a[:2]))
def test_a_write_on_a_missing_store_is_exit_3_and_creates_nothing(new_store: Callable[[str], Path],
                                                                  argv: list[str]) -> None:
    """Only init (and demo) make a store; a write elsewhere names the path and the way to make one."""
    missing = new_store("nothing-here")
    lines = '{"op": "entity", "type": "Tool", "name": "Kuzu"}\n'
    one_clear_line(cli(missing, *argv, input=lines), 3, [f"no store at {str(missing)!r}", "graphmem init"])
    assert TEST_ENGINE == "postgresql" or not missing.exists()
    one_clear_line(cli(missing, "export"), 3, [f"no store at {str(missing)!r}", "graphmem init"])  # none was made


_PRED = ('[predicates.tint]\ndescription = "A colour."\nsubject_types = ["Project"]\nobject = {{ type = "string" }}\n'
         'cardinality = "one"\n{extra}')


@pytest.mark.parametrize(("toml", "expects"), [
    (_PRED.format(extra="").replace('type = "string"', 'type = "colour"'), ["'colour'", "expected one of"]),
    (_PRED.format(extra="").replace('["Project"]', '["Planet"]'), ["'Planet'", "known: "]),
    (_PRED.format(extra="").replace('"one"', '"few"'), ["'few'", "expected 'one' or 'many'"]),
    (_PRED.format(extra='edge = "USES"\n'), ["literal-valued", "edge"]),
    (_PRED.format(extra="").replace('cardinality = "one"\n', ""), ["cardinality"]),
    ("[predicates.tint\n", ["not valid TOML", "line 1"]),
], ids=["literal-type", "subject-type", "cardinality", "edge-on-literal", "missing-field", "not-toml"])
def test_bad_registry_file_names_file_and_entry(tmp_path: Path, store_path: Path, toml: str, expects: list[str]) -> None:
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "bad.toml").write_text(toml, encoding="utf-8")
    store = store_path
    r = cli(store, "--predicates", str(folder), "predicates")
    line = one_clear_line(r, 2, [str(folder / "bad.toml"), *(["'tint'"] if toml.startswith("[predicates.tint]") else [])], expects)
    assert line.startswith("graphmem: error: ")
    assert TEST_ENGINE == "postgresql" or not store.exists()


def test_bad_ontology_file_names_file_and_entry(tmp_path: Path, store_path: Path) -> None:
    folder = tmp_path / "ont"
    folder.mkdir()
    (folder / "edges.toml").write_text('[edge_types.HOSTS]\ndescription = "x"\npairs = [["Project", "Planet"]]\n',
                                       encoding="utf-8")
    r = cli(store_path, "--ontology", str(folder), "ontology")
    one_clear_line(r, 2, [str(folder / "edges.toml"), "'HOSTS'", "'Planet'"], ["unknown entity type"])


def test_a_predicate_first_used_later_is_recorded_and_its_change_refused(tmp_path: Path, store_path: Path) -> None:
    """The store records the registry it is used with; a predicate added after the store was made
    counts too, so changing its cardinality later is refused (exit 3), not silently reinterpreted."""
    one, many = tmp_path / "one", tmp_path / "many"
    for folder, card in ((one, "one"), (many, "many")):
        folder.mkdir()
        (folder / "p.toml").write_text(_PRED.format(extra="").replace('"one"', f'"{card}"'), encoding="utf-8")
    store = store_path
    assert cli(store, "init").code == 0  # made with the default registry only
    assert cli(store, "--predicates", str(one), "entity", "add", "Project", "Atlas").code == 0
    assert cli(store, "--predicates", str(one), "assert", "atlas", "tint", "blue").code == 0
    before = export(store)
    r = cli(store, "--predicates", str(many), "current", "atlas")
    one_clear_line(r, 3, ["'tint'", str(store)], ["--predicates"])
    assert cli(store, "--predicates", str(one), "current", "atlas").code == 0  # the one it was used with
    assert export(store) == before


def test_ontology_without_a_type_the_store_uses_exit_3(tmp_path: Path, store_path: Path) -> None:
    ont = tmp_path / "ont"
    ont.mkdir()
    (ont / "extra.toml").write_text('[entity_types.Planet]\ndescription = "A world."\n', encoding="utf-8")
    store = store_path
    assert cli(store, "--ontology", str(ont), "init").code == 0
    assert cli(store, "--ontology", str(ont), "entity", "add", "Planet", "Mars").code == 0
    r = cli(store, "current", "mars")  # without the folder that defines Planet
    one_clear_line(r, 3, ["'Planet'", str(store)], ["--ontology"])


def test_import_retract_of_a_bad_lines_fact_is_refused_not_redirected(store: Path, before: str,
                                                                      tmp_path: Path) -> None:
    """A bad statement line gets no id, so the ids of later lines shift: a retraction that names the
    bad line's declared id must not fall through to whatever statement now has that number."""
    n = len(before.splitlines())  # more than enough: an id the store may well have
    lines = [
        {"op": "assert", "id": f"fact:{n + 1}", "subject": "project:atlas", "predicate": "status",
         "object": "no-such-status", "valid_from": "2025-05-01"},
        {"op": "assert", "id": f"fact:{n + 2}", "subject": "project:atlas", "predicate": "status",
         "object": "paused", "valid_from": "2025-05-01"},
        {"op": "retract", "fact": f"fact:{n + 1}", "reason": "meant the bad one"},
    ]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    r = cli(store, "--json", "import", str(f))
    rep = json.loads(r.out)
    assert [e["line"] for e in rep["errors"]] == [1, 3]
    assert f"fact:{n + 1}" in rep["errors"][1]["reason"] and "line 1" in rep["errors"][1]["reason"]
    assert rep["retractions"] == 0 and rep["statements"] == 1
    exported = [json.loads(x) for x in export(store).splitlines()]
    assert not [x for x in exported if x["op"] == "retract" and x not in
                [json.loads(y) for y in before.splitlines()]]  # nothing retracted by this import
