"""Reasoning blocks passed back in a tool loop are verified (docs/realistic-answers.md, "Strict request
contract"): the blocks llmts issued, returned unchanged through the official SDKs, pass; a changed text, a
forged signature or a block from another seed is the provider's own 400 (Anthropic, Anthropic on Bedrock
through InvokeModel and Converse, Gemini). llmts keeps no per-answer state for this: the default
signature is keyed by the session's determinism seed."""

from __future__ import annotations

from functools import partial
from typing import Any

import anthropic
import botocore.config
import botocore.exceptions
import openai
import pytest
from google.genai import errors as genai_errors
from google.genai import types

from llmts import SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

CLAUDE = "claude-test-1"
BEDROCK = "anthropic.claude-3-7-sonnet-20250219-v1:0"
GEMINI = "gemini-2.5-flash"
CALL = {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}
THOUGHT = "I need the weather first."
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOLS: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]


# The first answer, then plain ones for the loop's later turns.
SUNNY = [{"text": "Sunny."}] * 4
_configure = partial(script, models=[CLAUDE, BEDROCK, GEMINI], determinism={"seed": "passback"})


def _loop(first: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": first},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "22C"}]},
    ]


def _claude(client: Any, messages: list[dict[str, Any]]) -> Any:
    return client.messages.create(
        model=CLAUDE, max_tokens=2048, thinking=THINKING, tools=TOOLS, messages=messages
    )


def test_anthropic_blocks_issued_by_llmts_pass_back_and_changed_ones_are_refused(
    app_session: SessionClient,
) -> None:
    _configure(app_session, {"reasoning": {"text": THOUGHT}, "tool_calls": [CALL]}, *SUNNY)  # llmts signs it
    client = app_session.anthropic_client(_strict_response_validation=True, max_retries=0)
    with client.messages.stream(
        model=CLAUDE, max_tokens=2048, thinking=THINKING, tools=TOOLS, messages=_loop("x")[:1]
    ) as stream:
        first = stream.get_final_message()
    thinking = first.content[0]
    assert (thinking.type, thinking.thinking) == ("thinking", THOUGHT) and thinking.signature

    assert _claude(client, _loop(first.content)).content[0].text == "Sunny."  # passed back unchanged

    changed = [thinking.model_dump() | {"thinking": THOUGHT + " Or not."}, first.content[1].model_dump()]
    with pytest.raises(anthropic.BadRequestError) as error:
        _claude(client, _loop(changed))
    assert "messages.1.content.0: Invalid `signature` in `thinking` block" in error.value.message
    entry = app_session.requests(order="asc")[-1]
    assert (entry["status"], entry["error_code"]) == (400, "thinking_block_modified")
    assert _claude(client, _loop(first.content)).content[0].text == "Sunny."  # nothing was consumed

    # Another seed signs differently: the same block is now somebody else's.
    _configure(app_session, {"text": "unused"}, *SUNNY, determinism={"seed": "another"})
    with pytest.raises(anthropic.BadRequestError):
        _claude(client, _loop(first.content))


def test_anthropic_redacted_thinking_passes_back_and_forged_data_is_refused(
    app_session: SessionClient,
) -> None:
    _configure(app_session, {"reasoning": {"text": "secret", "redacted": True}, "tool_calls": [CALL]}, *SUNNY)
    client = app_session.anthropic_client(_strict_response_validation=True, max_retries=0)
    first = _claude(client, _loop("x")[:1])
    assert first.content[0].type == "redacted_thinking"

    assert _claude(client, _loop(first.content)).content[0].text == "Sunny."
    forged = [{"type": "redacted_thinking", "data": "Zm9yZ2Vk"}, first.content[1].model_dump()]
    with pytest.raises(anthropic.BadRequestError) as error:
        _claude(client, _loop(forged))
    assert "Invalid `data` in `redacted_thinking` block" in error.value.message


def test_anthropic_on_bedrock_invoke_verifies_the_blocks_too(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"reasoning": {"text": THOUGHT}, "tool_calls": [CALL]}, *SUNNY)
    client = llmts_session.anthropic_bedrock_client(_strict_response_validation=True, max_retries=0)
    settings: Any = {"model": BEDROCK, "max_tokens": 2048, "thinking": THINKING, "tools": TOOLS}
    first = client.messages.create(messages=_loop("x")[:1], **settings)

    assert client.messages.create(messages=_loop(first.content), **settings).content[0].text == "Sunny."
    changed = [first.content[0].model_dump() | {"thinking": "edited"}, first.content[1].model_dump()]
    with pytest.raises(anthropic.BadRequestError) as error:  # Bedrock's ValidationException, status 400
        client.messages.create(messages=_loop(changed), **settings)
    assert "Invalid `signature` in `thinking` block" in str(error.value)


