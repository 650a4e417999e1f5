"""Anthropic errors and retries through the official ``anthropic`` SDK (strict response validation)
against a real server: scripted 429/529/400 answers and the SDK's retries, ``x-should-retry``, unknown
models, credentials and auth tokens, and an exhausted queue. ``tox -e anthropic1`` runs it with
anthropic 1.x."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import pytest

from llmts import SessionClient
from tests.providers.anthropic.sdk_support import (
    HI,
    MODEL,
    body_error_code,
    config_builder,
    create_message,
    # the ``client`` fixture: pytest finds it by name once it is imported here
    strict_anthropic_client,  # noqa: F401
    strict_client,
)

pytestmark = pytest.mark.sdk


# --- errors and retries -------------------------------------------------------------------------


def test_scripted_429_is_retried_into_next_answer(app_session: SessionClient) -> None:
    app_session.configure(
        config_builder()
        .scenario()
        .error(429, "rate_limit_exceeded", "Slow down", retry_after=0.25)
        .text("Later.")
        .build()
    )
    client = strict_client(app_session, max_retries=2)

    started = time.monotonic()
    raw = client.messages.with_raw_response.create(model=MODEL, max_tokens=64, messages=HI)
    elapsed = time.monotonic() - started

    assert raw.parse().content[0].text == "Later."
    assert raw.retries_taken == 1
    assert elapsed >= 0.25  # the SDK honoured retry-after-ms


def test_scripted_429_without_retries(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        config_builder().scenario().error(429, "rate_limit_exceeded", "Slow down", retry_after=2).build()
    )

    with pytest.raises(anthropic.RateLimitError) as caught:
        create_message(client)

    error = caught.value
    assert error.status_code == 429
    assert error.body["error"]["type"] == "rate_limit_error"
    assert error.body["error"]["message"] == "Slow down"
    assert error.response.headers["retry-after"] == "2"
    assert error.response.headers["retry-after-ms"] == "2000"
    assert error.request_id and error.request_id.startswith("req_")
    assert error.request_id == error.body["request_id"]


def test_529_is_overloaded_and_retried(app_session: SessionClient) -> None:
    app_session.configure(
        config_builder()
        .scenario()
        .error(529, "overloaded", "Overloaded", retry_after=0.05)
        .error(529, "overloaded", "Overloaded", retry_after=0.05)
        .text("Back.")
        .build()
    )

    # anthropic exports OverloadedError at the top level from 0.109; older 0.x raise the same class.
    overloaded = getattr(anthropic, "OverloadedError", None) or anthropic._exceptions.OverloadedError
    with pytest.raises(overloaded) as caught:
        create_message(strict_client(app_session))
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"
    # The next attempt gets the second 529, then the answer: retried like the API's overload.
    assert create_message(strict_client(app_session, max_retries=1)).content[0].text == "Back."


def test_non_retryable_400_is_bad_request(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 400,
                                "code": "prompt_too_long",
                                "message": "prompt is too long",
                            }
                        },
                        {"text": "unused"},
                    ]
                }
            ],
        }
    )
    client = strict_client(app_session, max_retries=2)

    with pytest.raises(anthropic.BadRequestError) as caught:
        create_message(client)

    assert caught.value.body["error"] == {
        "type": "invalid_request_error",
        "message": "prompt is too long",
        "code": "prompt_too_long",
        "details": {"error_code": "prompt_too_long"},
    }
    assert create_message(client).content[0].text == "unused"  # no retry consumed it


def test_scripted_should_retry_false_stops_sdk_retries(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 500,
                                "code": "boom",
                                "message": "Broken",
                                "type": "custom_error",
                                "should_retry": False,
                            }
                        },
                        {"text": "still here"},
                    ]
                }
            ],
        }
    )
    client = strict_client(app_session, max_retries=2)

    with pytest.raises(anthropic.InternalServerError) as caught:
        create_message(client)

    assert caught.value.body["error"]["type"] == "custom_error"  # the fixture's type wins
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert create_message(client).content[0].text == "still here"


def test_unknown_model_is_not_found(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().text("ok").build())

    with pytest.raises(anthropic.NotFoundError) as caught:
        create_message(client, model="claude-imaginary")

    assert caught.value.body["error"]["type"] == "not_found_error"
    assert body_error_code(caught.value) == "model_not_found"
    if hasattr(caught.value, "error_code"):  # anthropic 2.x reads error.details.error_code
        assert caught.value.error_code == "model_not_found"


def test_wrong_credentials_are_authentication_error(app_session: SessionClient) -> None:
    app_session.configure(
        config_builder().credentials(anthropic="sk-ant-right").scenario().text("ok").build()
    )
    wrong = strict_client(app_session, api_key="sk-ant-wrong-key")

    with pytest.raises(anthropic.AuthenticationError) as caught:
        create_message(wrong)
    assert caught.value.body["error"]["type"] == "authentication_error"
    assert "sk-ant-right" not in str(caught.value)
    # The failed attempt consumed nothing; the right key (api_key) works, and so does auth_token (Bearer).
    assert create_message(strict_client(app_session)).content[0].text == "ok"


def test_auth_token_is_accepted(llmts_session: SessionClient) -> None:
    llmts_session.configure(config_builder().credentials(anthropic="tok-right").scenario().text("ok").build())
    client = anthropic.Anthropic(
        base_url=f"{llmts_session.provider_base}/anthropic",
        auth_token="tok-right",
        max_retries=0,
        _strict_response_validation=True,
    )

    assert create_message(client).content[0].text == "ok"


def test_exhausted_queue_is_conflict_and_not_retried(app_session: SessionClient) -> None:
    app_session.configure(config_builder().scenario("only").text("once").build())
    client = strict_client(app_session, max_retries=2)
    create_message(client)

    started = time.monotonic()
    with pytest.raises(anthropic.ConflictError) as caught:
        create_message(client)

    assert body_error_code(caught.value) == "llm_test_server_scenario_exhausted"
    assert caught.value.body["error"]["type"] == "conflict_error"
    assert time.monotonic() - started < 0.4  # x-should-retry: false, no backoff
