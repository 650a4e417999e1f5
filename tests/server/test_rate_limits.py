"""Rate limits (docs/realistic-answers.md "Rate limits"): the providers' own rate-limit headers on every
answer, the provider's 429 with a ``retry-after`` into the next window, honoured by the SDKs' own retry,
nothing consumed by a refused request, and the fixed wire clock in Anthropic's reset instants."""

from __future__ import annotations

import math
import time
from datetime import datetime

import anthropic
import openai
import pytest
from google.genai import errors as genai_errors

from llmts import SessionClient
from tests.helpers import USER_HI, raw_request

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
WINDOW = 1.5


def _texts(count: int) -> list[dict[str, str]]:
    return [{"text": f"answer {index}"} for index in range(count)]


def test_openai_headers_count_down_and_the_sdk_retries_into_the_next_window(
    llmts_session: SessionClient,
) -> None:
    llmts_session.configure(
        {
            "rate_limits": {"requests_per_minute": 2, "tokens_per_minute": 10_000, "window_seconds": WINDOW},
            "scenarios": [{"responses": _texts(3)}],  # reject when exhausted: a 429 must consume none
        }
    )
    client = llmts_session.openai_client(max_retries=2, _strict_response_validation=True)
    first = client.chat.completions.with_raw_response.create(model=MODEL, messages=USER_HI)
    second = client.chat.completions.with_raw_response.create(model=MODEL, messages=USER_HI)
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert first.headers["x-ratelimit-remaining-requests"] == "1"
    assert second.headers["x-ratelimit-remaining-requests"] == "0"
    assert first.headers["x-ratelimit-limit-tokens"] == "10000"
    used = 10_000 - int(second.headers["x-ratelimit-remaining-tokens"])
    usage_one = first.parse().usage
    assert usage_one is not None and used == 2 * usage_one.total_tokens
    reset = second.headers["x-ratelimit-reset-requests"]
    assert reset.endswith("ms") or reset.endswith("s")
    assert second.headers["x-ratelimit-reset-tokens"] == reset

    started = time.monotonic()
    third = client.chat.completions.with_raw_response.create(model=MODEL, messages=USER_HI)
    assert third.parse().choices[0].message.content == "answer 2"  # nothing was consumed by the 429
    assert third.retries_taken == 1
    assert time.monotonic() - started < WINDOW + 3  # one retry-after, not a back-off series
    assert third.headers["x-ratelimit-remaining-requests"] == "1"  # a fresh window

    entries = llmts_session.requests(order="asc")
    assert [e["status"] for e in entries] == [200, 200, 429, 200]
    refused = entries[2]
    assert refused["error_code"] == "rate_limit_exceeded" and refused["success"] is False
    assert 0 < refused["retry_after_seconds"] <= WINDOW
    assert refused["response_index"] is None


def test_openai_429_envelope_and_retry_headers(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {"rate_limits": {"requests_per_minute": 1}, "scenarios": [{"responses": _texts(2)}]}
    )
    path = "/openai/v1/chat/completions"
    body = {"model": MODEL, "messages": USER_HI}
    assert raw_request(llmts_session.provider_base, "POST", path, body).status == 200
    refused = raw_request(llmts_session.provider_base, "POST", path, body)
    assert refused.status == 429
    error = refused.json()["error"]
    assert (error["type"], error["code"]) == ("rate_limit_error", "rate_limit_exceeded")
    assert "Rate limit reached for requests" in error["message"]
    retry_ms = int(refused.headers["retry-after-ms"])
    assert 59_000 <= retry_ms <= 60_000
    # RFC 9110's delay-seconds (OpenAI's spec types it as an integer >= 1): whole seconds, rounded up.
    assert refused.headers["retry-after"] == str(math.ceil(retry_ms / 1000))
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    # Routes that answer from session state carry the headers and count nothing.
    models = raw_request(llmts_session.provider_base, "GET", "/openai/v1/models")
    assert models.status == 200 and models.headers["x-ratelimit-remaining-requests"] == "0"
    # A reset starts a new window.
    llmts_session.reset()
    again = raw_request(llmts_session.provider_base, "POST", path, body)
    assert again.status == 200 and again.headers["x-ratelimit-remaining-requests"] == "0"
    assert again.headers["x-ratelimit-reset-requests"].endswith("s")


def test_openai_token_window(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {"rate_limits": {"tokens_per_minute": 30}, "scenarios": [{"responses": _texts(3)}]}
    )
    client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    ok = client.chat.completions.with_raw_response.create(model=MODEL, messages=USER_HI)
    assert "x-ratelimit-limit-requests" not in ok.headers
    assert ok.headers["x-ratelimit-limit-tokens"] == "30"
    long_prompt = [{"role": "user", "content": "word " * 100}]
    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model=MODEL, messages=long_prompt)
    assert raised.value.code == "rate_limit_exceeded"
    assert "Rate limit reached for tokens" in raised.value.message


