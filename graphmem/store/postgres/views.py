"""The materialized fact view: a ``subject`` row per subject (its log and intervals as the same compact
JSON as the Kuzu store's) and a ``fact_edge`` row per entity-valued interval whose ends are entities
the ontology lets that edge join; written a subject at a time, or whole from batches (``write_view_files``
then ``load_view``)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from graphmem.model import Interval, Statement
from graphmem.model.facts import Fact, fact_order
from graphmem.model.times import in_range
from graphmem.store.common.codecs import (
    _iv_from_row,
    loads,
    log_text,
    pack,
    statements_from_log,
    unpack,
    view_text,
)
from graphmem.store.common.forms import ViewForms
from graphmem.store.postgres.statements import PgStatements

_IV_COLS = "subject, predicate, pos, valid_from, valid_to, row"
_EDGE_COLS = "label, src, dst, src_type, dst_type, predicate, valid_from, valid_to, assertions, conflicts"


def _ids(ids: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, ids)) + "]"


def edge_key(label: str, dst: str, predicate: str, vf: int, vt: int | None, ids: Iterable[int],
             conflicts: Iterable[int]) -> str:
    """A fact edge as ``stored_view_rows`` and ``edge_keys`` write it (one form for both)."""
    return f"{label} {dst} {predicate} {vf} {'' if vt is None else vt} {_ids(tuple(ids))} {_ids(tuple(conflicts))}"


@dataclasses.dataclass
class PgViewBatch:
    """The view's rows written aside (a file each for subjects and edges) for ``load_view``."""

    subjects: str
    edges: str
    intervals: str
    counts: dict[str, int]

    def discard(self) -> None:
        for name in (self.subjects, self.edges, self.intervals):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)


def _dump(rows: list[tuple[Any, ...]]) -> str:
    fd, name = tempfile.mkstemp(suffix=".view")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(rows, f, protocol=pickle.HIGHEST_PROTOCOL)
    return name


def _load(name: str) -> list[tuple[Any, ...]]:
    with open(name, "rb") as f:
        rows: list[tuple[Any, ...]] = pickle.load(f)  # noqa: S301  (files this process or its children wrote)
    return rows


