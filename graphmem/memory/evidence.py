"""Memory's evidence, export and lint: ingest, records, search, extraction (graphmem.evidence, graphmem.transfer)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from graphmem.documents import ExportDoc
from graphmem.errors import BadInput, check_int
from graphmem.evidence.hits import SearchResult
from graphmem.evidence.runs import check_extract_text, load_records, propose, store_note
from graphmem.memory.base import MemoryBase
from graphmem.model.progress import Progress, no_progress
from graphmem.model.scopes import scope_list
from graphmem.model.times import now_us, parse_instant
from graphmem.results import ExtractResult
from graphmem.write.inputs import parse_record_ref

if TYPE_CHECKING:

    from graphmem.evidence.extraction import Extractor
    from graphmem.evidence.ingest import IngestReport
    from graphmem.evidence.notes import NoteResult
    from graphmem.model.records import Record




class EvidenceFacade(MemoryBase):
    """Records: ingest, look up, search, extract; export."""

    def ingest(self, source: Any, *, redact: bool = True, extract: bool = False, format: str = "auto",
               progress: Progress = no_progress, scope: str | None = None,
               scopes: str | list[str] | None = None) -> IngestReport:
        """Store evidence records: record dicts of the JSONL format, JSON lines, a JSONL file, or a Markdown
        or text file.

        With ``extract``, also extract from the new records and apply it (the report's ``extraction``).

        Parameters
        ----------
        source : dict, str, bytes, Path, file, or iterable of dicts, str or bytes
            Records, each with at least ``text`` (docs/evidence.md): a dict is one record; a ``str``
            starting with ``{`` (or ``bytes``) is JSONL text, one record a line; any other ``str``, or a
            ``Path``, is a file's path: JSON lines, or Markdown (a record per section) or plain text (a
            record per paragraph), each citing its file and line; a stream or iterable gives one record
            (dict) or line a item.
        redact : bool, default True
            Mask secrets (keys, tokens, passwords) in the text before storing it.
        extract : bool, default False
            Run extraction on the new records and write what it proposes.
        format : {"auto", "jsonl", "markdown", "text"}, default "auto"
            How to read ``source``; auto: a path ending .md or .markdown is Markdown, .txt text,
            anything else JSON lines.
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``; the CLI draws a bar with it).
        scope : str, optional
            The scope of the records that carry none (docs/scopes.md).
        scopes : str or list of str, optional
            Only records of these scopes may be stored: another record (or an unscoped one) is a bad line.

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
        >>> r = m.ingest([{"text": "Atlas moved to Kuzu.", "ts": "2024-03-01", "kind": "note"}])
        >>> r.stored, r.errors
        (('rec:1',), ())
        >>> m.ingest('{"text": "Lunch at noon."}').stored
        ('rec:2',)
        >>> m.ingest({"text": "Atlas moved to Kuzu.", "ts": "2024-03-01", "kind": "note"}).duplicates
        1
        >>> m.close()
        """
        from graphmem.evidence.ingest import ingest
        report = ingest(self.store, source, redact=redact, fmt=format, progress=progress, scope=scope,
                        scopes=scope_list(scopes))
        if extract and report.stored:
            report = dataclasses.replace(report, extraction=self.extract_records(list(report.stored), apply=True,
                                                                                 progress=progress))
        return report

    def note(self, text: str, *, kind: str | None = None, source: str | None = None, scope: str | None = None,
             ts: str | None = None, redact: bool = True, due: str | None = None) -> NoteResult:
        """Store one evidence record from ``text`` (``graphmem note``), by ingest's rules.

        Parameters
        ----------
        text : str
            The note (cut at 16,000 characters with a marker, as ingest does).
        kind : str, optional
            Its kind (default ``note``): a short lower-case word.
        source, scope : str, optional
            Where it comes from; whose it is.
        ts : str, optional
            When it was written (default: now).
        redact : bool, default True
            Mask secrets before storing it.
        due : str, optional
            Makes the note a plan (kind ``plan``) due at this time (docs/lifecycle.md).

        Returns
        -------
        NoteResult
            The record; ``stored`` is False when the same note (text, ts, kind, source, scope)
            was already stored, and nothing was written.

        Raises
        ------
        BadInput
            Empty text, or a bad kind or ts.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> r = m.note("Atlas moved to Kuzu.", ts="2024-03-01")
        >>> r.ref, r.stored, m.note("Atlas moved to Kuzu.", ts="2024-03-01").stored
        ('rec:1', True, False)
        >>> m.close()
        """
        from graphmem.evidence.notes import add_note
        return add_note(self.store, text, kind=kind, source=source, scope=scope, ts=ts, redact=redact, due=due)

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

    def search(self, query: str, *, limit: int = 10, kind: str | list[str] | None = None,
               source: str | list[str] | None = None, since: str | None = None, until: str | None = None,
               about: str | list[str] | None = None, track: bool = True, include_archived: bool = False,
               scope: str | list[str] | None = None) -> SearchResult:
        """BM25-ranked records for the words of ``query`` (quotes and operators are taken as plain words),
        among the records the filters allow (each: one value or a list of alternatives; together: all).

        Parameters
        ----------
        query : str
            The words to look for.
        limit : int, default 10
            At most this many hits (1 to 1000).
        kind : str or list of str, optional
            Only records of this kind (or these kinds).
        source : str or list of str, optional
            Only records whose source is this, or begins with it and goes on after ``#``, ``/``,
            ``:`` or ``?`` (``file:notes.md`` finds ``file:notes.md#L12``).
        since, until : str, optional
            Only records whose time (``ts``) is at or after ``since`` and before ``until``.
        about : str or list of str, optional
            Only records that mention this entity (ref, name or alias): their MENTIONS edges,
            written by extraction.
        track : bool, default True
            Record that the records returned were found (docs/lifecycle.md; not on a read-only store).
        include_archived : bool, default False
            Search archived records too.
        scope : str or list of str, optional
            Only records of these scopes (unscoped records left out); BM25 ranks within them (docs/scopes.md).

        Returns
        -------
        SearchResult
            ``results`` are SearchHit values, best first (``ts`` a UTC datetime); ``filters`` the filter
            as given.

        Raises
        ------
        BadInput
            A bad ``limit``, query text, kind or time, or ``until`` not after ``since``.
        UnknownEntity
            ``about`` names no entity.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "Atlas moved from SQLite to Kuzu."}', b'{"text": "Lunch at noon."}'])
        >>> [(h.ref, h.snippet) for h in m.search("kuzu").results]
        [('rec:1', 'Atlas moved from SQLite to Kuzu.')]
        >>> m.search("kuzu", kind="doc").results
        ()
        >>> m.close()
        """
        check_int(limit, "limit", 1, 1000)
        from graphmem.evidence.search import record_filter, search
        where = record_filter(kind=kind, source=source, since=since, until=until, about=about, resolve=self.resolve,
                              include_archived=include_archived, scope=scope)
        r = search(self.store, query, limit=limit, where=where)
        if track and r.results:
            self._track("searched", [int(h.ref[4:]) for h in r.results], now_us())
        return r

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
        return self._extractors.get(self.store, self.ontology, self.registry)

    def extract_text(self, text: str, *, at: str | None = None, apply: bool = False) -> ExtractResult:
        """Proposals from free text; with ``apply``, the text is first stored as a record.

        Parameters
        ----------
        text : str
            At most ``EXTRACT_MAX_CHARS`` (100,000) characters.
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
        check_extract_text(text)
        if apply:
            return self.extract_records([store_note(self.store, text, at)], apply=True)
        when = parse_instant(at, what="at") if at else now_us()
        return ExtractResult((("text", self.extractor().extract(text, default_time=when)),), False, ())

    def extract_records(self, refs: list[str], *, apply: bool = False,
                        progress: Progress = no_progress) -> ExtractResult:
        """Proposals from stored records; with ``apply``, write mentions and assertions citing them.

        Parameters
        ----------
        refs : list of str
            Record refs, ``rec:N``.
        apply : bool, default False
            Write the mentions and proposed assertions.
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``).

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
        progress("loading the extractor", 0, None)
        extractor = self.extractor()
        items = propose(extractor, load_records(self.store, [parse_record_ref(r) for r in refs]), progress)
        if apply:
            progress("writing mentions and assertions", 0, None)
        written = self._writer.extractions(items) if apply else []
        return ExtractResult(tuple((rec.ref, ex) for rec, ex in items), apply, tuple(written))

    def extract_pending(self, *, apply: bool = False, limit: int | None = None,
                        progress: Progress = no_progress) -> ExtractResult:
        """Proposals from the records not extracted from yet (``limit``: the first that many).

        Parameters
        ----------
        apply : bool, default False
            Write the mentions and proposed assertions.
        limit : int, optional
            Only the first that many pending records.
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``).

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
        return self.extract_records([f"rec:{i}" for i in self.store.pending_record_ids(limit)], apply=apply,
                                    progress=progress)

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
