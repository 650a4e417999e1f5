"""``delay_then_continue``: hold the connection ``delay_ms`` once, then send the rest (unless the client
left meanwhile)."""

from __future__ import annotations

from collections.abc import Generator

from llmts.transport.modes.base import Boundary, in_stream
from llmts.transport.waiting import WaitOutcome

__all__ = ["act"]


@in_stream("delay_then_continue")
def act(at: Boundary) -> Generator[bytes, None, bool]:
    yield from ()  # the pause sends nothing
    if at.hold(at.plan.delay_ms / 1000) is WaitOutcome.CLIENT_GONE:
        at.evidence.transport_outcome = "client_gone"
        return False
    return True
