"""The lifecycle of evidence records (docs/lifecycle.md): use tracking, the policy, the decay score,
soft archiving and reviving. Everything is a recorded event (``RecordEvent``); nothing is deleted.

- Use: a record included in a final pack bundle is ``packed``, one returned by search ``searched``
  (two signals, kept apart); one event per pack or search, naming its records. Ingest and import
  are not use.
- Policy: ``lifecycle.toml`` in the package, overridden by a store's own ``lifecycle.toml`` (beside
  its ``ontology/`` folder): importance tiers, retention days per tier, kinds that never archive,
  the decay's half-life, frequency boost and threshold, and the trust rule.
- ``run``: the records the policy archives as of a time, written as ``archive`` events (unless a dry
  run), with an aggregate receipt; ``revive`` writes ``revive`` events that undo them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from graphmem.errors import BadInput, ConfigError

if TYPE_CHECKING:
    from graphmem.results import CurrentResult

POLICY_FILE = "lifecycle.toml"
TIERS = ("must_remember", "nice_to_have", "ignore")
REASONS = ("retention", "decay")
EVENT_CHUNK = 10_000  # records named by one archive event (its list stays a modest string)
DAY_US = 86_400_000_000
_TRACKING = threading.Lock()  # the service reads on several threads; their use events are written one at a time
_KEYS = {"tiers": {"must_remember", "nice_to_have"}, "retention": set(TIERS), "kinds": {"never_archive"},
         "decay": {"half_life_days", "frequency_boost", "threshold"}, "trust": {"use_promotes_trust"}}


class LifecycleStore(Protocol):
    """The store methods the lifecycle reads and writes."""

    def lifecycle_rows(self) -> list[tuple[int, str, float | None, int, int, str]]: ...

    def record_use(self, until: int | None = None) -> dict[int, list[int | None]]: ...

    def archived_at(self, until: int | None = None) -> dict[int, int]: ...

    def add_record_event(self, op: str, rec_ids: Iterable[int], detail: dict[str, Any], at: int) -> int: ...

    def transaction(self) -> Any: ...


@dataclasses.dataclass(frozen=True)
class Policy:
    """The lifecycle policy in force: where it was read from and its values (docs/lifecycle.md)."""

    must_remember: float = 0.8
    nice_to_have: float = 0.5
    retention: tuple[tuple[str, float], ...] = (("must_remember", 0.0), ("nice_to_have", 90.0), ("ignore", 30.0))
    never_archive: tuple[str, ...] = ("rule", "constraint", "decision")
    half_life_days: float = 14.0
    frequency_boost: float = 0.5
    threshold: float = 0.05
    files: tuple[str, ...] = ()

    def tier(self, importance: float | None) -> str:
        imp = 0.5 if importance is None else importance
        return "must_remember" if imp >= self.must_remember else "nice_to_have" if imp >= self.nice_to_have else "ignore"

    def retention_days(self, tier: str) -> float:
        return float(dict(self.retention)[tier])

    def decay(self, idle_days: float, uses: int) -> float:
        """The decay score: ``0.5 ** (idle_days / half_life_days) * (1 + frequency_boost * ln(1 + uses))``."""
        halves = max(0.0, idle_days) / self.half_life_days
        return float(math.pow(0.5, halves) * (1 + self.frequency_boost * math.log1p(uses)))

    def to_dict(self) -> dict[str, Any]:
        return {"files": list(self.files), "tiers": {"must_remember": self.must_remember,
                                                     "nice_to_have": self.nice_to_have},
                "retention_days": dict(self.retention), "never_archive": list(self.never_archive),
                "decay": {"half_life_days": self.half_life_days, "frequency_boost": self.frequency_boost,
                          "threshold": self.threshold},
                "use_promotes_trust": False}


def _number(doc: dict[str, Any], key: str, where: str, low: float, high: float) -> float:
    v = doc[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not low <= v <= high:
        raise ConfigError(f"{where}: bad {key} {v!r}: expected a number from {low:g} to {high:g}")
    return float(v)


def load_policy(store_path: Path | None = None) -> Policy:
    """The package's policy, then the store's own ``lifecycle.toml`` (if any) over it, validated; a bad
    file is ConfigError naming the file and the entry."""
    sources = [(f"graphmem/evidence/{POLICY_FILE}", resources.files("graphmem.evidence").joinpath(POLICY_FILE)
                .read_text("utf-8"))]
    if store_path is not None and (Path(store_path) / POLICY_FILE).is_file():
        path = Path(store_path) / POLICY_FILE
        sources.append((str(path), path.read_text("utf-8")))
    values: dict[str, Any] = {}
    retention = dict(Policy().retention)
    for name, text in sources:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{name}: not valid TOML: {e}; expected a lifecycle policy (docs/lifecycle.md)") from None
        for section, body in doc.items():
            if section not in _KEYS or not isinstance(body, dict):
                raise ConfigError(f"{name}: unknown section {section!r}; expected {', '.join(_KEYS)}")
            for key in body:
                if key not in _KEYS[section]:
                    raise ConfigError(f"{name}: [{section}] unknown key {key!r}; expected "
                                      f"{', '.join(sorted(_KEYS[section]))}")
            where = f"{name}: [{section}]"
            if section == "tiers":
                values.update({k: _number(body, k, where, 0, 1) for k in body})
            elif section == "retention":
                retention.update({k: _number(body, k, where, 0, 1_000_000) for k in body})
            elif section == "kinds":
                kinds = body["never_archive"]
                if not isinstance(kinds, list) or not all(isinstance(k, str) and k for k in kinds):
                    raise ConfigError(f"{where}: bad never_archive {kinds!r}: expected a list of record kinds")
                values["never_archive"] = tuple(kinds)
            elif section == "decay":
                if "half_life_days" in body:
                    values["half_life_days"] = _number(body, "half_life_days", where, 0.001, 1_000_000)
                values.update({k: _number(body, k, where, 0, 1000) for k in body if k != "half_life_days"})
            elif body.get("use_promotes_trust", False) is not False:
                raise ConfigError(f"{where}: bad use_promotes_trust {body['use_promotes_trust']!r}: expected false "
                                  "(use never promotes trust)")
    p = Policy(**values, retention=tuple((t, retention[t]) for t in TIERS), files=tuple(n for n, _ in sources))
    if p.nice_to_have > p.must_remember:
        raise ConfigError(f"{p.files[-1]}: [tiers] nice_to_have {p.nice_to_have:g} is above must_remember "
                          f"{p.must_remember:g}: expected it at or below")
    return p


def record_trust(meta: dict[str, Any]) -> str:
    """A record's trust as its ``meta`` states it (``trust``), else ``unrated``; nothing raises it."""
    t = meta.get("trust") if isinstance(meta, dict) else None
    return t if isinstance(t, str) and t else "unrated"


