"""Shared pieces of the Cohere SDK tests (tests/providers/cohere/test_cohere_*.py)."""

from __future__ import annotations

import time
from typing import Any

from llmts import ConfigBuilder, SessionClient

MODEL = "command-a-03-2025"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}


def builder() -> ConfigBuilder:
    return ConfigBuilder().models(MODEL)


def chat(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("messages", HI)
    return client.chat(**kwargs)


def stream(client: Any, **kwargs: Any) -> list[Any]:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("messages", HI)
    return list(client.chat_stream(**kwargs))


def entries(session: SessionClient, **filters: Any) -> list[dict[str, Any]]:
    """The session's Cohere journal entries, once all of them completed."""
    deadline = time.monotonic() + 5
    while True:
        found = session.requests(provider="cohere", **filters)
        if all(entry["completed"] for entry in found):
            return found
        assert time.monotonic() < deadline
        time.sleep(0.01)
