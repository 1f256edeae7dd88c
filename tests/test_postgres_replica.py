"""A PostgreSQL store read from a hot standby (a streaming replica made with ``pg_basebackup -R``,
docs/engines.md, "Running PostgreSQL for graphmem"): the CLI and the service answer on the standby as
on the primary once it has replayed the primary's WAL; every write there is refused with one line
naming the replica (exit 3, HTTP 503), nothing of it written on either server.

Skipped with one line when the PostgreSQL server binaries are missing (tests/pg.py)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from helpers import cli, one_clear_line
from test_service import Server

import graphmem
from graphmem.demo import load_example
from graphmem.errors import StoreReadOnly
from tests.pg import Cluster, Standby, pg_cluster, pg_standby  # noqa: F401  (fixtures)

REPLICA = "is a read-only replica (a PostgreSQL hot standby)"


def _demo(url: str) -> None:
    with graphmem.open(url, create=True) as m:
        load_example(m)


def _plain(doc: Any) -> Any:
    """A JSON answer without what names the server or the moment of the call."""
    if isinstance(doc, dict):
        return {k: _plain(v) for k, v in doc.items() if k not in ("store", "address", "as_of", "known_at", "seconds")}
    if isinstance(doc, list):
        return [_plain(v) for v in doc]
    return doc


@pytest.fixture
def stores(pg_cluster: Cluster, pg_standby: Standby) -> tuple[str, str]:  # noqa: F811
    """The demo store on the primary and the same store's address on the standby, replayed."""
    schema = "t_" + uuid.uuid4().hex[:12]
    primary, standby = pg_cluster.url(schema), pg_standby.url(schema)
    _demo(primary)
    assert cli(primary, "assert", "atlas", "summary", "read from a replica").code == 0  # type: ignore[arg-type]
    pg_standby.catch_up(pg_cluster)
    return primary, standby


READS = (
    ("export",),
    ("--json", "info"),
    ("--json", "current", "atlas"),
    ("--json", "timeline", "atlas"),
    ("--json", "facts", "--predicate", "uses", "--object", "kuzu"),
    ("--json", "why", "fact:1"),
    ("--json", "path", "quill", "kuzu"),
    ("--json", "recommend", "graph database"),
    ("--json", "search", "kuzu"),
    ("--json", "pack", "-q", "which database does atlas use"),
    ("--json", "rebuild", "--check"),
)


def test_reads_on_the_standby_answer_as_on_the_primary(stores: tuple[str, str]) -> None:
    primary, standby = stores
    for args in READS:
        on_standby = cli(standby, *args)  # type: ignore[arg-type]
        on_primary = cli(primary, *args)  # type: ignore[arg-type]
        assert on_standby.code == on_primary.code == 0, (args, on_standby, on_primary)
        if args == ("export",):
            assert on_standby.out == on_primary.out and on_standby.out.count("\n") > 20
            continue
        assert _plain(on_standby.json()) == _plain(on_primary.json()), args
    info = cli(standby, "--json", "info").json()  # type: ignore[arg-type]
    assert info["store"] == info["address"] == standby and info["engine"] == "postgresql"
    assert "read from a replica" in cli(standby, "current", "atlas").out  # type: ignore[arg-type]


WRITES = (
    ("assert", "atlas", "summary", "written on a replica"),
    ("entity", "add", "Tool", "Replica Tool"),
    ("note", "a note written on a replica"),
    ("retract", "fact:1", "--reason", "no"),
    ("lifecycle",),
    ("rebuild",),
)


def test_writes_on_the_standby_are_refused_with_one_line(stores: tuple[str, str], pg_cluster: Cluster,  # noqa: F811
                                                         pg_standby: Standby) -> None:  # noqa: F811
    primary, standby = stores
    before = cli(primary, "export").out  # type: ignore[arg-type]
    for args in WRITES:
        r = cli(standby, *args)  # type: ignore[arg-type]
        line = one_clear_line(r, 3, [REPLICA, standby], ("expected the primary server's address",))
        assert "database error" not in line
    doc = cli(standby, "--json", "assert", "atlas", "summary", "x").json()  # type: ignore[arg-type]
    assert doc["schema"] == "graphmem.error.v1" and doc["code"] == "StoreReadOnly" and REPLICA in doc["message"]
    new_schema = standby.replace(standby.rpartition("schema=")[2], "t_" + uuid.uuid4().hex[:12])
    one_clear_line(cli(new_schema, "init"), 3, [REPLICA], ("expected",))  # type: ignore[arg-type]
    with pytest.raises(StoreReadOnly, match="read-only replica"):
        graphmem.open(new_schema, create=True)
    with graphmem.open(standby) as m:  # asked for writing: a replica opens read-only, and says so on a write
        assert m.read_only and m.current("atlas").facts
        with pytest.raises(StoreReadOnly, match="read-only replica"):
            m.assert_("atlas", "summary", "from Python")
    pg_standby.catch_up(pg_cluster)
    assert cli(primary, "export").out == before == cli(standby, "export").out  # type: ignore[arg-type]
    assert pg_cluster.sql(f"SELECT count(*) FROM {primary.rpartition('schema=')[2]}.record_event") == "0"


def test_serve_on_the_standby_reads_and_refuses_writes(stores: tuple[str, str]) -> None:
    primary, standby = stores
    s = Server(standby)  # type: ignore[arg-type]
    p = Server(primary)  # type: ignore[arg-type]
    try:
        for path, params in (("/current", {"subject": "atlas"}), ("/entities", {}), ("/search", {"q": "kuzu"})):
            a, b = s.get(path, **params), p.get(path, **params)
            assert a.status_code == b.status_code == 200, (path, a.text)
            assert _plain(a.json()) == _plain(b.json()), path
        health = s.get("/health").json()
        assert health["status"] == "ok" and health["address"] == standby
        r = s.post("/assert", {"subject": "atlas", "predicate": "summary", "object": "through the service"})
        assert r.status_code == 503 and REPLICA in json.dumps(r.json()), r.text
        assert "through the service" not in s.get("/current", subject="atlas").text
    finally:
        assert s.stop() in (0, -15)
        p.stop()
    assert "through the service" not in cli(primary, "export").out  # type: ignore[arg-type]
