"""``abort_connection``: drop the TCP connection without a close frame (the clients see 1006, abnormal
closure)."""

from __future__ import annotations

from llmts.transport.websocket_modes.base import EventBoundary, on_websocket

__all__ = ["act"]


@on_websocket("abort_connection")
def act(at: EventBoundary) -> bool:
    at.channel.abort()
    at.evidence.transport_outcome = "aborted"
    return False
