"""OpenAI Responses API errors through the official ``openai`` SDK (strict response validation) against a
real gunicorn+gevent server: a scripted 429 retried into the next answer or raised before a stream,
typed non-retryable errors, an unknown model and wrong credentials (docs/providers.md, "OpenAI
Responses")."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.providers.openai.responses_sdk_support import MODEL

pytestmark = pytest.mark.sdk


def test_scripted_429_is_retried_into_next_answer(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .scenario()
        .error(429, "rate_limit_exceeded", "Slow down", retry_after=0.25)
        .text("After the retry.")
        .build()
    )
    client = app_session.openai_client(_strict_response_validation=True, max_retries=2)

    started = time.monotonic()
    raw = client.responses.with_raw_response.create(model=MODEL, input="Hi")

    assert raw.parse().output_text == "After the retry."
    assert raw.retries_taken == 1
    assert time.monotonic() - started >= 0.25


def test_scripted_429_on_a_stream_request_raises_before_streaming(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(ConfigBuilder().scenario().error(429, "rate_limit_exceeded", "Slow down").build())

    with (
        pytest.raises(openai.RateLimitError) as caught,
        app_openai.responses.stream(model=MODEL, input="Hi"),
    ):
        pass
    assert caught.value.code == "rate_limit_exceeded"


def test_non_retryable_errors_are_typed(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .scenario("only")
        .error(400, "context_length_exceeded", "Too long", type="invalid_request_error")
        .build()
    )
    client = app_session.openai_client(_strict_response_validation=True, max_retries=2)

    with pytest.raises(openai.BadRequestError) as bad:
        client.responses.create(model=MODEL, input="Hi")
    started = time.monotonic()
    with pytest.raises(openai.ConflictError) as exhausted:
        client.responses.create(model=MODEL, input="Hi")

    assert bad.value.code == "context_length_exceeded" and bad.value.type == "invalid_request_error"
    assert exhausted.value.code == "llm_test_server_scenario_exhausted"
    assert time.monotonic() - started < 0.4  # x-should-retry: false


def test_unknown_model_is_404(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().models(MODEL).scenario().text("ok").build())

    with pytest.raises(openai.NotFoundError) as caught:
        app_openai.responses.create(model="gpt-9-imaginary", input="Hi")
    assert caught.value.code == "model_not_found"
    assert caught.value.param == "model"


def test_wrong_credentials_get_401(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().credentials(openai="sk-right").scenario().text("ok").build())
    wrong = app_session.openai_client(api_key="sk-wrong-key-123", max_retries=0)
    right = app_session.openai_client(_strict_response_validation=True, max_retries=0)

    with pytest.raises(openai.AuthenticationError) as caught:
        wrong.responses.create(model=MODEL, input="Hi")
    assert caught.value.code == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        wrong.responses.retrieve("resp_anything")
    assert right.responses.create(model=MODEL, input="Hi").output_text == "ok"
