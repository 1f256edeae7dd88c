"""An evidence record as stored (SPEC 7): the value every storage engine returns and every reader
takes. Parsing, redaction and bounding of what users send live in ``graphmem/evidence/records.py``."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from graphmem.model.times import format_instant, utc


def importance_band(score: float) -> str:
    return "must_remember" if score >= 0.8 else "nice_to_have" if score >= 0.5 else "ignore"


@dataclass(frozen=True)
class Record:
    """One evidence record as stored; ``id`` is N of ``rec:N``. ``ts`` (the record's time) and
    ``ingested_at`` are UTC datetimes; ``ts_us`` and ``ingested_us`` are the same instants as stored."""

    id: int
    key: str
    text: str
    ts_us: int
    kind: str
    source: str | None = None
    scope: str | None = None
    importance: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    original_sha256: str = ""
    original_chars: int = 0
    truncated: bool = False
    redactions: dict[str, int] = field(default_factory=dict)
    ingested_us: int = 0

    @property
    def ref(self) -> str:
        return f"rec:{self.id}"

    @property
    def ts(self) -> _dt.datetime:
        return utc(self.ts_us)

    @property
    def ingested_at(self) -> _dt.datetime:
        return utc(self.ingested_us)

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "id": self.key, "ts": format_instant(self.ts_us), "kind": self.kind,
                "source": self.source, "scope": self.scope, "importance": self.importance,
                "importance_band": importance_band(self.importance), "meta": self.meta, "text": self.text,
                "truncated": self.truncated, "original_sha256": self.original_sha256,
                "original_chars": self.original_chars, "redactions": self.redactions,
                "ingested_at": format_instant(self.ingested_us)}
