"""Cohere v2 through the official ``cohere`` SDK: typed errors, retries, the journal and verification,
determinism, conversation identities, and one scenario shared with the other providers."""

from __future__ import annotations

import time
from typing import Any

import cohere
import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from tests.providers.cohere.cohere_helpers import HI, MODEL, WEATHER
from tests.providers.cohere.cohere_helpers import builder as _builder
from tests.providers.cohere.cohere_helpers import chat as _chat
from tests.providers.cohere.cohere_helpers import entries as _entries
from tests.providers.cohere.cohere_helpers import stream as _stream

pytestmark = pytest.mark.sdk


@pytest.fixture
def client(app_session: SessionClient) -> Any:
    return app_session.cohere_client(max_retries=0)


# The same on the real server, for this module's smoke tests over real HTTP.
@pytest.fixture
def live_client(llmts_session: SessionClient) -> Any:
    return llmts_session.cohere_client(max_retries=0)


# --- errors and retries -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, cohere.BadRequestError),
        (401, cohere.UnauthorizedError),
        (403, cohere.ForbiddenError),
        (404, cohere.NotFoundError),
        (422, cohere.UnprocessableEntityError),
        (429, cohere.TooManyRequestsError),
        (498, cohere.InvalidTokenError),
        (499, cohere.ClientClosedRequestError),
        (500, cohere.InternalServerError),
        (501, cohere.NotImplementedError),
        (503, cohere.ServiceUnavailableError),
        (504, cohere.GatewayTimeoutError),
    ],
)
def test_scripted_errors_raise_the_sdk_class(
    app_session: SessionClient, client: Any, status: int, error_class: type[Exception]
) -> None:
    app_session.configure(_builder().scenario().error(status, "scripted", "Scripted failure").build())

    with pytest.raises(error_class) as caught:
        _chat(client)

    error: Any = caught.value
    assert error.status_code == status
    assert error.body["message"] == "Scripted failure" and error.body["code"] == "scripted"
    assert error.body["id"].startswith("req_")


def test_unknown_model_and_bad_request(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("unused").build())

    with pytest.raises(cohere.NotFoundError) as missing:
        _chat(client, model="command-nope")
    with pytest.raises(cohere.BadRequestError) as bad:
        _chat(client, tool_choice="SOMETIMES")

    assert missing.value.body["code"] == "model_not_found"
    assert "tool_choice" in bad.value.body["message"]
    assert len(app_session.requests(provider="cohere")) == 2  # journaled, nothing consumed
    assert _chat(client).message.content[0].text == "unused"


def test_bearer_credential(app_session: SessionClient) -> None:
    app_session.configure(
        _builder()
        .credentials(cohere="co-secret")
        .scenario(terminal_policy="repeat_last_response")
        .text("ok")
        .build()
    )

    assert (
        app_session.cohere_client(max_retries=0).chat(model=MODEL, messages=HI).message.content[0].text
        == "ok"
    )
    wrong = app_session.cohere_client(api_key="wrong", max_retries=0)
    with pytest.raises(cohere.UnauthorizedError) as caught:
        wrong.chat(model=MODEL, messages=HI)
    assert caught.value.body["code"] == "invalid_api_key"


def test_429_is_retried_after_retry_after(app_session: SessionClient) -> None:
    app_session.configure(
        _builder()
        .scenario()
        .error(429, "rate_limited", "Slow down", retry_after=0.4)
        .error(429, "rate_limited", "Slow down", retry_after=0.4)
        .text("Finally.")
        .build()
    )
    client = app_session.cohere_client()  # the SDK's default: two retries

    started = time.monotonic()
    reply = _chat(client)

    assert reply.message.content[0].text == "Finally."
    assert time.monotonic() - started >= 0.8  # retry-after-ms honoured twice
    statuses = [entry["status"] for entry in _entries(app_session, order="asc")]
    assert statuses == [429, 429, 200]


def test_429_after_the_retries_raises_too_many_requests(app_session: SessionClient) -> None:
    app_session.configure(
        _builder()
        .scenario(terminal_policy="repeat_last_response")
        .error(429, "rate_limited", "No", retry_after=0.01)
        .build()
    )

    with pytest.raises(cohere.TooManyRequestsError) as caught:
        _chat(app_session.cohere_client(max_retries=2))

    assert caught.value.headers["retry-after-ms"] == "10"
    assert len(_entries(app_session)) == 3


