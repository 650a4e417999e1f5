"""haystack (``OpenAIChatGenerator`` and ``OpenAIResponsesChatGenerator``, the ``Agent`` component) against
llmts (docs/frameworks.md)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from llmts import SessionClient

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # else it posts usage events to posthog
haystack = pytest.importorskip("haystack", reason="haystack-ai is not installed (run `tox -e fw-haystack`)")
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import (  # noqa: E402
    OpenAIChatGenerator,
    OpenAIResponsesChatGenerator,
)
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from pydantic import BaseModel  # noqa: E402

MODELS = ["gpt-4.1-mini"]


class Weather(BaseModel):
    city: str
    celsius: int


def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"


@pytest.fixture(params=["chat", "responses"])
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _generator(session: SessionClient, api: str, **kwargs: Any) -> Any:
    cls = OpenAIChatGenerator if api == "chat" else OpenAIResponsesChatGenerator
    return cls(
        model="gpt-4.1-mini",
        api_base_url=f"{session.provider_base}/openai/v1",
        api_key=Secret.from_token("sk-test"),
        **kwargs,
    )


def test_chat_and_stream(llmts_session: SessionClient, api: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    hi = [ChatMessage.from_user("Hi")]
    assert _generator(llmts_session, api).run(messages=hi)["replies"][0].text == "Hello there."
    chunks: list[str] = []
    streaming = _generator(llmts_session, api, streaming_callback=lambda chunk: chunks.append(chunk.content))
    assert streaming.run(messages=hi)["replies"][0].text == "Hi again."
    assert [chunk for chunk in chunks if chunk] == ["Hi ", "again."]
    entries = llmts_session.requests(order="asc")
    assert [entry["streaming"] for entry in entries] == [False, True]
    assert {entry["operation"] for entry in entries} == {"chat.completions" if api == "chat" else "responses"}


def test_agent_tool_loop(llmts_session: SessionClient, api: str) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    agent = Agent(
        chat_generator=_generator(llmts_session, api), tools=[create_tool_from_function(get_weather)]
    )
    result = agent.run(messages=[ChatMessage.from_user("Weather in Paris?")])
    assert result["last_message"].text == "Sunny in Paris."
    results = [message.tool_call_result.result for message in result["messages"] if message.tool_call_result]
    assert results == ["Sunny in Paris"]


def test_structured_output(llmts_session: SessionClient, api: str) -> None:
    """A pydantic model as ``response_format`` (Chat) or ``text_format`` (Responses) is a JSON schema
    response format: a ``json`` answer, returned as the reply's text."""
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"json": {"city": "Paris", "celsius": 21}}]}]}
    )
    option = "response_format" if api == "chat" else "text_format"
    generator = _generator(llmts_session, api, generation_kwargs={option: Weather})
    reply = generator.run(messages=[ChatMessage.from_user("Weather in Paris?")])["replies"][0]
    assert Weather(**json.loads(reply.text)) == Weather(city="Paris", celsius=21)


def test_retry_honours_retry_after(llmts_session: SessionClient, api: str) -> None:
    """``max_retries`` (default 5, or ``OPENAI_MAX_RETRIES``) goes to the openai client, which waits."""
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    started = time.monotonic()
    reply = _generator(llmts_session, api, max_retries=2).run(messages=[ChatMessage.from_user("Hi")])
    assert reply["replies"][0].text == "Done."
    first, second = llmts_session.requests(order="asc")
    assert (first["status"], second["status"]) == (429, 200)
    waited = second["started_monotonic_seconds"] - first["started_monotonic_seconds"]
    assert waited >= 1.9, f"retried after {waited:.2f}s, before Retry-After"
    assert time.monotonic() - started < 30


def test_llmts_env_without_api_base_url(llmts_session: SessionClient, llmts_env: dict[str, str]) -> None:
    """``OpenAIChatGenerator()`` with no key nor URL: ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` reach it."""
    llmts_session.configure({"scenarios": [{"responses": [{"text": "Paris."}]}]})
    reply = OpenAIChatGenerator(model="gpt-4.1-mini").run(messages=[ChatMessage.from_user("Hi")])
    assert reply["replies"][0].text == "Paris."
    assert [entry["provider"] for entry in llmts_session.requests()] == ["openai"]
