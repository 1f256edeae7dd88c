"""What a large import computes beside its loads (``importer._write``): the view of every subject from the
import's own statements, from its bulk files in two forked children, or from the list it holds in a thread."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator

from graphmem.bulk import Forked, Threaded
from graphmem.model import Interval, Statement
from graphmem.ontology.schema import Registry
from graphmem.store import StatementBatch, StorageEngine, ViewBatch
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
