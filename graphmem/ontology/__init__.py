"""The vocabulary: entity and edge types (ontology) and the predicate registry, loaded from TOML and
checked once at the edge (``schema``); the defaults ship beside it (``default.toml`` here and in
``graphmem/predicates``)."""
