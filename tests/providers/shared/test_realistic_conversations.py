"""Conversation graph steps answer with the same response fixtures as scenarios, so realistic answers
(reasoning, mixed text + tool calls, refusals, finish reasons) work in graphs too: an Anthropic tool loop
with thinking passed back, and the same graph on OpenAI Responses streamed (docs/realistic-answers.md)."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import SessionClient

pytestmark = pytest.mark.sdk

CLAUDE = "claude-test-1"
GPT = "gpt-4.1-mini"
THINKING = {"text": "Need the weather first.", "signature": "sig-1", "tokens": 12}
GRAPH = {
    "models": [CLAUDE, GPT],
    "conversations": [
        {
            "id": "weather",
            "start_at": "ask",
            "steps": [
                {
                    "id": "ask",
                    "when": {"latest_user_contains": "weather", "turn": 1},
                    "response": {
                        "reasoning": THINKING,
                        "text": "Let me check.",
                        "tool_calls": [
                            {"id": "call_w", "name": "get_weather", "arguments": {"city": "Paris"}}
                        ],
                    },
                    "then": ["answer"],
                },
                {
                    "id": "answer",
                    "when": {"tool_result": {"name": "get_weather"}, "turn": 2},
                    "response": {"text": "It is sunny but I stopped", "finish_reason": "length"},
                    "complete": True,
                },
            ],
        }
    ],
}


def test_anthropic_tool_loop_with_thinking_through_a_graph(app_session: SessionClient) -> None:
    app_session.configure(GRAPH)
    client = app_session.for_conversation("a").anthropic_client(
        _strict_response_validation=True, max_retries=0
    )
    tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    messages: list[Any] = [{"role": "user", "content": "What's the weather?"}]

    with client.messages.stream(model=CLAUDE, max_tokens=1024, messages=messages, tools=tools) as stream:
        first = stream.get_final_message()
    assert [block.type for block in first.content] == ["thinking", "text", "tool_use"]
    assert first.content[0].signature == "sig-1"
    messages += [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_w", "content": "sunny"}]},
    ]
    second = client.messages.create(model=CLAUDE, max_tokens=1024, messages=messages, tools=tools)

    assert second.stop_reason == "max_tokens"
    assert [entry["step"] for entry in reversed(app_session.requests())] == ["ask", "answer"]


def test_responses_stream_through_a_graph(app_session: SessionClient) -> None:
    app_session.configure(GRAPH)
    client = app_session.for_conversation("r").openai_client(_strict_response_validation=True, max_retries=0)
    tools: Any = [
        {"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": False}
    ]

    with client.responses.stream(model=GPT, input="What's the weather?", tools=tools) as stream:
        first = stream.get_final_response()
    assert [item.type for item in first.output] == ["reasoning", "message", "function_call"]
    assert first.usage.output_tokens_details.reasoning_tokens == 12

    second = client.responses.create(
        model=GPT,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": "call_w", "output": "sunny"}],
        tools=tools,
    )
    assert (second.status, second.incomplete_details.reason) == ("incomplete", "max_output_tokens")
