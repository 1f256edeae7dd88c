"""The checks of ``rebuild --check`` beyond the view that every engine makes alike (``RepairStore.
integrity_problems``): statements naming entities that do not exist, times no reader can hold, id
counters behind the ids in use, and the full-text index out of step with the records. An engine reads
the rows with its own queries and hands them here; each problem is ``code``, ``message`` and what it is
about (docs/semantics.md lists the codes)."""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any

from graphmem.model import fact_ref


class Problems:
    """The problems found, at most ``limit`` of a code (``found``, in the order they were added)."""

    def __init__(self, limit: int) -> None:
        self.found: list[dict[str, Any]] = []
        self._limit = limit
        self._counts: dict[str, int] = {}

    def add(self, code: str, message: str, **about: Any) -> None:
        if self._counts.get(code, 0) < self._limit:
            self._counts[code] = self._counts.get(code, 0) + 1
            self.found.append({"code": code, "message": message, **about})

    def dangling(self, entity_refs: Container[str], subjects: Iterable[str], objects: Iterable[str]) -> None:
        """The statements' distinct subjects and entity objects (each sorted) that are not entities."""
        for ref in subjects:
            if ref not in entity_refs:
                self.add("dangling_subject", f"statements of {ref!r}, which is not an entity", subject=ref)
        for ref in objects:
            if ref not in entity_refs:
                self.add("dangling_object", f"statements name {ref!r} as their object, which is not an entity",
                         object=ref)

    def out_of_range(self, fact_ids: Iterable[int]) -> None:
        """The statements holding a time outside the years 1-9999 (``times.MIN_US``-``MAX_US``)."""
        for fid in fact_ids:
            self.add("time_out_of_range", f"{fact_ref(fid)} holds a time outside the years 1-9999 (export cannot "
                     "write it so that import reads it back); retract it and assert it again", fact=fact_ref(fid))

    def counter_behind(self, counter: str, top: int | None, next_id: int) -> None:
        """``counter`` (``next_fact``, ``next_record``) at ``next_id``, the highest id in use ``top``."""
        if top is not None and top >= next_id:
            what = (f"fact id is {next_id}, but {fact_ref(top)}" if counter == "next_fact"
                    else f"record id is {next_id}, but rec:{top}")
            self.add("counter_behind", f"the next {what} exists", counter=counter)

    def index(self, texts: Iterable[str], with_names: bool, counted: tuple[int, int],
              term_blocks: Iterable[tuple[str, str]]) -> None:
        """The full-text index against the records' ``texts`` (each record's, read once): its counts of
        records and terms (``counted``, as stored) and each term's postings (``term_blocks``: a term and its
        block sizes, ``"3,1"``). ``with_names``: the index holds the name terms too (``index_names``)."""
        from graphmem.model.names import INITIAL_PREFIX, NAME_PREFIX, name_terms
        from graphmem.model.textindex import terms
        docs = tokens = 0
        df: dict[str, int] = {}
        for text in texts:
            words = terms(text)
            docs += 1
            tokens += len(words)
            for t in set(words) | (set(name_terms(text)) if with_names else set()):
                df[t] = df.get(t, 0) + 1
        if (docs, tokens) != counted:
            self.add("index_stats_mismatch", f"the full-text index counts {counted[0]} records of {counted[1]} terms; "
                     f"the records are {docs} of {tokens}")
        stored = {t: sum(int(n) for n in b.split(",") if n) for t, b in term_blocks
                  if with_names or not t.startswith((NAME_PREFIX, INITIAL_PREFIX))}
        for t in sorted(set(df) | set(stored)):
            if df.get(t, 0) != stored.get(t, 0):
                self.add("index_term_mismatch", f"term {t!r} is in {df.get(t, 0)} records but the index lists "
                         f"{stored.get(t, 0)}", term=t)
