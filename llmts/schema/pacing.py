"""The ``pacing`` and ``rate_limits`` configuration sections (docs/realistic-answers.md).

``pacing: {"ttft_ms", "tokens_per_second", "jitter"}`` makes a streamed answer arrive the way a real model
streams it: the first frame after ``ttft_ms``, then each frame after its share of the answer's output
tokens at ``tokens_per_second``; ``jitter`` (0-1) varies each wait by up to that fraction, seeded by
``determinism.seed``. It is allowed on a response, as a scenario default and as a session default.

``rate_limits: {"requests_per_minute", "tokens_per_minute", "input_tokens_per_minute",
"output_tokens_per_minute", "window_seconds", "requests_per_day", "overloaded"}`` (top level) is a fixed
window (one minute unless ``window_seconds`` shortens it for tests) that admits that many requests and
tokens, and a day window of requests; every provider answer carries the provider's rate-limit headers, and a
request over a window gets the provider's 429 with ``retry-after`` set to the time until the window resets.
``overloaded: {"requests" | "seconds", "retry_after"}`` scripts Anthropic's 529 ``overloaded_error``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from llmts.schema.model_base import STRICT, OmitsNone

__all__ = ["PACING_LIMITS", "OverloadedCondition", "Pacing", "RateLimits"]

# Documented in docs/configuration.md with the other LIMITS.
PACING_LIMITS: dict[str, int] = {
    "pacing_ttft_ms": 300_000,
    "pacing_tokens_per_second": 100_000,
    "rate_limit_requests_per_minute": 1_000_000,
    "rate_limit_tokens_per_minute": 1_000_000_000,
    "rate_limit_window_seconds": 3600,
    "rate_limit_requests_per_day": 1_000_000_000,
    "rate_limit_overloaded_requests": 1_000_000,
}


class Pacing(OmitsNone):
    """How fast a streamed answer arrives: time to the first frame, then tokens per second."""

    model_config = STRICT

    ttft_ms: int = Field(default=0, ge=0, le=PACING_LIMITS["pacing_ttft_ms"])
    # None: after the first frame the rest follows at once.
    tokens_per_second: float | None = Field(default=None, gt=0, le=PACING_LIMITS["pacing_tokens_per_second"])
    jitter: float = Field(default=0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _paces_something(self) -> Pacing:
        if self.ttft_ms == 0 and self.tokens_per_second is None:
            raise ValueError("pacing needs ttft_ms > 0 or tokens_per_second")
        return self


class OverloadedCondition(OmitsNone):
    """Anthropic's 529 ``overloaded_error`` as a scripted condition: for the session's next ``requests``
    provider requests, or for ``seconds`` from its first request (exactly one of the two)."""

    model_config = STRICT

    requests: int | None = Field(default=None, ge=1, le=PACING_LIMITS["rate_limit_overloaded_requests"])
    seconds: float | None = Field(default=None, gt=0, le=PACING_LIMITS["rate_limit_window_seconds"])
    # A ``retry-after`` on each 529 (Anthropic's usually carry none: the SDK backs off on its own).
    retry_after: float | None = Field(default=None, ge=0, le=PACING_LIMITS["rate_limit_window_seconds"])

    @model_validator(mode="after")
    def _one_span(self) -> OverloadedCondition:
        if (self.requests is None) == (self.seconds is None):
            raise ValueError("rate_limits.overloaded needs exactly one of requests or seconds")
        return self


_LIMIT_NAMES = (
    "requests_per_minute",
    "requests_per_day",
    "tokens_per_minute",
    "input_tokens_per_minute",
    "output_tokens_per_minute",
)


class RateLimits(OmitsNone):
    """The session's quotas: per-minute windows of requests and tokens, a day window of requests, and the
    scripted ``overloaded`` condition (at least one of them)."""

    model_config = STRICT

    requests_per_minute: int | None = Field(
        default=None, ge=1, le=PACING_LIMITS["rate_limit_requests_per_minute"]
    )
    requests_per_day: int | None = Field(default=None, ge=1, le=PACING_LIMITS["rate_limit_requests_per_day"])
    tokens_per_minute: int | None = Field(
        default=None, ge=1, le=PACING_LIMITS["rate_limit_tokens_per_minute"]
    )
    input_tokens_per_minute: int | None = Field(
        default=None, ge=1, le=PACING_LIMITS["rate_limit_tokens_per_minute"]
    )
    output_tokens_per_minute: int | None = Field(
        default=None, ge=1, le=PACING_LIMITS["rate_limit_tokens_per_minute"]
    )
    # The minute window's length; the limits apply per window (one minute unless a test shortens it).
    window_seconds: float = Field(default=60.0, gt=0, le=PACING_LIMITS["rate_limit_window_seconds"])
    overloaded: OverloadedCondition | None = None

    @model_validator(mode="after")
    def _limits_something(self) -> RateLimits:
        if self.overloaded is None and all(getattr(self, name) is None for name in _LIMIT_NAMES):
            raise ValueError(f"rate_limits needs one of {', '.join(_LIMIT_NAMES)} or overloaded")
        return self
