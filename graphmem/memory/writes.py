"""Memory's writes: assert, end, retract, import (graphmem.write)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphmem.bulk import gc_paused
from graphmem.memory.base import MemoryBase
from graphmem.model.progress import Progress, no_progress
from graphmem.model.scopes import scope_list
from graphmem.reports import ImportReport
from graphmem.results import WriteResult


class WriteFacade(MemoryBase):
    """assert, end, retract and import, through ``graphmem.write``."""

    def assert_(self, subject: str, predicate: str, obj: Any, *, valid_from: str | None = None,
                valid_to: str | None = None, sources: Iterable[str] = (), by: str = "operator",
                recorded_at: str | None = None, scope: str | None = None) -> WriteResult:
        """Record that ``subject predicate obj`` holds from ``valid_from`` (default: now).

        Parameters
        ----------
        subject : str
            The subject entity: a ref, name or alias.
        predicate : str
            A predicate of the registry (``status``, ``uses``, ...).
        obj : Any
            An entity (ref, name or alias) or a literal, as the predicate expects.
        valid_from, valid_to : str, optional
            When it starts and stops holding (ISO-8601 dates or datetimes); open-ended without ``valid_to``.
        sources : iterable of str, optional
            Record refs (``rec:N``) or URIs it is based on.
        by : str, default "operator"
            Who asserts it; with ``sources``, it sets the statement's trust.
        recorded_at : str, optional
            When it became known (default: now; not in the future).
        scope : str, optional
            The scope it belongs to (a user, an agent, a project, a session; docs/scopes.md); default unscoped.

        Returns
        -------
        WriteResult
            ``refs`` holds the new statement's ref (``fact:N``).

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            The predicate is not in the registry.
        TypeMismatch
            The subject or object is of a type the predicate does not allow.
        BadTime
            A time cannot be parsed, or the interval is impossible.
        BadInput
            Any other bad value (a literal, a source, the asserter); nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas")
        >>> w = m.assert_("Atlas", "status", "active", valid_from="2024-01-01")
        >>> w.action, w.refs
        ('assert', ('fact:1',))
        >>> m.assert_("Atlas", "status", "sleeping")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        graphmem.errors.BadInput: ...
        >>> m.close()
        """
        return self._writer.assert_(subject, predicate, obj, valid_from=valid_from, valid_to=valid_to,
                                    sources=sources, by=by, recorded_at=recorded_at, scope=scope)

    def end(self, subject: str, predicate: str, obj: Any = None, *, at: str, sources: Iterable[str] = (),
            by: str = "operator", scope: str | None = None) -> WriteResult:
        """Close, at ``at``, what holds for (subject, predicate) or (subject, predicate, object).

        Parameters
        ----------
        subject : str
            The subject entity: a ref, name or alias.
        predicate : str
            A predicate of the registry.
        obj : Any, optional
            The object whose interval ends (default: whatever holds for the predicate).
        at : str
            When it stops holding (ISO-8601).
        sources : iterable of str, optional
            Record refs or URIs the end is based on.
        by : str, default "operator"
            Who records the end.
        scope : str, optional
            The end's scope: it closes what holds in that scope (docs/scopes.md); default unscoped.

        Returns
        -------
        WriteResult
            ``refs`` holds the end statement's ref; ``detail["closed"]`` the intervals it closed.

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            The predicate is not in the registry.
        BadTime
            ``at`` cannot be parsed.
        BadInput
            Nothing holds at ``at`` to be ended, or another bad value.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> w = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
        >>> w.refs, [c["valid_from"] for c in w.detail["closed"]]
        (('fact:2',), ['2024-02-01T00:00:00Z'])
        >>> m.current("Atlas", as_of="2024-07-01").facts
        ()
        >>> m.close()
        """
        return self._writer.end(subject, predicate, obj, at=at, sources=sources, by=by, scope=scope)

    def retract(self, fact: str, reason: str | None = None, *, scope: str | Iterable[str] | None = None) -> WriteResult:
        """Withdraw a statement from now on; it stays in the history.

        Parameters
        ----------
        fact : str
            The statement's ref, ``fact:N``.
        reason : str, optional
            Why it is withdrawn (kept with it).
        scope : str or iterable of str, optional
            Only a statement of these scopes may be retracted (another is an unknown fact).

        Returns
        -------
        WriteResult

        Raises
        ------
        BadInput
            A bad or unknown ref, or a statement already retracted.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> m.retract("fact:1", reason="entered by mistake").detail["reason"]
        'entered by mistake'
        >>> m.current("Atlas").facts
        ()
        >>> m.why("fact:1").statement.retract_reason
        'entered by mistake'
        >>> m.close()
        """
        return self._writer.retract(fact, reason, scope_list(scope))

    def cite(self, fact: str, sources: Iterable[str], note: str | None = None, *, by: str = "operator",
             scope: str | Iterable[str] | None = None) -> WriteResult:
        """Attach evidence to what an assertion already says, as a statement of its own (a cite).

        The assertion is not changed: from the cite's record time on, the fact view's intervals of the
        assertion list the new sources after its own; ``why`` shows each source with when it was
        attached. Retracting the cite withdraws them again (docs/semantics.md, "Cites").

        Parameters
        ----------
        fact : str
            The assertion's ref, ``fact:N``.
        sources : iterable of str
            Record refs (``rec:N``) or URIs, at least one, none of them attached to it already.
        note : str, optional
            Why the sources support it (kept with the cite).
        by : str, default "operator"
            Who attaches them.
        scope : str or iterable of str, optional
            The assertion must be of one of these scopes (another is an unknown fact); a cite always
            carries its assertion's scope.

        Returns
        -------
        WriteResult
            ``refs`` holds the cite's own ref; ``detail["sources"]`` every source the assertion now has.

        Raises
        ------
        BadInput
            A bad or unknown ref, an ``end`` or a cite, a retracted assertion, no source, a bad or
            unknown source, or one it has already; nothing was written.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas")
        >>> m.assert_("Atlas", "status", "active", valid_from="2024-01-01").refs
        ('fact:1',)
        >>> w = m.cite("fact:1", ["https://example.org/minutes"], note="kick-off minutes")
        >>> w.refs, w.detail["sources"]
        (('fact:2',), ['https://example.org/minutes'])
        >>> m.current("Atlas").facts[0].sources
        ('https://example.org/minutes',)
        >>> m.close()
        """
        return self._writer.cite(fact, sources, note, by, scope_list(scope))

    @contextmanager
    def write_group(self) -> Iterator[WriteGroup]:
        """Several writes as one transaction, committed once at the end (or, on an error, none of them).

        The service commits concurrent writes this way (docs/service.md, "Group commit"). Inside,
        ``assert_`` checks its statement when called (bad input is raised then, and nothing of it is
        written) and the group applies the asserts together before the commit, or before an ``end``,
        ``retract`` or ``cite``, which read what they change. Meant for ``assert_``, ``end``,
        ``retract``, ``cite`` and ``note``; entity changes, imports and ingests commit on their own.
        Each statement keeps its own record time, increasing in the order of the calls.

        Returns
        -------
        WriteGroup
            ``flush()`` applies the asserts checked so far; ``writes_done()`` counts the store's writing
            queries, so a caller can tell a write refused before it wrote (the group goes on) from one
            that failed part-way (the whole group must be rolled back).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas")
        >>> with m.write_group():
        ...     a = m.assert_("Atlas", "status", "active", valid_from="2024-01-01")
        ...     b = m.assert_("Atlas", "status", "paused", valid_from="2024-03-01")
        >>> a.refs + b.refs
        ('fact:1', 'fact:2')
        >>> [f.object for f in m.current("Atlas", as_of="2024-04-01").facts]
        ['paused']
        >>> m.close()
        """
        try:
            with self.store.transaction(), self._writer.grouped():
                yield WriteGroup(self._writer.flush, self.store.writes_done)
        except BaseException:
            self._writer.forget()  # rolled back: what the group read or wrote is not the store's
            raise
        self._writer.committed()

    def import_jsonl(self, source: str | Path | Iterable[str], *, strict: bool = False,
                     progress: Progress = no_progress, scope: str | None = None) -> ImportReport:
        """Entities, records and statements from JSONL lines (SPEC 5), each line checked before any is written.

        Parameters
        ----------
        source : str, Path or iterable of str
            A file of JSON lines, or the lines themselves.
        strict : bool, default False
            Write nothing when any line is invalid (else the valid lines are written).
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``; the CLI draws a bar with it).
        scope : str, optional
            The scope of the statement lines that carry none (record lines keep their own; docs/scopes.md).

        Returns
        -------
        ImportReport
            Counts, the first and last new facts, and the invalid lines by number.

        Raises
        ------
        BadInput
            The file cannot be read.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> lines = ['{"op": "entity", "type": "Tool", "name": "Kuzu"}',
        ...          '{"op": "entity", "type": "Project", "name": "Atlas"}',
        ...          '{"op": "assert", "subject": "Atlas", "predicate": "uses", "object": "Kuzu"}']
        >>> r = m.import_jsonl(lines)
        >>> r.entities_created, r.statements, r.errors
        (2, 1, ())
        >>> m.close()
        """
        from graphmem.transfer.importer import import_lines
        self._lexicon = None  # an import may add aliases and descriptions
        with gc_paused():
            return import_lines(self.store, self._checks, source, strict=strict, progress=progress, scope=scope)


class WriteGroup:
    """What ``Memory.write_group`` hands its caller: the group's ``flush`` and the store's write count."""

    def __init__(self, flush: Callable[[], None], writes_done: Callable[[], int]) -> None:
        self.flush, self.writes_done = flush, writes_done
