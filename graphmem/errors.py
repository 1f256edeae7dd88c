"""Every error graphmem raises on purpose, and the exit code the CLI gives it."""

from __future__ import annotations


class GraphmemError(Exception):
    """Base of graphmem's errors; the message is one line for the user."""

    exit_code = 2


class BadInput(GraphmemError, ValueError):
    """A value a user gave is not what was expected; nothing was written."""


class UnknownEntity(BadInput):
    """No entity has that ref, name or alias."""


class AmbiguousEntity(BadInput):
    """A name or alias matches several entities."""


class UnknownPredicate(BadInput):
    """The predicate is not in the registry."""


class TypeMismatch(BadInput):
    """A subject or object of a type the predicate does not allow."""


class BadTime(BadInput):
    """A date or time that cannot be parsed, or an impossible interval."""


class ConfigError(BadInput):
    """An ontology or predicate file is invalid; the message names file and entry."""


class ImportFailed(BadInput):
    """An import file has invalid lines (reported by line number)."""


class QueryRefused(BadInput):
    """A query given to run read-only would write, or reach files or settings outside the store."""


def check_int(value: object, name: str, lo: int, hi: int) -> int:
    """``value`` if it is a whole number from ``lo`` to ``hi``, else BadInput naming it."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise BadInput(f"bad {name} {value!r}: expected a whole number from {lo} to {hi}")
    return value


class StoreUnavailable(GraphmemError):
    """The store cannot be used: locked, of another version, or damaged."""

    exit_code = 3


class MissingExtra(GraphmemError, ImportError):
    """An optional feature needs a package that is not installed; the message names the extra to install."""


class StoreReadOnly(StoreUnavailable):
    """A write was attempted on a store opened read-only (``graphmem.open(path, read_only=True)``)."""
