"""langchain-openai, langchain-anthropic and langchain-google-genai against llmts (docs/frameworks.md)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from llmts import SessionClient

lc_openai = pytest.importorskip(
    "langchain_openai", reason="langchain-openai is not installed (run `tox -e fw-langchain`)"
)
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from pydantic import BaseModel  # noqa: E402

MODELS = ["gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"]


class Weather(BaseModel):
    city: str
    celsius: int


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"


def _chat_openai(session: SessionClient, **kwargs: Any) -> Any:
    return lc_openai.ChatOpenAI(
        model="gpt-4.1-mini", base_url=f"{session.provider_base}/openai/v1", api_key="sk-test", **kwargs
    )


def _chat_anthropic(session: SessionClient, **kwargs: Any) -> Any:
    lc_anthropic = pytest.importorskip("langchain_anthropic", reason="langchain-anthropic is not installed")
    return lc_anthropic.ChatAnthropic(
        model="claude-test-1", base_url=f"{session.provider_base}/anthropic", api_key="sk-test", **kwargs
    )


def _chat_gemini(session: SessionClient, **kwargs: Any) -> Any:
    lc_google = pytest.importorskip(
        "langchain_google_genai", reason="langchain-google-genai is not installed"
    )
    return lc_google.ChatGoogleGenerativeAI(
        model="gemini-2.5-flash", base_url=f"{session.provider_base}/gemini", google_api_key="k", **kwargs
    )


CHAT_MODELS = {"openai": _chat_openai, "anthropic": _chat_anthropic, "gemini": _chat_gemini}


@pytest.fixture(params=sorted(CHAT_MODELS))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_chat_and_stream(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    model = CHAT_MODELS[provider](llmts_session)
    assert model.invoke("Hi").content == "Hello there."
    pieces = [chunk.content for chunk in model.stream("Hi") if chunk.content]
    assert "".join(str(piece) for piece in pieces) == "Hi again."
    assert len(pieces) >= 2
    entries = llmts_session.requests(order="asc")
    assert [entry["streaming"] for entry in entries] == [False, True]
    assert {entry["provider"] for entry in entries} == {provider}


def test_tool_loop(llmts_session: SessionClient, provider: str) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    model = CHAT_MODELS[provider](llmts_session).bind_tools([get_weather])
    messages: list[Any] = [HumanMessage("Weather in Paris?")]
    reply = model.invoke(messages)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("get_weather", {"city": "Paris"})]
    messages += [
        reply,
        ToolMessage(get_weather.invoke(reply.tool_calls[0]["args"]), tool_call_id=reply.tool_calls[0]["id"]),
    ]
    assert model.invoke(messages).content == "Sunny in Paris."
    last = llmts_session.requests(order="desc", limit=1)[0]
    assert last["success"]


def test_structured_output_function_calling_uses_the_class_name(
    llmts_session: SessionClient, provider: str
) -> None:
    """``with_structured_output(Model, method="function_calling")`` declares a tool named after the class."""
    call = {"id": "call_1", "name": "Weather", "arguments": {"city": "Paris", "celsius": 21}}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [{"tool_calls": [call]}]}]})
    model = CHAT_MODELS[provider](llmts_session).with_structured_output(Weather, method="function_calling")
    assert model.invoke("Weather in Paris?") == Weather(city="Paris", celsius=21)


def test_structured_output_json_schema(llmts_session: SessionClient, provider: str) -> None:
    """``method="json_schema"``, langchain-openai's and -google-genai's default: a ``json`` answer."""
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"json": {"city": "Paris", "celsius": 21}}]}]}
    )
    model = CHAT_MODELS[provider](llmts_session).with_structured_output(Weather, method="json_schema")
    assert model.invoke("Weather in Paris?") == Weather(city="Paris", celsius=21)


def test_retry_after_429(llmts_session: SessionClient, provider: str) -> None:
    """openai/anthropic: the SDK's retry waits for Retry-After. google-genai: ``max_retries`` becomes
    ``HttpRetryOptions(attempts=max_retries)``, an exponential back-off from 1 s that ignores Retry-After."""
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 1}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    model = CHAT_MODELS[provider](llmts_session, max_retries=2)
    started = time.monotonic()
    assert model.invoke("Hi").content == "Done."
    first, second = llmts_session.requests(order="asc")
    waited = second["started_monotonic_seconds"] - first["started_monotonic_seconds"]
    assert first["status"] == 429 and second["status"] == 200
    assert waited >= 0.9, f"retried after {waited:.2f}s, before Retry-After / the 1 s back-off"
    assert time.monotonic() - started < 30


def test_langgraph_react_agent(llmts_session: SessionClient) -> None:
    prebuilt = pytest.importorskip("langgraph.prebuilt", reason="langgraph is not installed")
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    agent = prebuilt.create_react_agent(_chat_openai(llmts_session), [get_weather])
    result = agent.invoke({"messages": [("user", "Weather in Paris?")]})
    assert result["messages"][-1].content == "Sunny in Paris."
    assert result["messages"][-2].content == "Sunny in Paris"  # the tool's own result