class PgViews(ViewForms, PgStatements):
    """The subject rows and the fact edges."""

    @staticmethod
    def _interval_rows(ref: str, view: list[Interval], predicates: set[str] | None) -> list[tuple[Any, ...]]:
        """The ``view_interval`` rows of ``predicates`` (None: all): ``pos`` counts within (subject, predicate),
        so the rows ordered by (subject, predicate, pos) spell the view (ordered by predicate, layout 2)."""
        rows: list[tuple[Any, ...]] = []
        seen: dict[str, int] = {}
        for iv in view:
            pos = seen[iv.predicate] = seen.get(iv.predicate, -1) + 1
            if predicates is None or iv.predicate in predicates:
                rows.append((ref, iv.predicate, pos, iv.valid_from, iv.valid_to, view_text([iv])[1:-1]))
        return rows

    def is_fact_edge(self, name: str) -> bool:
        from graphmem.ontology.schema import RECORD_TYPE
        return not any(RECORD_TYPE in p for p in self.ontology.edge_types[name].pairs)

    def _edge_for(self, stype: str, iv: Interval) -> tuple[str, str] | None:
        p = self.registry.predicates.get(iv.predicate)
        if p is None or p.edge is None:
            return None
        otype = self.ontology.type_for_prefix(str(iv.object).partition(":")[0])
        if otype is None or (stype, otype) not in self.ontology.edge_types[p.edge].pairs:
            return None
        return p.edge, otype

    def _edge_rows(self, ref: str, view: list[Interval], predicates: set[str] | None) -> list[tuple[Any, ...]]:
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return []
        out = []
        for iv in view:
            if iv.object_kind != "entity" or (predicates is not None and iv.predicate not in predicates):
                continue
            edge = self._edge_for(stype, iv)
            if edge is not None:
                out.append((edge[0], ref, iv.object, stype, edge[1], iv.predicate, iv.valid_from, iv.valid_to,
                            list(iv.assertions), list(iv.conflicts)))
        return out

    def edge_keys(self, ref: str, view: list[Interval]) -> list[str]:
        return sorted(edge_key(r[0], r[2], r[5], r[6], r[7], r[8], r[9]) for r in self._edge_rows(ref, view, None))

    def stored_view_rows(self) -> Callable[[], tuple[dict[str, tuple[str, str, str]], dict[str, list[str]]]]:
        """Every subject's stored (name, log, view) and its fact edges' keys, sorted. A view whose ``view_interval``
        rows do not spell it is read as empty, so a check counts it and a rebuild writes it again."""
        subjects = {ref: (name, log, view) for ref, name, log, view in self._q("SELECT ref, name, log, view FROM subject")}
        edges: dict[str, list[str]] = {}
        for label, src, dst, pred, vf, vt, ids, conf in self._q(
                "SELECT label, src, dst, predicate, valid_from, valid_to, assertions, conflicts FROM fact_edge"):
            edges.setdefault(src, []).append(edge_key(label, dst, pred, vf, vt, ids, conf))
        rows: dict[str, list[str]] = {}
        for ref, row in self._q("SELECT subject, row FROM view_interval ORDER BY subject, predicate, pos"):
            rows.setdefault(ref, []).append(row)
        for ref, (name, log, view) in subjects.items():  # interval rows out of step: the view counts as differing
            if view != "[" + ",".join(rows.pop(ref, [])) + "]":
                subjects[ref] = (name, log, "")
        for keys in edges.values():
            keys.sort()
        return lambda: (subjects, edges)

    def subject_log(self, ref: str) -> list[Statement]:
        return self.subject_log_and_view(ref)[0]

    def subject_view(self, ref: str) -> list[Interval]:
        return self.subject_name_and_view(ref)[1]

    def subject_name_and_view(self, ref: str) -> tuple[str | None, list[Interval]]:
        rows = self._q("SELECT name, view FROM subject WHERE ref = %s", (ref,))
        if not rows:
            return None, []
        name, view = rows[0]
        return name, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def subject_log_and_view(self, ref: str) -> tuple[list[Statement], list[Interval]]:
        _, log, view = self.subject_name_log_and_view(ref)
        return log, view

    def subject_name_log_and_view(self, ref: str) -> tuple[str | None, list[Statement], list[Interval]]:
        rows = self._q("SELECT name, log, view FROM subject WHERE ref = %s", (ref,))
        if not rows:
            return None, [], []
        name, log, text = rows[0]
        view = [_iv_from_row(ref, r) for r in loads(text or "[]")]
        names: dict[Any, str | None] = {iv.object: iv.object_name for iv in view if iv.object_kind == "entity"}

        def name_of(obj: str) -> str | None:
            if obj not in names:
                e = self.entity(obj)
                names[obj] = e.name if e else None
            return names[obj]
        return name, statements_from_log(ref, unpack(log), name_of)[0], view

    def all_subject_rows(self, prefix: str | None = None) -> Iterator[tuple[str, str | None, list[Interval]]]:
        rows = (self._q("SELECT ref, name, view FROM subject WHERE starts_with(ref, %s)", (prefix,)) if prefix
                else self._q("SELECT ref, name, view FROM subject"))
        for ref, name, view in rows:
            yield ref, name, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def subject_facts_holding(self, as_of: int, predicate: str | None = None, prefix: str | None = None,
                              ) -> tuple[list[Fact], list[tuple[str, str | None]]] | None:
        """The facts of ``predicate`` (None: all) that hold at ``as_of``, by subject ref (code point order)
        and each subject's by ``fact_order``; and each of their subjects' ref and name, in the same order.
        None when a time lies outside the years a datetime holds (the caller reads the intervals)."""
        facts: list[Fact] = []
        named: list[tuple[str, str | None]] = []
        for ref, name, view in sorted(self._rows_holding(as_of, predicate, prefix), key=lambda r: r[0]):
            if not all(in_range(iv.valid_from) and (iv.valid_to is None or in_range(iv.valid_to)) for iv in view):
                return None
            facts += sorted(Fact.many(view), key=fact_order)
            named.append((ref, name))
        return facts, named

    def _rows_holding(self, as_of: int, predicate: str | None = None, prefix: str | None = None,
                      ) -> Iterator[tuple[str, str | None, list[Interval]]]:
        """``subject_facts_holding`` as view intervals. With a predicate, only the intervals that hold are
        read (``view_interval``, by its predicate index)."""
        new = tuple.__new__
        if predicate is not None:
            sql = ("SELECT i.subject, s.name, i.row FROM view_interval i JOIN subject s ON s.ref = i.subject "
                   "WHERE i.predicate = %s AND i.valid_from <= %s AND (i.valid_to IS NULL OR i.valid_to > %s)")
            params: list[Any] = [predicate, as_of, as_of]
            if prefix:
                sql += " AND starts_with(i.subject, %s)"
                params.append(prefix)
            current: tuple[str, str | None] | None = None
            out: list[Interval] = []
            for ref, name, row in self._q(sql + ' ORDER BY i.subject COLLATE "C", i.pos', params):
                if current is None or current[0] != ref:
                    if current is not None:
                        yield current[0], current[1], out
                    current, out = (ref, name), []
                r = loads(row)
                out.append(new(Interval, (ref, r[0], r[1], r[2], r[3], r[4], tuple(r[5]), tuple(r[6]), tuple(r[7]),
                                          r[8])))
            if current is not None:
                yield current[0], current[1], out
            return
        where, params = ["true"], []
        if prefix:
            where.append("starts_with(ref, %s)")
            params.append(prefix)
        for ref, name, text in self._q(f"SELECT ref, name, view FROM subject WHERE {' AND '.join(where)}", params):
            out = [new(Interval, (ref, r[0], r[1], r[2], r[3], r[4], tuple(r[5]), tuple(r[6]), tuple(r[7]), r[8]))
                   for r in loads(text or "[]")
                   if (predicate is None or r[0] == predicate) and r[3] <= as_of and (r[4] is None or as_of < r[4])]
            if out:
                yield ref, name, out

    def all_subject_views(self) -> Iterator[tuple[str, list[Interval]]]:
        for ref, view in self._q("SELECT ref, view FROM subject"):
            yield ref, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def write_subject(self, ref: str, name: str, log: list[Statement], view: list[Interval],
                      predicates: Iterable[str]) -> None:
        self._put_subject(ref, name, log_text(log), view, set(predicates))

    def write_subjects(self, rows: Sequence[tuple[str, str, list[Statement], list[Interval], Iterable[str]]]) -> None:
        for ref, name, log, view, predicates in rows:
            self.write_subject(ref, name, log, view, predicates)

    def rewrite_subject(self, ref: str, name: str, log: str, view: list[Interval]) -> None:
        self._put_subject(ref, name, log, view, None)

    def drop_subject(self, ref: str) -> None:
        self._w("DELETE FROM subject WHERE ref = %s", (ref,))
        self._w("DELETE FROM view_interval WHERE subject = %s", (ref,))
        self._w("DELETE FROM fact_edge WHERE src = %s", (ref,))

    def _put_subject(self, ref: str, name: str, log: str, view: list[Interval], predicates: set[str] | None) -> None:
        self._w("INSERT INTO subject(ref, name, log, view) VALUES (%s, %s, %s, %s) ON CONFLICT (ref) DO UPDATE "
                "SET name = EXCLUDED.name, log = EXCLUDED.log, view = EXCLUDED.view", (ref, name, pack(log), view_text(view)))
        if predicates is None:
            self._w("DELETE FROM fact_edge WHERE src = %s", (ref,))
        elif predicates:
            self._w("DELETE FROM fact_edge WHERE src = %s AND predicate = ANY(%s)", (ref, sorted(predicates)))
        # the interval rows of the touched predicates only (positions count within a predicate); all of
        # them when none are named (None: a rebuild's rewrite; empty: a rename, any row may name the entity)
        if predicates:
            self._w("DELETE FROM view_interval WHERE subject = %s AND predicate = ANY(%s)", (ref, sorted(predicates)))
        else:
            self._w("DELETE FROM view_interval WHERE subject = %s", (ref,))
        self._many(f"INSERT INTO view_interval({_IV_COLS}) VALUES (%s, %s, %s, %s, %s, %s)",
                   self._interval_rows(ref, view, predicates or None))
        rows = self._edge_rows(ref, view, predicates)
        if rows:  # an edge joins two entities that exist (as a Kuzu rel joins two nodes)
            self._many(f"INSERT INTO fact_edge({_EDGE_COLS}) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s "
                       "WHERE EXISTS (SELECT 1 FROM entity WHERE ref = %s) AND EXISTS (SELECT 1 FROM entity WHERE ref = %s)",
                       [(*r, r[1], r[2]) for r in rows])

    def write_view_files(self, subjects: Iterable[tuple[str, str, str, list[Interval]]]) -> PgViewBatch:
        """The view's rows written aside (pure Python: no database), for ``load_view``."""
        self.check_writable("write the view")
        counts = {"subjects": 0, "intervals": 0, "edges": 0}
        subject_rows: list[tuple[Any, ...]] = []
        edge_rows: list[tuple[Any, ...]] = []
        interval_rows: list[tuple[Any, ...]] = []
        for ref, name, log, view in subjects:
            counts["subjects"] += 1
            counts["intervals"] += len(view)
            subject_rows.append((ref, name, pack(log), view_text(view)))
            edge_rows += self._edge_rows(ref, view, None)
            interval_rows += self._interval_rows(ref, view, None)
        counts["edges"] = len(edge_rows)
        return PgViewBatch(_dump(subject_rows), _dump(edge_rows), _dump(interval_rows), counts)

    def load_view(self, parts: list[PgViewBatch]) -> dict[str, int]:
        """Replace the view's tables with the rows of ``parts`` (their files are removed)."""
        try:
            self._w("DELETE FROM subject")
            self._w("DELETE FROM fact_edge")
            self._w("DELETE FROM view_interval")
            for part in parts:
                self._copy("subject", "ref, name, log, view", _load(part.subjects))
                self._copy("view_interval", _IV_COLS, _load(part.intervals))
                self._copy("fact_edge", _EDGE_COLS, _load(part.edges))
            self._w("DELETE FROM fact_edge f WHERE NOT EXISTS (SELECT 1 FROM entity WHERE ref = f.src) "
                    "OR NOT EXISTS (SELECT 1 FROM entity WHERE ref = f.dst)")
        finally:
            for part in parts:
                part.discard()
        return {k: sum(part.counts[k] for part in parts) for k in ("subjects", "intervals", "edges")}
