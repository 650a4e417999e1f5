"""The session part that counts requests and tokens into the ``rate_limits`` window
(docs/realistic-answers.md, "Rate limits"; the window itself is ``RateWindow``, llmts/runtime/rate_limits.py).

Locking: ``take``, ``spend`` and ``state`` take the session lock, and only when the session has a window
(a session without one costs one attribute test per request); ``restart_locked`` is the session's, under
that lock (configure and reset start the window over).
"""

from __future__ import annotations

import threading

from llmts.runtime.admission import input_tokens
from llmts.runtime.clock import Clock
from llmts.runtime.rate_limits import RateState, RateWindow
from llmts.schema.determinism import Determinism
from llmts.schema.neutral import NeutralRequest
from llmts.schema.pacing import RateLimits

__all__ = ["SessionRates"]


class SessionRates:
    """The session's rate window (None without ``rate_limits``) on the session's clock."""

    __slots__ = ("_clock", "_fixed_epoch", "_lock", "_window")

    def __init__(self, lock: threading.Lock, clock: Clock) -> None:
        self._lock = lock
        self._clock = clock
        self._window: RateWindow | None = None
        # ``determinism.fixed_utc``: reset times are rendered on that fixed wire clock.
        self._fixed_epoch: float | None = None

    def take(self, request: NeutralRequest) -> None:
        """Count a request into the windows, or raise its 429 (or the scripted 529), consuming nothing."""
        if self._window is None:
            return
        tokens = input_tokens(request)
        with self._lock:
            if self._window is not None:
                self._window.take(self._clock.monotonic(), tokens, request.model)

    def spend(self, tokens: int) -> None:
        """Count an answer's output tokens into the window."""
        if self._window is None:
            return
        with self._lock:
            if self._window is not None:
                self._window.spend(self._clock.monotonic(), tokens)

    def state(self) -> RateState | None:
        """The window as rate-limit headers show it; reset times on the wire clock (fixed or live)."""
        window = self._window
        if window is None:
            return None
        fixed = self._fixed_epoch
        with self._lock:
            return window.state(self._clock.monotonic(), fixed if fixed is not None else self._clock.now())

    def restart_locked(self, limits: RateLimits | None, determinism: Determinism | None) -> None:
        fixed = determinism is not None and determinism.fixed_utc is not None
        self._fixed_epoch = determinism.fixed_epoch if determinism is not None else None
        self._window = RateWindow(limits, fixed_clock=fixed) if limits is not None else None
