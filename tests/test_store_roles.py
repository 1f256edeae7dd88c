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
    from graphmem.store.common import codecs as s
    from graphmem.store.postgres.store import PgStore
    for engine in (Store, PgStore):
        for name in ("decode_log", "statements_from_log", "log_text", "unpack", "view_text", "same_view"):
            assert getattr(engine, name).__doc__, (engine, name)
        assert engine.view_text([]) == s.view_text([]) and engine.same_view("[]", "[]")
        assert engine.unpack(s.pack("[" + "1," * 300 + "1]")) == "[" + "1," * 300 + "1]"


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


# the Kuzu engine's own classes, which graphmem/store/__init__.py exports for the store's own tests and tools
KUZU_CLASSES = {"Store", "StatementFile", "ViewFiles"}


def _names_an_engine(path: Path) -> list[str]:
    """Where a module imports an engine's folder or class, or calls the Kuzu ``Store`` class itself
    (``Store.decode_log(...)``: the Kuzu codec, whatever engine holds the store)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("graphmem.store"):
            if node.module.split(".")[2:3] in (["kuzu"], ["postgres"]):
                found.append(f"{node.lineno}: from {node.module} import ...")
            found += [f"{node.lineno}: imports {a.name}" for a in node.names if a.name in KUZU_CLASSES]
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.startswith(("graphmem.store.kuzu", "graphmem.store.postgres"))]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in KUZU_CLASSES:
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_nothing_outside_the_store_names_an_engine_or_its_store_class() -> None:
    """The rest of graphmem holds a store (``StorageEngine``) and calls its role methods, the stored forms
    included (``store.decode_log``, ``store.view_text``): an engine with forms of its own then works."""
    found = [f"{p.relative_to(PACKAGE)}:{where}" for p in _outside_store() for where in _names_an_engine(p)]
    assert found == []


def test_the_engine_check_sees_a_static_call(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("from graphmem.store import Store\nfrom graphmem.store.kuzu import codecs\n"
                   "x = Store.view_text([])\n", encoding="utf-8")
    assert _names_an_engine(src) == ["1: imports Store", "2: from graphmem.store.kuzu import ...", "3: Store.view_text"]
