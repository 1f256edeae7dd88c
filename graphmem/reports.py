"""Reports of whole-store work: lint (its issues, codes and severities), import, rebuild and migrate.

Each converts to the CLI's JSON (``to_dict``) as every result does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import graphmem.notebook as nb
from graphmem.errors import BadInput, check_int
from graphmem.notebook import HtmlRepr


@dataclass(frozen=True)
class LintIssue:
    """One problem lint found in the store (SPEC 6).

    Attributes
    ----------
    code : str
        What is wrong: ``missing_source``, ``single_value_conflict``, ... (``graphmem.reports.LINT_CODES``).
    severity : str
        ``error`` or ``warning``.
    message : str
        One line for people, naming what it is about.
    fact, subject, record : str or None
        The ``fact:N``, entity ref and ``rec:N`` it is about, where there is one.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> issue = m.lint().issues[0]
    >>> issue.code, issue.severity, issue.fact
    ('missing_source', 'warning', 'fact:1')
    >>> m.close()
    """

    code: str
    severity: str
    message: str
    fact: str | None = None
    subject: str | None = None
    record: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The issue as an item of the ``graphmem.lint.v1`` document.

        Returns
        -------
        dict
            ``code``, ``severity``, ``message``, and ``fact``, ``subject``, ``record`` where set.
        """
        d: dict[str, Any] = {"code": self.code, "severity": self.severity, "message": self.message}
        for k in ("fact", "subject", "record"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d


SEVERITY_RANK = {"warning": 1, "error": 2}
# every code lint reports, with its severity (SPEC 6)
LINT_CODES = {"unknown_predicate": "error", "subject_type_mismatch": "error", "object_type_mismatch": "error",
              "dangling_entity": "error", "interval_invalid": "error", "single_value_conflict": "error",
              "dangling_source": "error", "view_drift": "error", "duplicate_assertion": "warning",
              "missing_source": "warning", "stale_fact": "warning", "future_fact": "warning"}


def check_fail_on(fail_on: str, what: str = "fail_on") -> str:
    """``fail_on`` if it is a severity a lint can fail on (error or warning), else BadInput naming both."""
    if fail_on not in SEVERITY_RANK:
        raise BadInput(f"bad {what} {fail_on!r}: expected error or warning")
    return fail_on


def check_lint_codes(codes: Iterable[str] | None, what: str = "code") -> tuple[str, ...] | None:
    """The lint codes asked for (None: every code), each checked; an unknown one is BadInput naming them all."""
    if codes is None:
        return None
    if isinstance(codes, str):
        codes = [codes]
    chosen: list[str] = []
    for c in codes:
        if c not in LINT_CODES:
            raise BadInput(f"unknown lint {what} {c!r}: expected one of {', '.join(sorted(LINT_CODES))}")
        if c not in chosen:
            chosen.append(c)
    return tuple(chosen)


@dataclass(frozen=True, repr=False)
class LintReport(HtmlRepr):
    """Every issue lint found, errors first, then by code and what it is about; ``checked`` counts what was read.

    Attributes
    ----------
    issues : tuple of LintIssue
        Errors first, then by code and what it is about.
    checked : dict of str to int
        How many statements, entities and subjects were read.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> r = m.lint()
    >>> r.summary(), r.fails(), r.fails("warning")
    ([{'code': 'missing_source', 'severity': 'warning', 'count': 1}], False, True)
    >>> m.close()
    """

    issues: tuple[LintIssue, ...]
    checked: dict[str, int]

    def counts(self) -> dict[str, Any]:
        """How many issues there are: ``error``, ``warning``, ``by_code``, and the ``checked`` counts.

        Returns
        -------
        dict
            For example ``{'error': 0, 'warning': 1, 'by_code': {'missing_source': 1}, 'statements': 1, ...}``.
        """
        by_code: dict[str, int] = {}
        for i in self.issues:
            by_code[i.code] = by_code.get(i.code, 0) + 1
        return {"error": sum(i.severity == "error" for i in self.issues),
                "warning": sum(i.severity == "warning" for i in self.issues),
                "by_code": dict(sorted(by_code.items())), **self.checked}

    def summary(self) -> list[dict[str, Any]]:
        """One entry per code found: ``code``, ``severity``, ``count``; errors first, then the most frequent.

        Returns
        -------
        list of dict
        """
        by_code: dict[str, list[Any]] = {}
        for i in self.issues:
            by_code.setdefault(i.code, [i.severity, 0])[1] += 1
        return [{"code": c, "severity": sev, "count": n} for c, (sev, n) in
                sorted(by_code.items(), key=lambda kv: (-SEVERITY_RANK[kv[1][0]], -kv[1][1], kv[0]))]

    def select(self, codes: Iterable[str] | None = None) -> tuple[LintIssue, ...]:
        """The issues of these codes (all with None); an unknown code is BadInput naming the known ones.

        Returns
        -------
        tuple of LintIssue
        """
        chosen = check_lint_codes(codes)
        return self.issues if chosen is None else tuple(i for i in self.issues if i.code in chosen)

    def fails(self, fail_on: str = "error", codes: Iterable[str] | None = None) -> bool:
        """Whether an issue (of ``codes``, if given) is at or above ``fail_on`` (error or warning; BadInput otherwise).

        Returns
        -------
        bool
            What ``graphmem lint --fail-on`` turns into exit code 1.
        """
        rank = SEVERITY_RANK[check_fail_on(fail_on)]
        return any(SEVERITY_RANK[i.severity] >= rank for i in self.select(codes))

    def to_dict(self, fail_on: str = "error", *, codes: Iterable[str] | None = None,
                limit: int | None = None) -> dict[str, Any]:
        """The ``graphmem.lint.v1`` document: ``counts`` and ``summary`` cover every issue; ``issues`` holds
        those of ``codes`` (all with None), at most ``limit`` of them (all with None), and ``ok`` judges them;
        ``matched`` is how many there are and ``more`` how many ``limit`` left out.

        Returns
        -------
        dict
            The document ``graphmem lint --json`` prints.
        """
        chosen = check_lint_codes(codes)
        if limit is not None:
            check_int(limit, "limit", 0, 10**9)
        issues = self.select(chosen)
        shown = issues if limit is None else issues[:limit]
        return {"schema": "graphmem.lint.v1", "ok": not self.fails(fail_on, chosen), "fail_on": fail_on,
                "counts": self.counts(), "summary": self.summary(), "codes": None if chosen is None else list(chosen),
                "limit": limit, "matched": len(issues), "more": len(issues) - len(shown),
                "issues": [i.to_dict() for i in shown]}

    def _summary(self) -> str:
        c = self.counts()
        codes = ", ".join(f"{k} {v}" for k, v in c["by_code"].items())
        return f"{nb.plural(c['error'], 'error')}, {nb.plural(c['warning'], 'warning')}" + (f": {codes}" if codes else "")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return nb.rows_of(self.issues, limit, lambda i: f"{i.severity} {i.code}: {i.message}")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        cols = ["code", "severity", "message", "fact", "subject", "record"]
        return cols, [[getattr(i, c) for c in cols] for i in self.issues]


@dataclass(frozen=True, repr=False)
class ImportReport(HtmlRepr):
    """What an import of JSONL lines did (``Memory.import_jsonl``); nothing is written in strict mode with errors.

    Attributes
    ----------
    lines, statements, retractions : int
        Lines read, statements and retractions written.
    entities_created, entities_updated : int
        Entities written.
    first_fact, last_fact : str or None
        The first and last statement written (``fact:N``).
    errors : tuple of (int, str)
        Each invalid line's number and reason.
    written, ok : bool
        Whether anything was written; whether every line was valid.
    seconds : float
        How long it took.
    unchanged : int
        Lines equal to what the store held: nothing written for them.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> r = m.import_jsonl(['{"op": "entity", "type": "Tool", "name": "Kuzu"}', '{"op": "nope"}'])
    >>> r.entities_created, r.ok, r.errors[0][0]
    (1, False, 2)
    >>> m.close()
    """

    lines: int
    entities_created: int
    entities_updated: int
    statements: int
    retractions: int
    first_fact: str | None  # fact:N, the first and last statement written
    last_fact: str | None
    errors: tuple[tuple[int, str], ...]
    written: bool
    seconds: float = 0.0
    unchanged: int = 0  # lines equal to what the store held: nothing written for them

    @property
    def ok(self) -> bool:
        """Whether every line was valid."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "graphmem.import.v1", "ok": self.ok, "written": self.written, "lines": self.lines,
            "entities_created": self.entities_created, "entities_updated": self.entities_updated,
            "statements": self.statements, "retractions": self.retractions, "unchanged": self.unchanged,
            "facts": None if self.first_fact is None else [self.first_fact, self.last_fact],
            "errors": [{"line": n, "reason": r} for n, r in self.errors],
            "seconds": round(self.seconds, 3),
        }

    def _summary(self) -> str:
        done = "written" if self.written else "nothing written"
        span = f", {self.first_fact} to {self.last_fact}" if self.first_fact else ""
        return (f"{nb.plural(self.lines, 'line')}, {nb.plural(self.statements, 'statement')}{span}, "
                f"{nb.plural(self.entities_created, 'entity')} created, {nb.plural(len(self.errors), 'error')}: {done}")

    def _lines(self, limit: int) -> tuple[list[str], int]:
        return nb.rows_of(self.errors, limit, lambda e: f"line {e[0]}: {e[1]}")

    def _frame(self) -> tuple[list[str], list[list[Any]]]:
        return ["line", "reason"], [[n, r] for n, r in self.errors]


@dataclass(frozen=True, repr=False)
class RebuildReport(HtmlRepr):
    """What a rebuild of the fact view (or, with ``check``, a comparison with the log) found.

    Attributes
    ----------
    checked_only : bool
        A check (nothing written) rather than a rebuild.
    drift : tuple of dict
        The subjects whose stored view differed from the one the log gives.
    counts : dict of str to int
        Subjects, intervals and edges computed; subjects rewritten.
    seconds : float
        How long it took.
    repaired : dict or None
        After an interrupted bulk commit: what was made again.
    problems : tuple of dict
        With ``check``: what is wrong beyond the view.
    ok : bool
        No drift and no problems.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    >>> _ = m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01")
    >>> r = m.rebuild(check=True)
    >>> r.ok, r.drift, r.counts["intervals"]
    (True, (), 1)
    >>> m.close()
    """

    checked_only: bool
    drift: tuple[dict[str, Any], ...]
    counts: dict[str, int]
    seconds: float
    repaired: dict[str, int] | None = None  # after an interrupted bulk commit: name keys and records made again
    problems: tuple[dict[str, Any], ...] = ()  # with --check: what is wrong beyond the view (the store's integrity_problems)

    @property
    def ok(self) -> bool:
        """No drift and no problems."""
        return not self.drift and not self.problems

    def to_dict(self) -> dict[str, Any]:
        doc = {"schema": "graphmem.rebuild.v1", "check": self.checked_only, "ok": self.ok,
               "drift": list(self.drift), "problems": list(self.problems), "counts": self.counts,
               "seconds": round(self.seconds, 3)}
        if self.repaired is not None:
            doc["repaired"] = self.repaired
        return doc

    def _summary(self) -> str:
        what = "check" if self.checked_only else "rebuild"
        return (f"{what}: {nb.plural(len(self.drift), 'subject')} drifted, {nb.plural(len(self.problems), 'problem')}, "
                f"{self.seconds:.3f} s")


@dataclass(frozen=True, repr=False)
class MigrateReport(HtmlRepr):
    """What ``graphmem migrate`` did (``graphmem.migrate``).

    Attributes
    ----------
    store : str
        The store's address: its folder, or a PostgreSQL address (password shown as ``***``).
    from_version, to_version : int
        The layout version before and after.
    steps : tuple of str
        The migrations run, by name (empty when the store was current).
    backup : str or None
        Where the copy made before migrating is.
    restarted : bool
        Whether an interrupted migration was first put back from its copy.
    counts : dict of str to int
        Entities, statements and records in the migrated store (empty when nothing was done).
    seconds : float
        How long it took.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> path = tempfile.mkdtemp()
    >>> graphmem.open(path, create=True).close()
    >>> r = graphmem.migrate(path)
    >>> r.from_version == r.to_version, r.steps, r.to_dict()["migrated"]
    (True, (), False)
    """

    store: str
    from_version: int
    to_version: int
    steps: tuple[str, ...]
    backup: str | None
    restarted: bool
    counts: dict[str, int]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.migrate.v1", "store": self.store, "from": self.from_version,
                "to": self.to_version, "migrated": bool(self.steps), "steps": list(self.steps),
                "backup": self.backup, "restarted": self.restarted, "counts": self.counts,
                "seconds": round(self.seconds, 3)}

    def _summary(self) -> str:
        return f"{self.store}: layout {self.from_version} to {self.to_version}, {nb.plural(len(self.steps), 'step')}"


@dataclass(frozen=True, repr=False)
class LifecycleReport(HtmlRepr):
    """What ``graphmem lifecycle`` did or, as a dry run, would do: counts only, never a record's text
    (docs/lifecycle.md).

    Attributes
    ----------
    at : str
        The time the policy was applied as of (ISO 8601, UTC).
    dry_run : bool
        Whether nothing was written.
    counts : dict
        ``considered``, ``already_archived``, ``archived``, and the archived by reason, tier, trust
        and importance band; ``kept``, the records kept by why.
    policy : dict
        The policy in force and the files it was read from.
    events : tuple of int
        The archive events written (none for a dry run).
    seconds : float
        How long it took.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.ingest([b'{"text": "lunch at noon", "ts": "2024-01-01", "importance": 0.1}'])
    >>> r = m.lifecycle(at="2099-01-01", dry_run=True)
    >>> r.counts["archived"], r.counts["by_reason"], r.events
    (1, {'retention': 1}, ())
    >>> m.close()
    """

    at: str
    dry_run: bool
    counts: dict[str, Any]
    policy: dict[str, Any]
    events: tuple[int, ...]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.lifecycle.v1", "at": self.at, "dry_run": self.dry_run, **self.counts,
                "events": list(self.events), "policy": self.policy, "seconds": round(self.seconds, 3)}

    def _summary(self) -> str:
        verb = "would archive" if self.dry_run else "archived"
        return (f"as of {self.at[:10]}: {verb} {nb.plural(self.counts['archived'], 'record')} of "
                f"{self.counts['considered']}")


@dataclass(frozen=True, repr=False)
class ReviveReport(HtmlRepr):
    """What ``graphmem revive`` did: the records no longer archived, and the event that says so.

    Attributes
    ----------
    revived : tuple of str
        The records revived (``rec:N``).
    event : int
        The revive event written.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.ingest([b'{"text": "lunch at noon", "ts": "2024-01-01", "importance": 0.1}'])
    >>> _ = m.lifecycle(at="2099-01-01")
    >>> m.search("lunch").results
    ()
    >>> m.revive("rec:1").revived, len(m.search("lunch").results)
    (('rec:1',), 1)
    >>> m.close()
    """

    revived: tuple[str, ...]
    event: int

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.revive.v1", "revived": list(self.revived), "event": self.event}

    def _summary(self) -> str:
        return f"revived {nb.plural(len(self.revived), 'record')}"


@dataclass(frozen=True, repr=False)
class CopyReport(HtmlRepr):
    """What ``graphmem copy`` did (``graphmem.copy_store``).

    Attributes
    ----------
    source, dest : str
        The two stores' addresses.
    source_engine, dest_engine : str
        Their engines (``kuzu``, ``ladybug``, ``postgresql``).
    source_version, dest_version : str
        The engines' versions.
    entities, records, statements, retractions : int
        What was copied (statements: the asserts, ends and cites).
    seconds : float
        How long it took.
    events : int
        The entity events (renames, merges, ...) and record events (use, archive, revive) copied.

    Examples
    --------
    >>> r = CopyReport("/tmp/a", "ladybug:/tmp/b", "kuzu", "ladybug", "0.11.3", "0.22.0", 2, 1, 3, 0, 1.5)
    >>> r.to_dict()["dest_engine"], r.to_dict()["statements"]
    ('ladybug', 3)
    """

    source: str
    dest: str
    source_engine: str
    dest_engine: str
    source_version: str
    dest_version: str
    entities: int
    records: int
    statements: int
    retractions: int
    seconds: float
    events: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "graphmem.copy.v1", "source": self.source, "dest": self.dest,
                "source_engine": self.source_engine, "source_version": self.source_version,
                "dest_engine": self.dest_engine, "dest_version": self.dest_version, "entities": self.entities,
                "records": self.records, "statements": self.statements, "retractions": self.retractions,
                "events": self.events, "seconds": round(self.seconds, 3)}

    def _summary(self) -> str:
        return (f"copied {self.source} ({self.source_engine}) to {self.dest} ({self.dest_engine}): "
                f"{nb.plural(self.entities, 'entity', 'entities')}, {nb.plural(self.records, 'record')}, "
                f"{nb.plural(self.statements, 'statement')}, {nb.plural(self.retractions, 'retraction')} "
                f"in {self.seconds:.1f} s")
