"""The full-text index over evidence records (SPEC 7): words, postings and BM25.

Pure functions, shared by the storage engines (which keep the postings: ``store/kuzu/postings.py``)
and the readers that rank or link by terms (evidence, retrieval).

A record's terms are its words (split at any character that is not a letter or a digit,
so "p95", "2025" and "graph-core" are searchable), lower-cased and reduced to their
English stem ("migrated" and "migration" both become "migrat"). Every word counts:
there is no stop list, BM25's idf already makes common words weigh little.

A term's postings are the records it occurs in, each with the term's count there
and the record's length in terms, stored as one or more blocks in record order.
Blocks are packed arrays written as hex text (Kuzu strings carry text, not bytes).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

K1 = 1.2
B = 0.75
MAX_TERM_CHARS = 64  # longer "words" (hashes, base64 runs) are not indexed
MAX_BLOCKS_FACTOR = 2  # merge the last two blocks while the older is at most this many times the newer

_WORD = re.compile(r"[^\W_]+")
_stems: dict[str, str] = {}
_stemmer: Any = None


def _stem(word: str) -> str:
    global _stemmer
    s = _stems.get(word)
    if s is None:
        if word.isascii() and word.isdigit():  # the stemmer leaves numbers as they are; they are many and unique
            return word
        if _stemmer is None:
            _stemmer = _english_stemmer()
        if len(_stems) > 500_000:  # a bound on the memo, not on correctness
            _stems.clear()
        s = _stems[word] = _stemmer.stemWord(word)
    return s


def _english_stemmer() -> Any:
    """snowballstemmer's English stemmer, as ``snowballstemmer.stemmer("english")`` gives it.

    That package's import loads the stemmers of all its 36 languages (20 ms of a fresh process that
    stems a few words); here only the English one's module and the two it imports are loaded, from the
    package's own files, under a name of their own (``_SNOWBALL``), so the package itself is left as it
    is. When the package is imported already, or when it would hand out PyStemmer's stemmer (PyStemmer
    installed), it is asked as usual.
    """
    import importlib
    import importlib.util
    import sys
    if "snowballstemmer" not in sys.modules and importlib.util.find_spec("Stemmer") is None:
        found = importlib.util.find_spec("snowballstemmer")
        if found is not None and found.submodule_search_locations:
            if _SNOWBALL not in sys.modules:
                spec = importlib.util.spec_from_loader(_SNOWBALL, None, is_package=True)
                assert spec is not None
                spec.submodule_search_locations = list(found.submodule_search_locations)
                sys.modules[_SNOWBALL] = importlib.util.module_from_spec(spec)
            return importlib.import_module(f"{_SNOWBALL}.english_stemmer").EnglishStemmer()
    import snowballstemmer  # type: ignore[import-untyped]
    return snowballstemmer.stemmer("english")


_SNOWBALL = "graphmem_snowball_english"  # the name snowballstemmer's English modules are loaded under


def terms(text: str) -> list[str]:
    """The index terms of ``text``, in order, with repeats."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if len(w) <= MAX_TERM_CHARS]


def query_terms(words: list[str]) -> list[str]:
    """The distinct index terms of a query's words, in order (what a search looks up)."""
    return list(dict.fromkeys(terms(" ".join(words))))


class Postings(NamedTuple):
    """Record ids (rising), the term's count in each, and each record's length in terms."""

    ids: np.ndarray
    tfs: np.ndarray
    dls: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def encode(self) -> str:
        return (self.ids.astype("<u4").tobytes() + self.tfs.astype("<u2").tobytes()
                + self.dls.astype("<u2").tobytes()).hex()

    @staticmethod
    def decode(text: str) -> Postings:
        raw = bytes.fromhex(text)
        n = len(raw) // 8
        return Postings(np.frombuffer(raw, "<u4", n, 0), np.frombuffer(raw, "<u2", n, 4 * n),
                        np.frombuffer(raw, "<u2", n, 6 * n))

    @staticmethod
    def concat(parts: list[Postings]) -> Postings:
        if len(parts) == 1:
            return parts[0]
        return Postings(*(np.concatenate([getattr(p, f) for p in parts]) for f in Postings._fields))


