"""The package's shape: which parts may import which, no import cycles, Kuzu in one folder.

Every ``import`` in every module of ``graphmem`` counts, at the top, inside functions and under
``TYPE_CHECKING`` alike: a cycle that only a type checker sees still ties two modules together.
``from graphmem.x import y`` is an import of ``graphmem.x.y`` when ``y`` is a module, else of
``graphmem.x``; a package's ``__init__`` is a module of its own (``graphmem.store``). The sources are
read with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "graphmem"

# What each part of the package may import of graphmem. A part is the first name under ``graphmem``
# (``graphmem.retrieval.packing`` is in ``retrieval``); ``graphmem`` is the package itself, whose
# ``__init__`` opens a Memory. ``only``: nothing of graphmem but these parts; ``never``: any part but these.
# A part without a row (memory, results, config, ...) is not restricted here beyond the cycle rule.
FEATURE_NEVER = ("graphmem", "memory", "cli", "service")
RULES: list[tuple[str, str, tuple[str, ...]]] = [
    # part        kind     parts
    ("model",     "only",  ("model", "errors")),
    ("errors",    "only",  ("model", "errors")),
    ("ontology",  "only",  ("ontology", "model", "errors")),
    ("view",      "never", FEATURE_NEVER),
    ("evidence",  "never", FEATURE_NEVER),
    ("retrieval", "never", FEATURE_NEVER),
    ("transfer",  "never", FEATURE_NEVER),
    ("store",     "never", ("graphmem", "memory", "view", "evidence", "retrieval", "transfer", "cli", "service")),
    ("cli",       "never", ()),  # the adapters sit on top and may import anything below them
    ("service",   "never", ()),
]
KUZU_HOME = "graphmem.store.kuzu"  # the only modules that import kuzu

# Imports that break a rule above today, each with why it is still there. They are exempt from the
# layer rules and from the cycle rule; the test fails when one is gone, so the list only shrinks.
KNOWN: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _known(name: str) -> str:
    """The module ``name`` is, or the nearest package of graphmem holding it."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str) -> tuple[set[str], bool]:
    """The graphmem modules ``module`` imports, and whether it imports kuzu."""
    path = MODULES[module]
    out: set[str] = set()
    kuzu = False
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            kuzu |= any(n == "kuzu" or n.startswith("kuzu.") for n in names)
            out.update(_known(n) for n in names if n.split(".")[0] == "graphmem")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up ``level - 1`` packages
                pkg = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(pkg[:len(pkg) - node.level + 1] + ([node.module] if node.module else []))
            kuzu |= base == "kuzu" or base.startswith("kuzu.")
            if base.split(".")[0] == "graphmem":
                out.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else _known(base) for a in node.names)
    out.discard(module)
    return out, kuzu


GRAPH = {m: _imports(m) for m in MODULES}
EDGES = {m: imported for m, (imported, _) in GRAPH.items()}


def _part(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_package_is_read() -> None:
    assert {"graphmem", "graphmem.memory", "graphmem.store", "graphmem.store.kuzu.store",
            "graphmem.retrieval.recommend"} <= set(MODULES)
    assert "graphmem.retrieval.linking" in EDGES["graphmem.retrieval.recommend"]


def test_no_import_cycles_but_the_known_ones() -> None:
    edges = {m: {t for t in ts if (m, t) not in KNOWN} for m, ts in EDGES.items()}
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(("part", "kind", "parts"), RULES, ids=[r[0] for r in RULES])
def test_layer_rule(part: str, kind: str, parts: tuple[str, ...]) -> None:
    broken = []
    for module, imported in sorted(EDGES.items()):
        if _part(module) != part:
            continue
        for target in sorted(imported):
            other = _part(target)
            bad = other not in parts if kind == "only" else other in parts
            if bad and (module, target) not in KNOWN:
                broken.append(f"{module} imports {target}")
    assert broken == [], f"{part} may {'import only' if kind == 'only' else 'never import'} {', '.join(parts)}"


def test_only_the_kuzu_folder_imports_kuzu() -> None:
    users = sorted(m for m, (_, kuzu) in GRAPH.items() if kuzu)
    assert users and all(m == KUZU_HOME or m.startswith(KUZU_HOME + ".") for m in users), users


ENGINE_FOLDERS = ("graphmem.store.kuzu", "graphmem.store.postgres")


def test_an_engine_folder_imports_no_other_engine_folder() -> None:
    """What two engines share lives in ``graphmem/store/common/`` (or above), not in one engine's folder."""
    assert all(f in MODULES for f in ENGINE_FOLDERS)
    broken = [f"{m} imports {t}" for m, ts in sorted(EDGES.items()) for t in sorted(ts)
              for mine in ENGINE_FOLDERS if m == mine or m.startswith(mine + ".")
              for other in ENGINE_FOLDERS if other != mine and (t == other or t.startswith(other + "."))]
    assert broken == []


def test_the_known_exceptions_are_still_there() -> None:
    """An exception that no longer holds comes off the list, so the list only shrinks."""
    gone = [f"{a} -> {b}" for a, b in KNOWN if b not in EDGES.get(a, set())]
    assert gone == [], f"remove from KNOWN: {gone}"


@pytest.mark.parametrize("feature", ["graphmem.retrieval.linking", "graphmem.retrieval.recommend",
                                     "graphmem.retrieval.packing", "graphmem.view.lint",
                                     "graphmem.transfer.export", "graphmem.evidence.ingest",
                                     "graphmem.evidence.extraction"])
def test_features_receive_their_parts(feature: str) -> None:
    """The features Memory calls take the store, registry and functions they need, not Memory."""
    reach = set()
    todo = [feature]
    while todo:
        m = todo.pop()
        for t in EDGES[m]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    assert "graphmem.memory" not in reach and "graphmem" not in reach
