"""Every error graphmem raises on purpose, and the exit code the CLI gives it."""

from __future__ import annotations


class GraphmemError(Exception):
    """Base of graphmem's errors; the message is one line for the user.

    Catch it to handle every error graphmem raises on purpose; the CLI prints the message on stderr and
    exits with ``exit_code``.

    Attributes
    ----------
    exit_code : int
        The CLI's exit code: 2 for bad input (the default), 3 for a store that cannot be used.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> try:
    ...     m.current("nobody")
    ... except graphmem.GraphmemError as e:
    ...     print(type(e).__name__, e.exit_code)
    UnknownEntity 2
    >>> m.close()
    """

    exit_code = 2


class BadInput(GraphmemError, ValueError):
    """A value a user gave is not what was expected; nothing was written (exit code 2).

    The base of the input errors below, and raised itself for a bad value of a literal predicate, a bad
    option or an unreadable file. Also a ValueError.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas")
    >>> m.assert_("Atlas", "status", "sleeping")
    Traceback (most recent call last):
    graphmem.errors.BadInput: bad value 'sleeping' for 'status': expected one of idea, planned, active, paused, blocked, done, archived
    >>> m.close()
    """


class UnknownEntity(BadInput):
    """No entity has that ref, name or alias (exit code 2).

    Raised by every method that takes a subject, an entity object or an entity.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> m.current("nobody")
    Traceback (most recent call last):
    graphmem.errors.UnknownEntity: unknown subject 'nobody'; expected an existing entity ref, name or alias
    >>> m.close()
    """


class AmbiguousEntity(BadInput):
    """A name or alias matches several entities (exit code 2); the message lists their refs.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Person", "Ann Kay", aliases=["ann"]), m.add_entity("Person", "Ann Roe", aliases=["ann"])
    >>> m.current("ann")
    Traceback (most recent call last):
    graphmem.errors.AmbiguousEntity: subject 'ann' is ambiguous; candidates: person:ann-kay, person:ann-roe
    >>> m.close()
    """


class UnknownPredicate(BadInput):
    """The predicate is not in the registry (exit code 2); the message lists the known ones.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas")
    >>> m.assert_("Atlas", "flavor", "sweet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.UnknownPredicate: unknown predicate 'flavor'; known: blocked_by, deadline, ...
    >>> m.close()
    """


class TypeMismatch(BadInput):
    """A subject or object of a type the predicate does not allow (exit code 2).

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> m.assert_("Kuzu", "uses", "Atlas")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.TypeMismatch: object 'project:atlas' is a Project; predicate 'uses' expects an entity of type Tool ...
    >>> m.close()
    """


class BadTime(BadInput):
    """A date or time that cannot be parsed, or an impossible interval (exit code 2).

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas")
    >>> m.current("Atlas", as_of="last week")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.BadTime: bad as_of 'last week': expected an ISO-8601 date (2025-06-01), ...
    >>> m.close()
    """


class ConfigError(BadInput):
    """An ontology or predicate file is invalid; the message names file and entry (exit code 2).

    Raised when a store is opened with its ontology and predicate folders.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> graphmem.open(tempfile.mkdtemp(), ontology_dirs=["/no/such/folder"])
    Traceback (most recent call last):
    graphmem.errors.ConfigError: ontology directory '/no/such/folder' does not exist
    """


class ImportFailed(BadInput):
    """An import file has invalid lines, reported by line number (exit code 2).

    ``Memory.import_jsonl`` reports invalid lines in ``ImportReport.errors`` rather than raising; this
    class stays public for code that catches it.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import graphmem
    >>> issubclass(graphmem.ImportFailed, graphmem.BadInput), graphmem.ImportFailed.exit_code
    (True, 2)
    """


class QueryRefused(BadInput):
    """A query given to run read-only would write, or reach files or settings outside the store (exit code 2).

    Raised by ``Memory.cypher`` (``graphmem cypher``) before the query runs.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> m.cypher("DROP TABLE Note")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.QueryRefused: refused query 'DROP TABLE Note': it is a DROP statement, which would write; ...
    >>> m.close()
    """


def check_int(value: object, name: str, lo: int, hi: int) -> int:
    """``value`` if it is a whole number from ``lo`` to ``hi``, else BadInput naming it."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise BadInput(f"bad {name} {value!r}: expected a whole number from {lo} to {hi}")
    return value


class StoreUnavailable(GraphmemError):
    """The store cannot be used: locked, of another version, or damaged (exit code 3).

    Raised by ``graphmem.open`` (and ``graphmem.migrate``); the message names the store and, for a lock,
    the process holding it.

    Attributes
    ----------
    exit_code : int
        3.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> try:
    ...     graphmem.open(tempfile.mkdtemp(), create=False)
    ... except graphmem.StoreUnavailable as e:
    ...     print(e.exit_code, str(e).startswith("no store at"))
    3 True
    """

    exit_code = 3


class MissingExtra(GraphmemError, ImportError):
    """An optional feature needs a package that is not installed; the message names the extra to install.

    Raised by ``to_frame`` and ``plot`` without pandas or matplotlib (``graphmem[notebook]``). Exit code
    2; also an ImportError.

    Attributes
    ----------
    exit_code : int
        2.

    Examples
    --------
    >>> import graphmem
    >>> issubclass(graphmem.MissingExtra, ImportError), graphmem.MissingExtra.exit_code
    (True, 2)
    """


class StoreReadOnly(StoreUnavailable):
    """A write was attempted on a store opened read-only (``graphmem.open(path, read_only=True)``).

    Exit code 3, as every StoreUnavailable; nothing was written.

    Examples
    --------
    >>> import graphmem
    >>> issubclass(graphmem.errors.StoreReadOnly, graphmem.StoreUnavailable)
    True
    """
