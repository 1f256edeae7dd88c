"""Statements (``assertion``, the append-only authority): one at a time, or many through a batch
loaded by COPY (``PgStatementBatch``), and read back whole or grouped by subject as log text (the
same log form as the Kuzu store, ``store/common/codecs.py``, so rebuild and lint read both alike)."""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

from graphmem.model import Statement
from graphmem.store.common.codecs import (
    _object,
    _sources,
    _sources_json,
    encode_literal,
    log_text,
)
from graphmem.store.common.forms import LogForms
from graphmem.store.common.rows import ranges_of, read_back
from graphmem.store.postgres.entities import PgEntities

_COLS = ("id, op, subject, predicate, object, object_type, valid_from, valid_to, recorded_at, retracted_at, "
         "retract_reason, sources, asserted_by, trust, scope")
_INSERT = f"INSERT INTO assertion({_COLS}) VALUES ({', '.join(['%s'] * 15)})"


class _FinishedBatch(str):
    """The file a finished batch wrote (its name): what another batch's ``adopt`` takes, or ``discard``
    removes unread (an import whose child's half is read again drops it, as it does a Kuzu bulk file)."""

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self)


class PgStatementBatch:
    """Statements gathered one at a time (in memory, or in a file once finished, so another process can
    hand them over), then loaded into ``assertion`` with one COPY."""

    def __init__(self, store: PgStatements) -> None:
        self._store = store
        self._rows: list[Statement] = []
        self._files: list[str] = []

    def add(self, s: Statement) -> None:
        if not self._rows and not self._files:
            self._store._undo.fact(s.id)
        self._rows.append(s)

    def finish(self) -> _FinishedBatch:
        """The statements gathered since the last ``finish`` written to a file, what another batch's ``adopt``
        takes; this batch still holds them (``statements``, ``load``), as a Kuzu ``StatementFile`` does, so
        an import computes the view from a finished batch (``transfer/importer.py``)."""
        fd, name = tempfile.mkstemp(suffix=".statements")
        with os.fdopen(fd, "wb") as f:
            pickle.dump([tuple(s) for s in self._rows], f, protocol=pickle.HIGHEST_PROTOCOL)
        self._rows = []
        self._files.append(name)
        return _FinishedBatch(name)

    def adopt(self, other: str) -> None:
        """Take the statements another batch finished; they come after this batch's own."""
        self.finish()
        self._files.append(other)

    def _all(self) -> Iterator[Statement]:
        for name in self._files:
            with open(name, "rb") as f:
                for row in pickle.load(f):  # noqa: S301  (files this process or its children wrote)
                    yield Statement(*row)
        yield from self._rows

    def statements(self, subjects: Container[str], retractions: dict[int, tuple[int, str | None]],
                   name_of: Callable[[str], str | None]) -> Iterator[Statement]:
        for s in self._all():
            if s.subject in subjects:
                yield read_back(s, name_of, retractions)

    def load(self, retractions: dict[int, tuple[int, str | None]] | None = None) -> int:
        """COPY the statements; the row count. Those of ``retractions`` (fact id -> when, reason) that are
        statements of this batch are set in their rows and taken out of it: the caller sets the rest."""
        left = retractions if retractions is not None else {}

        def rows() -> Iterator[tuple[Any, ...]]:
            for s in self._all():
                r = left.pop(s.id, None)
                yield self._store._row(s if r is None else s._replace(retracted_at=r[0], retract_reason=r[1]))

        try:
            return self._store._copy("assertion", _COLS, rows())
        finally:
            self.discard()

    def discard(self) -> None:
        for name in self._files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
        self._files = []
        self._rows = []


