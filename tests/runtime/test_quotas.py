"""The quotas beyond requests and tokens per minute (llmts/runtime/rate_limits.py): input and output token
windows, the day window, the scripted 529 ``overloaded`` condition, and how each provider renders them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from llmts.errors import Overloaded, RateLimitExceeded
from llmts.providers.anthropic.rate_limits import anthropic_rate_limit_headers
from llmts.providers.gemini.errors import render_gemini_error
from llmts.providers.openai.rate_limits import openai_rate_limit_headers, reset_duration
from llmts.runtime.rate_limits import DAY_SECONDS, RateWindow
from llmts.schema.pacing import RateLimits


def _window(*, fixed_clock: bool = False, **limits: Any) -> RateWindow:
    return RateWindow(RateLimits.model_validate({"window_seconds": 10, **limits}), fixed_clock=fixed_clock)


def test_input_tokens_are_charged_at_admission() -> None:
    window = _window(input_tokens_per_minute=50)
    window.take(0.0, 40)
    window.spend(0.1, 1000)  # output tokens do not count against the input window
    with pytest.raises(RateLimitExceeded, match="input tokens: limit 50, used 40, requested 11") as raised:
        window.take(0.2, 11)
    assert (raised.value.quota, raised.value.limit) == ("input_tokens_per_minute", 50)
    window.take(0.3, 10)
    assert window.state(0.3, 0.0).input_tokens_remaining == 0
    window.take(10.0, 50)  # a new window


def test_output_tokens_are_charged_when_answered_and_refuse_once_used_up() -> None:
    window = _window(output_tokens_per_minute=10)
    window.take(0.0, 500)  # input does not count
    window.spend(0.1, 6)
    assert window.state(0.1, 0.0).output_tokens_remaining == 4
    window.take(0.2, 500)  # 4 left: admitted, whatever the answer will be
    window.spend(0.3, 9)  # the answer takes the window past its limit
    state = window.state(0.3, 0.0)
    assert (state.output_tokens_limit, state.output_tokens_remaining) == (10, 0)
    with pytest.raises(RateLimitExceeded, match="output tokens: limit 10, used 15") as raised:
        window.take(4.0, 1)
    assert raised.value.quota == "output_tokens_per_minute"
    assert raised.value.retry_after == pytest.approx(6.0)
    window.take(10.0, 1)


def test_requests_per_day_outlast_the_minute_window() -> None:
    window = _window(requests_per_day=2, requests_per_minute=100)
    window.take(0.0, 1)
    window.take(20.0, 1)  # another minute window, the same day
    with pytest.raises(RateLimitExceeded, match="requests per day: limit 2, used 2") as raised:
        window.take(40.0, 1, "gemini-2.0-flash")
    assert (raised.value.quota, raised.value.model) == ("requests_per_day", "gemini-2.0-flash")
    assert raised.value.retry_after == pytest.approx(DAY_SECONDS - 40)
    state = window.state(40.0, 1000.0)
    assert (state.day_requests_limit, state.day_requests_remaining) == (2, 0)
    assert state.day_reset_epoch == pytest.approx(1000 + DAY_SECONDS - 40)
    assert state.requests_remaining == 100  # the refusal counted nothing (the minute window closed at 30)
    window.take(DAY_SECONDS, 1)  # the next day


def test_fixed_clock_reports_whole_windows() -> None:
    window = _window(fixed_clock=True, requests_per_day=1)
    window.take(0.0, 1)
    with pytest.raises(RateLimitExceeded) as raised:
        window.take(5000.0, 1)
    assert raised.value.retry_after == DAY_SECONDS
    assert window.state(5000.0, 1_767_225_600.0).day_reset_epoch == 1_767_225_600.0 + DAY_SECONDS


def test_overloaded_for_the_next_requests_counts_nothing() -> None:
    window = _window(requests_per_minute=1, overloaded={"requests": 2, "retry_after": 0.5})
    for _ in range(2):
        with pytest.raises(Overloaded) as raised:
            window.take(0.0, 1)
        assert (raised.value.http_status, raised.value.code, raised.value.retry_after) == (
            529,
            "overloaded_error",
            0.5,
        )
    window.take(0.0, 1)  # the 529s took nothing from the window
    with pytest.raises(RateLimitExceeded):
        window.take(0.0, 1)


def test_overloaded_for_seconds_from_the_first_request() -> None:
    window = _window(overloaded={"seconds": 5})
    for now in (100.0, 104.9):
        with pytest.raises(Overloaded) as raised:
            window.take(now, 1)
        assert raised.value.retry_after is None
    window.take(105.0, 1)
    window.take(106.0, 1)


@pytest.mark.parametrize(
    "overloaded",
    [{}, {"requests": 1, "seconds": 1}, {"requests": 0}, {"seconds": 0}, {"seconds": 1, "after": 1}],
)
def test_overloaded_needs_one_span(overloaded: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RateLimits.model_validate({"overloaded": overloaded})


def test_overloaded_alone_is_a_valid_section() -> None:
    limits = RateLimits.model_validate({"overloaded": {"requests": 3}})
    assert limits.model_dump() == {"window_seconds": 60.0, "overloaded": {"requests": 3}}


def test_anthropic_renders_input_and_output_trios_and_the_most_restrictive_tokens() -> None:
    window = _window(input_tokens_per_minute=100, output_tokens_per_minute=50)
    window.take(0.0, 30)
    window.spend(0.0, 40)
    headers = dict(anthropic_rate_limit_headers(window.state(2.0, 1_767_225_600.0)))
    assert headers == {
        "anthropic-ratelimit-tokens-limit": "50",  # output has fewer left (10) than input (70)
        "anthropic-ratelimit-tokens-remaining": "10",
        "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:08Z",
        "anthropic-ratelimit-input-tokens-limit": "100",
        "anthropic-ratelimit-input-tokens-remaining": "70",
        "anthropic-ratelimit-input-tokens-reset": "2026-01-01T00:00:08Z",
        "anthropic-ratelimit-output-tokens-limit": "50",
        "anthropic-ratelimit-output-tokens-remaining": "10",
        "anthropic-ratelimit-output-tokens-reset": "2026-01-01T00:00:08Z",
    }


def test_a_day_limit_alone_fills_the_requests_trio() -> None:
    window = _window(fixed_clock=True, requests_per_day=3)
    window.take(0.0, 1)
    state = window.state(0.0, 1_767_225_600.0)
    assert dict(openai_rate_limit_headers(state)) == {
        "x-ratelimit-limit-requests": "3",
        "x-ratelimit-remaining-requests": "2",
        "x-ratelimit-reset-requests": "24h0m0s",
    }
    anthropic = dict(anthropic_rate_limit_headers(state))
    assert anthropic["anthropic-ratelimit-requests-reset"] == "2026-01-02T00:00:00Z"
    assert anthropic["anthropic-ratelimit-requests-remaining"] == "2"


def test_go_durations_have_hours() -> None:
    assert [reset_duration(s) for s in (3600, 3661.5, 86_399.999)] == ["1h0m0s", "1h1m1.5s", "23h59m59.999s"]


def test_gemini_names_the_quota_that_ran_out() -> None:
    error = RateLimitExceeded("over", 21.0, quota="requests_per_day", limit=5, model="gemini-2.0-flash")
    reply = render_gemini_error(error, "req_1")
    body = orjson.loads(reply.body)["error"]
    assert (body["code"], body["status"]) == (429, "RESOURCE_EXHAUSTED")
    kinds = [detail["@type"].rsplit(".", 1)[1] for detail in body["details"]]
    assert kinds == ["ErrorInfo", "QuotaFailure", "RetryInfo"]
    assert body["details"][1]["violations"] == [
        {
            "quotaMetric": "generativelanguage.googleapis.com/generate_requests_per_model_per_day",
            "quotaId": "GenerateRequestsPerDayPerProjectPerModel",
            "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"},
            "quotaValue": "5",
        }
    ]
    assert body["details"][2]["retryDelay"] == "21s"
