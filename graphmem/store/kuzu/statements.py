"""Statements (``Assertion``, the append-only authority): one at a time, or many through a bulk
file (``StatementFile``), and read back whole or grouped by subject as log text Kuzu writes."""

from __future__ import annotations

import bisect
import contextlib
import json
import marshal
import os
import re
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

from graphmem.model import Statement
from graphmem.store.common.codecs import _object, _sources, _sources_json, dumps, encode_literal
from graphmem.store.common.forms import LogForms
from graphmem.store.common.rows import ranges_of
from graphmem.store.kuzu.base import WAL_ROWS, _int
from graphmem.store.kuzu.bulkfiles import _CHUNK, _BulkFile
from graphmem.store.kuzu.schema import Schema

ADD_ROWS = 500  # add_statements: statements created by one query
_ADD_MANY = ("UNWIND $rows AS x CREATE (:Assertion {id: x.id, op: x.op, subject: x.s, predicate: x.p, "
             "object: CAST(x.o AS STRING), object_type: CAST(x.ot AS STRING), valid_from: CAST(x.vf AS INT64), "
             "valid_to: CAST(x.vt AS INT64), recorded_at: x.rec, sources: x.src, asserted_by: x.by, trust: x.tr, "
             "scope: CAST(x.sc AS STRING)})")


def _json_int(col: str) -> str:
    return f"coalesce(CAST({col} AS STRING), 'null')"


# A statement as its log row (see _stmt_row), written as JSON text by the engine. Text is concatenated rather
# than built with to_json per item (which took twice as long: 3 s against 1.4 s at 1M). Free text goes
# through ``text`` (Kuzu: to_json); op, asserted_by and trust come from closed sets that never need escaping; int,
# float and bool objects are stored as Python writes them (str of the value, "true"/"false"), which is their JSON.
# (No CAST to a number: Kuzu evaluates a CASE branch on every row, and a cast of other rows' text fails.)
def _log_row(text: Callable[[str], str]) -> str:
    return ("concat('[', CAST(a.id AS STRING), ',\"', a.op, '\",', " + text("a.predicate") + ", ',', "
            "coalesce(CASE WHEN a.object_type IN ['int', 'float', 'bool'] THEN a.object "
            "ELSE " + text("a.object") + " END, 'null'), "
            "CASE WHEN a.object_type = 'entity' THEN ',\"entity\",' "
            "WHEN a.object_type IS NULL OR a.object_type = '' THEN ',\"\",' ELSE ',\"literal\",' END, "
            f"{_json_int('a.valid_from')}, ',', {_json_int('a.valid_to')}, ',', {_json_int('a.recorded_at')}, ',', "
            f"{_json_int('a.retracted_at')}, ',', coalesce(" + text("a.retract_reason") + ", 'null'), ',', "
            "a.sources, ',\"', a.asserted_by, '\",\"', a.trust, '\"', "
            # a scoped statement's row has null and its scope as 14th and 15th items (scope names never need escaping)
            "CASE WHEN a.scope IS NULL THEN ']' ELSE concat(',null,\"', a.scope, '\"]') END)")


# LadybugDB's to_json needs its JSON extension, which downloads at run time: there free text is quoted with
# its backslashes and quotes escaped, and the rare log holding a control character is written again in Python
# (``_LOG_FIXES``). Kuzu keeps to_json, which escapes everything (measured faster than replace chains there).
_LOG_ROW = _log_row(lambda col: f"CAST(to_json({col}) AS STRING)")
_LOG_ROW_LADYBUG = _log_row(lambda col: f"CASE WHEN {col} IS NULL THEN 'null' ELSE "  # its concat reads NULL as ''
                                        "concat('\"', replace(replace(" + col + ", '\\\\', '\\\\\\\\'), "
                                        "'\"', '\\\\\"'), '\"') END")
_LOG_ROWS = {"kuzu": _LOG_ROW, "ladybug": _LOG_ROW_LADYBUG}
_CONTROL = re.compile("[\x00-\x1f]")  # raw in a Ladybug log row's text: JSON needs it escaped


