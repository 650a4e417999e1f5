"""Realistic answers on OpenAI Chat Completions (and Azure, which shares the renderer) through the official
SDK with strict response validation: mixed text + tool calls, reasoning token counts, finish reasons,
refusals, JSON and streamed, and the SDK's ``parse()`` / ``stream()`` helpers (docs/realistic-answers.md)."""

from __future__ import annotations

from functools import partial
from typing import Any

import openai
import pydantic
import pytest

from llmts import SessionClient
from tests.helpers import USER_HI, WEATHER_TOOL
from tests.support.configure import script
from tests.support.openai_tokens import o200k

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
CALL = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}


class Answer(pydantic.BaseModel):
    answer: int


_configure = partial(script, models=[MODEL], scenario={"model": MODEL})


def _create(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("messages", USER_HI)
    return client.chat.completions.create(**kwargs)


def test_mixed_text_and_tool_calls(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"text": "Let me check.", "tool_calls": [CALL]})

    completion = _create(app_openai, tools=[WEATHER_TOOL])

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    assert [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls] == [
        ("call_1", "get_weather", '{"city":"Paris"}')
    ]


def test_mixed_answer_streamed_accumulates(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"text": "Let me check.", "chunks": ["Let me ", "check."], "tool_calls": [CALL]})

    with app_openai.chat.completions.stream(model=MODEL, messages=USER_HI, tools=[WEATHER_TOOL]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_completion()

    # Text deltas come before the tool call's arguments.
    assert kinds.index("content.delta") < kinds.index("tool_calls.function.arguments.delta")
    message = final.choices[0].message
    assert message.content == "Let me check."
    assert message.tool_calls[0].function.arguments == '{"city":"Paris"}'
    assert final.choices[0].finish_reason == "tool_calls"


def test_reasoning_tokens_in_usage(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"text": "42.", "reasoning": {"summary": ["Think."], "tokens": 120}})

    completion = _create(app_openai, reasoning_effort="high")

    usage = completion.usage
    assert usage.completion_tokens_details.reasoning_tokens == 120
    assert usage.completion_tokens == o200k("42.") + 120  # the answer's tokens plus the reasoning
    assert completion.choices[0].message.content == "42."
    (entry,) = app_session.requests()
    assert entry["reasoning_settings"] == {"effort": "high"}


def test_reasoning_tokens_in_streamed_usage(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"text": "42.", "reasoning": {"text": "Hmm.", "tokens": 7}})

    chunks = list(_create(app_openai, stream=True, stream_options={"include_usage": True}))

    assert chunks[-1].usage.completion_tokens_details.reasoning_tokens == 7
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "42."


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_finish_reason(app_session: SessionClient, app_openai: Any, reason: str) -> None:
    _configure(app_session, {"text": "Partial", "finish_reason": reason})

    completion = _create(app_openai)

    assert completion.choices[0].finish_reason == reason
    assert completion.choices[0].message.content == "Partial"


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_finish_reason_streamed(app_session: SessionClient, app_openai: Any, reason: str) -> None:
    _configure(app_session, {"text": "Partial", "finish_reason": reason})

    chunks = list(_create(app_openai, stream=True))

    assert [c.choices[0].finish_reason for c in chunks][-1] == reason


def test_parse_raises_on_length_and_content_filter(app_session: SessionClient, app_openai: Any) -> None:
    _configure(
        app_session,
        {"text": '{"answer": 4', "finish_reason": "length"},
        {"json": {"answer": 4}, "finish_reason": "content_filter"},
    )

    with pytest.raises(openai.LengthFinishReasonError):
        app_openai.chat.completions.parse(model=MODEL, messages=USER_HI, response_format=Answer)
    with pytest.raises(openai.ContentFilterFinishReasonError):
        app_openai.chat.completions.parse(model=MODEL, messages=USER_HI, response_format=Answer)


def test_refusal(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"refusal": "I can't help with that."})

    completion = _create(app_openai)

    message = completion.choices[0].message
    assert (message.content, message.refusal) == (None, "I can't help with that.")
    assert completion.choices[0].finish_reason == "stop"


def test_refusal_with_parse_and_stream(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"refusal": "No."}, {"refusal": "Not that."})

    parsed = app_openai.chat.completions.parse(model=MODEL, messages=USER_HI, response_format=Answer)
    assert (parsed.choices[0].message.parsed, parsed.choices[0].message.refusal) == (None, "No.")

    with app_openai.chat.completions.stream(model=MODEL, messages=USER_HI, response_format=Answer) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_completion()
    assert "refusal.done" in kinds
    assert final.choices[0].message.refusal == "Not that."


def test_azure_renders_the_same(app_session: SessionClient) -> None:
    scenario = {
        "responses": [{"text": "Checking.", "tool_calls": [CALL], "reasoning": {"text": "x", "tokens": 3}}]
    }
    app_session.configure({"azure_deployments": {"dep": MODEL}, "scenarios": [scenario]})
    client = app_session.azure_openai_client(_strict_response_validation=True, max_retries=0)

    completion = client.chat.completions.create(model="dep", messages=USER_HI, tools=[WEATHER_TOOL])

    assert completion.choices[0].message.content == "Checking."
    assert completion.choices[0].message.tool_calls[0].id == "call_1"
    assert completion.usage.completion_tokens_details.reasoning_tokens == 3


def test_azure_content_filter_names_the_filtered_category(app_session: SessionClient) -> None:
    scenario = {"responses": [{"text": "Part", "finish_reason": "content_filter"}]}
    app_session.configure({"azure_deployments": {"dep": MODEL}, "scenarios": [scenario]})
    client = app_session.azure_openai_client(_strict_response_validation=True, max_retries=0)

    completion = client.chat.completions.create(model="dep", messages=USER_HI)

    choice = completion.choices[0]
    assert choice.finish_reason == "content_filter"
    results = choice.model_extra["content_filter_results"]
    assert results["violence"] == {"filtered": True, "severity": "high"}
    assert results["hate"] == {"filtered": False, "severity": "safe"}
