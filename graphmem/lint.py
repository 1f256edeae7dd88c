"""Lint: check the statements against the registry, the entities and the view (SPEC 6)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from graphmem.model import Statement
from graphmem.results import LintIssue, LintReport
from graphmem.temporal import holding
from graphmem.timeparse import format_instant, now_us

if TYPE_CHECKING:
    from graphmem.memory import Memory


def lint(m: Memory) -> LintReport:
    """Every issue in the store, ordered by code then what it is about."""
    issues: list[LintIssue] = []
    entities = list(m.store.all_entities())
    entity_types = {e.ref: e.type for e in entities}
    names = {e.ref: e.name for e in entities}
    stmts = m.store.all_statements(names)
    reg = m.registry
    record_ids: set[int] | None = None  # read when the first record source turns up
    now = now_us()
    seen: dict[tuple[object, ...], int] = {}
    # per predicate, once: the definition, the subject types, entity-valued, the object types
    preds = {name: (p, frozenset(p.subject_types), p.entity_valued, frozenset(p.object_entity_types))
             for name, p in reg.predicates.items()}
    for fid, op, subj, pred, obj, kind, vf, vt, rec, retracted, _, sources, _, _, _ in stmts:
        ref = f"fact:{fid}"
        stype = entity_types.get(subj)
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
                                        f"fit {p.name}, which expects {p.object_description()}", fact=ref,
                                        subject=subj))
        for src in sources:
            if src.startswith("rec:"):
                if record_ids is None:
                    record_ids = m.store.record_id_set()
                if not src[4:].isdigit() or int(src[4:]) not in record_ids:
                    issues.append(LintIssue("dangling_source", "error", f"{ref} cites {src}, which does not "
                                            "resolve to a stored record", fact=ref, subject=subj, record=src))
        if op != "assert":
            continue
        if vt is not None and vt <= vf:
            issues.append(LintIssue("interval_invalid", "error", f"{ref}: valid_to {format_instant(vt)} "
                                    f"is not after valid_from {format_instant(vf)}", fact=ref, subject=subj))
        if retracted is not None:
            continue
        key = (subj, pred, kind, obj, vf, vt)
        if key in seen:
            issues.append(LintIssue("duplicate_assertion", "warning", f"{ref} repeats fact:{seen[key]} (same "
                                    "statement and interval)", fact=ref, subject=subj))
        else:
            seen[key] = fid
        if not sources:
            issues.append(LintIssue("missing_source", "warning", f"{ref} ({subj} {pred}) cites no "
                                    "source", fact=ref, subject=subj))
        if vf > rec:
            issues.append(LintIssue("future_fact", "warning", f"{ref} is valid from {format_instant(vf)}, "
                                    f"after it was recorded ({format_instant(rec)})", fact=ref, subject=subj))
    computed = m.computed_views(stmts, names)
    issues.extend(_stale(m, computed, {s.id: s for s in stmts}, now))
    reported: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    by_subject_conflicts: dict[str, list[tuple[int, tuple[int, ...], str]]] = defaultdict(list)
    for ref, (_, view) in computed.items():
        for iv in view:
            if iv.conflicts and (iv.assertions, iv.conflicts) not in reported:
                reported.add((iv.assertions, iv.conflicts))
                by_subject_conflicts[ref].append((iv.assertions[-1], iv.conflicts, iv.predicate))
    for ref, items in sorted(by_subject_conflicts.items()):
        for winner, losers, pred in items:
            issues.append(LintIssue(
                "single_value_conflict", "error",
                f"{ref} {pred}: fact:{winner} conflicts with " + ", ".join(f"fact:{c}" for c in losers),
                fact=f"fact:{winner}", subject=ref))
    for d in m.drift(computed):
        issues.append(LintIssue("view_drift", "error", f"the stored view of {d['subject']} differs from a rebuild "
                                f"({d['stored_only']} stored only, {d['missing']} missing); run 'graphmem rebuild'",
                                subject=d["subject"]))
    issues.sort(key=lambda i: (i.code, _fact_num(i.fact), i.subject or "", i.message))
    return LintReport(tuple(issues), {"statements": len(stmts), "entities": len(entity_types),
                                      "subjects": len(computed)})


def _stale(m: Memory, computed: dict[str, Any], by_id: dict[int, Statement], now: int) -> list[LintIssue]:
    """Current facts whose newest evidence (statement or cited record) is older than ``stale_after``."""
    out: list[LintIssue] = []
    record_ts: dict[str, int] = {}
    limits: dict[str, int | None] = {}  # each predicate's limit, parsed once (None: never stale)
    for ref, (_, view) in computed.items():
        for iv in holding(view, now):
            if iv.predicate not in limits:
                known = m.registry.predicates.get(iv.predicate)
                limits[iv.predicate] = known.stale_after_us if known else None
            limit = limits[iv.predicate]
            if limit is None:
                continue
            p = m.registry.predicates[iv.predicate]
            if str(iv.object) in p.stale_exempt:
                continue
            newest = max(by_id[a].recorded_at for a in iv.assertions)
            for src in iv.sources:
                if src.startswith("rec:"):
                    if src not in record_ts:
                        rec = m.store.record(int(src[4:])) if src[4:].isdigit() else None
                        record_ts[src] = rec.ts if rec else 0
                    newest = max(newest, record_ts[src])
            if now - newest > limit:
                days = (now - newest) // 86_400_000_000
                out.append(LintIssue("stale_fact", "warning", f"{ref} {iv.predicate} = {iv.object} has no evidence "
                                     f"newer than {days} days (stale after {p.stale_after if p else '?'})",
                                     fact=f"fact:{iv.assertions[-1]}", subject=ref))
    return out


def _fact_num(ref: str | None) -> int:
    return int(ref.split(":")[1]) if ref else 0
