"""A request's model name is bounded like a configured one (``model_id_chars``, docs/configuration.md):
a longer one is each provider's own 404 before anything keeps it (the journal, usage rows, price and
encoding look-ups kept whole names, 4 MB ones included, past the memory budget; found by a bounds audit)."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import cohere
import httpx
import ollama
import openai
import pytest
from google.genai import errors as genai_errors

from llmts import SessionClient

pytestmark = pytest.mark.sdk

LONG = "m" * 257  # one character past the limit
HI = [{"role": "user", "content": "hi"}]


def _calls(session: SessionClient) -> list[tuple[str, type[Exception], Any]]:
    gemini = session.gemini_client()  # kept: a dropped genai Client closes its connection pool
    return [
        (
            "openai",
            openai.NotFoundError,
            lambda: session.openai_client(max_retries=0).chat.completions.create(model=LONG, messages=HI),
        ),
        (
            "anthropic",
            anthropic.NotFoundError,
            lambda: session.anthropic_client(max_retries=0).messages.create(
                model=LONG, max_tokens=8, messages=HI
            ),
        ),
        (
            "gemini",
            genai_errors.ClientError,
            lambda: gemini.models.generate_content(model=LONG, contents="hi"),
        ),
        (
            "cohere",
            cohere.NotFoundError,
            lambda: session.cohere_client().chat(model=LONG, messages=HI),
        ),
        ("ollama", ollama.ResponseError, lambda: session.ollama_client().chat(model=LONG, messages=HI)),
    ]


def test_a_model_name_past_the_limit_is_each_providers_404(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {"scenarios": [{"responses": [{"text": "Hi."}], "terminal_policy": "repeat_last_response"}]}
    )
    for provider, refused, call in _calls(llmts_session):
        with pytest.raises(refused) as raised:
            call()
        assert "256 characters" in str(raised.value), (provider, raised.value)
    # The longest allowed name is served.
    served = llmts_session.openai_client(max_retries=0).chat.completions.create(model="m" * 256, messages=HI)
    assert served.model == "m" * 256 and served.choices[0].message.content == "Hi."
    entries = llmts_session.requests(order="asc")
    assert [entry["status"] for entry in entries] == [404] * 5 + [200]
    assert all(len(entry["model"]) <= 257 for entry in entries)  # cut, with a trailing "…"


def test_a_four_megabyte_model_name_is_refused_and_not_kept(llmts_session: SessionClient) -> None:
    body = json.dumps({"model": "x" * (4 << 20), "messages": HI})
    answer = httpx.post(
        llmts_session.provider_base + "/openai/v1/chat/completions",
        content=body,
        headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
        timeout=30,
    )
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "model_not_found"
    assert len(answer.content) < 2000
    (entry,) = llmts_session.requests()
    assert len(entry["model"]) == 257 and entry["operation_family"] == "chat"
    assert all(len(row["model"] or "") <= 256 for row in llmts_session.usage()["models"])
