"""A throwaway PostgreSQL cluster for the tests: made with ``initdb`` in a temporary folder, started with
``pg_ctl`` listening on a Unix socket only, removed at the end. The server binaries are looked for on
PATH, in /usr/local/bin and in Debian's /usr/lib/postgresql/<version>/bin; ``server_binaries()`` is None
when there are none (the tests that need them are then skipped with one line saying so).

Use it from a conftest or a test module::

    from tests.pg import pg_cluster, pg_url  # noqa: F401  (fixtures)

``pg_cluster`` is one cluster per test session; ``pg_url`` gives each test a store address of its own
schema (``postgresql://...?host=<socket folder>&schema=t_<random>``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRED_ENV = "GRAPHMEM_REQUIRE_POSTGRESQL"  # set (by .ci/run): no server binary is a failure, not a skip
SKIP_REASON = "PostgreSQL server binaries (initdb, pg_ctl) not found: the PostgreSQL engine's tests are skipped"


def server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None."""
    found = shutil.which("initdb")
    candidates = [Path(found).parent] if found else []
    candidates += [Path("/usr/local/bin")]
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for c in candidates:
        if (c / "initdb").exists() and (c / "pg_ctl").exists():
            return c
    return None


def tool(bindir: Path, name: str) -> Path:
    """A server tool beside ``initdb`` (``psql``, ``pg_basebackup``, ``pg_dump``): in ``bindir``, else in the
    folder ``pg_ctl`` links to (``/usr/local/bin`` may hold links to the server binaries alone), else on PATH."""
    for folder in (bindir, Path(os.path.realpath(bindir / "pg_ctl")).parent):
        if (folder / name).exists():
            return folder / name
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"PostgreSQL's {name} not found beside {bindir} or on PATH: this test is skipped")
    return Path(found)


class Cluster:
    """A running throwaway cluster: its folder, its socket folder, and store addresses in it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="graphmem-pg-"))
        self.data = self.root / "data"
        self.socket = self.root
        self._as: list[str] = []
        if os.geteuid() == 0:  # the server refuses to run as root: run it as the postgres user
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("PostgreSQL cannot run as root and there is no 'postgres' user: the tests are skipped")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "graphmem", "-E", "UTF8", "--locale=C")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-o",
                  f"-k {self.socket} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
                  "-c full_page_writes=off -c max_connections=60", "start")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self._as, str(self.bindir / tool), *args], check=True, capture_output=True)

    def url(self, schema: str) -> str:
        return f"postgresql://graphmem@/postgres?host={self.socket}&schema={schema}"

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def sql(self, query: str) -> str:
        """One query's answer through ``psql`` (unaligned, tuples only), e.g. ``SELECT pg_current_wal_lsn()``."""
        return subprocess.run([str(tool(self.bindir, "psql")), "-h", str(self.socket), "-U", "graphmem", "-d", "postgres",
                               "-XAtc", query], check=True, capture_output=True, text=True).stdout.strip()


class Standby(Cluster):
    """A hot standby of a running cluster, as docs/engines.md sets one up: ``pg_basebackup -R`` (a copy of
    the primary's data folder that streams the primary's WAL from then on) into a folder of its own,
    started on a socket of its own. Its stores answer reads and refuse writes."""

    def __init__(self, primary: Cluster) -> None:  # noqa: D107  (not Cluster's initdb: a copy of the primary)
        self.bindir = primary.bindir
        self.root = Path(tempfile.mkdtemp(prefix="graphmem-pg-standby-"))
        self.data = self.root / "data"
        self.socket = self.root
        self._as = primary._as
        if self._as:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self._run(str(tool(self.bindir, "pg_basebackup")), "-h", str(primary.socket), "-U", "graphmem", "-D", str(self.data), "-R",
                  "-X", "stream", "-c", "fast")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-o",
                  f"-k {self.socket} -c listen_addresses='' -c fsync=off -c hot_standby=on -c max_connections=60",
                  "start")

    def catch_up(self, primary: Cluster, timeout: float = 60.0) -> None:
        """Wait until this standby has replayed everything the primary has written so far."""
        import time
        target = primary.sql("SELECT pg_current_wal_lsn()")
        deadline = time.monotonic() + timeout
        while self.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn") != "t":
            if time.monotonic() > deadline:
                raise AssertionError(f"the standby did not replay the primary's WAL up to {target} in {timeout} s")
            time.sleep(0.05)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    bindir = server_binaries()
    if bindir is None:
        if os.environ.get(REQUIRED_ENV):  # CI installs the server: there, a skip would hide a failure
            pytest.fail(SKIP_REASON.replace("are skipped", f"cannot run, and {REQUIRED_ENV} requires them"))
        pytest.skip(SKIP_REASON)
    cluster = Cluster(bindir)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A store address in the session's cluster with a schema of its own (made by ``create=True``)."""
    return pg_cluster.url("t_" + uuid.uuid4().hex[:12])


@pytest.fixture(scope="module")
def pg_standby(pg_cluster: Cluster) -> Iterator[Standby]:
    """A hot standby of the session's cluster (for the module that asks for it; stopped after it)."""
    standby = Standby(pg_cluster)
    try:
        yield standby
    finally:
        standby.stop()
