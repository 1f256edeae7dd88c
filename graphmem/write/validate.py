"""Validate once: every write's input checked against the ontology, the predicate registry and the
store's entities and records, and made into the values the store appends (``Statement``, ``Entity``,
a retraction). Nothing here writes; ``graphmem.write.apply`` does."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, NamedTuple, Protocol

from graphmem.errors import AmbiguousEntity, BadInput, BadTime, TypeMismatch, UnknownEntity, UnknownPredicate
from graphmem.model import ASSERTERS, DEFAULT_TRUST, TRUST_RANK, Entity, Statement, Value
from graphmem.model.scopes import in_scopes, one_scope
from graphmem.model.text import clean
from graphmem.model.times import format_instant, parse_date_value, parse_instant
from graphmem.model.words import did_you_mean, max_distance, near
from graphmem.ontology.schema import Ontology, Predicate, Registry
from graphmem.write.inputs import parse_record_ref

_SLUG_RE = re.compile(r"[\W_]+")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S+$")
_URL_RE = re.compile(r"^https?://\S+$")


class Lookups(Protocol):
    """What validation reads from the store: entities by ref and name, and whether a record exists."""

    def entity(self, ref: str) -> Entity | None: ...
    def refs_named(self, key: str) -> list[str]: ...
    def names_containing(self, text: str, limit: int = 5) -> list[str]: ...
    def names_near(self, text: str, max_edits: int, limit: int = 50) -> dict[str, list[str]]: ...
    def entity_count(self) -> int: ...
    def all_names(self) -> dict[str, list[str]]: ...
    def record(self, rec_id: int) -> Any: ...
    def redirects(self) -> dict[str, list[tuple[str, int, int | None]]]: ...


def slug(name: str) -> str:
    """Lower-case, runs of non-alphanumerics become ``-``, trimmed: "Ada Lovelace" -> "ada-lovelace"."""
    return _SLUG_RE.sub("-", name.lower()).strip("-")


# resolution -----------------------------------------------------------------------

class Resolver:
    """The one entity resolver: by ref, exact name or alias (case-insensitive).

    Alone it asks the store on every call, and an unknown name gets the store's near names as a hint.
    For a batch (an import, an extraction) it also knows the entities the batch adds (``add``) and
    keeps what it looked up; with ``preload`` it reads the whole name index once (a large import).
    """

    def __init__(self, store: Lookups, *, batch: bool = False, preload: bool = False) -> None:
        self.store, self.batch = store, batch
        self.new: dict[str, Entity] = {}
        self.new_names: dict[str, list[str]] = defaultdict(list)
        self.cache: dict[str, Entity | None] = {}
        self.store_names: dict[str, list[str]] | None = None
        self.store_empty = store.entity_count() == 0 if preload else False
        if preload and not self.store_empty:
            self.store_names = store.all_names()

    def entity(self, ref: str) -> Entity | None:
        """The entity with this ref (lower-case), if the store or the batch has it."""
        if not self.batch:
            return self.store.entity(ref)
        if ref in self.new:
            return self.new[ref]
        if self.store_empty:
            return None
        if ref not in self.cache:
            self.cache[ref] = self.store.entity(ref)
        return self.cache[ref]

    def _refs(self, text: str) -> list[str]:
        if not self.batch:
            return self.store.refs_named(text)
        key = text.lower()
        if self.store_empty:
            stored = []
        elif self.store_names is not None:
            stored = self.store_names.get(key, [])
        else:
            stored = self.store.refs_named(key)
        return list(dict.fromkeys(stored + self.new_names.get(key, [])))

    def __call__(self, text: str, role: str = "entity", *, at: int | None = None, follow: bool = True) -> Entity:
        """The entity ``text`` names; one merged into another resolves to that one (as known at ``at``,
        default now) unless ``follow`` is false. A batch (an import) takes refs as written."""
        e = self._find(text, role)
        return self.follow(e, at) if follow and not self.batch else e

    def follow(self, e: Entity, at: int | None = None) -> Entity:
        """The entity ``e`` was merged into (transitively) as known at ``at`` (default now); ``e`` itself
        when it was not merged then."""
        redirects = self.store.redirects()
        ref, seen = e.ref, {e.ref}
        while ref in redirects:
            into = next((i for i, frm, until in reversed(redirects[ref])
                         if (at is None and until is None) or (at is not None and frm <= at
                                                                 and (until is None or at < until))), None)
            if into is None or into in seen:
                break
            ref = into
            seen.add(ref)
        return e if ref == e.ref else (self.entity(ref) or e)

    def follow_ref(self, ref: str) -> str:
        """The ref ``ref`` resolves to now (itself unless it was merged into another entity)."""
        if ref not in self.store.redirects():
            return ref
        e = self.entity(ref)
        return self.follow(e).ref if e is not None else ref

    def _find(self, text: str, role: str) -> Entity:
        text = str(text).strip()
        if not text and not self.batch:
            raise UnknownEntity(f"empty {role}: expected an entity ref, name or alias")
        if ":" in text:
            e = self.entity(text.lower())
            if e is not None:
                return e
        refs = self._refs(text)
        if len(refs) == 1:
            e = self.entity(refs[0])
            if e is not None:
                return e
        if len(refs) > 1:
            raise AmbiguousEntity(f"{role} {text!r} is ambiguous; candidates: {', '.join(refs)}")
        if self.batch:
            raise UnknownEntity(f"unknown {role} {text!r}: expected an entity ref, name or alias defined in the "
                                "store or on an earlier line")
        raise UnknownEntity(f"unknown {role} {text!r}{self.hint(text)}")

    def hint(self, text: str) -> str:
        """What an unknown entity's message suggests: the refs of the names and aliases nearest by edit
        distance, then those that contain the text (``graphmem.model.words``)."""
        word = text.split(":")[-1] or text
        names = self.store.names_near(word, max_distance(word))
        refs = [r for k in near(word, names) for r in names[k]]
        refs += self.store.names_containing(word)
        refs = list(dict.fromkeys(refs))[:5]
        expected = "expected an existing entity ref, name or alias"
        return f"; {did_you_mean(refs)} ({expected})" if refs else f"; {expected}"

    def add(self, e: Entity) -> None:
        """An entity the batch adds (or merges), found by later lines before it is stored."""
        self.new[e.ref] = e
        for k in dict.fromkeys(x.lower() for x in (e.name, *e.aliases)):
            if e.ref not in self.new_names[k]:
                self.new_names[k].append(e.ref)


def entity_type(ontology: Ontology, text: str) -> str:
    """The ontology's spelling of an entity type named case-insensitively."""
    for t in ontology.entity_types:
        if t.lower() == str(text).strip().lower():
            return t
    raise BadInput(f"unknown entity type {text!r}; expected one of {', '.join(sorted(ontology.entity_types))}")


