"""What is read from the append-only events, the same on every engine: the merge redirects replayed from
the entity events, and the archived records and each record's use replayed from the record events. Each
engine reads the event rows with its own query and hands them here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

Redirects = dict[str, list[tuple[str, int, int | None]]]  # merged ref -> (into, from, until) by record time
USE_OPS = ("packed", "searched")  # the record events of use (docs/lifecycle.md)
STATE_OPS = ("archive", "revive")  # and of the lifecycle
RecordEvent = tuple[int, str, list[int], dict[str, Any], int]  # id, op, record ids, detail, record time


def redirects_from(rows: Iterable[Sequence[Any]]) -> Redirects:
    """Each merged ref with the entity it resolves to and over which record times, from the ``merge`` and
    ``unmerge`` entity events (id, op, ref, other, detail JSON, record time) in id order: a merge's
    ``ref`` is the entity kept, ``other`` the one merged into it; an unmerge names its merge in ``detail``."""
    out: Redirects = {}
    undone: dict[int, int] = {}
    merges: list[tuple[int, str, str, int]] = []
    for i, op, into, merged, detail, at in rows:
        if op == "merge":
            merges.append((i, merged, into, at))
        else:
            undone[int(json.loads(detail or "{}")["merge"])] = at
    for i, merged, into, at in merges:
        out.setdefault(merged, []).append((into, at, undone.get(i)))
    return out


def archived_from(events: Iterable[RecordEvent], state: dict[int, int] | None = None) -> dict[int, int]:
    """Each archived record with the record time of its archiving: the ``archive`` and ``revive`` events
    replayed in order, on top of ``state`` (the records archived before them, changed in place) when given.

    >>> sorted(archived_from([(7, "revive", [2], {}, 5), (8, "archive", [5], {}, 6)], {1: 0, 2: 0}))
    [1, 5]
    """
    state = {} if state is None else state
    for _, op, recs, _, at in events:
        for r in recs:
            if op == "archive":
                state[r] = at
            elif op == "revive":
                state.pop(r, None)
    return state


def id_runs(ids: Iterable[int]) -> list[list[int]]:
    """Ids as runs of consecutive ids, ``[first, last]`` each, rising: the compact form of a set of record ids
    (a policy archives the oldest records, which are mostly consecutive).

    >>> id_runs([5, 1, 2, 3, 9])
    [[1, 3], [5, 5], [9, 9]]
    >>> sorted(ids_of_runs(id_runs({4, 6, 7})))
    [4, 6, 7]
    """
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


def ids_of_runs(runs: Iterable[Sequence[int]]) -> list[int]:
    """The ids of ``id_runs``' runs, rising."""
    return [i for a, b in runs for i in range(a, b + 1)]


def use_from(events: Iterable[RecordEvent]) -> dict[int, list[int | None]]:
    """Each used record's [times packed, last packed, times returned by search, last returned, last
    revived] (record times in microseconds), from the use and ``revive`` events in order."""
    out: dict[int, list[int | None]] = {}
    for _, op, recs, _, at in events:
        for r in recs:
            u = out.setdefault(r, [0, None, 0, None, None])
            if op == "packed":
                u[0] = int(u[0] or 0) + 1
                u[1] = at
            elif op == "searched":
                u[2] = int(u[2] or 0) + 1
                u[3] = at
            elif op == "revive":
                u[4] = at
    return out
