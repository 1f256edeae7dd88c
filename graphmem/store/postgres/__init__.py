"""The PostgreSQL engine: graphmem's data in one schema of a PostgreSQL database, reached with psycopg 3.
Nothing outside this folder imports psycopg or writes SQL (docs/engines.md, "PostgreSQL").

Tables (all in the store's schema; ``base._DDL`` lists them with their indexes): ``meta`` (layout,
ontology, registry, id counters), ``entity`` and ``name``, ``assertion`` (the statements, the authority),
``subject`` and ``fact_edge`` (the materialized view, in the same JSON forms as the Kuzu store's),
``record`` and ``mention``, ``term`` and ``posting`` (graphmem's own full-text index), ``entity_event``,
``record_event``, and the stored linking lexicon (``lexicon_part``, ``lexicon_change``).

Modules, from the bottom up: ``base`` (the address, connections, transactions with the store's
lock and the server's clock, the tables), then one module per table family: ``entities``,
``statements``, ``views``, ``records``, ``postings``, ``graph`` (reads along the fact edges, checks
and repairs); ``store`` puts them together as ``PgStore``. ``migrations`` moves a store of an older
layout to the current one (``graphmem migrate``), in one transaction.
"""
