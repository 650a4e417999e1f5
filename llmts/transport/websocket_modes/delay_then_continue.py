"""``delay_then_continue``: hold the connection ``delay_ms`` once, then send the turn's remaining events
(unless the client left or the turn ended meanwhile)."""

from __future__ import annotations

from llmts.transport.websocket_modes.base import EventBoundary, on_websocket

__all__ = ["act"]


@on_websocket("delay_then_continue")
def act(at: EventBoundary) -> bool:
    return at.pause(at.plan.delay_ms / 1000)