def importance_band(importance: float | None) -> str:
    """Importance in bands of 0.2 for the receipt (``0.8-1.0``, ..., ``none``)."""
    if importance is None:
        return "none"
    lo = min(4, int(importance * 5)) / 5
    return f"{lo:.1f}-{lo + 0.2:.1f}"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The policy's verdict on one record: archive it or not, and why (a reason, or why it stays)."""

    rec_id: int
    archive: bool
    reason: str  # retention, decay; or kept, protected_kind, must_remember, plan_not_due
    tier: str
    trust: str
    importance: float | None
    score: float


def judge(policy: Policy, at: int, rows: Iterable[tuple[int, str, float | None, int, int, str]],
          use: dict[int, list[int | None]]) -> list[Verdict]:
    """The policy applied to each record ingested at or before ``at`` (a pure function)."""
    out = []
    for rid, kind, imp, _ts, ingested, meta_text in rows:
        if ingested > at:
            continue
        meta = json.loads(meta_text) if meta_text and meta_text != "{}" else {}
        u = use.get(rid, [0, None, 0, None, None])
        last = max([ingested, *(t for t in (u[1], u[3], u[4]) if t is not None)])
        idle = (at - last) / DAY_US
        uses = int(u[0] or 0) + int(u[2] or 0)
        tier = policy.tier(imp)
        score = policy.decay(idle, uses)
        days = policy.retention_days(tier)
        if kind in policy.never_archive:
            reason = "protected_kind"
        elif kind == "plan" and _due(meta) is not None and _due(meta) > at:  # type: ignore[operator]
            reason = "plan_not_due"
        elif days == 0:
            reason = tier
        elif idle > days:
            reason = "retention"
        elif score < policy.threshold:
            reason = "decay"
        else:
            reason = "kept"
        out.append(Verdict(rid, reason in REASONS, reason, tier, record_trust(meta), imp, score))
    return out


