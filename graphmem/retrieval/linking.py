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

import gzip
import json
import marshal
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, overload

import numpy as np

from graphmem.errors import BadInput
from graphmem.evidence.query import search_terms
from graphmem.model import Entity
from graphmem.ontology.schema import Ontology

if TYPE_CHECKING:
    from graphmem.model.textindex import Postings

MATCH_WEIGHTS = {"name": 1.0, "alias": 0.9, "lemma": 0.8, "text": 0.5, "record": 0.3}
MATCH_ORDER = tuple(MATCH_WEIGHTS)
MAX_NAME_WORDS = 8  # longer names are matched by their first words only through ``text``
TEXT_SEEDS = 50  # at most this many entities from the ``text`` way (a bound for speed; TEXT_FLOOR decides which)
RECORD_HITS = 5  # records whose mentions the ``record`` way may add
RECORD_SEEDS = 5
TEXT_FLOOR = 0.25  # a ``text`` match scores at least this share of the best one
_WORD = re.compile(r"[^\W_]+")
_lemmas: dict[str, str] | None = None
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


def lemma_table() -> dict[str, str]:
    """spaCy's English lookup lemmatizer table (spacy-lookups-data), read once.

    This is the table spaCy's ``lemmatizer`` uses in ``lookup`` mode; it is read straight from
    the package's data file because importing spaCy costs 0.6-1 s and a lookup is a dict get.
    """
    global _lemmas
    if _lemmas is None:
        from importlib import resources
        data = resources.files("spacy_lookups_data").joinpath("data", "en_lemma_lookup.json.gz")
        _lemmas = json.loads(gzip.decompress(data.read_bytes()))
    return _lemmas


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


def words(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text``, lower-cased, with their character spans."""
    return [(m[0].lower(), m.start(), m.end()) for m in _WORD.finditer(text)]


def lemma_key(ws: Iterable[str]) -> str:
    table = lemma_table()
    return " ".join(table.get(w, w) for w in ws)


_FORM = 3  # the form of ``Lexicon.to_parts``; another form is built again
# the stored parts by number (``to_parts``): 0 the head, then buckets of names, lemmas, refs and terms (by a
# hash of the key, so a lookup reads one bucket), then the rows in chunks by position
_BUCKETS = 512
_NAMES, _LEMMAS, _REFS, _TERMS, _ROWS = 1, 1 + _BUCKETS, 1 + 2 * _BUCKETS, 1 + 3 * _BUCKETS, 1 + 4 * _BUCKETS
_CHUNK = 1000


def _bucket(base: int, key: str) -> int:
    return base + zlib.crc32(key.encode("utf-8", "surrogatepass")) % _BUCKETS


def _head(data: bytes | None) -> tuple[Any, ...] | None:
    """The stored lexicon's head (form, entities, tokens, longest, tokens by entity), None if not of this form."""
    if data is None:
        return None
    try:
        head = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    return head if isinstance(head, tuple) and len(head) == 5 and head[0] == _FORM else None
_Row = tuple[str, str, str, tuple[str, ...], str]  # ref, type, name, aliases, description


def _ref_of(row: tuple[Any, ...]) -> Any:
    return row[0]


class _Entities(Sequence[Entity]):
    """The lexicon's entities by ref, each made when first asked for (a stored lexicon of 100,000
    entities is read without making them)."""

    def __init__(self, rows: list[_Row]) -> None:
        self._rows = rows
        self._made: dict[int, Entity] = {}

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> Entity: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Entity]: ...

    def __getitem__(self, i: int | slice) -> Entity | Sequence[Entity]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._rows)))]
        if i < 0:
            i += len(self._rows)
        e = self._made.get(i)
        if e is None:
            r = self._rows[i]
            e = self._made[i] = Entity(r[0], r[1], r[2], tuple(r[3]), r[4])
        return e


