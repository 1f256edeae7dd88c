"""Fuzzed input: generated arguments for every command and generated import and ingest files. Every run
ends with exit 0, 1, 2 or 3 and no traceback, and exit 2 leaves the store as it was (its export)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import TEST_ENGINE, cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphmem

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs", "So", "Lo"]), max_size=20),
    st.sampled_from(["", " ", "\x00", "-", "--", "fact:", "fact:0", "fact:-1", "fact:99999999999999999999",
                     "rec:0", "rec:1", "project:", ":", "project:atlas", "tool:kuzu", "atlas", "Kuzu",
                     "0000-01-01", "9999-12-31", "10000-01-01", "2025-02-30", "now", "1e309", "NaN",
                     "-9223372036854775809", "18446744073709551616", "T", "2025-01-01T25:00:00Z"]),
)
COMMANDS: list[tuple[str, ...]] = [
    ("current", "A"), ("current", "A", "--as-of", "B"), ("current", "A", "--known-at", "B", "-p", "C"),
    ("timeline", "A"), ("facts", "-p", "A", "-o", "B"), ("facts", "--as-of", "A"), ("why", "A"),
    ("entity", "show", "A"), ("entity", "list", "--match", "A"), ("entity", "add", "A", "B"),
    ("assert", "A", "B", "C"), ("assert", "A", "uses", "B", "--from", "C"), ("end", "A", "B", "--at", "C"),
    ("retract", "A"), ("search", "A"), ("search", "A", "--limit", "B"), ("extract", "--text", "A"),
    ("recommend", "A"), ("recommend", "A", "--top", "B"), ("path", "A", "B"), ("pack", "-q", "A"),
    ("pack", "-q", "A", "-b", "B"), ("export", "--format", "A"), ("export", "--as-of", "A"), ("lint", "--fail-on", "A"),
    ("import", "A"), ("ingest", "A"), ("rebuild", "A"), ("migrate", "A"), ("init", "A"), ("ontology", "A"),
]


def _export(store: Path) -> str:
    with graphmem.open(store) as m:
        return m.export()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The store every example runs against (a schema of its own on a PostgreSQL run)."""
    path: Path = (request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12]) if TEST_ENGINE == "postgresql"
                  else tmp_path_factory.mktemp("fuzz") / "store")
    with graphmem.open(path, create=True) as m:
        m.add_entity("Project", "Atlas")
        m.add_entity("Tool", "Kuzu")
        m.assert_("atlas", "uses", "kuzu", valid_from="2025-01-01")
        m.ingest([json.dumps({"text": "Atlas uses Kuzu.", "ts": "2025-01-02T00:00:00Z"}).encode()])
    return path


def _check(store: Path, args: list[str], **kw: Any) -> None:
    before = _export(store)
    r = cli(store, *args, **kw)
    if os.environ.get("GRAPHMEM_FUZZ_LOG"):  # a tally of examples per command and exit code, for the record
        with open(os.environ["GRAPHMEM_FUZZ_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps({"command": args[0], "code": r.code, "traceback": "Traceback" in r.out + r.err}) + "\n")
    assert r.code in (0, 1, 2, 3), (args, r)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, r)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err, (args, r)
    if r.code == 2:
        # one line; import and ingest report each bad line of their file on its own line
        assert len(r.err_lines) == 1 or (args[0] in ("import", "ingest") and
                                         all(x.startswith("graphmem: ") for x in r.err_lines)), (args, r)
        # import without --strict and ingest write their valid lines and report the others (SPEC 5)
        partial = args[0] == "ingest" or (args[0] == "import" and "--strict" not in args)
        assert partial or _export(store) == before, f"exit 2 changed the store: {args}"


@pytest.mark.parametrize("template", COMMANDS, ids=" ".join)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(texts, min_size=3, max_size=3), repeat=st.booleans(), drop=st.booleans())
def test_every_command_with_generated_arguments(store: Path, template: tuple[str, ...], values: list[str],
                                                repeat: bool, drop: bool) -> None:
    fill = dict(zip("ABC", values, strict=True))
    args = [fill.get(a, a) for a in template]
    if repeat and len(args) > 1:
        args += args[-2:]  # an option given twice
    if drop:
        args = args[:-1]  # an argument or an option's value missing
    _check(store, args)


lines = st.one_of(
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.sampled_from(['{"op": "assert", "subject": "atlas"', '{"op": "entity"}', "[]", "null", "NaN", "{}",
                     '{"op": "assert", "subject": "atlas", "predicate": "uses", "object": "kuzu", "valid_from": NaN}',
                     '{"op": "assert", "subject": "atlas", "subject": "kuzu", "predicate": "uses", "object": "kuzu"}',
                     '{"op": "entity", "type": "Tool", "name": "' + "x" * 1_000_000 + '"}',
                     '{"text": "t", "ts": 1e309}', '{"text": 123}', '{"text": "ok", "importance": 1e400}',
                     '{"op": "retract", "fact": "fact:1e9"}', "[" * 5000 + "]" * 5000, '{"a": ' * 2000 + "1" + "}" * 2000,
                     '{"op": "assert", "subject": "atlas", "predicate": "uses", "object": "kuzu", "valid_from": '
                     '"0001-01-01", "recorded_at": "9999-12-31"}']),
    st.builds(lambda d: json.dumps(d), st.dictionaries(st.sampled_from(["op", "subject", "predicate", "object", "text",
                                                                         "ts", "valid_from", "type", "name", "kind"]),
                                                        st.one_of(texts, st.integers(-2**70, 2**70), st.floats(),
                                                                  st.none(), st.booleans()), max_size=6)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["import", "ingest"]), content=st.lists(lines, min_size=1, max_size=5),
       strict=st.booleans(), cut=st.booleans())
def test_generated_import_and_ingest_files(store: Path, tmp_path_factory: pytest.TempPathFactory, command: str,
                                           content: list[str], strict: bool, cut: bool) -> None:
    text = "\n".join(content)
    if cut:
        text = text[: len(text) // 2]  # a truncated last line
    f = tmp_path_factory.mktemp("in") / "data.jsonl"
    f.write_bytes(text.encode("utf-8", "surrogatepass"))
    _check(store, [command, str(f), *(["--strict"] if strict and command == "import" else [])])
