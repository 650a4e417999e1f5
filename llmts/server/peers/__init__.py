"""The HTTP side of the agent's other peers: ``/mcp/{name}`` and ``/a2a/{name}`` (docs/mcp.md,
docs/a2a.md). ``path.PeerPath`` picks the session and the protocol; each protocol's module does its HTTP
(JSON or SSE answers, streams that wait on the client) over its engine in ``llmts/peers/``."""

from __future__ import annotations

__all__: list[str] = []
