"""Memory's ad-hoc queries: a user's own read-only Cypher (``graphmem.view.adhoc``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphmem.memory.base import MemoryBase

if TYPE_CHECKING:
    from graphmem.view.adhoc import CypherResult


class QueryFacade(MemoryBase):
    """A user's own read-only queries of the store."""

    def cypher(self, query: str) -> CypherResult:
        """Run one read-only Cypher query of your own (Kuzu's dialect) on the store (``graphmem cypher``).

        The engine runs it in a read-only transaction: a query that would write, or reach files or
        settings outside the store, is refused and nothing changes.

        Parameters
        ----------
        query : str
            One query: MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN or CALL of a read-only function.

        Returns
        -------
        CypherResult
            ``columns``, ``types`` and ``rows``, each value JSON-safe.

        Raises
        ------
        QueryRefused
            The query would write (CREATE, MERGE, SET, DELETE, ...), holds several statements, or reads
            files (LOAD FROM) or changes settings.
        BadInput
            The engine cannot parse or run it.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> r = m.cypher("RETURN 1 + 1 AS two, 'x' AS s")
        >>> r.columns, r.rows
        (('two', 's'), ((2, 'x'),))
        >>> m.close()
        """
        from graphmem.view.adhoc import run_query  # loaded on first use, like the retrieval parts
        return run_query(self.store, query)
