"""Store location and settings: where the store is when no path is given, and what a failed
first write takes back, so the CLI, the HTTP service and Python agree."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.errors import BadInput, StoreUnavailable

STORE_ENV = "GRAPHMEM_STORE"
ENGINE_ENV = "GRAPHMEM_ENGINE"  # the engine of a new store at a plain path (kuzu, the default, or ladybug)
ENGINES = ("kuzu", "ladybug", "postgresql")
# the file an embedded engine's database lives in, inside the store's folder: it says which engine made the store
ENGINE_FILES = {"kuzu": "graph.kuzu", "ladybug": "graph.lbug"}
ENGINE_NAMES = {"kuzu": "Kuzu", "ladybug": "LadybugDB", "postgresql": "PostgreSQL"}
_PREFIXES = {"kuzu:": "kuzu", "ladybug:": "ladybug"}
_URL_PREFIXES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class StoreAddress:
    """Where a store is and which engine holds it, from a ``--store`` value, ``GRAPHMEM_STORE`` or a
    path given to ``graphmem.open`` (docs/engines.md).

    A plain path is an embedded store in that folder: the engine whose database file the folder holds
    (``graph.kuzu``: Kuzu, ``graph.lbug``: LadybugDB), and for a new store Kuzu (or ``GRAPHMEM_ENGINE``).
    ``ladybug:PATH`` and ``kuzu:PATH`` name the engine; ``postgresql://...`` is a PostgreSQL database.

    Attributes
    ----------
    engine : str
        ``kuzu``, ``ladybug`` or ``postgresql``.
    folder : Path or None
        The store's folder (None for a server engine: PostgreSQL keeps no folder).
    url : str or None
        The server's address (PostgreSQL), else None.

    Examples
    --------
    >>> a = store_address("ladybug:/tmp/team")
    >>> a.engine, str(a.folder), a.display
    ('ladybug', '/tmp/team', 'ladybug:/tmp/team')
    >>> store_address("postgresql://localhost/graphmem").folder is None
    True
    """

    engine: str
    folder: Path | None
    url: str | None = None

    @property
    def display(self) -> str:
        """The address as a user writes it (a Kuzu store: its folder alone)."""
        if self.url is not None:
            return re.sub(r"(://[^:/@?]*:)[^@/?]*@", r"\1***@", self.url)  # a password is never shown
        return str(self.folder) if self.engine == "kuzu" else f"{self.engine}:{self.folder}"

    @property
    def db_file(self) -> Path | None:
        """The embedded engine's database file in the store's folder (None for a server engine)."""
        return None if self.folder is None else self.folder / ENGINE_FILES[self.engine]

    def __str__(self) -> str:
        return self.display


def store_address(value: str | Path | StoreAddress | None = None) -> StoreAddress:
    """The store a command or call uses, and its engine: ``value`` when given, else ``GRAPHMEM_STORE``,
    else a ``graphmem`` folder in the platform user data directory (see ``StoreAddress``).

    Examples
    --------
    >>> store_address("/tmp/my-store").engine
    'kuzu'
    >>> store_address("ladybug:").engine
    Traceback (most recent call last):
    graphmem.errors.BadInput: bad store address 'ladybug:': expected a folder after 'ladybug:'
    """
    if isinstance(value, StoreAddress):
        return value
    if value is None:
        value = os.environ.get(STORE_ENV) or default_store()
    if isinstance(value, str):
        if value.startswith(_URL_PREFIXES):
            return StoreAddress("postgresql", None, value)
        for prefix, engine in _PREFIXES.items():
            if value.startswith(prefix):
                rest = value[len(prefix):]
                if not rest:
                    raise BadInput(f"bad store address {value!r}: expected a folder after {prefix!r}")
                folder = Path(rest)
                for other, name in ENGINE_FILES.items():
                    if other != engine and (folder / name).exists():
                        raise BadInput(f"bad store address {value!r}: the store there was made by "
                                       f"{ENGINE_NAMES[other]}, not {ENGINE_NAMES[engine]}; expected the folder alone "
                                       "(a store opens with the engine that made it)")
                return StoreAddress(engine, folder)
    folder = Path(value)
    for engine, name in ENGINE_FILES.items():
        if (folder / name).exists():
            return StoreAddress(engine, folder)
    return StoreAddress(new_store_engine(), folder)


def new_store_engine() -> str:
    """The engine a new store at a plain path gets: ``GRAPHMEM_ENGINE`` (kuzu or ladybug), else Kuzu."""
    engine = os.environ.get(ENGINE_ENV) or "kuzu"
    if engine not in ENGINE_FILES:
        raise BadInput(f"bad {ENGINE_ENV} {engine!r}: expected one of {', '.join(ENGINE_FILES)} "
                       "(a PostgreSQL store is named by its postgresql:// address)")
    return engine
SERVER_FILE = "server.json"  # in the store folder while a server holds it (for the CLI's message)


def default_store() -> Path:
    """``GRAPHMEM_STORE``, else a ``graphmem`` folder in the platform user data directory."""
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env)
    from platformdirs import user_data_dir
    return Path(user_data_dir("graphmem", appauthor=False))


def store_location(path: str | Path | None = None) -> Path:
    """The store folder a command or call uses: ``path`` when given, else :func:`default_store`
    (``store_address`` also says which engine holds it).

    Examples
    --------
    >>> str(store_location("/tmp/my-store"))
    '/tmp/my-store'
    """
    return Path(path) if path is not None else default_store()


class NewStore:
    """What opening a store at ``path`` would create, noted before it is opened, so that a failed
    first write can take it back; an existing store is never touched."""

    def __init__(self, path: str | Path | StoreAddress) -> None:
        address = store_address(path)
        # a server engine's new store is its engine's to take back (store.engines.cleanup_on_failure)
        self.paths = () if address.folder is None else tuple(_would_create(address.folder, ENGINE_FILES[address.engine]))

    def remove(self) -> None:
        """Remove what opening the store created (nothing, if the store was there before)."""
        import shutil
        for p in self.paths:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()


def _would_create(path: Path, db_file: str) -> list[Path]:
    if not path.exists():
        top = path
        while not top.parent.exists():
            top = top.parent
        return [top]
    if path.is_dir() and not (path / db_file).exists():
        return [path / name for name in (db_file, db_file + ".wal", db_file + ".lock", "graphmem.lock", "tmp")]
    return []


def has_store(path: str | Path | StoreAddress) -> bool:
    """Whether ``path`` holds a store (one made by ``graphmem init`` or ``graphmem.open(path, create=True)``);
    a server engine's address is taken to hold one (its engine checks when it opens)."""
    address = store_address(path)
    return address.db_file is None or address.db_file.exists()


def require_store(path: str | Path | StoreAddress) -> None:
    """StoreUnavailable, saying how one is made, unless ``path`` holds a store: only ``init`` (and
    ``demo``) make a store from the command line, and ``graphmem.open(path, create=True)`` from Python."""
    if not has_store(path):
        address = store_address(path)
        shown = str(address.folder) if address.folder is not None else address.display
        raise StoreUnavailable(f"no store at {shown!r}: expected one made by 'graphmem init' (or "
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


def server_info(store: Path | None) -> dict[str, Any] | None:
    """The marker of the server holding ``store`` (``pid``, ``url``, and ``token`` if it requires one)
    when it names a live process, else None (always None without a folder: a server engine's store is
    shared by its clients, not held)."""
    if store is None:
        return None
    try:
        info = json.loads((Path(store) / SERVER_FILE).read_text())
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if isinstance(info, dict) and isinstance(info.get("url"), str) else None


def server_holding(store: Path | None) -> str | None:
    """'a graphmem server (pid N, URL)' when the marker names a live process, else None."""
    info = server_info(store)
    return None if info is None else f"a graphmem server (pid {info['pid']}, {info['url']})"