def _due(meta: dict[str, Any]) -> int | None:
    from graphmem.model.times import parse_instant
    due = meta.get("due")
    if not isinstance(due, str):
        return None
    try:
        return parse_instant(due, what="due")
    except Exception:
        return None


def receipt(verdicts: list[Verdict], archived_now: set[int]) -> dict[str, Any]:
    """Aggregate counts only (no record text, no refs): what the policy archives, by reason, tier,
    trust and importance band, and what it keeps, by reason."""
    new = [v for v in verdicts if v.archive and v.rec_id not in archived_now]
    kept = Counter(v.reason for v in verdicts if not v.archive and v.rec_id not in archived_now)
    return {"considered": len(verdicts), "already_archived": sum(1 for v in verdicts if v.rec_id in archived_now),
            "archived": len(new),
            "by_reason": {r: n for r in REASONS if (n := sum(1 for v in new if v.reason == r))},
            "by_tier": {t: n for t in TIERS if (n := sum(1 for v in new if v.tier == t))},
            "by_trust": dict(sorted(Counter(v.trust for v in new).items())),
            "by_importance": dict(sorted(Counter(importance_band(v.importance) for v in new).items())),
            "kept": dict(sorted(kept.items()))}


def run(store: LifecycleStore, policy: Policy, at: int, now: int, dry_run: bool) -> tuple[dict[str, Any], list[int]]:
    """Apply ``policy`` as of ``at``: the receipt, and the ids of the archive events written (none
    for a dry run, or when nothing falls below the policy). Records archived now are not archived
    again."""
    archived_now = set(store.archived_at())
    verdicts = judge(policy, at, store.lifecycle_rows(), store.record_use(until=at))
    doc = receipt(verdicts, archived_now)
    events: list[int] = []
    if not dry_run:
        new = [v for v in verdicts if v.archive and v.rec_id not in archived_now]
        if new:
            with store.transaction():
                for reason in REASONS:
                    ids = [v.rec_id for v in new if v.reason == reason]
                    for i in range(0, len(ids), EVENT_CHUNK):
                        events.append(store.add_record_event("archive", ids[i:i + EVENT_CHUNK],
                                                             {"reason": reason, "policy_at": at}, now))
    return doc, events


def revive(store: LifecycleStore, rec_ids: list[int], now: int) -> int:
    """Undo the archiving of these records (each must be archived now): one ``revive`` event; its id."""
    archived = store.archived_at()
    for rid in rec_ids:
        if rid not in archived:
            raise BadInput(f"bad record rec:{rid}: expected an archived record (it is not archived)")
    with store.transaction():
        return store.add_record_event("revive", sorted(set(rec_ids)), {}, now)


FLUSH_EVENTS = 64  # use events kept in memory before they are written together
FLUSH_SECONDS = 2.0  # ... or once the first of them has waited this long (checked when one is added)


