"""The PostgreSQL store's write lock after a refused write: a process whose write is refused for bad
input (after it would have read its id) keeps no other process's write waiting, however long it lives
(docs/engines.md, "Writes from several processes"). Against the throwaway cluster of tests/pg.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import BadInput
from tests.pg import pg_cluster, pg_url  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parent.parent
WAIT_S = 8  # the second process's lock wait (LOCK_WAIT_S, 120 s, cut short so the old behaviour fails fast)

# a second process: one assert, timed from the call to its return
_SECOND = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from graphmem.store.postgres import base
    base.LOCK_WAIT_S = {wait}
    import graphmem
    m = graphmem.open({url!r})
    t = time.perf_counter()
    m.assert_("Atlas", "status", "active")
    print(time.perf_counter() - t)
    m.close()
""")

REFUSED: list[tuple[str, Callable[[graphmem.Memory], Any]]] = [
    ("assert, unknown predicate", lambda m: m.assert_("Atlas", "no_such_predicate", "x")),
    ("assert, bad time", lambda m: m.assert_("Atlas", "status", "active", valid_from="not a time")),
    ("end of what does not hold", lambda m: m.end("Atlas", "uses", "Kuzu", at="2020-01-01")),
    ("cite of an unknown fact", lambda m: m.cite("fact:999", ["https://example.com/x"])),
    ("strict import with a bad line", lambda m: m.import_jsonl(
        ['{"op": "assert", "subject": "Atlas", "predicate": "status", "object": "active"}',
         '{"op": "assert", "subject": "Nobody", "predicate": "status", "object": "active"}'], strict=True)),
]


def _second_write(url: str) -> float:
    out = subprocess.run([sys.executable, "-c", _SECOND.format(repo=str(REPO), url=url, wait=WAIT_S)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return float(out.stdout.strip().splitlines()[-1])


def test_a_refused_write_keeps_no_other_process_waiting(pg_url: str) -> None:  # noqa: F811
    with graphmem.open(pg_url, create=True) as m:  # a long-lived process: it stays open throughout
        m.add_entity("Project", "Atlas")
        m.add_entity("Tool", "Kuzu")
        m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-01-01")
        for what, refused in REFUSED:
            outcome: Any = None
            try:
                outcome = refused(m)
            except BadInput:
                pass
            else:  # a strict import refuses with a report, not an exception
                assert outcome is not None and not outcome.ok, what
            waited = _second_write(pg_url)
            assert waited < 1.0, f"after a refused {what}, another process's write waited {waited:.2f} s"
        assert len(m.store.all_statements()) == 1 + len(REFUSED)  # the first, and the second process's
        assert m.rebuild(check=True).to_dict()["ok"]


def test_the_check_sees_a_held_lock(pg_url: str) -> None:  # noqa: F811
    """The measure above can fail: a process that holds the store's lock keeps the second write waiting
    (here the lock is taken by hand, as an id read outside a transaction takes it)."""
    with graphmem.open(pg_url, create=True) as m:
        m.add_entity("Project", "Atlas")
        m.store.next_fact_id()  # outside a transaction: the session-level ticket (base._ticket)
        with pytest.raises(AssertionError, match="lock"):
            _second_write(pg_url)
