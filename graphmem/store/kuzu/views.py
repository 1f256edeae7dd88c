"""The materialized fact view: a ``Subject`` row per subject (its log and intervals as compact
JSON), a ``SubjectFacet`` row per subject and predicate (that predicate's intervals, open and ended
apart, with their time bounds: what the predicate scan reads, ``codecs.facet_rows``) and the typed
fact edges of its entity-valued intervals; written a subject at a time, or whole from bulk files
(``write_view_files`` then ``load_view``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from graphmem.model import Interval, Statement
from graphmem.model.facts import Fact, fact_order, fact_parts
from graphmem.model.jsonio import loads_many
from graphmem.model.times import MAX_US, MIN_US, in_range
from graphmem.store.common.codecs import _iv_from_row, loads, log_text, pack, same_view, statements_from_log, unpack, view_text
from graphmem.store.kuzu.bulkfiles import _CHUNK, ViewFiles, _BulkFile, _chunks
from graphmem.store.kuzu.codecs import _int_list, _ts, _ts_param, facet_rows, facets_text, kuzu_time_text
from graphmem.store.kuzu.schema import _FACET_DDL, _SUBJECT_DDL, Schema

_first = itemgetter(0)
_SUBJECT_VIEW = "MATCH (s:Subject {ref: $r}) RETURN s.name, s.view"
_SUBJECT_LOG_VIEW = "MATCH (s:Subject {ref: $r}) RETURN s.name, s.log, s.view"
_PUT_SUBJECT = "MERGE (s:Subject {ref: $r}) SET s.name = $n, s.log = $l, s.view = $v"
# a group's rows set by one query: the keys a list of text, so that Kuzu looks each one up in the primary
# key's index (a list of structs, ``MATCH (s:Subject {ref: x.r})``, is planned as a scan of the table joined
# to the list: 32 facets 7.7 ms, against 3.3 ms so), each row's values found by the key's position
_SET_SUBJECTS = ("UNWIND $refs AS r MATCH (s:Subject {ref: r}) WITH s, list_position($refs, r) AS i "
                 "SET s.name = $n[i], s.log = $l[i], s.view = $v[i] RETURN s.ref")
# A changed facet's row is deleted and made again, never set: Kuzu 0.11 checkpoints a set text by writing the
# node group's whole column again (up to 131,072 rows), a made row by appending it (docs/service.md, "Why
# Kuzu's checkpoint stalls"). Several rows are made by one query, their values a list per column, each ending
# in one more, typed, never read (a list of nulls alone has no type, which Kuzu 0.11 cannot assign)
_FACET_MAKE = ("CREATE (:SubjectFacet {key: $k, ref: $r, predicate: $p, open: $o, since: $s, ended: $e, first: $f, "
               "last: $l})")
_FACETS_MAKE = ("UNWIND range(1, size($k)) AS i CREATE (:SubjectFacet {key: $k[i], ref: $r[i], predicate: $p[i], "
                "open: $o[i], since: $s[i], ended: $e[i], first: $f[i], last: $l[i]})")
_FACET_DROP = "MATCH (f:SubjectFacet {key: $k}) DELETE f"
# the facets of ``predicate`` with an interval that may hold at ``$a``, and only the texts that may
_FACET_SCAN = ("MATCH (f:SubjectFacet) WHERE f.predicate = $p{prefix} AND (f.since <= $a OR f.first <= $a AND $a < f.last) "
               "RETURN f.ref, CASE WHEN f.since <= $a THEN f.open END, CASE WHEN f.first <= $a AND $a < f.last "
               "THEN f.ended END")


def _stored_form(view: str, facets: str) -> str:
    """What ``ViewTables.view_text`` and ``stored_view_rows`` compare: the view's JSON, then (when it has
    any) a line break (JSON text holds none) and its facet rows (``facets_text``)."""
    return view if facets == _NO_FACETS else view + "\n" + facets


_NO_FACETS = facets_text([])


def _same_facets(a: str, b: str) -> bool:
    """Whether two ``facets_text`` texts hold the same rows (their JSON rows parsed: a float may be spelt
    otherwise by the other encoder)."""
    try:
        ra, rb = loads(a), loads(b)
        return len(ra) == len(rb) and all(
            x[0] == y[0] and x[2] == y[2] and x[4] == y[4] and x[5] == y[5]
            and loads(x[1] or "null") == loads(y[1] or "null") and loads(x[3] or "null") == loads(y[3] or "null")
            for x, y in zip(ra, rb, strict=True))
    except (ValueError, TypeError, IndexError):
        return False


def _set_many(run: Any, query: str, put: str, rows: list[dict[str, Any]], key: str, keys: str,
              values: dict[str, Any]) -> None:
    """Rows set by one ``query`` (``_SET_SUBJECTS``): the rows' ``key`` fields as the list
    ``keys``, each value field as a list of its own ending in one more value of its type (``values``), never
    read; a row the table does not hold yet is made by ``put``, a ``MERGE``, on its own."""
    params: dict[str, Any] = {keys: [r[key] for r in rows]}
    for name, typed in values.items():
        params[name] = [r[name] for r in rows] + [typed]
    done = {k for (k,) in run(query, params, hot=True)}
    for r in rows:
        if r[key] not in done:
            run(put, r, hot=True)


class ViewTables(Schema):
    """Subject rows and fact edges."""

    # the stored form of a view, for callers that compare one with what they computed (``codecs``)
    @staticmethod
    def view_text(view: list[Interval]) -> str:
        """A subject's intervals in their stored form, as ``stored_view_rows`` reads it: ``codecs.view_text``
        and its facet rows (``codecs.facets_text``)."""
        return _stored_form(view_text(view), facets_text([r[2:] for r in facet_rows("", view)]))

    @staticmethod
    def same_view(stored: str | None, text: str) -> bool:
        """Whether a stored view (``stored_view_rows``) holds what ``text`` (``view_text``) holds: the
        view's JSON by ``codecs.same_view``, and the same facet rows."""
        if stored == text:
            return True
        if not stored:
            return False
        sv, _, sf = stored.partition("\n")
        tv, _, tf = text.partition("\n")
        return same_view(sv, tv) and (sf == tf or _same_facets(sf, tf))

    def stored_view_rows(self) -> Callable[[], tuple[dict[str, tuple[str, str, str]], dict[str, list[str]]]]:
        """Every stored subject row (ref -> name, log as stored, view) and every stored fact edge as
        ``edge_keys`` writes it, sorted, by the ref of its subject.

        The two reads start at once, each on its own connection in a thread, so Kuzu runs them beside
        the grouped statement read (at 1M: 1.8 s + 4.4 s became 5 s with one thread for both); call the
        result to wait for them. Only outside a write transaction, whose rows another connection does not see.
        """
        assert not self._in_tx
        if self._spent:  # no connection is made on a spent database (_give_up)
            self._give_up()
        labels = [e for e in sorted(self.ontology.edge_types) if e in self._tables() and self.is_fact_edge(e)]
        # times as Kuzu writes a TIMESTAMP (``kuzu_time_text``): at 1M about 1 s of CPU less than microseconds
        key = ("concat(label(e), ' ', o.ref, ' ', e.predicate, ' ', CAST(e.valid_from AS STRING), ' ', "
               "coalesce(CAST(e.valid_to AS STRING), ''), ' ', CAST(e.assertions AS STRING), ' ', "
               "CAST(e.conflicts AS STRING))")
        edge_query = f"MATCH (s)-[e:{'|'.join(labels)}]->(o) WITH s.ref AS ref, {key} AS k RETURN ref, list_sort(collect(k))"
        subjects: dict[str, tuple[str, str, str]] = {}
        edges: dict[str, list[str]] = {}
        facets: dict[str, list[Any]] = {}
        failed: list[BaseException] = []

        def read(query: str, into: dict[str, Any]) -> None:
            try:
                conn = self._driver.Connection(self._db)
                try:
                    if into is facets:  # by ref: its facet rows (predicate, open, since, ended, first, last)
                        for row in self._iter(query, conn=conn):
                            row[2], row[4] = row[2] or None, row[4] or None
                            facets.setdefault(row[0], []).append(row[1:])
                        return
                    # by ref: the subject row's (name, log, view), or the edge keys' list
                    into.update((row[0], row[1] if len(row) == 2 else tuple(row[1:]))
                                for row in self._iter(query, conn=conn))
                finally:
                    conn.close()
            except BaseException as e:  # handed to the caller
                failed.append(e)

        reads: list[tuple[str, dict[str, Any]]] = [
            ("MATCH (s:Subject) RETURN s.ref, s.name, s.log, s.view", subjects),
            ("MATCH (f:SubjectFacet) RETURN f.ref, f.predicate, f.open, f.since, f.ended, f.first, f.last", facets)]
        if labels:
            reads.append((edge_query, edges))
        threads = [threading.Thread(target=read, args=r, daemon=True) for r in reads]
        for t in threads:
            t.start()

        def wait() -> tuple[dict[str, tuple[str, str, str]], dict[str, list[str]]]:
            for t in threads:
                t.join()
            if failed:
                raise failed[0]
            empty = _NO_FACETS
            for ref, (name, log, view) in subjects.items():  # each view with its facet rows (``view_text``)
                rows = facets.pop(ref, None)
                subjects[ref] = (name, log, _stored_form(view or "", facets_text(rows) if rows else empty))
            for ref, rows in facets.items():  # facet rows of no subject: drift too
                subjects[ref] = (None, None, _stored_form("", facets_text(rows)))  # type: ignore[assignment]
            return subjects, edges
        return wait

    def edge_keys(self, ref: str, view: list[Interval]) -> list[str]:
        """The fact edges ``view`` makes for subject ``ref``, as ``stored_view_rows`` reads them, sorted."""
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return []
        out = []
        texts = self._time_texts
        if len(texts) > 100_000:  # bounded: most stores' times repeat, a few have one per edge
            texts.clear()
        for iv in view:
            if iv.object_kind == "entity":
                label = self._edge_label(stype, iv)
                if label is not None:
                    vf, vt = iv.valid_from, iv.valid_to
                    start = texts.get(vf) or texts.setdefault(vf, kuzu_time_text(vf))
                    end = "" if vt is None else texts.get(vt) or texts.setdefault(vt, kuzu_time_text(vt))
                    out.append(f"{label} {iv.object} {iv.predicate} {start} {end} "
                               f"{_int_list(iv.assertions)} {_int_list(iv.conflicts)}")
        out.sort()
        return out

    def _edge_label(self, stype: str, iv: Interval) -> str | None:
        """``_edge_for``'s label, looked up once per (subject type, predicate, object prefix)."""
        key = (stype, iv.predicate, str(iv.object).partition(":")[0])
        label = self._edge_labels.get(key, "")
        if label == "":
            edge = self._edge_for(stype, iv)
            label = self._edge_labels[key] = edge[0] if edge else None
        return label

    def subject_log(self, ref: str) -> list[Statement]:
        return self.subject_log_and_view(ref)[0]

    def subject_view(self, ref: str) -> list[Interval]:
        return self.subject_name_and_view(ref)[1]

    def subject_name_and_view(self, ref: str) -> tuple[str | None, list[Interval]]:
        """The subject's name and intervals in one key lookup (None, [] when it has no statements)."""
        rows = self._q(_SUBJECT_VIEW, {"r": ref})
        if not rows:
            return None, []
        name, view = rows[0]
        return name, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def subject_log_and_view(self, ref: str) -> tuple[list[Statement], list[Interval]]:
        _, log, view = self.subject_name_log_and_view(ref)
        return log, view

    def subject_name_log_and_view(self, ref: str) -> tuple[str | None, list[Statement], list[Interval]]:
        rows = self._q(_SUBJECT_LOG_VIEW, {"r": ref})
        if not rows:
            return None, [], []
        name, log, view_text = rows[0]
        view = [_iv_from_row(ref, r) for r in loads(view_text or "[]")]
        names: dict[Any, str | None] = {iv.object: iv.object_name for iv in view if iv.object_kind == "entity"}

        def name_of(obj: str) -> str | None:  # objects the view does not show (retracted, say) are looked up
            if obj not in names:
                e = self.entity(obj)
                names[obj] = e.name if e else None
            return names[obj]
        return name, statements_from_log(ref, unpack(log), name_of)[0], view

    def all_subject_rows(self, prefix: str | None = None) -> Iterator[tuple[str, str | None, list[Interval]]]:
        """Every subject's ref, name and intervals (those whose ref starts with ``prefix``)."""
        where, params = ("WHERE starts_with(s.ref, $p) ", {"p": prefix}) if prefix else ("", None)
        for ref, name, view in self._iter(f"MATCH (s:Subject) {where}RETURN s.ref, s.name, s.view", params):
            yield ref, name, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def subject_facts_holding(self, as_of: int, predicate: str | None = None, prefix: str | None = None,
                              ) -> tuple[list[Fact], list[tuple[str, str | None]]] | None:
        """The facts of ``predicate`` (None: all) that hold at ``as_of``, of the subjects whose ref starts
        with ``prefix``, by subject ref (code point order) and each subject's by ``fact_order``; and the ref
        and name of each subject they are of, in the same order: ``all_subject_rows`` filtered by
        ``holding``, each interval made a ``Fact`` straight from its stored row (``_facts_of_facets``). With a
        predicate, Kuzu returns its ``SubjectFacet`` texts that may hold at ``as_of`` (at 1M and now: 49,955
        open texts, not 110 MB of whole views), names from ``Subject.name``. None when a time of one of them
        lies outside the years a datetime holds: read the intervals then (``all_subject_rows``)."""
        if predicate is None:
            where, params = ("WHERE starts_with(s.ref, $p) ", {"p": prefix}) if prefix else ("", None)
            return _facts_of_views(self._iter(f"MATCH (s:Subject) {where}RETURN s.ref, s.name, s.view", params),
                                   as_of)
        query = _FACET_SCAN.format(prefix=" AND starts_with(f.ref, $x)" if prefix else "")
        args: dict[str, Any] = {"p": predicate, "a": as_of}
        if prefix:
            args["x"] = prefix
        rows = self._q(query, args)
        if not rows:
            return [], []
        rows.sort(key=_first)  # subjects in ref order
        return _facts_of_facets(rows, predicate, as_of, dict(self._q("MATCH (s:Subject) RETURN s.ref, s.name")).get)

    def all_subject_views(self) -> Iterator[tuple[str, list[Interval]]]:
        for ref, view in self._iter("MATCH (s:Subject) RETURN s.ref, s.view"):
            yield ref, [_iv_from_row(ref, r) for r in loads(view or "[]")]

    def write_subject(self, ref: str, name: str, log: list[Statement], view: list[Interval],
                      predicates: Iterable[str]) -> None:
        """Replace one subject's materialized rows and its edges for ``predicates``."""
        self._put_subject(ref, name, log_text(log), view, set(predicates))

    def write_subjects(self, rows: Sequence[tuple[str, str, list[Statement], list[Interval], Iterable[str]]]) -> None:
        """``write_subject`` for many subjects (ref, name, log, view, predicates; refs distinct): their rows and
        facets by ``_set_many`` (32 subjects about 3 ms, against 10-28 ms for a MERGE each); then the edges."""
        if len(rows) <= 1:
            for row in rows:
                self.write_subject(*row)
            return
        params = [{"r": ref, "n": name, "l": pack(log_text(log)), "v": view_text(view)} for ref, name, log, view, _ in rows]
        _set_many(self._q, _SET_SUBJECTS, _PUT_SUBJECT, params, "r", "refs", {"n": "", "l": "", "v": ""})
        facets: list[list[Any]] = []
        for ref, _, _, view, predicates in rows:
            facets += self._facets_to_write(ref, view, set(predicates))
        self._remake_facets(facets)
        for ref, _, _, view, predicates in rows:
            self._put_edges(ref, view, set(predicates))

    def rewrite_subject(self, ref: str, name: str, log: str, view: list[Interval]) -> None:
        """Replace one subject's materialized rows and all its fact edges (``log`` in its stored form)."""
        self._put_subject(ref, name, log, view, None)

    def drop_subject(self, ref: str) -> None:
        """Remove the materialized rows of a subject that has no statements, and its fact edges."""
        self._q("MATCH (s:Subject {ref: $r}) DELETE s", {"r": ref})
        self._q("MATCH (f:SubjectFacet) WHERE f.ref = $r DELETE f", {"r": ref})  # a scan: rebuild's repairs only
        self._drop_edges(ref, None)

    def _drop_edges(self, ref: str, predicates: set[str] | None) -> None:
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return
        if predicates is None:
            tables = self._tables()
            for label in sorted(e for e in self.ontology.edge_types if e in tables and self.is_fact_edge(e)):
                if any(a == stype for a, _ in self.ontology.edge_types[label].pairs):
                    self._q(f"MATCH (s:{stype} {{ref: $r}})-[e:{label}]->() DELETE e", {"r": ref})
            return
        for pred in sorted(predicates):
            p = self.registry.predicates.get(pred)
            if p is None or p.edge is None:
                continue
            self._q(f"MATCH (s:{stype} {{ref: $r}})-[e:{p.edge}]->() WHERE e.predicate = $p DELETE e",
                    {"r": ref, "p": pred})

    def _put_subject(self, ref: str, name: str, log: str, view: list[Interval], predicates: set[str] | None) -> None:
        """Write a subject's row and its edges for ``predicates`` (None: all of them, old ones dropped)."""
        self._q(_PUT_SUBJECT, {"r": ref, "n": name, "l": pack(log), "v": view_text(view)}, hot=True)
        self._put_facets(ref, view, predicates)
        self._put_edges(ref, view, predicates)

    def _put_edges(self, ref: str, view: list[Interval], predicates: set[str] | None) -> None:
        """A subject's fact edges for ``predicates`` (None: all of them, old ones dropped)."""
        stype = self.ontology.type_for_prefix(ref.partition(":")[0])
        if stype is None:
            return
        self._drop_edges(ref, predicates)
        for iv in view:
            if (predicates is not None and iv.predicate not in predicates) or iv.object_kind != "entity":
                continue
            edge = self._edge_for(stype, iv)
            if edge is None:
                continue
            label, otype = edge
            if self._pairs is not None:
                self._pairs.add((label, stype, otype))
            self._q(
                f"MATCH (s:{stype} {{ref: $r}}), (o:{otype} {{ref: $o}}) CREATE (s)-[:{label} {{predicate: $p, "
                "valid_from: $vf, valid_to: $vt, assertions: $a, conflicts: $c}]->(o)",
                {"r": ref, "o": iv.object, "p": iv.predicate, "vf": _ts_param(iv.valid_from),
                 "vt": _ts_param(iv.valid_to), "a": list(iv.assertions), "c": list(iv.conflicts)},
            )

    def _put_facets(self, ref: str, view: list[Interval], predicates: set[str] | None) -> None:
        """Write the subject's ``SubjectFacet`` rows of ``predicates`` and drop those the view no longer
        has; all of them when ``predicates`` is None (every old one dropped first) or empty (a rename
        rewrites the whole view, each row of it may name the renamed entity)."""
        if predicates is None:
            self._q("MATCH (f:SubjectFacet) WHERE f.ref = $r DELETE f", {"r": ref})  # a scan: rebuild's repairs only
        self._remake_facets(self._facets_to_write(ref, view, predicates))

    def _remake_facets(self, rows: list[list[Any]]) -> None:
        """``SubjectFacet`` rows (key, ref, predicate, open, since, ended, first, last) written: those the table
        holds deleted (a lookup each), then all made by one query (docs/benchmarks.md has the figures)."""
        if not rows:
            return
        for row in rows:  # a lookup each (a list of keys, ``UNWIND``, scans the table: 2-3 ms a write at 100k)
            self._q(_FACET_DROP, {"k": row[0]}, hot=True)
        if len(rows) == 1:
            self._q(_FACET_MAKE, dict(zip("krposefl", rows[0], strict=True)), hot=True)
            return
        cols = list(zip(*rows, strict=True))
        made = {name: list(col) for name, col in zip("krp", cols, strict=False)}  # (never null)
        made.update((name, [*col, typed]) for name, col, typed in zip("osefl", cols[3:], ("", 0, "", 0, 0), strict=True))
        self._q(_FACETS_MAKE, made, hot=True)

    def _facets_to_write(self, ref: str, view: list[Interval], predicates: set[str] | None) -> list[list[Any]]:
        """The ``SubjectFacet`` rows of ``view`` that ``_put_facets`` writes for ``predicates`` (None or empty:
        all); those of ``predicates`` the view no longer has are dropped here."""
        rows = facet_rows(ref, view)
        if predicates:
            rows = [r for r in rows if r[2] in predicates]
            for pred in sorted(predicates - {r[2] for r in rows}):
                self._q(_FACET_DROP, {"k": ref + " " + pred}, hot=True)
        return rows

    def _edge_for(self, stype: str, iv: Interval) -> tuple[str, str] | None:
        p = self.registry.predicates.get(iv.predicate)
        if p is None or p.edge is None:
            return None
        otype = self.ontology.type_for_prefix(str(iv.object).partition(":")[0])
        if otype is None or (stype, otype) not in self.ontology.edge_types[p.edge].pairs:
            return None
        return p.edge, otype

    def write_view_files(self, subjects: Iterable[tuple[str, str, str, list[Interval]]]) -> ViewFiles:
        """Write the view's rows to bulk files for ``load_view`` (pure Python, no database: large
        rebuilds and imports write two sets of files at once in two processes)."""
        self.check_writable("write the view")
        counts = {"subjects": 0, "intervals": 0, "edges": 0}
        ts_text: dict[int | None, str] = {}
        # edge rows go to their files a chunk at a time, so a large view is never held whole
        edge_files: dict[tuple[str, str, str], tuple[_BulkFile, list[list[Any]]]] = {}

        def ts(us: int | None) -> str:
            text = ts_text.get(us)
            if text is None:
                text = ts_text[us] = _ts(us)
            return text

        def subject_rows() -> Iterator[list[Any]]:
            for ref, name, log, view in subjects:
                counts["subjects"] += 1
                counts["intervals"] += len(view)
                stype = self.ontology.type_for_prefix(ref.partition(":")[0])
                for iv in view:
                    if iv.object_kind != "entity" or stype is None:
                        continue
                    label = self._edge_label(stype, iv)
                    if label is None:
                        continue
                    target = (label, stype, self.ontology.type_for_prefix(str(iv.object).partition(":")[0]) or "")
                    if target not in edge_files:
                        edge_files[target] = (_BulkFile(self.path / "tmp", keep=True, nones=False), [])
                    bulk, pending = edge_files[target]
                    pending.append([ref, iv.object, iv.predicate, ts(iv.valid_from), ts(iv.valid_to),
                                    _int_list(iv.assertions), _int_list(iv.conflicts)])
                    if len(pending) == _CHUNK:
                        bulk.write(pending)
                        pending.clear()
                facets.extend([["" if v is None else v for v in row] for row in facet_rows(ref, view)])
                if len(facets) >= _CHUNK:
                    facet_file.write(facets)
                    facets.clear()
                yield [ref, name, pack(log), view_text(view)]

        subject_file = _BulkFile(self.path / "tmp", keep=True, nones=False)  # (no row holds None)
        facet_file = _BulkFile(self.path / "tmp", keep=True, nones=False)
        facets: list[list[Any]] = []
        try:
            for chunk in _chunks(subject_rows(), _CHUNK):
                subject_file.write(chunk)
            subject_file.close()
            if facets:
                facet_file.write(facets)
            facet_file.close()
            for bulk, pending in edge_files.values():
                if pending:
                    bulk.write(pending)
                bulk.close()
        except BaseException:
            for f in [subject_file, facet_file, *(b for b, _ in edge_files.values())]:
                f.discard()
            raise
        counts["edges"] = sum(b.rows for b, _ in edge_files.values())
        return ViewFiles(subject_file, {k: b for k, (b, _) in edge_files.items()}, counts, facet_file)

    def load_view(self, parts: list[ViewFiles]) -> dict[str, int]:
        """Drop the view's tables and bulk-load them from ``parts`` (the files are removed)."""
        self._pairs = None
        self._plan_generation += 1  # prepared plans may name the tables dropped here
        try:
            tables = self._tables()
            self._q("DROP TABLE Subject")
            self._q(_SUBJECT_DDL)
            self._q("DROP TABLE SubjectFacet")
            self._q(_FACET_DDL)
            for e in [e for e in self.ontology.edge_types if e in tables and self.is_fact_edge(e)]:
                self._q(f"DROP TABLE {e}")
                ddl = self._edge_ddl(e)
                if ddl:
                    self._q(ddl)
            self._load([part.subjects for part in parts], "Subject")
            self._load([part.facets for part in parts if part.facets is not None], "SubjectFacet")
            for label, a, b in sorted({k for part in parts for k in part.edges}):
                self._load([part.edges[(label, a, b)] for part in parts if (label, a, b) in part.edges], label,
                           f"from='{a}', to='{b}'")
        finally:
            for part in parts:
                part.discard()
        return {k: sum(part.counts[k] for part in parts) for k in ("subjects", "intervals", "edges")}


