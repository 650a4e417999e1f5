"""An agent loop against one session: the model (the official openai SDK, strict) asks for a tool, the
agent calls it on the session's MCP server (the official mcp SDK), and the model's next step branches on
what the tool returned; one journal and one verification cover both peers (docs/mcp.md, "A complete
agent test")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.peers.mcp.support import field, run

pytestmark = pytest.mark.sdk

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _config() -> Any:
    return (
        ConfigBuilder()
        .mcp_server("weather")
        .tool("forecast", description="Forecast for a city", input_schema=CITY)
        .text("Sunny, 21 C", when={"city": "Paris"})
        .text("Rain, 12 C", when={"city": "London"})
        .config.conversation("trip")
        .step("ask")
        .when(turn=1)
        .tool_call("forecast", {"city": "Paris"}, id="call_1")
        .then("sunny", "rainy")
        .step("sunny")
        .when_tool_result("forecast", "call_1")
        .when(latest_text_contains="Sunny")
        .text("Pack sunglasses.")
        .complete()
        .step("rainy")
        .when_tool_result("forecast", "call_1")
        .text("Pack an umbrella.")
        .complete()
        .build()
    )


def test_model_tool_call_mcp_tool_model(llmts_session: SessionClient) -> None:
    llmts_session.configure(_config())
    model = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    async def agent(question: str) -> str:
        async with llmts_session.mcp_session("weather") as mcp:
            listed = await mcp.list_tools()
            tools = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": field(t, "input_schema"),
                    },
                }
                for t in listed.tools
            ]
            messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
            while True:
                completion = model.chat.completions.create(
                    model="gpt-4.1-mini", messages=messages, tools=tools
                )
                reply = completion.choices[0].message
                if not reply.tool_calls:
                    return str(reply.content)
                messages.append(reply.model_dump(exclude_none=True))
                for call in reply.tool_calls:
                    result = await mcp.call_tool(call.function.name, json.loads(call.function.arguments))
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": result.content[0].text}
                    )

    assert run(agent, "What should I pack for Paris?") == "Pack sunglasses."
    verdict = llmts_session.verify(
        {
            "requests": [
                {
                    "name": "the agent called the forecast tool for Paris",
                    "query": {"provider": "mcp", "mcp_server": "weather", "tool_name": "forecast"},
                },
                {
                    "name": "the model saw the tool's answer",
                    "query": {"provider": "openai"},
                    "minimum_count": 2,
                    "maximum_count": 2,
                    "tools": [
                        {"kind": "result", "name": "forecast", "result": "Sunny, 21 C", "minimum_count": 0}
                    ],
                },
            ],
            "conversations": [{"scenario": "trip", "visited_steps": ["ask", "sunny"], "terminal": True}],
        }
    )
    assert verdict.passed, verdict.failures
    (call,) = llmts_session.requests(provider="mcp", operation="tools/call")
    assert call["arguments"] == {"city": "Paris"}
    timeline = [entry["provider"] for entry in reversed(llmts_session.requests())]
    assert timeline == ["mcp", "mcp", "openai", "mcp", "openai"]  # initialize, tools/list, model, call, model


def test_llmts_expect_filters_on_mcp_fields(llmts_session: SessionClient, llmts_expect: Any) -> None:
    llmts_session.configure(ConfigBuilder().mcp_server("weather").tool("forecast").text("Sunny").build())

    async def agent() -> None:
        async with llmts_session.mcp_session("weather") as mcp:
            await mcp.call_tool("forecast", {"city": "Paris"})

    run(agent)
    llmts_expect.request("one forecast", provider="mcp", mcp_server="weather", tool_name="forecast")
    llmts_expect.request(
        "no other tool", provider="mcp", operation="tools/call", minimum_count=1, maximum_count=1
    )
    verdict = llmts_expect.verify()
    assert verdict.passed, verdict.failures
