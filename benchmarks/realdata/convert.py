#!/usr/bin/env python3
"""Convert the NeuSTIP temporal knowledge graphs (YAGO11k, WIKIDATA12k) to graphmem import JSONL.

For benchmarks and experiments only: the data is read from a directory given on
the command line and is never bundled with the package. The output is
deterministic: the same input and options give the same bytes.

    python benchmarks/realdata/convert.py yago11k --data-dir ../shared/data --out /tmp/yago11k.jsonl

The output holds one ``entity`` line per entity (all of them first), then one
``assert`` line per original fact, in file order (train, valid, test). A summary
(entities by type, facts by predicate, rows skipped and why, and how often the
one-valued predicates overlap) goes to stderr. The mapping, the type inference
and every decision about odd dates are described in docs/realdata.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

SPLITS = ("train", "valid", "test")
UNKNOWN_END_YEAR = 3000  # the datasets' "still holds / end unknown"
UNKNOWN_YEAR = 0  # the datasets' "date unknown" (the original files had ####)
EPOCH_DATE = "0001-01-01"  # valid_from for an unknown start (see --unknown-start)
DEFAULT_RECORDED_AT = "2024-01-01T00:00:00Z"

SUBJ, OBJ = "subject", "object"
STRONG, WEAK = "strong", "weak"

# Breaks ties when an entity's roles hint at several types equally often (see
# infer_types). Roles that say nothing give "Thing".
TYPE_PRIORITY = (
    "Person", "Place", "Organization", "Position", "Award", "Event",
    "Designation", "Mineral", "Concept", "Agent", "Work", "Thing",
)
FALLBACK_TYPE = "Thing"


@dataclass(frozen=True)
class Dataset:
    """What differs between the two datasets."""

    folder: str
    inverse_from: int  # relation ids at or above this are inverse rows
    source: str  # the citation URI put on every assertion
    predicates: dict[str, str]  # relation name (as in relation2id.txt) -> predicate
    hints: dict[tuple[str, str], tuple[str, str]]  # (relation, side) -> (type, strength)
    yago_names: bool  # names are <Wiki_Title> (YAGO) rather than Q-ids


YAGO = Dataset(
    folder="yago11k",
    inverse_from=10,
    source="https://github.com/dair-iitd/NeuSTIP#YAGO11k",
    predicates={
        "<wasBornIn>": "born_in",
        "<diedIn>": "died_in",
        "<worksAt>": "works_at",
        "<playsFor>": "plays_for",
        "<hasWonPrize>": "received_award",
        "<isMarriedTo>": "married_to",
        "<owns>": "owns",
        "<graduatedFrom>": "graduated_from",
        "<isAffiliatedTo>": "member_of_party",
        "<created>": "created",
    },
    hints={
        ("<wasBornIn>", SUBJ): ("Person", STRONG), ("<wasBornIn>", OBJ): ("Place", STRONG),
        ("<diedIn>", SUBJ): ("Person", STRONG), ("<diedIn>", OBJ): ("Place", STRONG),
        ("<worksAt>", SUBJ): ("Person", STRONG), ("<worksAt>", OBJ): ("Organization", STRONG),
        ("<playsFor>", SUBJ): ("Person", STRONG), ("<playsFor>", OBJ): ("Organization", STRONG),
        ("<hasWonPrize>", SUBJ): ("Person", WEAK), ("<hasWonPrize>", OBJ): ("Award", STRONG),
        ("<isMarriedTo>", SUBJ): ("Person", STRONG), ("<isMarriedTo>", OBJ): ("Person", STRONG),
        ("<owns>", SUBJ): ("Agent", WEAK),
        ("<graduatedFrom>", SUBJ): ("Person", STRONG), ("<graduatedFrom>", OBJ): ("Organization", STRONG),
        ("<isAffiliatedTo>", SUBJ): ("Person", STRONG), ("<isAffiliatedTo>", OBJ): ("Organization", STRONG),
        ("<created>", SUBJ): ("Agent", WEAK), ("<created>", OBJ): ("Work", WEAK),
    },
    yago_names=True,
)

WIKIDATA = Dataset(
    folder="wikidata12k",
    inverse_from=24,
    source="https://github.com/dair-iitd/NeuSTIP#WIKIDATA12k",
    predicates={
        "capital_of": "capital_of",  # P1376
        "academic_degree": "academic_degree",  # P512
        "IMA_status_and/or_rank": "ima_status",  # P579
        "contains_the_administrative_territorial_entity": "contains_territory",  # P150
        "twinned_administrative_body": "twinned_with",  # P190
        "residence": "residence",  # P551
        "located_in_the_administrative_territorial_entity": "located_in",  # P131
        "significant_event": "significant_event",  # P793
        "heritage_designation": "heritage_designation",  # P1435
        "position_held": "position_held",  # P39
        "country": "country",  # P17
        "member_of_sports_team": "plays_for",  # P54
        "instance_of": "instance_of",  # P31
        "head_of_government": "head_of_government",  # P6
        "nominated_for": "nominated_for",  # P1411
        "title_of_chess_person": "chess_title",  # P2962
        "member_of": "member_of",  # P463
        "winner": "winner",  # P1346
        "employer": "works_at",  # P108
        "educated_at": "educated_at",  # P69
        "award_received": "received_award",  # P166
        "member_of_political_party": "member_of_party",  # P102
        "country_of_citizenship": "citizen_of",  # P27
        "spouse": "married_to",  # P26
    },
    hints={
        ("capital_of", SUBJ): ("Place", STRONG), ("capital_of", OBJ): ("Place", STRONG),
        ("academic_degree", SUBJ): ("Person", STRONG), ("academic_degree", OBJ): ("Designation", STRONG),
        ("IMA_status_and/or_rank", SUBJ): ("Mineral", STRONG),
        ("IMA_status_and/or_rank", OBJ): ("Designation", STRONG),
        ("contains_the_administrative_territorial_entity", SUBJ): ("Place", STRONG),
        ("contains_the_administrative_territorial_entity", OBJ): ("Place", STRONG),
        ("twinned_administrative_body", SUBJ): ("Place", STRONG),
        ("twinned_administrative_body", OBJ): ("Place", STRONG),
        ("residence", SUBJ): ("Person", STRONG), ("residence", OBJ): ("Place", STRONG),
        ("located_in_the_administrative_territorial_entity", SUBJ): ("Place", WEAK),
        ("located_in_the_administrative_territorial_entity", OBJ): ("Place", STRONG),
        ("significant_event", OBJ): ("Event", STRONG),
        ("heritage_designation", SUBJ): ("Place", WEAK), ("heritage_designation", OBJ): ("Designation", STRONG),
        ("position_held", SUBJ): ("Person", STRONG), ("position_held", OBJ): ("Position", STRONG),
        ("country", SUBJ): ("Place", WEAK), ("country", OBJ): ("Place", STRONG),
        ("member_of_sports_team", SUBJ): ("Person", STRONG),
        ("member_of_sports_team", OBJ): ("Organization", STRONG),
        ("instance_of", OBJ): ("Concept", STRONG),
        ("head_of_government", SUBJ): ("Place", STRONG), ("head_of_government", OBJ): ("Person", STRONG),
        ("nominated_for", OBJ): ("Award", STRONG),
        ("title_of_chess_person", SUBJ): ("Person", STRONG),
        ("title_of_chess_person", OBJ): ("Designation", STRONG),
        ("member_of", SUBJ): ("Agent", WEAK), ("member_of", OBJ): ("Organization", STRONG),
        ("winner", SUBJ): ("Award", WEAK), ("winner", OBJ): ("Agent", WEAK),
        ("employer", SUBJ): ("Person", STRONG), ("employer", OBJ): ("Organization", STRONG),
        ("educated_at", SUBJ): ("Person", STRONG), ("educated_at", OBJ): ("Organization", STRONG),
        ("award_received", OBJ): ("Award", STRONG),
        ("member_of_political_party", SUBJ): ("Person", STRONG),
        ("member_of_political_party", OBJ): ("Organization", STRONG),
        ("country_of_citizenship", SUBJ): ("Person", STRONG),
        ("country_of_citizenship", OBJ): ("Place", STRONG),
        ("spouse", SUBJ): ("Person", STRONG), ("spouse", OBJ): ("Person", STRONG),
    },
    yago_names=False,
)

DATASETS = {"yago11k": YAGO, "wikidata12k": WIKIDATA}


# --- vocabulary ------------------------------------------------------------------


@dataclass(frozen=True)
class PredicateSpec:
    name: str
    cardinality: str
    subject_types: frozenset[str]
    object_types: frozenset[str]
    pairs: frozenset[tuple[str, str]]  # the edge type's allowed (from, to) pairs


def load_vocabulary(dirs: list[Path]) -> dict[str, PredicateSpec]:
    """Entity-valued predicates from every ``ontology/*.toml`` and ``predicates/*.toml`` under ``dirs``."""
    entity_types: set[str] = set()
    edges: dict[str, set[tuple[str, str]]] = {}
    raw_preds: dict[str, dict[str, Any]] = {}
    for d in dirs:
        for path in sorted((d / "ontology").glob("*.toml")):
            doc = tomllib.loads(path.read_text("utf-8"))
            entity_types.update(doc.get("entity_types", {}))
            for name, spec in doc.get("edge_types", {}).items():
                edges[name] = {(a, b) for a, b in spec["pairs"]}
        for path in sorted((d / "predicates").glob("*.toml")):
            raw_preds.update(tomllib.loads(path.read_text("utf-8")).get("predicates", {}))
    out: dict[str, PredicateSpec] = {}
    for name, spec in raw_preds.items():
        obj = spec.get("object", {})
        if "entity_types" not in obj:
            continue
        out[name] = PredicateSpec(
            name=name,
            cardinality=spec["cardinality"],
            subject_types=frozenset(spec["subject_types"]),
            object_types=frozenset(obj["entity_types"]),
            pairs=frozenset(edges.get(spec.get("edge", ""), set())),
        )
    unknown = set(TYPE_PRIORITY) - entity_types
    if unknown:
        raise SystemExit(f"convert.py: the ontology does not declare {sorted(unknown)}")
    return out


# --- reading ---------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    split: str
    line: int
    subject: int
    relation: str
    object: int
    start: int
    end: int


_UESC = re.compile(r"\\u([0-9a-fA-F]{4})")


def entity_name(raw: str, yago: bool) -> str:
    """A readable name: ``<Getafe_CF>`` -> ``Getafe CF``; Wikidata Q-ids stay as they are."""
    if not yago:
        return raw
    name = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    name = _UESC.sub(lambda m: chr(int(m.group(1), 16)), name)  # YAGO writes " as \u0022
    return " ".join(name.replace("_", " ").split())


_NON_ALNUM = re.compile(r"[\W_]+")


def slug(name: str) -> str:
    """Lower-case, runs of non-alphanumerics become ``-``, trimmed (Unicode letters count as alphanumeric)."""
    return _NON_ALNUM.sub("-", name.lower()).strip("-")


def read_table(path: Path) -> dict[int, str]:
    """``name<TAB>id`` lines as {id: name}."""
    out: dict[int, str] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                name, ident = line.rstrip("\n").rsplit("\t", 1)
                out[int(ident)] = name
    return out


def read_rows(folder: Path, ds: Dataset, relations: dict[int, str], names: dict[int, str],
              skipped: collections.Counter[tuple[str, str]]) -> list[Row]:
    """The original (non-inverse) rows of every split, in file order."""
    rows: list[Row] = []
    for split in SPLITS:
        with (folder / f"{split}.txt").open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                parts = line.rstrip("\n").split("\t")
                try:
                    s, r, o, start, end = (int(p) for p in parts)
                except ValueError:
                    skipped[("malformed line", "?")] += 1
                    continue
                if r >= ds.inverse_from:
                    continue  # an inverse row: the original row is elsewhere in the files
                if r not in relations or s not in names or o not in names:
                    skipped[("unknown relation or entity id", relations.get(r, "?"))] += 1
                    continue
                rows.append(Row(split, n, s, relations[r], o, start, end))
    return rows


# --- types -----------------------------------------------------------------------


def infer_types(rows: list[Row], ds: Dataset) -> tuple[dict[int, str], collections.Counter[str]]:
    """Each entity's type from the roles it plays; also counts how each was decided.

    Every (relation, side) may hint a type, strongly or weakly. Strong hints win
    over weak ones. Among strong hints the type hinted by the most rows wins (a
    tie goes to the type earlier in TYPE_PRIORITY); among weak hints the type
    earlier in TYPE_PRIORITY wins, so that a specific guess (Person, Place)
    refines the vague Agent. No hint at all gives Thing.
    """
    hints: dict[int, dict[str, collections.Counter[str]]] = collections.defaultdict(
        lambda: {STRONG: collections.Counter(), WEAK: collections.Counter()})
    seen: set[int] = set()
    for row in rows:
        for ent, side in ((row.subject, SUBJ), (row.object, OBJ)):
            seen.add(ent)
            hint = ds.hints.get((row.relation, side))
            if hint:
                hints[ent][hint[1]][hint[0]] += 1
    rank = {t: i for i, t in enumerate(TYPE_PRIORITY)}
    types: dict[int, str] = {}
    how: collections.Counter[str] = collections.Counter()
    for ent in sorted(seen):
        h = hints[ent]
        for tier in (STRONG, WEAK):
            if h[tier]:
                count = h[tier] if tier == STRONG else collections.Counter(dict.fromkeys(h[tier], 1))
                types[ent] = min(count, key=lambda t: (-count[t], rank[t]))
                how[f"{tier} role" + (" (roles disagree)" if len(h[tier]) > 1 else "")] += 1
                break
        else:
            types[ent] = FALLBACK_TYPE
            how["no telling role"] += 1
    return types, how


def unique_names(ids: list[int], names: dict[int, str], types: dict[int, str],
                 notes: collections.Counter[str]) -> dict[int, str]:
    """Names made unique per type by slug: every member of a colliding group gets `` #<id>``."""
    groups: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for ent in ids:
        groups[(types[ent], slug(names[ent]))].append(ent)
    out: dict[int, str] = {}
    for (_, sl), members in groups.items():
        for ent in members:
            if len(members) > 1 or not sl:
                out[ent] = f"{names[ent]} #{ent}"
                notes["names disambiguated with #id"] += 1
            else:
                out[ent] = names[ent]
    return out


# --- dates -----------------------------------------------------------------------


def year_date(year: int) -> str:
    return f"{year:04d}-01-01"


# --- conversion ------------------------------------------------------------------


@dataclass
class Result:
    lines: list[str]
    entities_by_type: collections.Counter[str]
    facts_by_predicate: collections.Counter[str]
    skipped: collections.Counter[tuple[str, str]]  # (reason, relation) -> rows
    notes: collections.Counter[str]
    type_decisions: collections.Counter[str]
    overlap: dict[str, dict[str, int]]
    cardinality: dict[str, str]
    original_rows: int


def convert(ds: Dataset, data_dir: Path, preds: dict[str, PredicateSpec], *,
            recorded_at: str, unknown_start: str) -> Result:
    folder = data_dir / ds.folder
    needed = ["entity2id.txt", "relation2id.txt", *(f"{s}.txt" for s in SPLITS)]
    absent = [n for n in needed if not (folder / n).is_file()]
    if absent:
        raise SystemExit(f"convert.py: {folder} lacks {', '.join(absent)}; expected the NeuSTIP files")
    raw_names = read_table(folder / "entity2id.txt")
    relations = read_table(folder / "relation2id.txt")
    skipped: collections.Counter[tuple[str, str]] = collections.Counter()
    notes: collections.Counter[str] = collections.Counter()

    missing = sorted(set(ds.predicates.values()) - set(preds))
    if missing:
        raise SystemExit(f"convert.py: predicates not in the registry: {missing}")
    unmapped = sorted(r for i, r in relations.items() if i < ds.inverse_from and r not in ds.predicates)
    if unmapped:
        raise SystemExit(f"convert.py: relations without a predicate: {unmapped}")

    rows = read_rows(folder, ds, relations, raw_names, skipped)
    original_rows = len(rows)

    # Exact repeats (same subject, relation, object and years) are one fact.
    seen_rows: set[tuple[int, str, int, int, int]] = set()
    unique_rows: list[Row] = []
    for row in rows:
        key = (row.subject, row.relation, row.object, row.start, row.end)
        if key in seen_rows:
            skipped[("duplicate of an earlier row", row.relation)] += 1
            continue
        seen_rows.add(key)
        unique_rows.append(row)

    types, type_decisions = infer_types(unique_rows, ds)
    names = {e: entity_name(raw_names[e], ds.yago_names) for e in types}
    names = unique_names(sorted(types), names, types, notes)
    refs = {e: f"{types[e].lower()}:{slug(names[e])}" for e in types}

    lines: list[str] = []
    entities_by_type: collections.Counter[str] = collections.Counter()
    for ent in sorted(types):
        lines.append(_dump({"op": "entity", "type": types[ent], "name": names[ent]}))
        entities_by_type[types[ent]] += 1

    recorded_year = int(recorded_at[:4])
    facts_by_predicate: collections.Counter[str] = collections.Counter()
    emitted: list[tuple[str, int, int, int, int, bool]] = []  # predicate, s, o, start, end, unknown start
    for row in unique_rows:
        pred = preds[ds.predicates[row.relation]]
        st, ot = types[row.subject], types[row.object]
        if st not in pred.subject_types or ot not in pred.object_types or (st, ot) not in pred.pairs:
            skipped[(f"types not allowed: {st} -{pred.name}-> {ot}", row.relation)] += 1
            continue
        start, end = row.start, row.end
        if start < 0 or end < 0 or start > 9998 or (end > 9998 and end != UNKNOWN_END_YEAR):
            skipped[("year out of range", row.relation)] += 1
            continue
        open_end = end in (UNKNOWN_END_YEAR, UNKNOWN_YEAR)
        if start == UNKNOWN_YEAR:
            if unknown_start == "skip":
                skipped[("unknown start year (--unknown-start skip)", row.relation)] += 1
                continue
            valid_from = EPOCH_DATE
            notes["unknown start year -> " + EPOCH_DATE] += 1
            if end == UNKNOWN_YEAR:
                notes["unknown start and end year (0 0) -> open interval from " + EPOCH_DATE] += 1
        else:
            if not open_end and end < start:
                skipped[("end year before start year", row.relation)] += 1
                continue
            valid_from = year_date(start)
            if start > recorded_year:
                notes[f"start year after recorded_at ({recorded_year}); kept, lint says future_fact"] += 1
            if not open_end and start == end:
                notes["start year == end year (one-year interval)"] += 1
        if end == UNKNOWN_YEAR and start != UNKNOWN_YEAR:
            notes["unknown end year (0) -> open end"] += 1
        if end == UNKNOWN_END_YEAR:
            notes["end year 3000 -> valid_to null"] += 1
        valid_to = None if open_end else year_date(end + 1)
        if row.subject == row.object:
            notes["subject == object (kept)"] += 1
        lines.append(_dump({
            "op": "assert",
            "subject": refs[row.subject],
            "predicate": pred.name,
            "object": refs[row.object],
            "valid_from": valid_from,
            "valid_to": valid_to,
            "sources": [ds.source],
            "recorded_at": recorded_at,
            "asserted_by": "import",
        }))
        facts_by_predicate[pred.name] += 1
        emitted.append((pred.name, row.subject, row.object, start, end, start == UNKNOWN_YEAR))

    used = {e for f in emitted for e in (f[1], f[2])}
    if len(used) < len(types):
        notes["entities left without any assert line (all their rows skipped)"] = len(types) - len(used)

    overlap = {p: overlap_stats([f for f in emitted if f[0] == p]) for p in sorted({f[0] for f in emitted})}
    return Result(lines, entities_by_type, facts_by_predicate, skipped, notes, type_decisions,
                  overlap, {p: preds[p].cardinality for p in overlap}, original_rows)


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


# --- overlap of values for the same subject -----------------------------------------

OPEN = 10**6  # an unknown end, as a year


def overlap_stats(facts: list[tuple[str, int, int, int, int, bool]]) -> dict[str, int]:
    """How often one subject holds two different values of a predicate at once.

    Years are inclusive, as in the data. "As imported": an unknown end (3000 or
    0) is open and an unknown start counts from year 1, as the JSONL says.
    "Dated": both facts have a known start and a known end, so the data really
    claims both values at once. ``lint`` counts the subjects that graphmem's lint
    flags with single_value_conflict when the predicate is one-valued: two values
    with the same valid_from, or an explicit valid_to cut short by a different
    value that starts before it (per subject, this matched graphmem's lint on
    both datasets); ``lint_not_boundary`` leaves out the cuts where the other
    value starts in the last year of the first (a transfer year).
    """
    by_subject: dict[int, list[tuple[int, int, int, bool, bool]]] = collections.defaultdict(list)
    for _, s, o, start, end, unknown in facts:
        open_end = end in (UNKNOWN_END_YEAR, UNKNOWN_YEAR)
        by_subject[s].append((o, 1 if unknown else start, OPEN if open_end else end, unknown, open_end))
    keys = ("facts", "subjects", "subjects_2plus_values",
            "overlap_subjects", "overlap_facts", "overlap_pairs",
            "dated_overlap_subjects", "dated_overlap_pairs", "dated_overlap_pairs_1_year",
            "lint_subjects", "lint_not_boundary_subjects", "lint_same_start_subjects")
    st = dict.fromkeys(keys, 0)
    for vals in by_subject.values():
        st["facts"] += len(vals)
        st["subjects"] += 1
        if len({v[0] for v in vals}) > 1:
            st["subjects_2plus_values"] += 1
        in_overlap: set[int] = set()
        dated = same_start = cut = deep_cut = False
        for i, (oi, si, ei, ui, oei) in enumerate(vals):
            for j in range(i + 1, len(vals)):
                oj, sj, ej, uj, oej = vals[j]
                if oi == oj:
                    continue
                if si == sj:
                    same_start = True
                if max(si, sj) <= min(ei, ej):
                    in_overlap.update((i, j))
                    st["overlap_pairs"] += 1
                    if not (ui or uj or oei or oej):
                        dated = True
                        st["dated_overlap_pairs"] += 1
                        if min(ei, ej) == max(si, sj):
                            st["dated_overlap_pairs_1_year"] += 1
            if not oei:
                starts = [s for o, s, _, _, _ in vals if o != oi and si < s <= ei]
                cut = cut or bool(starts)
                deep_cut = deep_cut or any(s < ei for s in starts)
        if in_overlap:
            st["overlap_subjects"] += 1
            st["overlap_facts"] += len(in_overlap)
        st["dated_overlap_subjects"] += dated
        st["lint_subjects"] += same_start or cut
        st["lint_not_boundary_subjects"] += same_start or deep_cut
        st["lint_same_start_subjects"] += same_start
    return st


# --- command line ------------------------------------------------------------------


def summary(ds_name: str, res: Result, out: str) -> str:
    w: list[str] = []
    n_assert = sum(res.facts_by_predicate.values())
    n_skip = sum(res.skipped.values())
    w.append(f"{ds_name}: {res.original_rows} original rows -> {n_assert} assert lines, "
             f"{n_skip} skipped; {sum(res.entities_by_type.values())} entity lines -> {out}")
    w.append("entities by type:")
    w += [f"  {t:<14}{n:>7}" for t, n in sorted(res.entities_by_type.items(), key=lambda x: (-x[1], x[0]))]
    w.append("how types were decided:")
    w += [f"  {k:<32}{n:>7}" for k, n in sorted(res.type_decisions.items())]
    w.append("facts by predicate:")
    w += [f"  {p:<22}{n:>7}" for p, n in sorted(res.facts_by_predicate.items(), key=lambda x: (-x[1], x[0]))]
    w.append("rows skipped:" + ("" if res.skipped else " none"))
    w += [f"  {n:>6}  {reason}  [{rel}]"
          for (reason, rel), n in sorted(res.skipped.items(), key=lambda x: (-x[1], x[0]))]
    w.append("notes (rows kept):")
    w += [f"  {n:>6}  {k}" for k, n in sorted(res.notes.items(), key=lambda x: (-x[1], x[0]))]
    cols = (("facts", "facts"), ("subjects", "subjects"), ("2+vals", "subjects_2plus_values"),
            ("overlap", "overlap_subjects"), ("dated", "dated_overlap_subjects"),
            ("pairs", "dated_overlap_pairs"), ("=1y", "dated_overlap_pairs_1_year"),
            ("lint~", "lint_subjects"), ("lint~>1y", "lint_not_boundary_subjects"),
            ("ties", "lint_same_start_subjects"))
    for card in ("one", "many"):
        w.append(f"{card}-valued predicates: subjects holding two different values at once")
        w.append(f"  {'predicate':<22}" + "".join(f"{c:>9}" for c, _ in cols))
        for p, st in res.overlap.items():
            if res.cardinality[p] == card:
                w.append(f"  {p:<22}" + "".join(f"{st[k]:>9}" for _, k in cols))
    w.append("  overlap: subjects with two values sharing a year as imported (unknown end open, unknown start"
             " from year 1); dated: both facts fully dated; pairs/=1y: such dated pairs, and those sharing"
             " only one year; lint~: subjects with a single_value_conflict if one-valued (matched graphmem's lint on"
             " both datasets); lint~>1y: the same without cuts in the last year (transfer years);"
             " ties: two values with the same start")
    return "\n".join(w) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", choices=sorted(DATASETS))
    ap.add_argument("--data-dir", required=True, type=Path,
                    help="the folder holding yago11k/ and wikidata12k/")
    ap.add_argument("--out", required=True, help="the JSONL file to write ('-' for stdout)")
    ap.add_argument("--recorded-at", default=DEFAULT_RECORDED_AT,
                    help=f"recorded_at of every assertion (default {DEFAULT_RECORDED_AT})")
    ap.add_argument("--unknown-start", choices=("epoch", "skip"), default="epoch",
                    help=f"a start year of 0 (unknown): import from {EPOCH_DATE} (default) or skip the row")
    ap.add_argument("--summary-json", type=Path, help="also write the summary as JSON to this file")
    args = ap.parse_args(argv)

    try:
        datetime.fromisoformat(args.recorded_at)
    except ValueError:
        ap.error(f"bad --recorded-at {args.recorded_at!r}: expected an ISO-8601 datetime such as {DEFAULT_RECORDED_AT}")
    ds = DATASETS[args.dataset]
    preds = load_vocabulary([REPO / "graphmem", HERE])
    res = convert(ds, args.data_dir, preds, recorded_at=args.recorded_at, unknown_start=args.unknown_start)
    text = "\n".join(res.lines) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    sys.stderr.write(summary(args.dataset, res, args.out))
    if args.summary_json:
        args.summary_json.write_text(json.dumps({
            "dataset": args.dataset,
            "original_rows": res.original_rows,
            "assert_lines": sum(res.facts_by_predicate.values()),
            "entities_by_type": dict(sorted(res.entities_by_type.items())),
            "type_decisions": dict(sorted(res.type_decisions.items())),
            "facts_by_predicate": dict(sorted(res.facts_by_predicate.items())),
            "skipped": [{"reason": r, "relation": rel, "rows": n}
                        for (r, rel), n in sorted(res.skipped.items())],
            "notes": dict(sorted(res.notes.items())),
            "overlap": {p: {"cardinality": res.cardinality[p], **st} for p, st in res.overlap.items()},
        }, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
