"""Tables for people: fitted to the terminal without cutting a value (docs/cli-output.md).

A column is one of three kinds. ``keep`` values (refs, dates, URLs, codes, numbers) are shown whole on
one line; ``list`` values (refs separated by spaces) wrap between items, never inside one; ``text``
(names, messages, snippets) wraps between words, and a word longer than the column folds onto the next
line. A column whose every cell is empty is left out. When the columns' narrowest widths are wider than
the terminal, the least useful columns (``drop``: highest first) are left out and a line says which;
``--wide`` keeps every column, each row on one line (as wide as it needs).

Width: the terminal's when stdout is one (``shutil.get_terminal_size``, which honours ``COLUMNS``); when
piped, ``COLUMNS`` if it is set, else none at all (each row on one line, nothing wrapped or left out).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

KEEP, LIST, TEXT = "keep", "list", "text"
EMPTY = ("", "-")  # what a cell with nothing to show holds
_GAP = 3  # between two columns: a space, the rule, a space
_TEXT_MIN = 12  # the narrowest a text column is made (unless its longest word is wider, up to _WORD_MAX)
_WORD_MAX = 40  # a longer word in a text column may fold (a value of a keep or list column never does)
_UNLIMITED = 100_000


@dataclass(frozen=True)
class Col:
    """A column: its header, its kind (``keep``, ``list`` or ``text``) and when it is left out for width
    (``drop``: 0 never; of the others, the highest goes first)."""

    name: str
    kind: str = KEEP
    drop: int = 0


def col(spec: Col | str) -> Col:
    return spec if isinstance(spec, Col) else Col(spec)


@dataclass
class Settings:
    """How the command being run wants its tables: ``wide`` keeps every column."""

    wide: bool = False


settings = Settings()


def width() -> int | None:
    """The width tables fit: the terminal's, else ``COLUMNS`` when set, else None (no limit)."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    cols = os.environ.get("COLUMNS", "")
    return int(cols) if cols.isdigit() and int(cols) > 0 else None


def console() -> Any:
    """A rich console for the current stdout and width (made per call: cheap, and tests change both)."""
    from rich.console import Console  # imported on first use: --json output never pays for it

    w = width()
    return Console(highlight=False, soft_wrap=w is None, emoji=False, width=w or _UNLIMITED)


def _cell_len(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.splitlines()), default=0)


def _longest_word(text: str) -> int:
    return max((_cell_len(w) for w in text.split()), default=0)


@dataclass(frozen=True)
class Layout:
    """Which columns a table shows (indices), at which widths, and the columns left out for width."""

    shown: list[int]
    widths: list[int]
    left_out: list[str]

    @property
    def total(self) -> int:
        return sum(self.widths) + _GAP * (len(self.widths) - 1)


def layout(cols: list[Col], cells: list[list[str]], limit: int | None, wide: bool = False) -> Layout:
    """Fit ``cells`` (rows of strings) under ``cols`` into ``limit`` columns of characters (None: no limit)."""
    idx = list(range(len(cols)))
    if cells:  # a column with nothing in it says nothing
        idx = [i for i in idx if any(r[i] not in EMPTY for r in cells)]
    natural = {i: max([_cell_len(cols[i].name), *(_cell_len(r[i]) for r in cells)]) for i in idx}
    least: dict[int, int] = {}
    for i in idx:
        header = _cell_len(cols[i].name)
        words = max([header, *(_longest_word(r[i]) for r in cells)])
        if cols[i].kind == KEEP:
            least[i] = natural[i]
        elif cols[i].kind == LIST:
            least[i] = words
        else:
            least[i] = min(natural[i], max(header, _TEXT_MIN, min(words, _WORD_MAX)))
    if limit is None:
        return Layout(idx, [natural[i] for i in idx], [])
    left_out: list[str] = []

    def total(ix: list[int]) -> int:
        return sum(least[i] for i in ix) + _GAP * (len(ix) - 1)

    while not wide and total(idx) > limit:
        droppable = [i for i in idx if cols[i].drop > 0]
        if not droppable:
            break
        gone = max(droppable, key=lambda i: (cols[i].drop, i))
        idx.remove(gone)
        left_out.append(cols[gone].name)
    widths = {i: least[i] for i in idx}
    spare = limit - total(idx)
    grow = [i for i in idx if widths[i] < natural[i]]
    while spare > 0 and grow:  # share what is left among the wrapping columns, the most wanting first
        i = max(grow, key=lambda i: (natural[i] - widths[i]) / natural[i])
        widths[i] += 1
        spare -= 1
        if widths[i] == natural[i]:
            grow.remove(i)
    return Layout(idx, [widths[i] for i in idx], left_out)


def table(columns: Sequence[Col | str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """Print a table fitted to the width (module doc); a line names the columns left out, if any."""
    from rich.table import Table

    cols = [col(c) for c in columns]
    cells = [["" if v is None else str(v) for v in r] for r in rows]
    limit = width()
    fit = layout(cols, cells, None if settings.wide else limit, settings.wide)
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for i, w in zip(fit.shown, fit.widths, strict=True):
        t.add_column(cols[i].name, width=w, no_wrap=cols[i].kind == KEEP, overflow="fold")
    for r in cells:
        t.add_row(*(r[i] for i in fit.shown))
    from rich.console import Console

    c = Console(highlight=False, soft_wrap=True, emoji=False, width=max(fit.total, len(title or ""), limit or 0))
    c.print(t)
    if fit.left_out:
        c.print(f"(not shown, for width: {', '.join(fit.left_out)}; --wide shows every column)", markup=False)
