"""The rate-limit window in memory (llmts/runtime/rate_limits.py) and the header renderers of the
providers that have them."""

from __future__ import annotations

import pytest

from llmts.errors import RateLimitExceeded
from llmts.providers.anthropic.rate_limits import anthropic_rate_limit_headers
from llmts.providers.openai.rate_limits import openai_rate_limit_headers, reset_duration
from llmts.runtime.rate_limits import RateState, RateWindow
from llmts.schema.pacing import RateLimits


def _window(**limits: float) -> RateWindow:
    return RateWindow(RateLimits.model_validate({"window_seconds": 10, **limits}))


def test_requests_fill_the_window_then_429_until_it_resets() -> None:
    window = _window(requests_per_minute=2)
    window.take(100.0, 5)
    window.take(101.0, 5)
    with pytest.raises(RateLimitExceeded) as raised:
        window.take(103.5, 5)
    assert raised.value.http_status == 429 and raised.value.code == "rate_limit_exceeded"
    assert raised.value.retry_after == pytest.approx(6.5)  # the window opened at 100 and lasts 10 s
    state = window.state(103.5, 0.0)
    assert (state.requests_limit, state.requests_remaining) == (2, 0)  # the refusal counted nothing
    window.take(110.0, 5)  # a new window
    assert window.state(110.0, 0.0).requests_remaining == 1


def test_tokens_count_input_at_admission_and_output_after() -> None:
    window = _window(tokens_per_minute=100)
    window.take(0.0, 40)
    window.spend(0.1, 30)
    assert window.state(0.2, 0.0).tokens_remaining == 30
    with pytest.raises(RateLimitExceeded, match="tokens"):
        window.take(0.3, 31)
    window.take(0.3, 30)
    assert window.state(0.3, 0.0).tokens_remaining == 0


def test_state_before_and_after_a_window() -> None:
    window = _window(requests_per_minute=3, tokens_per_minute=50)
    fresh = window.state(5.0, 1000.0)
    assert fresh == RateState(3, 3, 50, 50, 10.0, 1010.0, day_reset_epoch=87_400.0)
    window.take(5.0, 10)
    assert window.state(7.0, 1000.0) == RateState(3, 2, 50, 40, 8.0, 1008.0, day_reset_epoch=87_400.0)
    assert window.state(15.0, 1000.0).requests_remaining == 3  # expired: full again


def test_openai_headers_and_reset_format() -> None:
    assert [reset_duration(s) for s in (0.12, 1, 1.5, 59.9991, 360, 61.25)] == [
        "120ms",
        "1s",
        "1.5s",
        "59.999s",
        "6m0s",
        "1m1.25s",
    ]
    headers = dict(openai_rate_limit_headers(RateState(60, 59, None, None, 1.5, 0.0)))
    assert headers == {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1.5s",
    }


def test_anthropic_headers_carry_the_reset_instant() -> None:
    state = RateState(None, None, 1000, 900, 30.2, 1_767_225_600.0 + 30.2)
    assert dict(anthropic_rate_limit_headers(state)) == {
        "anthropic-ratelimit-tokens-limit": "1000",
        "anthropic-ratelimit-tokens-remaining": "900",
        "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:31Z",
    }
