"""pydantic-ai (OpenAI Chat and Responses, Anthropic, Google models) against llmts (docs/frameworks.md)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from llmts import SessionClient

pydantic_ai = pytest.importorskip(
    "pydantic_ai", reason="pydantic-ai is not installed (run `tox -e fw-pydantic-ai`)"
)
from pydantic import BaseModel  # noqa: E402

MODELS = ["gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"]


class Weather(BaseModel):
    city: str
    celsius: int


def _model(session: SessionClient, provider: str) -> Any:
    base = session.provider_base
    if provider in ("openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        cls = OpenAIChatModel if provider == "openai-chat" else OpenAIResponsesModel
        return cls("gpt-4.1-mini", provider=OpenAIProvider(base_url=f"{base}/openai/v1", api_key="sk-test"))
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(
            "claude-test-1", provider=AnthropicProvider(base_url=f"{base}/anthropic", api_key="k")
        )
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel("gemini-2.5-flash", provider=GoogleProvider(base_url=f"{base}/gemini", api_key="k"))


@pytest.fixture(params=["openai-chat", "openai-responses", "anthropic", "google"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_run_and_stream(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    agent = pydantic_ai.Agent(_model(llmts_session, provider))

    async def run_then_stream() -> tuple[str, str]:
        first = (await agent.run("Hi")).output
        async with agent.run_stream("Hi") as result:
            streamed = "".join([delta async for delta in result.stream_text(delta=True)])
        return first, streamed

    assert asyncio.run(run_then_stream()) == ("Hello there.", "Hi again.")
    assert [entry["streaming"] for entry in llmts_session.requests(order="asc")] == [False, True]


def test_tool_loop(llmts_session: SessionClient, provider: str) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    agent = pydantic_ai.Agent(_model(llmts_session, provider))

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"Sunny in {city}"

    assert agent.run_sync("Weather in Paris?").output == "Sunny in Paris."


def test_structured_output_is_the_final_result_tool(llmts_session: SessionClient, provider: str) -> None:
    """``output_type=Model`` declares a tool named ``final_result``; the model answers by calling it."""
    call = {"id": "call_1", "name": "final_result", "arguments": {"city": "Paris", "celsius": 21}}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [{"tool_calls": [call]}]}]})
    agent = pydantic_ai.Agent(_model(llmts_session, provider), output_type=Weather)
    assert agent.run_sync("Weather in Paris?").output == Weather(city="Paris", celsius=21)


def test_retry_honours_retry_after(llmts_session: SessionClient, provider: str) -> None:
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 1}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    agent = pydantic_ai.Agent(_model(llmts_session, provider))
    if provider == "google":
        # google-genai does not retry by default, and pydantic-ai adds no retry of its own.
        from pydantic_ai.exceptions import ModelHTTPError

        with pytest.raises(ModelHTTPError) as raised:
            agent.run_sync("Hi")
        assert raised.value.status_code == 429
        assert len(llmts_session.requests()) == 1
        return
    started = time.monotonic()
    assert agent.run_sync("Hi").output == "Done."
    first, second = llmts_session.requests(order="asc")
    assert (first["status"], second["status"]) == (429, 200)
    assert second["started_monotonic_seconds"] - first["started_monotonic_seconds"] >= 0.9
    assert time.monotonic() - started < 30
