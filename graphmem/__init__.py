"""graphmem: a local-first knowledge-graph memory with a bi-temporal fact view.

The facade is ``graphmem.open`` (a ``Memory``) and ``graphmem.migrate``; every value a ``Memory`` method
returns and every error graphmem raises is importable from here. The types of the evidence and
retrieval features load on first use, so that ``import graphmem`` stays cheap for the command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from graphmem.documents import EntityDoc, EntityList, ExportDoc, OntologyDoc, RegistryDoc, StoreInfo
from graphmem.errors import (
    AmbiguousEntity,
    BadInput,
    BadTime,
    ConfigError,
    GraphmemError,
    ImportFailed,
    MissingExtra,
    QueryRefused,
    StoreUnavailable,
    TypeMismatch,
    UnknownEntity,
    UnknownPredicate,
)
from graphmem.evidence.hits import SearchHit, SearchResult
from graphmem.memory import Memory, migrate, open
from graphmem.model import Entity, Interval, Statement
from graphmem.reports import (
    CopyReport,
    ImportReport,
    LifecycleReport,
    LintIssue,
    LintReport,
    MigrateReport,
    RebuildReport,
    ReviveReport,
)
from graphmem.results import (
    CurrentResult,
    ExtractResult,
    FactsResult,
    TimelineResult,
    WhyResult,
    WriteResult,
)

if TYPE_CHECKING:  # the same names the module __getattr__ below loads, for type checkers
    from graphmem.evidence.extraction import Extractor
    from graphmem.evidence.ingest import IngestReport
    from graphmem.evidence.notes import NoteResult
    from graphmem.memory.copying import copy_store
    from graphmem.model.facts import Event, Fact
    from graphmem.model.records import Record
    from graphmem.retrieval.answers import PathResult, RecommendResult
    from graphmem.retrieval.linking import Lexicon, Seed
    from graphmem.retrieval.packing import PackResult
    from graphmem.view.adhoc import CypherResult

# loaded on first access: their modules are not needed to open a store and answer ``current``
_LAZY = {
    "CypherResult": "graphmem.view.adhoc",
    "Event": "graphmem.model.facts",
    "Fact": "graphmem.model.facts",
    "Extractor": "graphmem.evidence.extraction",
    "IngestReport": "graphmem.evidence.ingest",
    "NoteResult": "graphmem.evidence.notes",
    "Record": "graphmem.model.records",
    "Lexicon": "graphmem.retrieval.linking",
    "Seed": "graphmem.retrieval.linking",
    "PackResult": "graphmem.retrieval.packing",
    "copy_store": "graphmem.memory.copying",
    "PathResult": "graphmem.retrieval.answers",
    "RecommendResult": "graphmem.retrieval.answers",
}

__version__ = "0.1.0"
__all__ = [
    # the facade
    "Memory", "copy_store", "migrate", "open",
    # values and results
    "CopyReport", "CurrentResult", "CypherResult", "Entity", "EntityDoc", "EntityList", "Event", "ExportDoc", "ExtractResult",
    "Extractor", "Fact", "FactsResult", "ImportReport", "IngestReport", "Interval", "Lexicon", "LifecycleReport",
    "LintIssue", "LintReport",
    "MigrateReport", "NoteResult", "OntologyDoc", "PackResult", "PathResult", "RebuildReport", "RecommendResult", "Record",
    "RegistryDoc", "ReviveReport", "SearchHit", "SearchResult", "Seed", "Statement", "StoreInfo", "TimelineResult",
    "WhyResult", "WriteResult",
    # errors
    "AmbiguousEntity", "BadInput", "BadTime", "ConfigError", "GraphmemError", "ImportFailed",
    "MissingExtra", "QueryRefused", "StoreUnavailable", "TypeMismatch", "UnknownEntity", "UnknownPredicate",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """The lazily loaded names of ``__all__``; anything else is an AttributeError."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'graphmem' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
