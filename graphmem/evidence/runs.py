"""Extraction runs: which extractor, which records, and the checks on free text (SPEC 7).

``Extractor`` (extraction.py) turns one text into proposals; this module feeds it. It keeps one
extractor per store, built again when the entities change; loads the records a run names; and
stores free text as a note record so that what is written from it can cite it. Writing the
proposals is the write path's (``write/apply.py``); the facade only joins the two.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from graphmem.errors import BadInput
from graphmem.model.progress import Progress, counted, no_progress
from graphmem.model.text import check_text
from graphmem.model.times import now_us

if TYPE_CHECKING:
    from graphmem.evidence.extraction import Extraction, Extractor
    from graphmem.evidence.ingest import RecordStore
    from graphmem.model import Entity
    from graphmem.model.records import Record
    from graphmem.ontology.schema import Ontology, Registry

EXTRACT_MAX_CHARS = 100_000  # text extracted from at once (spaCy's own limit is 1,000,000, and its memory grows with it)
BATCH_FROM = 20  # runs naming more records than this read them in one range


class ExtractionStore(Protocol):
    """The store methods an extraction run reads: the entities the extractor matches, the records."""

    def entity_count(self) -> int: ...

    def all_entities(self) -> Iterable[Entity]: ...

    def record(self, id_: int) -> Record | None: ...

    def records_between(self, first: int, last: int) -> dict[int, Record]: ...


class ExtractorCache:
    """One extractor per store, made on first use and again when the number of entities changes
    (its phrase matchers are built from the entities' names and aliases)."""

    def __init__(self) -> None:
        self._extractor: Extractor | None = None
        self._entities = -1

    def get(self, store: ExtractionStore, ontology: Ontology, registry: Registry) -> Extractor:
        from graphmem.evidence.extraction import Extractor
        count = store.entity_count()
        if self._extractor is None or self._entities != count:
            self._extractor = Extractor(ontology, registry, list(store.all_entities()))
            self._entities = count
        return self._extractor


def check_extract_text(text: Any) -> str:
    """Free text to extract from: a non-empty string of at most ``EXTRACT_MAX_CHARS`` characters."""
    if not isinstance(text, str) or not text.strip():
        raise BadInput("empty text: expected something to extract from")
    check_text(text, "text")
    if len(text) > EXTRACT_MAX_CHARS:
        raise BadInput(f"text of {len(text):,} characters is too long to extract from: expected at most "
                       f"{EXTRACT_MAX_CHARS:,} (ingest it as records, which are bounded, then extract --pending)")
    return text


def store_note(store: RecordStore, text: str, at: str | None) -> str:
    """Store ``text`` as a note record at ``at`` and give its ref; the same text stored before
    (ingest is idempotent) gives the ref of that record."""
    from graphmem.evidence.ingest import ingest  # not at start-up: the read commands never ingest
    from graphmem.evidence.records import parse_record
    line = {"text": text, "ts": at, "kind": "note"}
    report = ingest(store, [json.dumps(line).encode()])
    if report.errors:
        raise BadInput(report.errors[0][1])
    if report.stored:
        return report.stored[0]
    key = parse_record(line, now=now_us()).key
    return f"rec:{store.record_ids_for_keys([key])[key]}"


def load_records(store: ExtractionStore, ids: list[int]) -> list[Record]:
    """The records with these ids, in that order; an id no record has is bad input."""
    batch = store.records_between(min(ids), max(ids)) if len(ids) > BATCH_FROM else {}
    out = []
    for i in ids:
        rec = batch.get(i) or store.record(i)
        if rec is None:
            raise BadInput(f"unknown record 'rec:{i}': no record has that ref")
        out.append(rec)
    return out


def propose(extractor: Extractor, records: list[Record], progress: Progress = no_progress
            ) -> list[tuple[Record, Extraction]]:
    """What the extractor proposes from each record, dated by the record and citing it. A record of
    kind ``plan`` states intended work, never a fact: its mentions are kept, its assertions and ends
    are not (docs/lifecycle.md)."""
    out = []
    for rec in counted(records, "extracting from records", progress):
        ex = extractor.extract(rec.text, default_time=rec.ts_us, evidence=rec.ref)
        if rec.kind == "plan" and (ex.assertions or ex.ends):
            ex = dataclasses.replace(ex, assertions=(), ends=(), skipped=ex.skipped + tuple(
                {"text": rec.text[:200], "reason": "plan", "would_propose": [p.key()]} for p in ex.assertions + ex.ends))
        out.append((rec, ex))
    return out
