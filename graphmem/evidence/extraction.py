"""Rule-based extraction with spaCy (SPEC 8): mentions and proposed assertions, no model needed.

A blank English pipeline with a sentencizer; a PhraseMatcher over the store's entity names and aliases; a PhraseMatcher
over predicate trigger phrases (the registry's aliases plus the inflections below); and a few rules for common phrasings.
Clauses that negate, hedge or ask are skipped. spaCy is imported here only, so commands that do not extract never pay for it.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from graphmem.evidence.dates import find_date
from graphmem.evidence.plans import PlanProposal, propose_plans
from graphmem.model import Entity
from graphmem.model.times import format_instant, to_us
from graphmem.ontology.schema import Ontology, Predicate, Registry

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

# Trigger phrases beyond the registry's aliases: inflections a lemmatizer would
# give (a blank pipeline has no lemma tables) and phrasings seen in team notes.
EXTRA_TRIGGERS: dict[str, tuple[str, ...]] = {
    "uses": ("uses", "use", "using", "used", "is built on", "built on", "runs on", "run on", "now runs on",
             "running on", "relies on", "rely on", "adopted", "adopts", "switched to", "moved to", "migrated to",
             "is on", "is now on", "started using", "keeps", "stores", "is using", "cut over to"),
    "blocked_by": ("blocked by", "is blocked by", "waiting on", "waits on", "is waiting on", "held up by", "stuck on"),
    "depends_on": ("depends on", "depend on", "requires", "require", "needs", "need"),
    "evaluates": ("evaluating", "evaluates", "is evaluating", "has been evaluating", "trying", "trying out", "testing",
                  "prototyping with", "is prototyping with", "trialling", "piloting"),
    "owner": ("owned by", "led by", "maintained by", "is owned by", "is led by", "is maintained by"),
    "replaces": ("replaces", "replaced", "supersedes", "superseded"),
    "relates_to": ("is about", "is all about", "related to", "relates to", "is a", "is an"),
    "decides": ("decided", "decides", "settles", "chose"),
}
# Active phrasings whose grammatical subject is the predicate's object: "Maya owns Atlas".
REVERSE_TRIGGERS: dict[str, tuple[str, ...]] = {
    "owner": ("owns", "leads", "maintains", "took over", "is the owner of", "is the lead of", "runs"),
}
SWITCH_VERBS = {"switched", "switch", "switching", "moved", "move", "moving", "migrated", "migrate", "migrating",
                "cut"}
SWITCH_TO = {"to", "onto"}
SWITCH_FROM = {"from", "off"}
# "X replaced A with B", "X swapped A for B": X stops using A and uses B
REPLACE_VERBS = {"replaced", "swapped", "exchanged"}
REPLACE_WITH = {"with", "for", "by"}
# "X dropped A": X stops using A
END_VERBS = {"dropped", "removed", "retired", "ditched", "abandoned", "decommissioned", "phased"}
# a clause that starts with one of these (no subject before it) asks for something to be done
IMPERATIVES = {"let", "move", "migrate", "switch", "use", "adopt", "replace", "drop", "add", "try", "consider", "evaluate",
               "swap", "cut"}
NEGATIONS = {"not", "n't", "never", "no", "nobody", "nothing", "neither", "nor", "without", "cannot", "stopped",
             "longer", "isn't", "aren't", "wasn't", "don't", "doesn't", "didn't", "won't"}
HEDGES = {"if", "might", "may", "could", "would", "should", "maybe", "perhaps", "possibly", "whether", "consider",
          "considering", "plan", "planning", "plans", "want", "wants", "wish", "hope", "unless", "suppose", "idea",
          "proposal", "propose", "proposed", "suggest", "suggests", "unsure", "doubt", "wonder", "let's", "tbd",
          "probably", "rumour", "rumor", "going", "will", "'ll", "gonna", "think", "thinks", "believe", "believes",
          "guess", "expect", "expects", "soon", "next", "until", "once", "scheduled", "goal", "aims", "aim",
          "eventually", "expected", "seems", "seem", "seemed", "apparently", "unconfirmed", "unverified", "heard",
          "claimed", "claims", "claim", "suggested", "wonders", "wondering", "asked", "ignore", "disregard",
          "allegedly", "supposedly", "intend", "intends", "intended", "hopefully", "someday", "todo"}
# hedges that count anywhere in their clause, also after what is proposed ("Atlas uses Kuzu, I guess")
TRAILING_HEDGES = {"maybe", "perhaps", "probably", "possibly", "guess", "unconfirmed", "unverified", "apparently",
                   "allegedly", "supposedly", "rumour", "rumor", "tbd"}
# a clause with one of these takes back what the clauses before it in the sentence said
TAKE_BACKS = {"wrong"}
COPULAS = {"is", "are", "was", "were", "'s", "now", "been", "be", "went", "goes", "remains", "stays", "marked", "set",
           "moved", "->", "status", "to", "changed", "again", "officially", "back", "as", "of", "finally", "has"}
CLAUSE_BREAKS = {";", ":", "—", "–", "|"}
# markup tags ("<p>", "</b>", "<maya>") read as spaces of the same length, so offsets stay the text's own
_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,40}>")

@dataclass(frozen=True)
class Mention:
    ref: str
    name: str
    span: tuple[int, int]
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "name": self.name, "span": list(self.span), "text": self.text, "rule": "name-or-alias"}


@dataclass(frozen=True)
class Proposal:
    subject: str
    predicate: str
    object: Any
    object_kind: str
    valid_from: int
    span: tuple[int, int]
    rule: str
    evidence: str | None = None

    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, str(self.object))

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "predicate": self.predicate, "object": self.object,
                "object_kind": self.object_kind, "valid_from": format_instant(self.valid_from),
                "evidence": self.evidence, "span": list(self.span), "rule": self.rule}


@dataclass(frozen=True)
class EntityProposal:
    type: str
    name: str
    span: tuple[int, int]
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "span": list(self.span), "rule": self.rule}


@dataclass(frozen=True)
class Extraction:
    """What one text gives: its mentions, the assertions it states, the new entities it names, what
    it says stopped holding (``ends``: "X moved from A to B", "X no longer uses A") and what was left
    out (negated, hedged, asked, taken back)."""

    mentions: tuple[Mention, ...]
    assertions: tuple[Proposal, ...]
    entities: tuple[EntityProposal, ...] = ()
    skipped: tuple[dict[str, Any], ...] = field(default=())
    ends: tuple[Proposal, ...] = ()
    plans: tuple[PlanProposal, ...] = ()


@dataclass
class _Ment:
    start: int  # token indices [start, end)
    end: int
    ref: str
    type: str


def hedge_reason(window: Span, clause: Span, named: AbstractSet[int] = frozenset()) -> str | None:
    """Why what ``window`` (the clause up to the end of a proposal) says is not stated as fact:
    a question, a hedge (or a request: a clause that starts with a verb such as "move", unless the
    word begins a name: ``named`` holds the token positions inside names), a negation."""
    if any(t.text == "?" for t in clause.sent):
        return "question"
    if any(t.lower_ in TRAILING_HEDGES for t in clause):
        return "hedge"
    words = [t.lower_ for t in window]
    first = next((t for t in clause if t.is_alpha), None)
    if first is not None and first.lower_ in IMPERATIVES and first.i not in named:
        return "hedge"
    negated = False
    for i, w in enumerate(words):
        if w in NEGATIONS or w.endswith("n't"):
            negated = True
        elif w in HEDGES:
            if w == "going" and not (i + 1 < len(words) and words[i + 1] == "to"):
                continue
            return "hedge"
    return "negation" if negated else None

def says_stopped(window: Span, clause: Span) -> bool:
    """A negation that says something stopped holding: "no longer", "stopped", "not ... anymore"."""
    words = [t.lower_ for t in window]
    if "never" in words:
        return False
    rest = [t.lower_ for t in clause]
    return ("longer" in words and "no" in words) or "stopped" in words or "anymore" in rest or (
        "any" in rest and "more" in rest)

def labelled_wish(clauses: list[Span]) -> str | None:
    """A sentence labelled as a wish ("Proposal: ...", "Next sprint: ...", "TODO: ...") states no fact."""
    if len(clauses) < 2 or clauses[0][-1].text != ":":
        return None
    words = [t.lower_ for t in clauses[0] if t.is_alpha]
    if 0 < len(words) <= 3 and any(w in HEDGES or w in TRAILING_HEDGES or w in ("idea", "plan", "wishlist")
                                   for w in words):
        return "hedge"
    return None


class Extractor:
    """Built once per store and process from its entities and the registry (``Memory.extractor()``).

    Attributes
    ----------
    ontology, registry, entities : Ontology, Registry, dict of str to Entity
        What it proposes for: entity types, predicates, and the entities it finds, by ref.

    Examples
    --------
    >>> import tempfile, graphmem
    >>> with graphmem.open(tempfile.mkdtemp(), create=True) as m:
    ...     _ = m.add_entity("Project", "Atlas"), m.add_entity("Tool", "Kuzu")
    ...     [(p.subject, p.object) for p in m.extractor().extract("Atlas uses Kuzu.", default_time=0).assertions]
    [('project:atlas', 'tool:kuzu')]
    """

    def __init__(self, ontology: Ontology, registry: Registry, entities: list[Entity]) -> None:
        import spacy
        from spacy.matcher import PhraseMatcher

        self.ontology = ontology
        self.registry = registry
        self.nlp = spacy.blank("en")
        self.nlp.add_pipe("sentencizer")
        self.entities = {e.ref: e for e in entities}
        self._ents = PhraseMatcher(self.nlp.vocab, attr="LOWER")
        for e in entities:
            names = list(dict.fromkeys([e.name, *e.aliases]))
            self._ents.add(e.ref, [self.nlp.make_doc(n) for n in names])
        self._triggers = PhraseMatcher(self.nlp.vocab, attr="LOWER")
        self._trigger_info: dict[str, tuple[str, bool]] = {}
        phrases: dict[str, tuple[str, bool]] = {}
        for alias, pred in registry.aliases.items():
            if registry.predicates[pred].entity_valued:
                phrases.setdefault(alias, (pred, False))
        for pred, extra in EXTRA_TRIGGERS.items():
            if pred in registry.predicates:
                for ph in extra:
                    phrases[ph] = (pred, False)
        for pred, extra in REVERSE_TRIGGERS.items():
            if pred in registry.predicates:
                for ph in extra:
                    phrases[ph] = (pred, True)
        for ph, info in phrases.items():
            key = f"T{len(self._trigger_info)}"
            self._trigger_info[key] = info
            self._triggers.add(key, [self.nlp.make_doc(ph)])
        self.status = registry.predicates.get("status")
        self.priority = registry.predicates.get("priority")

    def etype(self, ref: str) -> str:
        """The entity type of ``ref`` by its prefix (``?`` when the prefix is unknown).

        Returns
        -------
        str
        """
        return self.ontology.type_for_prefix(ref.partition(":")[0]) or "?"

    def extract(self, text: str, *, default_time: int, evidence: str | None = None) -> Extraction:
        """Mentions and proposals in ``text``, dated ``default_time`` (microseconds) unless a sentence names its own date.

        Returns
        -------
        Extraction
        """
        doc = self.nlp(_TAG.sub(lambda m: " " * len(m.group()), text))
        mentions = self._mentions(doc)
        triggers = [(self.nlp.vocab.strings[k], s, e) for k, s, e in self._triggers(doc)]
        out_m = tuple(sorted({(m.ref, doc[m.start:m.end].start_char, doc[m.start:m.end].end_char): Mention(
            m.ref, self.entities[m.ref].name, (doc[m.start:m.end].start_char, doc[m.start:m.end].end_char),
            doc[m.start:m.end].text) for m in mentions}.values(), key=lambda x: (x.span, x.ref)))
        props: dict[tuple[str, str, str], Proposal] = {}
        ends: dict[tuple[str, str, str], Proposal] = {}
        new_ents: dict[str, EntityProposal] = {}
        skipped: list[dict[str, Any]] = []
        named = {i for m in mentions for i in range(m.start, m.end)}
        for sent in doc.sents:
            date = find_date(sent.text)
            when = to_us(_dt.datetime.fromisoformat(date[0]).replace(tzinfo=_dt.UTC)) if date else default_time
            clauses = self._clauses(sent)
            labelled = labelled_wish(clauses)
            taken_back = max((i for i, c in enumerate(clauses) if any(t.lower_ in TAKE_BACKS for t in c)), default=-1)
            for ci, clause in enumerate(clauses):
                found, ended = self._clause(doc, clause, mentions, triggers, when, evidence, new_ents)
                for p, is_end in [(p, False) for p in found] + [(p, True) for p in ended]:
                    # a negation or hedge counts when it comes before the end of what is proposed
                    end_tok = next((t.i for t in clause if t.idx >= p.span[1]), clause.end)
                    reason = labelled or ("taken back" if ci < taken_back else None) or hedge_reason(
                        doc[clause.start:end_tok], clause, named)
                    if reason == "negation" and not is_end and says_stopped(doc[clause.start:end_tok], clause):
                        reason, is_end = None, True  # "X no longer uses A", "X stopped using A": A ends
                    if reason:
                        skipped.append({"text": clause.text, "reason": reason, "would_propose": [p.key()]})
                    elif is_end:
                        ends.setdefault(p.key(), replace(p, rule=p.rule if p.rule.startswith("end") else "end:" + p.rule))
                    else:
                        props.setdefault(p.key(), p)
        for k in ends:
            props.pop(k, None)  # a sentence that ends A does not also assert it
        return Extraction(out_m, tuple(props.values()), tuple(e for e in new_ents.values()
                                                               if not self._known_name(e.name)),
                          tuple(skipped), tuple(ends.values()),
                          propose_plans(doc, [(m.start, m.ref) for m in mentions], self._clauses, default_time,
                                        evidence, NEGATIONS))

    def _known_name(self, name: str) -> bool:
        return bool(self._ents(self.nlp.make_doc(name)))

    def _mentions(self, doc: Doc) -> list[_Ment]:
        out = []
        for match_id, start, end in self._ents(doc):
            ref = self.nlp.vocab.strings[match_id]
            out.append(_Ment(start, end, ref, self.etype(ref)))
        out.sort(key=lambda m: (m.start, -(m.end - m.start), m.ref))
        return out

    @staticmethod
    def _clauses(sent: Span) -> list[Span]:
        """Split a sentence at ; : — and at ', but' so a negation reaches only its own clause."""
        cuts = [sent.start]
        for tok in sent:
            if tok.text in CLAUSE_BREAKS and tok.i > sent.start:
                cuts.append(tok.i + 1)
            elif tok.lower_ == "but" and tok.i > sent.start and tok.nbor(-1).text == ",":
                cuts.append(tok.i)
        cuts.append(sent.end)
        doc = sent.doc
        return [doc[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]

    def _clause(self, doc: Doc, clause: Span, mentions: list[_Ment], triggers: list[tuple[str, int, int]],
                when: int, evidence: str | None, new_ents: dict[str, EntityProposal]
                ) -> tuple[list[Proposal], list[Proposal]]:
        """The assertions and the ends one clause proposes."""
        ms = [m for m in mentions if m.start >= clause.start and m.end <= clause.end]
        # a name inside a longer name ("Kuzu" in "Adopt Kuzu for the graph store") is not a party to a statement
        ms = [m for m in ms if not any(o is not m and o.start <= m.start and m.end <= o.end
                                       and (o.end - o.start) > (m.end - m.start) for o in ms)]
        found: list[Proposal] = []
        ended: list[Proposal] = []
        from spacy.util import filter_spans
        spans = filter_spans([doc[s:e] for _, s, e in triggers if s >= clause.start and e <= clause.end])
        keys = {(s, e): k for k, s, e in triggers}
        verbs = sorted([(sp.start, sp.end) for sp in spans]
                       + [(t.i, t.i + 1) for t in clause if t.lower_ in SWITCH_VERBS | REPLACE_VERBS | END_VERBS])
        for span in spans:
            pred_name, reverse = self._trigger_info[keys[(span.start, span.end)]]
            p = self.registry.predicates[pred_name]
            inside = [m for m in ms if not (m.end <= span.start or m.start >= span.end)]
            if inside:
                continue  # the phrase is part of an entity's name ("Use Neo4j for the graph store")
            before = [m for m in ms if m.end <= span.start]
            after = [m for m in ms if m.start >= span.end]
            subj_side = after if reverse else self._subjects(doc, before, verbs, span.start)
            obj_side = before[::-1] if reverse else after
            # the nearest subject that has a fitting object ("Tidewater is built on DuckDB and depends on Ledger")
            pair = next(((sm, om) for sm in subj_side if sm.type in p.subject_types
                         for om in obj_side
                         if self._fits(p, sm.type, om.type) and om.ref != sm.ref), None)
            if pair is None:
                if any(m.type in p.subject_types for m in subj_side):
                    self._propose_entity(doc, span, p, clause, reverse, new_ents, ms)
                continue
            subj, obj = pair
            rule = f"{'reverse' if reverse else 'phrase'}:{span.text.lower()}"
            subjects = [subj] if reverse else [subj, *self._coordinated_before(doc, subj, before, verbs)]
            objects = [obj] if reverse else [obj, *self._coordinated(doc, obj, after, clause)]
            for i, sm in enumerate(subjects):  # "Beacon and Anchor use Redis", "uses FastAPI and Redis"
                for j, om in enumerate(objects):
                    if sm.type in p.subject_types and self._fits(p, sm.type, om.type) and om.ref != sm.ref:
                        found.append(self._proposal(doc, sm, om.ref, "entity", p, when, evidence, span, om,
                                                    rule + ("+and" if i or j else "")))
        switched, switch_ends = self._switch(doc, clause, ms, verbs, when, evidence, new_ents)
        found.extend(switched)
        ended.extend(switch_ends)
        replaced, replace_ends = self._replace(doc, clause, ms, verbs, when, evidence)
        found.extend(replaced)
        ended.extend(replace_ends)
        ended.extend(self._dropped(doc, clause, ms, verbs, when, evidence))
        instead = self._instead_of(doc, clause, ms, found, when, evidence)
        if instead:  # "X is now on B instead of A" says what X uses, not that B replaces A everywhere
            found = [f for f in found if f.rule != "phrase:instead of"]
        ended.extend(instead)
        found.extend(self._enum_rule(doc, clause, ms, when, evidence, self.status, "status"))
        found.extend(self._enum_rule(doc, clause, ms, when, evidence, self.priority, "priority"))
        return found, ended

    @staticmethod
    def _is_object(doc: Doc, m: _Ment, verbs: list[tuple[int, int]], before: int) -> bool:
        """``m`` is the object of an earlier verb and joined by "and" to the verb at ``before``
        ("Ferry is built on SQLite and keeps its cache in Redis": SQLite is not who keeps the cache)."""
        follows_verb = any(e <= m.start and all(not t.is_alpha or t.lower_ in COPULAS or t.lower_ in ("its", "the")
                                                for t in doc[e:m.start]) for _, e in verbs)
        gap = {t.lower_ for t in doc[m.end:before]}
        return follows_verb and bool(gap & {"and", "&"})

    def _subjects(self, doc: Doc, before: list[_Ment], verbs: list[tuple[int, int]], at: int) -> list[_Ment]:
        """The subject candidates for the verb at ``at``, nearest first, leaving out earlier verbs' objects."""
        return [m for m in before[::-1] if not self._is_object(doc, m, verbs, at)]

    def _coordinated_before(self, doc: Doc, subj: _Ment, before: list[_Ment], verbs: list[tuple[int, int]]
                            ) -> list[_Ment]:
        """Subjects of the same type joined to ``subj`` by commas and "and" before it: "Beacon and Anchor use"."""
        out, first = [], subj
        for m in reversed([b for b in before if b.end <= subj.start]):
            gap = [t.lower_ for t in doc[m.end:first.start]]
            if m.type != subj.type or not gap or not all(w in (",", "and", "&", "/") for w in gap):
                break
            if any(e <= m.start and all(not t.is_alpha for t in doc[e:m.start]) for _, e in verbs):
                break  # an earlier verb's object ("Anchor uses Ledger and Beacon uses Redis")
            out.append(m)
            first = m
        return out

    @staticmethod
    def _coordinated(doc: Doc, first: _Ment, after: list[_Ment], clause: Span) -> list[_Ment]:
        """Mentions joined to ``first`` by commas and 'and' / '&' / '/'."""
        out, last = [], first
        for m in after:
            if m.start < last.end:
                continue
            gap = [t.lower_ for t in doc[last.end:m.start]]
            if gap and all(w in (",", "and", "&", "/", "plus") for w in gap):
                out.append(m)
                last = m
            elif m.start > last.end:
                break
        return out

    def _fits(self, p: Predicate, stype: str, otype: str) -> bool:
        if otype not in p.object_entity_types or p.edge is None:
            return False
        return (stype, otype) in self.ontology.edge_types[p.edge].pairs

    def _proposal(self, doc: Doc, subj: _Ment, obj: Any, kind: str, p: Predicate, when: int, evidence: str | None,
                  trigger: Span, obj_m: _Ment | None, rule: str) -> Proposal:
        toks = [subj.start, subj.end, trigger.start, trigger.end] + ([obj_m.start, obj_m.end] if obj_m else [])
        a, b = min(toks), max(toks)
        return Proposal(subj.ref, p.name, obj, kind, when, (doc[a].idx, doc[b - 1].idx + len(doc[b - 1].text)),
                        rule, evidence)

    def _uses_subject(self, doc: Doc, ms: list[_Ment], verbs: list[tuple[int, int]], at: int,
                      p: Predicate) -> _Ment | None:
        return next((m for m in self._subjects(doc, [m for m in ms if m.end <= at], verbs, at)
                     if m.type in p.subject_types), None)

    def _switch(self, doc: Doc, clause: Span, ms: list[_Ment], verbs: list[tuple[int, int]], when: int,
                evidence: str | None, new_ents: dict[str, EntityProposal]) -> tuple[list[Proposal], list[Proposal]]:
        """'X switched (from A) to B', 'X cut over from A to B', 'X migrated off A onto B': X uses B, and A ends."""
        p = self.registry.predicates.get("uses")
        if p is None:
            return [], []
        out, ends = [], []
        for tok in clause:
            if tok.lower_ not in SWITCH_VERBS:
                continue
            if tok.lower_ == "cut" and (tok.i + 1 >= len(doc) or doc[tok.i + 1].lower_ != "over"):
                continue  # "cut" alone is not a switch; "cut over" is
            to = next((t for t in doc[tok.i + 1:clause.end] if t.lower_ in SWITCH_TO), None)
            if to is None:
                continue
            subj = self._uses_subject(doc, ms, verbs, tok.i, p)
            if subj is None:
                subj = next((m for m in ms if tok.i < m.start < to.i and m.type in p.subject_types
                             and not any(f.lower_ in SWITCH_FROM for f in doc[tok.i:m.start])), None)
            if subj is None:
                continue
            obj = next((m for m in ms if m.start > to.i and self._fits(p, subj.type, m.type)), None)
            trigger = doc[tok.i:to.i + 1]
            if obj is None:
                self._propose_entity(doc, trigger, p, clause, False, new_ents, ms)
                continue
            out.append(self._proposal(doc, subj, obj.ref, "entity", p, when, evidence, trigger, obj, "switch-from-to"))
            old = next((m for m in ms if tok.i < m.start < to.i and m.ref not in (subj.ref, obj.ref)
                        and self._fits(p, subj.type, m.type)
                        and any(f.lower_ in SWITCH_FROM for f in doc[tok.i:m.start])), None)
            if old is not None:
                ends.append(self._proposal(doc, subj, old.ref, "entity", p, when, evidence, trigger, old,
                                           "end:switch-from"))
        return out, ends

    def _replace(self, doc: Doc, clause: Span, ms: list[_Ment], verbs: list[tuple[int, int]], when: int,
                 evidence: str | None) -> tuple[list[Proposal], list[Proposal]]:
        """'X replaced A with B', 'X swapped A for B': X uses B, and A ends (X being what uses them)."""
        p = self.registry.predicates.get("uses")
        if p is None:
            return [], []
        out, ends = [], []
        for tok in clause:
            if tok.lower_ not in REPLACE_VERBS:
                continue
            subj = self._uses_subject(doc, ms, verbs, tok.i, p)
            if subj is None or subj.type == "Tool":  # "Postgres replaced Redis": a tool replaces a tool
                continue
            old = next((m for m in ms if m.start >= tok.i + 1), None)
            if old is None or not self._fits(p, subj.type, old.type):
                continue
            with_ = next((t for t in doc[old.end:clause.end] if t.lower_ in REPLACE_WITH), None)
            new = next((m for m in ms if with_ is not None and m.start > with_.i), None)
            if with_ is None or new is None or not self._fits(p, subj.type, new.type) or new.ref == old.ref:
                continue
            trigger = doc[tok.i:with_.i + 1]
            out.append(self._proposal(doc, subj, new.ref, "entity", p, when, evidence, trigger, new, "replace-with"))
            ends.append(self._proposal(doc, subj, old.ref, "entity", p, when, evidence, trigger, old, "end:replace"))
        return out, ends

    def _dropped(self, doc: Doc, clause: Span, ms: list[_Ment], verbs: list[tuple[int, int]], when: int,
                 evidence: str | None) -> list[Proposal]:
        """'X dropped A', 'X retired A': A ends for X."""
        p = self.registry.predicates.get("uses")
        if p is None:
            return []
        ends = []
        for tok in clause:
            if tok.lower_ not in END_VERBS:
                continue
            subj = self._uses_subject(doc, ms, verbs, tok.i, p)
            old = next((m for m in ms if m.start > tok.i), None)
            if subj is not None and old is not None and self._fits(p, subj.type, old.type):
                ends.append(self._proposal(doc, subj, old.ref, "entity", p, when, evidence, doc[tok.i:tok.i + 1],
                                           old, "end:dropped"))
        return ends

    def _instead_of(self, doc: Doc, clause: Span, ms: list[_Ment], found: list[Proposal], when: int,
                    evidence: str | None) -> list[Proposal]:
        """'X is now on B instead of A': A ends for X."""
        ends = []
        for tok in clause:
            if tok.lower_ != "instead" or tok.i + 1 >= len(doc) or doc[tok.i + 1].lower_ != "of":
                continue
            old = next((m for m in ms if m.start >= tok.i + 2), None)
            prior = [f for f in found if f.predicate == "uses" and f.span[1] <= tok.idx]
            if old is None or not prior:
                continue
            last = prior[-1]
            subj = next(m for m in ms if m.ref == last.subject)
            p = self.registry.predicates["uses"]
            if self._fits(p, subj.type, old.type) and old.ref != last.object:
                ends.append(self._proposal(doc, subj, old.ref, "entity", p, when, evidence, doc[tok.i:tok.i + 2],
                                           old, "end:instead-of"))
        return ends

    def _enum_rule(self, doc: Doc, clause: Span, ms: list[_Ment], when: int, evidence: str | None,
                   p: Predicate | None, label: str) -> list[Proposal]:
        """'X is (now) paused', 'X status -> done', 'X priority changed to p1', 'X is p2'."""
        if p is None:
            return []
        out = []
        values = set(p.enum_values)
        for tok in clause:
            v = tok.lower_
            if v not in values:
                continue
            if v == "blocked" and tok.i + 1 < len(doc) and doc[tok.i + 1].lower_ == "by":
                continue
            subj = next((m for m in reversed(ms) if m.end <= tok.i and m.type in p.subject_types), None)
            if subj is None:
                continue
            between = [t.lower_ for t in doc[subj.end:tok.i]]
            if len(between) > 6 or not between or not all(w in COPULAS or w == label or w in ("-", ">", "now")
                                                          for w in between):
                continue
            out.append(Proposal(subj.ref, p.name, v, "literal", when,
                                (doc[subj.start].idx, tok.idx + len(tok.text)), f"{label}-copula", evidence))
        return out

    def _propose_entity(self, doc: Doc, trigger: Span, p: Predicate, clause: Span, reverse: bool,
                        new_ents: dict[str, EntityProposal], ms: list[_Ment]) -> None:
        """An unknown capitalized name right after a trigger: propose it as a new entity (never a name an
        entity already has: "Finch replaced Redis with ..." names the existing Redis)."""
        if reverse or not p.object_entity_types:
            return
        toks = []
        for t in doc[trigger.end:clause.end]:
            if t.is_title or (t.text[:1].isupper() and any(c.isalpha() for c in t.text)):
                toks.append(t)
            else:
                break
        if not toks or any(m.start <= toks[-1].i and toks[0].i < m.end for m in ms):
            return
        name = doc[toks[0].i:toks[-1].i + 1].text
        new_ents.setdefault(name.lower(), EntityProposal(p.object_entity_types[0], name,
                                                         (toks[0].idx, toks[-1].idx + len(toks[-1].text)),
                                                         f"unknown-after:{trigger.text.lower()}"))
