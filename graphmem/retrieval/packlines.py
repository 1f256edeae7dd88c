"""Lines of a context bundle (docs/packing.md): the token counter, a candidate line, how a record
reads as evidence, and the neighbours lane (the graph neighbourhood of the best records).

Pure of the store but for what the packer hands over; ``packing`` assembles the lanes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from graphmem.evidence.query import snippet
from graphmem.evidence.search import NAME_HITS, rare_name_records, session_key, sessions
from graphmem.model.names import name_terms
from graphmem.model.times import format_instant

GUIDANCE_KINDS = ("rule", "constraint")
SHARED_HITS = 1  # the best records whose entities' other records are candidates (a read per entity)
NEIGHBOUR_HITS = 5  # the best records whose neighbourhood (same session, shared entities) is a lane
SESSION_FACTOR = 0.6  # a turn just before or after a hit in its session, against the hit
SHARED_FACTOR = 0.4  # a record mentioning an entity a hit mentions, against the hit
SHARED_LIMIT = 3  # such records per hit (the nearest in time to it)
SNIPPET_CHARS = 200
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]|_")


def count_tokens(text: str) -> int:
    """graphmem's token counter (``chars4``): a run of letters or digits counts one token per
    4 characters (rounded up), any other character except whitespace one token. No download;
    it overestimates BPE counts of English prose slightly, so a bundle fits a model's budget."""
    return sum((len(t) + 3) // 4 if t[0].isalnum() else 1 for t in _TOKEN.findall(text))


count_tokens.name = "chars4"  # type: ignore[attr-defined]


@dataclass
class Candidate:
    lane: str
    group: str  # where it goes in the bundle: guidance, plans, facts, entities or evidence
    ref: str
    kind: str  # record, fact or entity
    text: str
    score: float
    scores: dict[str, float]
    citations: tuple[str, ...]
    why: str
    reasons: list[str] = field(default_factory=list)
    included: bool = False
    follows: str | None = None  # a dissent line goes right after this fact's line
    dissent: list[Candidate] = field(default_factory=list)
    order: tuple[int, int] = (0, 0)  # a plan's place among the plans: (overdue 0, due 1, no due 2; due time)

    @property
    def line(self) -> str:
        mark = "  ! " if self.lane == "dissent" else "- "
        return f"{mark}{self.text} [{'; '.join(self.citations)}]"

    def key(self) -> tuple[str, str]:
        return (self.ref, self.text)

    def trace_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "kind": self.kind, "text": self.text, "score": round(self.score, 6),
                "scores": {k: round(v, 6) for k, v in self.scores.items()}, "included": self.included,
                "reasons": self.reasons}

    def item_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "kind": self.kind, "lane": self.lane, "text": self.text, "line": self.line,
                "score": round(self.score, 6), "why": self.why, "citations": list(self.citations)}


def _day(us: int | None) -> str:
    return (format_instant(us) or "…")[:10]


def record_text(text: str, ts: int, terms: list[str], kind: str | None = None) -> str:
    """A record as an evidence line shows it: its day (and, for guidance, its kind), then a window of
    ``SNIPPET_CHARS`` characters around the first query word. The ref follows as the line's citation;
    kind and source are in ``citations``, not on the line, so a line costs 4 tokens more than its text.

    >>> record_text("Caroline: I went to a support group yesterday.", 1683554160000000, ["group"])
    '2023-05-08: Caroline: I went to a support group yesterday.'
    """
    return f"{_day(ts)}" + (f" {kind}" if kind else "") + f": {snippet(text, terms, SNIPPET_CHARS)}"


