"""Bulk import of entities and statements from JSONL (SPEC 5, docs/formats.md).

Every line is validated before anything is written, by the checks every write uses
(``graphmem.write.validate``); valid lines are then written in one transaction, through the
write path's ``apply`` when few subjects are touched. Large imports go through Kuzu's bulk COPY path.
"""

from __future__ import annotations

import json
import time
from array import array
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphmem.bulk import Forked, Threaded, give_back_memory
from graphmem.errors import BadInput, GraphmemError
from graphmem.evidence.records import opt_str
from graphmem.model import Entity, Statement, fact_ref
from graphmem.model.jsonio import loads
from graphmem.model.progress import Progress, no_progress
from graphmem.model.records import Record
from graphmem.model.scopes import one_scope, scope_list
from graphmem.model.times import now_us, parse_instant
from graphmem.ontology.schema import Registry
from graphmem.reports import ImportReport
from graphmem.store import StatementBatch, StorageEngine, ViewBatch
from graphmem.transfer.beside import _Halves, _views_from_files, _views_from_list, _views_of
from graphmem.transfer.halves import _read_on_two_cores
from graphmem.transfer.lines import (
    _plain_run_of,
    counted,
    declared_id,
    file_lines,
    mention_list,
    record_line,
    str_list,
)
from graphmem.transfer.same import Held, held
from graphmem.view.rebuild import reload_view
from graphmem.view.temporal import attached_sources, view_for_subject
from graphmem.write.apply import append, apply, touch
from graphmem.write.inputs import parse_fact_ref
from graphmem.write.plain import plain_assertion
from graphmem.write.validate import Checks, Memo, Resolver, check_retraction, kept_ref, not_attached

BULK_LINES = 2000  # above this (or 200 bytes a line in a file), preload the name index
_RELOAD_SUBJECTS = 500  # an import touching more subjects reloads the whole view
STREAM_BYTES = 32 * 2**20  # a file larger than this streams its statements to the bulk file
PARALLEL_BYTES = 16 * 2**20  # a run of plain statement lines this long is read on two cores
THREAD_VIEW_STATEMENTS = 20_000  # an import of this many statements into an empty store computes the view in a thread
OPS = ("entity", "record", "assert", "end", "cite", "retract")


