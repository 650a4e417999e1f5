"""Write a realtime turn's events on a WebSocket, with its fault plan, and record what went out.

The server's realtime driver (``llmts/server/realtime/``) hands over the events a protocol rendered for
one turn, in order, each with its ``FrameKind``. They go out one text frame each; an event counts as
written once ``channel.send`` returned True. With a plan, the mode's unit
(``llmts/transport/websocket_modes/``) acts once, right after the ``after_content_frames``-th content
event, like an SSE stream's in-stream unit (docs/stream-delivery.md, "On a WebSocket"). Between events
the turn may be interrupted (the client cancelled it, or started a new one): the events not yet sent are
dropped and the driver says why. Writes and waits run in the caller's greenlet; the connection's reader
greenlet keeps answering pings meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.waiting import WaitOutcome
from llmts.transport.websocket_modes import (
    MALFORMED_EVENT,
    REGISTRY,
    EventBoundary,
    EventChannel,
)
from llmts.transport.writer import record_frame

__all__ = ["MALFORMED_EVENT", "EventChannel", "deliver_events"]


def deliver_events(
    channel: EventChannel,
    events: Sequence[tuple[bytes, FrameKind]],
    plan: StreamDelivery | None,
    evidence: DeliveryEvidence,
    *,
    hold: Callable[[float], WaitOutcome],
    interrupted: Callable[[], bool],
    malformed_event: bytes = MALFORMED_EVENT,
) -> int:
    """Send ``events`` in order and return how many of them were written (a prefix of ``events``).

    ``evidence`` ends with ``transport_outcome`` ``completed`` (every event went out), ``early_end`` (the
    plan, an interruption or a superseded session ended the turn; the connection stays open unless the
    plan closed it), ``aborted`` (the plan dropped the connection) or ``client_gone`` (a write failed, the
    channel closed, or the client left during a hold). ``hold(seconds)`` waits with the connection open and
    returns early with ``CLIENT_GONE``, or ``CANCELLED`` (the turn was interrupted, or the session
    superseded: ``ended_by = "superseded"``); ``interrupted()`` is asked before each event.
    ``malformed_event`` is the text frame ``malformed_event`` sends. A plan of a mode that does not act on
    a WebSocket is a ``ValueError`` before anything is sent (configuration refuses it on realtime
    scenarios)."""
    unit = None
    if plan is not None:
        unit = REGISTRY.get(plan.mode)
        if unit is None:
            raise ValueError(f"stream_delivery mode {plan.mode} does not act on a WebSocket")
    boundary = plan.after_content_frames if plan is not None else 0
    written = content = 0
    for data, kind in events:
        if interrupted():
            evidence.transport_outcome = "early_end"
            return written
        if not channel.open or not channel.send(data):
            evidence.transport_outcome = "client_gone"
            return written
        written += 1
        record_frame(len(data), kind, evidence)
        if kind is not FrameKind.CONTENT:
            continue
        content += 1
        if content == boundary and unit is not None and plan is not None:
            evidence.stream_delivery_applied = True
            if not unit.act(EventBoundary(plan, channel, evidence, hold, interrupted, malformed_event)):
                return written  # the unit set the outcome
    evidence.transport_outcome = "completed"
    return written
