"""Helpers for work over the whole store (rebuild, lint, large imports): no garbage collector pauses, two cores."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

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
    Kuzu's loads need the memory).
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if len(items) < min_items or cpus < 2 or not sys.platform.startswith("linux"):
        return [fn(items)]
    half = len(items) // 2
    halves = [items[:half], items[half:]]
    children: dict[int, tuple[int, int]] = {}  # half -> (pid, read end of its pipe)
    out: dict[int, R] = {}
    try:
        for i in (0, 1) if not parent_works else (1,):
            children[i] = _fork(fn, halves[i])
        if parent_works:
            out[0] = fn(halves[0])
    except BaseException:
        for pid, fd in children.values():
            os.close(fd)
            os.waitpid(pid, 0)
        raise
    for i, (pid, fd) in children.items():
        done, value = _collect(pid, fd)
        out[i] = value if done else fn(halves[i])
    return [out[0], out[1]]


def _fork(fn: Callable[[list[T]], R], items: list[T]) -> tuple[int, int]:
    """A child computing ``fn(items)``: its pid and the read end of the pipe its pickled result comes through."""
    import pickle  # here, not at the top: the cold command line path never forks

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running any exit handlers
        status = 0
        try:
            os.close(read_fd)
            data = pickle.dumps(fn(items), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        except BaseException:
            status = 1
        os._exit(status)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> tuple[bool, Any]:
    """Wait for a child of ``_fork``: whether it succeeded, and its result."""
    import pickle

    with os.fdopen(read_fd, "rb") as inp:
        data = inp.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return False, None
    return True, pickle.loads(data)