def test_bedrock_converse_reasoning_content_passes_back_unchanged(llmts_session: SessionClient) -> None:
    redacted = {"reasoning": {"text": "secret", "redacted": True}, "tool_calls": [CALL]}
    thought = {"reasoning": {"text": THOUGHT}, "tool_calls": [CALL]}
    llmts_session.configure(
        {
            "models": [BEDROCK],
            "determinism": {"seed": "passback"},
            "scenarios": [{"responses": [thought, {"text": "Sunny."}, redacted, {"text": "Sunny again."}]}],
        }
    )
    client = llmts_session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))
    tools = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}
    settings: Any = {
        "modelId": BEDROCK,
        "toolConfig": tools,
        "additionalModelRequestFields": {"thinking": THINKING},
    }
    ask = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
    result = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "toolu_1", "content": [{"text": "22C"}]}}],
    }

    first = client.converse(messages=ask, **settings)["output"]["message"]
    assert "reasoningText" in first["content"][0]["reasoningContent"]
    changed = [
        {"reasoningContent": {"reasoningText": {"text": "edited", "signature": "x"}}},
        first["content"][-1],
    ]
    with pytest.raises(botocore.exceptions.ClientError) as error:
        client.converse(messages=[*ask, {"role": "assistant", "content": changed}, result], **settings)
    assert error.value.response["Error"]["Code"] == "ValidationException"
    assert "Invalid `signature` in `thinking` block" in error.value.response["Error"]["Message"]
    second = client.converse(messages=[*ask, first, result], **settings)["output"]["message"]
    assert second["content"] == [{"text": "Sunny."}]

    # The redacted form: a blob botocore decodes to bytes and encodes again on the way back.
    hidden = client.converse(messages=ask, **settings)["output"]["message"]
    assert isinstance(hidden["content"][0]["reasoningContent"]["redactedContent"], bytes)
    again = client.converse(messages=[*ask, hidden, result], **settings)["output"]["message"]
    assert again["content"] == [{"text": "Sunny again."}]


def test_gemini_thought_signature_passes_back_unchanged_and_a_corrupted_one_is_refused(
    app_session: SessionClient,
) -> None:
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    _configure(app_session, {"reasoning": {"text": THOUGHT}, "tool_calls": [call]}, *SUNNY)
    client = app_session.gemini_client()
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True),
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="get_weather")])],
    )
    ask = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    answer = types.Content(
        role="user",
        parts=[
            types.Part(function_response=types.FunctionResponse(name="get_weather", response={"t": "22C"}))
        ],
    )
    first = client.models.generate_content(model=GEMINI, contents=[ask], config=config)
    turn = first.candidates[0].content
    assert turn.parts[0].thought and turn.parts[0].thought_signature

    second = client.models.generate_content(model=GEMINI, contents=[ask, turn, answer], config=config)
    assert second.text == "Sunny."

    corrupted = turn.model_copy(deep=True)
    corrupted.parts[0].thought_signature = b"corrupted"
    with pytest.raises(genai_errors.ClientError) as error:
        client.models.generate_content(model=GEMINI, contents=[ask, corrupted, answer], config=config)
    assert (error.value.code, error.value.status) == (400, "INVALID_ARGUMENT")
    assert str(error.value.message).startswith("Corrupted thought signature.")


def test_responses_encrypted_content_passes_back_and_a_changed_one_is_refused(
    app_session: SessionClient,
) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    app_session.configure(
        {
            "determinism": {"seed": "passback"},
            "scenarios": [
                {
                    "responses": [{"reasoning": {"summary": ["Look it up."]}, "tool_calls": [call]}]
                    + [{"text": "Sunny."}] * 2
                }
            ],
        }
    )
    client = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    tool = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
    settings: Any = {
        "model": "o3",
        "tools": [tool],
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    ask: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.responses.create(input=ask, **settings)
    reasoning, function_call = (item.model_dump(exclude_none=True) for item in first.output)
    assert reasoning["encrypted_content"]
    output = {"type": "function_call_output", "call_id": "call_1", "output": "22C"}

    assert (
        client.responses.create(input=[*ask, reasoning, function_call, output], **settings).output_text
        == "Sunny."
    )
    changed = reasoning | {"encrypted_content": reasoning["encrypted_content"][:-8] + "AAAAAAA="}
    with pytest.raises(openai.BadRequestError) as error:
        client.responses.create(input=[*ask, changed, function_call, output], **settings)
    assert error.value.code == "invalid_encrypted_content"
    assert "could not be verified" in error.value.message
