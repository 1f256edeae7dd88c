"""The entity lexicon that linking matches text against (``Lexicon``): names and aliases by their words and
their lemmas, and a small BM25 index over names, aliases and descriptions; and its stored form.

The store keeps it (``store/kuzu/lexicon.py``, docs/recommend.md "The stored lexicon"): ``to_parts`` cuts it
into numbered parts by key, ``StoredLexicon`` reads only the parts a text needs, ``patched`` applies the
entities written since it was stored, and ``stored_lexicon`` picks among them. ``linking`` re-exports the
names its callers used before this module existed.
"""

from __future__ import annotations

import gzip
import json
import marshal
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, overload

import numpy as np

from graphmem.model import Entity

if TYPE_CHECKING:
    from graphmem.model.textindex import Postings

MAX_NAME_WORDS = 8  # longer names are matched by their first words only through ``text``
TEXT_FLOOR = 0.25  # a ``text`` match scores at least this share of the best one
_WORD = re.compile(r"[^\W_]+")
_lemmas: dict[str, str] | None = None
_lemma_raw: bytes | None = None
_lemma_memo: dict[str, str] = {}
_FEW_LEMMAS = 64  # more words than this not looked up yet: the whole table is read (``lemmas_of``)


def _lemma_text() -> bytes:
    """The lemma table's file, unzipped (the package's own import, which lists every language's files, is
    not run)."""
    global _lemma_raw
    if _lemma_raw is None:
        import importlib.util
        spec = importlib.util.find_spec("spacy_lookups_data")
        assert spec is not None and spec.submodule_search_locations
        path = f"{list(spec.submodule_search_locations)[0]}/data/en_lemma_lookup.json.gz"
        with open(path, "rb") as f:
            _lemma_raw = gzip.decompress(f.read())
    return _lemma_raw


def lemma_table() -> dict[str, str]:
    """spaCy's English lookup lemmatizer table (spacy-lookups-data), read once.

    This is the table spaCy's ``lemmatizer`` uses in ``lookup`` mode; it is read straight from
    the package's data file because importing spaCy costs 0.6-1 s and a lookup is a dict get.
    """
    global _lemmas
    if _lemmas is None:
        _lemmas = json.loads(_lemma_text())
    return _lemmas


def lemmas_of(ws: Sequence[str]) -> list[str]:
    """Each word's lemma in ``lemma_table`` (the word itself when the table has none).

    A few words are looked up in the table's file without parsing it whole (25 ms of a fresh process
    that links one text): the file holds one entry a line, ``"word": "lemma",`` indented by four spaces
    (a flat object written by ``json.dump`` with ``indent=4``), so a word's entry is the line that starts
    with it, and one pass finds them all. A file laid out otherwise, or many words, reads the whole table.

    Examples
    --------
    >>> lemmas_of(["graphs", "databases", "kuzu"])
    ['graph', 'database', 'kuzu']
    """
    new = sorted(set(ws) - _lemma_memo.keys())
    if _lemmas is not None or len(new) > _FEW_LEMMAS:
        table = lemma_table()
        return [table.get(w, w) for w in ws]
    if new:
        raw = _lemma_text()
        if not raw.startswith(b'{\n    "'):
            table = lemma_table()
            return [table.get(w, w) for w in ws]
        keys = [json.dumps(w, ensure_ascii=False).encode("utf-8", "surrogatepass") for w in new]
        found: dict[bytes, str] = {}
        for m in re.finditer(b"\n    (" + b"|".join(re.escape(k) for k in keys) + b"): (.*)", raw):
            found[m[1]] = json.loads(m[2].rstrip(b","))  # a key written twice: the last, as json.loads keeps
        for w, k in zip(new, keys, strict=True):
            _lemma_memo[w] = found.get(k, w)
    return [_lemma_memo[w] for w in ws]


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
