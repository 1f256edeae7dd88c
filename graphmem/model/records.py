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
    ``ingested_at`` are UTC datetimes; ``ts_us`` and ``ingested_us`` are the same instants as stored.

    Attributes
    ----------
    id, ref : int, str
        N and ``rec:N``.
    key : str
        ``id:`` and the id given at ingest, or ``sha256:`` and the digest of its text.
    text : str
        The text as stored (redacted and bounded).
    ts, ts_us : datetime, int
        The record's time.
    ingested_at, ingested_us : datetime, int
        When it was ingested.
    kind : str
        ``message``, ``note``, ``tool_result``, ``doc`` or another short lower-case word.
    source, scope : str or None
        Where it came from and the scope it belongs to.
    importance : float
        From 0 to 1.
    meta : dict
        Free fields given at ingest.
    original_sha256, original_chars : str, int
        The original text's digest and length.
    truncated : bool
        Whether the text was cut to the size limit.
    redactions : dict of str to int
        How many secrets of each kind were redacted.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.ingest([{"text": "Atlas stores its graph in Kuzu.", "ts": "2024-03-01", "kind": "note"}])
    >>> r = m.record("rec:1")
    >>> r.ref, r.kind, r.ts.isoformat(), r.to_dict()["ts"]
    ('rec:1', 'note', '2024-03-01T00:00:00+00:00', '2024-03-01T00:00:00Z')
    >>> m.close()
    """

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
        """``rec:N``."""
        return f"rec:{self.id}"

    @property
    def ts(self) -> _dt.datetime:
        """The record's time, UTC."""
        return utc(self.ts_us)

    @property
    def ingested_at(self) -> _dt.datetime:
        """When it was ingested, UTC."""
        return utc(self.ingested_us)

    def to_dict(self) -> dict[str, Any]:
        """The record as ``graphmem record --json`` prints it.

        Returns
        -------
        dict
            Its fields, times as ISO-8601 text, with ``importance_band``.
        """
        return {"ref": self.ref, "id": self.key, "ts": format_instant(self.ts_us), "kind": self.kind,
                "source": self.source, "scope": self.scope, "importance": self.importance,
                "importance_band": importance_band(self.importance), "meta": self.meta, "text": self.text,
                "truncated": self.truncated, "original_sha256": self.original_sha256,
                "original_chars": self.original_chars, "redactions": self.redactions,
                "ingested_at": format_instant(self.ingested_us)}
