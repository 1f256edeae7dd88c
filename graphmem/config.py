"""Store location and settings: where the store is when no path is given, and what a failed
first write takes back, so the CLI, the HTTP service and Python agree."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphmem.errors import StoreUnavailable

STORE_ENV = "GRAPHMEM_STORE"
SERVER_FILE = "server.json"  # in the store folder while a server holds it (for the CLI's message)


def default_store() -> Path:
    """``GRAPHMEM_STORE``, else a ``graphmem`` folder in the platform user data directory."""
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env)
    from platformdirs import user_data_dir
    return Path(user_data_dir("graphmem", appauthor=False))


def store_location(path: str | Path | None = None) -> Path:
    """The store a command or call uses: ``path`` when given, else :func:`default_store`.

    Examples
    --------
    >>> str(store_location("/tmp/my-store"))
    '/tmp/my-store'
    """
    return Path(path) if path is not None else default_store()


class NewStore:
    """What opening a store at ``path`` would create, noted before it is opened, so that a failed
    first write can take it back; an existing store is never touched."""

    def __init__(self, path: str | Path) -> None:
        self.paths = tuple(_would_create(Path(path)))

    def remove(self) -> None:
        """Remove what opening the store created (nothing, if the store was there before)."""
        import shutil
        for p in self.paths:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()


@contextmanager
def cleanup_on_failure(path: str | Path) -> Iterator[None]:
    """Run the block; if it raises, remove the store it created at ``path`` (a command that creates
    a store and then fails leaves no empty store behind), then re-raise.

    Examples
    --------
    >>> import graphmem, tempfile
    >>> target = Path(tempfile.mkdtemp()) / "store"
    >>> try:
    ...     with cleanup_on_failure(target), graphmem.open(target, create=True) as m:
    ...         m.assert_("nobody", "status", "active")
    ... except graphmem.BadInput:
    ...     pass
    >>> target.exists()
    False
    """
    new = NewStore(path)
    try:
        yield
    except BaseException:
        new.remove()
        raise


def _would_create(path: Path) -> list[Path]:
    if not path.exists():
        top = path
        while not top.parent.exists():
            top = top.parent
        return [top]
    if path.is_dir() and not (path / "graph.kuzu").exists():
        return [path / name for name in ("graph.kuzu", "graph.kuzu.wal", "graph.kuzu.lock", "tmp")]
    return []


def has_store(path: str | Path) -> bool:
    """Whether ``path`` holds a store (one made by ``graphmem init`` or ``graphmem.open(path, create=True)``)."""
    return (Path(path) / "graph.kuzu").exists()


def require_store(path: str | Path) -> None:
    """StoreUnavailable, saying how one is made, unless ``path`` holds a store: only ``init`` (and
    ``demo``) make a store from the command line, and ``graphmem.open(path, create=True)`` from Python."""
    if not has_store(path):
        raise StoreUnavailable(f"no store at {str(path)!r}: expected one made by 'graphmem init' (or "
                               "graphmem.open(path, create=True))")


def write_server_file(store: Path, url: str, token: str | None) -> None:
    """The marker that names the server holding ``store``: its pid and URL, and the token it requires,
    so the CLI can send its commands through it. Only the user who owns it can read it (mode 0600),
    as anyone who can read the store's folder can read the store itself."""
    doc = {"pid": os.getpid(), "url": url} | ({"token": token} if token else {})
    path = Path(store) / SERVER_FILE
    path.unlink(missing_ok=True)  # a marker left by a killed server, perhaps with a wider mode
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc) + "\n")


def server_info(store: Path) -> dict[str, Any] | None:
    """The marker of the server holding ``store`` (``pid``, ``url``, and ``token`` if it requires one)
    when it names a live process, else None."""
    try:
        info = json.loads((Path(store) / SERVER_FILE).read_text())
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if isinstance(info, dict) and isinstance(info.get("url"), str) else None


def server_holding(store: Path) -> str | None:
    """'a graphmem server (pid N, URL)' when the marker names a live process, else None."""
    info = server_info(store)
    return None if info is None else f"a graphmem server (pid {info['pid']}, {info['url']})"