def predicate(registry: Registry, text: str) -> Predicate:
    """A predicate by name or alias (case-insensitive)."""
    key = str(text).strip().lower()
    name = key if key in registry.predicates else registry.aliases.get(key)
    if name is None:
        known = ", ".join(sorted(registry.predicates))
        hint = did_you_mean(list(dict.fromkeys(
            registry.aliases.get(c, c) for c in near(key, [*registry.predicates, *registry.aliases]))))
        raise UnknownPredicate(f"unknown predicate {text!r}; {hint} (known: {known})" if hint else
                               f"unknown predicate {text!r}; known: {known}")
    return registry.predicates[name]


# values ----------------------------------------------------------------------------

def check_subject_type(p: Predicate, subject: Entity) -> None:
    if subject.type not in p.subject_types:
        raise TypeMismatch(f"subject {subject.ref!r} is a {subject.type}; predicate {p.name!r} expects a "
                           + " or ".join(p.subject_types))


def check_object_type(ontology: Ontology, p: Predicate, stype: str, otype: str, oref: str) -> None:
    if otype not in p.object_entity_types:
        raise TypeMismatch(f"object {oref!r} is a {otype}; predicate {p.name!r} expects {p.object_description()}")
    assert p.edge is not None
    if (stype, otype) not in ontology.edge_types[p.edge].pairs:
        raise TypeMismatch(f"edge {p.edge} does not allow {stype} -> {otype} (object {oref!r})")


