"""``stall``: send nothing for ``delay_ms`` (or until the client leaves), then end the body cleanly
without the terminal sequence."""

from __future__ import annotations

from collections.abc import Generator

from llmts.transport.modes.base import Boundary, in_stream
from llmts.transport.waiting import WaitOutcome

__all__ = ["act"]


@in_stream("stall")
def act(at: Boundary) -> Generator[bytes, None, bool]:
    yield from ()  # the stall sends nothing
    outcome = at.hold(at.plan.delay_ms / 1000)
    at.evidence.transport_outcome = "client_gone" if outcome is WaitOutcome.CLIENT_GONE else "early_end"
    return False
