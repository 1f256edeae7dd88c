"""Refs and times as callers give them, made into ids and instants: the one fact-ref parser (its
formatter is ``graphmem.model.fact_ref``), the record-ref parser, and the one place that turns
``as_of``, ``known_at`` and "now" into instants."""

from __future__ import annotations

import re
from typing import NamedTuple

from graphmem.errors import BadInput
from graphmem.model import fact_ref
from graphmem.model.times import now_us, parse_instant

__all__ = ["When", "fact_ref", "instant", "parse_fact_ref", "parse_record_ref", "when"]

_FACT_RE = re.compile(r"^fact:(\d{1,18})$")
_REC_RE = re.compile(r"^rec:(\d{1,18})$")


def parse_fact_ref(text: str) -> int:
    """The id of a ``fact:N`` ref; anything else is bad input."""
    m = _FACT_RE.match(str(text).strip())
    if not m:
        raise BadInput(f"bad fact ref {text!r}: expected fact:N")
    return int(m[1])


def parse_record_ref(text: str) -> int:
    """The id of a ``rec:N`` ref; anything else is bad input."""
    m = _REC_RE.match(str(text).strip())
    if not m:
        raise BadInput(f"bad record ref {text!r}: expected rec:N")
    return int(m[1])


def instant(text: str | None, what: str, now: int) -> int | None:
    """``text`` as an instant (``now`` for "now"), or None when not given."""
    if text is None:
        return None
    return parse_instant(text, now=now, what=what)


class When(NamedTuple):
    """The instants of one call: ``now``, ``as_of`` (defaults to now) and ``known_at`` (None: now,
    the stored view holds the answer)."""

    now: int
    as_of: int
    known_at: int | None

    @property
    def known(self) -> int:
        """``known_at``, or now when not given."""
        return self.now if self.known_at is None else self.known_at

    @property
    def past(self) -> bool:
        """Whether the answer is what was known before now (the view is recomputed at ``known_at``)."""
        return self.known_at is not None and self.known_at < self.now


def when(as_of: str | None = None, known_at: str | None = None, now: int | None = None) -> When:
    """The instants of a read at ``as_of`` as known at ``known_at`` (each defaults to now, SPEC 4).
    ``known_at`` is parsed first, so its error is the one reported when both are bad."""
    now = now_us() if now is None else now
    k = instant(known_at, "known_at", now)
    a = instant(as_of, "as_of", now)
    return When(now, now if a is None else a, k)