def neighbour_lane(p: Any, records: list[tuple[int, float]]) -> list[Candidate]:
    """The graph neighbourhood of the best records: the turns just before and after each in its
    session (the same session key: the source up to ``#``), the records that mention an entity
    it mentions (MENTIONS) and those that name a rare name it names (``named_neighbours``), the
    nearest in time first. Each scores a share of its hit's score.
    ``p`` is the packer: its record cache, the filter, the query's words and its weights."""
    best = records[:NEIGHBOUR_HITS]
    out: list[Candidate] = []
    if not best:
        return out
    pool = {f"rec:{rid}" for rid, _ in records} | {c.ref for c in p.lanes["records"]}
    found: dict[int, tuple[float, str, str]] = {}  # record id -> (score, relation, hit)

    def offer(rid: int, score: float, why: str) -> None:
        if f"rec:{rid}" not in pool and (rid not in found or found[rid][0] < score):
            found[rid] = (score, why, "")

    import numpy as np
    ids, sess = sessions(p.store)  # the records' sessions, in memory: neighbours are found without reads
    for rid, score in best:
        i = int(np.searchsorted(ids, rid))
        row = p.record(rid)
        if i >= len(ids) or ids[i] != rid or sess[i] < 0 or row is None or not row[3]:
            continue
        for j in (i - 1, i + 1):
            other = int(ids[j]) if 0 <= j < len(ids) else 0
            if other and sess[j] == sess[i] and p.allowed(other):
                offer(other, SESSION_FACTOR * score,
                      f"{'before' if other < rid else 'after'} rec:{rid} in {session_key(row[3])}")
    shared = best[:SHARED_HITS]
    p.mentioned([rid for rid, _ in best[:p.mention_records]])  # one read: the entities lane wants these too
    mentioned = p.mentioned([rid for rid, _ in shared])
    if any(mentioned.values()):
        f = p.store.record_facets()  # the records' times, in memory: the nearest are found without reads
        p.store.records_mentioning([ref for refs in mentioned.values() for ref in refs])  # one read for all hits
        for rid, score in shared:
            refs = mentioned.get(rid) or []
            row = p.record(rid)
            if not refs or row is None:
                continue
            others = p.store.records_mentioning(refs)
            others = others[others != rid]
            if p.within is not None:
                others = others[np.isin(others, p.within)]
            at = np.searchsorted(f.ids, others)
            ok = at < len(f.ids)
            others, at = others[ok], at[ok]
            ok = f.ids[at] == others
            others, at = others[ok], at[ok]
            order = np.lexsort((others, np.abs(f.ts[at] - row[1])))[:SHARED_LIMIT]
            for other in others[order].tolist():
                offer(int(other), SHARED_FACTOR * score, f"shares an entity with rec:{rid}")
    named_neighbours(p, best[:NAME_HITS], offer)
    p.prefetch(sorted(found))
    for rid in sorted(found):
        row = p.record(rid)
        if row is None:
            continue
        text, ts, kind, _source, _scope, importance = row
        share, why, _ = found[rid]
        scores = {"hit": share, **p.weights(ts, importance, text)}
        c = Candidate("neighbours", "evidence", f"rec:{rid}", "record",
                      record_text(text, ts, p.terms, kind if kind in GUIDANCE_KINDS else None),
                      share * scores["time"], scores, (f"rec:{rid}",), why)
        if ts > p.as_of:
            c.reasons.append("after_as_of")
        out.append(c)
    return out


def named_neighbours(p: Any, hits: list[tuple[int, float]], offer: Any) -> None:
    """Offer, for each hit, up to ``SHARED_LIMIT`` records that name a name it speaks of (not its
    speaker; the index's name terms, ``model/names.py``: ``lookup_terms``; a turn by that name
    counts), most shared names first, then the nearest in time. A name in more than ``RARE_NAME``
    of the records (a conversation's speakers) is left out: it tells none apart."""
    import numpy as np
    rows = [(rid, score, p.record(rid)) for rid, score in hits]
    wanted = {rid: name_terms(row[0], speaker=False) for rid, _, row in rows if row is not None}
    lists = rare_name_records(p.store, [t for ts in wanted.values() for t in ts])
    if not lists:
        return
    f = p.store.record_facets()
    for rid, score, row in rows:
        mine = [t for t in wanted.get(rid, []) if t in lists]
        if not mine or row is None or not len(f.ids):
            continue
        ids, counts = np.unique(np.concatenate([lists[t] for t in mine]), return_counts=True)
        keep = ids != rid
        if p.within is not None:
            keep &= np.isin(ids, p.within)
        ids, counts = ids[keep], counts[keep]
        at = np.minimum(np.searchsorted(f.ids, ids), len(f.ids) - 1)
        ok = f.ids[at] == ids
        ids, counts, at = ids[ok], counts[ok], at[ok]
        order = np.lexsort((ids, np.abs(f.ts[at] - row[1]), -counts))[:SHARED_LIMIT]
        for other in ids[order].tolist():
            shared = [t[1:].replace("_", " ") for t in mine if other in set(lists[t].tolist())]
            offer(int(other), SHARED_FACTOR * score, f"names {', '.join(shared)} as rec:{rid} does")
