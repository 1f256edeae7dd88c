"""Helpers for work over the whole store (rebuild, lint, large imports): no garbage collector pauses, two cores."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small, acyclic objects are made.

    Each collection walks every live container, so a bulk read of a million statements
    spends more time collecting than reading; reference counting still frees everything. What the
    pause made is moved to the oldest generation when it ends (``_promote``).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _promote()
            gc.enable()


def _promote() -> None:
    """Move every tracked object to the oldest generation (``freeze`` then ``unfreeze``: two list splices).
    Without it the first collection after a pause walks every object the pause made (at 1M, 0.2-0.3 s
    after the predicate scan); they are still collected, by the next full collection."""
    gc.freeze()
    gc.unfreeze()


def give_back_memory() -> None:
    """Hand the C allocator's free memory back to the system (glibc's ``malloc_trim``; nothing elsewhere):
    what a bulk step freed otherwise stays with the process and adds to the peak of the next step (a large
    import's Python work, before Kuzu's loads).

    >>> give_back_memory()
    """
    global _trim
    if _trim is None:
        _trim = _no_trim
        if sys.platform.startswith("linux"):
            import ctypes
            import ctypes.util
            with contextlib.suppress(OSError, AttributeError):
                _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    _trim(0)


def _no_trim(pad: int) -> int:
    return 0


_trim: Callable[[int], int] | None = None


def forked_map(fn: Callable[[list[T]], R], items: list[T], *, min_items: int = 2000,
               parent_works: bool = True) -> list[R]:
    """``[fn(chunk) for chunk in chunks]`` over two halves of ``items``, one in a forked child process.

    Rebuild and lint spend most of their time in Python code per subject, which one
    process runs on one core; the store is sized for two (SPEC 12). ``fn`` must be pure
    Python over its chunk: the child never touches the database, and hands its result
    back pickled through a pipe. Small inputs, platforms other than Linux, and any
    failure of a child fall back to running its half here, so the result is the same.

    With ``parent_works=False`` both halves run in forked children, so the memory they
    take goes back when they exit (a large import computes its view this way, before
    Kuzu's loads need the memory); ``Forked`` starts them and lets this process work
    meanwhile.
    """
    if not parent_works:
        return Forked(fn, items, min_items=min_items).result()
    if not _can_fork(items, min_items):
        return [fn(items)]
    half = len(items) // 2
    halves = [items[:half], items[half:]]
    pid, fd = _fork(fn, halves[1])
    try:
        first = fn(halves[0])
    except BaseException:
        os.close(fd)
        os.waitpid(pid, 0)
        raise
    done, value = _collect(pid, fd)
    return [first, value if done else fn(halves[1])]


def _can_fork(items: list[Any], min_items: int) -> bool:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    return len(items) >= min_items and cpus >= 2 and sys.platform.startswith("linux")


class Forked(Generic[T, R]):
    """``fn`` over the two halves of ``items``, each in a forked child started at once; ``result`` waits for
    them. This process is free meanwhile (a large import loads its statements into the store while its
    children compute the view from the same bulk files).

    As with ``forked_map``: small inputs and other platforms run ``fn`` here, in ``result``, and a
    child that fails has its half run here. ``result(fallback=False)`` (work that is being dropped)
    only waits for the children and returns what they finished.

    With ``talk=True`` a child says two things: ``fn(half, ask)`` hands its first result to ``ask``,
    which returns this process's reply (given by ``then``, once ``result`` has the first results),
    and ``fn`` then returns its second (a large import's reading children keep their statements and
    compute their subjects' view once this process has read the rest of the file). Run here, ``fn`` gets
    ``ask=None`` and returns its first result only.

    >>> sum(Forked(sum, [1, 2, 3, 4]).result())  # one or two parts
    10
    >>> def twice(half, ask):
    ...     first = sum(half)
    ...     return first if ask is None else first * ask(first)
    >>> work = Forked(twice, [1, 2, 3, 4], talk=True)
    >>> firsts = work.result()
    >>> sum(firsts), [value for _, value in work.then([10] * len(firsts))] in ([], [30, 70])
    (10, True)
    """

    def __init__(self, fn: Callable[..., R], items: list[T], *, min_items: int = 2, talk: bool = False) -> None:
        self._fn = fn
        self._talk = talk
        self._halves: list[list[T]] = [items]
        self._children: list[tuple[int, int]] = []  # (pid, read end of its pipe) of each half
        self._replies: list[tuple[int, int, int]] = []  # talk: (pid, read end, write end) of each child still asked
        if not _can_fork(items, min_items):
            return
        half = len(items) // 2
        self._halves = [items[:half], items[half:]]
        try:
            for part in self._halves:
                self._children.append(_fork(fn, part, talk))
        except BaseException:
            self.result(fallback=False)
            raise

    def result(self, fallback: bool = True, while_waiting: Callable[[], None] | None = None) -> list[R]:
        """Each half's ``fn`` result, in order (the children waited for; ``while_waiting`` is called about
        five times a second meanwhile, as a progress report might be)."""
        if not self._children:  # not forked: the work is done here
            if not fallback:
                return []
            return [self._fn(h, None) for h in self._halves] if self._talk else [self._fn(h) for h in self._halves]
        if while_waiting is not None:
            import select
            pending = [fd for _, fd in self._children]
            while pending:
                ready, _, _ = select.select(pending, [], [], 0.2)
                pending = [fd for fd in pending if fd not in ready]
                if pending:
                    while_waiting()
        out: list[R] = []
        children, self._children = self._children, []
        handled = 0
        try:
            for (pid, fd), half in zip(children, self._halves, strict=False):
                if self._talk:  # the child's first word; it waits for the reply (``then``)
                    done, value = _receive(fd)
                    if done:
                        self._replies.append((pid, fd, value[1]))
                        value = value[0]
                    else:
                        _close(pid, fd)
                else:
                    done, value = _collect(pid, fd)
                handled += 1
                if done:
                    out.append(value)
                elif fallback:
                    out.append(self._fn(half, None) if self._talk else self._fn(half))
        except BaseException:  # interrupted (Ctrl-C, say): no child is left behind
            asked = {pid for pid, _, _ in self._replies}
            for pid, fd in children[handled:]:
                if pid not in asked:
                    _abandon(pid, fd)
            for pid, fd, to_child in self._replies:
                _abandon(pid, fd, to_child)
            self._replies = []
            raise
        if not fallback and self._replies:  # dropped: the children that wait for a reply are ended
            self.then([None] * len(self._replies))
        return out

    @property
    def waiting(self) -> int:
        """With ``talk``: how many children gave their first result and wait for a reply (``then``)."""
        return len(self._replies)

    def then(self, replies: list[Any]) -> list[tuple[bool, Any]]:
        """With ``talk``: hand each child that gave its first result (``result``) its reply, in order, and
        wait for what it returns then: (whether it did, the value), a child's each. A reply of None ends
        its child at once (its value None). Children that ran here, or failed, are not asked: the list is
        as long as the children that answered. Call it once, also when the work is dropped."""
        asked, self._replies = self._replies, []
        for (_, _, to_child), reply in zip(asked, replies, strict=False):
            try:
                _send(to_child, reply)
            except OSError:  # the child has gone: its answer below says so
                pass
            finally:
                os.close(to_child)
        out = []
        try:
            for pid, fd, _ in asked:
                done, value = _receive(fd)
                _close(pid, fd)
                out.append((done, value))
        except BaseException:  # interrupted: the children not heard from are ended
            for pid, fd, _ in asked[len(out):]:
                _abandon(pid, fd)
            raise
        return out


def _fork(fn: Callable[..., R], items: list[T], talk: bool = False) -> tuple[int, int]:
    """A child computing ``fn(items)``: its pid and the read end of the pipe its pickled result comes through.

    With ``talk``, ``fn(items, ask)``: the child's ``ask(first)`` sends ``first`` (a message read by
    ``_receive``) and returns this process's reply (``Forked.then``; None: the child stops there, and
    ``ask`` raises ``_Stop``); what ``fn`` returns is sent as a second message. The read end of the
    reply's pipe is passed with the first message (``_receive`` hands over (value, write end))."""
    import pickle  # here, not at the top: the cold command line path never forks

    read_fd, write_fd = os.pipe()
    ask_r, ask_w = os.pipe() if talk else (-1, -1)
    try:
        pid = os.fork()
    except BaseException:
        for fd in (read_fd, write_fd, ask_r, ask_w):
            if fd >= 0:
                os.close(fd)
        raise
    if pid == 0:  # the child: compute, send, leave without running any exit handlers
        status = 0
        try:
            os.close(read_fd)
            if talk:
                os.close(ask_w)

                def ask(first: Any) -> Any:
                    _send(write_fd, first)
                    got, reply = _receive(ask_r)
                    if not got or reply is None:
                        raise _Stop
                    return reply
                try:
                    _send(write_fd, fn(items, ask))
                except _Stop:
                    _send(write_fd, None)
                os.close(write_fd)
            else:
                data = pickle.dumps(fn(items), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(data)
        except BaseException:
            status = 1
        os._exit(status)
    os.close(write_fd)
    if talk:
        os.close(ask_r)
        _FDS[read_fd] = ask_w
    return pid, read_fd


_FDS: dict[int, int] = {}  # talk: the read end of a child's results -> the write end of its replies


class _Stop(Exception):
    """A talking child's reply was None: it stops without a second result."""


def _send(fd: int, value: Any) -> None:
    """``value`` pickled, after its length in 8 bytes (``_receive``)."""
    import pickle

    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts, left = [], n
    while left:
        got = os.read(fd, min(left, 1 << 20))
        if not got:
            return None
        parts.append(got)
        left -= len(got)
    return b"".join(parts)


def _receive(fd: int) -> tuple[bool, Any]:
    """One message of ``_send`` (False: the pipe ended first, the sender failed). From a talking child's
    first message: (value, the write end of its replies' pipe)."""
    import pickle

    head = _read_exactly(fd, 8)
    data = None if head is None else _read_exactly(fd, int.from_bytes(head, "little"))
    if data is None:
        return False, None
    value = pickle.loads(data)
    if fd in _FDS:
        return True, (value, _FDS.pop(fd))
    return True, value


def _close(pid: int, fd: int) -> None:
    """Close a child's pipe and wait for it (a talking child's replies' pipe too, if still open)."""
    with contextlib.suppress(OSError):
        os.close(fd)
    if fd in _FDS:
        with contextlib.suppress(OSError):
            os.close(_FDS.pop(fd))
    os.waitpid(pid, 0)


def _abandon(pid: int, fd: int, to_child: int = -1) -> None:
    """End a child this process no longer waits for: killed, its pipes closed, reaped."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    if to_child >= 0:
        with contextlib.suppress(OSError):
            os.close(to_child)
    with contextlib.suppress(OSError):
        _close(pid, fd)


def _collect(pid: int, read_fd: int) -> tuple[bool, Any]:
    """Wait for a child of ``_fork``: whether it succeeded, and its result."""
    import pickle

    with os.fdopen(read_fd, "rb") as inp:
        data = inp.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return False, None
    return True, pickle.loads(data)


class Threaded(Generic[R]):
    """``fn()`` computed in a thread started at once; ``result`` waits for it (the same interface as
    ``Forked``, with one part). Kuzu lets go of Python's lock while it runs a query, so Python work in
    the thread goes on while this thread loads rows into the store: no fork, nothing copied or pickled.

    >>> Threaded(lambda: 6 * 7).result()
    [42]
    """

    def __init__(self, fn: Callable[[], R]) -> None:
        import threading

        self._out: list[R] = []
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._out.append(fn())
            except BaseException as e:  # handed to the caller of ``result``
                self._error = e

        self._thread = threading.Thread(target=run, name="graphmem-bulk", daemon=True)
        self._thread.start()

    def result(self, fallback: bool = True) -> list[R]:
        """``[fn()]`` once the thread is done; its exception is raised here (``fallback=False``: work that
        is being dropped, so ``[]`` instead)."""
        self._thread.join()
        if self._error is not None:
            if fallback:
                raise self._error
            return []
        return list(self._out)
