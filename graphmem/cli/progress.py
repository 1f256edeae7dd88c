"""Progress bars on stderr for the long commands (import, ingest, extract, lint, rebuild).

A ``Bar`` is the library's ``Progress`` callback (``graphmem.model.progress``). It draws nothing unless
stderr is a terminal, and nothing before the command has run for a second; rich is imported only when
the bar first shows, so quick and piped commands never load it. The bar is drawn in this thread only
(no refresh thread: whole-store work forks, and a fork must not find a drawing thread holding a lock).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

DELAY = 1.0  # seconds of work before a bar shows
_REDRAW = 0.1  # seconds between two redraws


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
        self.drawn = 0.0

    def __call__(self, task: str, done: int, total: int | None = None) -> None:
        if not self.on:
            return
        now = time.monotonic()
        if self.shown is None:
            if now - self.start < self.delay:
                return
            self._show()
        new = task != self.name
        if new:
            self.name = task
            self.shown.reset(self.task, total=total, completed=done, description=task)
        else:
            self.shown.update(self.task, total=total, completed=done)
        if new or now - self.drawn >= _REDRAW or (total is not None and done >= total):
            self.shown.refresh()
            self.drawn = now

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True, highlight=False)
        self.shown = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                              TimeElapsedColumn(), console=console, transient=True, auto_refresh=False)
        self.shown.start()
        self.task = self.shown.add_task("", total=None)

    def close(self) -> None:
        """Take the bar off the terminal (before the command prints its result)."""
        if self.shown is not None:
            self.shown.stop()
            self.shown = None


@contextmanager
def bar() -> Iterator[Bar]:
    """A ``Bar`` for one command's work, closed when the work ends (or fails)."""
    b = Bar()
    try:
        yield b
    finally:
        b.close()
