"""Small numpy helpers for arrays of record ids, shared by the engines and the readers."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def unique_ids(ids: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D integer array, rising: ``np.unique(ids)``, without the import of
    ``numpy.ma`` that numpy 2's ``np.unique`` makes on its first call (10-12 ms of a fresh process).

    >>> import numpy as np
    >>> unique_ids(np.array([5, 1, 5, 3, 1], np.int64)).tolist()
    [1, 3, 5]
    >>> unique_ids(np.zeros(0, np.int64)).tolist()
    []
    """
    import numpy as np
    if len(ids) < 2:
        return np.array(ids, copy=True)
    s = np.sort(ids, kind="stable")
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
