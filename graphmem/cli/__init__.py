"""The command line: a thin Typer layer over ``graphmem.Memory``."""

from graphmem.cli.app import app, main

__all__ = ["app", "main"]
