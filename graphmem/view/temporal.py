"""The fact view as a pure function of statements (SPEC section 4).

No I/O here: the store feeds statements in and writes intervals out, and the
property tests check these functions directly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from graphmem.model import Interval, Statement
from graphmem.ontology.schema import Registry

_INF = 1 << 62  # an open end, for comparisons only


def _end_for(ends: Sequence[Statement], obj: object, start: int) -> int | None:
    """The first end at or after ``start`` that closes ``obj`` (or every value)."""
    if not ends:
        return None
    best: int | None = None
    for e in ends:
        if e.valid_from >= start and (e.object is None or e.object == obj) and (best is None or e.valid_from < best):
            best = e.valid_from
    return best


def _min_end(a: int | None, b: int | None, c: int | None = None) -> int | None:
    """The earliest of up to three ends (None is open)."""
    if a is None or (b is not None and b < a):
        a = b
    if a is None or (c is not None and c < a):
        a = c
    return a


def intervals_for(stmts: Iterable[Statement], cardinality: str, known_at: int | None = None) -> list[Interval]:
    """Intervals of one (subject, predicate), from the statements visible at ``known_at``.

    ``known_at=None`` means "everything not retracted" (the view as known now).
    The result is ordered by ``valid_from`` then object.
    """
    asserts: list[Statement] = []
    ends: list[Statement] = []
    cites: list[Statement] = []
    if known_at is None:  # the view as known now: everything not retracted
        for s in stmts:
            if s.retracted_at is None:
                op = s.op
                (asserts if op == "assert" else ends if op == "end" else cites).append(s)
    else:
        for s in stmts:
            if s.visible_at(known_at):
                op = s.op
                (asserts if op == "assert" else ends if op == "end" else cites).append(s)
    if not asserts:
        return []
    out = _intervals(asserts, ends, cardinality)
    return _with_cites(out, cites) if cites else out


def _intervals(asserts: list[Statement], ends: list[Statement], cardinality: str) -> list[Interval]:
    if len(asserts) == 1 and not ends:  # the common case: one statement, nothing closing it
        a = asserts[0]
        assert a.object is not None
        return [Interval(a.subject, a.predicate, a.object, a.object_kind, a.valid_from, a.valid_to, (a.id,),
                         a.sources, (), a.object_name)]
    if not ends:
        plain = _many_plain(asserts) if cardinality == "many" else _one_plain(asserts)
        if plain is not None:
            return plain
    # (start, end, stmt, conflicts) segments, merged per object below
    segments: list[tuple[int, int | None, Statement, tuple[int, ...]]] = []
    if cardinality == "many":
        for a in asserts:
            end = _min_end(a.valid_to, _end_for(ends, a.object, a.valid_from)) if ends else a.valid_to
            segments.append((a.valid_from, end, a, ()))
    else:
        segments = _one_segments(asserts, ends)
    return _merge(segments)


def _with_cites(out: list[Interval], cites: list[Statement]) -> list[Interval]:
    """The intervals with the sources of the visible cites of their assertions added (after their own,
    in the cites' id order; docs/semantics.md, "Cites")."""
    by_target: dict[int, list[Statement]] = defaultdict(list)
    for c in sorted(cites, key=_id):
        by_target[c.valid_from].append(c)
    for i, iv in enumerate(out):
        mine = sorted((c for a in iv.assertions for c in by_target.get(a, ())), key=_id)
        if not mine:
            continue
        sources = list(iv.sources)
        for c in mine:
            for src in c.sources:
                if src not in sources:
                    sources.append(src)
        out[i] = iv._replace(sources=tuple(sources))
    return out


def _many_plain(asserts: list[Statement]) -> list[Interval] | None:
    """A ``many`` predicate with no ends and no value asserted twice: one interval per assertion.

    None when the general path is needed (a repeated value, or values of mixed types).
    """
    kind = type(asserts[0].object)
    seen: set[object] = set()
    out: list[Interval] = []
    for a in asserts:
        o = a.object
        if type(o) is not kind or o in seen:
            return None
        seen.add(o)
        vt = a.valid_to
        if vt is not None and vt <= a.valid_from:
            continue  # closed at its own start: never held
        assert o is not None
        out.append(Interval(a.subject, a.predicate, o, a.object_kind, a.valid_from, vt, (a.id,), a.sources, (),
                            a.object_name))
    out.sort(key=_iv_order)
    return out


def _start(s: Statement) -> int:
    return s.valid_from


def _id(s: Statement) -> int:
    return s.id


def _one_plain(asserts: list[Statement]) -> list[Interval] | None:
    """A ``one`` predicate with no ends, no ``valid_to`` and no two assertions at the same start.

    Each value holds until the next different value starts; a run of the same value is one
    interval. None when the general path is needed.
    """
    kind = type(asserts[0].object)
    for a in asserts:
        if a.valid_to is not None or type(a.object) is not kind:
            return None
    asserts = sorted(asserts, key=_start)
    n = len(asserts)
    for i in range(n - 1):
        if asserts[i].valid_from == asserts[i + 1].valid_from:
            return None
    out: list[Interval] = []
    i = 0
    while i < n:
        a = asserts[i]
        j = i + 1
        while j < n and asserts[j].object == a.object:
            j += 1
        end = asserts[j].valid_from if j < n else None
        assert a.object is not None
        if j == i + 1:
            out.append(Interval(a.subject, a.predicate, a.object, a.object_kind, a.valid_from, end, (a.id,),
                                a.sources, (), a.object_name))
        else:
            run = sorted(asserts[i:j], key=_id)
            sources: list[str] = []
            for s in run:
                for src in s.sources:
                    if src not in sources:
                        sources.append(src)
            out.append(Interval(a.subject, a.predicate, a.object, a.object_kind, a.valid_from, end,
                                tuple(s.id for s in run), tuple(sources), (), a.object_name))
        i = j
    return out


_TIE = object()  # the value of a start where assertions of different values tie


def _one_segments(
    asserts: list[Statement], ends: list[Statement]
) -> list[tuple[int, int | None, Statement, tuple[int, ...]]]:
    """The held pieces of each assertion of a ``one`` predicate (SPEC 4; docs/semantics.md, "Ties").

    Each assertion is in force from its ``valid_from`` until the earliest of its ``valid_to``, an
    ``end``, and the next start of a different value: any assertion of another value supersedes what
    ran before it, a tie's loser included. Assertions of different values in force at once always
    share their ``valid_from`` (a tie); wherever they overlap, the most recently recorded (then the
    higher id) decides, and its piece names the tied assertions of other values ranked below it.
    """
    # the assertions by start, and the value asserted at each start (_TIE when different values start there)
    starts: list[int] = []
    groups: list[list[Statement]] = []
    values: list[object] = []
    for a in sorted(asserts, key=_start):
        if starts and starts[-1] == a.valid_from:
            groups[-1].append(a)
            if values[-1] is not _TIE and a.object != values[-1]:
                values[-1] = _TIE
        else:
            starts.append(a.valid_from)
            groups.append([a])
            values.append(a.object)
    n = len(starts)
    # run_end[i]: the first start after i whose value differs from a single value at i (n: none)
    run_end = [n] * n
    for i in range(n - 2, -1, -1):
        v, w = values[i], values[i + 1]
        run_end[i] = run_end[i + 1] if v is not _TIE and w is not _TIE and w == v else i + 1

    segments: list[tuple[int, int | None, Statement, tuple[int, ...]]] = []
    for i, t in enumerate(starts):
        g = groups[i]
        if values[i] is not _TIE:
            k = run_end[i]
            sup = starts[k] if k < n else None
            for a in g:
                vt = a.valid_to
                end = _min_end(vt, sup, _end_for(ends, a.object, t) if ends else None)
                if vt is not None and sup is not None and sup < vt and end == sup:
                    segments.append((t, end, a, _cut(groups[k], a)))
                else:
                    segments.append((t, end, a, ()))
            continue
        # a tie: each assertion's end (_INF: open) and the start index that supersedes it
        in_force: list[tuple[Statement, int, int]] = []
        top: tuple[Statement, int, int] | None = None
        top_rank = (0, 0)
        longest = t
        for a in g:
            # the first start after i where a value other than a's starts
            k = i + 1
            if k < n and values[k] is not _TIE and values[k] == a.object:
                k = run_end[k]
            end = _min_end(a.valid_to, starts[k] if k < n else None, _end_for(ends, a.object, t) if ends else None)
            x = (a, _INF if end is None else end, k)
            in_force.append(x)
            if x[1] > longest:
                longest = x[1]
            r = (a.recorded_at, a.id)
            if top is None or r > top_rank:
                top, top_rank = x, r
        assert top is not None
        if top[1] == longest and longest > t:
            # the common case: the latest recorded holds at least as long as every other, so it
            # decides throughout and each assertion of its value holds to its own end
            obj = top[0].object
            below = [s.id for s in g if s.object != obj]
            for x in in_force:
                a, end, k = x
                if a.object == obj:
                    cut = _cut_at(a, end, k, starts, groups)
                    if x is top:
                        cut = tuple(sorted({*cut, *below}))
                    segments.append((t, None if end >= _INF else end, a, cut))
        else:
            _decide_tie(t, in_force, starts, groups, segments)
    return segments


def _cut(superseding: list[Statement], a: Statement) -> tuple[int, ...]:
    """An explicit valid_to cut short by supersession: the assertions of other values at the cut."""
    return tuple(sorted(s.id for s in superseding if s.object != a.object))


def _cut_at(a: Statement, end: int, k: int, starts: list[int], groups: list[list[Statement]]) -> tuple[int, ...]:
    """``_cut`` for an assertion of a tie that ends at ``end`` and is superseded at start index ``k``."""
    vt = a.valid_to
    if vt is not None and k < len(starts) and starts[k] == end < vt:
        return _cut(groups[k], a)
    return ()


def _decide_tie(t: int, in_force: list[tuple[Statement, int, int]], starts: list[int], groups: list[list[Statement]],
                segments: list[tuple[int, int | None, Statement, tuple[int, ...]]]) -> None:
    """The pieces of the assertions tied at ``t``, each given with its end and the start index that
    supersedes it, when the latest recorded does not hold longest.

    Between one end and the next, the highest ranked in force decides the value, every one in force
    of that value holds, and the decider names the tied assertions of other values ranked below it.
    """
    in_force.sort(key=_rank_of_first, reverse=True)
    lo = t
    while True:
        hi = _INF
        top = -1
        for i, x in enumerate(in_force):
            if x[1] > lo:
                if top < 0:
                    top = i
                if x[1] < hi:
                    hi = x[1]
        if top < 0:
            return
        obj = in_force[top][0].object
        for i in range(top, len(in_force)):
            a, end, k = in_force[i]
            if end <= lo or a.object != obj:
                continue
            conflicts = _cut_at(a, end, k, starts, groups) if end == hi else ()
            if i == top:
                below = tuple(s.id for s, _, _ in in_force[top + 1:] if s.object != obj)
                if below:
                    conflicts = tuple(sorted({*conflicts, *below}))
            segments.append((lo, None if hi >= _INF else hi, a, conflicts))
        if hi >= _INF:
            return
        lo = hi


def _rank_of_first(x: tuple[Statement, int, int]) -> tuple[int, int]:
    return x[0].recorded_at, x[0].id


def _seg_order(seg: tuple[int, int | None, Statement, tuple[int, ...]]) -> tuple[int, int]:
    return seg[0], seg[2].id


def _iv_order(iv: Interval) -> tuple[int, str]:
    return iv.valid_from, str(iv.object)


def _merge(segments: list[tuple[int, int | None, Statement, tuple[int, ...]]]) -> list[Interval]:
    by_obj: dict[tuple[str, object], list[tuple[int, int | None, Statement, tuple[int, ...]]]] = {}
    for seg in segments:
        start, end, s, _ = seg
        if end is not None and end <= start:
            continue  # closed at its own start: never held
        key = (type(s.object).__name__, s.object)
        segs = by_obj.get(key)
        if segs is None:
            by_obj[key] = [seg]
        else:
            segs.append(seg)
    out: list[Interval] = []
    for segs in by_obj.values():
        if len(segs) == 1:
            seg = segs[0]
            out.append(_interval(segs, _INF if seg[1] is None else seg[1]))
            continue
        segs.sort(key=_seg_order)
        cur: list[tuple[int, int | None, Statement, tuple[int, ...]]] = []
        cur_end = 0
        for seg in segs:
            if cur and seg[0] <= cur_end:
                cur.append(seg)
                cur_end = max(cur_end, _INF if seg[1] is None else seg[1])
            else:
                if cur:
                    out.append(_interval(cur, cur_end))
                cur = [seg]
                cur_end = _INF if seg[1] is None else seg[1]
        out.append(_interval(cur, cur_end))
    out.sort(key=_iv_order)
    return out


def _interval(segs: list[tuple[int, int | None, Statement, tuple[int, ...]]], end: int) -> Interval:
    first = segs[0][2]
    assert first.object is not None  # asserts always have an object; only ends may not
    open_end = None if end >= _INF else end
    if len(segs) == 1:  # the common case, without the set and list work below
        conflicts = segs[0][3]
        return Interval(first.subject, first.predicate, first.object, first.object_kind, segs[0][0], open_end,
                        (first.id,), first.sources, tuple(sorted(set(conflicts))) if conflicts else (),
                        first.object_name)
    ids = tuple(sorted({s.id for _, _, s, _ in segs}))
    sources: list[str] = []
    for _, _, s, _ in sorted(segs, key=lambda x: x[2].id):
        for src in s.sources:
            if src not in sources:
                sources.append(src)
    conflicts = tuple(sorted({c for *_, cs in segs for c in cs}))
    return Interval(first.subject, first.predicate, first.object, first.object_kind, segs[0][0], open_end, ids,
                    tuple(sources), conflicts, first.object_name)


def view_for_subject(stmts: Iterable[Statement], registry: Registry, known_at: int | None = None) -> list[Interval]:
    """Every interval of one subject, ordered by predicate then ``valid_from``.

    Statements whose predicate the registry no longer knows are left out (lint
    reports them as ``unknown_predicate``).
    """
    by_pred: dict[str, list[Statement]] = defaultdict(list)
    for s in stmts:
        by_pred[s.predicate].append(s)
    out: list[Interval] = []
    for pred in sorted(by_pred):
        p = registry.predicates.get(pred)
        if p is None:
            continue
        out.extend(intervals_for(by_pred[pred], p.cardinality, known_at))
    return out


def holding(intervals: Iterable[Interval], as_of: int) -> list[Interval]:
    """The intervals that contain ``as_of``."""
    return [iv for iv in intervals if iv.contains(as_of)]


def cite(log: Iterable[Statement], ids: Iterable[int], as_of: int, known_at: int | None) -> Statement | None:
    """The assertion to cite for an interval made of ``ids``: visible at ``known_at``, its own
    interval holding ``as_of`` (the latest such), else the latest visible one."""
    wanted = set(ids)
    mine = [s for s in log if s.id in wanted and s.op == "assert" and s.visible_at(known_at)]
    holds = [s for s in mine if s.valid_from <= as_of and (s.valid_to is None or s.valid_to > as_of)]
    return max(holds or mine or [], key=lambda s: (s.valid_from, s.id), default=None)


def cites_of(log: Iterable[Statement], fid: int, known_at: int | None = None) -> list[Statement]:
    """The cites of assertion ``fid`` in a log, visible at ``known_at`` (None: every one, retracted included)."""
    return [s for s in log if s.op == "cite" and s.valid_from == fid
            and (known_at is None or s.visible_at(known_at))]


def attached_sources(log: Iterable[Statement], st: Statement) -> tuple[str, ...]:
    """The sources of assertion ``st`` now: its own, then those of its cites not retracted, in order."""
    out = list(st.sources)
    for c in sorted(cites_of(log, st.id), key=_id):
        if c.retracted_at is None:
            out.extend(x for x in c.sources if x not in out)
    return tuple(out)
