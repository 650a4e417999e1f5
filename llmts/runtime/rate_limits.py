"""A session's rate-limit window (the ``rate_limits`` section, docs/realistic-answers.md "Rate limits").

A fixed window: it opens with the first request after the previous one closed, admits
``requests_per_minute`` requests and ``tokens_per_minute`` tokens (input estimated at admission, output
added once answered), and closes ``window_seconds`` later. The window runs on the session's monotonic
clock, so a client that waits ``retry-after`` really gets into the next window; timestamps rendered on the
wire come from the wire clock (the fixed instant of ``determinism.fixed_utc`` where set). On a fixed wire
clock no time passes on the wire, so every reset and ``retry-after`` is the whole window: two identical runs
send identical headers, and a client that waits that long still lands in the next window (the real one
closes no later). Provider-neutral: each adapter renders ``RateState`` as its own headers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llmts.errors import RateLimitExceeded
from llmts.schema.pacing import RateLimits

__all__ = ["RateState", "RateWindow"]


@dataclass(frozen=True, slots=True)
class RateState:
    """What rate-limit headers say: limits, what is left, and when the window resets (``reset_seconds``
    from now; ``reset_epoch`` on the wire clock)."""

    requests_limit: int | None
    requests_remaining: int | None
    tokens_limit: int | None
    tokens_remaining: int | None
    reset_seconds: float
    reset_epoch: float


class RateWindow:
    """Counts one session's requests and tokens per window; the caller holds the session lock."""

    __slots__ = ("_fixed_clock", "_limits", "_opened", "_requests", "_tokens")

    def __init__(self, limits: RateLimits, *, fixed_clock: bool = False) -> None:
        self._limits = limits
        # ``determinism.fixed_utc``: resets are reported on the fixed wire clock (the whole window).
        self._fixed_clock = fixed_clock
        self._opened: float | None = None
        self._requests = 0
        self._tokens = 0

    def _roll(self, now: float) -> None:
        opened = self._opened
        if opened is not None and now < opened + self._limits.window_seconds:
            return
        self._opened = now
        self._requests = 0
        self._tokens = 0

    def _reset_seconds(self, now: float) -> float:
        opened = self._opened
        if opened is None or self._fixed_clock:
            return self._limits.window_seconds
        return max(0.0, opened + self._limits.window_seconds - now)

    def take(self, now: float, input_tokens: int) -> None:
        """Admit one request of ``input_tokens`` into the window, or raise the 429 (consuming nothing)."""
        self._roll(now)
        limits = self._limits
        rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
        refused = None
        if rpm is not None and self._requests + 1 > rpm:
            refused = f"Rate limit reached for requests: limit {rpm}, used {self._requests}, requested 1."
        elif tpm is not None and self._tokens + input_tokens > tpm:
            refused = (
                f"Rate limit reached for tokens: limit {tpm}, used {self._tokens}, requested {input_tokens}."
            )
        if refused is not None:
            # Milliseconds, rounded up: a client that waits this long lands in the next window.
            retry_after = max(0.001, math.ceil(self._reset_seconds(now) * 1000) / 1000)
            raise RateLimitExceeded(f"{refused} Please try again in {retry_after:g}s.", retry_after)
        self._requests += 1
        self._tokens += input_tokens

    def spend(self, now: float, tokens: int) -> None:
        """Output tokens of an answer, counted in the window that is open now."""
        self._roll(now)
        self._tokens += tokens

    def state(self, now: float, wire_now: float) -> RateState:
        limits = self._limits
        opened = self._opened
        live = opened is not None and now < opened + limits.window_seconds
        requests = self._requests if live else 0
        tokens = self._tokens if live else 0
        rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
        reset = self._reset_seconds(now) if live else limits.window_seconds
        return RateState(
            requests_limit=rpm,
            requests_remaining=None if rpm is None else max(0, rpm - requests),
            tokens_limit=tpm,
            tokens_remaining=None if tpm is None else max(0, tpm - tokens),
            reset_seconds=reset,
            reset_epoch=wire_now + reset,
        )
