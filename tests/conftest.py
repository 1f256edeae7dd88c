"""Shared fixtures: every test gets its own store folder and never touches the real one.

The suite runs against one engine per run: ``GRAPHMEM_TEST_ENGINE`` (kuzu, the default, ladybug or
postgresql; ``make test`` runs each). Kuzu and LadybugDB stores are made at plain paths, the engine set
through ``GRAPHMEM_ENGINE`` (the engine of a new store at a plain path), so every test and the CLI
processes it starts use it. A test of one engine's own files is marked ``@pytest.mark.engine("kuzu")``
and skipped on the others. PostgreSQL needs a server: ``tests/pg.py`` makes a throwaway cluster
(``pg_cluster``, ``pg_url``), and ``postgres_store_url`` below hands a test a PostgreSQL store beside the
run's engine; without a server binary those tests are skipped with one line. On a postgresql run the
store fixtures (``store_path``, ``mem``, ``atlas``, ``demo``) hand each test a schema of its own in the
session's cluster: ``store_path`` is then the store's address (a ``postgresql://`` string; tests pass it
through ``str()``, ``--store`` and ``graphmem.open`` alike), and ``demo`` is a copy of the demo store
(``demo_dir``, a Kuzu folder on that run) made with ``graphmem copy``. ``new_store(name)`` hands a test as many fresh stores of the run's
engine as it needs; on a postgresql run a test that opens a folder store fails unless marked
``engine(...)`` or ``folder_store(reason)`` (docs/engines.md, "Tests on each engine").
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import graphmem
from graphmem.demo import build_demo

TEST_ENGINE = os.environ.get("GRAPHMEM_TEST_ENGINE", "kuzu")
if TEST_ENGINE not in ("kuzu", "ladybug", "postgresql"):
    raise pytest.UsageError(f"bad GRAPHMEM_TEST_ENGINE {TEST_ENGINE!r}: expected kuzu, ladybug or postgresql")
if TEST_ENGINE in ("kuzu", "ladybug"):  # set for the whole run: session fixtures make stores too
    os.environ["GRAPHMEM_ENGINE"] = TEST_ENGINE


# modules about Kuzu's own files that import Kuzu itself: not even collected on another engine (a process
# cannot load Kuzu's and LadybugDB's modules both)
collect_ignore = [] if TEST_ENGINE == "kuzu" else ["test_migrate.py", "layouts.py"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "engine(*names): the test is about these engines' own files; "
                                       "skipped when the run's engine (GRAPHMEM_TEST_ENGINE) is another")
    config.addinivalue_line("markers", "folder_store(reason): the test opens a folder (Kuzu or LadybugDB) store "
                                       "beside the run's engine on purpose (a copy between engines, say)")


@pytest.fixture(autouse=True)
def _stores_of_the_run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """On a postgresql run, a test that opens a folder store in its own process fails, unless it is marked
    ``engine(...)`` or ``folder_store(reason)``: every other test is to run on the run's engine (make its
    stores with ``store_path``, ``mem``, ``demo`` or ``new_store``)."""
    if TEST_ENGINE != "postgresql" or request.node.get_closest_marker("folder_store") is not None:
        yield
        return
    from graphmem.store.kuzu.base import StoreBase
    opened: list[str] = []
    init = StoreBase.__init__

    def recording(self: StoreBase, path: object, *args: object, **kwargs: object) -> None:
        opened.append(str(path))
        init(self, path, *args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(StoreBase, "__init__", recording)
    yield
    if opened:
        pytest.fail(f"opened a folder store on a postgresql run: {opened[0]!r}; make the test's stores with "
                    "store_path, mem, demo or new_store, or mark it engine(...) or folder_store(reason)",
                    pytrace=False)


def pytest_collection_finish(session: pytest.Session) -> None:
    """On LadybugDB, a test module that imported Kuzu while it was collected would make every test fail
    (one process cannot load both engines' modules): stop with one line naming the cause."""
    if TEST_ENGINE == "ladybug" and "kuzu" in sys.modules:
        raise pytest.UsageError("a test module imported kuzu while it was collected, so no LadybugDB store can open "
                                "in this run: import it inside the test and mark the test @pytest.mark.engine('kuzu')")


def pytest_report_header(config: pytest.Config) -> str:
    return f"graphmem engine: {TEST_ENGINE} (GRAPHMEM_TEST_ENGINE)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("engine")
        if marker is not None and TEST_ENGINE not in marker.args:
            item.add_marker(pytest.mark.skip(reason=f"tests {'/'.join(marker.args)}'s own files; "
                                                    f"this run's engine is {TEST_ENGINE}"))


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Point the default store and the user data dir at a temporary folder, and new stores at the run's engine."""
    monkeypatch.setenv("GRAPHMEM_STORE", str(tmp_path / "default-store"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def store_path(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The test's store: a folder not made yet, or on a postgresql run a schema's address (a str)."""
    if TEST_ENGINE == "postgresql":
        url: Path = request.getfixturevalue("pg_url")  # a str: used as Path only by engine("kuzu", ...) tests
        return url
    return tmp_path / "store"


@pytest.fixture
def new_store(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str], Path]:
    """A maker of fresh store addresses of the run's engine, for a test that needs more than one store (or
    a store it makes itself): ``new_store("a")`` is ``tmp_path / "a"`` (a folder not made yet) on an embedded
    run and a new schema's address in the session's cluster (a str) on a postgresql run. Each call with a
    new name gives a new store; the same name gives the same address."""
    made: dict[str, Path] = {}

    def make(name: str = "store") -> Path:
        if name not in made:
            if TEST_ENGINE == "postgresql":
                from tests.pg import Cluster
                cluster: Cluster = request.getfixturevalue("pg_cluster")
                made[name] = cluster.url("t_" + uuid.uuid4().hex[:12])  # type: ignore[assignment]
            else:
                made[name] = tmp_path / name
        return made[name]
    return make


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
def demo(demo_dir: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[graphmem.Memory]:
    """A private copy of the demo store."""
    import shutil
    if TEST_ENGINE == "postgresql":  # a schema of its own, not store_path's
        from graphmem.memory.copying import copy_store
        target: str | Path = request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12])
        copy_store(demo_dir, target)
    else:
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


@pytest.fixture
def postgres_store_url(request: pytest.FixtureRequest) -> str:
    """A fresh, empty PostgreSQL store address (a schema of its own in the session's throwaway cluster,
    tests/pg.py), for a test that needs one beside the run's engine, as ``graphmem copy``'s tests do;
    skipped with one line when no PostgreSQL server binary is found."""
    url: str = request.getfixturevalue("pg_url")
    return url


from tests.pg import pg_cluster, pg_url  # noqa: E402, F401  (fixtures: the PostgreSQL hook)
