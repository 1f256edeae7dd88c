"""Progress bars on stderr for the long commands (import, ingest, extract, lint, rebuild).

A ``Bar`` is the library's ``Progress`` callback (``graphmem.model.progress``). It draws nothing unless
stderr is a terminal, and nothing before the command has run for a second; rich is imported only when
the bar first shows, so quick and piped commands never load it.

Whole-store work forks (``graphmem.bulk``) while rich's refresh thread may be drawing: before a fork
the bar's locks are taken, so the child never starts with a lock that thread held, and the child
never draws (the library calls back from the parent only).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

DELAY = 1.0  # seconds of work before a bar shows

_showing: list[Bar] = []  # the bar on screen, for the fork hooks


class Bar:
    """Draws the progress it is told of on ``stream`` (stderr), once the work has run ``delay`` seconds."""

    def __init__(self, stream: IO[str] | None = None, delay: float = DELAY) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.delay = delay
        self.shown: Any = None  # the rich Progress, once shown
        self.task: Any = None
        self.name: str | None = None

    def __call__(self, task: str, done: int, total: int | None = None) -> None:
        if not self.on:
            return
        if self.shown is None:
            if time.monotonic() - self.start < self.delay:
                return
            self._show()
        if task != self.name:  # a new phase: a new line (rich keeps a task's total when given None)
            if self.task is not None:
                self.shown.remove_task(self.task)
            self.name = task
            self.task = self.shown.add_task(task, total=total, completed=done)
        else:
            self.shown.update(self.task, total=total, completed=done)

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True, highlight=False)
        self.shown = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                              TimeElapsedColumn(), console=console, transient=True, refresh_per_second=5)
        _hooks()
        _showing.append(self)
        self.shown.start()

    def close(self) -> None:
        """Take the bar off the terminal (before the command prints its result)."""
        if self.shown is not None:
            self.shown.stop()
            _showing.remove(self)
            self.shown = None

    def _locks(self) -> list[Any]:
        return [self.shown.live._lock, self.shown.console._lock]


def _before_fork() -> None:
    for b in _showing:
        for lock in b._locks():
            lock.acquire()


def _after_fork() -> None:
    for b in _showing:
        for lock in reversed(b._locks()):
            lock.release()


_hooked: list[bool] = []


def _hooks() -> None:
    if not _hooked and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork)
        _hooked.append(True)


@contextmanager
def bar() -> Iterator[Bar]:
    """A ``Bar`` for one command's work, closed when the work ends (or fails)."""
    b = Bar()
    try:
        yield b
    finally:
        b.close()
