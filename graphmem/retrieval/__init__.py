"""Answers built from the graph: linking text to entities (``linking``), recommendations and explained
paths (``recommend``) and cited context bundles (``packing``)."""
