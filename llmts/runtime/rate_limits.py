"""A session's quotas (the ``rate_limits`` section, docs/realistic-answers.md "Rate limits").

Two fixed windows. The minute window opens with the first request after the previous one closed, admits
``requests_per_minute`` requests, ``tokens_per_minute`` tokens (input estimated at admission, output added
once answered), ``input_tokens_per_minute`` input tokens and ``output_tokens_per_minute`` output tokens,
and closes ``window_seconds`` later. The day window works the same way for ``requests_per_day`` and lasts
24 hours. Output tokens are only known after the answer, so (like the providers, which charge them as the
answer is produced) an answer's output tokens are charged when it is committed, and a request is refused
only once the output window is already used up; an answer may take the window past its limit.

``overloaded`` is a scripted condition, not a quota: the session's next ``requests`` provider requests, or
every request for ``seconds`` from the first one, get Anthropic's 529 ``overloaded_error`` and count in no
window.

The windows run on the session's monotonic clock, so a client that waits ``retry-after`` really gets into
the next window; timestamps rendered on the wire come from the wire clock (the fixed instant of
``determinism.fixed_utc`` where set). On a fixed wire clock no time passes on the wire, so every reset and
``retry-after`` is the whole window: two identical runs send identical headers, and a client that waits
that long still lands in the next window (the real one closes no later). Provider-neutral: each adapter
renders ``RateState`` as its own headers and ``RateLimitExceeded.quota`` as its own error details.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llmts.errors import Overloaded, RateLimitExceeded
from llmts.schema.pacing import RateLimits

__all__ = ["DAY_SECONDS", "RateState", "RateWindow"]

DAY_SECONDS = 86_400.0


@dataclass(frozen=True, slots=True)
class RateState:
    """What rate-limit headers say: limits, what is left, and when the window resets (``reset_seconds``
    from now; ``reset_epoch`` on the wire clock); the ``day_`` fields are the same for the day window."""

    requests_limit: int | None
    requests_remaining: int | None
    tokens_limit: int | None
    tokens_remaining: int | None
    reset_seconds: float
    reset_epoch: float
    input_tokens_limit: int | None = None
    input_tokens_remaining: int | None = None
    output_tokens_limit: int | None = None
    output_tokens_remaining: int | None = None
    day_requests_limit: int | None = None
    day_requests_remaining: int | None = None
    day_reset_seconds: float = DAY_SECONDS
    day_reset_epoch: float = 0.0


class _Span:
    """One fixed window's timing: it opens with the first use after the previous one closed."""

    __slots__ = ("_fixed_clock", "length", "opened")

    def __init__(self, length: float, fixed_clock: bool) -> None:
        self.length = length
        self._fixed_clock = fixed_clock
        self.opened: float | None = None

    def live(self, now: float) -> bool:
        return self.opened is not None and now < self.opened + self.length

    def roll(self, now: float) -> bool:
        """True when a new window opened (its counters start over)."""
        if self.live(now):
            return False
        self.opened = now
        return True

    def reset_seconds(self, now: float) -> float:
        opened = self.opened
        if opened is None or self._fixed_clock or not self.live(now):
            return self.length
        return max(0.0, opened + self.length - now)


def _retry_after(seconds: float) -> float:
    # Milliseconds, rounded up: a client that waits this long lands in the next window.
    return max(0.001, math.ceil(seconds * 1000) / 1000)


def _left(limit: int | None, used: int) -> int | None:
    return None if limit is None else max(0, limit - used)


@dataclass(frozen=True, slots=True)
class _Refusal:
    """The limit a request is over: its quota's name and value, the 429's wording, and which window."""

    quota: str
    limit: int
    text: str
    per_day: bool


