"""Anthropic's rate-limit headers.

``anthropic-ratelimit-requests-limit``, ``-remaining``, ``-reset``; the ``anthropic-ratelimit-tokens-*``
trio (the most restrictive token limit in effect, as Anthropic documents it); the
``anthropic-ratelimit-input-tokens-*`` and ``-output-tokens-*`` trios. A reset is the RFC 3339 instant the
window is full again, on the wire clock (the fixed instant of ``determinism.fixed_utc`` plus the time left,
where set). The requests trio shows ``requests_per_minute`` or, without it, ``requests_per_day`` (with the
day window's reset). Only the limits the session configures are sent.
"""

from __future__ import annotations

from datetime import datetime, timezone

from llmts.runtime.rate_limits import RateState

__all__ = ["anthropic_rate_limit_headers"]


def _rfc3339(epoch: float) -> str:
    # Whole seconds, rounded up: the window is full again at (not before) that instant.
    return datetime.fromtimestamp(int(-(-epoch // 1)), timezone.utc).isoformat().replace("+00:00", "Z")


def _trio(name: str, limit: int, remaining: int | None, reset: str) -> list[tuple[str, str]]:
    prefix = f"anthropic-ratelimit-{name}"
    return [
        (f"{prefix}-limit", str(limit)),
        (f"{prefix}-remaining", str(remaining)),
        (f"{prefix}-reset", reset),
    ]


def anthropic_rate_limit_headers(state: RateState) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    reset = _rfc3339(state.reset_epoch)
    if state.requests_limit is not None:
        headers += _trio("requests", state.requests_limit, state.requests_remaining, reset)
    elif state.day_requests_limit is not None:
        day_reset = _rfc3339(state.day_reset_epoch)
        headers += _trio("requests", state.day_requests_limit, state.day_requests_remaining, day_reset)
    token_limits = [
        (remaining, limit)
        for limit, remaining in (
            (state.tokens_limit, state.tokens_remaining),
            (state.input_tokens_limit, state.input_tokens_remaining),
            (state.output_tokens_limit, state.output_tokens_remaining),
        )
        if limit is not None and remaining is not None
    ]
    if token_limits:  # the first configured among the fewest remaining
        remaining, limit = min(token_limits, key=lambda pair: pair[0])
        headers += _trio("tokens", limit, remaining, reset)
    if state.input_tokens_limit is not None:
        headers += _trio("input-tokens", state.input_tokens_limit, state.input_tokens_remaining, reset)
    if state.output_tokens_limit is not None:
        headers += _trio("output-tokens", state.output_tokens_limit, state.output_tokens_remaining, reset)
    return headers
