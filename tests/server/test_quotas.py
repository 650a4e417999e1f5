"""Quotas as the providers keep them (docs/realistic-answers.md "Rate limits"), through a real server and
the official SDKs: Anthropic's input and output token trios, requests per day in OpenAI's request trio,
Gemini's ``QuotaFailure`` with ``RetryInfo``, the scripted 529 ``overloaded_error``, and every reset on the
fixed clock."""

from __future__ import annotations

import time

import anthropic
import openai
import pytest
from google.genai import errors as genai_errors

from llmts import SessionClient
from tests.helpers import USER_HI, raw_request

pytestmark = pytest.mark.sdk

MODEL = "claude-sonnet-4-5"
FIXED = {"seed": "s", "fixed_utc": "2026-01-01T00:00:00Z"}


def _texts(count: int) -> list[dict[str, str]]:
    return [{"text": f"answer {index}"} for index in range(count)]


def test_anthropic_input_and_output_token_trios_then_its_429(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "determinism": FIXED,
            "rate_limits": {"input_tokens_per_minute": 1000, "output_tokens_per_minute": 3},
            "scenarios": [{"responses": [{"text": "one two three four five"}, {"text": "never"}]}],
        }
    )
    client = llmts_session.anthropic_client(max_retries=0, _strict_response_validation=True)
    raw = client.messages.with_raw_response.create(model=MODEL, max_tokens=50, messages=USER_HI)
    usage = raw.parse().usage
    assert usage.output_tokens > 3  # the answer takes the output window past its limit
    headers = raw.headers
    assert headers["anthropic-ratelimit-input-tokens-limit"] == "1000"
    assert headers["anthropic-ratelimit-input-tokens-remaining"] == str(1000 - usage.input_tokens)
    assert headers["anthropic-ratelimit-output-tokens-limit"] == "3"
    assert headers["anthropic-ratelimit-output-tokens-remaining"] == "0"
    # The tokens trio is the most restrictive of the two; every reset is the fixed instant plus the window.
    assert (headers["anthropic-ratelimit-tokens-limit"], headers["anthropic-ratelimit-tokens-remaining"]) == (
        "3",
        "0",
    )
    for trio in ("input-tokens", "output-tokens", "tokens"):
        assert headers[f"anthropic-ratelimit-{trio}-reset"] == "2026-01-01T00:01:00Z"
    assert "anthropic-ratelimit-requests-limit" not in headers

    with pytest.raises(anthropic.RateLimitError) as raised:
        client.messages.create(model=MODEL, max_tokens=50, messages=USER_HI)
    refused = raised.value.response.headers
    assert raised.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert "output tokens: limit 3" in raised.value.message
    assert (refused["retry-after"], refused["retry-after-ms"]) == ("60", "60000")
    assert refused["anthropic-ratelimit-output-tokens-remaining"] == "0"
    assert refused["anthropic-ratelimit-input-tokens-remaining"] == str(1000 - usage.input_tokens)
    entries = llmts_session.requests(order="asc")
    assert [(e["status"], e["error_code"]) for e in entries] == [(200, None), (429, "rate_limit_exceeded")]


def test_anthropic_input_window_refuses_a_long_prompt(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {"rate_limits": {"input_tokens_per_minute": 40}, "scenarios": [{"responses": _texts(2)}]}
    )
    client = llmts_session.anthropic_client(max_retries=0)
    long_prompt = [{"role": "user", "content": "word " * 100}]
    with pytest.raises(anthropic.RateLimitError, match="input tokens: limit 40"):
        client.messages.create(model=MODEL, max_tokens=50, messages=long_prompt)
    answered = client.messages.with_raw_response.create(model=MODEL, max_tokens=50, messages=USER_HI)
    assert answered.parse().content[0].text == "answer 0"  # type: ignore[union-attr]
    assert int(answered.headers["anthropic-ratelimit-input-tokens-remaining"]) < 40


def test_openai_requests_per_day_in_the_request_trio(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "determinism": FIXED,
            "rate_limits": {"requests_per_day": 2, "tokens_per_minute": 10_000},
            "scenarios": [{"responses": _texts(3)}],
        }
    )
    client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    first = client.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=USER_HI)
    second = client.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=USER_HI)
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert [r.headers["x-ratelimit-remaining-requests"] for r in (first, second)] == ["1", "0"]
    # The day window on the fixed clock: always the whole day, in OpenAI's Go-style duration.
    assert second.headers["x-ratelimit-reset-requests"] == "24h0m0s"
    assert second.headers["x-ratelimit-reset-tokens"] == "1m0s"
    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert raised.value.code == "rate_limit_exceeded"
    assert "requests per day: limit 2, used 2" in raised.value.message
    assert raised.value.response.headers["retry-after"] == "86400"
    assert raised.value.response.headers["x-ratelimit-remaining-requests"] == "0"
    # A reset starts a new day.
    llmts_session.reset()
    again = client.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=USER_HI)
    assert again.headers["x-ratelimit-remaining-requests"] == "1"


