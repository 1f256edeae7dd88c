"""Plans in text: intended future work ("we plan to move Atlas to Kuzu by 1 March") proposed as a
plan with its due time, never as a fact (docs/lifecycle.md). Extraction calls ``propose_plans``
with the sentences it has parsed."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphmem.evidence.dates import DUE_MONTH, due_time
from graphmem.model.times import format_instant

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

# what marks a sentence as intended future work (a plan), and what makes it only a thought (not a plan)
PLAN_WORDS = {"plan", "plans", "planning", "planned", "will", "'ll", "scheduled", "intend", "intends", "aim", "aims",
              "goal", "roadmap", "todo", "let's", "want", "wants", "expected"}
PLAN_PHRASES = (("going", "to"), ("let", "'s"), ("next", "sprint"), ("next", "quarter"), ("next", "week"), ("next", "month"),
                ("next", "year"))
NOT_PLANS = {"if", "would", "could", "might", "maybe", "perhaps", "wonder", "wondering", "unless", "whether",
             "rumour", "rumor", "heard", "claimed", "claims"}


@dataclass(frozen=True)
class PlanProposal:
    """Intended future work a sentence states ("we plan to move Atlas to Kuzu by 1 March"): a plan,
    never a fact (docs/lifecycle.md); ``due`` when the sentence names a date or month."""

    text: str
    due: int | None
    mentions: tuple[str, ...]
    span: tuple[int, int]
    rule: str
    evidence: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "due": format_instant(self.due), "mentions": list(self.mentions),
                "span": list(self.span), "rule": self.rule, "evidence": self.evidence}


def plan_marker(sent: Span, negations: AbstractSet[str]) -> str | None:
    """The word that makes ``sent`` a plan, or None: not a question, negation or mere thought."""
    words = [t.lower_ for t in sent]
    if "?" in words or any(w in NOT_PLANS for w in words) or any(w in negations or w.endswith("n't") for w in words):
        return None
    for a, b in PLAN_PHRASES:
        if any(words[i] == a and words[i + 1] == b for i in range(len(words) - 1)):
            return f"{a} {b}"
    marker = next((w for w in words if w in PLAN_WORDS), None)
    if marker is None and DUE_MONTH.search(sent.text) is None and not re.search(r"\bby\s+\d{4}-\d{2}-\d{2}\b",
                                                                                  sent.text):
        return None
    return marker or "by-date"


def propose_plans(doc: Doc, mentions: list[tuple[int, str]], clauses: Callable[[Span], list[Span]],
                  default_time: int, evidence: str | None, negations: AbstractSet[str]) -> tuple[PlanProposal, ...]:
    """The sentences of ``doc`` that state intended future work about a known entity (``mentions``:
    (token index, ref)), as plans: the clause that says it ("X uses A; we plan to move it to B"), or
    the whole sentence when that clause names no entity (a label: "Next sprint: X adopts A")."""
    out = []
    for sent in doc.sents:
        in_sent = tuple(dict.fromkeys(ref for i, ref in mentions if sent.start <= i < sent.end))
        if not in_sent or plan_marker(sent, negations) is None:
            continue
        for clause in clauses(sent):
            marker = plan_marker(clause, negations)
            if marker is None:
                continue
            refs = tuple(dict.fromkeys(ref for i, ref in mentions if clause.start <= i < clause.end))
            part = clause if refs else sent
            text = " ".join(part.text.split()).strip(" ;:—–|")
            out.append(PlanProposal(text, due_time(part.text, default_time), refs or in_sent,
                                    (part.start_char, part.end_char), f"plan:{marker}", evidence))
            if part is sent:
                break
    return tuple(out)