class _Reader:
    """One import's state while its lines are read and validated (nothing is written yet)."""

    def __init__(self, store: StorageEngine, checks: Checks, now: int, resolve: Resolver, next_id: int, next_record: int,
                 sink: StatementBatch | None, stored: Held | None = None, scope: str | None = None) -> None:
        self.store, self.checks, self.now, self.resolve, self.sink = store, checks, now, resolve, sink
        self.scope = scope  # the scope of statement lines that carry none
        self.stored = stored  # what the store holds already (None: no statements)
        self.unchanged = 0  # lines equal to what the store holds: nothing written
        self.heads = array("q")  # streamed: hash of (op, subject, predicate) of each statement, by id - first id
        self.cited: dict[int, list[str]] = defaultdict(list)  # sources this import's cites add, by assertion
        self.first_id = self.next_id = next_id
        self.stmts: list[Statement] = []
        self.by_id: dict[int, int] = {}  # fact id -> index in stmts (small imports)
        self.recorded = array("q")  # recorded_at of each statement this import adds, by id - first id
        self.touched: dict[str, set[str]] = defaultdict(set)
        self.file_ids: dict[str, int] = {}  # "fact:N" as written in the file -> the id given here
        self.failed_ids: dict[str, int] = {}  # "fact:N" of a statement line with an error -> its line
        self.created: dict[str, Entity] = {}
        self.updated: dict[str, tuple[Entity, tuple[str, ...], str | None]] = {}
        self.retractions: dict[int, tuple[int, str | None]] = {}
        self.records: list[Record] = []
        self.record_refs: dict[str, int] = {}  # "rec:N" as written in the file -> the id it has here
        self.record_keys: dict[str, int] = {}
        self.rec_mentions: dict[int, list[tuple[str, int, int, str]]] = {}
        self.next_record = next_record
        self.errors: list[tuple[int, str]] = []
        self.n_lines = 0
        self.memo = Memo()  # what statement lines checked once (cleared when an entity line changes the resolver)
        self.n_created = self.n_updated = 0  # how many entities it made and changed (``release``)
        self.kept: dict[str, list[Statement]] | None = None  # a two-core read's child: its statements by subject
        self.halves: _Halves | None = None  # a two-core read's children, waiting to compute their view

    def read(self, lines: Iterable[tuple[int, str]]) -> None:
        """Validate numbered lines, in order."""
        checks, now, resolve, sink = self.checks, self.now, self.resolve, self.sink
        stmts, by_id, recorded, touched, file_ids = self.stmts, self.by_id, self.recorded, self.touched, self.file_ids
        record_refs, errors, memo = self.record_refs, self.errors, self.memo
        next_id, n_lines = self.next_id, self.n_lines
        recorded_append, heads_append = recorded.append, self.heads.append
        kept = self.kept
        try:  # the import's scope, checked once for the lines that carry none (a bad one: every line says so)
            scope, plain = one_scope(self.scope), True
        except GraphmemError:
            scope, plain = None, False
        try:
            for lineno, line in lines:
                if not line.strip():
                    continue
                n_lines += 1
                declared = None  # the "id" of a statement line, kept if the line is bad (see retract)
                try:
                    if line.startswith("\x00not-utf8"):
                        raise BadInput("not valid UTF-8")
                    try:
                        obj = loads(line)
                    except json.JSONDecodeError as e:
                        raise BadInput(f"not valid JSON ({e.msg} at column {e.colno})") from None
                    if not isinstance(obj, dict):
                        raise BadInput("expected a JSON object")
                    op = obj.get("op")
                    if (op == "assert" and plain
                            and (fast := plain_assertion(checks, next_id, obj, now, memo, scope, resolve)) is not None):
                        st, declared = fast, obj.get("id")  # the common line, in one step
                    elif op == "cite":
                        declared = obj.get("id")
                        st = self._cite(obj, next_id)
                    elif op == "assert" or op == "end":
                        declared = obj.get("id")
                        if not isinstance(obj.get("subject"), str):
                            raise BadInput("missing or non-string field 'subject'")
                        if not isinstance(obj.get("predicate"), str):
                            raise BadInput("missing or non-string field 'predicate'")
                        if op == "assert" and "object" not in obj:
                            raise BadInput("missing or non-string field 'object'")
                        srcs = obj.get("sources") or []
                        if not isinstance(srcs, list):
                            raise BadInput(f"bad sources {srcs!r}: expected a list")
                        by = obj.get("asserted_by") or "import"
                        if op == "assert":
                            if obj["object"] is None or isinstance(obj["object"], list | dict):
                                raise BadInput(f"bad object {obj['object']!r}: expected a ref, name or literal value")
                            st = checks.assertion(next_id, obj["subject"], obj["predicate"], obj["object"],
                                                  opt_str(obj, "valid_from"), opt_str(obj, "valid_to"), srcs, by,
                                                  opt_str(obj, "recorded_at"), now, resolve, record_refs,
                                                  opt_str(obj, "scope") or self.scope, memo)
                        else:
                            st = checks.ending(next_id, obj["subject"], obj["predicate"], obj.get("object"),
                                            opt_str(obj, "at"), srcs, by, opt_str(obj, "recorded_at"), now, resolve,
                                            record_refs, opt_str(obj, "scope") or self.scope, memo)
                    if op == "assert" or op == "end" or op == "cite":
                        if self.stored is not None:
                            same = self.stored.match(st, declared_id(declared), obj.get("recorded_at") is not None,
                                                     obj.get("asserted_by") is not None,
                                                     op == "assert" and obj.get("valid_from") is None)
                            if same is not None:  # held already: nothing to write
                                if isinstance(declared, str):
                                    file_ids[declared] = same
                                self.unchanged += 1
                                continue
                        if op == "cite":
                            self._attach(obj["fact"], st, next_id)
                        if isinstance(declared, str):
                            file_ids[declared] = next_id
                        # (by index: a named tuple's fields are properties, slower on a million lines)
                        if sink is not None:
                            sink.add(st)
                            heads_append(hash((st[1], st[2], st[3])))  # op, subject, predicate
                        else:
                            by_id[next_id] = len(stmts)
                            stmts.append(st)
                        recorded_append(st[8])  # recorded_at
                        touched[st[2]].add(st[3])
                        if kept is not None:
                            kept[st[2]].append(st)
                        next_id += 1
                    else:
                        self.next_id = next_id
                        self._other(op, obj)
                except GraphmemError as e:
                    errors.append((lineno, str(e)))
                    if isinstance(declared, str):
                        self.failed_ids[declared] = lineno
        finally:
            self.next_id, self.n_lines = next_id, n_lines

    def release(self) -> tuple[list[Entity], list[tuple[Entity, tuple[str, ...], str | None]]]:
        """The entities the lines made and changed, handed over; the reader keeps their counts and lets go
        of what only reading needed (the resolver, the memo, the heads of streamed statements): the
        store's loads that follow need the memory (docs/benchmarks.md, "The import's peak memory")."""
        created, updated = list(self.created.values()), list(self.updated.values())
        self.n_created, self.n_updated = len(created), len(updated)
        self.created, self.updated = {}, {}
        self.resolve = Resolver(self.store, batch=True)
        self.memo = Memo()
        self.heads = array("q")
        self.file_ids, self.failed_ids, self.cited = {}, {}, defaultdict(list)
        return created, updated

    def _other(self, op: Any, obj: dict[str, Any]) -> None:
        """An ``entity``, ``record`` or ``retract`` line."""
        resolve = self.resolve
        if op == "entity":
            ent = self.checks.make_entity(str(obj.get("type", "")), obj.get("name", ""), str_list(obj, "aliases"),
                                obj.get("description") or "")
            if "ref" in obj:  # a renamed entity keeps the ref it was made with
                ent = kept_ref(ent, obj["ref"])
            have = resolve.entity(ent.ref)
            if have is None:
                self.created[ent.ref] = ent
                resolve.add(ent)
                self.memo.clear()
            else:
                extra = tuple(a for a in ent.aliases if a not in have.aliases)
                if have.type != ent.type or have.name != ent.name and have.name.lower() != ent.name.lower():
                    raise BadInput(f"entity {ent.ref!r} already exists as {have.type} {have.name!r}")
                if not extra and (not ent.description or ent.description == have.description):
                    if ent.ref not in self.created and ent.ref not in self.updated:
                        self.unchanged += 1
                else:
                    merged = replace(have, aliases=have.aliases + extra,
                                     description=ent.description or have.description)
                    if ent.ref in self.created:
                        self.created[ent.ref] = merged
                    else:
                        self.updated[ent.ref] = (have, extra, ent.description or None)
                    resolve.add(merged)
                    self.memo.clear()
        elif op == "record":
            rec = record_line(obj, self.now)
            ref = obj.get("ref")
            rid = self.record_keys.get(rec.key)
            if rid is None:
                rid = self.store.record_ids_for_keys([rec.key]).get(rec.key)
                self.unchanged += rid is not None
            if rid is None:
                rid = self.next_record
                self.records.append(replace(rec, id=self.next_record))
                self.rec_mentions[rid] = mention_list(obj)
                self.record_keys[rec.key] = self.next_record
                self.next_record += 1
            if isinstance(ref, str):
                self.record_refs[ref] = rid
        elif op == "retract":
            ref = obj.get("fact")
            if not isinstance(ref, str):
                raise BadInput("missing field 'fact': expected fact:N")
            if ref in self.failed_ids and ref not in self.file_ids:
                raise BadInput(f"unknown fact {ref!r}: expected a fact of this file or the store; line "
                               f"{self.failed_ids[ref]} declares it but has an error, so it was not imported")
            fid = self.file_ids.get(ref) or parse_fact_ref(ref)
            at_text = opt_str(obj, "at")
            at = parse_instant(at_text, now=self.now, what="at") if at_text else self.now
            if self.first_id <= fid < self.next_id:  # added by this import, not retracted before it
                target_at: int | None = self.recorded[fid - self.first_id]
                already = fid in self.retractions
            else:
                target = self.store.statement(fid)
                target_at = target.recorded_at if target else None
                already = target is not None and (target.retracted_at is not None or fid in self.retractions)
                if (target is not None and target.retracted_at is not None and fid not in self.retractions
                        and (at_text is None or at == target.retracted_at)
                        and obj.get("reason") == target.retract_reason):
                    self.unchanged += 1  # retracted already, as this line says
                    return
            reason = obj.get("reason")
            # the rule of every retraction; an import's message does not name when a stored fact was retracted
            r = check_retraction(ref, fid, target_at, None, already, at, at_text, self.now,
                                 reason if isinstance(reason, str) else None)
            self.retractions[fid] = (r.at, r.reason)
        else:
            raise BadInput(f"bad op {op!r}: expected one of {', '.join(OPS)}")

    def _cite(self, obj: dict[str, Any], next_id: int) -> Statement:
        """A ``cite`` line's statement (with id ``next_id``), its assertion found in this import or the store."""
        ref = obj.get("fact")
        if not isinstance(ref, str):
            raise BadInput("missing field 'fact': expected the fact:N whose assertion the sources support")
        if ref in self.failed_ids and ref not in self.file_ids:
            raise BadInput(f"unknown fact {ref!r}: expected a fact of this file or the store; line "
                           f"{self.failed_ids[ref]} declares it but has an error, so it was not imported")
        srcs = obj.get("sources") or []
        if not isinstance(srcs, list):
            raise BadInput(f"bad sources {srcs!r}: expected a list")
        fid = self.file_ids.get(ref) or parse_fact_ref(ref)
        target: Statement | None
        if self.first_id <= fid < next_id:  # added by this import
            if self.sink is None:
                target = self.stmts[self.by_id[fid]]
            else:  # streamed: the line names the subject and predicate, checked against what was read
                subj, pred = obj.get("subject"), obj.get("predicate")
                i = fid - self.first_id
                op = "assert" if self.heads[i] == hash(("assert", subj, pred)) else "statement"
                if op != "assert" and not (isinstance(subj, str) and isinstance(pred, str)):
                    raise BadInput(f"a cite of {ref}, a fact of the same large import, needs its 'subject' and "
                                   "'predicate'")
                target = Statement(fid, op, str(subj), str(pred), None, "", 0, None, self.recorded[i])
        else:
            target = self.store.statement(fid)
        if target is not None and fid in self.retractions:
            target = target._replace(retracted_at=self.retractions[fid][0])
        if target is not None and target.op != "assert" and target.op not in ("end", "cite"):
            raise BadInput(f"bad cite of {ref}: its 'subject' and 'predicate' are not those of that assertion")
        note = obj.get("note")
        return self.checks.citation(next_id, ref, target, srcs, note, obj.get("asserted_by") or "import",
                                    opt_str(obj, "recorded_at"), self.now, self.record_refs,
                                    None if obj.get("scope") is None else scope_list(opt_str(obj, "scope")))

    def _attach(self, ref: str, st: Statement, next_id: int) -> None:
        """A new cite's sources are not attached to its assertion yet (by the store or this import)."""
        fid = st.valid_from
        attached: tuple[str, ...] = ()
        if not self.first_id <= fid < next_id:
            target = self.store.statement(fid)
            if target is not None:
                attached = attached_sources(self.store.subject_log(target.subject), target)
        elif self.sink is None:
            attached = self.stmts[self.by_id[fid]].sources
        not_attached(ref, st, (*attached, *self.cited[fid]))
        self.cited[fid].extend(st.sources)


