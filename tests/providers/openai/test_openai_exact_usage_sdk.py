"""Exact OpenAI usage through the official SDKs against a real server (docs/tokens.md): the usage equals
the count of the model's own encoding, the token-count endpoints agree with the usage of the same
request, on OpenAI (exact) and on Anthropic and Gemini (estimates)."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from llmts import ConfigBuilder, SessionClient
from tests.providers.chat_completions.test_token_count import (
    COOKBOOK_MESSAGES,
    COOKBOOK_TOOL_MESSAGES,
    COOKBOOK_TOOLS,
)
from tests.support.openai_tokens import cl100k, message_tokens, o200k, prompt_tokens

pytestmark = pytest.mark.sdk

ANSWER = "Плохая новость: nous n'avons pas le temps. 結論は明日です。"
TOOL_ARGUMENTS = {"location": "San Francisco, CA", "unit": "celsius"}


def _configure(session: SessionClient, answers: int = 1) -> None:
    builder = ConfigBuilder().scenario(terminal_policy="repeat_last_response")
    for _ in range(answers):
        builder = builder.text(ANSWER)
    session.configure(builder.build())


@pytest.mark.parametrize(("model", "published", "count"), [("gpt-4o", 124, o200k), ("gpt-4", 129, cl100k)])
def test_chat_usage_is_the_cookbooks_published_count(
    llmts_session: SessionClient, openai_client: Any, model: str, published: int, count: Any
) -> None:
    _configure(llmts_session)

    completion = openai_client.chat.completions.create(model=model, messages=COOKBOOK_MESSAGES)
    streamed = list(
        openai_client.chat.completions.create(
            model=model, messages=COOKBOOK_MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )

    assert completion.usage.prompt_tokens == published
    assert completion.usage.completion_tokens == count(ANSWER)
    assert completion.usage.total_tokens == published + count(ANSWER)
    assert streamed[-1].usage.model_dump() == completion.usage.model_dump()
    journaled = [entry["usage"] for entry in llmts_session.requests()]
    assert [(u["input_tokens"], u["output_tokens"]) for u in journaled] == [(published, count(ANSWER))] * 2


def test_chat_with_tools_and_a_tool_call_answer(llmts_session: SessionClient, openai_client: Any) -> None:
    llmts_session.configure(
        ConfigBuilder().scenario().tool_call("get_current_weather", TOOL_ARGUMENTS).build()
    )

    completion = openai_client.chat.completions.create(
        model="gpt-4o-mini", messages=COOKBOOK_TOOL_MESSAGES, tools=COOKBOOK_TOOLS
    )

    (call,) = completion.choices[0].message.tool_calls
    assert completion.usage.prompt_tokens == 101  # the cookbook's published count
    assert completion.usage.completion_tokens == o200k("get_current_weather") + o200k(call.function.arguments)


def _png_url(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, format="PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def test_an_image_counts_by_the_tile_rule(llmts_session: SessionClient, openai_client: Any) -> None:
    _configure(llmts_session)
    content = [
        {"type": "text", "text": "Describe it."},
        {"type": "image_url", "image_url": {"url": _png_url(1024, 1024), "detail": "high"}},
    ]

    completion = openai_client.chat.completions.create(
        model="gpt-4.1", messages=[{"role": "user", "content": content}]
    )

    assert completion.usage.prompt_tokens == prompt_tokens(("user", "Describe it.")) + 765


def _count(client: Any, request: dict[str, Any]) -> int:
    """``responses.input_tokens.count`` where the SDK has it, else the same route through its client."""
    resource = getattr(client.responses, "input_tokens", None)
    if resource is not None:
        return int(resource.count(**request).input_tokens)
    answer = client.post("/responses/input_tokens", body=request, cast_to=object)
    assert answer["object"] == "response.input_tokens"
    return int(answer["input_tokens"])


def test_responses_usage_agrees_with_input_tokens_count(
    llmts_session: SessionClient, openai_client: Any
) -> None:
    _configure(llmts_session, answers=2)
    tools = [
        {
            "type": "function",
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": COOKBOOK_TOOLS[0]["function"]["parameters"],
        }
    ]
    request: dict[str, Any] = {
        "model": "gpt-5-mini",
        "instructions": "Réponds en français.",
        "input": [{"role": "user", "content": "Quel temps fait-il à Paris ?"}],
        "tools": tools,
    }

    counted = _count(openai_client, request)
    response = openai_client.responses.create(**request)
    follow_up = {**request, "input": "Et demain ?", "previous_response_id": response.id}
    counted_again = _count(openai_client, follow_up)
    followed = openai_client.responses.create(**follow_up)

    assert counted == response.usage.input_tokens
    assert response.usage.output_tokens == o200k(ANSWER)
    assert counted_again == followed.usage.input_tokens
    # The restored history: the first turn's input and answer, then the new input (instructions are not
    # carried over).
    restored = message_tokens("Quel temps fait-il à Paris ?") + message_tokens(ANSWER, "assistant")
    difference = message_tokens("Et demain ?") + restored - message_tokens("Quel temps fait-il à Paris ?")
    assert followed.usage.input_tokens - response.usage.input_tokens == difference


def test_anthropic_count_tokens_agrees_with_the_usage(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text(ANSWER).build())
    client = llmts_session.anthropic_client(_strict_response_validation=True, max_retries=0)
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "system": "Answer briefly.",
        "messages": [{"role": "user", "content": "Quel temps fait-il à Paris ?"}],
        "tools": [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}],
    }

    counted = client.messages.count_tokens(**request)
    message = client.messages.create(max_tokens=256, **request)

    assert counted.input_tokens == message.usage.input_tokens > 0


def test_gemini_count_tokens_agrees_with_the_usage(llmts_session: SessionClient) -> None:
    from google.genai import types

    llmts_session.configure(ConfigBuilder().scenario().text(ANSWER).build())
    client = llmts_session.gemini_client()
    contents = [types.Content(role="user", parts=[types.Part(text="Quel temps fait-il à Paris ?")])]
    model = "gemini-2.5-flash"

    counted = client.models.count_tokens(model=model, contents=contents)
    answered = client.models.generate_content(model=model, contents=contents)

    assert counted.total_tokens == answered.usage_metadata.prompt_token_count > 0
