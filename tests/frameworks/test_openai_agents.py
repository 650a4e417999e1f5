"""The OpenAI Agents SDK (``openai-agents``) against llmts (docs/frameworks.md)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from llmts import SessionClient

agents = pytest.importorskip("agents", reason="openai-agents is not installed (run `tox -e fw-agents`)")
import openai  # noqa: E402
from openai.types.responses import ResponseTextDeltaEvent  # noqa: E402
from pydantic import BaseModel  # noqa: E402

agents.set_tracing_disabled(True)  # the tracing exporter would post to api.openai.com
MODELS = ["gpt-4.1-mini"]


class Weather(BaseModel):
    city: str
    celsius: int


@agents.function_tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"


def _model(session: SessionClient, *, chat: bool = False, **client_options: Any) -> Any:
    client = openai.AsyncOpenAI(
        base_url=f"{session.provider_base}/openai/v1", api_key="sk-test", **client_options
    )
    if chat:
        return agents.OpenAIChatCompletionsModel(model="gpt-4.1-mini", openai_client=client)
    return agents.OpenAIResponsesModel(model="gpt-4.1-mini", openai_client=client)


@pytest.fixture(params=["responses", "chat"])
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_run_and_stream(llmts_session: SessionClient, api: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    agent = agents.Agent(
        name="greeter", instructions="Greet.", model=_model(llmts_session, chat=api == "chat")
    )

    # One event loop for both runs: an AsyncOpenAI client's connections belong to the loop that opened them.
    async def run_then_stream() -> tuple[Any, list[str]]:
        first = (await agents.Runner.run(agent, "Hi")).final_output
        result = agents.Runner.run_streamed(agent, "Hi")
        deltas = []
        async for event in result.stream_events():
            if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent):
                deltas.append(event.data.delta)
        assert result.final_output == "Hi again."
        return first, deltas

    assert asyncio.run(run_then_stream()) == ("Hello there.", ["Hi ", "again."])
    operations = {entry["operation"] for entry in llmts_session.requests()}
    assert operations == {"responses" if api == "responses" else "chat.completions"}


def test_tool_loop(llmts_session: SessionClient, api: str) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    agent = agents.Agent(name="weather", tools=[get_weather], model=_model(llmts_session, chat=api == "chat"))
    result = agents.Runner.run_sync(agent, "Weather in Paris?")
    assert result.final_output == "Sunny in Paris."
    outputs = [item.output for item in result.new_items if item.type == "tool_call_output_item"]
    assert outputs == ["Sunny in Paris"]


def test_structured_output(llmts_session: SessionClient, api: str) -> None:
    """``output_type`` asks for a JSON schema response format: a ``json`` fixture answers it."""
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"json": {"city": "Paris", "celsius": 21}}]}]}
    )
    agent = agents.Agent(name="weather", output_type=Weather, model=_model(llmts_session, chat=api == "chat"))
    assert agents.Runner.run_sync(agent, "Weather in Paris?").final_output == Weather(
        city="Paris", celsius=21
    )


def test_handoff_tool_is_transfer_to_agent_name(llmts_session: SessionClient, api: str) -> None:
    call = {"id": "call_1", "name": "transfer_to_spanish_agent", "arguments": {}}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Hola."}]}]}
    )
    model = _model(llmts_session, chat=api == "chat")
    spanish = agents.Agent(name="Spanish agent", instructions="Answer in Spanish.", model=model)
    triage = agents.Agent(name="Triage", handoffs=[spanish], model=model)
    result = agents.Runner.run_sync(triage, "Hola")
    assert result.final_output == "Hola."
    assert result.last_agent.name == "Spanish agent"


def test_retry_honours_retry_after(llmts_session: SessionClient, api: str) -> None:
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 1}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    agent = agents.Agent(name="a", model=_model(llmts_session, chat=api == "chat", max_retries=2))
    started = time.monotonic()
    assert agents.Runner.run_sync(agent, "Hi").final_output == "Done."
    first, second = llmts_session.requests(order="asc")
    assert (first["status"], second["status"]) == (429, 200)
    assert second["started_monotonic_seconds"] - first["started_monotonic_seconds"] >= 0.9
    assert time.monotonic() - started < 30


def test_an_agent_calls_an_llmts_mcp_tool_between_two_model_turns(
    llmts_session: SessionClient, api: str
) -> None:
    """The agent's whole loop against one session (docs/mcp.md, "A complete agent test"): the model asks
    for a tool, the Agents SDK calls it on the session's MCP server (its own MCP client, Streamable HTTP),
    passes the result back, and the conversation graph's next step branches on what the tool returned."""
    from agents.mcp import MCPServerStreamableHttp

    forecast = {
        "name": "get_forecast",
        "description": "The forecast for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "results": [{"when": {"arguments": {"city": "Paris"}}, "text": "Rain, 14 C"}],
    }
    call = {"id": "call_1", "name": "get_forecast", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "mcp_servers": [{"name": "weather", "tools": [forecast]}],
            "conversations": [
                {
                    "id": "agent",
                    "start_at": "ask",
                    "steps": [
                        {
                            "id": "ask",
                            "when": {"latest_user_contains": "Paris"},
                            "response": {"tool_calls": [call]},
                            "then": ["rain", "dry"],
                        },
                        {
                            "id": "rain",
                            "when": {"tool_result": {"name": "get_forecast"}, "latest_text_contains": "Rain"},
                            "response": {"text": "Take an umbrella."},
                            "complete": True,
                        },
                        {
                            "id": "dry",
                            "when": {"tool_result": {"name": "get_forecast"}},
                            "response": {"text": "No umbrella needed."},
                            "complete": True,
                        },
                    ],
                }
            ],
        }
    )
    server = MCPServerStreamableHttp(
        params={"url": f"{llmts_session.provider_base}/mcp/weather"}, cache_tools_list=True
    )

    async def run() -> Any:
        async with server:
            agent = agents.Agent(
                name="weather", mcp_servers=[server], model=_model(llmts_session, chat=api == "chat")
            )
            return await agents.Runner.run(agent, "Do I need an umbrella in Paris?")

    result = asyncio.run(run())
    assert result.final_output == "Take an umbrella."
    entries = llmts_session.requests(order="asc")
    calls = [e for e in entries if e["provider"] == "mcp" and e["operation"] == "tools/call"]
    assert [(e["mcp_server"], e["tool_name"], e["arguments"]) for e in calls] == [
        ("weather", "get_forecast", {"city": "Paris"})
    ]
    steps = [e["step"] for e in entries if e["provider"] == "openai"]
    assert steps == ["ask", "rain"]
