"""Moving a store in and out as files: JSONL import (``importer``) and JSONL or GraphML export (``export``)."""