def postings_of(records: Iterable[tuple[int, str]],
                names: Mapping[int, list[str]] | None = None) -> tuple[dict[str, Postings], int, int]:
    """The postings of a batch of records (rising ids), with the number of records and of terms in them.

    Each record's names (``model/names.py``) are posted too, as name terms (``@anna_lee``) with a
    count of 1; they are not counted in the record's length or the terms, so BM25 is unchanged.
    ``names`` gives a record's name terms when the caller has found them already (ingest has)."""
    from graphmem.model.names import name_terms
    cols: dict[str, tuple[list[int], list[int], list[int]]] = defaultdict(lambda: ([], [], []))
    docs = tokens = 0
    for rid, text in records:
        ts = terms(text)
        dl = min(len(ts), 65535)
        docs += 1
        tokens += len(ts)
        for t, tf in Counter(ts).items():
            c = cols[t]
            c[0].append(rid)
            c[1].append(min(tf, 65535))
            c[2].append(dl)
        for t in names[rid] if names is not None and rid in names else name_terms(text):
            c = cols[t]
            c[0].append(rid)
            c[1].append(1)
            c[2].append(dl)
    out = {t: Postings(np.array(i, "<u4"), np.array(f, "<u2"), np.array(d, "<u2")) for t, (i, f, d) in cols.items()}
    return out, docs, tokens


def merge_plan(counts: list[int], added: int) -> tuple[list[int], int]:
    """Block sizes after appending a block of ``added`` postings, and the index of the first block rewritten.

    The last two blocks merge while the older holds at most twice the newer, so a term has
    about log2(postings) blocks and each posting is rewritten about that many times.
    """
    sizes = [*counts, added]
    while len(sizes) >= 2 and sizes[-2] <= MAX_BLOCKS_FACTOR * sizes[-1]:
        sizes[-2:] = [sizes[-2] + sizes[-1]]
    return sizes, len(sizes) - 1


def idf(n_docs: int, df: int) -> float:
    return math.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)


def weights(p: Postings, n_docs: int, n_tokens: int) -> np.ndarray:
    """Each posting's BM25 contribution: idf(term) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))."""
    avgdl = max(n_tokens / max(n_docs, 1), 1e-9)
    tf = p.tfs.astype(np.float64)
    return idf(n_docs, len(p)) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * p.dls / avgdl))


def allowed_mask(within: np.ndarray, lists: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """A mask over record ids (as long as the largest id in ``within`` or the lists, plus one): True
    for the ids in ``within``."""
    top = max([int(within[-1]) if len(within) else 0, *(int(ids[-1]) for ids, _ in lists if len(ids))])
    mask = np.zeros(top + 1, bool)
    mask[within] = True
    return mask


def bm25_top(lists: list[tuple[np.ndarray, np.ndarray]], k: int,
             allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The ``k`` best records, best first, ties by id, from each query term's (ids rising, weights);
    with ``allowed`` (a mask over ids: ``allowed_mask``), the ``k`` best of the allowed records.

    Exact BM25, computed the cheap way first: score only the (allowed) records of the shortest
    lists; when the k-th of those beats anything the other lists could give a record outside them,
    that is the answer (as in MaxScore). Otherwise every (allowed) record is scored. A filter
    does not change a score: the weights are those of the whole index.
    """
    lists = sorted((x for x in lists if len(x[0])), key=lambda x: len(x[0]))
    if not lists:
        return []
    if len(lists) == 1:
        ids, w = lists[0]
        if allowed is not None:
            keep = allowed[ids]
            ids, w = ids[keep], w[keep]
        return _top(ids, w, k)
    bounds = [float(w.max()) for _, w in lists]
    for m in range(1, len(lists)):
        cand = lists[0][0] if m == 1 else np.unique(np.concatenate([i for i, _ in lists[:m]]))
        if allowed is not None:
            cand = cand[allowed[cand]]
        if len(cand) < k or len(cand) * 4 > len(lists[-1][0]):
            break
        scores = np.zeros(len(cand))
        for ids, w in lists:
            pos = np.minimum(np.searchsorted(ids, cand), len(ids) - 1)
            scores += np.where(ids[pos] == cand, w[pos], 0.0)
        best = _top(cand, scores, k)
        if best[-1][1] > sum(bounds[m:]) + 1e-6:  # a margin over the rounding that orders ties
            return best
    size = int(max(i[-1] for i, _ in lists)) + 1
    every = np.bincount(np.concatenate([i for i, _ in lists]), np.concatenate([w for _, w in lists]), size)
    if allowed is None:
        return _top(np.arange(size), every, k)
    ids = np.flatnonzero(allowed[:size])
    return _top(ids, every[ids], k)


def _top(ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k best by score rounded to 9 places (so float noise cannot split a tie), then by id."""
    rounded = np.round(scores, 9)
    if len(rounded) > k:
        cut = np.partition(rounded, len(rounded) - k)[len(rounded) - k]
        top = np.flatnonzero(rounded >= cut)
        ids, scores, rounded = ids[top], scores[top], rounded[top]
    positive = rounded > 0
    ids, scores, rounded = ids[positive], scores[positive], rounded[positive]
    order = np.lexsort((ids, -rounded))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]
