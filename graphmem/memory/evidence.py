"""Memory's evidence, export and lint: ingest, records, search, extraction (graphmem.evidence, graphmem.transfer)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from graphmem.errors import BadInput, check_int
from graphmem.evidence.query import search_terms, snippet
from graphmem.memory.base import MemoryBase
from graphmem.model.text import check_text
from graphmem.model.times import now_us, parse_instant
from graphmem.results import (
    ExportDoc,
    ExtractResult,
    SearchHit,
    SearchResult,
)
from graphmem.write.inputs import parse_record_ref

if TYPE_CHECKING:

    from graphmem.evidence.extraction import Extractor
    from graphmem.evidence.ingest import IngestReport
    from graphmem.model.records import Record

EXTRACT_MAX_CHARS = 100_000  # text extracted from at once (spaCy's own limit is 1,000,000, and its memory grows with it)



class EvidenceFacade(MemoryBase):
    """Records: ingest, look up, search, extract; export."""

    def ingest(self, source: Any, *, redact: bool = True, extract: bool = False) -> IngestReport:
        """Store evidence records from JSONL lines (a path, a binary stream or byte lines).

        With ``extract``, also extract from the new records and apply it (the report's ``extraction``).

        Parameters
        ----------
        source : str, Path, binary file or iterable of bytes
            JSON lines, each a record with at least ``text``.
        redact : bool, default True
            Mask secrets (keys, tokens, passwords) in the text before storing it.
        extract : bool, default False
            Run extraction on the new records and write what it proposes.

        Returns
        -------
        IngestReport
            The refs stored, duplicates skipped and invalid lines.

        Raises
        ------
        BadInput
            The file cannot be read.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> r = m.ingest([b'{"text": "Atlas moved to Kuzu.", "ts": "2024-03-01", "kind": "note"}'])
        >>> r.stored, r.errors
        (('rec:1',), ())
        >>> m.close()
        """
        from graphmem.evidence.ingest import ingest
        report = ingest(self.store, source, redact=redact)
        if extract and report.stored:
            report = dataclasses.replace(report, extraction=self.extract_records(list(report.stored), apply=True))
        return report

    def record(self, ref: str) -> Record:
        """A stored evidence record by its ``rec:N`` ref.

        Parameters
        ----------
        ref : str
            ``rec:N``.

        Returns
        -------
        Record

        Raises
        ------
        BadInput
            A bad ref, or no record has it.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "Atlas moved to Kuzu.", "ts": "2024-03-01"}'])
        >>> m.record("rec:1").text
        'Atlas moved to Kuzu.'
        >>> m.close()
        """
        rec: Record | None = self.store.record(parse_record_ref(ref))
        if rec is None:
            raise BadInput(f"unknown record {ref!r}: no record has that ref")
        return rec

    def search(self, query: str, *, limit: int = 10) -> SearchResult:
        """BM25-ranked records for the words of ``query`` (quotes and operators are taken as plain words).

        Parameters
        ----------
        query : str
            The words to look for.
        limit : int, default 10
            At most this many hits (1 to 1000).

        Returns
        -------
        SearchResult
            ``hits`` are SearchHit values, best first.

        Raises
        ------
        BadInput
            A bad ``limit`` or query text.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "Atlas moved from SQLite to Kuzu."}', b'{"text": "Lunch at noon."}'])
        >>> [(h.ref, h.snippet) for h in m.search("kuzu").hits]
        [('rec:1', 'Atlas moved from SQLite to Kuzu.')]
        >>> m.close()
        """
        check_int(limit, "limit", 1, 1000)
        from graphmem.model.textindex import query_terms
        terms = search_terms(check_text(query, "query"))
        hits = self.store.search_records(query_terms(terms), limit)
        return SearchResult(query, tuple(terms), tuple(
            SearchHit(f"rec:{i}", score, snippet(text, terms), ts, kind, src, scope, imp)
            for i, score, text, ts, kind, src, scope, imp in hits))

    def extractor(self) -> Extractor:
        """The spaCy extractor for this store, built on first use and after entities change.

        Returns
        -------
        Extractor

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> m.extractor() is m.extractor()
        True
        >>> m.close()
        """
        from graphmem.evidence.extraction import Extractor
        count = self.store.entity_count()
        if self._extractor is None or self._extractor_entities != count:
            self._extractor = Extractor(self.ontology, self.registry, list(self.store.all_entities()))
            self._extractor_entities = count
        extractor: Extractor = self._extractor
        return extractor

    def extract_text(self, text: str, *, at: str | None = None, apply: bool = False) -> ExtractResult:
        """Proposals from free text; with ``apply``, the text is first stored as a record.

        Parameters
        ----------
        text : str
            At most ``EXTRACT_MAX_CHARS`` characters.
        at : str, optional
            The time the text speaks of (default: now); proposals start then.
        apply : bool, default False
            Store the text as a record and write the proposals, citing it.

        Returns
        -------
        ExtractResult

        Raises
        ------
        BadInput
            Empty or too long text.
        BadTime
            ``at`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> (_, ex), = m.extract_text("Atlas uses Kuzu.", at="2024-03-01").items
        >>> [(p.subject, p.predicate, p.object) for p in ex.assertions]
        [('project:atlas', 'uses', 'tool:kuzu')]
        >>> m.extract_text("Atlas uses Kuzu.", at="2024-03-01", apply=True).written
        ('fact:1',)
        >>> m.close()
        """
        if not isinstance(text, str) or not text.strip():
            raise BadInput("empty text: expected something to extract from")
        check_text(text, "text")
        if len(text) > EXTRACT_MAX_CHARS:
            raise BadInput(f"text of {len(text):,} characters is too long to extract from: expected at most "
                           f"{EXTRACT_MAX_CHARS:,} (ingest it as records, which are bounded, then extract --pending)")
        if apply:
            report = self.ingest([__import__("json").dumps({"text": text, "ts": at, "kind": "note"}).encode()])
            if report.errors:
                raise BadInput(report.errors[0][1])
            ref = report.stored[0] if report.stored else None
            if ref is None:  # the same text was stored before: extract from that record
                from graphmem.evidence.records import parse_record
                key = parse_record({"text": text, "ts": at, "kind": "note"}, now=now_us()).key
                ref = f"rec:{self.store.record_ids_for_keys([key])[key]}"
            return self.extract_records([ref], apply=True)
        when = parse_instant(at, what="at") if at else now_us()
        ex = self.extractor().extract(text, default_time=when)
        return ExtractResult((("text", ex),), False, ())

    def extract_records(self, refs: list[str], *, apply: bool = False) -> ExtractResult:
        """Proposals from stored records; with ``apply``, write mentions and assertions citing them.

        Parameters
        ----------
        refs : list of str
            Record refs, ``rec:N``.
        apply : bool, default False
            Write the mentions and proposed assertions.

        Returns
        -------
        ExtractResult

        Raises
        ------
        BadInput
            A bad ref, or no record has it.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> _ = m.ingest([b'{"text": "Atlas uses Kuzu.", "ts": "2024-03-01"}'])
        >>> r = m.extract_records(["rec:1"], apply=True)
        >>> r.written, m.why("fact:1").statement.sources
        (('fact:1',), ('rec:1',))
        >>> m.close()
        """
        ids = [parse_record_ref(r) for r in refs]
        batch = self.store.records_between(min(ids), max(ids)) if len(ids) > 20 else {}
        recs = [batch[i] if i in batch else self.record(f"rec:{i}") for i in ids]
        extractor = self.extractor()
        items = [(rec, extractor.extract(rec.text, default_time=rec.ts, evidence=rec.ref)) for rec in recs]
        written = self._writer.extractions(items) if apply else []
        return ExtractResult(tuple((rec.ref, ex) for rec, ex in items), apply, tuple(written))

    def extract_pending(self, *, apply: bool = False, limit: int | None = None) -> ExtractResult:
        """Proposals from the records not extracted from yet (``limit``: the first that many).

        Parameters
        ----------
        apply : bool, default False
            Write the mentions and proposed assertions.
        limit : int, optional
            Only the first that many pending records.

        Returns
        -------
        ExtractResult

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> _ = m.ingest([b'{"text": "Atlas uses Kuzu.", "ts": "2024-03-01"}'])
        >>> [ref for ref, _ in m.extract_pending(apply=True).items]
        ['rec:1']
        >>> m.extract_pending().items
        ()
        >>> m.close()
        """
        return self.extract_records([f"rec:{i}" for i in self.store.pending_record_ids(limit)], apply=apply)

    def export_doc(self, fmt: str = "jsonl", as_of: str | None = None) -> ExportDoc:
        """The document of ``graphmem export``: ``export``'s text with its format and ``as_of``.

        Parameters
        ----------
        fmt : {"jsonl", "graphml"}, default "jsonl"
            As for ``export``.
        as_of : str, optional
            As for ``export`` (graphml only).

        Returns
        -------
        ExportDoc

        Raises
        ------
        BadInput
            An unknown format, or ``as_of`` with jsonl.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> doc = m.export_doc()
        >>> doc.format, len(doc.text.splitlines())
        ('jsonl', 1)
        >>> m.close()
        """
        return ExportDoc(fmt, as_of, self.export(fmt, as_of))


    def export(self, fmt: str = "jsonl", as_of: str | None = None) -> str:
        """The store as text: the whole history as JSONL (which ``import_jsonl`` reads), or the graph at ``as_of`` as GraphML.

        Parameters
        ----------
        fmt : {"jsonl", "graphml"}, default "jsonl"
            The format.
        as_of : str, optional
            The time of the graph (graphml only; default: now).

        Returns
        -------
        str

        Raises
        ------
        BadInput
            An unknown format, or ``as_of`` with jsonl.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> print(m.export(), end="")
        {"op": "entity", "type": "Tool", "name": "Kuzu", "aliases": [], "description": ""}
        >>> m.close()
        """
        from graphmem.transfer.export import export
        return export(self.store, fmt, as_of)
