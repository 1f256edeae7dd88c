"""A PostgreSQL store's address as a user sees it: ``Memory.path``, ``graphmem init`` and ``info``, JSON
outputs, ``/health`` and messages show it as written (``postgresql://``, not a path's ``postgresql:/``),
with a password shown as ``***``, and the address shown opens the same store again."""

from __future__ import annotations

import uuid

from helpers import cli, one_clear_line
from starlette.testclient import TestClient

import graphmem
from graphmem.service.http import create_app
from tests.pg import Cluster, pg_cluster, pg_url  # noqa: F401  (fixtures)


def test_memory_path_is_the_address_and_opens_the_store_again(pg_url: str) -> None:  # noqa: F811
    with graphmem.open(pg_url, create=True) as m:
        m.add_entity("Project", "Atlas")
        assert m.path == pg_url and str(m.path).startswith("postgresql://")
        assert m.info().store == m.info().address == pg_url
        shown = m.path
    with graphmem.open(shown, read_only=True) as again:  # the address shown round-trips
        assert [e.ref for e in again.entities()] == ["project:atlas"]
    init = cli(pg_url, "init")  # type: ignore[arg-type]
    assert init.code == 0 and f"store ready at {pg_url} (PostgreSQL" in init.out
    info = cli(pg_url, "--json", "info").json()  # type: ignore[arg-type]
    assert info["store"] == info["address"] == pg_url
    assert f"store:      {pg_url}\n" in cli(pg_url, "info").out  # type: ignore[arg-type]
    app = create_app(pg_url, allow_hosts=("testserver",))
    with TestClient(app) as client:
        health = client.get("/health").json()
    assert health["store"] == health["address"] == pg_url


def test_a_password_is_shown_as_stars_everywhere(pg_cluster: Cluster) -> None:  # noqa: F811
    schema = "t_" + uuid.uuid4().hex[:12]
    url = pg_cluster.url(schema).replace("postgresql://graphmem@", "postgresql://graphmem:s3cret@")
    shown = url.replace(":s3cret@", ":***@")
    line = one_clear_line(cli(url, "info"), 3, [f"no store at {shown!r}"], ("expected",))  # type: ignore[arg-type]
    assert "s3cret" not in line and "postgresql:/graphmem" not in line
    init = cli(url, "init")  # type: ignore[arg-type]  # the test cluster trusts local connections: any password
    assert init.code == 0 and f"store ready at {shown} (" in init.out and "s3cret" not in init.out + init.err
    with graphmem.open(url) as m:
        assert m.path == shown and m.info().store == m.info().address == shown
    doc = cli(url, "--json", "info").json()  # type: ignore[arg-type]
    assert doc["store"] == doc["address"] == shown
    app = create_app(url, allow_hosts=("testserver",))
    with TestClient(app) as client:
        text = client.get("/health").text
    assert shown in text and "s3cret" not in text
