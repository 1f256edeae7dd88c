"""The stored forms both engines keep alike: literals and source lists as text, and the compact JSON of a
subject's log (packed when long) and of its view. Pure functions; large imports and rebuilds call them in
forked children, away from the database. An engine hands them out through its store
(``common.forms``: ``store.decode_log``, ``store.view_text``, ...); the rest of graphmem never imports them."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import orjson

from graphmem.model import Interval, Statement, Value
from graphmem.model.jsonio import loads as loads  # the stores read their JSON with it too


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


# Compact JSON rows of a subject (its log and view) -----------------------------------------

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
    """A log as read by an engine's ``subject_logs`` (or stored), and whether its rows came in id order.
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
    """A log as read by an engine's ``subject_logs``, and its stored form: the same text when its rows came
    in id order, else the statements written again in id order."""
    log, ordered = statements_from_log(subject, text, name_of)
    return log, text if ordered else log_text(log)


def log_text(log: list[Statement]) -> str:
    """A subject's log in its stored form (the form an engine's ``subject_logs`` hands out): orjson writes
    the same text as ``dumps`` unless an object is a float (spelt otherwise) or beyond it (an integer
    beyond 64 bits, a lone surrogate), which ``dumps`` writes."""
    rows = [_stmt_row(s) for s in log]
    for s in log:
        if type(s[4]) is float:
            return dumps(rows)
    try:
        return orjson.dumps(rows).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError
        return dumps(rows)


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


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