class _Finished:
    """A finished ``StatementFile``'s files: the rows for COPY and the same statements as marshalled tuples
    (what ``StatementFile.statements`` reads back), handed to another process's ``adopt``; ``chunks`` says
    where each chunk of rows lies in the bulk file (``retract`` sets retractions in them)."""

    def __init__(self, bulk: _BulkFile, side: str, chunks: list[tuple[int, int, int, bool]] | None = None) -> None:
        self.bulk, self.side = bulk, side
        self.chunks = chunks or []  # (first id, last id, end offset, plain) of each chunk, in file order

    def retract(self, retractions: dict[int, tuple[int, str | None]]) -> None:
        """Set each retraction (fact id -> when, reason) in its statement's row, and take it out of
        ``retractions``: the bulk file is written again with those rows changed (a COPY'd row updated in the
        same transaction costs Kuzu far more memory: 1,004 retractions among 1M rows, about 100 MB). Only
        rows of chunks written as they are (no quoted value) with a plain reason are changed; the others
        stay in ``retractions``, for the caller to set after the load."""
        ids = sorted(retractions)
        patches: list[list[int]] = []  # the ids to set in each chunk
        for first, last, _, plain in self.chunks:
            lo, hi = bisect.bisect_left(ids, first), bisect.bisect_right(ids, last)
            patches.append([i for i in ids[lo:hi] if plain and _plain_reason(retractions[i][1])])
        if not any(patches):
            return
        self.bulk.close()
        fd, name = tempfile.mkstemp(suffix=".csv", dir=os.path.dirname(self.bulk.name))
        try:
            with open(self.bulk.name, "rb") as src, os.fdopen(fd, "wb") as out:
                start = 0
                for (_, _, end, _), want in zip(self.chunks, patches, strict=True):
                    data = src.read(end - start)
                    start = end
                    if want:
                        data = _set_retractions(data, want, retractions)
                    out.write(data)
                out.write(src.read())  # (nothing: every row is in a chunk)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
            raise
        os.unlink(self.bulk.name)
        self.bulk.name = name
        for fid in (i for want in patches for i in want):
            del retractions[fid]

    @property
    def rows(self) -> int:
        """How many statements the files hold."""
        return self.bulk.rows

    def discard(self) -> None:
        self.bulk.discard()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.side)


def _plain_reason(reason: str | None) -> bool:
    """Whether a retraction's reason can stand in a row written as it is (None: an empty field, as
    ``mark_retracted`` stores it; "" would load as None, so it is not)."""
    return reason is None or (reason != "" and not reason.startswith('"')
                               and not any(c in reason for c in "\t\n\r"))


def _set_retractions(data: bytes, ids: list[int], retractions: dict[int, tuple[int, str | None]]) -> bytes:
    """Rows of a chunk written as they are (``data``, whole lines), with the retraction of each of ``ids``
    (rows in it, in id order) set in its row's retracted_at and retract_reason fields."""
    out: list[bytes] = []
    at = 0
    for fid in ids:
        key = b"%d\t" % fid
        pos = 0 if data.startswith(key) else data.index(b"\n" + key, at) + 1
        end = data.index(b"\n", pos)
        fields = data[pos:end].split(b"\t")
        if len(fields) != 15:
            raise RuntimeError(f"bulk row of fact {fid} has {len(fields)} fields, expected 15")
        when, reason = retractions[fid]
        fields[9], fields[10] = b"%d" % when, (reason or "").encode("utf-8")
        out += [data[at:pos], b"\t".join(fields)]
        at = end
    out.append(data[at:])
    return b"".join(out)


