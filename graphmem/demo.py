"""``graphmem demo``: build a store from the bundled example and walk through it."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from graphmem import render
from graphmem.errors import BadInput
from graphmem.memory import Memory

MARKER = ".graphmem-demo"


def demo_path(target: Path | None) -> Path:
    return target if target is not None else Path(tempfile.gettempdir()) / "graphmem-demo"


def build_demo(target: Path | None = None) -> Memory:
    """A fresh store at ``target`` holding the bundled example (an earlier demo store there is replaced)."""
    path = demo_path(target)
    if path.exists() and any(path.iterdir()):
        if not (path / MARKER).exists():
            raise BadInput(f"store {str(path)!r} is not empty and not a demo store; expected an empty or new folder")
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / MARKER).write_text("built by graphmem demo; safe to delete\n")
    m = Memory(path)
    example = resources.files("graphmem").joinpath("examples/demo.jsonl")
    with resources.as_file(example) as f:
        report = m.import_jsonl(f, strict=True)
    if not report.ok:  # the bundled example is checked when it is made; this guards packaging
        raise BadInput(f"bundled example is invalid: line {report.errors[0][0]}: {report.errors[0][1]}")
    return m


def run_demo(target: Path | None = None, *, show: bool = True) -> dict[str, Any]:
    """Build the demo store and return (and, with ``show``, print) the walkthrough."""
    m = build_demo(target)
    try:
        steps: list[tuple[str, str, dict[str, Any]]] = [
            ("What is true about Atlas now?", "graphmem current atlas", m.current("atlas").to_json()),
            ("What was true about Atlas on 2025-06-01?", "graphmem current atlas --as-of 2025-06-01",
             m.current("atlas", as_of="2025-06-01").to_json()),
            ("Who owned Atlas on 2025-09-05, as we knew it that day? (an entry later retracted)",
             "graphmem current atlas --predicate owner --as-of 2025-09-05 --known-at 2025-09-05",
             m.current("atlas", predicate="owner", as_of="2025-09-05", known_at="2025-09-05").to_json()),
            ("... and as we know it now?", "graphmem current atlas --predicate owner --as-of 2025-09-05",
             m.current("atlas", predicate="owner", as_of="2025-09-05").to_json()),
            ("How did Atlas's tools change?", "graphmem timeline atlas --predicate uses",
             m.timeline("atlas", predicate="uses").to_json()),
            ("Which projects use Kuzu now?", "graphmem facts --predicate uses --object kuzu",
             m.facts(predicate="uses", object="kuzu").to_json()),
            ("Why was fact:120 withdrawn?", "graphmem why fact:120", m.why("fact:120").to_json()),
            ("Is the store consistent?", "graphmem lint", m.lint().to_json()),
        ]
    finally:
        m.close()
    doc = {"schema": "graphmem.demo.v1", "store": str(demo_path(target)),
           "steps": [{"question": q, "command": c, "result": r} for q, c, r in steps]}
    if show:
        show_demo(doc)
    return doc


def show_demo(doc: dict[str, Any]) -> None:
    renderers = {"graphmem.current.v1": render.current, "graphmem.timeline.v1": render.timeline,
                 "graphmem.facts.v1": render.facts, "graphmem.why.v1": render.why, "graphmem.lint.v1": render.lint}
    render.out(f"Built the example store at {doc['store']}")
    for step in doc["steps"]:
        render.out("")
        render.heading(f"# {step['question']}")
        render.out(f"$ graphmem --store {doc['store']} {step['command'].removeprefix('graphmem ')}")
        renderers[step["result"]["schema"]](step["result"])
    render.out("")
    render.out(f"Explore it yourself: export GRAPHMEM_STORE={doc['store']}; graphmem --help")
