"""The records' facets kept with the store: every record's id, time, kind, source and scope as columns
(``store.values.RecordFacets``), which search and pack read for every record (sessions, filters, times).
Read from the ``Record`` table they cost a fresh process 110-130 ms at 100,000 records; a file beside
``graph.kuzu`` holds them as they were when it was written, and a reader adds the records written since.

The file (``record-facets-<hash>.bin``, named in ``Meta`` under ``record_facets``) says up to which id
it holds the records and how many it holds. A reader counts the records up to that id and reads the file
only if the count agrees (a rollback removes records; ids are never given again), then reads the records
after that id from the table. When ``Meta``'s record counter (``next_record``, which never goes back) says
no id was given after the file's, the count is that of the whole table, which Kuzu answers without a scan,
and there is nothing after the file to read: a fresh process pays 2 ms where the two scans cost 25-40 ms.
A store opened for writing that read the facets writes the file again when it closes if it holds 1,000
records more than the file (or there is none). A file that is missing, unreadable, not what its name's
hash says, or whose count disagrees counts as none: the facets are then read from the table, as before
the file existed. Crash safety is the stored lexicon's: the file is
written whole under its content's hash and only then named in ``Meta``; older files go after the
commit (docs/evidence.md "Record facets kept with the store").
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
from typing import Any

from graphmem.model.times import from_datetime
from graphmem.store.kuzu.lexicon import _write_whole, drop_older
from graphmem.store.kuzu.schema import Schema
from graphmem.store.values import RecordFacets

# a record's ts in microseconds: Kuzu gives milliseconds (cut toward zero, so one less before 1970 when
# there is a rest) and the microseconds within the minute
_FACETS = ("MATCH (r:Record) WITH r, date_part('microsecond', r.ts) % 1000 AS us "
           "RETURN r.id, (CASE WHEN us > 0 AND r.ts < timestamp('1970-01-01') THEN to_epoch_ms(r.ts) - 1 "
           "ELSE to_epoch_ms(r.ts) END) * 1000 + us, r.kind, r.source, r.scope ORDER BY r.id")
_FACETS_AFTER = _FACETS.replace("MATCH (r:Record) WITH", "MATCH (r:Record) WHERE r.id > $u WITH", 1)  # after a file's records
_MAGIC = b"graphmem-record-facets-1\n"
FACETS_META = "record_facets"  # the Meta key naming the file
_COUNT_UPTO = "MATCH (r:Record) WHERE r.id <= $u RETURN count(*)"
_COUNT_ALL = "MATCH (r:Record) RETURN count(*)"
_RAW_AFTER = "MATCH (r:Record) WHERE r.id > $u RETURN r.id, r.ts, r.kind, r.source, r.scope ORDER BY r.id"
_FEW_AFTER = 5_000  # records after the file read with their times as Kuzu gives them (``_facets_after``)
KEEP_AFTER = 1_000  # records read beyond the file before a writer's close writes it again


class RecordFacetFile(Schema):
    """The record facets' file: read with the records written after it, written again at close."""

    _facets: RecordFacets | None
    _facets_stored: int = -1  # how many records the file read held (-1: none read)

    def _stored_record_facets(self) -> RecordFacets | None:
        """The facets of the file ``Meta`` names, with the records written after it; None when there is
        no usable file."""
        import numpy as np
        name = self.meta(FACETS_META)
        if not name:
            return None
        try:
            blob = (self.path / name).read_bytes()
            if not blob.startswith(_MAGIC) or hashlib.sha256(blob).hexdigest()[:16] != name[14:30]:
                return None
            doc = marshal.loads(memoryview(blob)[len(_MAGIC):])
            upto, count = int(doc["upto"]), int(doc["count"])
            # read-only views of the file's bytes (nothing changes the columns in place; an added record
            # makes new ones): no copy of 2.8 MB at 100,000 records
            cols = [np.frombuffer(doc[k], dtype) for k, dtype in
                    (("ids", np.int64), ("ts", np.int64), ("kind", np.int32), ("source", np.int32), ("scope", np.int32))]
            kinds, sources, scopes = tuple(doc["kinds"]), tuple(doc["sources"]), tuple(doc["scopes"])
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            return None
        if len(cols[0]) != count or any(len(c) != count for c in cols):
            return None
        given = self.meta("next_record")  # the next record id: the counter never goes back (Repair.roll_back)
        after = int(given) - 1 - upto if given and given.isdigit() else None  # ids given after the file's
        if after is not None and after <= 0:
            # no record has an id after the file's, so every record is one the file may hold: the count of
            # the whole table (which Kuzu keeps, no scan) checks it, and there is no tail to read
            if self._q(_COUNT_ALL)[0][0] != count:  # records removed since (a rollback)
                return None
            tail: list[Any] = []
        else:
            if self._q(_COUNT_UPTO, {"u": upto})[0][0] != count:  # records removed since (a rollback)
                return None
            tail = (self._facets_after(upto) if after is not None and after <= _FEW_AFTER
                    else self._q(_FACETS_AFTER, {"u": upto}))
        base = RecordFacets(cols[0], cols[1], cols[2], cols[3], kinds, sources, cols[4], scopes)
        self._facets_stored = count
        return RecordFacets.of(tail, base) if tail else base

    def _facets_after(self, upto: int) -> list[Any]:
        """The facets of the few records after id ``upto``, their times made microseconds here: Kuzu's
        time functions of ``_FACETS`` cost a fresh process 15-20 ms on first use, more than a few
        thousand rows' conversion."""
        return [[rid, from_datetime(ts), kind, source, scope]
                for rid, ts, kind, source, scope in self._q(_RAW_AFTER, {"u": upto})]

    def _keep_record_facets(self) -> None:
        """Write the facets read (with the records added since) to a new file and name it in ``Meta``,
        when this process read them, may write, and they hold ``KEEP_AFTER`` records more than the file."""
        f = self._facets
        if f is None or self.read_only or self._in_tx or len(f.ids) < max(self._facets_stored, 0) + KEEP_AFTER:
            return
        doc = {"upto": int(f.ids[-1]) if len(f.ids) else 0, "count": len(f.ids), "ids": f.ids.tobytes(),
               "ts": f.ts.tobytes(), "kind": f.kind.astype("int32").tobytes(),
               "source": f.source.astype("int32").tobytes(), "scope": f.scope.astype("int32").tobytes(),
               "kinds": list(f.kinds), "sources": list(f.sources), "scopes": list(f.scopes)}
        blob = _MAGIC + marshal.dumps(doc)
        name = f"record-facets-{hashlib.sha256(blob).hexdigest()[:16]}.bin"
        _write_whole(self.path / name, blob)
        with self.transaction():
            self._set_meta(FACETS_META, name)
        self._facets_stored = len(f.ids)
        drop_older(self.path, "record-facets-*.bin", name)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the file is a cache: failing to write it loses nothing
            self._keep_record_facets()
        super().close()
