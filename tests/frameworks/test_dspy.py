"""dspy (its native engine on the openai/, anthropic/ and gemini/ routes) against llmts
(docs/frameworks.md)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from llmts import SessionClient

# dspy (and litellm under it) fetch a model cost map from GitHub at import unless told to use their own.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
dspy = pytest.importorskip("dspy", reason="dspy is not installed (run `tox -e fw-dspy`)")
from pydantic import BaseModel  # noqa: E402

MODELS = ["gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"]
# dspy's model prefix -> (model, the api_base its native engine wants under a session's provider base)
ROUTES = {
    "openai": ("openai/gpt-4.1-mini", "/openai/v1"),
    "anthropic": ("anthropic/claude-test-1", "/anthropic/v1"),
    "gemini": ("gemini/gemini-2.5-flash", "/gemini/v1beta"),
}


class Weather(BaseModel):
    city: str
    celsius: int


class WeatherReport(dspy.Signature):  # type: ignore[misc]
    """Report the weather."""

    question: str = dspy.InputField()
    weather: Weather = dspy.OutputField()


class ToolUse(dspy.Signature):  # type: ignore[misc]
    """Answer, calling tools when needed."""

    question: str = dspy.InputField()
    tools: list[dspy.Tool] = dspy.InputField()
    answer: str = dspy.OutputField()
    tool_calls: dspy.ToolCalls = dspy.OutputField()


def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"


def fields(**values: str) -> str:
    """A reply in the markers dspy's default ChatAdapter parses: ``[[ ## field ## ]]`` per output field."""
    return (
        "".join(f"[[ ## {name} ## ]]\n{value}\n\n" for name, value in values.items())
        + "[[ ## completed ## ]]"
    )


@pytest.fixture(params=sorted(ROUTES))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _lm(session: SessionClient, provider: str, **kwargs: Any) -> Any:
    model, root = ROUTES[provider]
    kwargs.setdefault("num_retries", 0)
    # cache=False: dspy caches answers on disk by default, so a scripted answer might never be requested.
    return dspy.LM(model, api_base=f"{session.provider_base}{root}", api_key="sk-test", cache=False, **kwargs)


def test_predict_and_stream(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {
                    "responses": [
                        {"text": fields(answer="Hello there.")},
                        {
                            "text": fields(answer="Hi again."),
                            "chunks": ["[[ ## answer ## ]]\nHi", " again.\n\n[[ ## completed ## ]]"],
                        },
                    ]
                }
            ],
        }
    )
    predict = dspy.Predict("question -> answer")
    listener = dspy.streaming.StreamListener(signature_field_name="answer")
    streaming = dspy.streamify(predict, stream_listeners=[listener])

    async def stream() -> list[Any]:
        return [value async for value in streaming(question="Hi")]

    with dspy.context(lm=_lm(llmts_session, provider)):
        assert predict(question="Hi").answer == "Hello there."
        values = asyncio.run(stream())
    chunks = [value.chunk for value in values if isinstance(value, dspy.streaming.StreamResponse)]
    assert "".join(chunks).strip() == "Hi again."
    assert values[-1].answer == "Hi again."
    entries = llmts_session.requests(order="asc")
    assert [(entry["provider"], entry["streaming"]) for entry in entries] == [
        (provider, False),
        (provider, True),
    ]


def test_react_tool_loop(llmts_session: SessionClient, provider: str) -> None:
    """``dspy.ReAct`` picks tools in text (``next_tool_name``), ends with its own ``finish`` tool, then
    extracts the answer in a third call."""
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {
                    "responses": [
                        {
                            "text": fields(
                                next_thought="Look it up.",
                                next_tool_name="get_weather",
                                next_tool_args='{"city": "Paris"}',
                            )
                        },
                        {"text": fields(next_thought="Done.", next_tool_name="finish", next_tool_args="{}")},
                        {"text": fields(reasoning="It is sunny.", answer="Sunny in Paris.")},
                    ]
                }
            ],
        }
    )
    with dspy.context(lm=_lm(llmts_session, provider)):
        result = dspy.ReAct("question -> answer", tools=[get_weather])(question="Weather in Paris?")
    assert result.answer == "Sunny in Paris."
    assert result.trajectory["observation_0"] == "Sunny in Paris"
    assert len(llmts_session.requests()) == 3


