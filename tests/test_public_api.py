"""Every public name of ``graphmem`` carries a numpydoc docstring: a summary line; for classes and
functions an ``Examples`` section (run by ``pytest --doctest-modules``); for classes an ``Attributes``
section naming each public field and property; for each public method a ``Returns`` section."""

from __future__ import annotations

import dataclasses
import inspect
import re
from functools import cached_property
from typing import Any

import pytest

import graphmem

PUBLIC = sorted(n for n in graphmem.__all__ if n != "__version__")

# Names still without Examples and Attributes, each with why; the test fails when one has them, so the list
# only shrinks.
PENDING: dict[str, str] = {}


def _section(doc: str, title: str) -> str | None:
    """The body of numpydoc section ``title`` (up to the next section), or None."""
    m = re.search(rf"^{title}\n-{{{len(title)}}}\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.M | re.S)
    return None if m is None else m.group(1)


def _documented(attributes: str) -> set[str]:
    """The names an ``Attributes`` section lists (``name : type`` or ``a, b : type`` lines)."""
    names: set[str] = set()
    for line in attributes.splitlines():
        if line and not line[0].isspace():
            names.update(n.strip() for n in line.partition(" :")[0].split(","))
    return names


def _own_members(cls: type) -> dict[str, Any]:
    """Public members defined in graphmem's own classes (not those of object, tuple or Exception)."""
    members: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("graphmem"):
            members.update({k: v for k, v in vars(klass).items() if not k.startswith("_")})
    return members


def _fields(cls: type) -> set[str]:
    """The public fields and properties a reader of ``cls`` can read."""
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    names |= set(getattr(cls, "_fields", ())) if issubclass(cls, tuple) else set()
    names |= {k for k, v in _own_members(cls).items() if isinstance(v, property | cached_property)}
    return {n for n in names if not n.startswith("_")}


def _summary(doc: str | None) -> str:
    return (doc or "").strip().partition("\n")[0]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_has_numpydoc_with_examples(name: str) -> None:
    obj = getattr(graphmem, name)
    doc = inspect.getdoc(obj) or ""
    assert _summary(doc), f"graphmem.{name} has no docstring summary"
    examples = _section(doc, "Examples")
    if name in PENDING:
        assert not (examples and ">>> " in examples), f"graphmem.{name} has Examples now: take it off PENDING"
        return
    assert examples and ">>> " in examples, f"graphmem.{name} has no Examples section with a doctest"
    if inspect.isclass(obj):
        listed = _documented(_section(doc, "Attributes") or "")
        missing = sorted(_fields(obj) - listed)
        assert not missing, f"graphmem.{name}'s Attributes section does not describe {missing}"


def _methods() -> list[tuple[str, str]]:
    out = []
    for name in PUBLIC:
        obj = getattr(graphmem, name)
        if inspect.isclass(obj):
            out += [(name, m) for m, v in _own_members(obj).items()
                    if isinstance(v, staticmethod | classmethod) or inspect.isfunction(v)]
    return out


@pytest.mark.parametrize(("cls", "method"), _methods())
def test_public_method_has_numpydoc(cls: str, method: str) -> None:
    fn = getattr(getattr(graphmem, cls), method)
    doc = inspect.getdoc(fn) or ""
    assert _summary(doc), f"graphmem.{cls}.{method} has no docstring summary"
    if inspect.signature(fn).return_annotation not in ("None", None):
        assert _section(doc, "Returns"), f"graphmem.{cls}.{method} has no Returns section"


def test_the_rule_sees_a_missing_section() -> None:
    doc = "Summary.\n\nAttributes\n----------\na, b : int\n    Two.\nc : str\n\nExamples\n--------\n>>> 1\n1\n"
    assert _documented(_section(doc, "Attributes") or "") == {"a", "b", "c"}
    assert _section(doc, "Returns") is None and ">>> 1" in (_section(doc, "Examples") or "")
