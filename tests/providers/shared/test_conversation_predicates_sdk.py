"""``system_contains``, ``declares_tool`` and ``latest_text_matches`` on every provider surface (OpenAI Chat,
Responses, Azure OpenAI, Anthropic, Gemini), driven by the official SDKs against a real server: a request
with the system prompt / instructions, the tool and the matching text starts the graph; one without them
is a 409 naming exactly the predicates that failed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest
from google.genai import errors as genai_errors
from google.genai import types

from llmts import ConfigBuilder, SessionClient

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
SYSTEM = "You are terse. Answer in one word."
QUESTION = "Weather in Paris?"
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}


FORECAST = {
    **(
        ConfigBuilder()
        .models(MODEL)
        .conversation("forecast")
        .step("answer")
        .when(system_contains="You are terse", declares_tool="get_weather")
        .when(latest_text_matches=r"^Weather in \w+\?$")
        .text("Sunny")
        .complete()
        .config.to_dict()
    ),
    "azure_deployments": {"forecaster": MODEL},
}


def _chat(session: SessionClient, conversation: str, matching: bool) -> str:
    client = session.for_conversation(conversation).openai_client(
        _strict_response_validation=True, max_retries=0
    )
    messages: list[Any] = [{"role": "user", "content": QUESTION if matching else "weather in Paris?"}]
    tools: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}]
    if matching:
        return str(
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "system", "content": SYSTEM}, *messages], tools=tools
            )
            .choices[0]
            .message.content
        )
    return str(client.chat.completions.create(model=MODEL, messages=messages).choices[0].message.content)


def _responses(session: SessionClient, conversation: str, matching: bool) -> str:
    client = session.for_conversation(conversation).openai_client(
        _strict_response_validation=True, max_retries=0
    )
    if matching:
        tools: Any = [{"type": "function", "name": "get_weather", "parameters": PARAMETERS}]
        return str(
            client.responses.create(model=MODEL, instructions=SYSTEM, input=QUESTION, tools=tools).output_text
        )
    return str(client.responses.create(model=MODEL, input="weather in Paris?").output_text)


def _azure(session: SessionClient, conversation: str, matching: bool) -> str:
    client = session.for_conversation(conversation).azure_openai_client(
        _strict_response_validation=True, max_retries=0
    )
    if matching:
        messages: Any = [{"role": "developer", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
        tools: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}]
        reply = client.chat.completions.create(model="forecaster", messages=messages, tools=tools)
    else:
        messages = [{"role": "user", "content": "weather in Paris?"}]
        reply = client.chat.completions.create(model="forecaster", messages=messages)
    return str(reply.choices[0].message.content)


def _anthropic(session: SessionClient, conversation: str, matching: bool) -> str:
    client = session.for_conversation(conversation).anthropic_client(
        _strict_response_validation=True, max_retries=0
    )
    if matching:
        message = client.messages.create(
            model=MODEL,
            max_tokens=64,
            system=[{"type": "text", "text": SYSTEM}],
            tools=[{"name": "get_weather", "input_schema": PARAMETERS}],
            messages=[{"role": "user", "content": QUESTION}],
        )
    else:
        message = client.messages.create(
            model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "weather in Paris?"}]
        )
    return str(message.content[0].text)


def _gemini(session: SessionClient, conversation: str, matching: bool) -> str:
    client = session.for_conversation(conversation).gemini_client()
    if matching:
        declaration = types.FunctionDeclaration(name="get_weather", parameters_json_schema=PARAMETERS)
        config = types.GenerateContentConfig(
            system_instruction=SYSTEM,
            tools=[types.Tool(function_declarations=[declaration])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        return str(client.models.generate_content(model=MODEL, contents=QUESTION, config=config).text)
    return str(client.models.generate_content(model=MODEL, contents="weather in Paris?").text)


SURFACES: dict[str, tuple[Callable[[SessionClient, str, bool], str], type[Exception]]] = {
    "openai-chat": (_chat, openai.ConflictError),
    "openai-responses": (_responses, openai.ConflictError),
    "azure-openai": (_azure, openai.ConflictError),
    "anthropic": (_anthropic, anthropic.ConflictError),
    "gemini": (_gemini, genai_errors.ClientError),
}


@pytest.mark.parametrize("surface", list(SURFACES))
def test_system_tool_and_pattern_predicates(app_session: SessionClient, surface: str) -> None:
    send, conflict = SURFACES[surface]
    app_session.configure(FORECAST)

    assert send(app_session, "match", True) == "Sunny"
    (state,) = app_session.conversations("match")
    assert state["executed_steps"] == ["answer"]

    with pytest.raises(conflict) as caught:
        send(app_session, "miss", False)
    text = str(caught.value)
    assert "conversation_step_mismatch" in text or "does not start" in text
    assert "failed: declares_tool, system_contains, latest_text_matches" in text
    assert app_session.conversations("miss") == []


def test_explain_sees_the_system_field_and_declared_tools(app_session: SessionClient) -> None:
    app_session.configure(FORECAST)
    messages = [{"role": "user", "text": QUESTION}]
    bare = app_session.explain({"messages": messages}, "anthropic")
    assert bare["candidates"][0]["steps"][0]["failed"] == ["declares_tool", "system_contains"]
    full = app_session.explain(
        {"messages": messages, "system": SYSTEM, "tool_names": ["get_weather"]}, "anthropic"
    )
    assert (full["outcome"], full["selected_step"]) == ("start", "answer")
