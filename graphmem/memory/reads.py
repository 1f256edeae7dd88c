"""Memory's reads and the view: current, timeline, facts, why, rebuild (graphmem.view)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from graphmem.bulk import gc_paused
from graphmem.evidence.lifecycle import with_plans
from graphmem.memory.base import MemoryBase
from graphmem.model import Interval, Statement
from graphmem.model.progress import Progress, no_progress
from graphmem.reports import LintReport, MigrateReport, RebuildReport
from graphmem.results import CurrentResult, FactsResult, TimelineResult, WhyResult
from graphmem.store import ViewBatch
from graphmem.view import rebuild as view_rebuild

R = TypeVar("R")


class ReadFacade(MemoryBase):
    """What holds and held (``graphmem.view.reads``), rebuild and lint."""

    def current(self, subject: str, *, as_of: str | None = None, known_at: str | None = None,
                predicate: str | None = None, scope: str | Iterable[str] | None = None) -> CurrentResult:
        """What holds for ``subject`` at ``as_of`` as known at ``known_at``.

        Each defaults to now (SPEC 4: given only ``known_at``, the answer is what we believed then about now).

        Parameters
        ----------
        subject : str
            A ref, name or alias.
        as_of : str, optional
            The time the facts hold at (ISO-8601 or ``"now"``).
        known_at : str, optional
            The time of knowledge: statements recorded (or retracted) later are ignored.
        predicate : str, optional
            Only this predicate.
        scope : str or iterable of str, optional
            Only the statements of these scopes (unscoped ones left out); default every scope (docs/scopes.md).

        Returns
        -------
        CurrentResult
            ``facts``: the facts in force (Fact values); ``plans``: the plans naming it (never facts).

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            ``predicate`` is not in the registry.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(f.predicate, f.object, f.valid_from.date().isoformat(), f.assertions) for f in m.current("atlas-app").facts]
        [('uses', 'tool:kuzu', '2024-02-01', ('fact:1',))]
        >>> m.current("Atlas", as_of="2024-01-01").facts
        ()
        >>> m.close()
        """
        return with_plans(self.store, self._reads.current(subject, as_of=as_of, known_at=known_at, predicate=predicate,
                                                         scope=scope),
                          known_at is not None, predicate, scope)  # plans mentioning the subject (docs/lifecycle.md)

    def timeline(self, subject: str, *, predicate: str | None = None, known_at: str | None = None,
                 scope: str | Iterable[str] | None = None) -> TimelineResult:
        """Every interval of ``subject`` (by predicate, then start) and the events behind them.

        Parameters
        ----------
        subject : str
            A ref, name or alias.
        predicate : str, optional
            Only this predicate.
        known_at : str, optional
            The time of knowledge (default: now).
        scope : str or iterable of str, optional
            Only the statements of these scopes (unscoped ones left out); default every scope (docs/scopes.md).

        Returns
        -------
        TimelineResult
            ``intervals`` (Fact values) and the statements (``events``, Event values) they come from;
            ``plot()`` draws them (matplotlib).

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        UnknownPredicate
            ``predicate`` is not in the registry.
        BadTime
            ``known_at`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> _ = m.end("Atlas", "uses", "Kuzu", at="2024-06-01")
        >>> [(f.object, f.valid_to.isoformat()) for f in m.timeline("Atlas").intervals]
        [('tool:kuzu', '2024-06-01T00:00:00+00:00')]
        >>> [(e.op, e.fact) for e in m.timeline("Atlas").events]
        [('assert', 'fact:1'), ('end', 'fact:2')]
        >>> m.close()
        """
        return self._reads.timeline(subject, predicate=predicate, known_at=known_at, scope=scope)

    def facts(self, *, predicate: str | None = None, object: str | None = None, subject_type: str | None = None,
              as_of: str | None = None, scope: str | Iterable[str] | None = None) -> FactsResult:
        """Field filters over the view at ``as_of`` (default now), ordered by subject, predicate, start.

        Parameters
        ----------
        predicate : str, optional
            Only this predicate.
        object : str, optional
            Only this object (an entity ref, name or alias, or a literal value).
        subject_type : str, optional
            Only subjects of this entity type.
        as_of : str, optional
            The time the facts hold at (default: now).
        scope : str or iterable of str, optional
            Only the statements of these scopes (unscoped ones left out); default every scope (docs/scopes.md).

        Returns
        -------
        FactsResult
            ``facts`` holds Fact values (``fact.subject`` is the subject's ref; ``subjects`` maps refs to
            entities).

        Raises
        ------
        UnknownPredicate
            ``predicate`` is not in the registry.
        BadInput
            ``subject_type`` is not an entity type.
        BadTime
            ``as_of`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(f.subject, f.object) for f in m.facts(predicate="uses", object="Kuzu").facts]
        [('project:atlas', 'tool:kuzu')]
        >>> m.close()
        """
        return self._reads.facts(predicate=predicate, object=object, subject_type=subject_type, as_of=as_of, scope=scope)

    def why(self, fact: str, *, scope: str | Iterable[str] | None = None) -> WhyResult:
        """The receipts of one statement: sources, supersession, conflicts, ends, retraction.

        Parameters
        ----------
        fact : str
            The statement's ref, ``fact:N``.
        scope : str or iterable of str, optional
            Only a statement of these scopes (another is an unknown fact), read against their statements.

        Returns
        -------
        WhyResult
            ``statement`` (an Event), the facts it is behind (``in_view``) and the ``fact:N`` refs around it.

        Raises
        ------
        BadInput
            A bad or unknown ref.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> w = m.why(m.current("Atlas").facts[0].assertions[0])
        >>> w.statement.predicate, w.statement.valid_from.year, w.subject.ref, w.supersedes
        ('uses', 2024, 'project:atlas', ())
        >>> m.close()
        """
        return self._reads.why(fact, scope)

    def asserted_by(self, facts: Iterable[str]) -> dict[str, str]:
        """Who asserted each statement: ``fact:N`` to operator, agent, extractor or import.

        The readable tables mark a fact only the extractor asserted with it (its trust is the lowest).

        Parameters
        ----------
        facts : iterable of str
            Statement refs, ``fact:N``; one that does not exist is left out of the answer.

        Returns
        -------
        dict of str to str

        Raises
        ------
        BadInput
            A bad ref.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
        >>> _ = m.assert_("Atlas", "uses", "Kuzu", by="extractor"), m.assert_("Atlas", "status", "active")
        >>> m.asserted_by(["fact:1", "fact:2", "fact:9"])
        {'fact:1': 'extractor', 'fact:2': 'operator'}
        >>> m.close()
        """
        return self._reads.asserted_by(facts)

    # rebuild (graphmem.view.rebuild) ----------------------------------------------------------

    def rebuild(self, *, check: bool = False, progress: Progress = no_progress) -> RebuildReport:
        """Recompute the view from the statements; with ``check``, only compare (``view.rebuild.rebuild``).

        A store opened with ``repair=True`` after an interrupted bulk commit is made whole first.

        Parameters
        ----------
        check : bool, default False
            Only compare the stored view with a recomputation; write nothing.
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``).

        Returns
        -------
        RebuildReport
            ``drift`` lists the subjects whose stored rows differed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> r = m.rebuild(check=True)
        >>> r.checked_only, r.drift, r.counts["subjects"]
        (True, (), 1)
        >>> m.close()
        """
        return _with_lexicon(self.store, view_rebuild.rebuild(self.store, self.registry, check=check,
                                                              forget=self._forget_lexicon, progress=progress), check)

    def finish_migration(self, up: view_rebuild.Upgrade) -> MigrateReport:
        """After ``migrations.upgrade_layout``: the derived data made by the current code, the mark removed.

        ``graphmem.migrate`` calls it; it is public for that use.

        Parameters
        ----------
        up : Upgrade
            What the layout upgrade did (``from_version``, ``steps``, ``backup``, ``restarted``,
            ``reindex``).

        Returns
        -------
        MigrateReport

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> import types
        >>> up = types.SimpleNamespace(from_version=2, steps=(), backup=None, restarted=False, reindex=True, mark=None)
        >>> r = m.finish_migration(up)
        >>> r.from_version, r.counts
        (2, {'entities': 0, 'statements': 0, 'records': 0})
        >>> m.close()
        """
        return _with_lexicon(self.store, view_rebuild.finish_migration(self.store, self.registry, Path(self.path), up), False)

    def compare_views(self, names: dict[str, str], content_only: bool,
                      each: Callable[[str, list[Statement], str, list[Interval], int, list[str]], R],
                      write_changed: bool = False, *, progress: Progress = no_progress
                      ) -> tuple[list[R], list[ViewBatch]]:
        """Every subject recomputed and compared with its stored rows (``view.rebuild.compare_views``).

        Parameters
        ----------
        names : dict of str to str
            Entity names by ref (``m.store.entity_names()``).
        content_only : bool
            Do not count a log stored in another form or order that holds the same statements.
        each : callable
            Called as ``each(ref, statements, log text, view, edge count, parts that differ)`` for every
            subject; it must not touch the store (the work is shared out between processes).
        write_changed : bool, default False
            Also write the rows of the subjects that differ to bulk files (returned).
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``).

        Returns
        -------
        results : list
            What ``each`` returned, subject by subject.
        files : list of ViewBatch
            The bulk files (empty without ``write_changed``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> m.compare_views(m.store.entity_names(), True, lambda ref, *rest: (ref, rest[-1]))
        ([('project:atlas', [])], [])
        >>> m.close()
        """
        return view_rebuild.compare_views(self.store, self.registry, names, content_only, each, write_changed,
                                          progress)

    def drift_entry(self, ref: str, view: list[Interval], parts: list[str]) -> dict[str, Any]:
        """How the stored rows of ``ref`` differ from ``view`` (``view.rebuild.drift_entry``).

        Parameters
        ----------
        ref : str
            A subject's ref.
        view : list of Interval
            The recomputed intervals.
        parts : list of str
            The parts that differ (``name``, ``log``, ``view``, ``edges``).

        Returns
        -------
        dict
            ``subject``, ``stored_only`` and ``missing`` interval counts, and ``parts``.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> m.drift_entry("project:atlas", [], ["view"])
        {'subject': 'project:atlas', 'stored_only': 1, 'missing': 0, 'parts': ['view']}
        >>> m.close()
        """
        return view_rebuild.drift_entry(self.store, ref, view, parts)

    def lint(self, *, progress: Progress = no_progress) -> LintReport:
        """Check the store: statements without sources, conflicts, drift of the view and other issues.

        Parameters
        ----------
        progress : Progress, optional
            Told how far the work has got (``graphmem.model.progress``; the CLI draws a bar with it).

        Returns
        -------
        LintReport
            ``issues`` are LintIssue values with a code, severity and message, errors first; ``to_dict``
            takes the codes to show and how many.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(i.code, i.fact) for i in m.lint().issues]
        [('missing_source', 'fact:1')]
        >>> m.close()
        """
        from graphmem.view.lint import LintParts, lint
        with gc_paused():
            return lint(LintParts(self.store, self.registry, self.compare_views, self.drift_entry, progress))


def _with_lexicon(store: Any, report: R, check: bool) -> R:
    """``report`` after the stored linking lexicon is made again (``check``: compared, ``lexicon_drift``), and the
    archived records kept beside the events (``archive_state_drift``, docs/lifecycle.md)."""
    from graphmem.retrieval.stored_lexicon import rebuild_lexicon
    counts, problems = rebuild_lexicon(store, check)
    if store.rebuild_archive_state(check) and check:
        problems.append({"code": "archive_state_drift", "message": "the archived records kept beside the events "
                         "differ from the events replayed: run 'graphmem rebuild'"})
    if isinstance(report, RebuildReport):
        return dataclasses.replace(report, counts={**report.counts, **counts},
                                   problems=(*report.problems, *problems))
    return report
