"""The one rule for text a user writes, on every path (command line, Python, import, ingest, the
service, agents, extraction): it must be valid Unicode, and secrets in it are redacted before it is
stored. Pure functions.

Redaction replaces API keys, tokens, private keys, cloud access keys and passwords in URLs by
``[REDACTED:<kind>]`` (docs/evidence.md lists the kinds). It is idempotent: redacted text is left as it is.
"""

from __future__ import annotations

import re
from typing import Any

from graphmem.errors import BadInput

# (kind, pattern, group to replace or 0 for the whole match, lower-case marks one of which the text must
# hold for the pattern to be tried); order matters: specific before generic. Most text holds no mark
# and skips every pass; a plain URL (most sources) tries none either, since it holds no "@" and no "=".
_SECRETS: tuple[tuple[str, re.Pattern[str], int, tuple[str, ...]], ...] = (
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
                               re.S), 0, ("private key",)),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0, ("akia", "asia")),
    ("aws_secret_key", re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\"]?([A-Za-z0-9/+=]{40})"), 1, ("secret",)),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{30,}\b"), 0,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), 0, ("xox",)),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), 0, ("aiza",)),
    ("api_key", re.compile(r"\bsk-(?:[A-Za-z0-9_\-]{2,}-)?[A-Za-z0-9_\-]{20,}\b"), 0, ("sk-",)),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\b"), 0, ("eyj",)),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{12,}=*)"), 1, ("bearer",)),
    ("url_password", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:([^@\s/]+)@", re.I), 1, ("@",)),
    ("url_token", re.compile(r"(?i)[?&;](?:[a-z_\-]*token|[a-z_\-]*secret|api[_\-]?key|key|password|passwd|pwd|sig|"
                             r"signature|auth|credentials?)=([^&#\s]+)"), 1,
     ("token=", "secret=", "key=", "password=", "passwd=", "pwd=", "sig=", "signature=", "auth=", "credential")),
    ("password", re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token)\s*[:=]\s*['\"]?"
                            r"([^\s'\"]{6,})"), 1,
     ("passw", "pwd", "secret", "api_key", "api-key", "apikey", "access_token", "access-token", "accesstoken")),
)


def _trie(words: list[str]) -> str:
    """A regular expression that finds any of ``words`` (lower-case literals), factored by their first
    characters (``a(?:iza|kia|...)``): Python's regex engine tries an alternation's branches one by one
    at every position, so thirty-odd flat branches cost twice as much as this (0.8 against 0.4 µs for a
    source URL, of which an import checks one a line). A word that holds a shorter one at its start is
    dropped: the shorter finds it. The same texts match as with the flat alternation.

    >>> _trie(["key=", "pwd", "pwd=", "passw"])
    'key=|p(?:assw|wd)'
    """
    groups: dict[str, list[str]] = {}
    for w in sorted(set(words)):
        groups.setdefault(w[0], []).append(w[1:])
    out = []
    for c, tails in groups.items():
        rest = "" if "" in tails else _trie(tails)
        out.append(re.escape(c) + (f"(?:{rest})" if "|" in rest else rest))
    return "|".join(out)


# whether a text may hold a secret at all: any pattern's marks (``redact``)
_ANY_MARK = re.compile(_trie([mark for _, _, _, marks in _SECRETS for mark in marks]))


def redact(text: str) -> tuple[str, dict[str, int]]:
    """Replace secrets by ``[REDACTED:<kind>]``; returns the text and counts by kind.

    >>> redact("see https://admin:hunter22@db.example.org/")
    ('see https://admin:[REDACTED:url_password]@db.example.org/', {'url_password': 1})
    """
    counts: dict[str, int] = {}
    low = text.lower()
    if not _ANY_MARK.search(low):  # most text: one regex pass instead of thirty-odd substring tests
        return text, counts
    for kind, pattern, group, marks in _SECRETS:
        if not any(mark in low for mark in marks):
            continue

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


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(value: str, what: str) -> str:
    """``value`` unchanged, or BadInput when it holds a lone surrogate: an undecodable byte of a
    command-line argument, or an escape such as ``\\ud800`` in JSON, which no store can hold.

    >>> check_text("Atlas", "name")
    'Atlas'
    """
    if type(value) is str and value.isascii():  # (a surrogate is not ASCII)
        return value
    m = _SURROGATE.search(value) if isinstance(value, str) else None
    if m is not None:
        raise BadInput(f"bad {what} {value!r}: it is not valid Unicode (an undecodable byte or a lone surrogate "
                       f"at character {m.start()}); expected UTF-8 text")
    return value


def clean(value: str, what: str) -> str:
    """Text as it is stored: checked (``check_text``) and redacted.

    >>> clean("https://admin:hunter22@db.example.org/", "source")
    'https://admin:[REDACTED:url_password]@db.example.org/'
    """
    return redact(check_text(value, what))[0]


def find_bad_text(value: Any) -> str | None:
    """The first string inside a value (lists, dicts, keys) that ``check_text`` refuses, if any."""
    if isinstance(value, str):
        return value if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        for v in value:
            bad = find_bad_text(v)
            if bad is not None:
                return bad
    return None
