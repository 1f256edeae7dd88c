"""The storage interface: the Kuzu store has every role, and nothing outside graphmem/store speaks
to Kuzu or writes Cypher."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import graphmem
from graphmem.store import StatementBatch, StorageEngine, Store, ViewBatch
from graphmem.store.roles import ROLES

PACKAGE = Path(graphmem.__file__).parent
# the start of a Cypher statement as graphmem writes them: a clause and then a node, a table or a list
CYPHER = re.compile(r"\b(MATCH|MERGE|CREATE|OPTIONAL MATCH|UNWIND)\s*[(\[$]|\bCREATE (NODE|REL) TABLE\b|"
                    r"\bCOPY \w+ FROM\b|\bDETACH DELETE\b|\bCALL show_tables\(")


def _outside_store() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if PACKAGE / "store" not in p.parents]


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.__name__)
def test_kuzu_store_has_every_role(mem: graphmem.Memory, role: type) -> None:
    """The run's engine's store (Kuzu's ``Store`` on the embedded runs) has every role."""
    assert isinstance(mem.store, Store) or mem.store.engine == "postgresql"
    assert isinstance(mem.store, role), [m for m in role.__dict__ if not hasattr(mem.store, m)]


def test_kuzu_store_is_a_storage_engine(mem: graphmem.Memory) -> None:
    store = mem.store
    assert isinstance(store, StorageEngine)
    assert isinstance(store.statement_file(), StatementBatch)
    files = store.write_view_files([])
    try:
        assert isinstance(files, ViewBatch)
    finally:
        files.discard()


def test_engine_codecs_are_store_methods() -> None:
    from graphmem.store.kuzu import codecs as s
    for name in ("decode_log", "statements_from_log", "log_text", "unpack", "view_text", "same_view"):
        assert getattr(Store, name).__doc__, name
    assert Store.view_text([]) == s.view_text([]) and Store.same_view("[]", "[]")
    assert Store.unpack(s.pack("[" + "1," * 300 + "1]")) == "[" + "1," * 300 + "1]"


def test_nothing_outside_the_store_imports_kuzu() -> None:
    found = []
    for path in _outside_store():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            found += [f"{path.relative_to(PACKAGE)}: {n}" for n in names if n == "kuzu" or n.startswith("kuzu.")]
    assert found == []


def test_nothing_outside_the_store_writes_cypher() -> None:
    found = []
    for path in _outside_store():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYPHER.search(node.value):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value[:60]!r}")
    assert found == []


def test_the_cypher_pattern_finds_the_store_s_queries() -> None:
    """The check above would see Cypher: the store's own modules hold plenty."""
    texts = [node.value for p in sorted((PACKAGE / "store").rglob("*.py"))
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert sum(bool(CYPHER.search(t)) for t in texts) > 50


def test_only_the_postgres_engine_imports_psycopg() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "store" / "postgres" in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            found += [f"{path.relative_to(PACKAGE)}: {n}" for n in names if n.split(".")[0] == "psycopg"]
    assert found == []