def import_lines(store: StorageEngine, checks: Checks, source: str | Path | Iterable[str] | Iterable[bytes], *,
                 strict: bool = False, progress: Progress = no_progress, scope: str | None = None) -> ImportReport:
    """Validate every line, then write the valid ones (all or nothing with ``strict``); ``progress``
    hears how far it has got; ``scope`` is the scope of statement lines that carry none."""
    scope = one_scope(scope)
    store.check_writable("import")  # before reading the whole file
    t0 = time.perf_counter()
    # a file is read as a stream; a large one preloads the name index (one scan beats many lookups)
    lines: Iterable[str] = file_lines(source, progress)
    size = 0
    path: Path | None = None
    if isinstance(source, str | Path):
        path = Path(source)
        size = path.stat().st_size if path.is_file() else 0
        large = size > BULK_LINES * 200
    else:
        lines = list(lines)
        large = len(lines) > BULK_LINES
    now = now_us()
    # a very large file writes its statements to bulk files as they come (no statement objects held);
    # smaller imports keep them, and an import into an empty store computes the view from them
    sink = store.statement_file() if size > STREAM_BYTES else None
    stored = held(store, large)
    # the ids are read, the lines checked and the valid ones written in one transaction: a refused import
    # (strict, with an error) or one with nothing to write takes back nothing but releases the store's lock
    with store.transaction():
        # (the reader alone holds the resolver: ``release`` lets it go)
        r = _Reader(store, checks, now, Resolver(store, batch=True, preload=large), store.next_fact_id(),
                    store.next_record_id(), sink, stored, scope)
        if not _read_and_write(r, path, lines, strict, now, progress):
            return ImportReport(r.n_lines, 0, 0, 0, 0, None, None, tuple(r.errors), False, time.perf_counter() - t0,
                                r.unchanged)
    if sink is not None:
        give_back_memory()  # what the commit freed, before the next step (the linking lexicon, at close)
    n_stmts = r.next_id - r.first_id
    return ImportReport(r.n_lines, r.n_created, r.n_updated, n_stmts, len(r.retractions),
                        fact_ref(r.first_id) if n_stmts else None, fact_ref(r.next_id - 1) if n_stmts else None,
                        tuple(r.errors), True, time.perf_counter() - t0, r.unchanged)


