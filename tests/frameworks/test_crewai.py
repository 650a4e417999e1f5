"""crewai (its native OpenAI, Anthropic and Gemini providers, no litellm) against llmts
(docs/frameworks.md)."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from llmts import SessionClient

# crewai's telemetry and trace upload would post to its own servers.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
crewai = pytest.importorskip("crewai", reason="crewai is not installed (run `tox -e fw-crewai`)")
from crewai.tools import tool  # noqa: E402
from pydantic import BaseModel  # noqa: E402

MODELS = ["gpt-4.1-mini", "claude-test-1", "claude-sonnet-4-5", "gemini-2.5-flash"]


class Weather(BaseModel):
    city: str
    celsius: int


@tool("get_weather")
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"


def _llm(session: SessionClient, provider: str, **kwargs: Any) -> Any:
    base = session.provider_base
    if provider == "openai":
        return crewai.LLM(
            model="openai/gpt-4.1-mini", base_url=f"{base}/openai/v1", api_key="sk-test", **kwargs
        )
    if provider == "anthropic":
        return crewai.LLM(
            model="anthropic/claude-test-1", base_url=f"{base}/anthropic", api_key="sk-test", **kwargs
        )
    # The native Gemini provider ignores base_url: the google-genai client takes it from client_params.
    http_options = {"base_url": f"{base}/gemini"}
    return crewai.LLM(
        model="gemini/gemini-2.5-flash", api_key="k", client_params={"http_options": http_options}, **kwargs
    )


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _crew(llm: Any, **task_options: Any) -> Any:
    agent = crewai.Agent(
        role="Weather reporter",
        goal="Report the weather",
        backstory="You report the weather.",
        llm=llm,
        tools=task_options.pop("tools", []),
        verbose=False,
    )
    task = crewai.Task(
        description="Weather in Paris?", expected_output="The weather.", agent=agent, **task_options
    )
    return crewai.Crew(agents=[agent], tasks=[task], verbose=False)


def _generations(session: SessionClient) -> list[dict[str, Any]]:
    """The journal without the token-count requests crewai's Anthropic and Gemini providers also send."""
    return [entry for entry in session.requests(order="asc") if "count" not in entry["path"].lower()]


def test_call_and_stream(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    assert _llm(llmts_session, provider).call("Hi") == "Hello there."
    assert _llm(llmts_session, provider, stream=True).call("Hi") == "Hi again."
    entries = _generations(llmts_session)
    assert [(entry["provider"], entry["streaming"]) for entry in entries] == [
        (provider, False),
        (provider, True),
    ]


def test_crew_tool_loop(llmts_session: SessionClient, provider: str) -> None:
    """An agent with tools uses native tool calling; its final answer is plain text (no tool to script)."""
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    result = _crew(_llm(llmts_session, provider), tools=[get_weather]).kickoff()
    assert result.raw == "Sunny in Paris."
    first, second = _generations(llmts_session)
    assert [call["name"] for call in first["response_tool_calls"]] == ["get_weather"]
    assert second["success"]


def test_structured_output(llmts_session: SessionClient, provider: str) -> None:
    """``Task(output_pydantic=Model)``: OpenAI and Gemini ask for a JSON schema response format (a ``json``
    answer); Anthropic models crewai does not list as structured-output capable force a tool named
    ``structured_output``."""
    weather = {"city": "Paris", "celsius": 21}
    answer: dict[str, Any] = {"json": weather}
    if provider == "anthropic":
        answer = {"tool_calls": [{"id": "toolu_1", "name": "structured_output", "arguments": weather}]}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [answer]}]})
    result = _crew(_llm(llmts_session, provider), output_pydantic=Weather).kickoff()
    assert result.pydantic == Weather(city="Paris", celsius=21)


def test_structured_output_anthropic_native(llmts_session: SessionClient) -> None:
    """The Claude names crewai lists (``claude-sonnet-4-5``, ``claude-opus-4-5``, ...; not ``-4-6``) get
    ``output_format``: a ``json`` answer."""
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"json": {"city": "Paris", "celsius": 21}}]}]}
    )
    llm = crewai.LLM(
        model="anthropic/claude-sonnet-4-5",
        base_url=f"{llmts_session.provider_base}/anthropic",
        api_key="sk-test",
    )
    assert _crew(llm, output_pydantic=Weather).kickoff().pydantic == Weather(city="Paris", celsius=21)
    (entry,) = _generations(llmts_session)
    assert "output_format" in entry["request_preview"]


def test_retry(llmts_session: SessionClient, provider: str) -> None:
    """OpenAI and Anthropic: the SDK retries first and waits for Retry-After. Gemini: google-genai does not
    retry, crewai's own rate-limit retry does, after 1 s (+-20 %), ignoring Retry-After (not asserted: a
    loaded machine stretches it)."""
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    started = time.monotonic()
    assert _llm(llmts_session, provider).call("Hi") == "Done."
    first, second = _generations(llmts_session)
    assert (first["status"], second["status"]) == (429, 200)
    waited = second["started_monotonic_seconds"] - first["started_monotonic_seconds"]
    if provider != "gemini":
        assert waited >= 1.9, f"retried after {waited:.2f}s, before Retry-After"
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    "model", ["openai/gpt-4.1-mini", "anthropic/claude-test-1", "gemini/gemini-2.5-flash"]
)
def test_llmts_env_without_base_url(
    llmts_session: SessionClient, llmts_env: dict[str, str], model: str
) -> None:
    """Every native provider builds its SDK client from the environment ``llmts env`` sets."""
    llmts_session.configure({"scenarios": [{"responses": [{"text": "Paris."}]}]})
    assert crewai.LLM(model=model).call("Capital of France?") == "Paris."
    assert [entry["provider"] for entry in _generations(llmts_session)] == [model.split("/")[0]]
