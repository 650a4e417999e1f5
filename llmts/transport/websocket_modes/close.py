"""``close``: a close frame with the plan's ``code`` and ``reason``; the turn's remaining events never go
out (openai: ``ConnectionClosedError`` with the code, or a quiet end for 1000; google-genai: ``APIError``
with the code; JS: a ``close`` event with it)."""

from __future__ import annotations

from llmts.transport.websocket_modes.base import EventBoundary, on_websocket

__all__ = ["act"]


@on_websocket("close")
def act(at: EventBoundary) -> bool:
    evidence = at.evidence
    if not at.channel.open:  # the client left first: there is no one to close to
        evidence.transport_outcome = "client_gone"
        return False
    assert at.plan.code is not None  # the mode table requires it
    reason = at.plan.reason or ""
    at.channel.close(at.plan.code, reason)
    evidence.close_code, evidence.close_reason = at.plan.code, reason
    evidence.transport_outcome = "early_end"
    return False