def _read_and_write(r: _Reader, path: Path | None, lines: Iterable[str], strict: bool, now: int,
                    progress: Progress) -> bool:
    """Read and check every line, then write the valid ones (in the caller's transaction); False when
    ``strict`` refuses the import for an error (nothing written)."""
    sink = r.sink
    try:
        # two cores only into a store without entities: the child process must not query the store
        run = (_plain_run(path) if path is not None and sink is not None and r.resolve.store_empty and r.stored is None
               else None)
        if path is None:
            assert isinstance(lines, list)
            r.read(counted(lines, progress))
        elif run is None:
            r.read(enumerate(lines, 1))
        else:
            _read_on_two_cores(r, path, *run, progress=progress)
    except BaseException:
        if sink is not None:
            sink.discard()
        if r.halves is not None:
            r.halves.drop()
        raise
    try:
        return _write_read(r, strict, now, progress)
    finally:
        if r.halves is not None:  # (their view files, if any, are the write's to remove)
            r.halves.drop()


def _write_read(r: _Reader, strict: bool, now: int, progress: Progress) -> bool:
    """``_read_and_write``'s second step: write what ``r`` read (False: ``strict`` refuses it)."""
    sink, store = r.sink, r.store
    n_stmts = r.next_id - r.first_id
    if strict and r.errors:
        if sink is not None:
            sink.discard()
        return False
    del r.recorded
    created, updated = r.release()
    if created or updated or r.records or n_stmts or r.retractions:
        progress("writing to the store", 0, None)
        _write(store, r.checks.registry, created, updated, sink or r.stmts, r.next_id,
               r.by_id, r.retractions, r.touched, now, r.records, r.rec_mentions, progress, r.halves)
    elif sink is not None:
        sink.discard()
    return True