class StatementFile:
    """Statements written to bulk files as they come, then loaded into ``Assertion`` in one COPY.

    Beside each bulk file, a side file holds the same statements as tuples in chunks of ``marshal``:
    a large import computes its view from them (``statements``) in forked children, about three times
    faster than parsing the bulk rows back, and the marshalled chunks cost the writer almost nothing."""

    def __init__(self, store: StatementTables, side: bool = True) -> None:
        self._store = store
        self._done: list[_Finished] = []  # files before the current one, in id order
        self._bulk = _BulkFile(store.path / "tmp")
        self._sides = side  # whether side files are written (only ``statements`` reads them)
        self._side = self._bulk.name[:-len(".csv")] + ".marshal"
        self._side_file = open(self._side if side else os.devnull, "wb")  # noqa: SIM115  (closed by finish or discard)
        self._tuples: list[Statement] = []  # pending
        self._otypes: dict[tuple[str, str], str] = {}
        self._first: int | None = None  # ids rise: the first is this write's lowest
        self._chunks: list[tuple[int, int, int, bool]] = []  # the bulk file's chunks (``_Finished.chunks``)

    def add(self, s: Statement) -> None:
        if self._first is None:
            self._first = s[0]
            self._store._undo.fact(s[0])
        self._tuples.append(s)
        if len(self._tuples) == _CHUNK:
            self._flush()

    def _row(self, s: Statement) -> list[Any]:
        """A statement as its ``Assertion`` row."""
        fid, op, subject, predicate, value, kind, vf, vt, rec, retracted, reason, sources, by, trust, _, scope = s
        obj = "" if value is None else (value if kind == "entity" else encode_literal(value))
        return [fid, op, subject, predicate, obj, self._otype(s), vf, "" if vt is None else vt,
                rec, "" if retracted is None else retracted, reason or "", _sources_json(sources), by, trust,
                scope or ""]

    def _otype(self, s: Statement) -> str:
        if s.op == "cite":
            return self._store._object_type(s) or ""
        otype = self._otypes.get((s.predicate, s.object_kind))
        if otype is None:
            otype = self._otypes[(s.predicate, s.object_kind)] = self._store._object_type(s) or ""
        return otype

    def _flush(self) -> None:
        """Write the pending statements: their rows to the bulk file (joined as they are, in one f-string a
        row, unless a value needs quoting), themselves to the side file."""
        tuples, self._tuples = self._tuples, []
        otypes, otype_of = self._otypes, self._otype
        lines = []
        for s in tuples:
            fid, op, subject, predicate, value, kind, vf, vt, rec, retracted, reason, sources, by, trust, _, scope = s
            if kind == "entity":
                obj = value
            elif value is None:
                obj = ""
            elif type(value) is bool:
                obj = "true" if value else "false"
            else:
                obj = value
            otype = otypes.get((predicate, kind)) if op != "cite" else None
            if otype is None:
                otype = otype_of(s)
            if len(sources) == 1 and '"' not in (src := sources[0]) and "\\" not in src and src.isprintable():
                src = '["' + src + '"]'
            else:
                src = _sources_json(sources)
            lines.append(f"{fid}\t{op}\t{subject}\t{predicate}\t{obj}\t{otype}\t{vf}\t{'' if vt is None else vt}\t"
                         f"{rec}\t{'' if retracted is None else retracted}\t{reason or ''}\t{src}\t{by}\t{trust}\t"
                         f"{scope or ''}")
        lines.append("")
        plain = self._bulk.write_plain("\n".join(lines), len(tuples), 15)
        if not plain:
            self._bulk.write([self._row(s) for s in tuples])
        self._chunks.append((tuples[0][0], tuples[-1][0], self._bulk.tell(), plain))
        if not self._sides:
            return
        # each chunk after its length (marshal.load reads a file piecemeal) and the least and greatest
        # subject it holds (a reader of some subjects skips the chunks without them)
        data = marshal.dumps([tuple(s) for s in tuples])
        subjects = [s[2] for s in tuples]
        head = marshal.dumps((min(subjects), max(subjects), len(data)))
        self._side_file.write(len(head).to_bytes(8, "little") + head + data)

    def finish(self) -> _Finished:
        """Write what is pending and close: the files, to hand to another process's ``adopt``."""
        if self._tuples:
            self._flush()
        self._bulk.close()
        self._side_file.close()
        return _Finished(self._bulk, self._side, self._chunks)

    def adopt(self, other: _Finished) -> None:
        """Take the files of statements another process wrote; they come after this file's statements."""
        self._done += [self.finish(), other]
        self._bulk = _BulkFile(self._store.path / "tmp")
        self._chunks = []
        self._side = self._bulk.name[:-len(".csv")] + ".marshal"
        self._side_file = open(self._side if self._sides else os.devnull, "wb")  # noqa: SIM115

    def statements(self, subjects: Container[str], retractions: dict[int, tuple[int, str | None]],
                   name_of: Callable[[str], str | None]) -> Iterator[Statement]:
        """The statements of ``subjects`` read back from the side files (after ``finish``), in id order, with
        ``retractions`` (fact id -> when, reason) applied and entity objects named by ``name_of``: a
        large import computes its view from them instead of reading the rows back from Kuzu. Pure
        Python over closed files, so forked children can read them."""
        if self._tuples or not self._side_file.closed or not self._sides:
            raise RuntimeError("StatementFile.statements() needs finish() first, and side files")
        new = tuple.__new__
        # the bounds of ``subjects``: the chunks whose subjects all lie outside them are skipped unread
        bounds = (min(subjects), max(subjects)) if isinstance(subjects, dict | set | frozenset | list) and subjects \
            else None
        for side in [*(f.side for f in self._done), self._side]:
            with open(side, "rb") as fh:
                while size := fh.read(8):
                    least, greatest, n = marshal.loads(fh.read(int.from_bytes(size, "little")))
                    if bounds is not None and (greatest < bounds[0] or least > bounds[1]):
                        fh.seek(n, 1)
                        continue
                    for row in marshal.loads(fh.read(n)):
                        if row[2] not in subjects:
                            continue
                        if row[5] == "entity":
                            name = name_of(row[4])
                            if name != row[14]:
                                row = (*row[:14], name, row[15])
                        elif row[14] is not None:
                            row = (*row[:14], None, row[15])
                        if retractions and row[0] in retractions:
                            at, why = retractions[row[0]]
                            row = (*row[:9], at, why, *row[11:])
                        yield new(Statement, row)

    def load(self, retractions: dict[int, tuple[int, str | None]] | None = None) -> int:
        """COPY the statements (in the caller's transaction) and remove the files; the row count. Those of
        ``retractions`` (fact id -> when, reason) that can be are set in their rows (``_Finished.retract``)
        and taken out of it: the caller sets the rest after the load."""
        done = [*self._done, self.finish()]
        try:
            for f in done:
                if retractions:
                    f.retract(retractions)
            self._store._load([f.bulk for f in done], "Assertion")
            return sum(f.rows for f in done)
        finally:
            self.discard()

    def discard(self) -> None:
        self._side_file.close()
        for f in [*self._done, _Finished(self._bulk, self._side)]:
            f.discard()