def test_anthropic_headers_and_sdk_retry(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "rate_limits": {"requests_per_minute": 1, "tokens_per_minute": 5000, "window_seconds": WINDOW},
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    client = llmts_session.anthropic_client(max_retries=2, _strict_response_validation=True)
    first = client.messages.with_raw_response.create(model=MODEL, max_tokens=50, messages=USER_HI)
    assert first.headers["anthropic-ratelimit-requests-limit"] == "1"
    assert first.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert first.headers["anthropic-ratelimit-tokens-limit"] == "5000"
    reset = datetime.fromisoformat(first.headers["anthropic-ratelimit-requests-reset"].replace("Z", "+00:00"))
    assert 0 <= reset.timestamp() - time.time() <= WINDOW + 1
    assert (
        first.headers["anthropic-ratelimit-tokens-reset"]
        == first.headers["anthropic-ratelimit-requests-reset"]
    )

    second = client.messages.with_raw_response.create(model=MODEL, max_tokens=50, messages=USER_HI)
    assert second.retries_taken == 1
    assert second.parse().content[0].text == "answer 1"  # type: ignore[union-attr]
    statuses = [e["status"] for e in llmts_session.requests(order="asc")]
    assert statuses == [200, 429, 200]

    no_retry = llmts_session.anthropic_client(max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as raised:
        no_retry.messages.create(model=MODEL, max_tokens=50, messages=USER_HI)
    assert raised.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    # Whole seconds, rounded up: the time left of the window, at most its length.
    assert 1 <= int(raised.value.response.headers["retry-after"]) <= math.ceil(WINDOW)
    assert 0 < int(raised.value.response.headers["retry-after-ms"]) <= WINDOW * 1000


def test_anthropic_reset_follows_the_fixed_clock(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "determinism": {"seed": "s", "fixed_utc": "2026-01-01T00:00:00Z"},
            "rate_limits": {"requests_per_minute": 5},
            "scenarios": [{"responses": _texts(1)}],
        }
    )
    client = llmts_session.anthropic_client(max_retries=0)
    raw = client.messages.with_raw_response.create(model=MODEL, max_tokens=50, messages=USER_HI)
    # The window resets a minute after it opened, on the wire clock: the fixed instant plus 60 s.
    assert raw.headers["anthropic-ratelimit-requests-reset"] == "2026-01-01T00:01:00Z"
    assert raw.headers["anthropic-ratelimit-requests-remaining"] == "4"


def _fixed_clock_run(session: SessionClient) -> list[tuple[str, str]]:
    """A fresh window on the fixed wire clock: one answer, one 429; the rate headers of both."""
    session.configure(
        {
            "determinism": {"seed": "s", "fixed_utc": "2026-01-01T00:00:00Z"},
            "rate_limits": {"requests_per_minute": 1, "tokens_per_minute": 10_000},
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    path = "/openai/v1/chat/completions"
    body = {"model": MODEL, "messages": USER_HI}
    answered = raw_request(session.provider_base, "POST", path, body)
    time.sleep(0.05)  # live time passes between the two, as it does between two runs
    refused = raw_request(session.provider_base, "POST", path, body)
    assert (answered.status, refused.status) == (200, 429)
    shown = ("retry-after", "retry-after-ms", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
    return [
        (name, response.headers[name])
        for response in (answered, refused)
        for name in shown
        if name in response.headers
    ] + [("message", refused.json()["error"]["message"])]


def test_fixed_clock_makes_every_reset_and_retry_after_identical_between_runs(
    llmts_session: SessionClient,
) -> None:
    """Under ``determinism.fixed_utc`` no time passes on the wire: the resets and the 429's retry headers
    are the whole window, the same in every run (they differed by a millisecond or two before)."""
    first = _fixed_clock_run(llmts_session)
    second = _fixed_clock_run(llmts_session)

    assert first == second
    assert dict(first[:2]) == {"x-ratelimit-reset-requests": "1m0s", "x-ratelimit-reset-tokens": "1m0s"}
    assert ("retry-after", "60") in first and ("retry-after-ms", "60000") in first
    assert first[-1][1].endswith("Please try again in 60s.")


def test_gemini_has_no_rate_limit_headers_but_its_own_429(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "rate_limits": {"requests_per_minute": 1, "window_seconds": WINDOW},
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    client = llmts_session.gemini_client()
    assert client.models.generate_content(model=MODEL, contents="Hi").text == "answer 0"
    with pytest.raises(genai_errors.ClientError) as raised:
        client.models.generate_content(model=MODEL, contents="Hi")
    assert raised.value.code == 429 and raised.value.status == "RESOURCE_EXHAUSTED"
    details = raised.value.details["error"]["details"]
    (retry,) = [d for d in details if d["@type"].endswith("RetryInfo")]
    delay = float(retry["retryDelay"].rstrip("s"))
    assert 0 < delay <= WINDOW
    time.sleep(delay)
    assert client.models.generate_content(model=MODEL, contents="Hi").text == "answer 1"
    path = f"/gemini/v1beta/models/{MODEL}:generateContent"
    raw = raw_request(llmts_session.provider_base, "POST", path, {"contents": [{"parts": [{"text": "x"}]}]})
    assert not [name for name in raw.headers if "ratelimit" in name]


def test_sessions_without_rate_limits_send_no_headers(llmts_session: SessionClient) -> None:
    llmts_session.configure({"scenarios": [{"responses": _texts(1)}]})
    client = llmts_session.openai_client(max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=USER_HI)
    assert not [name for name in raw.headers if "ratelimit" in name]


def test_azure_openai_sends_openai_headers_and_429(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "azure_deployments": {"dep": MODEL},
            "rate_limits": {"requests_per_minute": 1},
            "scenarios": [{"responses": _texts(2)}],
        }
    )
    client = llmts_session.azure_openai_client(max_retries=0, _strict_response_validation=True)
    raw = client.chat.completions.with_raw_response.create(model="dep", messages=USER_HI)
    assert raw.headers["x-ratelimit-limit-requests"] == "1"
    assert raw.headers["x-ratelimit-remaining-requests"] == "0"
    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model="dep", messages=USER_HI)
    assert raised.value.response.headers["retry-after"].isdigit()  # whole seconds (RFC 9110)
    assert 50 <= int(raised.value.response.headers["retry-after"]) <= 60
    assert raised.value.response.headers["x-ratelimit-remaining-requests"] == "0"
