"""instructor (over the openai SDK) against llmts (docs/frameworks.md)."""

from __future__ import annotations

import time

import pytest

from llmts import SessionClient

instructor = pytest.importorskip("instructor", reason="instructor is not installed (run `tox -e fw-litellm`)")
import openai  # noqa: E402
from pydantic import BaseModel  # noqa: E402

MODELS = ["gpt-4.1-mini"]
ASK = [{"role": "user", "content": "Weather in Paris?"}]


class Weather(BaseModel):
    city: str
    celsius: int


def _client(session: SessionClient, **kwargs: object) -> object:
    return instructor.from_openai(
        openai.OpenAI(base_url=f"{session.provider_base}/openai/v1", api_key="sk-test", **kwargs)
    )


def test_tools_mode_calls_the_class_name(llmts_session: SessionClient) -> None:
    call = {"id": "call_1", "name": "Weather", "arguments": {"city": "Paris", "celsius": 21}}
    llmts_session.configure({"models": MODELS, "scenarios": [{"responses": [{"tool_calls": [call]}]}]})
    client = _client(llmts_session)
    weather = client.chat.completions.create(model="gpt-4.1-mini", response_model=Weather, messages=ASK)  # type: ignore[attr-defined]
    assert weather.model_dump() == {"city": "Paris", "celsius": 21}
    (entry,) = llmts_session.requests()
    assert entry["success"]


def test_validation_retry_reasks(llmts_session: SessionClient) -> None:
    """instructor's ``max_retries`` re-asks after a validation error (a new request with the error in it)."""
    bad = {"id": "call_1", "name": "Weather", "arguments": {"city": "Paris", "celsius": "warm"}}
    good = {"id": "call_2", "name": "Weather", "arguments": {"city": "Paris", "celsius": 21}}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"tool_calls": [bad]}, {"tool_calls": [good]}]}]}
    )
    client = _client(llmts_session)
    weather = client.chat.completions.create(  # type: ignore[attr-defined]
        model="gpt-4.1-mini", response_model=Weather, messages=ASK, max_retries=2
    )
    assert weather.celsius == 21
    assert len(llmts_session.requests()) == 2


def test_json_mode(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"json": {"city": "Paris", "celsius": 21}}]}]}
    )
    client = instructor.from_openai(
        openai.OpenAI(base_url=f"{llmts_session.provider_base}/openai/v1", api_key="sk-test"),
        mode=instructor.Mode.JSON,
    )
    weather = client.chat.completions.create(model="gpt-4.1-mini", response_model=Weather, messages=ASK)
    assert weather.model_dump() == {"city": "Paris", "celsius": 21}


def test_http_retry_is_the_sdks_and_honours_retry_after(llmts_session: SessionClient) -> None:
    error = {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 1}
    call = {"id": "call_1", "name": "Weather", "arguments": {"city": "Paris", "celsius": 21}}
    llmts_session.configure(
        {"models": MODELS, "scenarios": [{"responses": [{"error": error}, {"tool_calls": [call]}]}]}
    )
    client = _client(llmts_session, max_retries=2)
    started = time.monotonic()
    weather = client.chat.completions.create(model="gpt-4.1-mini", response_model=Weather, messages=ASK)  # type: ignore[attr-defined]
    assert weather.city == "Paris"
    first, second = llmts_session.requests(order="asc")
    assert (first["status"], second["status"]) == (429, 200)
    assert second["started_monotonic_seconds"] - first["started_monotonic_seconds"] >= 0.9
    assert time.monotonic() - started < 30
