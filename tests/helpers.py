"""What the CLI tests share: running the command line in process and reading its result; loading
the project's scripts (benchmarks/, tools/), which are not in the package."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

import graphmem
from graphmem.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
TEST_ENGINE = os.environ.get("GRAPHMEM_TEST_ENGINE", "kuzu")  # this run's engine (tests/conftest.py)
DB_FILE = {"kuzu": "graph.kuzu", "ladybug": "graph.lbug"}.get(TEST_ENGINE, "")  # its database file in a store folder


def load_script(relpath: str) -> ModuleType:
    """A script of the project (such as ``benchmarks/extract_score.py``) as a module, loaded once."""
    path = ROOT / relpath
    name = path.stem
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class Run:
    """One CLI run: exit code, stdout and stderr kept apart."""

    def __init__(self, result: Any) -> None:
        self.code: int = result.exit_code
        self.out: str = result.stdout
        self.err: str = result.stderr
        self.exception = result.exception

    @property
    def err_lines(self) -> list[str]:
        return [x for x in self.err.splitlines() if x.strip()]

    def json(self) -> dict[str, Any]:
        doc = json.loads(self.out)
        assert isinstance(doc, dict)
        return doc

    def __repr__(self) -> str:
        return f"<exit {self.code} stdout={self.out[:300]!r} stderr={self.err[:600]!r}>"


def cli(store: Path, *args: str, **kw: Any) -> Run:
    return Run(runner.invoke(app, ["--store", str(store), *args], **kw))


def jl(*objs: Any) -> list[bytes]:
    """JSON lines as bytes, the way a file holds them."""
    return [json.dumps(o, ensure_ascii=False).encode("utf-8") for o in objs]


def one_clear_line(r: Run, code: int, names: list[str], expects: list[str] | tuple[str, ...] = ("expected",)) -> str:
    """Exit ``code`` with exactly one stderr line naming each of ``names`` and saying ``expects``; no traceback."""
    assert r.code == code, r
    assert r.exception is None or isinstance(r.exception, SystemExit), r
    assert "Traceback" not in r.out + r.err
    assert len(r.err_lines) == 1, r
    line = r.err_lines[0]
    for n in names:
        assert n in line, f"{n!r} not named in {line!r}"
    for e in expects:
        assert e in line, f"{e!r} (what was expected) not in {line!r}"
    assert "internal error" not in line
    return line


def address(m: Any) -> str:
    """The store address of an open Memory as ``--store`` takes it (a PostgreSQL store's URL, else its folder)."""
    return str(m.address.url or m.path)


def copy_demo(demo_dir: Path, folder: Path, request: Any) -> Any:
    """A private copy of the demo store: a copy of ``demo_dir`` at ``folder``, or on a PostgreSQL run
    (``GRAPHMEM_TEST_ENGINE``) a schema of its own in the session's cluster, whose address is returned."""
    if TEST_ENGINE == "postgresql":
        import uuid

        from graphmem.memory.copying import copy_store
        url = request.getfixturevalue("pg_cluster").url("t_" + uuid.uuid4().hex[:12])
        copy_store(demo_dir, url)
        return url
    import shutil
    shutil.copytree(demo_dir, folder)
    return folder


def assert_no_store(store: Path | str) -> None:
    """Nothing was made at the address: no folder (Kuzu, LadybugDB), no graphmem tables (PostgreSQL)."""
    if isinstance(store, Path):
        assert not store.exists()
    else:
        with pytest.raises(graphmem.StoreUnavailable, match="no store"):
            graphmem.open(store)


def assert_acked_kept(m: Any, acked: dict[str, str]) -> None:
    """Every write the server acknowledged (``rec:N`` -> its text, ``fact:N`` -> its object) is in the store
    ``m`` as it was sent; the writes include records and statements both."""
    assert any(r.startswith("rec:") for r in acked) and any(r.startswith("fact:") for r in acked)
    for ref, text in acked.items():
        if ref.startswith("rec:"):
            assert m.record(ref).text == text
            continue
        st = m.store.statement(int(ref.split(":")[1]))
        assert st is not None and st.object == text, (ref, text, st)


def facets_from_table(m: Any) -> Any:
    """The records' facets read from the Kuzu or LadybugDB table itself (what the kept file must equal)."""
    from graphmem.store.kuzu.records import _FACETS
    from graphmem.store.values import RecordFacets
    return RecordFacets.of(m.store._iter(_FACETS))


def same_facets(a: Any, b: Any) -> bool:
    """Whether two records' facets hold the same columns and the same values behind their codes."""
    import numpy as np
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("ids", "ts", "kind", "source", "scope")) \
        and (a.kinds, a.sources, a.scopes) == (b.kinds, b.sources, b.scopes)
