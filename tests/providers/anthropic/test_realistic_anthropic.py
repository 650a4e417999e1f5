"""Realistic answers on Anthropic Messages through the official SDK with strict response validation:
``thinking`` / ``redacted_thinking`` blocks with signatures (and their stream deltas), text before
``tool_use``, ``max_tokens`` and ``refusal`` stop reasons, JSON, streamed and ``messages.stream()``
``get_final_message()`` (docs/realistic-answers.md)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from llmts import SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

MODEL = "claude-test-1"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "name": "get_weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CALL = {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}
THINKING = {"text": "The user wants weather.", "signature": "sig-123", "tokens": 40}


@pytest.fixture
def client(app_session: SessionClient) -> Any:
    return app_session.anthropic_client(_strict_response_validation=True, max_retries=0)


_configure = partial(script, models=[MODEL], scenario={"model": MODEL})


def _create(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("max_tokens", 2048)
    kwargs.setdefault("messages", HI)
    return client.messages.create(**kwargs)


def test_thinking_text_and_tool_use(app_session: SessionClient, client: Any) -> None:
    _configure(app_session, {"reasoning": THINKING, "text": "Let me check.", "tool_calls": [CALL]})

    message = _create(client, tools=[WEATHER], thinking={"type": "enabled", "budget_tokens": 1024})

    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    thinking = message.content[0]
    assert (thinking.thinking, thinking.signature) == ("The user wants weather.", "sig-123")
    assert message.content[1].text == "Let me check."
    assert (message.content[2].id, message.content[2].input) == ("toolu_1", {"city": "Paris"})
    assert message.stop_reason == "tool_use"
    (entry,) = app_session.requests()
    assert entry["reasoning_settings"] == {"type": "enabled", "budget_tokens": 1024}


def test_thinking_streamed_with_get_final_message(app_session: SessionClient, client: Any) -> None:
    _configure(
        app_session,
        {
            "reasoning": THINKING,
            "text": "Let me check.",
            "chunks": ["Let me", " check."],
            "tool_calls": [CALL],
        },
    )

    with client.messages.stream(
        model=MODEL,
        max_tokens=2048,
        messages=HI,
        tools=[WEATHER],
        thinking={"type": "enabled", "budget_tokens": 1024},
    ) as stream:
        events = [(event.type, getattr(getattr(event, "delta", None), "type", None)) for event in stream]
        final = stream.get_final_message()

    assert ("content_block_delta", "thinking_delta") in events
    assert events.index(("content_block_delta", "signature_delta")) < events.index(
        ("content_block_delta", "text_delta")
    )
    assert [block.type for block in final.content] == ["thinking", "text", "tool_use"]
    assert (final.content[0].thinking, final.content[0].signature) == ("The user wants weather.", "sig-123")
    assert final.content[1].text == "Let me check."
    assert final.content[2].input == {"city": "Paris"}
    assert final.stop_reason == "tool_use"


def test_thinking_block_passed_back_in_tool_loop(app_session: SessionClient, client: Any) -> None:
    _configure(app_session, {"reasoning": THINKING, "tool_calls": [CALL]}, {"text": "Sunny."})

    first = _create(client, tools=[WEATHER], thinking={"type": "enabled", "budget_tokens": 1024})
    messages = [
        *HI,
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "22C"}]},
    ]
    second = _create(
        client, tools=[WEATHER], messages=messages, thinking={"type": "enabled", "budget_tokens": 1024}
    )

    assert [block.type for block in first.content] == ["thinking", "tool_use"]
    assert second.content[0].text == "Sunny."


def test_redacted_thinking(app_session: SessionClient, client: Any) -> None:
    _configure(
        app_session,
        {"reasoning": {"redacted": True, "signature": "opaque=="}, "text": "Hi."},
        {"text": "x"},
    )

    message = _create(client)
    assert (message.content[0].type, message.content[0].data) == ("redacted_thinking", "opaque==")

    _configure(app_session, {"reasoning": {"redacted": True, "signature": "opaque=="}, "text": "Hi."})
    with client.messages.stream(model=MODEL, max_tokens=64, messages=HI) as stream:
        final = stream.get_final_message()
    assert final.content[0].type == "redacted_thinking" and final.content[0].data == "opaque=="
    assert final.content[1].text == "Hi."


@pytest.mark.parametrize(
    ("reason", "stop"), [("length", "max_tokens"), ("refusal", "refusal"), ("content_filter", "refusal")]
)
def test_stop_reasons(app_session: SessionClient, client: Any, reason: str, stop: str) -> None:
    _configure(
        app_session,
        {"text": "Partial", "finish_reason": reason},
        {"text": "Partial", "finish_reason": reason},
    )

    assert _create(client).stop_reason == stop
    with client.messages.stream(model=MODEL, max_tokens=64, messages=HI) as stream:
        final = stream.get_final_message()
    assert (final.stop_reason, final.content[0].text) == (stop, "Partial")


def test_refusal(app_session: SessionClient, client: Any) -> None:
    _configure(app_session, {"refusal": "I can't help with that."})

    message = _create(client)

    assert message.stop_reason == "refusal"
    assert [block.text for block in message.content] == ["I can't help with that."]


def test_reasoning_tokens_count_as_output(app_session: SessionClient, client: Any) -> None:
    _configure(app_session, {"reasoning": THINKING, "text": "Hi."})

    message = _create(client)

    assert message.usage.output_tokens == 40 + 1  # Anthropic bills thinking as output tokens