def test_llmts_diagnostics_are_retried_without_waiting(app_session: SessionClient) -> None:
    """The SDK retries every 409 and cannot be told not to: llmts asks for a 1 ms wait (cohere 5.x and
    6.x ignore ``retry-after-ms`` and back off about 1 s, then 2 s)."""
    app_session.configure(_builder().scenario().text("only one").build())
    client = app_session.cohere_client()
    _chat(client)

    started = time.monotonic()
    with pytest.raises(cohere.core.ApiError) as caught:
        _chat(client)

    assert caught.value.status_code == 409
    assert caught.value.body["code"] == "llm_test_server_scenario_exhausted"
    if int(cohere.__version__.split(".")[0]) >= 7:
        assert time.monotonic() - started < 0.5
    assert len(_entries(app_session)) == 4


# --- journal, verification, determinism, conversations ------------------------------------------


def test_journal_and_terminal_marker_verification(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        _builder()
        .scenario()
        .text("Streamed.", chunks=["Stream", "ed."])
        .tool_call("get_weather", {"city": "Rome"}, id="c9")
        .build()
    )

    _stream(client)
    _chat(client, tools=[WEATHER])

    streamed, plain = _entries(app_session, order="asc")
    assert (streamed["provider"], streamed["model"], streamed["operation"]) == ("cohere", MODEL, "chat")
    assert streamed["streaming"] is True and streamed["terminal_marker_observed"] is True
    assert streamed["emitted_content_frames"] == 2 and streamed["transport_outcome"] == "completed"
    assert plain["streaming"] is False and plain["success"] is True
    result = app_session.verify(
        requests=[
            {"name": "streamed", "query": {"streaming": True}, "require_streaming_terminal_marker": True},
            {
                "name": "tool",
                "query": {"streaming": False},
                "tools": [{"kind": "response_call", "name": "get_weather", "arguments": {"city": "Rome"}}],
            },
        ],
        in_order=True,
        no_unexpected_calls=True,
    )
    assert result.passed, result.failures


def test_seeded_ids_are_the_same_in_two_sessions(llmts_app_server: LlmTestServer) -> None:
    config = {
        "models": [MODEL],
        "determinism": {"seed": "run-42", "fixed_utc": "2026-01-01T00:00:00Z"},
        "scenarios": [
            {
                "responses": [
                    {"text": "Hello.", "chunks": ["Hel", "lo."]},
                    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
                ]
            }
        ],
    }
    seen = []
    for _ in range(2):
        session = llmts_app_server.create_session()
        try:
            session.configure(config)
            client = session.cohere_client(max_retries=0)
            events = _stream(client)
            call = _chat(client, tools=[WEATHER]).message.tool_calls[0]
            seen.append((events[0].id, call.id, call.function.arguments))
        finally:
            session.delete()
    assert seen[0] == seen[1]
    assert seen[0][1]  # a generated, seeded tool call id


def test_for_conversation_sends_the_conversation_header(app_session: SessionClient) -> None:
    app_session.configure(
        _builder()
        .conversation("greet")
        .step("hi")
        .when(latest_user_equals="Hi", turn=1)
        .text("Hello!")
        .complete()
        .config
    )

    first = app_session.for_conversation("alice").cohere_client(max_retries=0)
    second = app_session.for_conversation("bob").cohere_client(max_retries=0)

    assert _chat(first).message.content[0].text == "Hello!"
    assert _chat(second).message.content[0].text == "Hello!"  # another identity, its own state
    assert {e["conversation"] for e in _entries(app_session)} == {"alice", "bob"}


def test_one_scenario_serves_every_provider_in_order(app_session: SessionClient) -> None:
    """A scenario without a provider filter is one queue for every surface, Cohere included."""
    app_session.configure(
        ConfigBuilder()
        .models("gpt-4.1-mini", "claude-test-1", MODEL)
        .scenario()
        .text("one")
        .text("two")
        .text("three")
        .build()
    )

    first = app_session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=HI
    )
    second = _chat(app_session.cohere_client(max_retries=0))
    third = app_session.anthropic_client(max_retries=0).messages.create(
        model="claude-test-1", max_tokens=16, messages=HI
    )

    assert (first.choices[0].message.content, second.message.content[0].text, third.content[0].text) == (
        "one",
        "two",
        "three",
    )
    assert [e["provider"] for e in app_session.requests(order="asc")] == ["openai", "cohere", "anthropic"]


def test_verify_fails_a_stream_that_ended_before_message_end(
    llmts_session: SessionClient, live_client: Any
) -> None:
    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "text": "Cut short.",
                            "chunks": ["Cut", " short."],
                            "stream_delivery": {"mode": "early_clean_end"},
                        }
                    ]
                }
            ],
        }
    )

    assert [e.type for e in _stream(live_client)][-1] == "content-delta"

    _entries(llmts_session)
    result = llmts_session.verify(
        requests=[
            {"name": "streamed", "query": {"streaming": True}, "require_streaming_terminal_marker": True}
        ]
    )
    assert not result.passed
    assert "terminal" in str(result.failures).lower()