class StatementTables(LogForms, Schema):
    """The statements and the fact id counter (the stored form of a log: ``LogForms``)."""

    def next_fact_id(self) -> int:
        return int(self.meta("next_fact") or "1")

    def set_next_fact_id(self, n: int) -> None:
        self._set_meta("next_fact", str(n))

    def _assertion_params(self, s: Statement) -> dict[str, Any]:
        return {
            "op": s.op, "s": s.subject, "p": s.predicate,
            "o": None if s.object is None else (s.object if s.object_kind == "entity" else encode_literal(s.object)),
            "ot": self._object_type(s), "vf": s.valid_from, "vt": s.valid_to,
            "rec": s.recorded_at, "src": dumps(list(s.sources)), "by": s.asserted_by, "tr": s.trust,
            "sc": s.scope,
        }

    def add_statement(self, s: Statement) -> None:
        self._undo.fact(s.id)
        # the id as a parameter (a CREATE looks nothing up), so the one plan serves every statement
        self._q(
            "CREATE (:Assertion {id: $id, op: $op, subject: $s, predicate: $p, object: $o, "
            "object_type: $ot, valid_from: $vf, valid_to: $vt, recorded_at: $rec, sources: $src, "
            "asserted_by: $by, trust: $tr, scope: $sc})",
            {"id": s.id, **self._assertion_params(s)}, hot=True,
        )

    def add_statements(self, stmts: list[Statement]) -> None:
        """``add_statement`` for many, one query per ``ADD_ROWS`` of them: a list of rows unwound into
        CREATEs (logged as any CREATE). 32 statements in one transaction at 100k: 1.4 ms, against 6.4 ms
        for a query each (Kuzu 0.11; the nullable columns are cast, as a column of nulls is read as text)."""
        if len(stmts) <= 1:
            for s in stmts:
                self.add_statement(s)
            return
        for at in range(0, len(stmts), ADD_ROWS):
            part = stmts[at:at + ADD_ROWS]
            for s in part:
                self._undo.fact(s.id)
            self._q(_ADD_MANY, {"rows": [{"id": s.id, **self._assertion_params(s)} for s in part]}, hot=True)

    def bulk_add_statements(self, stmts: Iterable[Statement]) -> int:
        """Many statements at once. Up to WAL_ROWS go by CREATE (``add_statements``): Kuzu 0.11 writes
        COPY's rows past its write-ahead log, so a process killed between the commit and the checkpoint
        that follows loses them while the rest of the transaction survives (docs/semantics.md, crash safety)."""
        stmts = stmts if isinstance(stmts, list) else list(stmts)
        if len(stmts) <= WAL_ROWS:
            self.add_statements(stmts)
            for st in stmts:
                if st.retracted_at is not None:
                    self.mark_retracted(st.id, st.retracted_at, st.retract_reason)
            return len(stmts)
        self.check_writable("import")
        out = StatementFile(self, side=False)  # (no view is read back from it)
        for st in stmts:
            out.add(st)
        return out.load()

    def statement_file(self) -> StatementFile:
        """A bulk file that takes statements one at a time, then loads them (large imports hold none)."""
        self.check_writable("import")
        return StatementFile(self)

    def mark_retracted(self, fact_id: int, at: int, reason: str | None) -> None:
        self._undo.retracted.append(fact_id)
        self._q(f"MATCH (a:Assertion {{id: {_int(fact_id)}}}) SET a.retracted_at = $t, a.retract_reason = $r",
                {"t": at, "r": reason})

    def mark_retracted_many(self, fact_ids: list[int], at: int, reason: str | None) -> None:
        """``mark_retracted`` for many facts with one time and reason, in one query: the ids as a literal
        list unwound into key matches (10,000 facts at 100k statements: 0.5 s, against 2.0 s for
        ``WHERE a.id IN [...]``, 3.0 s for a list parameter and 14 s for a query a fact)."""
        if len(fact_ids) <= 40:
            for fid in fact_ids:
                self.mark_retracted(fid, at, reason)
            return
        self._undo.retracted.extend(fact_ids)
        ids = ", ".join(_int(i) for i in fact_ids)
        self._q(f"UNWIND [{ids}] AS i MATCH (a:Assertion {{id: i}}) SET a.retracted_at = $t, a.retract_reason = $r",
                {"t": at, "r": reason})

    def statement(self, fact_id: int) -> Statement | None:
        rows = self._q(f"MATCH (a:Assertion {{id: {_int(fact_id)}}}) RETURN a.subject")
        if not rows:
            return None
        for s in self.subject_log(rows[0][0]):
            if s.id == fact_id:
                return s
        return None

    def asserters(self, fact_ids: Iterable[int]) -> dict[int, str]:
        """Who asserted each of these statements (operator, agent, extractor, import); unknown ids are left out.
        One scan of the statements (a list of INT64 keys is not looked up by key in Kuzu 0.11)."""
        ids = sorted(set(fact_ids))
        if not ids:
            return {}
        rows = self._q(f"MATCH (a:Assertion) WHERE a.id IN [{', '.join(map(_int, ids))}] RETURN a.id, a.asserted_by")
        return {int(i): str(by) for i, by in rows}

    def statements(self, fact_ids: list[int]) -> dict[int, Statement]:
        """The statements with these ids (those that exist), each subject's log read once."""
        if len(fact_ids) <= 5:
            return {i: st for i in fact_ids if (st := self.statement(i)) is not None}
        ids = ", ".join(_int(i) for i in sorted(set(fact_ids)))
        want = set(fact_ids)
        out: dict[int, Statement] = {}
        for (subject,) in self._q(f"UNWIND [{ids}] AS i MATCH (a:Assertion {{id: i}}) RETURN DISTINCT a.subject"):
            out.update((st.id, st) for st in self.subject_log(subject) if st.id in want)
        return out

    _COLS = ("a.id, a.op, a.subject, a.predicate, a.object, a.object_type, a.valid_from, a.valid_to, "
             "a.recorded_at, a.retracted_at, a.retract_reason, a.sources, a.asserted_by, a.trust, a.scope")

    def all_statements(self) -> list[Statement]:
        """Every statement in id order, object names not filled (export reads them this way;
        whole-store checks read them grouped by subject, ``subject_logs``).

        Rows come straight from Kuzu (times are stored as microseconds), and the common
        source lists skip the JSON parser.
        """
        stmts: list[Statement] = []
        append = stmts.append
        for fid, op, subj, pred, obj, otype, vf, vt, rec, retr, reason, src, by, trust, scope in self._iter(
                f"MATCH (a:Assertion) RETURN {self._COLS}"):
            value, kind = _object(obj, otype)
            append(Statement(fid, op, subj, pred, value, kind, vf, vt, rec, retr, reason, _sources(src), by, trust,
                             None, scope))
        # statements are appended with rising ids, so the scan order is normally id order
        if any(a.id > b.id for a, b in zip(stmts, stmts[1:], strict=False)):  # noqa: SIM110
            stmts.sort()
        return stmts

    def subject_ranges(self, parts: int) -> list[tuple[str | None, str | None]]:
        """About ``parts`` ranges of subject refs with similar numbers of subjects, for ``subject_logs``."""
        refs = sorted(r for (r,) in self._iter("MATCH (a:Assertion) RETURN DISTINCT a.subject"))
        return ranges_of(refs, parts)

    def subject_logs(self, lo: str | None = None, hi: str | None = None,
                     refs: list[str] | None = None, scopes: list[str] | None = None) -> Iterator[tuple[str, str]]:
        """Each subject's log, grouped and written as JSON by Kuzu: (ref, log text).

        Rebuild, lint and large imports read the statements this way: Kuzu groups a million
        rows and writes their JSON in C++, so Python decodes one string per subject instead
        of building a row object per statement. ``lo``/``hi`` bound the subject refs (a range
        read keeps Kuzu's grouping small), ``refs`` lists them; ``scopes``: only the statements of these
        scopes (a scoped ``facts``).
        """
        # no ORDER BY: sorting a million rows first costs more than sorting the few logs that come out of order
        conditions = (("a.subject >= $lo", "lo", lo), ("a.subject < $hi", "hi", hi), ("a.subject IN $refs", "refs", refs),
                      ("a.scope IN $scopes", "scopes", scopes))
        where = " AND ".join(w for w, _, v in conditions if v is not None)
        params = {k: v for _, k, v in conditions if v is not None}
        query = (f"MATCH (a:Assertion) {'WHERE ' + where if where else ''} WITH a.subject AS ref, "
                 f"concat('[', list_to_string(',', collect({_LOG_ROWS[self.engine]})), ']') AS log ")
        rows = self._iter(query + "RETURN ref, log", params)
        if self.engine == "kuzu":
            yield from rows  # type: ignore[misc]
            return
        for ref, log in rows:
            yield ref, (dumps(json.loads(log, strict=False)) if _CONTROL.search(log) else log)

    def statement_count(self) -> int:
        return int(self._q("MATCH (a:Assertion) RETURN count(a)")[0][0])

    def subjects_naming(self, refs: list[str]) -> list[str]:
        """Subjects of any statement (retracted, ended or superseded included) whose object is one of ``refs``."""
        rows = self._q("MATCH (a:Assertion) WHERE a.object IN $refs RETURN DISTINCT a.subject", {"refs": sorted(refs)})
        return sorted(r[0] for r in rows)
