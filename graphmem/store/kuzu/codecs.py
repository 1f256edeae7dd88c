"""How the Kuzu store writes values down beyond the forms every engine shares (``store/common/codecs.py``):
instants as Kuzu TIMESTAMP text, and the rows of the ``SubjectFacet`` table. Pure functions; large imports and
rebuilds call them in forked children, away from the database."""

from __future__ import annotations

import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any

from graphmem.model import Interval
from graphmem.store.common.codecs import _rows_text, dumps

_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
_PREDICATE = itemgetter(1)  # an interval's predicate


def _ts(us: int | None) -> str:
    """An instant as Kuzu TIMESTAMP text for CSV bulk loads (the C isoformat: a hot path)."""
    if us is None:
        return ""
    return (_EPOCH_NAIVE + datetime.timedelta(microseconds=us)).isoformat(" ")


def kuzu_time_text(us: int) -> str:
    """An instant as Kuzu casts a TIMESTAMP to STRING: ``_ts``, with the fraction's trailing zeros
    dropped (``2021-01-09 00:00:00.5``)."""
    text = _ts(us)
    return text.rstrip("0") if "." in text else text


def _ts_param(us: int | None) -> Any:
    from graphmem.model.times import to_datetime
    return to_datetime(us)


def facet_rows(ref: str, view: list[Interval]) -> list[list[Any]]:
    """A subject's view as its rows of the ``SubjectFacet`` table, one per predicate (FACETS_LAYOUT):
    ``[key, ref, predicate, open, since, ended, first, last]``. ``open`` holds the predicate's open
    intervals (no end) as JSON rows without subject and predicate (object, kind, from, to, assertions,
    sources, conflicts, name), ``since`` the earliest start among them; ``ended`` the intervals that
    end, ``first`` and ``last`` their earliest start and latest end; None where there are none. The
    key is ``ref + " " + predicate`` (a predicate holds no space). The predicate scan asks Kuzu for
    the rows whose bounds hold the time asked about, and parses only those texts."""
    by: dict[str, list[Interval]] = {}
    for pred, run in groupby(view, _PREDICATE):  # a view comes grouped by predicate: a run each
        group = by.get(pred)
        if group is None:
            by[pred] = list(run)
        else:
            group.extend(run)
    out = []
    for pred, ivs in by.items():
        if len(ivs) == 1:  # most facets: one interval
            row = ivs[0][2:]
            if row[3] is None:
                out.append([ref + " " + pred, ref, pred, _rows_text([row]), row[2], None, None, None])
            else:
                out.append([ref + " " + pred, ref, pred, None, None, _rows_text([row]), row[2], row[3]])
            continue
        opened: list[tuple[Any, ...]] = [iv[2:] for iv in ivs if iv[5] is None]
        ended: list[tuple[Any, ...]] = [iv[2:] for iv in ivs if iv[5] is not None] if len(opened) < len(ivs) else []
        out.append([ref + " " + pred, ref, pred,
                    _rows_text(opened) if opened else None, min([r[2] for r in opened]) if opened else None,
                    _rows_text(ended) if ended else None, min([r[2] for r in ended]) if ended else None,
                    max([r[3] for r in ended]) if ended else None])
    return out


def facets_text(rows: list[list[Any]] | list[tuple[Any, ...]]) -> str:
    """A subject's facet rows (``facet_rows`` without key and ref: predicate, open, since, ended, first,
    last) in one canonical text, by predicate, to compare stored rows with computed ones."""
    return dumps(sorted([list(r) for r in rows], key=lambda r: r[0]))


def _int_list(ids: tuple[int, ...]) -> str:
    """A list of ids as JSON (the form COPY reads for INT64[]), without the JSON encoder (most lists
    of an interval hold one id or none)."""
    if len(ids) == 1:
        return f"[{ids[0]}]"
    return "[" + ",".join(map(str, ids)) + "]" if ids else "[]"
