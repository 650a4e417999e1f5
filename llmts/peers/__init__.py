"""The agent's other peers (docs/mcp.md, docs/a2a.md): scripted MCP servers and A2A agents.

Each protocol is a sans-IO engine here: it takes a parsed JSON-RPC message and the peer's state and says
what to answer (a JSON result, an SSE stream of messages, a request to the client and what follows its
answer); the server (``llmts/server/peers/``) does the HTTP and the waiting. Like ``providers/`` this
layer may import ``runtime``, ``schema`` and ``errors``, never werkzeug, gevent or sockets
(docs/architecture.md, "Layers"). Nothing is imported eagerly.
"""

from __future__ import annotations

__all__: list[str] = []
