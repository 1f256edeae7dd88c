"""The write path: validate once, apply once.

Every write (``assert``, ``end``, ``retract``, an entity, extraction ``--apply`` and ``import``) checks
its input in one place (``validate``: entity resolution, predicate lookup, object coercion, sources,
trust, the retraction rule) and reaches the store through one step (``apply``: statements,
retractions and the view rows of the subjects they touch). ``inputs`` turns the refs and times a
caller gives into ids and instants, for reads as for writes.
"""
