"""What the engines' folders share (``kuzu/``, ``postgres/``): the stored forms of a subject's log and view
(``codecs``) and the store methods that hand them out (``forms``), the cache of a term's posting blocks with
its checks and BM25 ranking over it (``postings``), what is read from the append-only events (``events``),
the checks of ``rebuild --check`` beyond the view (``integrity``), and pure functions over rows both read
(``rows``: the name index from the entities, subject ranges).

Nothing here speaks an engine's query language or imports its driver: an engine supplies the queries
(a mixin's hooks) and keeps them in its own folder. An engine folder imports this one, never another
engine's (``tests/test_architecture.py``).
"""
