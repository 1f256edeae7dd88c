"""Evidence records: parsing, redaction, bounding and importance (SPEC 7). Pure functions.

The store keeps what these return; nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from graphmem.errors import BadInput
from graphmem.timeparse import format_instant, parse_instant

MAX_CHARS = 16_000  # a record's text is cut to this many characters, with a marker
TRUNCATION_MARKER = "\n[TRUNCATED: {n} more characters; sha256 of the original kept]"
KINDS = ("message", "note", "tool_result", "doc")

# (kind, pattern, group to replace or 0 for the whole match); order matters: specific before generic
_SECRETS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
                               re.S), 0),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),
    ("aws_secret_key", re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\"]?([A-Za-z0-9/+=]{40})"), 1),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{30,}\b"), 0),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), 0),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0),
    ("api_key", re.compile(r"\bsk-(?:[A-Za-z0-9_\-]{2,}-)?[A-Za-z0-9_\-]{20,}\b"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\b"), 0),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{12,}=*)"), 1),
    ("url_password", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:([^@\s/]+)@", re.I), 1),
    ("password", re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token)\s*[:=]\s*['\"]?"
                            r"([^\s'\"]{6,})"), 1),
)


# Every secret pattern above contains one of these (lower-cased); text without any skips the eleven passes.
_MAYBE_SECRET = ("private key", "akia", "asia", "aws", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "xox",
                 "aiza", "sk-", "eyj", "bearer", "://", "passw", "pwd", "secret", "api_key", "api-key", "apikey",
                 "access_token", "access-token", "accesstoken")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def redact(text: str) -> tuple[str, dict[str, int]]:
    """Replace secrets by ``[REDACTED:<kind>]``; returns the text and counts by kind."""
    counts: dict[str, int] = {}
    low = text.lower()
    if not any(marker in low for marker in _MAYBE_SECRET):
        return text, counts
    for kind, pattern, group in _SECRETS:
        def sub(m: re.Match[str], kind: str = kind, group: int = group) -> str:
            if "[REDACTED:" in m.group(0):
                return m.group(0)
            counts[kind] = counts.get(kind, 0) + 1
            if group == 0:
                return f"[REDACTED:{kind}]"
            start, end = m.span(group)
            s0 = m.start(0)
            whole = m.group(0)
            return whole[: start - s0] + f"[REDACTED:{kind}]" + whole[end - s0:]
        text = pattern.sub(sub, text)
    return text, counts


def _add(counts: dict[str, int], more: dict[str, int]) -> None:
    for k, v in more.items():
        counts[k] = counts.get(k, 0) + v


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


_DECISIVE = re.compile(
    r"(?i)\b(decided|decision|agreed|must|never|always|switch(?:ed|ing)?|migrat\w+|adopt\w*|deprecat\w+|"
    r"deadline|due|blocked|blocker|owner|owns|remember|important|critical|breaking|retire\w*|replace\w*)\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def importance(text: str, kind: str | None) -> float:
    """A deterministic score: must_remember >= 0.8, nice_to_have >= 0.5, else ignore.

    Decisive words (decided, switched, blocked, deadline, ...) weigh most, then an
    explicit date, then the kind (notes and docs over chatter), then length.
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


def importance_band(score: float) -> str:
    return "must_remember" if score >= 0.8 else "nice_to_have" if score >= 0.5 else "ignore"


@dataclass(frozen=True)
class Record:
    """One evidence record as stored; ``id`` is N of ``rec:N``."""

    id: int
    key: str
    text: str
    ts: int
    kind: str
    source: str | None = None
    scope: str | None = None
    importance: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    original_sha256: str = ""
    original_chars: int = 0
    truncated: bool = False
    redactions: dict[str, int] = field(default_factory=dict)
    ingested_at: int = 0

    @property
    def ref(self) -> str:
        return f"rec:{self.id}"

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "id": self.key, "ts": format_instant(self.ts), "kind": self.kind,
                "source": self.source, "scope": self.scope, "importance": self.importance,
                "importance_band": importance_band(self.importance), "meta": self.meta, "text": self.text,
                "truncated": self.truncated, "original_sha256": self.original_sha256,
                "original_chars": self.original_chars, "redactions": self.redactions,
                "ingested_at": format_instant(self.ingested_at)}


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
    caller_id = obj.get("id")
    if caller_id is not None and not isinstance(caller_id, str | int):
        raise BadInput(f"bad id {caller_id!r}: expected a string or integer")
    source, scope = opt_str(obj, "source"), opt_str(obj, "scope")
    for name, value in (("text", text), ("source", source), ("scope", scope), ("meta", meta)):
        try:
            if isinstance(value, str):
                value.encode("utf-8")
            elif value:
                json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(f"'{name}' holds a lone surrogate escape (such as \\ud800); expected valid Unicode") from None
    original = text
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()
    counts: dict[str, int] = {}
    if redact_secrets:
        text, counts = redact(text)
        if source is not None:
            source, more = redact(source)
            _add(counts, more)
        meta, more = _redact_json(meta)
        _add(counts, more)
    text, truncated = bound(text, max_chars)
    key = f"id:{caller_id}" if caller_id is not None else "sha256:" + hashlib.sha256(
        json.dumps([original, ts_text, obj.get("kind"), source, scope], ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()
    score = float(imp) if imp is not None else importance(text, kind)
    return Record(0, key, text, ts, kind, source, scope, score, meta, digest, len(original), truncated, counts, now)
