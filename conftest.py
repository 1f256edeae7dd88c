"""The examples in the package's docstrings (pytest --doctest-modules over graphmem/) run with their temporary
folders and the default store under pytest's tmp_path (tests/conftest.py does the same for the tests)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``tempfile.mkdtemp()`` in an example makes its folder under ``tmp_path``; the real store is never used."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("GRAPHMEM_STORE", str(tmp_path / "default-store"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
