"""Lint: check the statements against the registry, the entities and the view (SPEC 6).

``lint`` receives what it reads as ``LintParts``: two whole-store reads, the registry, and its owner's
comparison of every subject's recomputed view with its stored rows (the same one a rebuild makes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from graphmem.model import Interval, Statement, fact_ref
from graphmem.model.progress import Progress, no_progress
from graphmem.model.times import format_instant, now_us
from graphmem.model.words import plural
from graphmem.ontology.schema import Registry
from graphmem.reports import LintIssue, LintReport
from graphmem.view.temporal import holding

R = TypeVar("R")


class LintStore(Protocol):
    """The store methods lint calls, each one pass over a whole table."""

    def entity_names_and_types(self) -> tuple[dict[str, str], dict[str, str]]: ...

    def record_times(self) -> dict[str, int]: ...


class CompareViews(Protocol):
    """Every subject's statements and recomputed view, handed to ``each`` with the parts of its stored rows
    that differ (``Memory.compare_views``); ``each`` runs in two processes, away from the store."""

    def __call__(self, names: dict[str, str], content_only: bool,
                 each: Callable[[str, list[Statement], str, list[Interval], int, list[str]], R], *,
                 progress: Progress = ...) -> tuple[list[R], Sequence[object]]: ...


@dataclass(frozen=True)
class LintParts:
    """What lint reads: the store, the registry, the comparison of the view with a recomputation, how
    one subject's stored rows differ from its recomputed view (``Memory.drift_entry``), and whom to
    tell how far it has got."""

    store: LintStore
    registry: Registry
    compare_views: CompareViews
    drift_entry: Callable[[str, list[Interval], list[str]], dict[str, Any]]
    progress: Progress = no_progress


def lint(parts: LintParts) -> LintReport:
    """Every issue in the store, errors first, then by code and what it is about.

    One pass over the subjects: each one's statements (in id order), its recomputed view,
    and how its stored rows differ from that view.
    """
    issues: list[LintIssue] = []
    parts.progress("reading entities and records", 0, None)
    check = _Checker(parts)

    def each(subject: str, log: list[Statement], text: str, view: list[Interval], n_edges: int,
             parts: list[str]) -> tuple[str, int, list[LintIssue], list[Interval], list[str]]:
        found: list[LintIssue] = []
        if log:
            check.statements(subject, log, found)
            check.stale(subject, view, log, found)
            _conflicts(subject, view, found)
        return subject, len(log), found, view if parts else [], parts

    n_statements = n_subjects = 0
    for subject, n, found, view, differ in parts.compare_views(check.names, True, each, progress=parts.progress)[0]:
        issues.extend(found)
        if differ:
            issues.append(_drift_issue(subject, parts.drift_entry(subject, view, differ), differ))
        if n:
            n_subjects += 1
            n_statements += n
    issues.sort(key=lambda i: (i.severity != "error", i.code, _fact_num(i.fact), i.subject or "", i.message))
    return LintReport(tuple(issues), {"statements": n_statements, "entities": len(check.entity_types),
                                      "subjects": n_subjects})


class _Checker:
    """The per-statement and per-fact checks, with what they look up once."""

    def __init__(self, parts: LintParts) -> None:
        self.registry = parts.registry
        self.names, self.entity_types = parts.store.entity_names_and_types()
        self.now = now_us()
        # records, read up front: the checks run in two processes, away from the store
        self.record_ts = parts.store.record_times()
        # per predicate, once: the definition, the subject types, entity-valued, the object types, the stale limit
        self.preds = {name: (p, frozenset(p.subject_types), p.entity_valued, frozenset(p.object_entity_types))
                      for name, p in parts.registry.predicates.items()}
        self.limits: dict[str, int | None] = {}  # each predicate's stale limit, parsed once (None: never stale)

    def statements(self, subj: str, log: list[Statement], issues: list[LintIssue]) -> None:
        """The checks of each statement of one subject (in id order)."""
        stype = self.entity_types.get(subj)
        entity_types, preds, record_ts = self.entity_types, self.preds, self.record_ts
        seen: dict[tuple[object, ...], int] = {}
        cited = _cited(log)
        for fid, op, _, pred, obj, kind, vf, vt, rec, retracted, _, sources, _, _, _, _ in log:
            ref = fact_ref(fid)
            if op == "cite":  # its sources are checked; its object is a note, its valid_from an id
                for src in sources:
                    if src.startswith("rec:") and src not in record_ts:
                        issues.append(LintIssue("dangling_source", "error", f"{ref} cites {src}, which does not "
                                                "resolve to a stored record", fact=ref, subject=subj, record=src))
                continue
            if stype is None:
                issues.append(LintIssue("dangling_entity", "error", f"{ref} names subject {subj!r}, which does "
                                        "not exist", fact=ref, subject=subj))
            if kind == "entity" and obj not in entity_types:
                issues.append(LintIssue("dangling_entity", "error", f"{ref} names object {obj!r}, which does "
                                        "not exist", fact=ref, subject=subj))
            info = preds.get(pred)
            if info is None:
                issues.append(LintIssue("unknown_predicate", "error", f"{ref} uses predicate {pred!r}, which "
                                        "the registry does not define", fact=ref, subject=subj))
                continue
            p, subject_types, entity_valued, object_types = info
            if stype is not None and stype not in subject_types:
                issues.append(LintIssue("subject_type_mismatch", "error", f"{ref}: subject {subj} is a {stype}; "
                                        f"{p.name} expects " + " or ".join(p.subject_types), fact=ref,
                                        subject=subj))
            if kind:
                otype = entity_types.get(str(obj)) if kind == "entity" else None
                if entity_valued != (kind == "entity") or (otype is not None and otype not in object_types):
                    issues.append(LintIssue("object_type_mismatch", "error", f"{ref}: object {obj!r} does not "
                                            f"fit {p.name}, which expects {p.object_description()}",
                                            fact=ref, subject=subj))
            for src in sources:
                if src.startswith("rec:") and src not in record_ts:
                    issues.append(LintIssue("dangling_source", "error", f"{ref} cites {src}, which does not "
                                            "resolve to a stored record", fact=ref, subject=subj, record=src))
            if op != "assert":
                continue
            if vt is not None and vt <= vf:
                issues.append(LintIssue("interval_invalid", "error", f"{ref}: valid_to {format_instant(vt)} "
                                        f"is not after valid_from {format_instant(vf)}", fact=ref,
                                        subject=subj))
            if retracted is not None:
                continue
            key = (pred, kind, obj, vf, vt)
            if key in seen:
                issues.append(LintIssue("duplicate_assertion", "warning", f"{ref} repeats {fact_ref(seen[key])} (same "
                                        "statement and interval)", fact=ref, subject=subj))
            else:
                seen[key] = fid
            if not sources and fid not in cited:
                issues.append(LintIssue("missing_source", "warning", f"{ref} ({subj} {pred}) cites no "
                                        "source", fact=ref, subject=subj))
            if vf > rec:
                issues.append(LintIssue("future_fact", "warning", f"{ref} is valid from {format_instant(vf)}, "
                                        f"after it was recorded ({format_instant(rec)})", fact=ref,
                                        subject=subj))

    def stale(self, ref: str, view: list[Interval], log: list[Statement], issues: list[LintIssue]) -> None:
        """Current facts whose newest evidence (statement or cited record) is older than ``stale_after``."""
        now = self.now
        by_id: dict[int, Statement] | None = None  # made for the first fact that can go stale
        cited: dict[int, int] = {}
        for iv in holding(view, now):
            if iv.predicate not in self.limits:
                known = self.registry.predicates.get(iv.predicate)
                self.limits[iv.predicate] = known.stale_after_us if known else None
            limit = self.limits[iv.predicate]
            if limit is None:
                continue
            p = self.registry.predicates[iv.predicate]
            if str(iv.object) in p.stale_exempt:
                continue
            if by_id is None:
                by_id = {s.id: s for s in log}
                cited = _cited(log)  # a cite is evidence too
            newest = max(by_id[a].recorded_at for a in iv.assertions)
            for a in iv.assertions:
                newest = max(newest, cited.get(a, 0))
            for src in iv.sources:
                if src.startswith("rec:"):
                    newest = max(newest, self.record_ts.get(src, 0))
            if now - newest > limit:
                days = (now - newest) // 86_400_000_000
                issues.append(LintIssue("stale_fact", "warning", f"{ref} {iv.predicate} = {iv.object} has no "
                                        f"evidence newer than {plural(days, 'day')} (stale after {p.stale_after})",
                                        fact=fact_ref(iv.assertions[-1]), subject=ref))


def _cited(log: list[Statement]) -> dict[int, int]:
    """The assertions with a cite not retracted, each with its latest cite's record time."""
    out: dict[int, int] = {}
    for s in log:
        if s.op == "cite" and s.retracted_at is None and s.recorded_at > out.get(s.valid_from, -1):
            out[s.valid_from] = s.recorded_at
    return out


def _conflicts(ref: str, view: list[Interval], issues: list[LintIssue]) -> None:
    """One issue per set of single-valued facts that hold together (an interval names the others)."""
    reported: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    for iv in view:
        if iv.conflicts and (iv.assertions, iv.conflicts) not in reported:
            reported.add((iv.assertions, iv.conflicts))
            issues.append(LintIssue(
                "single_value_conflict", "error",
                f"{ref} {iv.predicate}: {fact_ref(iv.assertions[-1])} conflicts with "
                + ", ".join(fact_ref(c) for c in iv.conflicts), fact=fact_ref(iv.assertions[-1]), subject=ref))


def _drift_issue(ref: str, d: dict[str, Any], parts: list[str]) -> LintIssue:
    return LintIssue("view_drift", "error", f"the stored view of {ref} differs from a rebuild "
                     f"({d['stored_only']} stored only, {d['missing']} missing; {', '.join(parts)}); "
                     "run 'graphmem rebuild'", subject=ref)


def _fact_num(ref: str | None) -> int:
    return int(ref.split(":")[1]) if ref else 0