def _facts_of_views(views: Iterable[list[Any]], as_of: int) -> tuple[list[Fact], list[tuple[str, str | None]]] | None:
    """``subject_facts_holding`` of every predicate, from each subject's (ref, name, whole view text)."""
    new = tuple.__new__
    time, ref_of = fact_parts()
    held = []
    for ref, name, text in views:
        rows = [r for r in loads(text or "[]") if r[3] <= as_of and (r[4] is None or as_of < r[4])]
        if not all(in_range(r[3]) and (r[4] is None or in_range(r[4])) for r in rows):
            return None
        if rows:
            held.append((ref, name, [new(Fact, (ref, r[0], r[1], r[2], time(r[3]), None if r[4] is None else time(r[4]),
                                                tuple(map(ref_of, r[5])), (*r[6],), tuple(map(ref_of, r[7])), r[8]))
                                     for r in rows]))
    held.sort(key=_first)
    facts: list[Fact] = []
    for _, _, out in held:
        out.sort(key=fact_order)
        facts += out
    return facts, [(ref, name) for ref, name, _ in held]


def _facts_of_facets(rows: list[list[Any]], predicate: str, as_of: int, name_of: Callable[[str], str | None],
                     ) -> tuple[list[Fact], list[tuple[str, str | None]]] | None:
    """``subject_facts_holding`` of one predicate, from its facet rows (ref, open text, ended text) in ref
    order: each fact a tuple made in place (no ``Interval`` between, no call per fact: a scan makes tens of
    thousands), the open texts, then the ended ones, parsed in one call each (at a recent time most facets
    have only an open one). None at a time outside ``MIN_US``-``MAX_US`` (``in_range``, inlined: a call per
    fact would cost the scan)."""
    new = tuple.__new__
    time, ref_of = fact_parts()
    low, high = MIN_US, MAX_US
    facts: list[Fact] = []
    named: list[tuple[str, str | None]] = []
    add, name = facts.append, named.append
    endeds = iter(loads_many([r[2] for r in rows if r[2]]))
    for (ref, _, ended), opened in zip(rows, loads_many([r[1] or "[]" for r in rows]), strict=True):
        if not ended and len(opened) == 1:  # most facets: one open interval (no list, no sort)
            r = opened[0]
            if r[2] <= as_of:
                if r[2] < low:
                    return None
                add(new(Fact, (ref, predicate, r[0], r[1], time(r[2]), None,
                               (ref_of(r[4][0]),) if len(r[4]) == 1 else tuple(map(ref_of, r[4])), (*r[5],),
                               tuple(map(ref_of, r[6])) if r[6] else (), r[7])))
                name((ref, name_of(ref)))
            continue
        now = [r for r in opened if r[2] <= as_of]
        then = [r for r in next(endeds) if r[2] <= as_of < r[3]] if ended else []
        if any(r[2] < low for r in now) or any(r[2] < low or r[3] > high for r in then):
            return None
        out = [new(Fact, (ref, predicate, r[0], r[1], time(r[2]), None, tuple(map(ref_of, r[4])), (*r[5],),
                          tuple(map(ref_of, r[6])), r[7]))
               for r in now]
        out += [new(Fact, (ref, predicate, r[0], r[1], time(r[2]), time(r[3]), tuple(map(ref_of, r[4])),
                           (*r[5],), tuple(map(ref_of, r[6])), r[7]))
                for r in then]
        if out:
            if len(out) > 1:
                out.sort(key=fact_order)
            facts += out
            name((ref, name_of(ref)))
    return facts, named
