"""Scopes: the short names (a user, an agent, a project, a session) a statement or a record may carry,
and the rule a scope name follows (docs/scopes.md). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from graphmem.errors import BadInput

SCOPE_MAX = 64
_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/+#-]{0,63}$")
RULE = ("1 to 64 characters: letters, digits and _ . : @ / + # -, starting with a letter or digit "
        "(e.g. user:ana, agent-7, project:atlas)")


def check_scope(value: object, what: str = "scope") -> str:
    """``value`` when it is a scope name, else BadInput naming it and the rule.

    >>> check_scope("user:ana")
    'user:ana'
    >>> check_scope("no spaces")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    graphmem.errors.BadInput: bad scope 'no spaces': expected 1 to 64 characters...
    """
    if not isinstance(value, str) or not _SCOPE.match(value):
        shown = repr(value) if not isinstance(value, str) or len(value) <= 80 else repr(value[:80] + "...")
        raise BadInput(f"bad {what} {shown}: expected {RULE}")
    return value


def scope_list(value: str | Iterable[str] | None, what: str = "scope") -> tuple[str, ...] | None:
    """Scopes a read is limited to: None (every scope) when ``value`` is None, else the names checked,
    each once, in the order given (one name, or several; a comma-separated text is several).

    >>> scope_list(None) is None
    True
    >>> scope_list("user:ana,agent:7")
    ('user:ana', 'agent:7')
    """
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [x for v in value for x in
                                                              (v.split(",") if isinstance(v, str) else [v])]
    if not items:
        raise BadInput(f"bad {what} []: expected at least one scope name ({RULE})")
    return tuple(dict.fromkeys(check_scope(x.strip() if isinstance(x, str) else x, what) for x in items))


def one_scope(value: str | None, what: str = "scope") -> str | None:
    """The scope a write carries: None (unscoped) or one checked name.

    >>> one_scope("project:atlas"), one_scope(None)
    ('project:atlas', None)
    """
    return None if value is None else check_scope(value, what)


def in_scopes(scope: str | None, scopes: tuple[str, ...] | None) -> bool:
    """Whether something carrying ``scope`` is seen by a read limited to ``scopes`` (None: every scope;
    with scopes given, unscoped things are left out).

    >>> in_scopes(None, None), in_scopes(None, ("a",)), in_scopes("a", ("a", "b"))
    (True, False, True)
    """
    return scopes is None or (scope is not None and scope in scopes)