class UseLog:
    """Use events not written yet. A pack or search adds one (``packed`` or ``searched``, naming its
    records, with its time); they are written together, one transaction, when 64 are waiting, when
    one is added 2 s or more after the first, before anything reads use or archives, and when the
    store closes. A process killed in between loses that use (a soft signal), never anything else."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, list[int], int]] = []
        self.since: float | None = None

    def add(self, store: LifecycleStore, op: str, rec_ids: Iterable[int], now: int, read_only: bool
            ) -> tuple[str, ...]:
        """Keep one use event (none on a read-only store, or for no records); the refs it names."""
        ids = sorted({int(r) for r in rec_ids})
        if read_only or not ids:
            return ()
        with _TRACKING:
            self.pending.append((op, ids, now))
            if self.since is None:
                self.since = time.monotonic()
            if len(self.pending) >= FLUSH_EVENTS or time.monotonic() - self.since >= FLUSH_SECONDS:
                self._flush(store)
        return tuple(f"rec:{i}" for i in ids)

    def flush(self, store: LifecycleStore) -> int:
        """Write the waiting events now; how many."""
        with _TRACKING:
            return self._flush(store)

    def _flush(self, store: LifecycleStore) -> int:
        events, self.pending, self.since = self.pending, [], None
        if events:
            with store.transaction():
                for op, ids, at in events:
                    store.add_record_event(op, ids, {}, at)
        return len(events)


PLAN_ORDER = {"overdue": 0, "due": 1, "no_due": 2}


def plan_status(due: int | None, at: int) -> str:
    """``overdue`` (due before ``at``), ``due`` (due at or after it) or ``no_due``."""
    return "no_due" if due is None else "overdue" if due < at else "due"


def plan_items(rows: Iterable[tuple[int, str, int, str]], at: int, archived: Iterable[int] = (),
               known_at: int | None = None) -> tuple[dict[str, Any], ...]:
    """Plans as ``current`` shows them: ref, text, time, due and status; overdue first (earliest due
    first), then due (soonest first), then those with no due time (newest first). Archived plans and
    plans written after ``known_at`` are left out."""
    from graphmem.model.times import format_instant
    gone = set(archived)
    out = []
    for rid, text, ts, meta_text in rows:
        if rid in gone or (known_at is not None and ts > known_at):
            continue
        meta = json.loads(meta_text or "{}")
        due = _due(meta)
        status = plan_status(due, at)
        out.append(((PLAN_ORDER[status], due if due is not None else -ts, rid),
                    {"ref": f"rec:{rid}", "text": text, "ts": format_instant(ts), "due": format_instant(due),
                     "status": status}))
    return tuple(d for _, d in sorted(out, key=lambda x: x[0]))


def plan_label(record: Any, ts: int, at: int) -> tuple[str, tuple[int, int]]:
    """A plan's label in a pack line ("plan, due 2026-03-01 (overdue)") and its place among the plans:
    (overdue 0, due 1, no due 2; then the due time, or the newest first)."""
    due = _due(record.meta if record is not None else {})
    status = plan_status(due, at)
    from graphmem.model.times import format_instant
    label = (f"plan, due {(format_instant(due) or '')[:10]} ({status})" if due is not None
             else f"plan of {(format_instant(ts) or '')[:10]}, no due time")
    return label, (PLAN_ORDER[status], due if due is not None else -ts)


def with_plans(store: Any, current: CurrentResult, known_given: bool, predicate: str | None,
               scope: Any = None) -> CurrentResult:
    """``current`` (a CurrentResult) with the plans that mention its subject, when no predicate
    narrows it (``known_given``: a known_at was asked for, so later plans are left out); with a
    ``scope`` (one or several), only the plans of those scopes (docs/scopes.md)."""
    rows = store.plans_mentioning(current.subject.ref) if predicate is None else []
    if rows and scope is not None:
        from graphmem.model.scopes import scope_list
        scopes = scope_list(scope) or ()
        rows = [r for r in rows if (rec := store.record(r[0])) is not None and rec.scope in scopes]
    if not rows:
        return current
    from graphmem.model.times import to_us
    known = to_us(current.known_at) if known_given else None
    return dataclasses.replace(current, plans=plan_items(rows, to_us(current.as_of), store.archived_at(), known))
