"""One note: a single evidence record from text given on the command line or in Python (``graphmem
note``), by the same rules as an ingest line (SPEC 7: redaction, bounds, importance, idempotence)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from graphmem.errors import BadInput
from graphmem.evidence.ingest import RecordStore, ingest
from graphmem.evidence.records import parse_record
from graphmem.model.records import Record
from graphmem.model.times import format_instant, now_us, parse_instant
from graphmem.notebook import HtmlRepr


class NoteStore(RecordStore, Protocol):
    """The store methods a note calls: ingest's, and a record by id."""

    def record(self, rec_id: int) -> Record | None: ...


@dataclass(frozen=True)
class NoteResult(HtmlRepr):
    """The record a note is stored as; ``stored`` is False when the same note was already there
    (ingest's idempotence key), and ``record`` is then that earlier record.

    Attributes
    ----------
    record : Record
        The record the note is (the earlier one when the same note was already stored).
    stored : bool
        Whether this call stored it.
    ref : str
        Its ``rec:N`` ref.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> n = m.note("Atlas moved to Kuzu", ts="2024-03-01")
    >>> n.ref, n.stored, m.note("Atlas moved to Kuzu", ts="2024-03-01").stored
    ('rec:1', True, False)
    >>> m.close()
    """

    record: Record
    stored: bool

    @property
    def ref(self) -> str:
        return self.record.ref

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.note.v1", "ref": self.ref, "stored": self.stored, "record": self.record.to_dict()}


def add_note(store: NoteStore, text: str, *, kind: str | None = None, source: str | None = None,
             scope: str | None = None, ts: str | None = None, redact: bool = True, due: str | None = None) -> NoteResult:
    """Store ``text`` as one record (kind ``note`` unless given) and return it; the same note (text,
    ts, kind, source and scope) stored before is returned as it is, and nothing is written. With
    ``due``, the note is a plan (kind ``plan``) due then (docs/lifecycle.md)."""
    if not isinstance(text, str) or not text.strip():
        raise BadInput(f"bad note {text!r}: expected some text")
    if due is not None:
        if kind not in (None, "plan"):
            raise BadInput(f"bad kind {kind!r} with a due time: expected plan (or no kind)")
        kind = "plan"
        due = format_instant(parse_instant(due, now=now_us(), what="due"))
    line: dict[str, Any] = {k: v for k, v in (("text", text), ("ts", ts), ("kind", kind), ("source", source),
                                              ("scope", scope)) if v is not None}
    if due is not None:
        line["meta"] = {"due": due}
    parse_record(line, now=now_us(), redact_secrets=redact)  # bad input raises before anything is written
    report = ingest(store, [json.dumps(line, ensure_ascii=False).encode("utf-8", "surrogatepass")], redact=redact,
                    fmt="jsonl")
    if report.errors:
        raise BadInput(report.errors[0][1])
    if report.stored:
        rec_id, stored = int(report.stored[0].removeprefix("rec:")), True
    else:
        key = parse_record(line, now=now_us(), redact_secrets=redact).key
        rec_id, stored = store.record_ids_for_keys([key])[key], False
    record = store.record(rec_id)
    assert record is not None
    return NoteResult(record, stored)
