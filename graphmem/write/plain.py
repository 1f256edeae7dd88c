"""The plain ``assert`` line of an import, built in one step from what the batch checked already
(``validate.Memo``) and checked as ``Checks.assertion`` checks it: the same statement, or None for the
full checks to give the line's error. A million-line import spends most of its reading time here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphmem.errors import GraphmemError
from graphmem.model import Entity, Statement
from graphmem.model.text import clean
from graphmem.model.times import parse_instant
from graphmem.write.validate import _URI_RE, Checks, Memo, check_object_type, literal, trust_for

_PLAIN_KEYS = frozenset(("op", "subject", "predicate", "object", "valid_from", "valid_to", "sources", "recorded_at",
                         "id"))
_PLAIN_OBJECTS = (str, int, float)  # objects a plain assert line's memo key takes as they are (bool: a full check)


def _plain_uri(src: Any) -> str | None:
    """A source as ``Checks.sources`` stores it when it is a URI that needs nothing else (no record ref,
    valid text; secrets redacted), else None."""
    if type(src) is not str or src.startswith(("rec:", " ")) or not _URI_RE.match(src):
        return None
    try:
        uri = clean(src, "source").strip()
    except GraphmemError:
        return None
    return uri if uri is src or _URI_RE.match(uri) else None


def plain_assertion(checks: Checks, fid: int, line: dict[str, Any], now: int, memo: Memo, scope: str | None = None,
                    resolve: Callable[..., Entity] | None = None) -> Statement | None:
    """The statement of an import's ``assert`` line of the common shape (the fields ``op``, ``subject``,
    ``predicate``, ``object``, ``valid_from``, ``valid_to``, ``sources``, ``recorded_at``, ``id`` only;
    asserted by ``import``) built from what ``memo`` checked already: the same statement
    ``checks.assertion`` makes (its subject, predicate and object resolved and checked as it does, and
    kept in ``memo``, when the memo does not hold them yet). None when anything is unusual or wrong (a
    field it does not know, a record ref or a source that is not a plain URI, a time that does not
    parse, valid_to not after valid_from, any check that fails): the caller then checks the line with
    ``checks.assertion``, which gives the line's error. ``scope`` is the import's scope, checked already;
    ``resolve`` the batch's resolver.

    A million-line import spends most of its reading time here: no error is ever raised, each
    part is one table lookup, and the statement is built as a tuple."""
    if not _PLAIN_KEYS.issuperset(line):
        return None
    rec = now
    text = line.get("recorded_at")
    if text is not None:
        rec = _plain_time(text, now, memo)  # type: ignore[assignment]
        if rec is None or rec > now:
            return None
    subject, predicate, obj = line.get("subject"), line.get("predicate"), line.get("object")
    if type(subject) is not str or type(predicate) is not str:
        return None
    otype = type(obj)
    if otype not in _PLAIN_OBJECTS:
        return None
    resolve = resolve or checks.resolve
    head = memo.heads.get((subject, predicate))
    try:
        if head is None:
            _, s, p = checks._head(subject, predicate, "import", None, now, resolve, memo)
        else:
            s, p = head
        key = (p.name, s.type, otype, obj)
        known = memo.objects.get(key)
        if known is None:
            if p.entity_valued:
                o = resolve(str(obj), role=f"object of {p.name}")
                check_object_type(checks.ontology, p, s.type, o.type, o.ref)
                known = (o.ref, "entity", o.name)
            else:
                known = (literal(p, obj), "literal", None)
            memo.keep(memo.objects, key, known)
    except GraphmemError:
        return None
    times = memo.times
    text = line.get("valid_from")
    if text is None:
        vf = rec
    else:
        vf = times.get(text) if type(text) is str else None  # type: ignore[assignment]
        if vf is None:
            vf = _plain_time(text, now, memo)
            if vf is None:
                return None
    text = line.get("valid_to")
    vt = None
    if text is not None:
        vt = times.get(text) if type(text) is str else None
        if vt is None:
            vt = _plain_time(text, now, memo)
        if vt is None or vt <= vf:
            return None
    srcs = line.get("sources")
    if not srcs:
        sources: tuple[str, ...] = ()
    elif type(srcs) is list:
        out: list[str] = []
        for src in srcs:
            uri = memo.sources.get(src) if type(src) is str else None
            if uri is None:
                uri = _plain_uri(src)
                if uri is None:
                    return None
                memo.keep(memo.sources, src, uri)
            if uri not in out:
                out.append(uri)
        sources = tuple(out)
    else:
        return None
    trust = memo.trust.get(("import", 1 if sources else 0))
    if trust is None:
        trust = trust_for("import", sources, memo)
    value, kind, oname = known
    return tuple.__new__(Statement, (fid, "assert", s.ref, p.name, value, kind, vf, vt, rec, None, None,
                                     sources, "import", trust, oname, scope))

def _plain_time(text: Any, now: int, memo: Memo) -> int | None:
    """``plain_assertion``'s time: ``text`` parsed as ``parse_instant`` parses it, or None when it is not
    a time (the full check names the error). Dates are kept in ``memo``; a UTC time to the second
    (``2025-06-01T12:30:00Z``, as an export writes record times, most of them distinct) is its date's
    instant plus its seconds."""
    if type(text) is not str:
        return None
    if (len(text) == 20 and text[10] == "T" and text[19] == "Z" and text[13] == ":" and text[16] == ":"
            and text.isascii() and (hms := text[11:13] + text[14:16] + text[17:19]).isdigit()):
        day = memo.times.get(text[:10])
        if day is None:
            day = _plain_time(text[:10], now, memo)
        h, m, sec = int(hms[:2]), int(hms[2:4]), int(hms[4:])
        if day is not None and h < 24 and m < 60 and sec < 60:
            return day + ((h * 60 + m) * 60 + sec) * 1_000_000
    try:
        us = parse_instant(text, now=now)
    except GraphmemError:
        return None
    if text.strip().lower() != "now":
        memo.keep(memo.times, text, us)
    return us
