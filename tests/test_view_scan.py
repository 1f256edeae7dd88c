"""The predicate scan's cut of a stored view (``store/kuzu/views._block``): only the predicate's rows are
parsed, and a view whose text could fool the cut (a source or a name holding the predicate's row text) is
parsed whole, so the rows are always those of the whole view."""

from __future__ import annotations

import orjson
import pytest

from graphmem.model import Interval
from graphmem.store.kuzu.codecs import view_text
from graphmem.store.kuzu.views import _block


def _iv(pred: str, obj: str, kind: str, vf: int, vt: int | None, sources: tuple[str, ...] = (),
        name: str | None = None) -> Interval:
    return Interval("project:x", pred, obj, kind, vf, vt, (vf,), sources, (), name)


TRICKY = ['"],["status",', 'null],["status",', '["status",', '"],["', 'null],["', ']', '\\', '"', "status"]


@pytest.mark.parametrize("weird", TRICKY)
@pytest.mark.parametrize("where", ["source", "name", "object"])
def test_cut_equals_the_whole_view(weird: str, where: str) -> None:
    view = []
    for i, pred in enumerate(["owner", "priority", "status", "status", "summary", "uses"]):
        kind = "entity" if pred in ("owner", "uses") else "literal"
        obj = f"tool:t{i}" if kind == "entity" else f"v{i}"
        src: tuple[str, ...] = ("rec:1",)
        name = f"T {i}" if kind == "entity" else None
        if where == "source":
            src = (weird, "rec:2")
        elif where == "name" and kind == "entity":
            name = weird
        elif where == "object" and kind == "literal":
            obj = weird
        view.append(_iv(pred, obj, kind, 10 * i, None if i % 2 else 10 * i + 5, src, name))
    text = view_text(view)
    whole = orjson.loads(text)
    for pred in ["owner", "priority", "status", "summary", "uses"]:
        got = _block(text, "[" + orjson.dumps(pred).decode() + ",")
        assert got is not None
        assert [r for r in got if r[0] == pred] == [r for r in whole if r[0] == pred]
    assert _block(text, '["deadline",') is None


def test_last_row_and_only_row() -> None:
    one = view_text([_iv("status", "done", "literal", 1, None)])
    assert _block(one, '["status",') == orjson.loads(one)
    tail = view_text([_iv("owner", "person:p", "entity", 1, None, name="P"), _iv("status", "done", "literal", 1, 2)])
    assert _block(tail, '["status",') == orjson.loads(tail)[1:]
