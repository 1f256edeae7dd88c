"""The store served to programs: HTTP JSON (``http``, ``graphmem serve``) and the Model Context
Protocol for agents (``mcp``, ``graphmem mcp``)."""
