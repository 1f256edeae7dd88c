"""How a context bundle is chosen from its candidates (docs/packing.md, "Selection" and "Budget partition").

The budget is filled in three parts, each with its own budget: guidance (rules, constraints and
decisions: the whole budget), a protected tail of the most recent records of the current session or
of the records the filter allows (``--tail N`` or ``--tail-budget T``: at most T, else what guidance
left), then retrieval (what is left). A part's unused budget passes to the next. The trust policy
(``--min-trust``) leaves low-trust and quarantined candidates out before any part is filled.

Pure of the store but for what the packer hands over (``p``: its lanes, record cache, filter, statements).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem.errors import BadInput, check_int
from graphmem.evidence.lifecycle import record_trust
from graphmem.evidence.search import session_key, sessions
from graphmem.model import TRUST_RANK, TRUST_TIERS
from graphmem.model.text import check_text
from graphmem.notebook import plural
from graphmem.retrieval.packlines import GUIDANCE_KINDS, Candidate, _day, record_text

GROUPS = (("guidance", "Guidance:"), ("plans", "Plans (intended work, not facts; overdue and due first):"),
          ("facts", "Current facts (as of {day}):"), ("entities", "Entities:"), ("evidence", "Evidence:"),
          ("tail", "Recent (oldest first):"))
TAIL_MAX = 1000  # the most records a tail may ask for (as --max-items)
TAIL_READS = 8  # with a tail budget, the records read at a time until their lines pass it
RECORD_TRUST = {"quarantined": -1, **TRUST_RANK}  # a record's meta.trust; any other value is unrated


@dataclass(frozen=True)
class Partition:
    """What a pack asks for beside relevance: a protected tail (``tail`` records, at most ``tail_budget``
    tokens, of ``session`` or the current one) and a trust floor (``min_trust``: low, medium or high).

    >>> Partition(tail=4).check(1000).to_dict()
    {'tail': 4, 'tail_budget': None, 'session': None, 'min_trust': None}
    >>> Partition(tail=-1).check(1000)
    Traceback (most recent call last):
    graphmem.errors.BadInput: bad tail -1: expected a whole number from 0 to 1000
    """

    tail: int = 0
    tail_budget: int | None = None
    session: str | None = None
    min_trust: str | None = None

    def check(self, budget: int) -> Partition:
        """This partition if every value is good for a budget of ``budget`` tokens, else BadInput naming it."""
        check_int(self.tail, "tail", 0, TAIL_MAX)
        if self.tail_budget is not None:
            check_int(self.tail_budget, "tail budget", 0, 1_000_000)
            if self.tail_budget > budget:
                raise BadInput(f"bad tail budget {self.tail_budget}: expected at most the budget ({budget})")
        if self.min_trust is not None and self.min_trust not in TRUST_TIERS:
            raise BadInput(f"bad min trust {self.min_trust!r}: expected {', '.join(TRUST_TIERS[:-1])} or "
                           f"{TRUST_TIERS[-1]}")
        if self.session is not None:
            if not isinstance(self.session, str) or not self.session.strip():
                raise BadInput(f"bad session {self.session!r}: expected a session key (a source up to '#')")
            check_text(self.session, "session")
            if not self.wants_tail:
                raise BadInput(f"bad session {self.session!r}: expected with a tail (--tail N or --tail-budget T)")
        return self

    @property
    def wants_tail(self) -> bool:
        return self.tail > 0 or self.tail_budget is not None

    def to_dict(self) -> dict[str, Any]:
        return {"tail": self.tail, "tail_budget": self.tail_budget, "session": self.session,
                "min_trust": self.min_trust}


def tail_lane(p: Any, part: Partition, max_items: int, count: Callable[[str], int]) -> tuple[list[Candidate], str]:
    """The tail's candidates, the most recent first, and what it searched: the ``part.tail`` (else
    ``max_items``) most recent records, by time then id, written at or before ``as_of`` among those the
    filter allows, of the named session, else of the current session (that of the most recent message
    with a source), else of every record the filter allows when none is a message of a session. With a
    tail budget, records are read a few at a time until their lines (by ``count``) pass it."""
    import numpy as np
    ids, sess = sessions(p.store)
    f = p.store.record_facets()
    ok = f.ts <= p.as_of
    if p.within is not None:
        ok &= np.isin(ids, p.within)
    if part.session is not None:
        codes = [i for i, s in enumerate(f.sources) if session_key(s) == part.session]
        mine = (sess >= 0) & np.isin(f.source, codes)
        if not mine.any():
            known = sorted({session_key(f.sources[int(c)]) for c in np.unique(f.source[(sess >= 0)])})
            raise BadInput(f"bad session {part.session!r}: expected the session key of message records (a source "
                           f"up to '#')" + (f"; known: {', '.join(known[:5])}" + (", ..." if len(known) > 5 else "")
                                            if known else "; the store has none"))
        ok &= mine
        what = f"session {part.session}"
    elif (turns := ok & (sess >= 0)).any():
        at = np.flatnonzero(turns)
        last = int(at[np.lexsort((ids[at], f.ts[at]))[-1]])
        ok = turns & (sess == sess[last])
        what = f"session {session_key(f.sources[f.source[last]])} (the current one)"
    else:
        what = "the records" + (" the filter allows" if p.within is not None else "") + " (no session)"
    at = np.flatnonzero(ok)
    n = part.tail or max_items
    newest = [int(r) for r in ids[at[np.lexsort((ids[at], f.ts[at]))[::-1][:n]]]]
    out: list[Candidate] = []
    cost = count(GROUPS[-1][1])
    step = TAIL_READS if part.tail_budget is not None else len(newest)
    for start in range(0, len(newest), max(1, step)):
        if part.tail_budget is not None and cost > part.tail_budget:
            break  # the lines so far pass the tail budget: older records could not fit
        batch = newest[start:start + step]
        p.prefetch(batch)
        for k, rid in enumerate(batch, start + 1):
            row = p.record(rid)
            if row is None:
                continue
            text, ts, kind, _source, _scope, _importance = row
            c = Candidate("tail", "tail", f"rec:{rid}", "record",
                          record_text(text, ts, p.terms, kind if kind in GUIDANCE_KINDS else None), 0.0,
                          {"position": float(k)}, (f"rec:{rid}",), f"record {k} of the most recent of {what}",
                          order=(ts, rid))
            out.append(c)
            cost += count(c.line)
    return out, f"the {plural(n, 'most recent record')} of {what}"


def trust_policy(p: Any, lanes: dict[str, list[Candidate]], min_trust: str) -> list[str]:
    """Leave out (reason ``trust_policy``) each candidate whose trust is below ``min_trust``: a record's is
    its ``meta.trust`` (quarantined below low; any other value, or none, is unrated and stays), a fact's
    (or a dissent's) is its statement's; entities and decisions have none and stay. The refs left out."""
    floor = TRUST_RANK[min_trust]
    cands = [c for cs in lanes.values() for c in cs if "trust_policy" not in c.reasons]
    metas = p.store.record_metas(sorted({int(c.ref[4:]) for c in cands if c.kind == "record"}))
    out: list[str] = []
    for c in cands:
        level: int | None = None
        if c.kind == "record":
            level = RECORD_TRUST.get(record_trust(metas.get(int(c.ref[4:]), {})).lower())
        elif c.kind == "fact":
            s = p.statements.get(int(c.ref[5:])) or p.store.statement(int(c.ref[5:]))
            level = TRUST_RANK.get(s.trust) if s is not None else None
        if level is not None and level < floor:
            c.reasons.append("trust_policy")
            out.append(c.ref)
    return list(dict.fromkeys(out))


def _score_order(c: Candidate) -> tuple[float, str, str]:
    return (-round(c.score, 12), c.ref, c.text)


@dataclass
class Fill:
    """The bundle as it fills: the lines chosen, the tokens used, the groups opened; each part's use."""

    budget: int
    max_items: int
    count: Callable[[str], int]
    headers: dict[str, int]

    def __post_init__(self) -> None:
        self.used = 0
        self.chosen: list[Candidate] = []
        self.cost: dict[int, tuple[str, int]] = {}  # id(candidate) -> (part, tokens it took with its heading)
        self.opened: set[str] = set()
        self.seen: set[tuple[str, str]] = set()
        self.seen_text: set[str] = set()
        self.records: set[str] = set()  # a record is packed once, whichever part brings it
        self.smallest: int | None = None
        self.parts: list[dict[str, Any]] = []

    def run(self, part: str, queue: list[Candidate], room: int, contiguous: bool = False) -> None:
        """Take the candidates of ``queue`` in order while they fit ``room`` tokens; with ``contiguous``
        the first that does not fit ends the part (a tail has no gaps)."""
        used = 0
        i = 0
        stop: str | None = None
        while i < len(queue):
            c = queue[i]
            i += 1
            if "trust_policy" in c.reasons:  # a dissent whose statement the policy left out
                continue
            if c.key() in self.seen or c.text in self.seen_text or (c.kind == "record" and c.ref in self.records):
                c.reasons.append("duplicate")
                continue
            if stop is not None:
                c.reasons.append(stop)
                continue
            if len(self.chosen) >= self.max_items:
                c.reasons.append("max_items")
                stop = "max_items" if contiguous else None
                continue
            cost = self.count(c.line) + (0 if c.group in self.opened else self.headers[c.group])
            self.smallest = cost if self.smallest is None else min(self.smallest, cost)
            if used + cost > room:
                c.reasons.append("budget_exceeded")
                stop = "budget_exceeded" if contiguous else None
                continue
            used += cost
            self.used += cost
            self.opened.add(c.group)
            c.included = True
            c.reasons.append("within_budget")
            self.chosen.append(c)
            self.cost[id(c)] = (part, cost)
            self.seen.add(c.key())
            self.seen_text.add(c.text)
            if c.kind == "record":
                self.records.add(c.ref)
            queue[i:i] = c.dissent  # a fact's dissent goes right after it
        self.parts.append({"part": part, "budget": room})

    def part_use(self) -> list[dict[str, Any]]:
        """Each part's budget, the tokens its lines took (with the headings it opened) and its items."""
        out = []
        for d in self.parts:
            mine = [self.cost[id(c)][1] for c in self.chosen if self.cost[id(c)][0] == d["part"]]
            out.append(d | {"used": sum(mine), "items": len(mine)})
        return out


def select(p: Any, lanes: tuple[str, ...], budget: int, max_items: int, count: Callable[[str], int], as_of: int,
           part: Partition) -> tuple[Fill, str | None]:
    """Fill the budget: guidance, then the tail, then retrieval (docs/packing.md, "Budget partition")."""
    live = [c for lane in lanes if lane not in ("dissent", "tail") for c in p.lanes[lane]
            if not c.reasons or c.reasons == ["low_trust"]]
    guidance = sorted((c for c in live if c.group == "guidance"), key=_score_order)
    rest = sorted((c for c in live if c.group != "guidance"), key=_score_order)
    tail = [c for c in p.lanes.get("tail", []) if not c.reasons]
    fill = Fill(budget, max_items, count, {g: count(h.format(day=_day(as_of))) for g, h in GROUPS})
    fill.run("guidance", guidance, budget)
    room = budget - fill.used
    fill.run("tail", tail, min(room, budget if part.tail_budget is None else part.tail_budget) if part.wants_tail
             else 0, contiguous=True)
    fill.run("retrieval", rest, budget - fill.used)
    message = None
    if not fill.chosen and fill.smallest is not None:
        message = (f"a budget of {plural(budget, 'token')} holds nothing: the smallest candidate needs "
                   f"{plural(fill.smallest, 'token')}")
    for c in p.lanes["dissent"]:
        if not c.reasons:
            c.reasons.append("fact_not_packed")
    return fill, message


def bundle(chosen: list[Candidate], as_of: int) -> str:
    """The bundle's text: each group's heading and its lines, in ``GROUPS`` order; plans by due time,
    the tail oldest first."""
    lines: list[str] = []
    for group, header in GROUPS:
        members = [c for c in chosen if c.group == group]
        if group in ("plans", "tail"):
            members.sort(key=lambda c: c.order)
        if members:
            lines.append(header.format(day=_day(as_of)))
            lines.extend(c.line for c in members)
    return "\n".join(lines)