def literal(p: Predicate, raw: Any) -> Value:
    """A literal object checked and normalized for its predicate's type."""
    lt = p.literal_type
    bad = f"bad value {raw!r} for {p.name!r}: expected {p.object_description()}"
    if lt == "enum":
        v = str(raw).strip().lower() if isinstance(raw, str) else raw
        if v not in p.enum_values:
            raise BadInput(bad)
        return str(v)
    if lt == "int":
        if isinstance(raw, bool):
            raise BadInput(bad)
        try:
            return int(str(raw).strip())
        except ValueError:
            raise BadInput(bad) from None
    if lt == "float":
        if isinstance(raw, bool):
            raise BadInput(bad)
        try:
            f = float(str(raw).strip())
        except ValueError:
            raise BadInput(bad) from None
        if f != f or f in (float("inf"), float("-inf")):
            raise BadInput(bad)
        return f
    if lt == "bool":
        s = str(raw).strip().lower()
        if s in ("true", "yes", "1"):
            return True
        if s in ("false", "no", "0"):
            return False
        raise BadInput(bad)
    if lt == "date":
        return parse_date_value(str(raw), what=f"{p.name} date")
    if not isinstance(raw, str) or not raw.strip():
        raise BadInput(bad)
    text = clean(raw, f"value for {p.name!r}")
    if lt == "url":
        if not _URL_RE.match(text.strip()):
            raise BadInput(f"bad value {raw!r} for {p.name!r}: expected an http(s) URL")
        return text.strip()
    if lt == "string" and "\n" in text:
        raise BadInput(f"bad value {raw!r} for {p.name!r}: expected a single line (use a text predicate)")
    return text.strip() if lt == "string" else text


def trust_for(by: str, sources: tuple[str, ...], memo: Memo | None = None) -> str:
    """The asserter's default tier, capped by evidence (docs/semantics.md); a ``memo`` keeps it per
    asserter and kind of sources (none, record refs among them, URIs only)."""
    if memo is not None:
        if len(sources) == 1:  # most statements
            kinds = 2 if sources[0].startswith("rec:") else 1
        else:
            kinds = 2 if any(s.startswith("rec:") for s in sources) else 1 if sources else 0
        trust = memo.trust.get((by, kinds))
        if trust is None:
            trust = memo.trust[(by, kinds)] = trust_for(by, sources)
        return trust
    tier = DEFAULT_TRUST[by]
    cap = "low" if not sources else ("high" if any(s.startswith("rec:") for s in sources) else "medium")
    return tier if TRUST_RANK[tier] <= TRUST_RANK[cap] else cap


def entity_name(name: str) -> str:
    """A name checked (text with a letter or digit to make a ref from) and its spaces normalized."""
    if not isinstance(name, str) or not name.strip():
        raise BadInput(f"bad entity name {name!r}: expected a non-empty name")
    name = " ".join(clean(name, "entity name").split())
    if not slug(name):
        raise BadInput(f"bad entity name {name!r}: it has no letters or digits to make a ref from")
    return name


def alias_text(alias: Any) -> str:
    """An alias checked (non-empty text) and its spaces normalized."""
    if not isinstance(alias, str) or not alias.strip():
        raise BadInput(f"bad alias {alias!r}: expected a non-empty string")
    return " ".join(clean(alias, "alias").split())


def make_entity(ontology: Ontology, type_name: str, name: str, aliases: Iterable[str] = (),
                description: str = "") -> Entity:
    """An entity checked and normalized; its ref is ``prefix:slug``."""
    etype = entity_type(ontology, type_name)
    name = entity_name(name)
    s = slug(name)
    kept: list[str] = []
    for a in aliases:
        a = alias_text(a)
        if a.lower() != name.lower() and a not in kept:
            kept.append(a)
    if not isinstance(description, str):
        raise BadInput(f"bad description {description!r}: expected text")
    description = clean(description, "description")
    return Entity(f"{ontology.entity_types[etype].prefix}:{s}", etype, name, tuple(kept), description)


def kept_ref(e: Entity, ref: object) -> Entity:
    """``e`` under the ref an import line gives it (``"ref"`` on an ``entity`` line: an export writes the ref of
    an entity renamed since it was made, which its name no longer spells); the ref must be of ``e``'s type
    (its prefix) and a slug.

    >>> e = Entity("tool:kuzudb", "Tool", "KuzuDB", (), "")
    >>> kept_ref(e, "tool:kuzu").ref
    'tool:kuzu'
    >>> kept_ref(e, "project:kuzu")
    Traceback (most recent call last):
    graphmem.errors.BadInput: bad ref 'project:kuzu' for Tool 'KuzuDB': expected 'tool:' and a slug (lower-case letters, digits and -)
    """
    prefix = e.ref.split(":", 1)[0]
    rest = ref.split(":", 1)[1] if isinstance(ref, str) and ":" in ref else ""
    if not isinstance(ref, str) or not ref.startswith(prefix + ":") or not rest or slug(rest) != rest:
        raise BadInput(f"bad ref {ref!r} for {e.type} {e.name!r}: expected '{prefix}:' and a slug "
                       "(lower-case letters, digits and -)")
    return replace(e, ref=ref)


