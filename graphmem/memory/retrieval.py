"""Memory's retrieval: link, recommend, paths, pack, the graph (graphmem.retrieval)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from graphmem.memory.base import MemoryBase
from graphmem.model.scopes import scope_list
from graphmem.model.text import check_text
from graphmem.write.inputs import when

if TYPE_CHECKING:
    import networkx as nx

    from graphmem.retrieval.answers import PathResult, RecommendResult
    from graphmem.retrieval.linking import Lexicon, Seed
    from graphmem.retrieval.packing import PackResult


class RetrievalFacade(MemoryBase):
    """Linking, recommendations, paths, packs and the graph (``graphmem.retrieval``)."""

    def _scoped(self, scope: str | list[str] | None) -> Any:
        """The store, or (with ``scope``) the store as seen from those scopes (``retrieval.scoped``)."""
        scopes = scope_list(scope)
        if scopes is None:
            return self.store
        from graphmem.retrieval.scoped import ScopedStore
        return ScopedStore(self.store, self.ontology, self.registry, scopes)

    def lexicon(self) -> Lexicon:
        """The entity side of linking (names, lemmas, descriptions), read from the store on first use.

        The store keeps it (``graphmem.retrieval.linking.stored_lexicon``: the stored lexicon patched with
        the entities written since; built whole when none is stored). This object keeps it until an
        entity is written through it (Kuzu's lock means no other process writes meanwhile).

        Returns
        -------
        Lexicon

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> lex = m.lexicon()
        >>> m.lexicon() is lex
        True
        >>> _ = m.add_entity("Tool", "Kuzu")
        >>> m.lexicon() is lex
        False
        >>> m.close()
        """
        from graphmem.retrieval.linking import stored_lexicon
        writes = self.store.entity_writes
        if self._lexicon is None or self._lexicon[0] != writes:
            self._lexicon = (writes, stored_lexicon(self.store, keep=not self.read_only)[0])
        return self._lexicon[1]

    def link(self, text: str, *, records: bool = True) -> tuple[Seed, ...]:
        """The entities ``text`` names or describes (``graphmem.retrieval.linking.Seed``), strongest match first.

        Parameters
        ----------
        text : str
            Free text (an idea, a question).
        records : bool, default True
            Also follow the records the text matches to the entities they mention.

        Returns
        -------
        tuple of Seed

        Raises
        ------
        BadInput
            Empty or invalid text.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> [(s.ref, s.match) for s in m.link("the atlas project on kuzu")]
        [('project:atlas', 'name'), ('tool:kuzu', 'name')]
        >>> m.close()
        """
        from graphmem.retrieval.linking import Linker, link
        from graphmem.retrieval.recommend import check_idea
        return link(Linker(self.lexicon, self.ontology, self.store), check_idea(text), records=records)

    def recommend(self, idea: str, *, top: int = 5, as_of: str | None = None, known_at: str | None = None,
                  max_hops: int = 3, paths: int = 3, scope: str | list[str] | None = None) -> RecommendResult:
        """The projects ``idea`` fits best at ``as_of`` (as known at ``known_at``).

        Each comes with the graph paths that carry its score (docs/recommend.md).

        Parameters
        ----------
        idea : str
            Free text describing the idea.
        top : int, default 5
            At most this many projects.
        as_of, known_at : str, optional
            The time of the graph and of knowledge (default: now).
        max_hops : int, default 3
            The longest path from the idea's entities to a project.
        paths : int, default 3
            The paths kept per project.
        scope : str or list of str, optional
            Walk the fact view of these scopes only, and link through their records (docs/scopes.md).

        Returns
        -------
        RecommendResult
            ``seeds`` (the entities the idea names) and ``results``, best first.

        Raises
        ------
        BadInput
            Empty idea text, or a bad number.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> r = m.recommend("something on kuzu")
        >>> [s.ref for s in r.seeds], [p.project.ref for p in r.results]
        (['tool:kuzu'], ['project:atlas'])
        >>> m.close()
        """
        from graphmem.retrieval.linking import Linker
        from graphmem.retrieval.recommend import GraphParts, recommend
        check_text(idea, "idea")
        t = when(as_of, known_at)
        store = self._scoped(scope)
        r = recommend(GraphParts(store, self.ontology, self.registry),
                      Linker(self.lexicon, self.ontology, store), idea, top=top,
                      as_of=t.as_of, known_at=t.known_at, now=t.now, max_hops=max_hops, paths=paths)
        return r if store is self.store else dataclasses.replace(r, scopes=store.scopes)

    def paths(self, src: str, dst: str, *, max_hops: int = 4, limit: int = 3, as_of: str | None = None,
             known_at: str | None = None, scope: str | list[str] | None = None) -> PathResult:
        """The shortest explained paths between two entities over the edges valid at ``as_of``.

        Parameters
        ----------
        src, dst : str
            The two entities: refs, names or aliases.
        max_hops : int, default 4
            The longest path.
        limit : int, default 3
            At most this many paths.
        as_of, known_at : str, optional
            The time of the graph and of knowledge (default: now).
        scope : str or list of str, optional
            Only the fact view of these scopes (docs/scopes.md).

        Returns
        -------
        PathResult
            ``paths``, shortest first, or a ``message`` saying why there is none.

        Raises
        ------
        UnknownEntity
            No entity has that ref, name or alias.
        AmbiguousEntity
            The name or alias matches several entities.
        BadInput
            A bad number.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> len(m.paths("Atlas", "Kuzu").paths)
        1
        >>> m.paths("Atlas", "Kuzu", as_of="2024-01-01").message
        'no path between project:atlas and tool:kuzu within 4 hops as of 2024-01-01'
        >>> m.close()
        """
        from graphmem.retrieval.recommend import GraphParts, shortest_paths
        t = when(as_of, known_at)
        store = self._scoped(scope)
        r = shortest_paths(GraphParts(store, self.ontology, self.registry),
                           self.resolve(src, role="from"), self.resolve(dst, role="to"),
                           as_of=t.as_of, known_at=t.known_at, now=t.now, max_hops=max_hops, limit=limit)
        return r if store is self.store else dataclasses.replace(r, scopes=store.scopes)

    def pack(self, query: str, *, budget_tokens: int = 1000, max_items: int = 40, as_of: str | None = None,
             known_at: str | None = None, trace: bool = False, tokenizer: Any = None,
             kind: str | list[str] | None = None, source: str | list[str] | None = None, since: str | None = None,
             until: str | None = None, about: str | list[str] | None = None, track: bool = True,
             include_archived: bool = False, tail: int = 0, tail_budget: int | None = None,
             session: str | None = None, min_trust: str | None = None,
             scope: str | list[str] | None = None) -> PackResult:
        """A cited context bundle for ``query`` within ``budget_tokens`` (docs/packing.md).

        Parameters
        ----------
        query : str
            What the bundle is for.
        budget_tokens : int, default 1000
            The most tokens the bundle may use.
        max_items : int, default 40
            The most items it may hold.
        as_of, known_at : str, optional
            The time of the facts and of knowledge (default: now).
        trace : bool, default False
            Keep the candidates left out too, with why.
        tokenizer : callable, optional
            Any function from text to a token count (default: graphmem's ``chars4`` counter).
        kind, source, since, until, about : optional
            Filters of the records the bundle may use, as for ``search`` (facts are not filtered).
        track : bool, default True
            Record the use of the records included (docs/lifecycle.md); nothing is recorded on a
            read-only store, or with ``as_of`` or ``known_at`` in the past.
        include_archived : bool, default False
            Let archived records in too.
        tail : int, default 0
            Keep the budget for this many of the most recent records of the current session (or of the
            records the filter allows), after guidance and before retrieval (docs/packing.md).
        tail_budget : int, optional
            The most tokens the tail may take (at most ``budget_tokens``); alone, the tail is as many of
            the most recent records as fit it.
        session : str, optional
            The session whose tail it is (a session key: a source up to '#'); default the current one.
        min_trust : str, optional
            ``low``, ``medium`` or ``high``: leave out records and facts of lower trust (a record's
            ``meta.trust``, quarantined below low; unrated records stay).
        scope : str or list of str, optional
            Only the records and the fact view of these scopes, in every lane (docs/scopes.md).

        Returns
        -------
        PackResult
            ``bundle_text`` and its ``citations``; ``refreshed``, the records whose use it recorded.

        Raises
        ------
        BadInput
            Empty query text, a bad number, a tail budget over the budget, an unknown trust level or session.
        BadTime
            ``as_of`` or ``known_at`` is not an ISO-8601 date or datetime (or ``"now"``).

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.ingest([b'{"text": "Atlas moved from SQLite to Kuzu.", "ts": "2024-03-01", "kind": "note"}'])
        >>> print(m.pack("kuzu").bundle_text)
        Evidence:
        - 2024-03-01: Atlas moved from SQLite to Kuzu. [rec:1]
        >>> _ = m.ingest([b'{"text": "Lunch at noon?", "ts": "2024-03-02", "kind": "message", "source": "chat#2"}'])
        >>> print(m.pack("kuzu", tail=1).bundle_text)
        Evidence:
        - 2024-03-01: Atlas moved from SQLite to Kuzu. [rec:1]
        Recent (oldest first):
        - 2024-03-02: Lunch at noon? [rec:2]
        >>> m.close()
        """
        from graphmem.evidence.search import record_filter
        from graphmem.retrieval.packing import PackParts, pack
        from graphmem.retrieval.packselect import Partition
        check_text(query, "query")
        part = Partition(tail, tail_budget, session, min_trust)  # checked by pack, with the budget
        t = when(as_of, known_at)
        where = record_filter(kind=kind, source=source, since=since, until=until, about=about, resolve=self.resolve,
                              include_archived=include_archived, scope=scope)
        r = pack(PackParts(self._scoped(scope), self.ontology, self.registry, self.lexicon), query,
                 budget_tokens=budget_tokens, max_items=max_items, as_of=t.as_of,
                 known_at=t.known_at, now=t.now, trace=trace, tokenizer=tokenizer, where=where, partition=part)
        past = t.as_of < t.now or (t.known_at is not None and t.known_at < t.now)
        packed = [int(c.ref[4:]) for c in r.items if c.kind == "record"]  # the final bundle's records
        if track and not past and packed:
            r = dataclasses.replace(r, refreshed=self._track("packed", packed, t.now))
        return r

    def graph(self, as_of: str | None = None) -> nx.MultiDiGraph:
        """The typed graph valid at ``as_of`` (default now) as a networkx MultiDiGraph.

        Parameters
        ----------
        as_of : str, optional
            The time the edges hold at.

        Returns
        -------
        networkx.MultiDiGraph
            Entities as nodes, facts between entities as edges.

        Raises
        ------
        BadTime
            ``as_of`` cannot be parsed.

        Examples
        --------
        >>> import tempfile, graphmem
        >>> m = graphmem.open(tempfile.mkdtemp(), create=True)
        >>> _ = m.add_entity("Project", "Atlas", aliases=["atlas-app"]), m.add_entity("Tool", "Kuzu")
        >>> m.assert_("Atlas", "uses", "Kuzu", valid_from="2024-02-01").refs
        ('fact:1',)
        >>> g = m.graph()
        >>> g.number_of_nodes(), g.number_of_edges()
        (2, 1)
        >>> m.close()
        """
        from graphmem.transfer.export import to_networkx
        return to_networkx(self.store, as_of)
