"""``graphmem demo``: build a store from the bundled example and walk through it."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from graphmem.config import StoreAddress, server_holding, store_address
from graphmem.errors import BadInput, StoreUnavailable
from graphmem.memory import Memory

MARKER = ".graphmem-demo"
_NOTE = ("Standup 2026-11-02: Compass now runs on Kuzu and FastAPI. Sextant is active again. "
         "We might move Ledger to DuckDB next quarter.")
_IDEA = "an embedded graph store like Kuzu"
_QUESTION = "Can we move Atlas to a hosted graph database?"


def demo_address(target: str | Path | None) -> StoreAddress:
    """Where the demo goes: ``target`` (a folder or an embedded engine's address), else a folder in the
    temporary directory."""
    if target is None:
        return store_address(Path(tempfile.gettempdir()) / "graphmem-demo")
    address = store_address(target)
    if address.folder is None:
        raise BadInput(f"bad demo store {address.display!r}: expected a folder (or ladybug:PATH); the demo "
                       "replaces what its folder holds")
    return address


def demo_path(target: str | Path | None) -> Path:
    folder = demo_address(target).folder
    assert folder is not None
    return folder


def build_demo(target: str | Path | None = None) -> Memory:
    """A fresh store at ``target`` holding the bundled example (an earlier demo store there is replaced)."""
    address = demo_address(target)
    path = demo_path(target)
    holder = server_holding(path)
    if holder is not None:  # the server has the store open: replacing its files under it would lose them
        raise StoreUnavailable(f"store {str(path)!r} is in use by {holder}; stop it before building the demo there")
    if path.exists() and any(path.iterdir()):
        if not (path / MARKER).exists():
            raise BadInput(f"store {str(path)!r} is not empty and not a demo store; expected an empty or new folder")
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / MARKER).write_text("built by graphmem demo; safe to delete\n")
    m = Memory(StoreAddress(address.engine, path), create=True)
    load_example(m)
    return m


def load_example(m: Memory) -> None:
    """Write the bundled example (its records, then its entities and facts) into the open store ``m``, on
    any engine: what ``build_demo`` puts in its folder.

    Parameters
    ----------
    m : Memory
        An open, writable store (an empty one, for the example as the walkthrough shows it).

    Raises
    ------
    BadInput
        The bundled files do not load (a packaging fault: they are checked when they are made).

    Examples
    --------
    >>> import tempfile, graphmem
    >>> with graphmem.open(tempfile.mkdtemp(), create=True) as m:
    ...     load_example(m)
    ...     m.current("Atlas").subject.name
    'Atlas'
    """
    examples = resources.files("graphmem").joinpath("examples")
    with resources.as_file(examples.joinpath("records.jsonl")) as f:
        ingested = m.ingest(f)
    with resources.as_file(examples.joinpath("demo.jsonl")) as f:
        report = m.import_jsonl(f, strict=True)
    if ingested.errors:
        raise BadInput(f"bundled records are invalid: line {ingested.errors[0][0]}: {ingested.errors[0][1]}")
    if not report.ok:
        raise BadInput(f"bundled example is invalid: line {report.errors[0][0]}: {report.errors[0][1]}")


def run_demo(target: str | Path | None = None) -> dict[str, Any]:
    """Build the demo store and return the walkthrough (``graphmem.demo.v1``; the CLI prints it)."""
    m = build_demo(target)
    try:
        steps: list[tuple[str, str, dict[str, Any]]] = [
            ("What is true about Atlas now?", "graphmem current atlas", m.current("atlas").to_dict()),
            ("What was true about Atlas on 2025-06-01?", "graphmem current atlas --as-of 2025-06-01",
             m.current("atlas", as_of="2025-06-01").to_dict()),
            ("Who owned Atlas on 2025-09-05, as we knew it that day? (an entry later retracted)",
             "graphmem current atlas --predicate owner --as-of 2025-09-05 --known-at 2025-09-05",
             m.current("atlas", predicate="owner", as_of="2025-09-05", known_at="2025-09-05").to_dict()),
            ("... and as we know it now?", "graphmem current atlas --predicate owner --as-of 2025-09-05",
             m.current("atlas", predicate="owner", as_of="2025-09-05").to_dict()),
            ("How did Atlas's tools change?", "graphmem timeline atlas --predicate uses",
             m.timeline("atlas", predicate="uses").to_dict()),
            ("Which projects use Kuzu now?", "graphmem facts --predicate uses --object kuzu",
             m.facts(predicate="uses", object="kuzu").to_dict()),
            ("Which projects fit an idea, and why? (every step cites its fact)",
             f"graphmem recommend {_IDEA!r} --top 3", m.recommend(_IDEA, top=3).to_dict()),
            ("... and on 2025-05-01, before Atlas moved from Neo4j to Kuzu?",
             f"graphmem recommend {_IDEA!r} --top 3 --as-of 2025-05-01",
             m.recommend(_IDEA, top=3, as_of="2025-05-01").to_dict()),
            ("How does Quill reach Kuzu?", "graphmem path quill kuzu", m.paths("quill", "kuzu").to_dict()),
            ("Why was fact:120 withdrawn?", "graphmem why fact:120", m.why("fact:120").to_dict()),
            ("Why do we believe Atlas uses Kuzu?", "graphmem why fact:100", m.why("fact:100").to_dict()),
            ("What do the records say about Tantivy?", "graphmem search tantivy --limit 3",
             m.search("tantivy", limit=3).to_dict()),
            ("What would the extractor propose from a new note? (nothing is written)",
             f"graphmem extract --text {_NOTE!r}", m.extract_text(_NOTE, at="2026-11-02T09:00:00Z").to_dict()),
            ("Is the store consistent?", "graphmem lint", m.lint().to_dict()),
            (f"What should an assistant read before answering {_QUESTION!r}? (400 tokens, with the trace)",
             f"graphmem pack -q {_QUESTION!r} --budget-tokens 400 --trace",
             m.pack(_QUESTION, budget_tokens=400, trace=True).to_dict()),
        ]
    finally:
        m.close()
    doc = {"schema": "graphmem.demo.v1", "store": str(demo_path(target)),
           "steps": [{"question": q, "command": c, "result": r} for q, c, r in steps]}
    return doc
