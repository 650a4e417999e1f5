"""What the transport really did for one response (or realtime turn), filled in while it is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only a type here: the worker module (and so gunicorn's arbiter) imports this module, without the schema.
    from llmts.schema.faults import StreamDelivery

__all__ = ["DeliveryEvidence"]


@dataclass(slots=True)
class DeliveryEvidence:
    """Plain mutable record (not a pydantic model): it is updated after every frame on the hot path."""

    stream_delivery: StreamDelivery | None = None
    stream_delivery_applied: bool = False
    headers_committed: bool = False
    emitted_frames: int = 0
    emitted_content_frames: int = 0
    emitted_bytes: int = 0
    terminal_marker_observed: bool = False
    # completed | early_end | aborted | client_gone; None while the response is being written.
    transport_outcome: str | None = None
    # Why llmts ended the delivery itself: "write_timeout" (the client stopped reading), "memory_budget"
    # (its unread answer did not fit the process memory budget), "shutdown", or "superseded" (the session
    # was reset, reconfigured or deleted during a paced stream).
    ended_by: str | None = None
    # Monotonic times (the server's clock) right after the first and the last stream write returned.
    first_frame_at: float | None = None
    last_frame_at: float | None = None
    # A paced stream's planned duration: time to first frame plus the planned waits (jitter included).
    pacing_planned_ms: float | None = None
    # A realtime turn (WebSocket): the close frame llmts sent, its code and its reason ("" when it had
    # none); both None while no close frame was sent.
    close_code: int | None = None
    close_reason: str | None = None
