"""``stall``: send nothing for ``delay_ms`` with the connection open (the reader greenlet still answers
pings, so clients wait), then end the turn without its remaining events; the connection stays open."""

from __future__ import annotations

from llmts.transport.websocket_modes.base import EventBoundary, on_websocket

__all__ = ["act"]


@on_websocket("stall")
def act(at: EventBoundary) -> bool:
    if at.pause(at.plan.delay_ms / 1000):
        at.evidence.transport_outcome = "early_end"
    return False
