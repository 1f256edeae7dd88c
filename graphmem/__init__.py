"""graphmem: a local-first knowledge-graph memory with a bi-temporal fact view."""

from graphmem.errors import BadInput, GraphmemError, StoreUnavailable
from graphmem.memory import Memory, open

__version__ = "0.1.0"
__all__ = ["BadInput", "GraphmemError", "Memory", "StoreUnavailable", "open", "__version__"]
