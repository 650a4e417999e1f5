"""Where a protocol upgrade goes: the seam for WebSocket routes (docs/architecture.md, "The server's hot
path").

llhttp stops parsing at a request that asks for another protocol (``Connection: upgrade`` with
``Upgrade: ...``): the bytes after its head are no longer HTTP/1.1. The connection loop then asks
:func:`upgrade_handler` for the app's handler of that request. An :class:`UpgradeHandler` takes the
connection over: it gets an :class:`UpgradeRequest` (the environ, the socket, and the bytes already read
after the head), answers the handshake itself (``101 Switching Protocols``) and speaks the new protocol
until it returns; the connection is closed after it.

The realtime routes have one (server/realtime/: OpenAI Realtime, Azure, Gemini Live; docs/realtime.md);
a WebSocket upgrade anywhere else is answered 400 ``websocket_not_supported``; another protocol (``h2c``)
is ignored as RFC 9110 7.8 allows, and the request is served as HTTP/1.1 and the connection closed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmts.server.http.parser import tokens

__all__ = ["UpgradeHandler", "UpgradeRequest", "upgrade_handler", "wants_websocket"]


@dataclass
class UpgradeRequest:
    """What a handler gets: the request's environ (no ``wsgi.input``), the client socket, and what the
    client already sent after the head (the new protocol's first bytes)."""

    environ: dict[str, Any]
    sock: Any
    leftover: bytes


# Returns the HTTP status it answered the handshake with (101, or the refusal's), for the access log.
UpgradeHandler = Callable[[UpgradeRequest], "int | None"]


def wants_websocket(environ: dict[str, Any]) -> bool:
    return "websocket" in tokens(environ.get("HTTP_UPGRADE"))


def upgrade_handler(app: Any, environ: dict[str, Any]) -> UpgradeHandler | None:
    """The app's handler for this upgrade request, or None: the app answers it through
    ``app.upgrade_handler(environ)`` (None there too: the route has no other protocol)."""
    find = getattr(app, "upgrade_handler", None)
    if not callable(find):
        return None
    handler = find(environ)
    return handler if callable(handler) else None
