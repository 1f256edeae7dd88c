"""Group commit: the service's writes from concurrent requests, run in one transaction per commit.

One thread, the committer, runs every write. A request hands it its write and waits; the committer
takes all the writes waiting when it is free (up to ``MAX_GROUP``), runs them in order in one store
transaction (``Memory.write_group``), commits once, and only then answers each of them: an answer
means the write is committed, so it survives a ``kill -9`` of the server. While a group commits, the
next one gathers, so a lone write waits for nothing and many writes share the cost of a commit.

Each write keeps its own outcome. A write refused as bad input before it wrote anything (the store's
count of writing queries did not move: ``WriteGroup.writes_done``) is answered with its error and
the group goes on. A write that failed after it wrote is taken back with the whole transaction, and
the group is run again without it, its error kept. A failure of the commit itself fails every write
of the group: none is acknowledged. Writes other than those in ``GROUPED`` (entity changes, import,
ingest, extract) run alone, each its own transaction, in their turn. docs/service.md, "Group commit".
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from graphmem.errors import GraphmemError, StoreUnavailable

# the operations (names in operations.py) that share a transaction: single statements and notes, whose
# checks come before their writes; the rest run alone
GROUPED = frozenset({"assert", "end", "retract", "cite", "note"})
DEFERRED = frozenset({"assert"})  # checked when run, applied with the group's other asserts before the commit
MAX_GROUP = 256


@dataclass
class _Write:
    name: str
    fn: Callable[[Any], Any]  # (memory) -> the answer's document
    future: Future[Any] | asyncio.Future[Any] = field(default_factory=Future)
    loop: asyncio.AbstractEventLoop | None = None  # ``future`` is this loop's: settled there (``_answer``)


def _settle(answers: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    """On the event loop: each awaiting request's answer (a request that went away is left alone)."""
    for fut, ok, value in answers:
        if not fut.done():
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(value)


class _Replay(Exception):
    """A write failed after it wrote: the transaction is rolled back and the group run again without it."""

    def __init__(self, index: int, error: BaseException) -> None:
        super().__init__(index)
        self.index, self.error = index, error


class Committer:
    """Runs the service's writes, grouping concurrent ones into one commit.

    ``run(fn)`` calls ``fn(memory)`` with the store to itself (no read or other write at the same
    time) and returns what it returns. ``groups`` and ``writes`` count what was committed.
    """

    def __init__(self, run: Callable[[Callable[[Any], Any]], Any], max_group: int = MAX_GROUP) -> None:
        self._run = run
        self._max = max_group
        self._queue: deque[_Write] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.groups = 0
        self.writes = 0

    def start(self) -> None:
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="graphmem-committer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Run the writes already handed over, then stop; a write handed over later is refused."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()

    def submit(self, name: str, fn: Callable[[Any], Any]) -> Future[Any]:
        """Hand over the write of operation ``name``; the future is done once it is committed (or failed)."""
        w = _Write(name, fn)
        self._hand_over(w)
        assert isinstance(w.future, Future)
        return w.future

    async def write(self, name: str, fn: Callable[[Any], Any]) -> Any:
        """``submit``, awaited: the write's answer once it is committed, or its error. The answers of a
        group reach the event loop together, one wake-up for all (``_answer``), not one per write."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        self._hand_over(_Write(name, fn, answer, loop))
        return await answer

    def _hand_over(self, w: _Write) -> None:
        with self._cond:
            if self._stopping:
                raise StoreUnavailable("the store is closed: the server is shutting down")
            self._queue.append(w)
            self._cond.notify()

    @staticmethod
    def _answer(writes: list[_Write], outcomes: list[tuple[bool, Any]]) -> None:
        """Each write's outcome (ok, answer or error) to its waiter: a ``submit``'s future at once, the
        futures of each event loop by one call on that loop."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for w, (ok, value) in zip(writes, outcomes, strict=True):
            if w.loop is not None:
                by_loop.setdefault(w.loop, []).append((w.future, ok, value))  # type: ignore[arg-type]
            elif ok:
                w.future.set_result(value)
            else:
                w.future.set_exception(value)
        for loop, answers in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for these answers any more
                loop.call_soon_threadsafe(_settle, answers)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    return
                batch = [self._queue.popleft()]
                if batch[0].name in GROUPED:
                    while self._queue and self._queue[0].name in GROUPED and len(batch) < self._max:
                        batch.append(self._queue.popleft())
            if batch[0].name in GROUPED:
                self._commit(batch)
            else:
                self._alone(batch[0])

    def _alone(self, w: _Write) -> None:
        try:
            result = self._run(w.fn)
        except BaseException as e:
            self._answer([w], [(False, e)])
            return
        self.groups += 1
        self.writes += 1
        self._answer([w], [(True, result)])

    def _commit(self, batch: list[_Write]) -> None:
        failed: dict[int, BaseException] = {}  # each write's own error, final
        while True:
            results: dict[int, Any] = {}

            def group(m: Any, results: dict[int, Any] = results) -> None:
                self._group(m, batch, failed, results)
            try:
                self._run(group)
            except _Replay as r:  # rolled back: again, without the write that failed after it wrote
                failed[r.index] = r.error
                continue
            except BaseException as e:  # the group or its commit failed: no write of it is acknowledged
                self._answer(batch, [(False, failed.get(i, e)) for i in range(len(batch))])
                return
            break
        self.groups += 1
        self.writes += len(results)
        self._answer(batch, [(False, failed[i]) if i in failed else (True, results[i]) for i in range(len(batch))])

    @staticmethod
    def _group(m: Any, batch: list[_Write], failed: dict[int, BaseException], results: dict[int, Any]) -> None:
        with m.write_group() as g:
            for i, w in enumerate(batch):
                if i in failed:
                    continue
                if w.name not in DEFERRED:
                    g.flush()  # the asserts before it are applied first: it may read what they change
                before = g.writes_done()
                try:
                    results[i] = w.fn(m)
                except GraphmemError as e:
                    if g.writes_done() != before:
                        raise _Replay(i, e) from None
                    failed[i] = e  # refused before it wrote: the others go on
                except Exception as e:
                    raise _Replay(i, e) from None
