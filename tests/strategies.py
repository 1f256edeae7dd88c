"""Hypothesis strategies for the temporal property tests (tests/test_temporal_props.py).

Two levels:
- pure: lists of ``Statement`` values with small integer instants, fed straight
  to ``graphmem.view.temporal``;
- store: histories of assert/end/retract operations (API calls with ISO date
  strings) and JSONL import lines with explicit past ``recorded_at`` values.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from graphmem.model import Statement

# -- pure level -----------------------------------------------------------------------

SUBJECT = "project:atlas"
# predicate -> (cardinality, object kind, values); both are in the default registry
PURE_PREDICATES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "status": ("one", "literal", ("idea", "active", "paused")),
    "uses": ("many", "entity", ("tool:a", "tool:b", "tool:c")),
}
SOURCES = ("https://example.org/1", "https://example.org/2", "https://example.org/3")
MAX_INSTANT = 12  # valid_from, recorded_at and end times lie in 0..MAX_INSTANT
HORIZON = MAX_INSTANT + 8  # every valid_to and retracted_at lies below this


_ops = st.sampled_from(("assert", "assert", "assert", "end"))
_instants = st.integers(0, MAX_INSTANT)
_lengths = st.one_of(st.none(), st.integers(1, 6))  # valid_to - valid_from
_retract_after = st.one_of(st.none(), st.none(), st.integers(0, 5))  # retracted_at - recorded_at
_sources = st.lists(st.sampled_from(SOURCES), max_size=2, unique=True)
_values = {p: st.sampled_from(v) for p, (_, _, v) in PURE_PREDICATES.items()}
_end_values = {p: st.one_of(st.none(), st.sampled_from(v)) for p, (_, _, v) in PURE_PREDICATES.items()}


@st.composite
def _raw_statement(draw: st.DrawFn, predicate: str) -> dict[str, Any]:
    # strategies are built once at module level: building them per draw is slow
    kind = PURE_PREDICATES[predicate][1]
    op = draw(_ops)
    vf = draw(_instants)
    rec = draw(_instants)
    obj: str | None = draw(_values[predicate] if op == "assert" else _end_values[predicate])
    length = draw(_lengths) if op == "assert" else None
    after = draw(_retract_after)
    return {"op": op, "predicate": predicate, "object": obj,
            "object_kind": "" if obj is None else kind,
            "valid_from": vf, "valid_to": None if length is None else vf + length, "recorded_at": rec,
            "retracted_at": None if after is None else rec + after, "sources": tuple(draw(_sources)),
            "object_name": obj.split(":")[1].upper() if obj is not None and kind == "entity" else None}


_raw = {p: _raw_statement(p) for p in PURE_PREDICATES}
_raw_any = st.sampled_from(sorted(PURE_PREDICATES)).flatmap(lambda p: _raw[p])
MAX_STATEMENTS = 16
_id_pool = st.lists(st.integers(1, 200), min_size=MAX_STATEMENTS, max_size=MAX_STATEMENTS, unique=True)


def _with_ids(draw: st.DrawFn, raws: list[dict[str, Any]]) -> list[Statement]:
    # unique ids, deliberately not in recording order, so id tie-breaks are exercised
    ids = draw(_id_pool)[:len(raws)]
    return [Statement(i, r["op"], SUBJECT, r["predicate"], r["object"], r["object_kind"], r["valid_from"],
                      r["valid_to"], r["recorded_at"], r["retracted_at"],
                      None if r["retracted_at"] is None else "wrong", r["sources"],
                      object_name=r["object_name"])
            for i, r in zip(ids, raws, strict=True)]


@st.composite
def pure_statements(draw: st.DrawFn, predicate: str, max_size: int = 12) -> list[Statement]:
    """Statements of one (subject, predicate), ids unique."""
    raws = draw(st.lists(_raw[predicate], max_size=max_size))
    return _with_ids(draw, raws)


@st.composite
def pure_subject_statements(draw: st.DrawFn, max_size: int = MAX_STATEMENTS) -> list[Statement]:
    """Statements of one subject over several predicates (both cardinalities)."""
    raws = draw(st.lists(_raw_any, max_size=max_size))
    return _with_ids(draw, raws)


known_ats = st.one_of(st.none(), st.integers(-1, HORIZON))

# -- store level -----------------------------------------------------------------------

ENTITIES = (("Project", "Atlas"), ("Tool", "A"), ("Tool", "B"), ("Tool", "C"), ("Person", "P"), ("Person", "Q"))
# subject -> predicate -> values accepted by the API (refs or literals)
STORE_CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "project:atlas": {
        "status": ("idea", "active", "paused"),
        "owner": ("person:p", "person:q"),
        "uses": ("tool:a", "tool:b", "tool:c"),
        "deadline": ("2025-03-01", "2025-04-01"),
    },
    "tool:a": {
        "uses": ("tool:b", "tool:c"),
        "owner": ("person:p", "person:q"),
    },
}
STORE_SUBJECTS = tuple(STORE_CHOICES)
_PAIRS = tuple((s, p) for s, preds in STORE_CHOICES.items() for p in preds)
FIRST_DAY = 1
LAST_DAY = 12


def _day(d: int, hour: int = 0, offset_h: int = 0) -> str:
    """An ISO string for 2025-01-d at hour (local time at UTC+offset_h)."""
    if hour == 0 and offset_h == 0:
        return f"2025-01-{d:02d}"
    sign = "+" if offset_h >= 0 else "-"
    return f"2025-01-{d:02d}T{hour:02d}:00:00{sign}{abs(offset_h):02d}:00"


def day_utc(d: int, hour: int = 0) -> dt.datetime:
    return dt.datetime(2025, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=d - 1, hours=hour)


# mostly plain dates (many collisions), sometimes a datetime with an offset, rarely "now" (microseconds)
api_times = st.one_of(
    st.integers(FIRST_DAY, LAST_DAY).map(_day),
    st.integers(FIRST_DAY, LAST_DAY).map(_day),
    st.integers(FIRST_DAY, LAST_DAY).map(_day),
    st.builds(_day, st.integers(FIRST_DAY + 1, LAST_DAY), st.sampled_from((6, 12)), st.sampled_from((-3, 2))),
)
api_times_or_now = st.one_of(api_times, api_times, api_times, st.just("now"))


@dataclass(frozen=True)
class Op:
    kind: str  # assert, end, retract
    subject: str = ""
    predicate: str = ""
    object: str | None = None
    at: str | None = None  # valid_from for assert, at for end
    to: str | None = None
    target: int = 0  # retract: index into the facts created so far (mod their number)

    def __repr__(self) -> str:  # short, for falsifying examples
        if self.kind == "retract":
            return f"Op(retract #{self.target})"
        return f"Op({self.kind} {self.subject} {self.predicate} {self.object} {self.at} {self.to})"


_valid_froms = st.one_of(api_times, api_times, api_times, api_times, st.none())
_valid_tos = st.one_of(st.none(), st.none(), api_times_or_now)


@st.composite
def api_op(draw: st.DrawFn) -> Op:
    kind = draw(st.sampled_from(("assert", "assert", "assert", "end", "retract")))
    if kind == "retract":
        return Op("retract", target=draw(st.integers(0, 30)))
    subject, pred = draw(st.sampled_from(_PAIRS))
    values = STORE_CHOICES[subject][pred]
    if kind == "assert":
        # valid_from None: it defaults to the record time (now)
        return Op("assert", subject, pred, draw(st.sampled_from(values)), draw(_valid_froms), draw(_valid_tos))
    return Op("end", subject, pred, draw(st.one_of(st.none(), st.sampled_from(values))), draw(api_times_or_now))


api_histories = st.lists(api_op(), min_size=1, max_size=12)


@st.composite
def import_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """JSONL objects (no entity lines) with explicit past ``recorded_at`` values.

    Statement i (1-based, in file order) is ``"id": "fact:i"`` and becomes ``fact:i`` in an empty store
    (imported in two parts, the id keeps a statement of the second part from counting as one the store
    holds when it repeats one of the first).
    A retraction names an earlier statement not yet retracted, at or after its
    ``recorded_at``.
    """
    n = draw(st.integers(1, 12))
    lines: list[dict[str, Any]] = []
    recorded: list[int] = []  # record day of each statement so far
    retracted: set[int] = set()
    for _ in range(n):
        live = [i for i in range(len(recorded)) if i not in retracted]
        if live and draw(st.integers(0, 4)) == 0:
            i = draw(st.sampled_from(live))
            retracted.add(i)
            rday = draw(st.integers(recorded[i], LAST_DAY + 1))
            lines.append({"op": "retract", "fact": f"fact:{i + 1}", "reason": "wrong",
                          "at": day_utc(rday, 12).strftime("%Y-%m-%dT%H:%M:%SZ")})
            continue
        subject, pred = draw(st.sampled_from(_PAIRS))
        values = STORE_CHOICES[subject][pred]
        rec_day = draw(st.integers(FIRST_DAY, LAST_DAY))
        rec = day_utc(rec_day, 12).strftime("%Y-%m-%dT%H:%M:%SZ")
        if draw(st.integers(0, 3)):
            default_from = draw(st.integers(0, 5)) == 0  # valid_from defaults to recorded_at
            # the first whole day after valid_from (a default one lies at 12:00)
            vf_day = rec_day if default_from else draw(st.integers(FIRST_DAY, LAST_DAY))
            line: dict[str, Any] = {"op": "assert", "id": f"fact:{len(recorded) + 1}", "subject": subject,
                                    "predicate": pred,
                                    "object": draw(st.sampled_from(values)),
                                    "valid_from": None if default_from else _day(vf_day),
                                    "valid_to": None, "recorded_at": rec,
                                    "sources": draw(st.lists(st.sampled_from(SOURCES), max_size=2, unique=True))}
            if draw(st.booleans()):
                line["valid_to"] = _day(vf_day + draw(st.integers(1, 4)))
        else:
            line = {"op": "end", "id": f"fact:{len(recorded) + 1}", "subject": subject, "predicate": pred,
                    "at": _day(draw(st.integers(1, LAST_DAY))),
                    "recorded_at": rec}
            obj = draw(st.one_of(st.none(), st.sampled_from(values)))
            if obj is not None:
                line["object"] = obj
        recorded.append(rec_day)
        lines.append(line)
    return lines


# -- lifecycle (tests/test_lifecycle.py) ------------------------------------------------------

LIFE_KINDS = ("note", "message", "rule", "decision", "plan", "constraint")
LIFE_WORDS = ("atlas", "kuzu", "ledger", "budget", "deploy", "lunch")


@st.composite
def life_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Evidence records for the lifecycle: kinds (some that never archive), importance across the
    tiers, times over two years, words the tests search for, and a plan's due time now and then."""
    n = draw(st.integers(1, 12))
    out = []
    for i in range(n):
        kind = draw(st.sampled_from(LIFE_KINDS))
        words = draw(st.lists(st.sampled_from(LIFE_WORDS), min_size=1, max_size=3))
        rec: dict[str, Any] = {"id": f"r{i}", "text": f"{' '.join(words)} item {i}", "kind": kind,
                               "ts": _life_day(draw(st.integers(0, 700))),
                               "importance": draw(st.sampled_from((0.0, 0.2, 0.49, 0.5, 0.7, 0.8, 1.0)))}
        if kind == "plan" and draw(st.booleans()):
            rec["meta"] = {"due": _life_day(draw(st.integers(0, 900)))}
        out.append(rec)
    return out


def _life_day(d: int) -> str:
    """2024-01-01 plus ``d`` days, as an ISO date."""
    return (dt.date(2024, 1, 1) + dt.timedelta(days=d)).isoformat()


def life_at(d: int) -> str:
    return _life_day(d)


# the days (after 2024-01-01) lifecycle runs are applied as of
life_runs = st.lists(st.integers(0, 1200), min_size=1, max_size=3)