# statements ------------------------------------------------------------------------

class Retraction(NamedTuple):
    """A checked retraction: the fact, when it is withdrawn, and why."""

    fact: int
    at: int
    reason: str | None


def check_retraction(ref: str, fid: int, recorded_at: int | None, retracted_at: int | None, already: bool,
                     at: int, at_text: str | None, now: int, reason: str | None) -> Retraction:
    """The one retraction rule (docs/semantics.md): the fact exists (``recorded_at`` is known), is not
    retracted already, and is withdrawn neither before it was recorded nor in the future.

    ``retracted_at`` (when known) is named in the message; ``already`` covers a retraction not
    stored yet (an earlier line of the same import)."""
    if at > now:
        raise BadInput(f"bad at {at_text!r}: a retraction cannot lie in the future")
    if recorded_at is None:
        raise BadInput(f"unknown fact {ref!r}: no statement has that id")
    if retracted_at is not None:
        raise BadInput(f"fact {ref!r} is already retracted (at {format_instant(retracted_at)})")
    if already:
        raise BadInput(f"fact {ref!r} is already retracted")
    if at < recorded_at:
        raise BadInput(f"bad at {at_text if at_text is not None else format_instant(at)!r}: expected a time after "
                       "the fact was recorded")
    return Retraction(fid, at, None if reason is None else clean(reason, "reason"))


class Memo:
    """What a batch of statements (an import) checked once, looked up again by the lines that repeat it.

    An import names the same subjects, predicates, objects and sources on many lines: each distinct
    (subject, predicate) pair as written, each distinct object of a predicate and subject type and
    each URI source is resolved and checked once, as is each asserter's trust for a kind of sources,
    and later lines take the result (times are parsed once by ``parse_instant``'s own cache). Only
    results are kept, never errors, so a bad line is refused with its own message every time. The
    batch's resolver changes when an entity line adds or merges an entity (a name may then resolve
    otherwise): the importer calls ``clear`` then.

    >>> memo = Memo()
    >>> memo.heads["x"] = 1
    >>> memo.clear(); memo.heads
    {}
    """

    LIMIT = 4096  # entries a table holds (a few MB): lines of one subject tend to come together

    def __init__(self) -> None:
        self.heads: dict[tuple[str, str], tuple[Entity, Predicate]] = {}  # (subject, predicate) as written
        self.objects: dict[tuple[str, str, type, Any], tuple[Value, str, str | None]] = {}
        self.sources: dict[str, str] = {}  # a URI source as written -> as stored
        self.times: dict[str, int] = {}  # a time as written (not "now") -> its instant
        self.trust: dict[tuple[str, int], str] = {}  # (asserter, 0 no sources, 1 URIs only, 2 a record ref) -> trust

    @staticmethod
    def keep(table: dict[Any, Any], key: Any, value: Any) -> None:
        """``table[key] = value``, the table emptied first when it holds ``LIMIT`` entries (its memory bounded)."""
        if len(table) >= Memo.LIMIT:
            table.clear()
        table[key] = value

    def clear(self) -> None:
        """Forget everything (the batch's entities changed)."""
        self.heads.clear()
        self.objects.clear()  # (sources do not name entities)


