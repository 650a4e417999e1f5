"""Shared pieces of the ``POST /admin-api/verify`` tests: the models a session serves, one scenario that
repeats its last answer once its script runs out, a chat through the openai SDK, and the kinds of a
result's failures."""

from __future__ import annotations

from functools import partial
from typing import Any

from llmts import SessionClient
from tests.helpers import USER_HI
from tests.support.configure import script

__all__ = ["BIG", "CLAUDE", "GPT", "OK", "chat", "configure", "failure_kinds"]

GPT, BIG, CLAUDE = "gpt-4.1-mini", "gpt-4o", "claude-test-1"
REPEAT = "repeat_last_response"
OK = {"text": "ok"}

# One scenario answering the given responses in order; calls past its end get the last one again.
configure = partial(script, models=[GPT, BIG, CLAUDE], scenario={"terminal_policy": REPEAT})


def chat(session: SessionClient, model: str = GPT, **kwargs: Any) -> Any:
    return session.openai_client(max_retries=0).chat.completions.create(
        model=model, messages=kwargs.pop("messages", USER_HI), **kwargs
    )


def failure_kinds(result: Any) -> list[str]:
    return [failure.kind for failure in result.failures]
