"""How the Kuzu store writes values down: literals, instants as Kuzu TIMESTAMP text, source lists,
and the compact JSON rows of the ``Subject`` table (a subject's log, packed when long, and its view).
Pure functions; large imports and rebuilds call them in forked children, away from the database."""

from __future__ import annotations

import base64
import datetime
import json
import zlib
from itertools import groupby
from operator import itemgetter
from typing import Any

import orjson

from graphmem.model import Interval, Statement, Value
from graphmem.model.jsonio import loads as loads  # the store reads its JSON with it too

_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)
_PREDICATE = itemgetter(1)  # an interval's predicate


def _sources_json(sources: tuple[str, ...]) -> str:
    """A source list as JSON; one plain source (most statements) skips the JSON encoder."""
    if not sources:
        return "[]"
    if len(sources) == 1:
        src = sources[0]
        if '"' not in src and "\\" not in src and src.isprintable():
            return '["' + src + '"]'
    return dumps(list(sources))


def _sources(text: str | None) -> tuple[str, ...]:
    """A stored source list; no sources or one plain source (most statements) skip the JSON parser."""
    if not text or text == "[]":
        return ()
    if text.count('"') == 2 and text.startswith('["') and text.endswith('"]') and "\\" not in text:
        return (text[2:-2],)
    return tuple(loads(text))


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


def _object(text: str, otype: str) -> tuple[Value | None, str]:
    """A stored object and its ``object_type`` back as the statement's value and kind."""
    if otype == "entity":
        return text, "entity"
    if otype:
        return decode_literal(text, otype), "literal"
    return None, ""


def encode_literal(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def decode_literal(text: str, literal_type: str) -> Value:
    if literal_type == "int":
        return int(text)
    if literal_type == "float":
        return float(text)
    if literal_type == "bool":
        return text == "true"
    return text


# Compact JSON rows of the Subject table -------------------------------------------

def _stmt_row(s: Statement) -> tuple[Any, ...]:
    """A statement as a row of its subject's log: without its subject and its object's name
    (id, op, predicate, object, kind, from, to, recorded, retracted, reason, sources, by, trust), and
    for a scoped statement, null and its scope as 14th and 15th items (the 14th is where the first
    version of the log kept the object's name)."""
    row = s[:2] + s[3:14]
    return row if s.scope is None else (*row, None, s.scope)


def _stmt_from_row(subject: str, r: list[Any], name_of: Any) -> Statement:
    """A log row back as a statement; ``name_of(ref)`` names entity objects. Rows written before the
    log dropped names carry the name as a 14th item; a scoped statement's row has its scope as a 15th."""
    name = (r[13] if len(r) > 13 and r[13] is not None else name_of(r[3])) if r[4] == "entity" else None
    return Statement(r[0], r[1], subject, r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], tuple(r[10] or ()),
                     r[11], r[12], name, r[14] if len(r) > 14 else None)


def statements_from_log(subject: str, text: str, name_of: Any) -> tuple[list[Statement], bool]:
    """A log as read by ``Store.subject_logs`` (or stored), and whether its rows came in id order.
    (A hot path of rebuild and lint: a million rows, each made into a statement without ``_make``.)"""
    new = tuple.__new__
    out: list[Statement] = []
    append = out.append
    last = -1
    ordered = True
    for r in loads(text):
        if len(r) != 13:
            st = _stmt_from_row(subject, r, name_of)
            if len(r) != 15 or st.id <= last:
                ordered = False  # len 14: an older row form, rewritten by the next rebuild
            last = st.id
            append(st)
            continue
        i, op, pred, obj, kind, vf, vt, rec, retr, reason, srcs, by, trust = r
        if i <= last:
            ordered = False
        last = i
        append(new(Statement, (i, op, subject, pred, obj, kind, vf, vt, rec, retr, reason,
                               tuple(srcs) if srcs else (), by, trust,
                               name_of(obj) if kind == "entity" else None, None)))
    if not ordered:
        out.sort()
    return out, ordered


_PACK_MIN = 256  # shorter texts are stored as they are


def pack(text: str) -> str:
    """A subject's log as stored: JSON, or above ``_PACK_MIN`` characters its zlib compression in
    base64 (a quarter of the size: at 1M statements the logs shrink from 150 MB to about 45 MB, which
    loads, commits and checkpoints faster and in less memory). Views stay JSON: ``current`` reads
    them on its hot path, and a rebuild compares them without unpacking."""
    if len(text) < _PACK_MIN:
        return text
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 1)).decode("ascii")


def unpack(stored: str | None) -> str:
    """The JSON text of a stored log (JSON starts with "[", base64 never does)."""
    if not stored:
        return "[]"
    if stored[0] == "[":
        return stored
    return zlib.decompress(base64.b64decode(stored)).decode("utf-8")


def view_text(view: list[Interval]) -> str:
    """A subject's intervals in their stored form (orjson: the view is written once per subject on every
    bulk path). Floats may be spelt otherwise than by the standard encoder (``1e-5`` for ``1e-05``), so
    two views are the same when ``same_view`` says so, not only when their texts are equal."""
    try:
        return orjson.dumps([_iv_row(iv) for iv in view]).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits, a lone surrogate
        return dumps([_iv_row(iv) for iv in view])


def same_view(stored: str | None, text: str) -> bool:
    """Whether a stored view holds what ``text`` (a ``view_text``) holds."""
    if stored == text:
        return True
    if not stored:
        return False
    try:
        return bool(loads(stored) == loads(text))
    except ValueError:
        return False


def decode_log(subject: str, text: str, name_of: Any) -> tuple[list[Statement], str]:
    """A log as read by ``Store.subject_logs``, and its stored form: the same text when its rows came
    in id order, else the statements written again in id order."""
    log, ordered = statements_from_log(subject, text, name_of)
    return log, text if ordered else log_text(log)


def log_text(log: list[Statement]) -> str:
    """A subject's log in its stored form (the form ``Store.subject_logs`` reads from Kuzu)."""
    return dumps([_stmt_row(s) for s in log])


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


def _rows_text(rows: list[tuple[Any, ...]]) -> str:
    try:
        return orjson.dumps(rows).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits, a lone surrogate
        return dumps(rows)


def _iv_row(iv: Interval) -> tuple[Any, ...]:
    """An interval without its subject (predicate, object, kind, from, to, assertions, sources, conflicts, name)."""
    return iv[1:]


def _iv_from_row(subject: str, r: list[Any]) -> Interval:
    return Interval(subject, r[0], r[1], r[2], r[3], r[4], tuple(r[5]), tuple(r[6]), tuple(r[7]), r[8])


def _int_list(ids: tuple[int, ...]) -> str:
    """A list of ids as JSON (the form COPY reads for INT64[]), without the JSON encoder (most lists
    of an interval hold one id or none)."""
    if len(ids) == 1:
        return f"[{ids[0]}]"
    return "[" + ",".join(map(str, ids)) + "]" if ids else "[]"


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


