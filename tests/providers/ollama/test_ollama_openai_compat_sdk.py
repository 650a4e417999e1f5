"""Ollama's OpenAI-compatible API (``/ollama/v1``) through the official ``openai`` SDK with strict response
validation: chat JSON and SSE, tool calls, errors, models, stream faults and the journal (provider
``ollama``, operation ``chat.completions``)."""

from __future__ import annotations

import functools
import json
from typing import Any

import openai
import pytest

from llmts import SessionClient
from tests.helpers import WEATHER_TOOL
from tests.support.configure import script
from tests.support.in_process import sdk_transport
from tests.support.journal import completed_entry

pytestmark = pytest.mark.sdk

MODEL = "qwen3:8b"
HI: list[Any] = [{"role": "user", "content": "Hi"}]


def _client(session: SessionClient, **kwargs: Any) -> openai.OpenAI:
    kwargs.setdefault("max_retries", 0)
    client: openai.OpenAI = session.sdk_client(
        "ollama_openai_client", _strict_response_validation=True, **kwargs
    )
    assert str(client.base_url) == session.provider_base + "/ollama/v1/"
    return client


_configure = functools.partial(script, models=[MODEL])


def test_chat_text_and_stream(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello."}, {"text": "Hello there.", "chunks": ["Hello", " there."]})
    client = _client(llmts_session)

    completion = client.chat.completions.create(model=MODEL, messages=HI)
    chunks = list(client.chat.completions.create(model=MODEL, messages=HI, stream=True))

    assert completion.choices[0].message.content == "Hello." and completion.model == MODEL
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello there."
    entries = llmts_session.requests(order="asc")
    assert [(e["provider"], e["operation"], e["path"]) for e in entries] == [
        ("ollama", "chat.completions", "/ollama/v1/chat/completions")
    ] * 2
    assert entries[1]["terminal_marker_observed"] is True


def test_tool_round_trip(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "Sunny."},
    )
    client = _client(app_session)

    first = client.chat.completions.create(model=MODEL, messages=HI, tools=[WEATHER_TOOL])  # type: ignore[list-item]
    call = (first.choices[0].message.tool_calls or [])[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    messages = [*HI, first.choices[0].message, {"role": "tool", "tool_call_id": call.id, "content": "22C"}]
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER_TOOL])  # type: ignore[list-item]

    assert second.choices[0].message.content == "Sunny."
    assert app_session.requests()[0]["tool_results"]


def test_errors_raise_the_openai_sdk_classes(app_session: SessionClient) -> None:
    _configure(app_session, {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down"}})
    client = _client(app_session)

    with pytest.raises(openai.RateLimitError) as limited:
        client.chat.completions.create(model=MODEL, messages=HI)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="other", messages=HI)

    assert limited.value.code == "rate_limit_exceeded"


def test_the_ollama_credential_guards_the_compatible_api(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "provider_credentials": {"ollama": "o-key"},
            "scenarios": [{"responses": [{"text": "ok"}]}],
        }
    )
    wrong = openai.OpenAI(
        base_url=app_session.provider_base + "/ollama/v1",
        api_key="nope",
        max_retries=0,
        **sdk_transport(app_session, "openai"),
    )

    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model=MODEL, messages=HI)
    assert (
        _client(app_session).chat.completions.create(model=MODEL, messages=HI).choices[0].message.content
        == "ok"
    )


def test_models_list_and_retrieve(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "x"})
    client = _client(app_session)

    assert [m.id for m in client.models.list()] == [MODEL]
    assert client.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("other")


def test_in_stream_faults_apply_to_the_compatible_stream(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {
            "text": "One two.",
            "chunks": ["One ", "two."],
            "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
        },
    )
    chunks = list(_client(llmts_session).chat.completions.create(model=MODEL, messages=HI, stream=True))

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "One "
    entry = completed_entry(llmts_session)
    assert entry["transport_outcome"] == "early_end" and not entry["terminal_marker_observed"]


def test_reasoning_is_shown_as_ollama_shows_it(llmts_session: SessionClient) -> None:
    # Ollama's OpenAI-compatible API puts a model's thinking into ``reasoning`` (message and stream deltas).
    answer = {"text": "42.", "chunks": ["4", "2."], "reasoning": {"text": "Six times seven."}}
    hidden = {"text": "x", "reasoning": {"text": "hidden", "redacted": True}}
    _configure(llmts_session, answer, answer, hidden)
    client = _client(llmts_session)

    completion = client.chat.completions.create(model=MODEL, messages=HI)
    chunks = list(client.chat.completions.create(model=MODEL, messages=HI, stream=True))
    redacted = client.chat.completions.create(model=MODEL, messages=HI)

    message = completion.choices[0].message
    assert message.content == "42." and getattr(message, "reasoning", None) == "Six times seven."
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(getattr(d, "reasoning", None) or "" for d in deltas) == "Six times seven."
    first_content = next(i for i, d in enumerate(deltas) if d.content)
    assert all(not getattr(d, "reasoning", None) for d in deltas[first_content:])  # thinking comes first
    assert "".join(d.content or "" for d in deltas) == "42."
    assert getattr(redacted.choices[0].message, "reasoning", None) is None  # nothing readable to show
    entries = llmts_session.requests(order="asc")
    assert entries[1]["emitted_content_frames"] == 2  # the reasoning delta is not a content frame
