"""Placeholder: the a2a HTTP handler (being written)."""

from __future__ import annotations

from collections.abc import Iterable

from llmts.errors import RouteNotFound
from llmts.server.peers.context import PeerRequest, PeerServices

__all__ = ["A2aHttp"]


class A2aHttp:
    def __init__(self, services: PeerServices) -> None:
        self._services = services

    def __call__(self, request: PeerRequest) -> Iterable[bytes]:
        raise RouteNotFound(f"no a2a peer {request.name!r} in this session")
