"""Shared fixtures: every test gets its own store folder and never touches the real one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import graphmem
from graphmem.demo import build_demo


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Point the default store and the user data dir at a temporary folder."""
    monkeypatch.setenv("GRAPHMEM_STORE", str(tmp_path / "default-store"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def mem(store_path: Path) -> Iterator[graphmem.Memory]:
    """An empty store."""
    m = graphmem.open(store_path, create=True)
    yield m
    m.close()


@pytest.fixture
def atlas(mem: graphmem.Memory) -> graphmem.Memory:
    """A small store: one project, a few tools and a person."""
    mem.add_entity("Project", "Atlas", aliases=["atlas-app"], description="The knowledge graph.")
    mem.add_entity("Tool", "Kuzu", description="Embedded graph database.")
    mem.add_entity("Tool", "SQLite")
    mem.add_entity("Tool", "Neo4j")
    mem.add_entity("Concept", "Graph database")
    mem.add_entity("Person", "Ada Lovelace", aliases=["Ada"])
    return mem


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example, built once per session; tests copy it before writing."""
    path = tmp_path_factory.mktemp("demo") / "store"
    build_demo(path).close()
    return path


@pytest.fixture
def demo(demo_dir: Path, tmp_path: Path) -> Iterator[graphmem.Memory]:
    """A private copy of the demo store."""
    import shutil
    target = tmp_path / "demo-copy"
    shutil.copytree(demo_dir, target)
    m = graphmem.open(target)
    yield m
    m.close()


@pytest.fixture
def odd_predicates(tmp_path: Path) -> Path:
    """A predicates folder with float, int and bool objects (the default registry has none)."""
    folder = tmp_path / "odd-predicates"
    folder.mkdir()
    (folder / "odd.toml").write_text("""
[predicates.score]
description = "A measured score."
subject_types = ["Project"]
object = { type = "float" }
cardinality = "one"

[predicates.seats]
description = "How many seats."
subject_types = ["Project"]
object = { type = "int" }
cardinality = "one"

[predicates.public]
description = "Whether it is public."
subject_types = ["Project"]
object = { type = "bool" }
cardinality = "one"
""", "utf-8")
    return folder
