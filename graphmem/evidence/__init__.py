"""Evidence records: parsing, redaction, bounds and importance (``records``), ingest (``ingest``), the
full-text index (``textindex``) and extraction of mentions and assertions with spaCy (``extraction``)."""