def test_native_tool_calls(llmts_session: SessionClient, provider: str) -> None:
    """``ChatAdapter(use_native_function_calling=True)`` declares each ``dspy.Tool`` under its function
    name."""
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [{"tool_calls": [call]}]}]})
    adapter = dspy.ChatAdapter(use_native_function_calling=True)
    with dspy.context(lm=_lm(llmts_session, provider), adapter=adapter):
        result = dspy.Predict(ToolUse)(question="Weather in Paris?", tools=[dspy.Tool(get_weather)])
    (tool_call,) = result.tool_calls.tool_calls
    assert (tool_call.name, tool_call.args) == ("get_weather", {"city": "Paris"})
    assert tool_call.execute() == "Sunny in Paris"
    (entry,) = llmts_session.requests()
    assert entry["success"]


def test_structured_output_json_adapter(llmts_session: SessionClient, provider: str) -> None:
    """``JSONAdapter`` asks for a JSON object keyed by the output field names: a ``json`` answer."""
    answer = {"json": {"weather": {"city": "Paris", "celsius": 21}}}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [answer]}]})
    with dspy.context(lm=_lm(llmts_session, provider), adapter=dspy.JSONAdapter()):
        result = dspy.Predict(WeatherReport)(question="Weather in Paris?")
    assert result.weather == Weather(city="Paris", celsius=21)


def test_several_samples(llmts_session: SessionClient, provider: str) -> None:
    """``n=2``: the native engine samples with one request per completion (n=1 each)."""
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"text": fields(answer="Red.")}, {"text": fields(answer="Blue.")}]}],
        }
    )
    with dspy.context(lm=_lm(llmts_session, provider)):
        result = dspy.Predict("question -> answer", n=2)(question="A colour?")
    assert result.completions.answer == ["Red.", "Blue."]
    assert len(llmts_session.requests()) == 2


def test_several_samples_litellm_engine_sends_n(llmts_session: SessionClient) -> None:
    """``engine="litellm"`` on ``openai/`` sends Chat Completions ``n`` in one request."""
    pytest.importorskip("litellm", reason="litellm is not installed")
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"text": fields(answer="Red.")}, {"text": fields(answer="Blue.")}]}],
        }
    )
    with dspy.context(lm=_lm(llmts_session, "openai", engine="litellm")):
        result = dspy.Predict("question -> answer", n=2)(question="A colour?")
    assert result.completions.answer == ["Red.", "Blue."]
    (entry,) = llmts_session.requests()
    assert '"n":2' in entry["request_preview"].replace(" ", "")


def test_retry_honours_retry_after(llmts_session: SessionClient, provider: str) -> None:
    """The native engine waits for Retry-After on every provider (its own back-off would be 1 s here)."""
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"error": error}, {"text": fields(answer="Done.")}]}],
        }
    )
    started = time.monotonic()
    with dspy.context(lm=_lm(llmts_session, provider, num_retries=2)):
        assert dspy.Predict("question -> answer")(question="Hi").answer == "Done."
    first, second = llmts_session.requests(order="asc")
    assert (first["status"], second["status"]) == (429, 200)
    waited = second["started_monotonic_seconds"] - first["started_monotonic_seconds"]
    assert waited >= 1.9, f"retried after {waited:.2f}s, before Retry-After"
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_llmts_env_without_api_base(
    llmts_session: SessionClient, llmts_env: dict[str, str], provider: str
) -> None:
    """With ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL`` or ``GEMINI_API_BASE`` set, dspy's auto engine hands
    the call to litellm, which reads them."""
    llmts_session.configure({"scenarios": [{"responses": [{"text": fields(answer="Paris.")}]}]})
    model = ROUTES[provider][0]
    with dspy.context(lm=dspy.LM(model, cache=False, num_retries=0)):
        assert dspy.Predict("question -> answer")(question="Capital of France?").answer == "Paris."
    assert [entry["provider"] for entry in llmts_session.requests()] == [provider]
