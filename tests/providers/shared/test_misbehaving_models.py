"""Misbehaving models: ``raw_arguments`` (tool arguments sent verbatim, even when they are not JSON) and
``lenient`` fixtures (the fixture/request fit checks skipped), through each official SDK and as raw
frames. What each SDK surfaces is documented in docs/realistic-answers.md, "Misbehaving models".
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from google.genai import types

from llmts import SessionClient
from tests.support.configure import script
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

MODELS = ["gpt-test", "claude-test-1", "gemini-test"]
HI = [{"role": "user", "content": "Hi"}]
TRUNCATED = '{"city": "Par'  # cut off mid-string, as a model stopped early
GARBAGE = "city=Paris"  # not JSON at all
CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
RESPONSES_TOOL = {
    "type": "function",
    "name": "get_weather",
    "parameters": CHAT_TOOL["function"]["parameters"],
}
ANTHROPIC_TOOL = {"name": "get_weather", "input_schema": CHAT_TOOL["function"]["parameters"]}


def _tool_call(raw: str, chunks: list[str] | None = None) -> dict[str, Any]:
    """A response whose one tool call has ``raw`` arguments (streamed in ``chunks`` when given)."""
    call: dict[str, Any] = {"id": "call_1", "name": "get_weather", "raw_arguments": raw}
    if chunks is not None:
        call["arguments_chunks"] = chunks
    return {"tool_calls": [call]}


_REPEAT = {"terminal_policy": "repeat_last_response"}


def _openai(session: SessionClient) -> Any:
    return session.openai_client(_strict_response_validation=True, max_retries=0)


def _gemini_config(**extra: Any) -> types.GenerateContentConfig:
    declaration = types.FunctionDeclaration(
        name="get_weather", parameters=CHAT_TOOL["function"]["parameters"]
    )
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        **extra,
    )


# --- raw_arguments ------------------------------------------------------------------------------


def test_raw_arguments_schema_rules(app_session: SessionClient) -> None:
    from llmts.schema.fixtures import ToolCallFixture

    call = ToolCallFixture(name="f", raw_arguments=TRUNCATED, arguments_chunks=['{"city": ', '"Par'])
    assert call.arguments_text() == TRUNCATED
    assert call.model_dump() == {
        "name": "f",
        "raw_arguments": TRUNCATED,
        "arguments_chunks": ['{"city": ', '"Par'],
    }
    with pytest.raises(ValueError, match="either arguments or raw_arguments"):
        ToolCallFixture(name="f", arguments={"a": 1}, raw_arguments="{")
    with pytest.raises(ValueError, match="concatenate"):
        ToolCallFixture(name="f", raw_arguments="{", arguments_chunks=["}"])


@pytest.mark.parametrize("raw", [TRUNCATED, GARBAGE])
def test_openai_chat_gives_the_raw_string_json_streamed_and_through_the_stream_helper(
    app_session: SessionClient, raw: str
) -> None:
    script(app_session, _tool_call(raw), models=MODELS, scenario=_REPEAT)
    client = _openai(app_session)

    message = (
        client.chat.completions.create(model="gpt-test", messages=HI, tools=[CHAT_TOOL]).choices[0].message
    )
    assert message.tool_calls[0].function.arguments == raw

    deltas = [
        chunk.choices[0].delta.tool_calls[0].function.arguments
        for chunk in client.chat.completions.create(
            model="gpt-test", messages=HI, tools=[CHAT_TOOL], stream=True
        )
        if chunk.choices and chunk.choices[0].delta.tool_calls
    ]
    assert "".join(d or "" for d in deltas) == raw

    with client.chat.completions.stream(model="gpt-test", messages=HI, tools=[CHAT_TOOL]) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.tool_calls[0].function.arguments == raw


@pytest.mark.parametrize("raw", [TRUNCATED, GARBAGE])
def test_openai_responses_gives_the_raw_string_json_and_through_the_stream_helper(
    app_session: SessionClient, raw: str
) -> None:
    script(app_session, _tool_call(raw), models=MODELS, scenario=_REPEAT)
    client = _openai(app_session)

    response = client.responses.create(model="gpt-test", input="Hi", tools=[RESPONSES_TOOL])
    assert response.output[0].arguments == raw

    with client.responses.stream(model="gpt-test", input="Hi", tools=[RESPONSES_TOOL]) as stream:
        deltas = [event.delta for event in stream if event.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == raw
    assert final.output[0].arguments == raw


def test_azure_chat_gives_the_raw_string(app_session: SessionClient) -> None:
    script(app_session, _tool_call(GARBAGE), models=MODELS, scenario=_REPEAT)
    app_session.configure({**app_session.configuration(), "azure_deployments": {"gpt-test": "gpt-test"}})
    client = app_session.azure_openai_client(_strict_response_validation=True, max_retries=0)
    message = (
        client.chat.completions.create(model="gpt-test", messages=HI, tools=[CHAT_TOOL]).choices[0].message
    )
    assert message.tool_calls[0].function.arguments == GARBAGE


def test_anthropic_stream_carries_the_raw_text_as_partial_json(app_session: SessionClient) -> None:
    script(app_session, _tool_call(TRUNCATED, ['{"city": ', '"Par']), models=MODELS, scenario=_REPEAT)
    client = app_session.anthropic_client(_strict_response_validation=True, max_retries=0)

    events = client.messages.create(
        model="claude-test-1", max_tokens=64, messages=HI, tools=[ANTHROPIC_TOOL], stream=True
    )
    pieces = [event.delta.partial_json for event in events if event.type == "content_block_delta"]
    assert pieces == ["", '{"city": ', '"Par']


def test_anthropic_stream_helper_parses_partially_or_raises(app_session: SessionClient) -> None:
    """``messages.stream()`` parses the accumulated text in partial mode: a truncated object becomes what
    parsed so far (``{}`` here, the cut-off string dropped); text that is not JSON raises ``ValueError``."""
    client = app_session.anthropic_client(_strict_response_validation=True, max_retries=0)
    kwargs: dict[str, Any] = {
        "model": "claude-test-1",
        "max_tokens": 64,
        "messages": HI,
        "tools": [ANTHROPIC_TOOL],
    }

    script(app_session, _tool_call(TRUNCATED), models=MODELS, scenario=_REPEAT)
    with client.messages.stream(**kwargs) as stream:
        assert stream.get_final_message().content[0].input == {}

    script(app_session, _tool_call(GARBAGE), models=MODELS, scenario=_REPEAT)
    # anthropic 0.77 (the floor tox's floor-anthropic installs) lets jiter's own ValueError through; newer
    # releases wrap it in their own message.
    with (
        pytest.raises(ValueError, match=r"Unable to parse tool parameter JSON|expected value at line 1"),
        client.messages.stream(**kwargs) as stream,
    ):
        stream.get_final_message()


def test_anthropic_json_body_carries_non_json_text_as_a_string_input(app_session: SessionClient) -> None:
    """A JSON body cannot carry invalid JSON: llmts sends the text as a JSON string in ``input``. The SDK
    without strict validation hands it over as ``str``; with strict validation it refuses the body."""
    script(app_session, _tool_call(GARBAGE), models=MODELS, scenario=_REPEAT)
    kwargs: dict[str, Any] = {
        "model": "claude-test-1",
        "max_tokens": 64,
        "messages": HI,
        "tools": [ANTHROPIC_TOOL],
    }

    lax = app_session.anthropic_client(max_retries=0)
    assert lax.messages.create(**kwargs).content[0].input == GARBAGE

    strict = app_session.anthropic_client(_strict_response_validation=True, max_retries=0)
    with pytest.raises(anthropic.APIResponseValidationError):
        strict.messages.create(**kwargs)


@pytest.mark.parametrize("raw", [TRUNCATED, GARBAGE])
def test_gemini_wraps_text_that_is_not_an_object(app_session: SessionClient, raw: str) -> None:
    """Gemini's ``args`` is a protobuf Struct (always an object): the raw text arrives as ``{"value": raw}``,
    JSON and streamed."""
    script(app_session, _tool_call(raw), models=MODELS, scenario=_REPEAT)
    client = app_session.gemini_client()

    answer = client.models.generate_content(model="gemini-test", contents="Hi", config=_gemini_config())
    assert answer.function_calls[0].args == {"value": raw}
    streamed = [
        chunk.function_calls[0].args
        for chunk in client.models.generate_content_stream(
            model="gemini-test", contents="Hi", config=_gemini_config()
        )
        if chunk.function_calls
    ]
    assert streamed == [{"value": raw}]


def test_raw_frames_carry_the_text_verbatim(app_session: SessionClient) -> None:
    script(app_session, _tool_call(TRUNCATED, ['{"city": ', '"Par']), models=MODELS, scenario=_REPEAT)
    auth = {"Authorization": "Bearer " + app_session.credential("openai")}

    chat = send_raw(
        app_session,
        "POST",
        "/openai/v1/chat/completions",
        {"model": "gpt-test", "messages": HI, "tools": [CHAT_TOOL], "stream": True},
        auth,
    )
    chat_deltas = [
        call["function"].get("arguments", "")
        for line in chat.body.decode().splitlines()
        if line.startswith("data: {")
        for choice in json.loads(line[6:])["choices"]
        for call in choice["delta"].get("tool_calls") or ()
    ]
    assert chat_deltas[1:] == ['{"city": ', '"Par']

    messages = send_raw(
        app_session,
        "POST",
        "/anthropic/v1/messages",
        {
            "model": "claude-test-1",
            "max_tokens": 64,
            "messages": HI,
            "tools": [ANTHROPIC_TOOL],
            "stream": True,
        },
        {"x-api-key": app_session.credential("anthropic")},
    )
    assert b'"partial_json":"{\\"city\\": "' in messages.body
    assert b'"partial_json":"\\"Par"' in messages.body


# --- lenient --------------------------------------------------------------------------------------


def _lenient(session: SessionClient, response: dict[str, Any], lenient: bool) -> None:
    session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"terminal_policy": "repeat_last_response", "responses": [{**response, "lenient": lenient}]}
            ],
        }
    )


UNDECLARED = {"tool_calls": [{"id": "call_1", "name": "delete_everything", "arguments": {}}]}


def test_openai_chat_lenient_fixture_breaks_the_requests_rules(app_session: SessionClient) -> None:
    client = _openai(app_session)

    _lenient(app_session, UNDECLARED, False)
    with pytest.raises(openai.ConflictError) as error:
        client.chat.completions.create(model="gpt-test", messages=HI, tools=[CHAT_TOOL])
    assert error.value.code == "llm_test_server_fixture_mismatch"

    _lenient(app_session, UNDECLARED, True)
    message = (
        client.chat.completions.create(model="gpt-test", messages=HI, tools=[CHAT_TOOL]).choices[0].message
    )
    assert message.tool_calls[0].function.name == "delete_everything"
    # tool_choice none, and no tools at all
    none = client.chat.completions.create(
        model="gpt-test", messages=HI, tools=[CHAT_TOOL], tool_choice="none"
    )
    assert none.choices[0].message.tool_calls[0].function.name == "delete_everything"
    assert (
        client.chat.completions.create(model="gpt-test", messages=HI).choices[0].finish_reason == "tool_calls"
    )

    _lenient(app_session, {"text": "not json"}, True)
    answer = client.chat.completions.create(
        model="gpt-test", messages=HI, response_format={"type": "json_object"}, stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in answer if c.choices) == "not json"


def test_openai_responses_lenient_tool_call_with_tool_choice_none(app_session: SessionClient) -> None:
    _lenient(app_session, UNDECLARED, True)
    client = _openai(app_session)
    response = client.responses.create(
        model="gpt-test", input="Hi", tools=[RESPONSES_TOOL], tool_choice="none"
    )
    assert response.output[0].name == "delete_everything"


def test_anthropic_lenient_undeclared_tool(app_session: SessionClient) -> None:
    client = app_session.anthropic_client(_strict_response_validation=True, max_retries=0)
    kwargs: dict[str, Any] = {
        "model": "claude-test-1",
        "max_tokens": 64,
        "messages": HI,
        "tools": [ANTHROPIC_TOOL],
    }

    _lenient(app_session, UNDECLARED, False)
    with pytest.raises(anthropic.APIStatusError) as error:
        client.messages.create(**kwargs)
    assert error.value.status_code == 409

    _lenient(app_session, UNDECLARED, True)
    with client.messages.stream(**kwargs) as stream:
        assert stream.get_final_message().content[0].name == "delete_everything"


def test_gemini_lenient_undeclared_tool(app_session: SessionClient) -> None:
    _lenient(app_session, UNDECLARED, True)
    client = app_session.gemini_client()
    answer = client.models.generate_content(model="gemini-test", contents="Hi", config=_gemini_config())
    assert answer.function_calls[0].name == "delete_everything"


def test_conversation_step_lenient_and_raw_arguments(app_session: SessionClient) -> None:
    """Conversation graphs answer with the same fixtures: a lenient step calls an undeclared tool with
    raw arguments, and the strict contract still checks the loop that follows."""
    app_session.configure(
        {
            "models": MODELS,
            "conversations": [
                {
                    "id": "rogue",
                    "steps": [
                        {
                            "id": "call",
                            "when": {"turn": 1},
                            "response": {
                                "tool_calls": [
                                    {"id": "call_r", "name": "rm_rf", "raw_arguments": "{'path': '/'"}
                                ],
                                "lenient": True,
                            },
                            "then": ["after"],
                        },
                        {"id": "after", "when": {"turn": 2}, "response": {"text": "done"}, "complete": True},
                    ],
                }
            ],
        }
    )
    client = _openai(app_session)
    first = (
        client.chat.completions.create(model="gpt-test", messages=HI, tools=[CHAT_TOOL]).choices[0].message
    )
    call = first.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("rm_rf", "{'path': '/'")

    history = [*HI, first.model_dump(exclude_none=True)]
    with pytest.raises(openai.BadRequestError) as error:  # the call was never answered
        client.chat.completions.create(
            model="gpt-test", messages=[*history, {"role": "user", "content": "?"}]
        )
    assert error.value.code == "tool_calls_unanswered"

    answered = [*history, {"role": "tool", "tool_call_id": "call_r", "content": "refused"}]
    final = client.chat.completions.create(model="gpt-test", messages=answered, tools=[CHAT_TOOL])
    assert final.choices[0].message.content == "done"
