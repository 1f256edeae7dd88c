"""Entity linking: which entities a piece of text (an idea, a query) names or is about.

Five ways, strongest first (docs/recommend.md):

- ``name`` and ``alias``: a run of the text's words equals an entity's name or alias,
  case and punctuation aside ("full-text search" finds "Full-text search");
- ``lemma``: the same after each word is reduced to its lemma by spaCy's English lookup
  table (package ``spacy-lookups-data``), so "graph databases" finds "Graph database";
- ``text``: BM25 over the entities' names, aliases and descriptions, with the full-text
  index's own stemming, for entities the text only describes (every entity scoring at least
  TEXT_FLOOR of the best, at most TEXT_SEEDS of them);
- ``record``: entities mentioned (MENTIONS edges) by the evidence records that full-text
  search ranks best for the text.

Longer runs win over shorter ones and a word belongs to one name match at most. The
entity side (names, lemmas, description postings) is a ``Lexicon`` built once per store
state and kept by its owner (``Memory``) until an entity is written. ``link`` receives what it reads as
a ``Linker``: that lexicon, the ontology and the records' full-text ranking.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from graphmem.errors import BadInput
from graphmem.evidence.query import search_terms
from graphmem.ontology.schema import Ontology

# re-exported: linking's names before lexicon.py and stored_lexicon.py
from graphmem.retrieval.lexicon import MAX_NAME_WORDS as MAX_NAME_WORDS
from graphmem.retrieval.lexicon import TEXT_FLOOR as TEXT_FLOOR
from graphmem.retrieval.lexicon import Lexicon as Lexicon
from graphmem.retrieval.lexicon import lemma_key as lemma_key
from graphmem.retrieval.lexicon import lemma_table as lemma_table
from graphmem.retrieval.lexicon import lemmas_of
from graphmem.retrieval.lexicon import words as words
from graphmem.retrieval.stored_lexicon import PATCH_MAX as PATCH_MAX
from graphmem.retrieval.stored_lexicon import LexiconStore as LexiconStore
from graphmem.retrieval.stored_lexicon import StoredLexicon as StoredLexicon
from graphmem.retrieval.stored_lexicon import fresh_lexicon as fresh_lexicon
from graphmem.retrieval.stored_lexicon import stored_lexicon as stored_lexicon

MATCH_WEIGHTS = {"name": 1.0, "alias": 0.9, "lemma": 0.8, "text": 0.5, "record": 0.3}
MATCH_ORDER = tuple(MATCH_WEIGHTS)
TEXT_SEEDS = 50  # at most this many entities from the ``text`` way (a bound for speed; TEXT_FLOOR decides which)
RECORD_HITS = 5  # records whose mentions the ``record`` way may add
RECORD_SEEDS = 5
_stop_words: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Seed:
    """An entity the text links to: how it matched, where in the text, and its weight.

    Attributes
    ----------
    ref, type, name : str
        The entity.
    match : str
        How it matched: ``name``, ``alias``, ``lemma``, ``text`` or ``record``.
    span : tuple of (int, int) or None
        The characters of the text that matched (None for ``record``).
    matched : str
        The words of the text that matched, or the record refs for ``record``.
    weight : float
        From 0 to 1.
    records : tuple of str
        For ``record``: the records that mention it.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Tool", "Kuzu")
    >>> [(s.ref, s.match, s.span, s.weight) for s in m.link("Atlas runs on Kuzu")]
    [('tool:kuzu', 'name', (14, 18), 1.0)]
    >>> m.close()
    """

    ref: str
    type: str
    name: str
    match: str  # name, alias, lemma, text or record
    span: tuple[int, int] | None  # characters of the text; None for ``record``
    matched: str  # the words of the text that matched, or the record refs for ``record``
    weight: float
    records: tuple[str, ...] = ()  # ``record``: the records that mention it

    def to_dict(self) -> dict[str, Any]:
        """The seed as an item of the JSON documents (``link``, ``recommend``'s ``seeds``).

        Returns
        -------
        dict
            Its fields, ``span`` as a list, ``weight`` rounded; ``records`` only when there are some.
        """
        d: dict[str, Any] = {"ref": self.ref, "type": self.type, "name": self.name, "match": self.match,
                             "span": list(self.span) if self.span else None, "matched": self.matched,
                             "weight": round(self.weight, 6)}
        if self.records:
            d["records"] = list(self.records)
        return d


def stop_words() -> frozenset[str]:
    """spaCy's English stop words, read from their module without importing spaCy (which costs 0.6-1 s)."""
    global _stop_words
    if _stop_words is None:
        import importlib.util
        import runpy
        spec = importlib.util.find_spec("spacy")
        assert spec is not None and spec.submodule_search_locations
        path = f"{list(spec.submodule_search_locations)[0]}/lang/en/stop_words.py"
        _stop_words = frozenset(runpy.run_path(path)["STOP_WORDS"])
    return _stop_words


class RecordMentions(Protocol):
    """The store methods linking calls: the records' full-text ranking and what records mention."""

    def rank_records(self, terms: list[str], limit: int) -> list[tuple[int, float]]: ...

    def mentioned_by(self, rec_ids: list[int]) -> dict[int, list[str]]: ...


@dataclass(frozen=True)
class Linker:
    """What linking reads: the entity lexicon (a function, so its owner builds it once per store
    state), the ontology (words naming an entity type say nothing about one entity) and the records."""

    lexicon: Callable[[], Lexicon]
    ontology: Ontology
    store: RecordMentions


def link(linker: Linker, text: str, *, records: bool = True, text_seeds: int = TEXT_SEEDS) -> tuple[Seed, ...]:
    """The entities ``text`` links to, strongest match first (then by position and ref).

    Each entity appears once, with its strongest match. ``records`` adds the ``record`` way
    (a full-text search over the evidence records); ``text_seeds`` bounds the ``text`` way.
    """
    lex = linker.lexicon()
    ws = words(text)
    seeds: dict[str, Seed] = {}
    taken = [False] * len(ws)
    lemmas = lemmas_of([w for w, _, _ in ws])
    spans = [(i, n) for i in range(len(ws)) for n in range(1, min(lex.longest, len(ws) - i) + 1)]
    lex.prefetch(names=[" ".join(w for w, _, _ in ws[i:i + n]) for i, n in spans],
                 lemmas=[" ".join(lemmas[i:i + n]) for i, n in spans])
    for i in range(len(ws)):
        if taken[i]:
            continue
        for n in range(min(lex.longest, len(ws) - i), 0, -1):
            if any(taken[i:i + n]):
                continue
            key = " ".join(w for w, _, _ in ws[i:i + n])
            hits: list[tuple[str, str]] = list(lex.names.get(key, ()))
            if not hits:
                hits = [(ref, "lemma") for ref in lex.lemmas.get(" ".join(lemmas[i:i + n]), ())]
            if not hits:
                continue
            span = (ws[i][1], ws[i + n - 1][2])
            lex.prefetch(refs=[ref for ref, _ in hits])
            for ref, kind in hits:
                e = lex.by_ref[ref]
                if ref not in seeds or MATCH_WEIGHTS[kind] > seeds[ref].weight:
                    seeds[ref] = Seed(ref, e.type, e.name, kind, span, text[span[0]:span[1]], MATCH_WEIGHTS[kind])
            for j in range(i, i + n):
                taken[j] = True
            break
    if text_seeds and ws:
        content = content_words(linker.ontology, text, ws, lemmas)
        free = [w for (w, _, _), keep, t in zip(ws, content, taken, strict=True) if keep and not t]
        found = lex.describe(free, set(seeds), text_seeds)
        top = found[0][1] if found else 1.0
        for e, score, matched in found:
            first = next((w for w, t in zip(ws, taken, strict=True) if not t and w[0] in matched), None)
            seeds[e.ref] = Seed(e.ref, e.type, e.name, "text", (first[1], first[2]) if first else None, " ".join(dict.fromkeys(matched)),
                                MATCH_WEIGHTS["text"] * score / top)
    if records and ws:
        found_records = _record_seeds(linker.store, text, set(seeds))
        lex.prefetch(refs=[ref for ref, _, _ in found_records])
        for ref, weight, via in found_records:
            mentioned = lex.by_ref.get(ref)
            if mentioned is not None:
                seeds[ref] = Seed(ref, mentioned.type, mentioned.name, "record", None, " ".join(via), weight, tuple(via))
    return tuple(sorted(seeds.values(), key=lambda s: (MATCH_ORDER.index(s.match), s.span or (1 << 30, 0), s.ref)))


def type_words(ontology: Ontology) -> frozenset[str]:
    """The words naming an entity type or its ref prefix ("project", "tool"), lower-cased."""
    return frozenset(k.lower() for k in (*ontology.entity_types, *ontology.by_prefix))


def content_words(ontology: Ontology, text: str, ws: list[tuple[str, int, int]], lemmas: list[str]) -> list[bool]:
    """For each word of ``text`` (``words(text)``, with their lemmas): does it say something about one entity?

    Not a stop word, and not a type word standing alone: a type word ("projects", "a tool
    for") describes every entity of its type and is dropped, but a type word in its singular
    form directly followed (after a space or a hyphen) by a content word is a modifier of that
    word and kept ("project management", "tool-chain").
    """
    stop = stop_words()
    types = type_words(ontology)

    def plain(i: int) -> bool:
        return ws[i][0] not in stop and lemmas[i] not in stop and ws[i][0] not in types and lemmas[i] not in types

    out = []
    for i, (w, _, end) in enumerate(ws):
        if w in stop or lemmas[i] in stop:
            out.append(False)
        elif w in types or lemmas[i] in types:
            out.append(w == lemmas[i] and i + 1 < len(ws) and text[end:ws[i + 1][1]] in (" ", "-") and plain(i + 1))
        else:
            out.append(True)
    return out


def idea_terms(ontology: Ontology, text: str) -> list[str]:
    """The content words of ``text`` (``content_words``), in order: what an entity's own text is scored against."""
    ws = words(text)
    lemmas = lemmas_of([w for w, _, _ in ws])
    return [w for (w, _, _), keep in zip(ws, content_words(ontology, text, ws, lemmas), strict=True) if keep]


def _record_seeds(store: RecordMentions, text: str, exclude: set[str]) -> list[tuple[str, float, list[str]]]:
    """Entities mentioned by the best records for ``text``: (ref, weight, record refs), by weight."""
    from graphmem.model.textindex import query_terms
    try:
        query = search_terms(text)
    except BadInput:
        return []
    hits = store.rank_records(query_terms(query), RECORD_HITS)
    if not hits:
        return []
    top = hits[0][1]
    mentioned = store.mentioned_by([i for i, _ in hits])
    score: dict[str, float] = {}
    via: dict[str, list[str]] = defaultdict(list)
    for rid, rscore in hits:
        for ref in mentioned[rid]:
            if ref in exclude:
                continue
            score[ref] = max(score.get(ref, 0.0), MATCH_WEIGHTS["record"] * rscore / top)
            via[ref].append(f"rec:{rid}")
    best = sorted(score, key=lambda r: (-round(score[r], 9), r))[:RECORD_SEEDS]
    return [(r, score[r], via[r]) for r in best]