class _ByRef(Mapping[str, Entity]):
    """Each entity of the lexicon by its ref."""

    def __init__(self, entities: _Entities, index: dict[str, int]) -> None:
        self._entities, self._index = entities, index

    def __getitem__(self, ref: str) -> Entity:
        return self._entities[self._index[ref]]

    def __contains__(self, ref: object) -> bool:
        return ref in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


class _Flat(NamedTuple):
    """Every posting of the lexicon in four columns: term index, entity position, count, entity length."""

    tix: np.ndarray
    ids: np.ndarray
    tfs: np.ndarray
    dls: np.ndarray

    @staticmethod
    def empty() -> _Flat:
        return _Flat(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, "<u2"), np.zeros(0, "<u2"))

    def extend(self, cols: list[list[int]]) -> _Flat:
        if not cols[0]:
            return self
        return _Flat(np.concatenate([self.tix, np.asarray(cols[0], np.int64)]),
                     np.concatenate([self.ids, np.asarray(cols[1], np.int64)]),
                     np.concatenate([self.tfs, np.asarray(cols[2], "<u2")]),
                     np.concatenate([self.dls, np.asarray(cols[3], "<u2")]))

    def sorted(self) -> _Flat:
        order = np.lexsort((self.ids, self.tix))
        return _Flat(self.tix[order], self.ids[order], self.tfs[order], self.dls[order])


class _PostingsMap(Mapping[str, "Postings"]):
    """Each term's postings (entity positions rising), cut from the flat columns when asked for."""

    def __init__(self, terms: list[str], flat: _Flat) -> None:
        self._flat = flat
        self._tix = {t: i for i, t in enumerate(terms)}
        self._starts = np.searchsorted(flat.tix, np.arange(len(terms) + 1))

    def spans(self) -> dict[str, tuple[int, int]]:
        return {t: (int(self._starts[i]), int(self._starts[i + 1])) for t, i in self._tix.items()}

    def __getitem__(self, term: str) -> Postings:
        from graphmem.model.textindex import Postings
        i = self._tix[term]
        a, b = int(self._starts[i]), int(self._starts[i + 1])
        f = self._flat
        return Postings(f.ids[a:b].astype("<u4"), f.tfs[a:b], f.dls[a:b])

    def __contains__(self, term: object) -> bool:
        return term in self._tix

    def __iter__(self) -> Iterator[str]:
        return iter(self._tix)

    def __len__(self) -> int:
        return len(self._tix)


