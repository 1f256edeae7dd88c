"""A user's own read-only query over the store (``graphmem cypher``): run by an engine that has the
``CypherReads`` role, its values made JSON-safe, as ``graphmem.cypher.v1``."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import uuid
from dataclasses import dataclass
from typing import Any

from graphmem.errors import BadInput
from graphmem.model.times import format_instant, from_datetime
from graphmem.notebook import HtmlRepr
from graphmem.store import CypherReads


def json_value(v: Any) -> Any:
    """A value of a query's row as JSON can carry it: times in ISO-8601 (UTC, as graphmem writes
    them), a duration in seconds, decimals and UUIDs as text, bytes in base64, nodes, edges, maps and
    lists with their parts converted."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else str(v)
    if isinstance(v, _dt.datetime):
        return format_instant(from_datetime(v if v.tzinfo else v.replace(tzinfo=_dt.UTC)))
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (decimal.Decimal, uuid.UUID)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [json_value(x) for x in v]
    return str(v)


@dataclass(frozen=True)
class CypherResult(HtmlRepr):
    """The rows of a read-only query: ``columns`` (names), ``types`` (the engine's names of their types)
    and ``rows``, each value JSON-safe (``json_value``).

    Attributes
    ----------
    query : str
        The query as given (``Memory.cypher``, ``graphmem cypher``).
    columns, types : tuple of str
        The columns' names and the engine's names of their types.
    rows : tuple of tuple
        Each row's values.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> r = m.cypher("RETURN 1 + 1 AS two")
    >>> r.columns, r.types, r.rows, r.to_dict()["count"]
    (('two',), ('INT64',), ((2,),), 1)
    >>> m.close()
    """

    query: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.cypher.v1", "query": self.query, "columns": list(self.columns),
                "types": list(self.types), "count": len(self.rows), "rows": [list(r) for r in self.rows]}


def run_query(store: object, query: str) -> CypherResult:
    """Run ``query`` read-only on ``store``: every row it returns."""
    if not isinstance(query, str) or not query.strip():
        raise BadInput(f"bad query {query!r}: expected a Cypher query such as 'RETURN 1'")
    if not isinstance(store, CypherReads):
        raise BadInput(f"this store's engine ({type(store).__name__}) does not run Cypher queries: expected a "
                       "Kuzu store")
    columns, types, rows = store.read_query(query)
    return CypherResult(query, tuple(columns), tuple(str(t) for t in types),
                        tuple(tuple(json_value(v) for v in r) for r in rows))
