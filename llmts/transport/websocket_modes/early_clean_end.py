"""``early_clean_end``: the turn's remaining events never go out (no terminal event); the connection
stays open for the next turn."""

from __future__ import annotations

from llmts.transport.websocket_modes.base import EventBoundary, on_websocket

__all__ = ["act"]


@on_websocket("early_clean_end")
def act(at: EventBoundary) -> bool:
    at.evidence.transport_outcome = "early_end"
    return False