class Lexicon:
    """The entity side of linking: names and aliases by their words, by their lemmas, and a small
    BM25 index over names, aliases and descriptions.

    ``Memory.lexicon()`` reads it from the store (where it is kept, docs/recommend.md "The stored
    lexicon") or builds it from the store's entities; ``Memory.link`` matches text against it.

    Attributes
    ----------
    entities : sequence of Entity
        By ref.
    by_ref : mapping of str to Entity
        Each entity by its ref.
    names : dict of str to list of (str, str)
        The words of each name and alias to (ref, ``name`` or ``alias``).
    lemmas : dict of str to list of str
        The lemmas of each name and alias to refs.
    longest : int
        The most words a name or alias has.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
    >>> _ = m.add_entity("Tool", "Kuzu", description="an embedded graph database")
    >>> lx = m.lexicon()
    >>> lx.names["kuzu"], [(e.ref, words) for e, _, words in lx.describe(["graph"], set(), 3)]
    ([('tool:kuzu', 'name')], [('tool:kuzu', ['graph'])])
    >>> m.close()
    """

    def __init__(self, entities: Iterable[Entity]) -> None:
        rows = sorted(((e.ref, e.type, e.name, tuple(e.aliases), e.description) for e in entities), key=_ref_of)
        self._rows: list[_Row] = []
        self.names: dict[str, list[tuple[str, str]]] = {}
        self.lemmas: dict[str, list[str]] = {}
        self._terms: list[str] = []
        self._flat = _Flat.empty()
        self._set_rows(rows)
        self._doc_tokens = np.zeros(len(rows), np.int64)
        self._add(rows)
        self._finish()

    # the parts every form shares -----------------------------------------------------------------

    def _set_rows(self, rows: list[_Row]) -> None:
        self._rows = rows
        self.index = {r[0]: i for i, r in enumerate(rows)}
        self.entities = _Entities(rows)
        self.by_ref = _ByRef(self.entities, self.index)

    def _add(self, rows: Iterable[_Row]) -> None:
        """Index ``rows`` (in ref order, each at its position in ``index``): names, lemmas, postings."""
        from graphmem.model.textindex import terms
        tix = {t: i for i, t in enumerate(self._terms)}
        cols: list[list[int]] = [[], [], [], []]  # term index, position, tf, dl
        tokens = []
        for row in rows:
            ref = row[0]
            pos = self.index[ref]
            for kind, label in [("name", row[2])] + [("alias", a) for a in row[3]]:
                ws = [w for w, _, _ in words(label)]
                if not ws or len(ws) > MAX_NAME_WORDS:
                    continue
                key = " ".join(ws)
                hits = self.names.setdefault(key, [])
                if (ref, "name") not in hits and (ref, kind) not in hits:
                    hits.append((ref, kind))
                lk = lemma_key(ws)
                refs = self.lemmas.setdefault(lk, [])
                if ref not in refs:
                    refs.append(ref)
            ts = terms(" ".join([row[2], *row[3], row[4]]))
            tokens.append((pos, len(ts)))
            dl = min(len(ts), 65535)
            for t, tf in Counter(ts).items():
                i = tix.get(t)
                if i is None:
                    i = tix[t] = len(self._terms)
                    self._terms.append(t)
                cols[0].append(i)
                cols[1].append(pos)
                cols[2].append(min(tf, 65535))
                cols[3].append(dl)
        self._flat = self._flat.extend(cols)
        if tokens:
            pos_arr = np.fromiter((p for p, _ in tokens), np.int64, len(tokens))
            n_arr = np.fromiter((n for _, n in tokens), np.int64, len(tokens))
            self._doc_tokens[pos_arr] = n_arr

    def _finish(self) -> None:
        """Postings in order (term, position), terms without postings dropped; the counts; ``longest``."""
        f = self._flat.sorted()
        used = np.unique(f.tix)
        if len(used) != len(self._terms):  # terms no entity has any more
            remap = np.full(len(self._terms), -1, np.int64)
            remap[used] = np.arange(len(used))
            f = _Flat(remap[f.tix], f.ids, f.tfs, f.dls)
            self._terms = [self._terms[i] for i in used.tolist()]
        self._flat = f
        self.postings = _PostingsMap(self._terms, f)
        self.n_docs = len(self._rows)
        self.n_tokens = int(self._doc_tokens.sum())
        self.longest = max((k.count(" ") + 1 for k in self.names), default=1)

    # stored form, patches, comparison ----------------------------------------------------------------

    def to_parts(self) -> dict[int, bytes]:
        """The lexicon as the store keeps it: numbered parts (``_Part``), each read alone by a process that
        needs only a few names, entities and terms (``StoredLexicon``); ``from_parts`` reads them all back.

        Returns
        -------
        dict of int to bytes
        """
        buckets: dict[int, dict[Any, Any]] = defaultdict(dict)
        for key, hits in self.names.items():
            buckets[_bucket(_NAMES, key)][key] = hits
        for key, refs in self.lemmas.items():
            buckets[_bucket(_LEMMAS, key)][key] = refs
        for pos, row in enumerate(self._rows):
            buckets[_bucket(_REFS, row[0])][row[0]] = (pos, *row[1:])
        for term, (a, b) in self.postings.spans().items():
            f = self._flat
            buckets[_bucket(_TERMS, term)][term] = (f.ids[a:b].astype("<u4").tobytes(), f.tfs[a:b].tobytes(),
                                                     f.dls[a:b].tobytes())
        parts = {i: marshal.dumps(d) for i, d in buckets.items()}
        for c in range(0, len(self._rows), _CHUNK):
            parts[_ROWS + c // _CHUNK] = marshal.dumps(self._rows[c:c + _CHUNK])
        parts[0] = marshal.dumps((_FORM, self.n_docs, self.n_tokens, self.longest, self._doc_tokens.astype("<i8").tobytes()))
        return parts

    @classmethod
    def from_parts(cls, parts: dict[int, bytes]) -> Lexicon | None:
        """A lexicon from all of ``to_parts``; None when they are of another form (it is built again).

        Returns
        -------
        Lexicon or None
        """
        head = _head(parts.get(0))
        if head is None:
            return None
        rows: list[_Row] = []
        for c in range((head[1] + _CHUNK - 1) // _CHUNK):
            rows.extend(marshal.loads(parts[_ROWS + c]))
        lx = cls.__new__(cls)
        lx._set_rows(rows)
        lx.names, lx.lemmas = {}, {}
        cols: list[list[Any]] = [[], [], [], []]
        lx._terms = []
        for i in sorted(parts):
            if _NAMES <= i < _LEMMAS:
                lx.names.update(marshal.loads(parts[i]))
            elif _LEMMAS <= i < _REFS:
                lx.lemmas.update(marshal.loads(parts[i]))
            elif _TERMS <= i < _ROWS:
                for term, (ids, tfs, dls) in marshal.loads(parts[i]).items():
                    n = len(ids) // 4
                    cols[0].append(np.full(n, len(lx._terms), np.int64))
                    cols[1].append(np.frombuffer(ids, "<u4").astype(np.int64))
                    cols[2].append(np.frombuffer(tfs, "<u2"))
                    cols[3].append(np.frombuffer(dls, "<u2"))
                    lx._terms.append(term)
        lx._flat = _Flat(*(np.concatenate(c) if c else np.zeros(0, t) for c, t in
                           zip(cols, (np.int64, np.int64, "<u2", "<u2"), strict=True))).sorted() if cols[0] else _Flat.empty()
        lx._doc_tokens = np.frombuffer(head[4], "<i8").copy()
        lx.postings = _PostingsMap(lx._terms, lx._flat)
        lx.n_docs, lx.n_tokens, lx.longest = head[1], head[2], head[3]
        return lx

    def prefetch(self, names: Iterable[str] = (), lemmas: Iterable[str] = (), refs: Iterable[str] = (),
                 terms: Iterable[str] = (), positions: Iterable[int] = ()) -> None:
        """Say which names, lemmas, refs, terms and entity positions are about to be looked up (a stored
        lexicon reads their parts at once; a lexicon in memory has them all)."""

    def patched(self, changed: dict[str, Entity | None]) -> Lexicon:
        """This lexicon with the entities of ``changed`` as they are now (None: no such entity any more):
        what ``Lexicon`` would build from the entities, without reading the others again.

        Returns
        -------
        Lexicon
            A new lexicon; this one is unchanged.
        """
        if not changed:
            return self
        old_rows = self._rows
        gone = [self.index[r] for r in changed if r in self.index]
        new_rows = {r: (e.ref, e.type, e.name, tuple(e.aliases), e.description) for r, e in changed.items() if e}
        lx = Lexicon.__new__(Lexicon)
        lx.names = {k: list(v) for k, v in self.names.items()}
        lx.lemmas = {k: list(v) for k, v in self.lemmas.items()}
        for pos in gone:  # the changed entities' old names and lemmas go
            row = old_rows[pos]
            for label in (row[2], *row[3]):
                ws = [w for w, _, _ in words(label)]
                if not ws or len(ws) > MAX_NAME_WORDS:
                    continue
                key, lk = " ".join(ws), lemma_key(ws)
                if key in lx.names:
                    lx.names[key] = [h for h in lx.names[key] if h[0] != row[0]]
                    if not lx.names[key]:
                        del lx.names[key]
                if lk in lx.lemmas:
                    lx.lemmas[lk] = [r for r in lx.lemmas[lk] if r != row[0]]
                    if not lx.lemmas[lk]:
                        del lx.lemmas[lk]
        rows = sorted([r for r in old_rows if r[0] not in changed] + list(new_rows.values()), key=_ref_of)
        lx._set_rows(rows)
        # postings of kept entities move to their new positions; those of changed entities go
        moved = np.full(len(old_rows), -1, np.int64)
        kept = [i for i, r in enumerate(old_rows) if r[0] not in changed]
        if kept:
            moved[np.asarray(kept)] = np.asarray([lx.index[old_rows[i][0]] for i in kept])
        f = self._flat
        ids = moved[f.ids] if len(f.ids) else f.ids
        keep = ids >= 0
        lx._flat = _Flat(f.tix[keep], ids[keep], f.tfs[keep], f.dls[keep])
        lx._terms = list(self._terms)
        lx._doc_tokens = np.zeros(len(rows), np.int64)
        if kept:
            lx._doc_tokens[moved[np.asarray(kept)]] = self._doc_tokens[np.asarray(kept)]
        added = sorted(new_rows.values(), key=_ref_of)
        lx._add(added)
        for key in {k for r in added for k in lx._keys_of(r)[0]}:  # a key's hits in ref order, as a build has them
            lx.names[key].sort(key=_ref_of)
        for lk in {k for r in added for k in lx._keys_of(r)[1]}:
            lx.lemmas[lk].sort()
        lx._finish()
        return lx

    @staticmethod
    def _keys_of(row: _Row) -> tuple[list[str], list[str]]:
        keys, lks = [], []
        for label in (row[2], *row[3]):
            ws = [w for w, _, _ in words(label)]
            if ws and len(ws) <= MAX_NAME_WORDS:
                keys.append(" ".join(ws))
                lks.append(lemma_key(ws))
        return keys, lks

    def state(self) -> tuple[Any, ...]:
        """Everything linking reads from the lexicon, for comparing two (``rebuild --check``, tests).

        Returns
        -------
        tuple
        """
        f = self._flat
        post = {t: (f.ids[a:b].tolist(), f.tfs[a:b].tolist(), f.dls[a:b].tolist())
                for t, (a, b) in self.postings.spans().items()}
        return (list(self._rows), dict(self.names), dict(self.lemmas), post, self.n_docs, self.n_tokens, self.longest)

    @staticmethod
    def _by_term(ws: list[str]) -> dict[str, list[str]]:
        from graphmem.model.textindex import terms
        by_term: dict[str, list[str]] = defaultdict(list)
        for w in ws:
            stems = terms(w)
            if stems and w not in by_term[stems[0]]:
                by_term[stems[0]].append(w)
        return by_term

    def text_scores(self, ws: list[str], refs: Iterable[str]) -> dict[str, float]:
        """BM25 of each of ``refs`` (its name, aliases and description) against the words ``ws``,
        with the same index and weights as ``describe``; 0.0 for an entity sharing none of them.

        Returns
        -------
        dict of str to float
        """
        import numpy as np

        from graphmem.model.textindex import weights
        refs = list(refs)
        self.prefetch(refs=refs, terms=self._by_term(ws))
        at = {self.index[r]: r for r in refs if r in self.index}
        known = sorted(at)
        out = dict.fromkeys(refs, 0.0)
        if not known:
            return out
        cand = np.asarray(known, dtype=np.int64)
        total = np.zeros(len(cand))
        for term in sorted(self._by_term(ws)):
            p = self.postings.get(term)
            if p is None or not len(p.ids):
                continue
            w = weights(p, self.n_docs, self.n_tokens)
            pos = np.minimum(np.searchsorted(p.ids, cand), len(p.ids) - 1)
            total += np.where(p.ids[pos] == cand, w[pos], 0.0)
        for i, score in zip(known, total.tolist(), strict=True):
            out[at[i]] = score
        return out

    def describe(self, ws: list[str], exclude: set[str], limit: int) -> list[tuple[Entity, float, list[str]]]:
        """Entities whose names, aliases or descriptions share some of the words ``ws``, by BM25:
        (entity, score, the words that matched), best first, ties by ref; each scores at least
        TEXT_FLOOR of the best, and at most ``limit`` of them.

        Returns
        -------
        list of (Entity, float, list of str)
            None of ``exclude``.
        """
        from graphmem.model.textindex import bm25_top, terms, weights
        by_term = self._by_term(ws)
        self.prefetch(terms=by_term)
        lists = []
        for term in sorted(by_term):
            p = self.postings.get(term)
            if p is not None:
                lists.append((p.ids, weights(p, self.n_docs, self.n_tokens)))
        out: list[tuple[Entity, float, list[str]]] = []
        top = bm25_top(lists, limit + len(exclude))
        self.prefetch(positions=[i for i, _ in top])
        for i, score in top:
            e = self.entities[i]
            if e.ref in exclude or (out and score < TEXT_FLOOR * out[0][1]):
                continue
            doc_terms = set(terms(" ".join([e.name, *e.aliases, e.description])))
            out.append((e, score, [w for term in sorted(by_term) if term in doc_terms for w in by_term[term]]))
            if len(out) == limit:
                break
        return out


class StoredLexicon(Lexicon):
    """A lexicon read from the store part by part, as lookups need them (``Lexicon.to_parts``): a fresh
    process that links one text reads a few dozen small parts instead of the whole lexicon.

    Only for a stored lexicon with no entity written since (``stored_lexicon``); the store must not change
    while it is used (its owner drops it on an entity write).
    """

    def __init__(self, read: Callable[[list[int] | None], dict[int, bytes]], head: tuple[Any, ...]) -> None:
        self._read = read
        self._loaded: dict[int, Any] = {}
        _, self.n_docs, self.n_tokens, self.longest, _ = head
        self.names = _Lazy(self, _NAMES)  # type: ignore[assignment]
        self.lemmas = _Lazy(self, _LEMMAS)  # type: ignore[assignment]
        self._refs = _Lazy(self, _REFS)
        self.postings = _LazyPostings(self)  # type: ignore[assignment]
        self.index = _LazyIndex(self)  # type: ignore[assignment]
        self.entities = _LazyEntities(self)  # type: ignore[assignment]
        self.by_ref = _LazyByRef(self)  # type: ignore[assignment]

    def _part(self, i: int) -> Any:
        if i not in self._loaded:
            self._fetch([i])
        return self._loaded[i]

    def _fetch(self, ids: Iterable[int]) -> None:
        want = sorted({i for i in ids if i not in self._loaded})
        if want:
            got = self._read(want)
            for i in want:
                self._loaded[i] = marshal.loads(got[i]) if i in got else ({} if i < _ROWS else [])

    def prefetch(self, names: Iterable[str] = (), lemmas: Iterable[str] = (), refs: Iterable[str] = (),
                 terms: Iterable[str] = (), positions: Iterable[int] = ()) -> None:
        self._fetch([*(_bucket(_NAMES, k) for k in names), *(_bucket(_LEMMAS, k) for k in lemmas),
                     *(_bucket(_REFS, k) for k in refs), *(_bucket(_TERMS, k) for k in terms),
                     *(_ROWS + int(i) // _CHUNK for i in positions)])

    def full(self) -> Lexicon:
        """The whole lexicon, read at once."""
        lx = Lexicon.from_parts(self._read(None))
        assert lx is not None
        return lx

    def state(self) -> tuple[Any, ...]:
        return self.full().state()

    def to_parts(self) -> dict[int, bytes]:
        return self.full().to_parts()

    def patched(self, changed: dict[str, Entity | None]) -> Lexicon:
        return self.full().patched(changed)


class _Lazy(Mapping[str, Any]):
    """One kind of keyed part of a stored lexicon (names, lemmas, refs), a bucket read when first needed."""

    def __init__(self, lx: StoredLexicon, base: int) -> None:
        self._lx, self._base = lx, base

    def __getitem__(self, key: str) -> Any:
        return self._lx._part(_bucket(self._base, key))[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._lx._part(_bucket(self._base, key))

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a stored lexicon is not listed whole: Lexicon.from_parts reads it all")

    def __len__(self) -> int:
        raise TypeError("a stored lexicon is not counted whole")


class _LazyIndex(_Lazy):
    """Ref to position, from the refs' parts (which hold the position first)."""

    def __init__(self, lx: StoredLexicon) -> None:
        super().__init__(lx, _REFS)

    def __getitem__(self, key: str) -> Any:
        return super().__getitem__(key)[0]


class _LazyByRef(_Lazy):
    """Ref to entity, from the refs' parts (position, type, name, aliases, description)."""

    def __init__(self, lx: StoredLexicon) -> None:
        super().__init__(lx, _REFS)

    def __getitem__(self, key: str) -> Any:
        _, etype, name, aliases, description = super().__getitem__(key)
        return Entity(key, etype, name, tuple(aliases), description)


class _LazyPostings(_Lazy):
    def __init__(self, lx: StoredLexicon) -> None:
        super().__init__(lx, _TERMS)

    def __getitem__(self, term: str) -> Postings:
        from graphmem.model.textindex import Postings
        ids, tfs, dls = super().__getitem__(term)
        return Postings(np.frombuffer(ids, "<u4"), np.frombuffer(tfs, "<u2"), np.frombuffer(dls, "<u2"))


class _LazyEntities(Sequence[Entity]):
    def __init__(self, lx: StoredLexicon) -> None:
        self._lx = lx

    def __len__(self) -> int:
        return int(self._lx.n_docs)

    @overload
    def __getitem__(self, i: int) -> Entity: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Entity]: ...

    def __getitem__(self, i: int | slice) -> Entity | Sequence[Entity]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i) + (len(self) if i < 0 else 0)
        r = self._lx._part(_ROWS + i // _CHUNK)[i % _CHUNK]
        return Entity(r[0], r[1], r[2], tuple(r[3]), r[4])


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
    table = lemma_table()
    lemmas = [table.get(w, w) for w, _, _ in ws]
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
    table = lemma_table()
    lemmas = [table.get(w, w) for w, _, _ in ws]
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


class LexiconStore(Protocol):
    """The store methods the stored lexicon needs (``store/kuzu/lexicon.py``)."""

    read_only: bool

    def lexicon_parts(self, ids: list[int] | None) -> dict[int, bytes]: ...

    def lexicon_changes(self) -> list[str]: ...

    def store_lexicon(self, parts: dict[int, bytes] | None) -> None: ...

    def entity(self, ref: str) -> Entity | None: ...

    def all_entities(self) -> Iterator[Entity]: ...


PATCH_MAX = 5000  # more entities changed since the lexicon was stored than this: it is built again whole


def stored_lexicon(store: LexiconStore, *, keep: bool = False) -> tuple[Lexicon, bool]:
    """The store's lexicon: the stored one read part by part as needed (``StoredLexicon``) when no entity
    was written since it was stored; else the stored one patched with the entities written since
    (``Lexicon.patched``), or, when none is stored (or too many changed), one built from every entity.
    Also whether it is stored as it is. With ``keep`` (a store open for writing) a lexicon that is not is
    stored, and the changes forgotten, in one transaction.

    Returns
    -------
    (Lexicon, bool)
    """
    changed = store.lexicon_changes()
    head = _head(store.lexicon_parts([0]).get(0))
    if head is not None and not changed:
        return StoredLexicon(store.lexicon_parts, head), True
    lx: Lexicon | None = None
    if head is not None and len(changed) <= PATCH_MAX:
        whole = Lexicon.from_parts(store.lexicon_parts(None))
        if whole is not None:
            lx = whole.patched({ref: store.entity(ref) for ref in changed})
    if lx is None:
        lx = Lexicon(store.all_entities())
    if keep and not store.read_only:
        store.store_lexicon(lx.to_parts())
        return lx, True
    return lx, False


def fresh_lexicon(store: LexiconStore) -> Lexicon:
    """The lexicon built from every entity of the store (what ``rebuild`` stores and ``rebuild --check``
    compares the stored one with)."""
    return Lexicon(store.all_entities())
