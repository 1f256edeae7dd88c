"""The Kuzu engine (the only one today): graphmem's data in one embedded Kuzu database, and the
named migrations between its on-disk layouts (``migrations``). Nothing outside this folder imports
Kuzu or writes Cypher.

Tables (labels come from the validated ontology, never from user text):
- ``Meta``: schema version, the ontology and registry the store was built with, counters.
- one node table per entity type (``Project``, ``Tool``, ...), keyed by ref.
- ``Name``: lower-cased names and aliases to refs, for resolution.
- ``Assertion``: the append-only statements (the authority), keyed by INT64 id; its times
  are INT64 microseconds since 1970 (whole-store reads then skip converting them).
- ``Subject`` and one rel table per edge type: the materialized fact view. A
  subject's row holds its statements and intervals as compact JSON, so reading a
  subject's truth is one primary-key lookup; entity-valued intervals are also
  typed edges (``(p:Project)-[e:USES]->(t:Tool)``) with their interval and ids.
- ``SubjectFacet``: the same view a subject and predicate at a time, open and ended intervals
  apart with their time bounds (layout 8), for the predicate scan (``codecs.facet_rows``).
- ``Record``, ``RecordKey`` and ``MENTIONS``: evidence records, their idempotence keys, and the
  entities they name; ``Term`` and ``Posting``: graphmem's own full-text index over them.

Modules, from the bottom up: ``codecs`` (Kuzu's own written forms: TIMESTAMP text, the facet rows; the
forms every engine shares, a subject's log and view, are ``graphmem/store/common/``'s),
``bulkfiles`` (tab-separated files for COPY), ``base`` (opening, connections, queries,
transactions with the commit mark and ``WriteUndo``, COPY), ``schema`` (the tables, the layout
checks, ``Meta``), then one module per table family: ``entities``, ``statements``, ``views``,
``records``, ``postings``, ``graph`` (reads along the fact edges) and ``repair`` (integrity
checks, tables written again, an interrupted write taken back). ``store`` puts the families
together as ``Store``.
"""
