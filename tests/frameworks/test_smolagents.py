"""smolagents (``OpenAIServerModel``; ``LiteLLMModel`` for Anthropic and Gemini) against llmts
(docs/frameworks.md)."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from llmts import SessionClient

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else litellm fetches it from GitHub at import
smolagents = pytest.importorskip(
    "smolagents", reason="smolagents is not installed (run `tox -e fw-smolagents`)"
)

MODELS = ["gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"]
HI = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]


@smolagents.tool
def get_weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: The city's name.
    """
    return f"Sunny in {city}"


def final_answer(answer: str) -> dict[str, Any]:
    """A ``ToolCallingAgent`` ends by calling its ``final_answer`` tool."""
    return {"tool_calls": [{"id": "call_final", "name": "final_answer", "arguments": {"answer": answer}}]}


def _model(session: SessionClient, provider: str, **kwargs: Any) -> Any:
    base = session.provider_base
    if provider == "openai":
        return smolagents.OpenAIServerModel(
            model_id="gpt-4.1-mini", api_base=f"{base}/openai/v1", api_key="sk-test", **kwargs
        )
    if provider == "anthropic":
        return smolagents.LiteLLMModel(
            model_id="anthropic/claude-test-1", api_base=f"{base}/anthropic", api_key="sk-test", **kwargs
        )
    return smolagents.LiteLLMModel(
        model_id="gemini/gemini-2.5-flash", api_base=f"{base}/gemini/v1beta", api_key="k", **kwargs
    )


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_generate_and_stream(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    model = _model(llmts_session, provider)
    assert model.generate(HI).content == "Hello there."
    deltas = [delta.content for delta in model.generate_stream(HI) if delta.content]
    assert "".join(deltas) == "Hi again."
    assert len(deltas) >= 2
    entries = llmts_session.requests(order="asc")
    assert [(entry["provider"], entry["streaming"]) for entry in entries] == [
        (provider, False),
        (provider, True),
    ]


def test_tool_calling_agent_loop_ends_with_final_answer(llmts_session: SessionClient, provider: str) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, final_answer("Sunny in Paris.")]}],
        }
    )
    agent = smolagents.ToolCallingAgent(
        tools=[get_weather], model=_model(llmts_session, provider), verbosity_level=0
    )
    assert agent.run("Weather in Paris?") == "Sunny in Paris."
    first, second = llmts_session.requests(order="asc")
    assert [call["name"] for call in first["response_tool_calls"]] == ["get_weather"]
    assert [call["name"] for call in second["response_tool_calls"]] == ["final_answer"]


def test_tool_calling_agent_streams(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [final_answer("Hello there.")]}]})
    agent = smolagents.ToolCallingAgent(
        tools=[], model=_model(llmts_session, provider), stream_outputs=True, verbosity_level=0
    )
    events = list(agent.run("Hi", stream=True))
    assert any(isinstance(event, smolagents.ChatMessageStreamDelta) for event in events)
    assert isinstance(events[-1], smolagents.FinalAnswerStep)
    assert events[-1].output == "Hello there."
    (entry,) = llmts_session.requests()
    assert entry["streaming"]


def test_code_agent(llmts_session: SessionClient, provider: str) -> None:
    """A ``CodeAgent`` answers in text: code between ``<code>`` tags, run locally, ending in
    ``final_answer``."""
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {
                    "responses": [
                        {"text": 'Thought: look it up.\n<code>\nweather = get_weather("Paris")\n</code>'},
                        {"text": 'Thought: done.\n<code>\nfinal_answer(weather + ".")\n</code>'},
                    ]
                }
            ],
        }
    )
    agent = smolagents.CodeAgent(
        tools=[get_weather], model=_model(llmts_session, provider), verbosity_level=0
    )
    assert agent.run("Weather in Paris?") == "Sunny in Paris."


def test_code_agent_structured_outputs(llmts_session: SessionClient, provider: str) -> None:
    """``use_structured_outputs_internally=True`` asks for a JSON ``{"thought", "code"}`` response format; on
    litellm's ``anthropic/`` route that becomes a forced tool named ``json_tool_call``."""
    step = {"thought": "Look it up.", "code": "final_answer(get_weather(city='Paris'))"}
    answer: dict[str, Any] = {"json": step}
    if provider == "anthropic":
        answer = {"tool_calls": [{"id": "toolu_1", "name": "json_tool_call", "arguments": step}]}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [answer]}]})
    agent = smolagents.CodeAgent(
        tools=[get_weather],
        model=_model(llmts_session, provider),
        use_structured_outputs_internally=True,
        verbosity_level=0,
    )
    assert agent.run("Weather in Paris?") == "Sunny in Paris"


def test_retry(llmts_session: SessionClient, provider: str) -> None:
    """``OpenAIServerModel``: the openai SDK retries first and waits for Retry-After. ``LiteLLMModel``:
    smolagents' own retry waits 60 s and more (ignoring Retry-After), so it is turned off here
    (``retry=False``) and litellm's ``num_retries`` re-sends instead, at once."""
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    options: dict[str, Any] = {} if provider == "openai" else {"retry": False, "num_retries": 2}
    started = time.monotonic()
    assert _model(llmts_session, provider, **options).generate(HI).content == "Done."
    first, second = llmts_session.requests(order="asc")
    assert (first["status"], second["status"]) == (429, 200)
    if provider == "openai":
        waited = second["started_monotonic_seconds"] - first["started_monotonic_seconds"]
        assert waited >= 1.9, f"retried after {waited:.2f}s, before Retry-After"
    assert time.monotonic() - started < 60


def test_litellm_model_without_retry_surfaces_the_429(llmts_session: SessionClient) -> None:
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [{"error": error}]}]})
    model = _model(llmts_session, "anthropic", retry=False)
    with pytest.raises(Exception, match="rate_limit"):
        model.generate(HI)
    (entry,) = llmts_session.requests()
    assert entry["status"] == 429


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_llmts_env_without_api_base(
    llmts_session: SessionClient, llmts_env: dict[str, str], provider: str
) -> None:
    """``OpenAIServerModel`` (the openai SDK) and ``LiteLLMModel`` (litellm reads ``ANTHROPIC_BASE_URL`` and,
    for ``gemini/``, ``GEMINI_API_BASE``) read the environment ``llmts env`` sets."""
    llmts_session.configure({"scenarios": [{"responses": [{"text": "Paris."}]}]})
    if provider == "openai":
        model = smolagents.OpenAIServerModel(model_id="gpt-4.1-mini")
    elif provider == "anthropic":
        model = smolagents.LiteLLMModel(model_id="anthropic/claude-test-1")
    else:
        model = smolagents.LiteLLMModel(model_id="gemini/gemini-2.5-flash")
    assert model.generate(HI).content == "Paris."
    assert [entry["provider"] for entry in llmts_session.requests()] == [provider]