class RateWindow:
    """Counts one session's requests and tokens per window; the caller holds the session lock."""

    __slots__ = (
        "_day",
        "_day_requests",
        "_input",
        "_limits",
        "_minute",
        "_output",
        "_overload_left",
        "_overload_started",
        "_requests",
        "_tokens",
    )

    def __init__(self, limits: RateLimits, *, fixed_clock: bool = False) -> None:
        self._limits = limits
        # ``determinism.fixed_utc``: resets are reported on the fixed wire clock (the whole window).
        self._minute = _Span(limits.window_seconds, fixed_clock)
        self._day = _Span(DAY_SECONDS, fixed_clock)
        self._requests = self._tokens = self._input = self._output = self._day_requests = 0
        overloaded = limits.overloaded
        self._overload_left = (overloaded.requests or 0) if overloaded is not None else 0
        self._overload_started: float | None = None

    def _roll(self, now: float) -> None:
        if self._minute.roll(now):
            self._requests = self._tokens = self._input = self._output = 0
        if self._limits.requests_per_day is not None and self._day.roll(now):
            self._day_requests = 0

    def _check_overloaded(self, now: float) -> None:
        condition = self._limits.overloaded
        if condition is None:
            return
        if condition.requests is not None:
            if self._overload_left <= 0:
                return
            self._overload_left -= 1
        else:
            assert condition.seconds is not None
            if self._overload_started is None:
                self._overload_started = now
            if now >= self._overload_started + condition.seconds:
                return
        raise Overloaded(condition.retry_after)

    def _refusal(self, input_tokens: int) -> _Refusal | None:
        """The first limit this request is over, or None."""
        limits = self._limits
        rpm, rpd = limits.requests_per_minute, limits.requests_per_day
        tpm, itpm, otpm = (
            limits.tokens_per_minute,
            limits.input_tokens_per_minute,
            limits.output_tokens_per_minute,
        )
        if rpm is not None and self._requests + 1 > rpm:
            text = f"requests: limit {rpm}, used {self._requests}, requested 1"
            return _Refusal("requests_per_minute", rpm, text, per_day=False)
        if rpd is not None and self._day_requests + 1 > rpd:
            text = f"requests per day: limit {rpd}, used {self._day_requests}, requested 1"
            return _Refusal("requests_per_day", rpd, text, per_day=True)
        if tpm is not None and self._tokens + input_tokens > tpm:
            text = f"tokens: limit {tpm}, used {self._tokens}, requested {input_tokens}"
            return _Refusal("tokens_per_minute", tpm, text, per_day=False)
        if itpm is not None and self._input + input_tokens > itpm:
            text = f"input tokens: limit {itpm}, used {self._input}, requested {input_tokens}"
            return _Refusal("input_tokens_per_minute", itpm, text, per_day=False)
        if otpm is not None and self._output >= otpm:
            text = f"output tokens: limit {otpm}, used {self._output}"
            return _Refusal("output_tokens_per_minute", otpm, text, per_day=False)
        return None

    def take(self, now: float, input_tokens: int, model: str | None = None) -> None:
        """Admit one request of ``input_tokens`` into the windows, or raise the 429 (or the scripted 529),
        consuming nothing."""
        self._check_overloaded(now)
        self._roll(now)
        refused = self._refusal(input_tokens)
        if refused is not None:
            window = self._day if refused.per_day else self._minute
            retry_after = _retry_after(window.reset_seconds(now))
            message = f"Rate limit reached for {refused.text}. Please try again in {retry_after:g}s."
            raise RateLimitExceeded(
                message, retry_after, quota=refused.quota, limit=refused.limit, model=model
            )
        self._requests += 1
        self._day_requests += 1
        self._tokens += input_tokens
        self._input += input_tokens

    def spend(self, now: float, tokens: int) -> None:
        """Output tokens of an answer, counted in the window that is open now."""
        self._roll(now)
        self._tokens += tokens
        self._output += tokens

    def state(self, now: float, wire_now: float) -> RateState:
        limits = self._limits
        live = self._minute.live(now)
        day_live = self._day.live(now)
        reset = self._minute.reset_seconds(now)
        day_reset = self._day.reset_seconds(now)
        return RateState(
            requests_limit=limits.requests_per_minute,
            requests_remaining=_left(limits.requests_per_minute, self._requests if live else 0),
            tokens_limit=limits.tokens_per_minute,
            tokens_remaining=_left(limits.tokens_per_minute, self._tokens if live else 0),
            reset_seconds=reset,
            reset_epoch=wire_now + reset,
            input_tokens_limit=limits.input_tokens_per_minute,
            input_tokens_remaining=_left(limits.input_tokens_per_minute, self._input if live else 0),
            output_tokens_limit=limits.output_tokens_per_minute,
            output_tokens_remaining=_left(limits.output_tokens_per_minute, self._output if live else 0),
            day_requests_limit=limits.requests_per_day,
            day_requests_remaining=_left(limits.requests_per_day, self._day_requests if day_live else 0),
            day_reset_seconds=day_reset,
            day_reset_epoch=wire_now + day_reset,
        )