class Checks:
    """Validation bound to a store's lookups, its ontology and registry: entities, statements and sources.

    ``known_records`` remembers record ids found once (records are never deleted, so a hit stays true).
    """

    def __init__(self, store: Lookups, ontology: Ontology, registry: Registry) -> None:
        self.store, self.ontology, self.registry = store, ontology, registry
        self.resolve = Resolver(store)
        self.known_records: set[int] = set()

    def entity_type(self, text: str) -> str:
        return entity_type(self.ontology, text)

    def predicate(self, text: str) -> Predicate:
        return predicate(self.registry, text)

    def make_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> Entity:
        return make_entity(self.ontology, type_name, name, aliases, description)

    def new_entity(self, type_name: str, name: str, aliases: Iterable[str] = (), description: str = "") -> Entity:
        """An entity to add; an existing ref is bad input."""
        e = self.make_entity(type_name, name, aliases, description)
        if self.store.entity(e.ref) is not None:
            raise BadInput(f"entity {e.ref!r} already exists")
        return e

    def sources(self, sources: Iterable[str], pending: dict[str, int] | None = None,
                memo: Memo | None = None) -> tuple[str, ...]:
        """Sources are record refs that exist (``rec:N``) or URIs.

        ``pending`` maps record refs written earlier in the same import to the ids they get; ``memo``
        keeps the URIs checked already.
        """
        out: list[str] = []
        known = self.known_records
        for s in sources:
            if memo is not None and type(s) is str:
                uri = memo.sources.get(s)
                if uri is None and not s.startswith(("rec:", " ")) and _URI_RE.match(s):
                    uri = clean(s, "source").strip()
                    if uri is s or _URI_RE.match(uri):  # (unchanged: matched already)
                        memo.keep(memo.sources, s, uri)
                    else:
                        uri = None
                if uri is not None:
                    if uri not in out:
                        out.append(uri)
                    continue
            s = clean(str(s), "source").strip()
            if s.startswith("rec:") and pending and s in pending:
                s = f"rec:{pending[s]}"
            elif s.startswith("rec:"):
                rid = parse_record_ref(s)
                if rid not in known and self.store.record(rid) is not None:
                    known.add(rid)
                if rid not in known:
                    raise BadInput(f"unknown record {s!r}: expected the ref of an ingested record (see 'graphmem search')")
                s = f"rec:{rid}"
            elif not _URI_RE.match(s):
                raise BadInput(f"bad source {s!r}: expected a record ref (rec:N) or a URI such as https://...")
            if s not in out:
                out.append(s)
        return tuple(out)

    def _head(self, subject: str, predicate: str, by: str, recorded_at: str | None, now: int,
              resolve: Callable[..., Entity], memo: Memo | None = None) -> tuple[int, Entity, Predicate]:
        """What every statement checks first: the asserter, the record time, the subject and the predicate
        (the last two once per distinct pair with a ``memo``)."""
        if by not in ASSERTERS:
            raise BadInput(f"bad asserter {by!r}: expected one of {', '.join(ASSERTERS)}")
        rec = parse_instant(recorded_at, now=now, what="recorded_at") if recorded_at is not None else now
        if rec > now:
            raise BadTime(f"bad recorded_at {recorded_at!r}: it lies in the future")
        if memo is not None and type(subject) is str and type(predicate) is str:
            pair = memo.heads.get((subject, predicate))
            if pair is not None:
                return rec, pair[0], pair[1]
        s = resolve(subject, role="subject")
        p = self.predicate(predicate)
        check_subject_type(p, s)
        if memo is not None and type(subject) is str and type(predicate) is str:
            memo.keep(memo.heads, (subject, predicate), (s, p))
        return rec, s, p

    def assertion(self, fid: int, subject: str, predicate: str, obj: Any, valid_from: str | None,
                  valid_to: str | None, sources: Iterable[str], by: str, recorded_at: str | None, now: int,
                  resolve: Callable[..., Entity] | None = None, records: dict[str, int] | None = None,
                  scope: str | None = None, memo: Memo | None = None) -> Statement:
        """An ``assert`` statement with id ``fid``, every part checked (``resolve``: a batch's resolver,
        ``memo``: its parts checked already)."""
        resolve = resolve or self.resolve
        rec, s, p = self._head(subject, predicate, by, recorded_at, now, resolve, memo)
        value: Value
        if memo is not None and not isinstance(obj, str | int | float | bool):
            memo = None  # not a key
        known = None if memo is None else memo.objects.get((p.name, s.type, type(obj), obj))
        if known is not None:
            value, kind, oname = known
        else:
            if p.entity_valued:
                o = resolve(str(obj), role=f"object of {p.name}")
                check_object_type(self.ontology, p, s.type, o.type, o.ref)
                value, kind, oname = o.ref, "entity", o.name
            else:
                value, kind, oname = literal(p, obj), "literal", None
            if memo is not None:
                memo.keep(memo.objects, (p.name, s.type, type(obj), obj), (value, kind, oname))
        vf = rec if valid_from is None else parse_instant(valid_from, now=now, what="valid_from")
        vt = None if valid_to is None else parse_instant(valid_to, now=now, what="valid_to")
        if vt is not None and vt <= vf:
            raise BadTime(f"bad valid_to {format_instant(vt)}: expected a time after valid_from {format_instant(vf)}")
        srcs = self.sources(sources, records, memo)
        return Statement(fid, "assert", s.ref, p.name, value, kind, vf, vt, rec, None, None, srcs, by,
                         trust_for(by, srcs, memo), oname, None if scope is None else one_scope(scope))

    def ending(self, fid: int, subject: str, predicate: str, obj: Any, at: str | None, sources: Iterable[str],
               by: str, recorded_at: str | None, now: int, resolve: Callable[..., Entity] | None = None,
               records: dict[str, int] | None = None, scope: str | None = None, memo: Memo | None = None) -> Statement:
        """An ``end`` statement with id ``fid``: what holds stops at ``at`` (``memo``: as for ``assertion``)."""
        resolve = resolve or self.resolve
        if at is None:
            raise BadTime("missing 'at': expected the time at which the value stops holding")
        rec, s, p = self._head(subject, predicate, by, recorded_at, now, resolve, memo)
        value: Value | None = None
        kind, oname = "", None
        if obj is not None:
            if p.entity_valued:
                o = resolve(str(obj), role=f"object of {p.name}")
                value, kind, oname = o.ref, "entity", o.name
            else:
                value, kind = literal(p, obj), "literal"
        t = parse_instant(at, now=now, what="at")
        srcs = self.sources(sources, records, memo)
        return Statement(fid, "end", s.ref, p.name, value, kind, t, None, rec, None, None, srcs, by,
                         trust_for(by, srcs, memo), oname, one_scope(scope))

    def citation(self, fid: int, ref: str, target: Statement | None, sources: Iterable[str], note: str | None,
                 by: str, recorded_at: str | None, now: int, records: dict[str, int] | None = None,
                 scopes: tuple[str, ...] | None = None) -> Statement:
        """A ``cite`` statement with id ``fid``: ``sources`` attached to the assertion ``target`` (``ref`` as the
        caller wrote it), which is neither an end, a cite, nor retracted (see also ``not_attached``)."""
        if by not in ASSERTERS:
            raise BadInput(f"bad asserter {by!r}: expected one of {', '.join(ASSERTERS)}")
        if target is None:
            raise BadInput(f"unknown fact {ref!r}: no statement has that id")
        if not in_scopes(target.scope, scopes):
            raise BadInput(f"unknown fact {ref!r} in scope {', '.join(scopes or ())}: no assertion of "
                           f"{'that scope' if len(scopes or ()) == 1 else 'those scopes'} has that id "
                           "(a cite carries the scope of the assertion it supports)")
        if target.op != "assert":
            raise BadInput(f"fact {ref!r} is {'an end' if target.op == 'end' else 'a cite'}: expected an assertion "
                           "(only what an assertion says can be cited)")
        rec = parse_instant(recorded_at, now=now, what="recorded_at") if recorded_at is not None else now
        if rec > now:
            raise BadTime(f"bad recorded_at {recorded_at!r}: it lies in the future")
        if rec < target.recorded_at:
            raise BadTime(f"bad recorded_at {format_instant(rec)}: expected a time after {ref} was recorded "
                          f"({format_instant(target.recorded_at)})")
        if target.retracted_at is not None and target.retracted_at <= rec:
            raise BadInput(f"fact {ref!r} is retracted (at {format_instant(target.retracted_at)}): expected an "
                           "assertion that is not withdrawn")
        srcs = self.sources(sources, records)
        if not srcs:
            raise BadInput("missing source: expected at least one record ref (rec:N) or URI to attach")
        text: str | None = None
        if note is not None:
            if not isinstance(note, str):
                raise BadInput(f"bad note {note!r}: expected text")
            text = clean(note, "note").strip() or None
        return Statement(fid, "cite", target.subject, target.predicate, text, "literal" if text else "",
                         target.id, None, rec, None, None, srcs, by, trust_for(by, srcs), None, target.scope)


def not_attached(ref: str, cite: Statement, attached: Iterable[str]) -> None:
    """A cite adds only sources its assertion does not have yet (``attached``: its own and its cites')."""
    have = set(attached)
    again = [x for x in cite.sources if x in have]
    if again:
        raise BadInput(f"fact {ref!r} already cites {', '.join(again)}: expected a source it does not have yet")
