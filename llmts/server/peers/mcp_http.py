"""Placeholder: the mcp HTTP handler (being written)."""

from __future__ import annotations

from collections.abc import Iterable

from llmts.errors import RouteNotFound
from llmts.server.peers.context import PeerRequest, PeerServices

__all__ = ["McpHttp"]


class McpHttp:
    def __init__(self, services: PeerServices) -> None:
        self._services = services

    def __call__(self, request: PeerRequest) -> Iterable[bytes]:
        raise RouteNotFound(f"no mcp peer {request.name!r} in this session")
