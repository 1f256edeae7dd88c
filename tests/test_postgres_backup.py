"""A backup of one PostgreSQL store and its restore, as docs/engines.md ("Backups") says: ``pg_dump -n
<schema>`` in the custom format, ``pg_restore`` into a fresh database, and the store read back there (and
under a new schema name, ``ALTER SCHEMA ... RENAME``) exports byte for byte as the original.

Skipped with one line when the PostgreSQL server binaries are missing (tests/pg.py)."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from helpers import cli

import graphmem
from graphmem.demo import load_example
from tests.pg import Cluster, pg_cluster, tool  # noqa: F401  (fixtures)


def test_pg_dump_of_a_store_restores_into_a_fresh_database(pg_cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    schema = "t_" + uuid.uuid4().hex[:12]
    url = pg_cluster.url(schema)
    with graphmem.open(url, create=True) as m:
        load_example(m)
        m.rename_entity("atlas", "Atlas Platform")
    original = cli(url, "export")  # type: ignore[arg-type]
    assert original.code == 0 and original.out.count("\n") > 20
    dump = tmp_path / "store.dump"
    conn = ["-h", str(pg_cluster.socket), "-U", "graphmem"]
    subprocess.run([str(tool(pg_cluster.bindir, "pg_dump")), *conn, "-d", "postgres", "-n", schema, "-Fc",
                    "-f", str(dump)], check=True, capture_output=True)
    database = "restore_" + uuid.uuid4().hex[:8]
    pg_cluster.sql(f"CREATE DATABASE {database}")
    subprocess.run([str(tool(pg_cluster.bindir, "pg_restore")), *conn, "-d", database, "--no-owner", str(dump)],
                   check=True, capture_output=True)
    restored = url.replace("/postgres?", f"/{database}?")
    back = cli(restored, "export")  # type: ignore[arg-type]
    assert back.code == 0 and back.out == original.out
    assert cli(restored, "--json", "rebuild", "--check").json()["ok"]  # type: ignore[arg-type]
    assert "Atlas Platform" in cli(restored, "current", "project:atlas").out  # type: ignore[arg-type]  # events came too
    # under a new schema name: rename it in the fresh database
    subprocess.run([str(tool(pg_cluster.bindir, "psql")), *conn, "-d", database, "-XAtc",
                    f"ALTER SCHEMA {schema} RENAME TO renamed"], check=True, capture_output=True)
    renamed = restored.replace(f"schema={schema}", "schema=renamed")
    assert cli(renamed, "export").out == original.out  # type: ignore[arg-type]
    assert cli(renamed, "assert", "project:atlas", "summary", "written after the restore").code == 0  # type: ignore[arg-type]
    assert "written after the restore" not in cli(url, "export").out  # type: ignore[arg-type]  # the original is apart
