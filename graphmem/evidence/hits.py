"""The results of a search (``Memory.search``, ``graphmem search``): each ranked record a ``SearchHit``, the
ranking a ``SearchResult``."""

from __future__ import annotations

import datetime as _dt
import warnings
from dataclasses import dataclass, field
from typing import Any

import graphmem.notebook as nb
from graphmem.model.times import format_datetime
from graphmem.notebook import HtmlRepr


@dataclass(frozen=True)
class SearchHit:
    """A ranked record: what a search shows of it (``Memory.record(ref)`` has the rest).

    Attributes
    ----------
    ref : str
        ``rec:N``.
    score : float
        Its BM25 score for the query.
    snippet : str
        The text around the matched words.
    ts : datetime
        The record's time, UTC.
    kind, source, scope : str
        As ingested (source and scope may be None).
    importance : float
        From 0 to 1.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.ingest([{"text": "Atlas stores its graph in Kuzu.", "ts": "2024-03-01"}])
    >>> hit = m.search("graph").results[0]
    >>> hit.ref, hit.ts.date().isoformat(), hit.snippet
    ('rec:1', '2024-03-01', 'Atlas stores its graph in Kuzu.')
    >>> m.close()
    """

    ref: str
    score: float  # BM25
    snippet: str
    ts: _dt.datetime  # the record's time, UTC
    kind: str
    source: str | None
    scope: str | None
    importance: float

    def to_dict(self) -> dict[str, Any]:
        """The hit as an item of the ``graphmem.search.v1`` document.

        Returns
        -------
        dict
            Its fields, ``ts`` as ISO-8601 text and ``score`` rounded to 6 places.
        """
        return {"ref": self.ref, "score": round(self.score, 6), "snippet": self.snippet, "ts": format_datetime(self.ts),
                "kind": self.kind, "source": self.source, "scope": self.scope, "importance": self.importance}


@dataclass(frozen=True, repr=False)
class SearchResult(HtmlRepr):
    """Records ranked for ``query`` (``results``, SearchHit values, best first) and the ``terms`` looked up.

    Attributes
    ----------
    query : str
        The query as given.
    terms : tuple of str
        The terms looked up in the full-text index.
    filters : dict
        The records' filter as given (kind, source, since, until, about; docs/evidence.md); empty: none.
    results : tuple of SearchHit
        The records, best first.
    hits : tuple of SearchHit
        Deprecated name of ``results``.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.ingest([{"text": "Atlas stores its graph in Kuzu.", "ts": "2024-03-01"}])
    >>> r = m.search("graphs")
    >>> [h.ref for h in r.results], r.to_dict()["schema"]
    (['rec:1'], 'graphmem.search.v1')
    >>> m.close()
    """

    query: str
    terms: tuple[str, ...]
    results: tuple[SearchHit, ...]
    filters: dict[str, Any] = field(default_factory=dict)  # the filter as given (docs/evidence.md); empty: none

    @property
    def hits(self) -> tuple[SearchHit, ...]:
        """Deprecated: ``results``, the name the JSON document uses."""
        warnings.warn("SearchResult.hits is deprecated; use .results", DeprecationWarning, stacklevel=2)
        return self.results

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.search.v1", "query": self.query, "terms": list(self.terms),
                "filters": self.filters, "results": [h.to_dict() for h in self.results]}

    def _summary(self) -> str:
        return f"{self.query!r}: {nb.plural(len(self.results), 'record')}"

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return nb.rows_of(self.results, limit, lambda h: f"{h.ref} {h.score:.3f} {nb.day(h.ts)} {nb.clip(h.snippet, 80)}")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        cols = ["ref", "score", "ts", "kind", "source", "scope", "importance", "snippet"]
        return cols, [[getattr(h, c) for c in cols] for h in self.results]
