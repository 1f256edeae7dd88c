"""Markdown and plain-text files as evidence records (docs/evidence.md): which files are read as
text, and how a text is cut into records with the lines each came from. Pure functions.

A Markdown file gives one record per section (a heading starts one; headings inside fenced code
do not), a plain-text file one per paragraph (lines between blank lines). A block longer than
the record size limit is cut at paragraph, then line boundaries, so nothing is lost to the
truncation marker unless one line alone is longer.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.errors import BadInput

FORMATS = ("auto", "jsonl", "markdown", "text")
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def file_format(source: Any, fmt: str = "auto") -> str:
    """The format ``source`` is read in: ``fmt`` when given, else by the file's extension
    (.md and .markdown: markdown, .txt: text, any other file or a stream: jsonl)."""
    if fmt not in FORMATS:
        raise BadInput(f"bad format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt != "auto":
        return fmt
    if isinstance(source, str | Path):
        suffix = Path(source).suffix.lower()
        if suffix in MARKDOWN_SUFFIXES:
            return "markdown"
        if suffix in TEXT_SUFFIXES:
            return "text"
    return "jsonl"


def source_name(source: Any) -> str:
    """How records name the file they came from: its path as given, normalized (``./a/../n.md`` is
    ``n.md``), with forward slashes; a stream is ``stdin``."""
    if isinstance(source, str | Path):
        return "file:" + os.path.normpath(str(source)).replace(os.sep, "/")
    return "stdin"


@dataclass(frozen=True)
class Block:
    """One record's worth of a text file: its text, first and last line (from 1), and the headings
    it sits under (Markdown)."""

    text: str
    first: int
    last: int
    headings: tuple[str, ...] = ()

    def line(self, name: str, fmt: str, ts: str | None) -> dict[str, Any]:
        """The block as an ingest line: kind ``doc`` (Markdown) or ``note`` (text), the file and line
        as its source, and an id made from the file and the text (so a re-read adds nothing, even
        when the block moved)."""
        digest = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        meta: dict[str, Any] = {"file": name, "lines": [self.first, self.last]}
        if self.headings:
            meta["headings"] = list(self.headings)
        return {"text": self.text, "id": f"{name}#{digest}", "ts": ts, "kind": "doc" if fmt == "markdown" else "note",
                "source": f"{name}#L{self.first}", "meta": meta}


def blocks(lines: Iterable[str | None], fmt: str, max_chars: int) -> list[Block]:
    """The records of a file's lines (``None``: a line that could not be read, kept in its block so
    the caller can refuse that block): Markdown sections or text paragraphs, each at most
    ``max_chars`` long unless one of its lines is."""
    numbered = list(enumerate(lines, 1))
    raw = _sections(numbered) if fmt == "markdown" else [(p, ()) for p in _paragraphs(numbered)]
    out: list[Block] = []
    for part, headings in raw:
        for piece in _bounded(part, max_chars):
            out.append(Block("\n".join(t or "" for _, t in piece), piece[0][0], piece[-1][0], headings))
    return out


_Lines = list[tuple[int, str | None]]


def _blank(text: str | None) -> bool:
    return text is not None and not text.strip()


def _trim(part: _Lines) -> _Lines:
    lo, hi = 0, len(part)
    while lo < hi and _blank(part[lo][1]):
        lo += 1
    while hi > lo and _blank(part[hi - 1][1]):
        hi -= 1
    return part[lo:hi]


def _paragraphs(lines: _Lines) -> list[_Lines]:
    """Runs of lines between blank lines."""
    out: list[_Lines] = []
    cur: _Lines = []
    for n, text in lines:
        if _blank(text):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append((n, text))
    if cur:
        out.append(cur)
    return out


def _sections(lines: _Lines) -> list[tuple[_Lines, tuple[str, ...]]]:
    """Markdown sections: a heading (ATX, ``#`` to ``######``, outside fenced code) starts one. A
    section holding its heading alone is not a record; its title stays in the ``headings`` of those
    under it."""
    out: list[tuple[_Lines, tuple[str, ...]]] = []
    stack: list[tuple[int, str]] = []  # the headings above the current line: (level, title)
    cur: _Lines = []
    under: tuple[str, ...] = ()
    fence: str | None = None

    def close() -> None:
        part = _trim(cur)
        if part and not (len(part) == 1 and _heading(part[0][1]) is not None):
            out.append((part, under))

    for n, text in lines:
        if text is not None:
            m = _FENCE.match(text)
            if fence is None and m:
                fence = m.group(1)[0] * len(m.group(1))
            elif fence is not None and text.strip().startswith(fence) and not text.strip().strip(fence[0]):
                fence = None
            elif fence is None and (h := _heading(text)) is not None:
                close()
                level, title = h
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
                under = tuple(t for _, t in stack)
                cur = []
        cur.append((n, text))
    close()
    return out


def _heading(text: str | None) -> tuple[int, str] | None:
    m = _HEADING.match(text or "")
    return (len(m.group(1)), (m.group(2) or "").strip()) if m else None


def _bounded(part: _Lines, max_chars: int) -> list[_Lines]:
    """``part`` cut into runs of its lines of at most ``max_chars`` characters: at blank lines when
    it can, else between lines (a single longer line is one piece; ingest's bound marks it truncated)."""
    if _chars(part) <= max_chars:
        return [part]
    at = {n: i for i, (n, _) in enumerate(part)}
    units: list[tuple[int, int]] = []  # [start, end) positions in part
    for para in _paragraphs(part):
        lo, hi = at[para[0][0]], at[para[-1][0]] + 1
        units.extend([(lo, hi)] if _chars(para) <= max_chars else [(i, i + 1) for i in range(lo, hi)])
    out: list[_Lines] = []
    start, end = units[0]
    for lo, hi in units[1:]:
        if _chars(part[start:hi]) > max_chars:
            out.append(part[start:end])
            start = lo
        end = hi
    out.append(part[start:end])
    return [_trim(p) for p in out]


def _chars(part: _Lines) -> int:
    return sum(len(t or "") for _, t in part) + max(0, len(part) - 1)
