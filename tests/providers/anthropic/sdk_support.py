"""Shared pieces of the official ``anthropic`` SDK tests: the model and messages they send, the strict
client they build, and the ``client`` fixture (import it by name to use it)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from llmts import ConfigBuilder, SessionClient

MODEL = "claude-test-1"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def config_builder() -> ConfigBuilder:
    return ConfigBuilder().models(MODEL)


def strict_client(session: SessionClient, **kwargs: Any) -> Any:
    kwargs.setdefault("max_retries", 0)
    return session.anthropic_client(_strict_response_validation=True, **kwargs)


@pytest.fixture(name="client")
def strict_anthropic_client(app_session: SessionClient) -> Any:
    return strict_client(app_session)


def create_message(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("max_tokens", 256)
    kwargs.setdefault("messages", HI)
    return client.messages.create(**kwargs)


def body_error_code(error: anthropic.APIStatusError) -> str:
    body = error.body
    assert isinstance(body, dict)
    return str(body["error"]["code"])
