"""llama-index (llama-index-llms-openai, -anthropic and -google-genai; the ``FunctionAgent`` workflow) against
llmts (docs/frameworks.md)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from llmts import SessionClient

pytest.importorskip("llama_index.core", reason="llama-index is not installed (run `tox -e fw-llama-index`)")
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.prompts import PromptTemplate
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel

# llama-index-llms-anthropic looks the model up in its own table (context window): a real Claude name.
MODELS = ["gpt-4.1-mini", "claude-sonnet-4-5", "gemini-2.5-flash"]
HI = [ChatMessage(role="user", content="Hi")]


class Weather(BaseModel):
    city: str
    celsius: int


def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"


def _llm(session: SessionClient, provider: str, **kwargs: Any) -> Any:
    base = session.provider_base
    if provider == "openai":
        from llama_index.llms.openai import OpenAI

        return OpenAI(model="gpt-4.1-mini", api_base=f"{base}/openai/v1", api_key="sk-test", **kwargs)
    if provider == "anthropic":
        from llama_index.llms.anthropic import Anthropic

        return Anthropic(model="claude-sonnet-4-5", base_url=f"{base}/anthropic", api_key="sk-test", **kwargs)
    from llama_index.llms.google_genai import GoogleGenAI

    return GoogleGenAI(
        model="gemini-2.5-flash", api_key="k", http_options={"base_url": f"{base}/gemini"}, **kwargs
    )


@pytest.fixture(params=["openai", "anthropic", "gemini"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _generations(session: SessionClient) -> list[dict[str, Any]]:
    """The journal without the model lookup (``GET models/...``) GoogleGenAI sends when it is built."""
    return [entry for entry in session.requests(order="asc") if entry["method"] == "POST"]


def test_chat_and_stream(llmts_session: SessionClient, provider: str) -> None:
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [
                {"responses": [{"text": "Hello there."}, {"text": "Hi again.", "chunks": ["Hi ", "again."]}]}
            ],
        }
    )
    llm = _llm(llmts_session, provider)
    assert llm.chat(HI).message.content == "Hello there."
    deltas = [response.delta for response in llm.stream_chat(HI) if response.delta]
    assert deltas == ["Hi ", "again."]
    entries = _generations(llmts_session)
    assert [(entry["provider"], entry["streaming"]) for entry in entries] == [
        (provider, False),
        (provider, True),
    ]


def test_function_agent_tool_loop(llmts_session: SessionClient, provider: str) -> None:
    """``FunctionAgent`` streams every turn; the tool is declared under its function name."""
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    llmts_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [call]}, {"text": "Sunny in Paris."}]}],
        }
    )
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(get_weather)], llm=_llm(llmts_session, provider))

    async def run() -> Any:
        return await agent.run("Weather in Paris?")

    result = asyncio.run(run())
    assert str(result) == "Sunny in Paris."
    assert [call.tool_output.content for call in result.tool_calls] == ["Sunny in Paris"]
    assert [entry["streaming"] for entry in _generations(llmts_session)] == [True, True]


def test_structured_predict(llmts_session: SessionClient, provider: str) -> None:
    """For models llama-index knows to support it, ``structured_predict`` asks for a JSON schema response
    (OpenAI ``response_format``, Anthropic ``output_config``, Gemini ``responseSchema``): a ``json``
    answer, no tool."""
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"json": {"city": "Paris", "celsius": 21}}]}]}
    )
    llm = _llm(llmts_session, provider)
    weather = llm.structured_predict(Weather, PromptTemplate("Weather in {city}?"), city="Paris")
    assert weather == Weather(city="Paris", celsius=21)


def test_retry(llmts_session: SessionClient, provider: str) -> None:
    """OpenAI (llama-index's tenacity wrapper reads Retry-After, and so does the SDK) and Anthropic (the SDK,
    ``max_retries`` default 10) wait. GoogleGenAI retries a ``ClientError`` only when its ``status`` is 429
    or 408, but google-genai's ``status`` is the text ``RESOURCE_EXHAUSTED``: the 429 surfaces at once."""
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"text": "Done."}]}]}
    )
    llm = _llm(llmts_session, provider, max_retries=2)
    if provider == "gemini":
        from google.genai import errors

        with pytest.raises(errors.ClientError) as raised:
            llm.chat(HI)
        assert raised.value.code == 429
        assert [entry["status"] for entry in _generations(llmts_session)] == [429]
        return
    started = time.monotonic()
    assert llm.chat(HI).message.content == "Done."
    first, second = _generations(llmts_session)
    assert (first["status"], second["status"]) == (429, 200)
    waited = second["started_monotonic_seconds"] - first["started_monotonic_seconds"]
    assert waited >= 1.9, f"retried after {waited:.2f}s, before Retry-After"
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_llmts_env_without_base_url(
    llmts_session: SessionClient, llmts_env: dict[str, str], provider: str
) -> None:
    """Anthropic and GoogleGenAI build their SDK clients from the environment ``llmts env`` sets.
    (llama-index's OpenAI reads ``OPENAI_API_BASE``, not ``OPENAI_BASE_URL``: pass ``api_base``.)"""
    llmts_session.configure({"scenarios": [{"responses": [{"text": "Paris."}]}]})
    if provider == "anthropic":
        from llama_index.llms.anthropic import Anthropic

        llm: Any = Anthropic(model="claude-sonnet-4-5")
    else:
        from llama_index.llms.google_genai import GoogleGenAI

        llm = GoogleGenAI(model="gemini-2.5-flash")
    assert llm.chat(HI).message.content == "Paris."
    assert [entry["provider"] for entry in _generations(llmts_session)] == [provider]
