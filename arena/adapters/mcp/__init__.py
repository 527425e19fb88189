"""Let an LLM agent play: ``arena mcp`` serves an MCP server over stdio whose tools, ``observe`` and ``act``, play
one seat of an arena match (``arena.adapters.mcp.server``). The server needs the optional extra
``pip install 'arena[mcp]'`` (the official ``mcp`` package); the seat and the reading of actions
(``arena.adapters.mcp.seat``, ``arena.adapters.mcp.actions``) need only the SDK."""
