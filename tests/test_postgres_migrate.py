"""graphmem migrate on PostgreSQL (graphmem/store/postgres/migrations.py), against a throwaway cluster
(tests/pg.py): a store of layout 1 (made by ``write_layout_1`` below from a store of this version, as
layout 1's code wrote it) is refused until migrated, and after ``migrate`` exports, answers and checks as
before; a migrate that fails changes nothing; a current store is left alone; a newer one is refused."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import psycopg
import pytest
from helpers import cli

import graphmem
from graphmem.demo import load_example
from graphmem.store.postgres.base import SCHEMA_VERSION, lock_key, split_url
from tests.pg import Cluster, pg_cluster, pg_url  # noqa: F401  (fixtures)
from tests.test_postgres import open_pg

STEPS = ["view_intervals_by_predicate"]
SUBJECTS = ("project:atlas", "project:old-works", "project:beacon")

# layout 1's view_interval, as its base._DDL wrote it: ``pos`` is the interval's place in the subject's whole view
_VIEW_INTERVAL_V1 = (
    'CREATE TABLE view_interval(subject text COLLATE "C" NOT NULL, predicate text COLLATE "C" NOT NULL, '
    'pos integer NOT NULL, valid_from bigint NOT NULL, valid_to bigint, row text COLLATE "C" NOT NULL)',
    "CREATE INDEX view_interval_subject ON view_interval(subject, predicate)",
    "CREATE INDEX view_interval_predicate ON view_interval(predicate, valid_from)",
)


def sql(url: str, query: str, params: Any = None) -> list[tuple[Any, ...]]:
    """One statement on the store's schema, committed; its rows."""
    conninfo, schema = split_url(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description is not None else []


def write_layout_1(url: str) -> None:
    """Turn the store at ``url`` (this version's layout) into layout 1 as that version kept it: the
    ``view_interval`` rows numbered over the subject's whole view (ordered by predicate, then as stored),
    keyed by no primary key, with layout 1's two indexes; ``schema_version`` 1."""
    conninfo, schema = split_url(url)
    with psycopg.connect(conninfo) as conn:  # one transaction
        conn.execute(f"SET search_path TO {schema}")
        conn.execute("ALTER TABLE view_interval RENAME TO view_interval_now")
        conn.execute("ALTER INDEX view_interval_predicate RENAME TO view_interval_now_predicate")
        for ddl in _VIEW_INTERVAL_V1:
            conn.execute(ddl)
        conn.execute("INSERT INTO view_interval SELECT subject, predicate, "
                     "(row_number() OVER (PARTITION BY subject ORDER BY predicate, pos) - 1)::integer, "
                     "valid_from, valid_to, row FROM view_interval_now")
        conn.execute("DROP TABLE view_interval_now")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")


def layout(url: str) -> int:
    return int(sql(url, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0])


def indexes(url: str, name: str) -> bool:
    """Whether the store's schema has an index of that name."""
    return bool(sql(url, "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s", (split_url(url)[1], name)))


def dump(url: str) -> dict[str, Any]:
    """Every row of every table of the store's schema, and its tables' columns, keys and indexes."""
    _, schema = split_url(url)
    tables = [r[0] for r in sql(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                                     "ORDER BY table_name", (schema,))]
    return {"rows": {t: sorted(map(repr, sql(url, f"SELECT * FROM {t}"))) for t in tables},
            "columns": sql(url, "SELECT table_name, column_name, data_type FROM information_schema.columns "
                                "WHERE table_schema = %s ORDER BY 1, 2", (schema,)),
            "indexes": sql(url, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY 1", (schema,))}


def answers(url: str) -> dict[str, Any]:
    """What the CLI answers of the store: the export, and current, timeline and facts -p of some subjects."""
    out: dict[str, Any] = {}
    for args in (["export"], *(["current", s, "--json"] for s in SUBJECTS), *(["timeline", s, "--json"] for s in SUBJECTS),
                 *(["facts", "-p", p, "--json"] for p in ("status", "uses", "owner"))):
        r = cli(url, *args)
        assert r.code == 0, (args, r.err)
        out[" ".join(args)] = r.out if args == ["export"] else _strip(json.loads(r.out))
    return out


def _strip(d: Any) -> Any:
    """A result's document without the instants of the call itself (now)."""
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k not in ("as_of", "known_at", "seconds")}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    return d


def interval_rows(url: str, subject: str) -> dict[tuple[str, int], tuple[str, str]]:
    """A subject's ``view_interval`` rows by (predicate, pos): (the row's JSON, the transaction that wrote it)."""
    return {(p, pos): (row, xmin) for p, pos, row, xmin in
            sql(url, "SELECT predicate, pos, row, xmin::text FROM view_interval WHERE subject = %s", (subject,))}


@pytest.fixture
def old(made: tuple[str, dict[str, Any]]) -> str:
    """A store of layout 1 (``made``'s address)."""
    return made[0]


@pytest.fixture
def made(pg_url: str) -> tuple[str, dict[str, Any]]:  # noqa: F811
    """A store of layout 1 with the bundled example and a subject of many predicates and intervals, and
    what the CLI answered of it (``answers``) before it was turned into layout 1."""
    m = open_pg(pg_url, create=True)
    try:
        load_example(m)
        m.add_entity("Project", "Old Works", aliases=["oldw"])
        for i in range(6):
            m.add_entity("Tool", f"Relic {i}")
            m.assert_("Old Works", "uses", f"Relic {i}", valid_from=f"200{i}-01-01")
        m.assert_("Old Works", "status", "paused", valid_from="2001-06-01")
        m.assert_("Old Works", "status", "active", valid_from="2003-06-01")
        m.assert_("Old Works", "owner", "Maya Chen", valid_from="2002-01-01")
    finally:
        m.close()
    expected = answers(pg_url)
    write_layout_1(pg_url)
    return pg_url, expected


def test_layout_1_is_made_as_layout_1_wrote_it(old: str) -> None:
    assert layout(old) == 1
    # positions over the whole view: some predicate's intervals start after 0
    starts = sql(old, "SELECT min(pos) FROM view_interval WHERE subject = 'project:old-works' GROUP BY predicate")
    assert len(starts) >= 3 and sorted(s[0] for s in starts)[-1] > 0
    assert not indexes(old, "view_interval_pkey")


def test_migrate_keeps_everything(made: tuple[str, dict[str, Any]]) -> None:
    old, expected = made
    refused = cli(old, "current", "Atlas")
    assert refused.code == 3 and "layout 1" in refused.err and "graphmem --store" in refused.err and "migrate" in refused.err
    assert len(refused.err_lines) == 1 and "Traceback" not in refused.err
    with pytest.raises(graphmem.StoreUnavailable, match="migrate"):
        graphmem.open(old)
    init = cli(old, "init")  # init opens the store: refused the same way, nothing made
    assert init.code == 3 and "layout 1" in init.err and "migrate" in init.err and layout(old) == 1

    r = cli(old, "migrate", "--json")
    assert r.code == 0, r.err
    doc = r.json()
    assert (doc["from"], doc["to"], doc["migrated"], doc["steps"], doc["backup"], doc["restarted"]) == \
        (1, SCHEMA_VERSION, True, STEPS, None, False)
    assert doc["store"] == old and doc["counts"]["statements"] > 0
    assert layout(old) == SCHEMA_VERSION

    assert answers(old) == expected
    check = cli(old, "rebuild", "--check", "--json")
    assert check.code == 0 and check.json()["ok"] and not check.json()["drift"], check.out
    # positions now count within (subject, predicate), under the primary key
    for subject, predicate, positions in sql(old, "SELECT subject, predicate, array_agg(pos ORDER BY pos) "
                                                  "FROM view_interval GROUP BY subject, predicate"):
        assert positions == list(range(len(positions))), (subject, predicate, positions)
    assert indexes(old, "view_interval_pkey")
    assert not indexes(old, "view_interval_subject")

    # a write replaces only its predicate's rows
    before = interval_rows(old, "project:old-works")
    assert len({p for p, _ in before}) >= 3
    w = cli(old, "assert", "Old Works", "status", "blocked", "--from", "2005-01-01")
    assert w.code == 0, w.err
    after = interval_rows(old, "project:old-works")
    assert {k: v for k, v in after.items() if k[0] != "status"} == {k: v for k, v in before.items() if k[0] != "status"}
    assert {v[1] for k, v in after.items() if k[0] == "status"} != {v[1] for k, v in before.items() if k[0] == "status"}
    assert len([k for k in after if k[0] == "status"]) == len([k for k in before if k[0] == "status"]) + 1
    assert cli(old, "rebuild", "--check", "--json").json()["ok"]
    facts = cli(old, "facts", "-p", "status", "--json").json()
    assert any(f["subject"]["ref"] == "project:old-works" and f["object"]["value"] == "blocked" for f in facts["facts"])

    # a rename rewrites every row that may name the entity (no predicate named)
    assert cli(old, "entity", "rename", "Relic 3", "Relic Three").code == 0
    renamed = interval_rows(old, "project:old-works")
    assert sorted(renamed) == sorted(after) and "Relic Three" in renamed[("uses", 3)][0]
    assert cli(old, "rebuild", "--check", "--json").json()["ok"]


def test_migrate_touches_no_file_named_like_the_address(old: str, tmp_path: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Kuzu's migration mark is a file in the store's folder; a PostgreSQL migration keeps none, so it
    removes none: before, it removed ``migrating.json`` under the address taken as a relative path."""
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    lookalike = Path(old) / "migrating.json"
    lookalike.parent.mkdir(parents=True)
    lookalike.write_text("{}")
    assert cli(old, "migrate").code == 0 and layout(old) == SCHEMA_VERSION
    assert lookalike.read_text() == "{}"


def test_a_current_store_is_left_alone(pg_url: str) -> None:  # noqa: F811
    assert cli(pg_url, "init").code == 0
    before = dump(pg_url)
    r = cli(pg_url, "migrate")
    assert r.code == 0 and r.out.strip() == f"store {pg_url} is at layout {SCHEMA_VERSION}; nothing to do", r.out + r.err
    doc = cli(pg_url, "migrate", "--json").json()
    assert (doc["migrated"], doc["steps"], doc["from"], doc["to"], doc["backup"]) == (False, [], SCHEMA_VERSION,
                                                                                      SCHEMA_VERSION, None)
    assert dump(pg_url) == before


def test_a_newer_layout_is_refused(pg_url: str) -> None:  # noqa: F811
    assert cli(pg_url, "init").code == 0
    sql(pg_url, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    before = dump(pg_url)
    for args in (["export"], ["migrate"]):
        r = cli(pg_url, *args)
        assert r.code == 3 and len(r.err_lines) == 1 and "layout 99" in r.err and "upgrade graphmem" in r.err, r.err
        assert "Traceback" not in r.err
    assert dump(pg_url) == before


def test_migrate_needs_a_store(pg_url: str) -> None:  # noqa: F811
    r = cli(pg_url, "migrate")
    assert r.code == 3 and len(r.err_lines) == 1 and "no store" in r.err, r.err
    _, schema = split_url(pg_url)
    assert not sql(pg_url, "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,))


def test_a_failed_step_leaves_layout_1_whole(old: str) -> None:
    # the step's last statement (the layout number) breaks a constraint: every statement before it goes too
    sql(old, "ALTER TABLE meta ADD CONSTRAINT layout_1_only CHECK (key <> 'schema_version' OR value = '1')")
    before = dump(old)
    r = cli(old, "migrate")
    assert r.code == 3 and len(r.err_lines) == 1, r.err
    assert "view_intervals_by_predicate (layout 1 to 2) failed" in r.err and "layout_1_only" in r.err
    assert "nothing was changed" in r.err and "Traceback" not in r.err
    assert dump(old) == before and layout(old) == 1
    assert cli(old, "export").code == 3  # still refused as layout 1

    sql(old, "ALTER TABLE meta DROP CONSTRAINT layout_1_only")
    assert cli(old, "migrate").code == 0 and layout(old) == SCHEMA_VERSION
    assert cli(old, "rebuild", "--check", "--json").json()["ok"]


_KILLED_IN_STEP = """
import os, signal, sys
from graphmem.store.postgres import migrations
step = migrations.MIGRATIONS[1]
def killed(cur):
    step(cur)  # every statement of the step has run; the transaction is not committed
    os.kill(os.getpid(), signal.SIGKILL)
migrations.MIGRATIONS[1] = killed
from graphmem.cli import main
sys.argv = ["graphmem", *sys.argv[1:]]
main()
"""


def test_a_killed_migration_leaves_layout_1_whole(old: str) -> None:
    before = dump(old)
    killed = subprocess.run([sys.executable, "-c", _KILLED_IN_STEP, "--store", old, "migrate"], capture_output=True,
                            timeout=300)
    assert killed.returncode == -9, killed.stderr
    assert dump(old) == before and layout(old) == 1
    r = cli(old, "migrate", "--json")  # the killed session's lock went with it
    assert r.code == 0 and r.json()["steps"] == STEPS and not r.json()["restarted"], r.err
    assert cli(old, "rebuild", "--check", "--json").json()["ok"]


def test_migrate_waits_for_a_writer(old: str) -> None:
    """The migration takes the store's write lock: it starts only when a writer holding it is done."""
    conninfo, schema = split_url(old)
    holder = psycopg.connect(conninfo, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s)", (lock_key(schema),))  # as a write transaction holds it
    done: list[Any] = []
    t = threading.Thread(target=lambda: done.append(graphmem.migrate(old)))
    t.start()
    time.sleep(1.0)
    assert not done and layout(old) == 1
    holder.execute("SELECT pg_advisory_unlock(%s)", (lock_key(schema),))
    t.join(60)
    holder.close()
    assert done and done[0].steps == tuple(STEPS) and layout(old) == SCHEMA_VERSION


def test_init_on_an_existing_store_keeps_it(pg_url: str) -> None:  # noqa: F811
    first = cli(pg_url, "init", "--json")
    assert first.code == 0, first.err
    assert cli(pg_url, "entity", "add", "Project", "Kept").code == 0
    before = dump(pg_url)
    again = cli(pg_url, "init", "--json")
    assert again.code == 0, again.err
    doc = again.json()
    assert doc["engine"] == "postgresql" and doc["layout"] == SCHEMA_VERSION and doc["entities"] == 1, doc
    assert dump(pg_url) == before
