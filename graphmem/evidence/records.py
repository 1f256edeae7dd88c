"""Evidence records: parsing, redaction, bounding and importance (SPEC 7). Pure functions.

The store keeps what these return; nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from graphmem.errors import BadInput
from graphmem.model.records import Record
from graphmem.model.scopes import check_scope
from graphmem.model.text import check_text, find_bad_text, redact
from graphmem.model.times import parse_instant

MAX_CHARS = 16_000  # a record's text is cut to this many characters, with a marker
TRUNCATION_MARKER = "\n[TRUNCATED: {n} more characters; sha256 of the original kept]"
KINDS = ("message", "note", "tool_result", "doc")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for k, v in more.items():
        counts[k] = counts.get(k, 0) + v


def _redacted(value: str, counts: dict[str, int]) -> str:
    out, more = redact(value)
    _add(counts, more)
    return out


def _redact_json(value: Any) -> tuple[Any, dict[str, int]]:
    """Redact every string inside a JSON value (keys included)."""
    counts: dict[str, int] = {}
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        out = []
        for v in value:
            r, c = _redact_json(v)
            out.append(r)
            _add(counts, c)
        return out, counts
    if isinstance(value, dict):
        d = {}
        for k, v in value.items():
            rk, ck = redact(k)
            rv, cv = _redact_json(v)
            d[rk] = rv
            _add(counts, ck)
            _add(counts, cv)
        return d, counts
    return value, counts


def bound(text: str, max_chars: int = MAX_CHARS) -> tuple[str, bool]:
    """Cut ``text`` to ``max_chars`` with a marker saying how much was dropped."""
    if len(text) <= max_chars:
        return text, False
    return text[:max_chars] + TRUNCATION_MARKER.format(n=len(text) - max_chars), True


# Words that mark a decision or a change of state in a project's life. Words ordinary chat uses for
# emphasis ("always", "never", "must", "remember", "important", "critical", "due") are not among them:
# they fire on every other turn of a conversation and say nothing about what is worth keeping.
_DECISIVE = re.compile(
    r"(?i)\b(decided|decision|agreed|switch(?:ed|ing)? (?:to|from)|migrat(?:e|ed|ing|ion)|adopt(?:ed|ing)|"
    r"deprecat\w+|deadline|blocked|blocker|breaking change|retired?|replaced|superseded|rolled back)\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def importance(text: str, kind: str | None) -> float:
    """A deterministic score: must_remember >= 0.8, nice_to_have >= 0.5, else ignore.

    ``0.3``, plus ``0.3`` per decisive word (decided, agreed, switched to, migrated, deadline,
    blocked, deprecated, replaced, ...; at most ``0.45``), plus ``0.15`` for an ISO date, plus
    ``0.1`` for a note or doc (``-0.1`` for a tool result), plus ``0.05`` past 40 words; at most 3
    words: ``0.1``. Chat emphasis (always, never, must, remember, important) does not count, so an
    ordinary message scores 0.3 (docs/packing.md, "Importance").

    >>> importance("We decided to move Atlas to Kuzu.", "note")
    0.7
    >>> importance("I always remember how important my family is to me.", "message")
    0.3
    """
    words = len(text.split())
    if words <= 3:
        return 0.1
    score = 0.3
    hits = len(_DECISIVE.findall(text))
    score += min(0.45, 0.3 * hits)
    if _DATE.search(text):
        score += 0.15
    if kind in ("note", "doc"):
        score += 0.1
    elif kind == "tool_result":
        score -= 0.1
    if words > 40:
        score += 0.05
    return round(max(0.0, min(1.0, score)), 2)


def opt_str(obj: dict[str, Any], key: str) -> str | None:
    """``obj[key]`` when it is a string, None when absent; anything else is bad input."""
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise BadInput(f"bad {key} {v!r}: expected a string")
    return v


def parse_record(obj: Any, *, now: int, redact_secrets: bool = True, max_chars: int = MAX_CHARS) -> Record:
    """Validate one ingest line (already JSON-decoded) into a Record with id 0 (assigned by the store)."""
    if not isinstance(obj, dict):
        raise BadInput("expected a JSON object with a 'text' field")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise BadInput("missing or empty 'text': expected a non-empty string")
    if "\x00" in text or len(_CONTROL.findall(text, 0, 4096)) > 8:
        raise BadInput("'text' looks like binary data (control characters); expected text")
    ts_text = opt_str(obj, "ts")
    ts = parse_instant(ts_text, now=now, what="ts") if ts_text else now
    kind = opt_str(obj, "kind") or "note"
    if not re.match(r"^[a-z][a-z0-9_]{0,31}$", kind):
        raise BadInput(f"bad kind {kind!r}: expected a short lower-case word such as {', '.join(KINDS)}")
    imp = obj.get("importance")
    if imp is not None and (isinstance(imp, bool) or not isinstance(imp, int | float) or not 0 <= imp <= 1):
        raise BadInput(f"bad importance {imp!r}: expected a number from 0 to 1")
    meta = obj.get("meta") or {}
    if not isinstance(meta, dict):
        raise BadInput(f"bad meta {meta!r}: expected a JSON object")
    if kind == "plan" and meta.get("due") is not None:  # a plan's due time (docs/lifecycle.md)
        due = meta["due"]
        if not isinstance(due, str):
            raise BadInput(f"bad due {due!r}: expected an ISO-8601 date or datetime")
        parse_instant(due, what="due")
    caller_id = obj.get("id")
    if caller_id is not None and not isinstance(caller_id, str | int):
        raise BadInput(f"bad id {caller_id!r}: expected a string or integer")
    source, scope = opt_str(obj, "source"), opt_str(obj, "scope")
    if scope is not None:
        check_scope(scope)
    for name, value in (("text", text), ("id", caller_id), ("source", source), ("scope", scope), ("meta", meta)):
        bad = find_bad_text(value)
        if bad is not None:
            check_text(bad, name)
    original = text
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()
    counts: dict[str, int] = {}
    key_id = None if caller_id is None else str(caller_id)
    key_scope = scope  # the idempotence key is made from the scope as given (as before scopes were redacted)
    if redact_secrets:  # the same rule as every other text a user writes (graphmem/model/text.py)
        text, counts = redact(text)
        source, scope, red_id = (None if v is None else _redacted(v, counts) for v in (source, scope, key_id))
        if red_id != key_id and key_id is not None:  # still one key per caller id: a digest tells them apart
            key_id = f"{red_id}#{hashlib.sha256(key_id.encode('utf-8')).hexdigest()[:16]}"
        meta, more = _redact_json(meta)
        _add(counts, more)
    text, truncated = bound(text, max_chars)
    key = f"id:{key_id}" if key_id is not None else "sha256:" + hashlib.sha256(
        json.dumps([original, ts_text, obj.get("kind"), source, key_scope], ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()
    score = float(imp) if imp is not None else importance(text, kind)
    return Record(0, key, text, ts, kind, source, scope, score, meta, digest, len(original), truncated, counts, now)
