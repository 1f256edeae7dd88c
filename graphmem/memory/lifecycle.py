"""Memory's lifecycle of records: apply the policy, revive, read a record's use (graphmem.evidence.lifecycle)."""

from __future__ import annotations

import time
from typing import Any

from graphmem.errors import BadInput
from graphmem.evidence.lifecycle import UseLog
from graphmem.memory.base import MemoryBase
from graphmem.model.times import format_instant, now_us, parse_instant
from graphmem.reports import LifecycleReport, ReviveReport
from graphmem.write.inputs import parse_record_ref


class LifecycleFacade(MemoryBase):
    """Lifecycle: soft archiving by the policy, reviving, and the use of records."""

    @property
    def _use_log(self) -> UseLog:
        """The use events of this open store not written yet (graphmem.evidence.lifecycle.UseLog)."""
        log = self.__dict__.get("_uses")
        if log is None:  # setdefault: two service threads asking at once get the same log
            log = self.__dict__.setdefault("_uses", UseLog())
        assert isinstance(log, UseLog)
        return log

    def _track(self, op: str, rec_ids: list[int], now: int) -> tuple[str, ...]:
        return self._use_log.add(self.store, op, rec_ids, now, self.read_only)

    def close(self) -> None:
        """Close the store, writing the use not written yet first; the object cannot be used afterwards.

        Also done on leaving a ``with`` block.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> m.close()
        """
        try:
            if not self.read_only:
                self._use_log.flush(self.store)
        finally:
            super().close()

    def lifecycle(self, *, at: str | None = None, dry_run: bool = False) -> LifecycleReport:
        """Apply the lifecycle policy as of ``at``: soft-archive the records that fall below it, as
        recorded events (docs/lifecycle.md). Nothing is deleted; ``revive`` undoes it.

        Parameters
        ----------
        at : str, optional
            The time to apply the policy as of (default now): ages and use are counted up to it.
        dry_run : bool, default False
            Count what would be archived, writing nothing.

        Returns
        -------
        LifecycleReport
            Aggregate counts only (by reason, tier, trust and importance): never a record's text.

        Raises
        ------
        BadTime
            ``at`` cannot be parsed.
        ConfigError
            The store's ``lifecycle.toml`` is invalid.
        StoreReadOnly
            Without ``dry_run``, on a store opened read-only.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "Never store secrets in git.", "kind": "rule", "ts": "2020-01-01"}'])
        >>> m.lifecycle(at="2099-01-01").counts["kept"]
        {'protected_kind': 1}
        >>> m.close()
        """
        from graphmem.evidence.lifecycle import load_policy, run
        started = time.perf_counter()
        now = now_us()
        t = now if at is None else parse_instant(at, now=now, what="at")
        policy = load_policy(self.address.folder)  # a PostgreSQL store has no folder: the defaults
        if not dry_run:
            self.store.check_writable()
        if not self.read_only:
            self._use_log.flush(self.store)
        counts, events = run(self.store, policy, t, now, dry_run)
        return LifecycleReport(format_instant(t) or "", dry_run, counts, policy.to_dict(), tuple(events),
                               time.perf_counter() - started)

    def revive(self, records: str | list[str]) -> ReviveReport:
        """Bring archived records back into search and pack (one ``revive`` event).

        Parameters
        ----------
        records : str or list of str
            Record refs, ``rec:N``, each archived now.

        Returns
        -------
        ReviveReport

        Raises
        ------
        BadInput
            A bad ref, an unknown record, or one that is not archived.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "lunch at noon", "ts": "2024-01-01", "importance": 0.1}'])
        >>> m.revive("rec:1")
        Traceback (most recent call last):
        graphmem.errors.BadInput: bad record rec:1: expected an archived record (it is not archived)
        >>> m.close()
        """
        from graphmem.evidence.lifecycle import revive
        refs = [records] if isinstance(records, str) else list(records)
        if not refs:
            raise BadInput("no record to revive: expected one or more rec:N")
        ids = [self._record_id(r) for r in refs]
        self._use_log.flush(self.store)
        event = revive(self.store, ids, now_us())
        return ReviveReport(tuple(f"rec:{i}" for i in sorted(set(ids))), event)

    def record_use(self, record: str) -> dict[str, Any]:
        """A record's use and lifecycle state: when it was last packed and how often, when last
        returned by search and how often, and whether it is archived (and since when).

        Parameters
        ----------
        record : str
            A record ref, ``rec:N``.

        Returns
        -------
        dict
            ``ref``, ``packed``, ``last_packed``, ``searched``, ``last_searched``, ``archived``,
            ``archived_at`` (times ISO 8601 or None).

        Raises
        ------
        BadInput
            A bad ref or an unknown record.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "Atlas moved to Kuzu.", "kind": "note"}'])
        >>> _ = m.search("kuzu")
        >>> u = m.record_use("rec:1")
        >>> u["searched"], u["packed"], u["archived"]
        (1, 0, False)
        >>> m.close()
        """
        rid = self._record_id(record)
        if not self.read_only:
            self._use_log.flush(self.store)
        u = self.store.record_use().get(rid, [0, None, 0, None, None])
        archived = self.store.archived_at().get(rid)
        return {"ref": f"rec:{rid}", "packed": u[0], "last_packed": format_instant(u[1]), "searched": u[2],
                "last_searched": format_instant(u[3]), "archived": archived is not None,
                "archived_at": format_instant(archived)}

    def _record_id(self, ref: str) -> int:
        rid = parse_record_ref(ref)
        if self.store.record(rid) is None:
            raise BadInput(f"unknown record {ref!r}: expected a stored record's ref, rec:N")
        return rid
