"""Generate docs/cli.md from the commands' own help, so the reference cannot drift.

    python -m graphmem.cli.reference > docs/cli.md
"""

from __future__ import annotations

from typing import Any

import typer.main
from typer.testing import CliRunner

from graphmem.cli.app import app


def command_paths() -> list[list[str]]:
    """Every command and subcommand, as argument paths ([] is the root)."""
    def walk(cmd: Any, path: list[str]) -> list[list[str]]:
        out = [path]
        for name in sorted(getattr(cmd, "commands", {}) or {}):
            out.extend(walk(cmd.commands[name], [*path, name]))
        return out
    return walk(typer.main.get_command(app), [])


def help_text(path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100", "TERM": "dumb"})
    return result.output.rstrip()


def reference() -> str:
    parts = ["# Command-line reference", "",
             "Generated from `--help` by `python -m graphmem.cli.reference`; a test checks it is current.", ""]
    for path in command_paths():
        parts += [f"## {' '.join(['graphmem', *path])}", "", "```", help_text(path), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    print(reference(), end="")
