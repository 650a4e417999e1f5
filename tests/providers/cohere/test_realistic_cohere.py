"""Realistic answers on Cohere v2 chat (docs/realistic-answers.md): the ``reasoning`` fixture as Cohere's
``thinking`` content block, JSON and streamed, through the official ``cohere`` SDK (``ClientV2``), the raw
block order on the wire, the ``thinking`` request parameter in the journal, thinking blocks passed back,
finish reasons, pacing of every Cohere stream kind, and the 429 of an exhausted ``rate_limits`` window."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest
from cohere.errors import TooManyRequestsError

from llmts import SessionClient
from tests.providers.cohere.cohere_helpers import HI, MODEL, WEATHER
from tests.providers.cohere.cohere_helpers import chat as _chat
from tests.providers.cohere.cohere_helpers import entries as _entries
from tests.providers.cohere.cohere_helpers import stream as _stream
from tests.support.configure import script
from tests.support.in_process import send_raw
from tests.support.sse import typed_events

pytestmark = pytest.mark.sdk

THOUGHT = "The user greets me; answer briefly."
CALL = {"id": "call_w", "name": "get_weather", "arguments": {"city": "Paris"}}


@pytest.fixture
def client(app_session: SessionClient) -> Any:
    return app_session.cohere_client(max_retries=0)


# The same on the real server, for this module's smoke tests over real HTTP.
@pytest.fixture
def live_client(llmts_session: SessionClient) -> Any:
    return llmts_session.cohere_client(max_retries=0)


_configure = partial(script, models=[MODEL])


def test_reasoning_is_a_thinking_block_before_the_text(app_session: SessionClient, client: Any) -> None:
    _configure(app_session, {"reasoning": {"text": THOUGHT, "tokens": 20}, "text": "Hello!"})

    reply = _chat(client, thinking={"type": "enabled", "token_budget": 500})

    thinking, text = reply.message.content
    assert (thinking.type, thinking.thinking) == ("thinking", THOUGHT)
    assert (text.type, text.text) == ("text", "Hello!")
    assert reply.finish_reason == "COMPLETE"
    assert reply.usage.tokens.output_tokens >= 20  # the reasoning tokens count as output
    (entry,) = _entries(app_session)
    assert entry["reasoning_settings"] == {"type": "enabled", "token_budget": 500}


def test_reasoning_with_tool_calls_and_a_plan(app_session: SessionClient, client: Any) -> None:
    _configure(
        app_session, {"reasoning": {"summary": ["Look it up."]}, "text": "Checking.", "tool_calls": [CALL]}
    )

    reply = _chat(client, tools=[WEATHER])

    assert [(block.type, block.thinking) for block in reply.message.content] == [("thinking", "Look it up.")]
    assert reply.message.tool_plan == "Checking."
    assert reply.message.tool_calls[0].function.name == "get_weather"
    assert reply.finish_reason == "TOOL_CALL"


def test_reasoning_streams_as_its_own_content_block(app_session: SessionClient, client: Any) -> None:
    _configure(
        app_session,
        {"reasoning": {"text": THOUGHT}, "text": "Hello there!", "chunks": ["Hello ", "there!"]},
    )

    events = _stream(client)

    shape = [(e.type, getattr(e, "index", None)) for e in events]
    assert shape == [
        ("message-start", None),
        ("content-start", 0),
        ("content-delta", 0),
        ("content-end", 0),
        ("content-start", 1),
        ("content-delta", 1),
        ("content-delta", 1),
        ("content-end", 1),
        ("message-end", None),
    ]
    assert events[1].delta.message.content.type == "thinking"
    assert events[2].delta.message.content.thinking == THOUGHT
    assert events[4].delta.message.content.type == "text"
    assert "".join(e.delta.message.content.text for e in events[5:7]) == "Hello there!"


def test_raw_block_order_and_redacted_reasoning_sends_no_block(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"reasoning": {"text": THOUGHT}, "text": "Hi."},
        {"reasoning": {"text": "hidden", "redacted": True}, "text": "Hi."},
        {"reasoning": {"text": "hidden", "redacted": True}, "text": "Hi."},
    )
    auth = {"Authorization": "Bearer co-key"}
    body = {"model": MODEL, "messages": HI, "stream": True}
    raw = send_raw(app_session, "POST", "/cohere/v2/chat", body, auth).body
    frames = [data for _, data in typed_events(raw)]
    assert frames[1] == {
        "type": "content-start",
        "index": 0,
        "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}},
    }
    assert frames[2] == {
        "type": "content-delta",
        "index": 0,
        "delta": {"message": {"content": {"thinking": THOUGHT}}},
    }
    assert [f["type"] for f in frames[3:5]] == ["content-end", "content-start"] and frames[4]["index"] == 1

    whole = send_raw(app_session, "POST", "/cohere/v2/chat", {**body, "stream": False}, auth)
    assert whole.json()["message"]["content"] == [{"type": "text", "text": "Hi."}]
    streamed = send_raw(app_session, "POST", "/cohere/v2/chat", body, auth).body
    assert b"thinking" not in streamed


def test_thinking_blocks_passed_back_are_not_text(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "conversations": [
                {
                    "steps": [
                        {
                            "id": "only",
                            "when": {"latest_user_equals": "Again"},
                            "response": {"text": "Matched."},
                            "complete": True,
                        }
                    ]
                }
            ],
        }
    )
    history = [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "Hmm."}, {"type": "text", "text": "Hello"}],
        },
        {"role": "user", "content": "Again"},
    ]
    assert _chat(client, messages=history).message.content[0].text == "Matched."
    (entry,) = _entries(app_session)
    assert (entry["status"], entry["step"]) == (200, "only")


@pytest.mark.parametrize(("reason", "expected"), [("length", "MAX_TOKENS"), ("content_filter", "COMPLETE")])
def test_finish_reasons(app_session: SessionClient, client: Any, reason: str, expected: str) -> None:
    _configure(
        app_session,
        {"text": "Partial", "finish_reason": reason},
        {"text": "Partial", "finish_reason": reason},
    )
    assert _chat(client).finish_reason == expected
    assert _stream(client)[-1].delta.finish_reason == expected


def test_streams_are_paced(llmts_session: SessionClient, live_client: Any) -> None:
    pacing = {"ttft_ms": 150, "tokens_per_second": 200}
    _configure(
        llmts_session,
        {
            "reasoning": {"text": THOUGHT * 3},
            "text": "One two three four.",
            "chunks": ["One two ", "three four."],
        },
        {"tool_calls": [CALL]},
        pacing=pacing,
    )
    assert _stream(live_client)[-1].type == "message-end"
    assert _stream(live_client, tools=[WEATHER])[-1].type == "message-end"
    for entry in _entries(llmts_session):
        tokens = entry["usage"]["output_tokens"]
        assert entry["pacing_planned_ms"] == pytest.approx(150 + tokens * 5, abs=1)
        assert entry["first_frame_monotonic_seconds"] - entry["started_monotonic_seconds"] >= 0.15
        spread = entry["last_frame_monotonic_seconds"] - entry["first_frame_monotonic_seconds"]
        assert spread >= tokens * 0.005 - 0.02


def test_rate_limit_429_is_too_many_requests_and_the_sdk_retries_into_the_next_window(
    llmts_session: SessionClient,
) -> None:
    _configure(
        llmts_session,
        {"text": "first"},
        {"text": "second"},
        rate_limits={"requests_per_minute": 1, "window_seconds": 1},
    )
    strict = llmts_session.cohere_client(max_retries=0)
    assert _chat(strict).message.content[0].text == "first"
    with pytest.raises(TooManyRequestsError) as error:
        _chat(strict)
    assert error.value.status_code == 429
    assert isinstance(error.value.body, dict) and error.value.body["code"] == "rate_limit_exceeded"
    assert 0 < int(error.value.headers["retry-after-ms"]) <= 1000

    started = time.monotonic()
    retrying = llmts_session.cohere_client(max_retries=2)
    assert _chat(retrying).message.content[0].text == "second"  # waited retry-after-ms, then answered
    assert time.monotonic() - started < 4
    assert [e["status"] for e in reversed(_entries(llmts_session))][-2:] == [429, 200]
