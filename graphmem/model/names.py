"""The names a text speaks of (docs/evidence.md, "Names in records"): the speaker of a chat turn
("Caroline: ...") and runs of capitalized words that are not just a sentence's first word.

Pure and rule-based (no model, no spaCy: ingest runs it on every record, and spaCy is imported by
extraction alone). The full-text index keeps each record's names as name terms (``name_term``),
so the records that share a name with another are one postings read away; ingest links a name
that an entity of the store has (name or alias, any case) with a MENTIONS edge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

MAX_NAME_WORDS = 4  # a longer run of capitalized words is a title or shouting, cut to its first four
NAME_PREFIX = "@"  # a name term's first character: no word of a text or a query gives it
INITIAL_PREFIX = "^"  # ... of a run of capitalized words that starts a sentence ("Sweden was lovely", "Thanks")

# A capitalized first word of a sentence is often not a name ("Thanks", "Yesterday"); these, also
# inside a run, never start one: function words, and times (a time is not a thing a record names).
_NOT_NAMES = frozenset("""
a an the this that these those my our your his her its their i i'm i've i'll i'd me we you he she it they
and or but so if when while because as at by for from in into of on to with without about after before
do does did is are was were be been am can could would will should shall must might have has had
what who whom whose where when why how which there here not just also then
hi hey hello oh wow yes yeah no ok okay thanks thank please sure well dear
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
today tomorrow yesterday tonight
""".split())  # noqa: SIM905 (a word list reads best as words)
_SPEAKER = re.compile(r"\A\s*([^\W\d_][\w.'’-]*(?: [^\W\d_][\w.'’-]*){0,2}):\s")
_TOKEN = re.compile(r"(?P<word>[^\W_](?:[\w’'-]*[^\W_])?)|(?P<end>[.!?:;\n\[\]()\"“”])")
_POSSESSIVE = ("'s", "’s")
_NOT_WORD = re.compile(r"[\W_]+")


class Name(NamedTuple):
    """A name found in a text: its ``key`` (lower-cased words, a possessive ``'s`` dropped), the
    ``text`` as written, its character span, and ``rule``: ``speaker``, ``capitalized`` or
    ``initial`` (a run that starts a sentence)."""

    key: str
    text: str
    start: int
    end: int
    rule: str


def _strip_possessive(word: str) -> str:
    for s in ("'s", "’s"):
        if word.endswith(s) and len(word) > len(s):
            return word[: -len(s)]
    return word


def names(text: str) -> list[Name]:
    """The names ``text`` speaks of, in order of their place in it: the speaker before a leading
    ``Name:`` and every run of capitalized words (up to 4). A sentence's first word is a name of its
    own, only ``initial`` (it may be "Did" or "Sweden"), unless the text also writes it capitalized
    inside a sentence.

    Examples
    --------
    >>> [(n.key, n.rule) for n in names("Caroline: I met Anna Lee at the Pride parade. Thanks Melanie's mum!")]
    [('caroline', 'speaker'), ('anna lee', 'capitalized'), ('pride', 'capitalized'), ('melanie', 'capitalized')]
    >>> [(n.key, n.rule) for n in names("Sweden was lovely. Yesterday we left.")]
    [('sweden', 'initial')]
    """
    out: list[Name] = []
    at = 0
    m = _SPEAKER.match(text)
    if m and m.group(1).lower() not in _NOT_NAMES:
        out.append(Name(m.group(1).lower(), m.group(1), m.start(1), m.end(1), "speaker"))
        at = m.end()
    # one pass: each word with whether it starts a sentence; a lower-case word only breaks a run
    words: list[tuple[str, int, bool]] = []
    first = True
    for t in _TOKEN.finditer(text, at):
        w = t.group()
        if t.lastgroup == "end":
            first = True
            continue
        if w[0].isupper() and not w.isdigit():
            words.append((w, t.start(), first))
        elif words and words[-1][0]:
            words.append(("", 0, False))
        first = False
    inside = {_strip_possessive(w) for w, _s, first in words if w and not first}
    run: list[tuple[str, int, int]] = []
    rule = "capitalized"

    def close() -> None:
        if run:
            parts = run[:MAX_NAME_WORDS]
            last_word = _strip_possessive(parts[-1][0])
            key = " ".join([w.lower() for w, _, _ in parts[:-1]] + [last_word.lower()])
            end = parts[-1][1] + len(last_word)
            out.append(Name(key, text[parts[0][1]:end], parts[0][1], end, rule))
            run.clear()

    for w, s, first in words:
        if first and run:
            close()
        if not w:
            if run:
                close()
            continue
        bare = w[:-2] if w[-2:] in _POSSESSIVE and len(w) > 2 else w
        if len(bare) > 1 and bare.lower() not in _NOT_NAMES:
            if not run:
                rule = "initial" if first and bare not in inside else "capitalized"
            run.append((w, s, s + len(w)))
            if bare is not w or rule == "initial":  # "Melanie's mum", "Did Caroline ...": the name ends here
                close()
        elif run:
            close()
    close()
    return out


def name_term(key: str) -> str:
    """The full-text index's term for a name: ``@`` and its words joined by ``_`` (no word gives it;
    apostrophes and hyphens become ``_`` too, so a term is plain text).

    >>> name_term("anna lee"), name_term("o'brien")
    ('@anna_lee', '@o_brien')
    """
    return NAME_PREFIX + _NOT_WORD.sub("_", key)


def name_terms(text: str, speaker: bool = True) -> list[str]:
    """The distinct name terms of ``text``, in order (what the index keeps for it): ``@`` for a
    name, ``^`` for a run that only starts a sentence (``INITIAL_PREFIX``); without ``speaker``,
    only the names the text speaks of, not who speaks it.

    >>> name_terms("Melanie: Did Caroline go? Caroline said so. Sweden, too.")
    ['@melanie', '@caroline', '^sweden']
    >>> name_terms("Melanie: Did Caroline go?", speaker=False)
    ['@caroline']
    """
    return terms_of(names(text), speaker)


def terms_of(found: Iterable[Name], speaker: bool = True) -> list[str]:
    """``name_terms`` of names already found (``names``), so a caller that has them finds none again.

    >>> terms_of(names("Melanie: Did Caroline go?"))
    ['@melanie', '@caroline']
    """
    return list(dict.fromkeys((INITIAL_PREFIX if n.rule == "initial" else NAME_PREFIX) + name_term(n.key)[1:]
                              for n in found if speaker or n.rule != "speaker"))


def lookup_terms(term: str) -> list[str]:
    """The index terms whose records name what the name term ``term`` of another text names: a name
    is found where it is written as one or starts a sentence; a sentence's first word only where
    it is written as a name (in no text inside a sentence, it is likely no name).

    >>> lookup_terms("@anna_lee"), lookup_terms("^sweden")
    (['@anna_lee', '^anna_lee'], ['@sweden'])
    """
    key = term[1:]
    return [NAME_PREFIX + key, INITIAL_PREFIX + key] if term.startswith(NAME_PREFIX) else [NAME_PREFIX + key]
