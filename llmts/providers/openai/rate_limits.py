"""OpenAI's rate-limit headers (Azure OpenAI sends the same names).

``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests``, ``x-ratelimit-reset-requests`` and the
``-tokens`` trio; a reset is a duration until the window is full again, in OpenAI's Go-style form
(``1s``, ``6m0s``, ``120ms``). The requests trio shows ``requests_per_minute`` or, without it,
``requests_per_day`` (with the day window's reset); the tokens trio shows ``tokens_per_minute`` (OpenAI has
no separate input and output token headers). Only the limits the session configures are sent.
"""

from __future__ import annotations

from llmts.runtime.rate_limits import RateState

__all__ = ["openai_rate_limit_headers", "reset_duration"]


def reset_duration(seconds: float) -> str:
    """``0.12`` -> ``120ms``, ``1.5`` -> ``1.5s``, ``360`` -> ``6m0s``, ``86400`` -> ``24h0m0s`` (OpenAI's
    format, Go's durations)."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    minutes, rest = divmod(round(seconds, 3), 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    hours, minutes = divmod(int(minutes), 60)
    if hours:  # Go's form: ``24h0m0s``
        return f"{hours}h{minutes}m{text}"
    return f"{minutes}m{text}" if minutes else text


def openai_rate_limit_headers(state: RateState) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    reset = reset_duration(state.reset_seconds)
    if state.requests_limit is not None:
        headers += [
            ("x-ratelimit-limit-requests", str(state.requests_limit)),
            ("x-ratelimit-remaining-requests", str(state.requests_remaining)),
            ("x-ratelimit-reset-requests", reset),
        ]
    elif state.day_requests_limit is not None:
        headers += [
            ("x-ratelimit-limit-requests", str(state.day_requests_limit)),
            ("x-ratelimit-remaining-requests", str(state.day_requests_remaining)),
            ("x-ratelimit-reset-requests", reset_duration(state.day_reset_seconds)),
        ]
    if state.tokens_limit is not None:
        headers += [
            ("x-ratelimit-limit-tokens", str(state.tokens_limit)),
            ("x-ratelimit-remaining-tokens", str(state.tokens_remaining)),
            ("x-ratelimit-reset-tokens", reset),
        ]
    return headers
