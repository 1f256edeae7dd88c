"""A user's own read-only Cypher query (``graphmem cypher``, ``Memory.cypher``): the ``CypherReads`` role.

Kuzu decides what writes: the query runs inside ``BEGIN TRANSACTION READ ONLY``, where Kuzu refuses
every statement that would change the database (CREATE, MERGE, SET, DELETE, REMOVE, DROP, ALTER, COPY
FROM, INSTALL, LOAD EXTENSION, CREATE MACRO, a procedure that writes), and it is prepared first, which
refuses more than one statement (so no ``COMMIT; CREATE ...`` can leave the transaction). What a
read-only transaction still lets through reaches outside the database or ends the transaction, so it
is refused before Kuzu sees it, by the statement's words outside string literals and comments:
statements that are not queries (COPY ... TO, EXPORT and IMPORT DATABASE, ATTACH, DETACH, USE,
BEGIN, COMMIT, ROLLBACK, CHECKPOINT), LOAD FROM (reads any file) and ``CALL name = value`` (a setting).
"""

from __future__ import annotations

import contextlib
import re
import warnings
from typing import Any

from graphmem.errors import BadInput, QueryRefused
from graphmem.model.text import check_text
from graphmem.store.kuzu.schema import Schema

# how a query may start; anything else is a statement that is not a read (or not a query at all)
_READ_START = frozenset({"MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL"})
_PREFIX = frozenset({"EXPLAIN", "PROFILE"})
_WRITE_WORDS = frozenset({"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "INSTALL",
                          "UNINSTALL"})
_OTHER_WORDS = frozenset({"COPY", "LOAD", "ATTACH", "USE", "EXPORT", "IMPORT", "BEGIN", "COMMIT", "ROLLBACK",
                          "CHECKPOINT"})
_EXPECTED = "expected one read-only query (MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN or CALL of a read-only function)"
_TOKEN = re.compile(r"""
    (?P<skip>\s+|//[^\n]*|/\*.*?(?:\*/|\Z)|'(?:\\.|[^'\\])*(?:'|\Z)|"(?:\\.|[^"\\])*(?:"|\Z)|`[^`]*(?:`|\Z))
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


def words(query: str) -> list[str]:
    """The query's words and symbols, upper-cased, without string literals, quoted names and comments.

    >>> words("MATCH (t:Tool) WHERE t.name = 'CREATE' // DROP\\nRETURN t")
    ['MATCH', '(', 'T', ':', 'TOOL', ')', 'WHERE', 'T', '.', 'NAME', '=', 'RETURN', 'T']
    """
    return [m.group().upper() for m in _TOKEN.finditer(query) if m.lastgroup != "skip"]


def refusal(query: str) -> str | None:
    """Why the query is refused before Kuzu runs it (see the module docstring), or None."""
    toks = words(query)
    while toks and toks[0] in _PREFIX:
        toks = toks[1:]
    if not toks:
        return "an empty query"
    for i, t in enumerate(toks[:-1]):
        if t == "LOAD" and toks[i + 1] in ("FROM", "WITH") and (i == 0 or toks[i - 1] != "."):
            return "LOAD FROM, which reads files outside the store"
    first = toks[0]
    if first in _WRITE_WORDS:
        return f"a {first} statement, which would write"
    if first in _OTHER_WORDS:
        return f"a {first} statement, which reaches outside a read-only query"
    if first not in _READ_START:
        return f"a statement that starts with {first}"
    if first == "CALL" and len(toks) > 2 and toks[2] == "=":
        return "CALL of a setting, which changes the connection"
    return None


_SPECIAL_KEYS = {"_ID": "_id", "_LABEL": "_label", "_SRC": "_src", "_DST": "_dst", "_NODES": "_nodes", "_RELS": "_rels"}


def _kuzu_keys(value: Any) -> Any:
    """A value with the keys of its nodes, edges and paths as Kuzu spells them (``_label``, ``_id``, ...),
    so a query's output is the same on every engine."""
    if isinstance(value, dict):
        return {_SPECIAL_KEYS.get(k, k): _kuzu_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_kuzu_keys(v) for v in value]
    return value


class AdhocQueries(Schema):
    """Read-only queries a user writes: Kuzu's read-only transaction decides what writes."""

    def read_query(self, query: str) -> tuple[list[str], list[str], list[list[Any]]]:
        """Run one read-only query; its column names, Kuzu's column types and its rows.

        A query that would write, or reach files or settings outside the store, is QueryRefused;
        one Kuzu cannot parse or run is BadInput (both name the query and what was expected)."""
        check_text(query, "query")
        shown = " ".join(query.split())
        shown = repr(shown if len(shown) <= 80 else shown[:77] + "...")
        why = refusal(query)
        if why is not None:
            raise QueryRefused(f"refused query {shown}: it is {why}; {_EXPECTED}")
        if self._in_tx:
            raise BadInput("a query cannot run inside a write transaction: expected no write under way")
        if self._spent:  # the engine's budget for this open database is spent: nothing reaches it (_give_up)
            self._give_up()
        conn = self._conn
        conn.execute("BEGIN TRANSACTION READ ONLY")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                prepared = conn.prepare(query)
            if not prepared.is_success():
                raise RuntimeError(prepared.get_error_message())
            result = conn.execute(prepared)
            assert not isinstance(result, list)
            rows = result.get_all()
            if self.engine != "kuzu":  # LadybugDB spells the keys of nodes, edges and paths in capitals
                rows = [[_kuzu_keys(v) for v in row] for row in rows]
            return result.get_column_names(), result.get_column_data_types(), rows
        except RuntimeError as e:
            self._given_up_by(e)
            msg = str(e).splitlines()[0]
            if "read-only transaction" in msg or "auto transaction mode" in msg or "read-only database" in msg:
                raise QueryRefused(f"refused query {shown}: it would write to the store (Kuzu refuses it in a "
                                   f"read-only transaction); {_EXPECTED}") from None
            if "extension" in msg.lower() and "not defined" in msg:  # LadybugDB: the function needs an extension
                raise QueryRefused(f"refused query {shown}: it calls a function of an engine extension, which "
                                   f"graphmem never loads; {_EXPECTED}") from None
            if "multiple statements" in msg:
                raise QueryRefused(f"refused query {shown}: it holds more than one statement; {_EXPECTED}") from None
            raise BadInput(f"bad query {shown}: {msg}") from None
        finally:
            if not self._spent:
                with contextlib.suppress(RuntimeError):  # a failed statement has ended the transaction already
                    conn.execute("ROLLBACK")
