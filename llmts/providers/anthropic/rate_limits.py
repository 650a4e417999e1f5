"""Anthropic's rate-limit headers.

``anthropic-ratelimit-requests-limit``, ``-remaining``, ``-reset`` and the ``anthropic-ratelimit-tokens-*``
trio; a reset is the RFC 3339 instant the window is full again, on the wire clock (the fixed instant of
``determinism.fixed_utc`` plus the time left, where set). Only the limits the session configures are sent.
"""

from __future__ import annotations

from datetime import datetime, timezone

from llmts.runtime.rate_limits import RateState

__all__ = ["anthropic_rate_limit_headers"]


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), timezone.utc).isoformat().replace("+00:00", "Z")


def anthropic_rate_limit_headers(state: RateState) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    # Whole seconds, rounded up: the window is full again at (not before) that instant.
    reset = _rfc3339(-(-state.reset_epoch // 1))
    if state.requests_limit is not None:
        headers += [
            ("anthropic-ratelimit-requests-limit", str(state.requests_limit)),
            ("anthropic-ratelimit-requests-remaining", str(state.requests_remaining)),
            ("anthropic-ratelimit-requests-reset", reset),
        ]
    if state.tokens_limit is not None:
        headers += [
            ("anthropic-ratelimit-tokens-limit", str(state.tokens_limit)),
            ("anthropic-ratelimit-tokens-remaining", str(state.tokens_remaining)),
            ("anthropic-ratelimit-tokens-reset", reset),
        ]
    return headers