def test_gemini_quota_failure_names_the_quota_and_retry_info_the_wait(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "determinism": FIXED,
            "rate_limits": {"requests_per_minute": 1, "requests_per_day": 5},
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    client = llmts_session.gemini_client()
    assert client.models.generate_content(model="gemini-2.5-flash", contents="Hi").text == "answer 0"
    with pytest.raises(genai_errors.ClientError) as raised:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    assert (raised.value.code, raised.value.status) == (429, "RESOURCE_EXHAUSTED")
    details = {d["@type"].rsplit(".", 1)[1]: d for d in raised.value.details["error"]["details"]}
    assert details["QuotaFailure"]["violations"] == [
        {
            "quotaMetric": "generativelanguage.googleapis.com/generate_requests_per_model",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel",
            "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
            "quotaValue": "1",
        }
    ]
    assert details["RetryInfo"]["retryDelay"] == "60s"  # the whole window on the fixed clock


def test_anthropic_overloaded_for_the_next_requests(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "rate_limits": {"requests_per_minute": 10, "overloaded": {"requests": 2, "retry_after": 0.05}},
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    no_retry = llmts_session.anthropic_client(max_retries=0)
    with pytest.raises(anthropic.OverloadedError) as raised:
        no_retry.messages.create(model=MODEL, max_tokens=50, messages=USER_HI)
    assert isinstance(raised.value, anthropic.InternalServerError) and raised.value.status_code == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert raised.value.response.headers["anthropic-ratelimit-requests-remaining"] == "10"  # took nothing

    client = llmts_session.anthropic_client(max_retries=2, _strict_response_validation=True)
    answered = client.messages.with_raw_response.create(model=MODEL, max_tokens=50, messages=USER_HI)
    assert answered.retries_taken == 1  # the second 529, then the answer
    assert answered.parse().content[0].text == "answer 0"  # type: ignore[union-attr]  # nothing consumed
    assert answered.headers["anthropic-ratelimit-requests-remaining"] == "9"
    entries = llmts_session.requests(order="asc")
    assert [(e["status"], e["error_code"]) for e in entries] == [
        (529, "overloaded_error"),
        (529, "overloaded_error"),
        (200, None),
    ]


def test_overloaded_for_a_window_from_the_first_request(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {"rate_limits": {"overloaded": {"seconds": 1}}, "scenarios": [{"responses": _texts(1)}]}
    )
    path = "/anthropic/v1/messages"
    body = {"model": MODEL, "max_tokens": 50, "messages": USER_HI}
    refused = raw_request(llmts_session.provider_base, "POST", path, body)
    # The window began when the first request arrived, so no later than now: a second past now it is
    # over however slowly a busy machine delivered that request.
    answered = time.monotonic()
    assert refused.status == 529 and refused.json()["error"]["type"] == "overloaded_error"
    assert "retry-after" not in refused.headers  # Anthropic's 529s leave the wait to the SDK
    assert not [name for name in refused.headers if "ratelimit" in name]  # no limits configured
    time.sleep(max(0.0, 1.2 - (time.monotonic() - answered)))
    assert raw_request(llmts_session.provider_base, "POST", path, body).status == 200
    # Other providers answer the same 529; the openai SDK raises its 5xx error.
    llmts_session.configure(
        {"rate_limits": {"overloaded": {"requests": 1}}, "scenarios": [{"responses": _texts(1)}]}
    )
    with pytest.raises(openai.InternalServerError) as raised:
        llmts_session.openai_client(max_retries=0).chat.completions.create(model="gpt-4.1", messages=USER_HI)
    assert raised.value.status_code == 529


def _fixed_run(session: SessionClient) -> list[tuple[str, str]]:
    session.configure(
        {
            "determinism": FIXED,
            "rate_limits": {
                "requests_per_day": 1,
                "input_tokens_per_minute": 500,
                "output_tokens_per_minute": 500,
            },
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    path = "/anthropic/v1/messages"
    body = {"model": MODEL, "max_tokens": 50, "messages": USER_HI}
    answered = raw_request(session.provider_base, "POST", path, body)
    time.sleep(0.05)  # live time passes, as it does between two runs
    refused = raw_request(session.provider_base, "POST", path, body)
    assert (answered.status, refused.status) == (200, 429)
    return [
        (name, value)
        for response in (answered, refused)
        for name, value in sorted(response.headers.items())
        if "ratelimit" in name or name.startswith("retry-after")
    ]


def test_fixed_clock_makes_every_quota_header_identical_between_runs(llmts_session: SessionClient) -> None:
    first = _fixed_run(llmts_session)
    assert first == _fixed_run(llmts_session)
    shown = dict(first)
    assert shown["anthropic-ratelimit-requests-reset"] == "2026-01-02T00:00:00Z"  # the day window
    assert shown["anthropic-ratelimit-input-tokens-reset"] == "2026-01-01T00:01:00Z"
    assert (shown["retry-after"], shown["retry-after-ms"]) == ("86400", "86400000")