def _plain_run(path: Path) -> tuple[int, int, int] | None:
    """``lines._plain_run_of`` with this module's ``PARALLEL_BYTES``: the run of plain lines read on two cores."""
    return _plain_run_of(path, PARALLEL_BYTES)


def _write(store: StorageEngine, registry: Registry, created: list[Entity],
           updated: list[tuple[Entity, tuple[str, ...], str | None]], stmts: list[Statement] | StatementBatch,
           next_id: int, by_id: dict[int, int], retractions: dict[int, tuple[int, str | None]],
           touched: dict[str, set[str]], now: int, records: list[Record],
           rec_mentions: dict[int, list[tuple[str, int, int, str]]], progress: Progress = no_progress,
           halves: _Halves | None = None) -> None:
    """Write everything in one transaction: entities, aliases, records and mentions, then the statements
    and retractions with the view of every subject they touch.

    Few subjects touched, statements in a list: the write path's ``apply``, as every other write. Else
    the bulk mechanics only an import needs: the statements from the bulk file a large import wrote as
    it read, and the view bulk-loaded for the whole store (computed from this import's bulk files when
    the store had no statements, ``_views_from_files``), or, for a streamed import touching few subjects,
    rewritten from the rows Kuzu groups by subject (the statements are not held in memory). Both append
    and set retractions through ``write.apply.append``.
    """
    first_new = store.next_fact_id()  # ids from here on are this import's
    # into an empty store, or touching many subjects: one bulk load of the whole view beats row-by-row writes
    fresh = store.statement_count() == 0
    reload = len(touched) > _RELOAD_SUBJECTS or fresh
    any_touched = bool(touched)
    marks: list[tuple[int, int, str | None]] = []  # retractions set on stored rows
    own: dict[int, tuple[int, str | None]] = {}  # retractions of statements in the bulk files: set as they load
    for fid, (at, reason) in retractions.items():
        if fid in by_id and isinstance(stmts, list):  # a statement of this import, still in the list
            i = by_id[fid]
            stmts[i] = stmts[i]._replace(retracted_at=at, retract_reason=reason)
        elif fid >= first_new and not isinstance(stmts, list):
            own[fid] = (at, reason)
        else:
            marks.append((fid, at, reason))
    by_id.clear()
    touch(store, marks, touched, first_new=first_new)  # this import's subjects are touched already
    views: list[ViewBatch] = []
    computing: Forked[str, ViewBatch] | Threaded[ViewBatch] | None = None
    if fresh and isinstance(stmts, StatementBatch) and touched:
        # every statement is in this import's bulk files: two children compute the view from them, before
        # the transaction (loading meanwhile measured no faster at 1M on 2 cores, and the children's memory
        # would add to Kuzu's: docs/benchmarks.md)
        view_names = store.entity_names()
        view_names.update((e.ref, e.name) for e in created)
        progress("computing the view", 0, None)
        views = (halves.views(store, registry, retractions, touched, view_names) if halves is not None else None) or \
            _views_from_files(store, registry, stmts, sorted(touched), retractions, view_names).result()
        # what only the view needed goes before Kuzu's loads (the entities themselves after theirs)
        del view_names
        touched.clear()
        give_back_memory()
        progress("writing to the store", 0, None)
    elif fresh and isinstance(stmts, list) and len(stmts) >= THREAD_VIEW_STATEMENTS:
        # the same from the statements in memory, by a thread
        view_names = store.entity_names()
        view_names.update((e.ref, e.name) for e in created)
        progress("computing the view", 0, None)
        computing = _views_from_list(store, registry, stmts, view_names)
    names: dict[str, str | None] = {} if views else {e.ref: e.name for e in created}  # (with views: not asked)

    def name_of(ref: str) -> str | None:
        if ref not in names:
            e = store.entity(ref)
            names[ref] = e.name if e else None
        return names[ref]

    try:
        with store.transaction():
            if len(created) > 50:
                store.bulk_add_entities(created, now)
                if views:
                    created.clear()
            else:
                for e in created:
                    store.add_entity(e, now)
            for have, extra, desc in updated:
                store.add_aliases(have, extra, desc)
            store.add_records(records)
            for rid, ms in rec_mentions.items():
                store.add_mentions(rid, ms)
            if isinstance(stmts, list) and not (reload and any_touched):
                apply(store, registry, stmts, marks, touched=touched, name_of=name_of, next_id=next_id)
                return
            append(store, stmts, marks, next_id, own)
            if reload and any_touched:
                if computing is not None:
                    views, computing = computing.result(), None
                if views:
                    store.load_view(views)
                    give_back_memory()  # what Kuzu's loads freed, before its commit copies what they hold
                elif fresh and isinstance(stmts, list):  # every statement is here: the view from them
                    store.load_view([store.write_view_files(_views_of(store, registry, stmts))])
                else:  # recompute every view from the store (Kuzu groups the statements by subject)
                    reload_view(store, registry, store.entity_names(), progress)
                return
            # a streamed import touching few subjects: their statements, grouped by Kuzu from the rows just written
            for ref, text in store.subject_logs(refs=sorted(touched)):
                log = store.statements_from_log(ref, text, name_of)[0]
                store.write_subject(ref, name_of(ref) or ref, log, view_for_subject(log, registry), touched[ref])
    finally:
        if computing is not None:  # the write failed: wait for the children, drop what they made
            views = computing.result(fallback=False)
        for v in views:
            v.discard()
        if isinstance(stmts, StatementBatch):
            stmts.discard()

