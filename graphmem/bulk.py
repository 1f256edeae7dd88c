"""Helpers for work over the whole store (rebuild, lint, large imports)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small, acyclic objects are made.

    Each collection walks every live container, so a bulk read of a million statements
    spends more time collecting than reading; reference counting still frees everything.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
