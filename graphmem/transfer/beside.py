"""What a large import computes beside its loads (``importer._write``): the view of every subject from the
import's own statements, by the children that read them (``_Halves``), from its bulk files in two forked
children, or from the list it holds in a thread."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from graphmem.bulk import Forked, Threaded
from graphmem.model import Interval, Statement
from graphmem.ontology.schema import Registry
from graphmem.store import StatementBatch, StorageEngine, ViewBatch, read_back
from graphmem.view.temporal import view_for_subject


def _views_from_files(store: StorageEngine, registry: Registry, stmts: StatementBatch, refs: list[str],
                      retractions: dict[int, tuple[int, str | None]], names: dict[str, str]) -> Forked[str, ViewBatch]:
    """The view of ``refs`` (every subject of the store) from an import's bulk files, written to view files
    by two forked children, each reading the files for its half of the subjects (started here; their
    ``result`` is the view files): the statements they hold go back when they exit, before Kuzu's loads
    need the memory."""
    get = names.get
    stmts.finish()  # here: the children must not write what this process has pending

    def chunk(part: list[str]) -> ViewBatch:
        logs: dict[str, list[Statement]] = {ref: [] for ref in part}
        for st in stmts.statements(logs, retractions, get):
            logs[st.subject].append(st)
        return store.write_view_files(_view_rows(store, registry, part, logs, get))

    return Forked(chunk, refs)


def _views_from_list(store: StorageEngine, registry: Registry, stmts: list[Statement],
                     names: dict[str, str]) -> Threaded[ViewBatch]:
    """The view's files from statements held in a list (every statement of the store, in id order),
    written by a thread while this one loads the statements into the store (Kuzu's COPY runs without
    Python's lock): forked children would copy the pages of every statement they and this process touch."""
    by_subject: dict[str, list[Statement]] = defaultdict(list)
    for st in stmts:
        by_subject[st.subject].append(st)
    return Threaded(lambda: store.write_view_files(_view_rows(store, registry, sorted(by_subject), by_subject, names.get)))


def _drain(items: list[Statement]) -> Iterator[Statement]:
    """The items in order, each dropped from the list as it is handed out."""
    items.reverse()
    while items:
        yield items.pop()


def _views_of(store: StorageEngine, registry: Registry, stmts: list[Statement]) -> Iterator[tuple[str, str, str, list[Interval]]]:
    """Each subject's row for ``store.write_view_files``, from every statement of the store (in id order;
    the list is consumed)."""
    by_subject: dict[str, list[Statement]] = defaultdict(list)
    for st in _drain(stmts):
        by_subject[st.subject].append(st)
    yield from _view_rows(store, registry, sorted(by_subject), by_subject, store.entity_names().get)


def _view_rows(store: StorageEngine, registry: Registry, refs: list[str], logs: dict[str, list[Statement]],
               name_of: Callable[[str], str | None]) -> Iterator[tuple[str, str, str, list[Interval]]]:
    """``store.write_view_files``'s row of each of ``refs`` from its statements (in id order); each
    subject's statements are dropped from ``logs`` once its row is made; the log in the store's own form."""
    log_text = store.log_text
    for ref in refs:
        log = logs.pop(ref)
        yield ref, name_of(ref) or ref, log_text(log), view_for_subject(log, registry)


class _Halves:
    """The children of a two-core read (``_read_on_two_cores``), waiting with their statements by subject
    after handing over what they read: when every statement of the import is theirs (``touched`` set:
    the subjects of each), ``views`` has each compute the view of the subjects only it holds, and
    computes here those both hold (a file grouped by subject has few: the subjects that straddle the
    middle). Otherwise, or when the two share more than a twentieth of the subjects (a file in random
    order), the view is computed as without them (``beside._views_from_files``)."""

    SHARED = 20  # the children compute their views when both hold at most 1 in this many subjects

    def __init__(self, work: Forked[tuple[int, int], Any]) -> None:
        self.work = work
        self.touched: list[set[str]] | None = None

    def views(self, store: StorageEngine, registry: Registry, retractions: dict[int, tuple[int, str | None]],
              touched: dict[str, set[str]], names: dict[str, str]) -> list[ViewBatch] | None:
        """The view's files: the children's, and those of the subjects both hold made here; None (the
        children ended) when they cannot compute it."""
        if self.touched is None or len(self.touched[0] & self.touched[1]) * self.SHARED > len(touched):
            self.drop()
            return None
        shared = self.touched[0] & self.touched[1]
        self.touched = None
        answers = self.work.then([(shared, retractions)] * 2)
        views: list[ViewBatch] = [v[0] for done, v in answers if done and v is not None and v[0] is not None]
        if len(answers) != 2 or not all(done and v is not None for done, v in answers):
            for view in views:
                view.discard()
            return None
        logs: dict[str, list[Statement]] = defaultdict(list)
        for _, (_, theirs) in answers:  # the first child's statements come first (their ids are lower)
            for ref, statements in theirs.items():
                logs[ref].extend(statements)
        if logs:
            try:
                views.append(store.write_view_files(_view_rows(store, registry, sorted(logs), logs, names.get)))
            except BaseException:
                for view in views:
                    view.discard()
                raise
        return views

    def drop(self) -> None:
        """End the children that still wait (nothing more is asked of them)."""
        if self.work.waiting:
            self.work.then([None] * self.work.waiting)


def _view_of_kept(store: StorageEngine, registry: Registry, kept: dict[str, list[Statement]], names: dict[str, str],
                  reply: tuple[set[str], dict[int, tuple[int, str | None]]]) -> tuple[ViewBatch | None,
                                                                                      dict[str, list[Statement]]]:
    """In a child of a two-core read: the view files of the subjects it read (``kept``, their statements
    in id order) but those in ``reply``'s shared set, with ``reply``'s retractions; and the statements
    of the shared subjects, for the parent (``_Halves.views``). Each statement as the view reads it from
    the import's bulk files (``read_back``): entity objects named by ``names``."""
    shared, retractions = reply
    get = names.get
    logs: dict[str, list[Statement]] = {}
    theirs: dict[str, list[Statement]] = {}
    for ref in list(kept):
        statements = [read_back(st, get, retractions) for st in kept.pop(ref)]
        (theirs if ref in shared else logs)[ref] = statements
    refs = sorted(logs)
    return (store.write_view_files(_view_rows(store, registry, refs, logs, get)) if refs else None), theirs

