"""The store methods that hand out the stored forms (``StatementStore.decode_log``, ``ViewStore.view_text``,
...), so a caller reads and writes them through the store it holds, whatever its engine. Both engines keep
a subject's log in the form of ``codecs``; the view's form is ``codecs.view_text`` on PostgreSQL, and on
Kuzu that with its facet rows (``store/kuzu/views.py`` has its own ``view_text`` and ``same_view``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.model import Interval, Statement
from graphmem.store.common import codecs

if TYPE_CHECKING:
    from graphmem.ontology.schema import Registry


class LogForms:
    """The stored form of a subject's log (``codecs``), as static methods of the store, and the stored
    kind of a statement's object."""

    registry: Registry

    def _object_type(self, s: Statement) -> str | None:
        """What a statement's object is, as the statement tables keep it beside the object's text:
        ``entity``, a literal's type (``string`` unless the predicate names one), ``text`` for a cite's
        note (its object), None for no object."""
        if s.op == "cite":
            return "text" if s.object is not None else None
        if s.object_kind == "entity":
            return "entity"
        if s.object_kind == "literal":
            p = self.registry.predicates.get(s.predicate)
            return p.literal_type if p and p.literal_type else "string"
        return None

    @staticmethod
    def decode_log(subject: str, text: str, name_of: Any) -> tuple[list[Statement], str]:
        """``codecs.decode_log``: a log from ``subject_logs`` and its stored form."""
        return codecs.decode_log(subject, text, name_of)

    @staticmethod
    def statements_from_log(subject: str, text: str, name_of: Any) -> tuple[list[Statement], bool]:
        """``codecs.statements_from_log``: a log's statements and whether they came in id order."""
        return codecs.statements_from_log(subject, text, name_of)

    @staticmethod
    def log_text(log: list[Statement]) -> str:
        """``codecs.log_text``: a subject's log in its stored form."""
        return codecs.log_text(log)

    @staticmethod
    def unpack(stored: str | None) -> str:
        """``codecs.unpack``: the JSON text of a stored log."""
        return codecs.unpack(stored)


class ViewForms:
    """The stored form of a subject's view (``codecs``), as static methods of the store."""

    @staticmethod
    def view_text(view: list[Interval]) -> str:
        """``codecs.view_text``: a subject's intervals in their stored form."""
        return codecs.view_text(view)

    @staticmethod
    def same_view(stored: str | None, text: str) -> bool:
        """``codecs.same_view``: whether a stored view holds what ``text`` holds."""
        return codecs.same_view(stored, text)
