"""Interruptible waits: a fixture's delay ends early when the session moves on or the client leaves."""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from typing import Any

from llmts.transport.peer import peer_gone

__all__ = ["WaitOutcome", "wait"]

# How often a wait looks at its cancellation condition; also the upper bound on noticing a reset.
_SLICE_SECONDS = 0.05


class WaitOutcome(enum.Enum):
    ELAPSED = "elapsed"
    CANCELLED = "cancelled"
    CLIENT_GONE = "client_gone"


def wait(seconds: float, sock: Any, cancelled: Callable[[], bool]) -> WaitOutcome:
    deadline = time.monotonic() + seconds
    while True:
        if cancelled():
            return WaitOutcome.CANCELLED
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return WaitOutcome.ELAPSED
        step = min(_SLICE_SECONDS, remaining)
        started = time.monotonic()
        if peer_gone(sock, step):
            return WaitOutcome.CLIENT_GONE
        # A readable socket that is not closed (pipelined bytes) returns at once: sleep out the slice.
        left = step - (time.monotonic() - started)
        if left > 0.001:
            time.sleep(left)
