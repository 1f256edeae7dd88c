"""How long work tells its caller how far it has got: a ``Progress`` callback (the CLI draws a bar with it).

The library calls ``progress(task, done, total)`` now and then: at each phase, and every few thousand
items of a long loop, never per item. ``task`` is a short phrase ("reading import.jsonl", "checking
subjects"); ``done`` and ``total`` count its items (bytes, lines, subjects, records), ``total`` None when
not known. A new ``task`` starts a new phase. Work shared with a forked child process reports from the
parent only (``here_only``), so a callback never runs in a child.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")


class Progress(Protocol):
    """Told how far a long piece of work has got; must be quick, and must not raise."""

    def __call__(self, task: str, done: int, total: int | None = None) -> None: ...


def no_progress(task: str, done: int, total: int | None = None) -> None:
    """The default: nobody is told."""


EVERY = 4096  # items between two calls in a long loop


def here_only(progress: Progress) -> Progress:
    """``progress``, silenced in any process forked after this call (a child's reports would go nowhere, and
    a callback drawing on a terminal is not safe to run in a fork)."""
    if progress is no_progress:
        return progress
    pid = os.getpid()

    def report(task: str, done: int, total: int | None = None) -> None:
        if os.getpid() == pid:
            progress(task, done, total)

    return report


def counted(items: Sequence[T], task: str, progress: Progress, every: int = 1) -> Iterator[T]:
    """The items in order, ``progress`` told of each ``every``-th before it is handed out, and of the end."""
    if progress is no_progress:
        yield from items
        return
    total = len(items)
    for n, item in enumerate(items):
        if not n % every:
            progress(task, n, total)
        yield item
    progress(task, total, total)
