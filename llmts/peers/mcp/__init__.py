"""A session's scripted MCP servers as a sans-IO engine (docs/mcp.md): the revisions
(``revisions.py``), a server's state and its client sessions (``state.py``, ``clients.py``), the methods
(``engine.py``), ``tools/call`` planning (``calls.py``) and the wire shapes (``render.py``). The HTTP side
is ``llmts/server/peers/mcp_http.py``."""

from __future__ import annotations

from llmts.peers.mcp.calls import CallPlan, ServerAsk
from llmts.peers.mcp.clients import ClientBook, McpClient, PendingAnswer
from llmts.peers.mcp.engine import Answer, answer, error_answer, initialize, notified
from llmts.peers.mcp.state import McpServerState

__all__ = [
    "Answer",
    "CallPlan",
    "ClientBook",
    "McpClient",
    "McpServerState",
    "PendingAnswer",
    "ServerAsk",
    "answer",
    "error_answer",
    "initialize",
    "notified",
]
