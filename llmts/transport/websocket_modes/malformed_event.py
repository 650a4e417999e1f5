"""``malformed_event``: one text frame that is not JSON, then the turn ends without its remaining events;
the connection stays open (openai: ``json.JSONDecodeError`` out of ``recv()``; google-genai:
``ValueError``; JS: an ``error`` event)."""

from __future__ import annotations

from llmts.schema.faults import FrameKind
from llmts.transport.websocket_modes.base import EventBoundary, on_websocket
from llmts.transport.writer import record_frame

__all__ = ["act"]


@on_websocket("malformed_event")
def act(at: EventBoundary) -> bool:
    frame = at.malformed_event
    if not at.channel.send_raw(frame):
        at.evidence.transport_outcome = "client_gone"
        return False
    record_frame(len(frame), FrameKind.OTHER, at.evidence)
    at.evidence.transport_outcome = "early_end"
    return False