class PgStatements(LogForms, PgEntities):
    """The statements and the fact id counter (the stored form of a log: ``LogForms``)."""

    def next_fact_id(self) -> int:
        self._ticket()
        return self._counter("next_fact")

    def set_next_fact_id(self, n: int) -> None:
        self._set_meta("next_fact", str(n))

    def _row(self, s: Statement) -> tuple[Any, ...]:
        obj = None if s.object is None else (s.object if s.object_kind == "entity" else encode_literal(s.object))
        return (s.id, s.op, s.subject, s.predicate, obj, self._object_type(s), s.valid_from, s.valid_to,
                s.recorded_at, s.retracted_at, s.retract_reason, _sources_json(s.sources), s.asserted_by, s.trust,
                s.scope)

    def add_statement(self, s: Statement) -> None:
        self._undo.fact(s.id)
        self._w(_INSERT, self._row(s))

    def bulk_add_statements(self, stmts: Iterable[Statement]) -> int:
        stmts = stmts if isinstance(stmts, list) else list(stmts)
        if not stmts:
            return 0
        self._undo.fact(min(s.id for s in stmts))
        if len(stmts) <= 50:
            self._many(_INSERT, [self._row(s) for s in stmts])
            return len(stmts)
        return self._copy("assertion", _COLS, (self._row(s) for s in stmts))

    def statement_file(self) -> PgStatementBatch:
        self.check_writable("import")
        return PgStatementBatch(self)

    def mark_retracted(self, fact_id: int, at: int, reason: str | None) -> None:
        self._undo.retracted.append(fact_id)
        self._w("UPDATE assertion SET retracted_at = %s, retract_reason = %s WHERE id = %s", (at, reason, fact_id))

    def mark_retracted_many(self, fact_ids: list[int], at: int, reason: str | None) -> None:
        if fact_ids:
            self._undo.retracted.extend(fact_ids)
            self._w("UPDATE assertion SET retracted_at = %s, retract_reason = %s WHERE id = ANY(%s)",
                    (at, reason, list(fact_ids)))

    def _statement_rows(self, where: str, params: Any) -> list[Statement]:
        out = []
        for fid, op, subj, pred, obj, otype, vf, vt, rec, retr, reason, src, by, trust, scope in self._q(
                f"SELECT {_COLS} FROM assertion WHERE {where}", params):
            value, kind = _object(obj, otype or "")
            out.append(Statement(fid, op, subj, pred, value, kind, vf, vt, rec, retr, reason, _sources(src), by, trust,
                                 None, scope))
        return out

    def _named(self, stmts: list[Statement]) -> list[Statement]:
        refs = sorted({str(s.object) for s in stmts if s.object_kind == "entity"})
        names = dict(self._q("SELECT ref, name FROM entity WHERE ref = ANY(%s)", (refs,))) if refs else {}
        return [s._replace(object_name=names.get(s.object)) if s.object_kind == "entity" else s for s in stmts]

    def statement(self, fact_id: int) -> Statement | None:
        got = self._named(self._statement_rows("id = %s", (fact_id,)))
        return got[0] if got else None

    def asserters(self, fact_ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(fact_ids))
        if not ids:
            return {}
        return {int(i): str(by) for i, by in self._q("SELECT id, asserted_by FROM assertion WHERE id = ANY(%s)", (ids,))}

    def statements(self, fact_ids: list[int]) -> dict[int, Statement]:
        if not fact_ids:
            return {}
        return {s.id: s for s in self._named(self._statement_rows("id = ANY(%s)", (sorted(set(fact_ids)),)))}

    def all_statements(self) -> list[Statement]:
        """Every statement in id order, object names not filled."""
        return self._statement_rows("true ORDER BY id", None)

    def statement_count(self) -> int:
        return int(self._q("SELECT count(*) FROM assertion")[0][0])

    def subject_ranges(self, parts: int) -> list[tuple[str | None, str | None]]:
        refs = [r for (r,) in self._q("SELECT DISTINCT subject FROM assertion ORDER BY subject")]
        return ranges_of(refs, parts)

    def subject_logs(self, lo: str | None = None, hi: str | None = None,
                     refs: list[str] | None = None, scopes: list[str] | None = None) -> Iterator[tuple[str, str]]:
        """Each subject's log in its stored form: (ref, log text), the statements in id order."""
        conditions = (("subject >= %s", lo), ("subject < %s", hi), ("subject = ANY(%s)", refs), ("scope = ANY(%s)", scopes))
        where = " AND ".join(w for w, v in conditions if v is not None) or "true"
        params = [v for _, v in conditions if v is not None]
        current: str | None = None
        log: list[Statement] = []
        for s in self._statement_rows(f"{where} ORDER BY subject, id", params):
            if s.subject != current:
                if current is not None:
                    yield current, log_text(log)
                current, log = s.subject, []
            log.append(s)
        if current is not None:
            yield current, log_text(log)

    def subjects_naming(self, refs: list[str]) -> list[str]:
        rows = self._q("SELECT DISTINCT subject FROM assertion WHERE object_type = 'entity' AND object = ANY(%s)",
                       (sorted(refs),))
        return sorted(r[0] for r in rows)
