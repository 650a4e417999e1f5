"""The legacy HTTP+SSE transport at ``/mcp/{name}/sse`` (not served yet)."""

from __future__ import annotations

from collections.abc import Iterable

from llmts.errors import RouteNotFound
from llmts.peers.mcp import McpServerState
from llmts.server.peers.context import PeerRequest

__all__ = ["legacy"]


def legacy(request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
    raise RouteNotFound("the legacy HTTP+SSE transport is not served yet")
