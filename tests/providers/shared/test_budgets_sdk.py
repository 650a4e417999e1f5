"""A session's ``budget`` through each official SDK against a real server: past it, every provider answers
as it answers an account out of credit (OpenAI 429 ``insufficient_quota``, not retried; Anthropic 400 about
the credit balance; Gemini 429 ``RESOURCE_EXHAUSTED``; Bedrock ``ThrottlingException``; Cohere's and
Ollama's 429s), the refusal is journaled, and nothing is consumed (docs/configuration.md, ``budget``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import botocore.config
import botocore.exceptions
import cohere
import ollama
import openai
import pytest
from google.genai import errors

from llmts import SessionClient

pytestmark = pytest.mark.sdk

HI = "Hi"
# 1,000 input and 100 output tokens: at each model's list price, more than the budget below.
USAGE = {"input_tokens": 1000, "output_tokens": 100}
BUDGET = {"max_cost_usd": 0.0005}


def _configure(session: SessionClient, model: str, budget: dict[str, Any] | None = None) -> None:
    session.configure(
        {
            "models": [model],
            "scenarios": [
                {"id": "s", "responses": [{"text": "one", "usage": USAGE}, {"text": "two", "usage": USAGE}]}
            ],
            "budget": budget or BUDGET,
        }
    )


def _assert_refused_and_nothing_consumed(session: SessionClient, provider: str, attempts: int = 2) -> None:
    """One answered request, then ``attempts - 1`` refusals journaled as ``insufficient_quota``; the
    scenario gave its first answer only; the totals hold the answered request alone."""
    entries = session.requests(order="asc")
    assert len(entries) == attempts, [(e["status"], e["error_code"]) for e in entries]
    answered, *refused = entries
    assert (answered["status"], answered["scenario"], answered["provider"]) == (200, "s", provider)
    assert answered["cost_usd"] > BUDGET["max_cost_usd"]
    for entry in refused:
        assert (entry["error_code"], entry["scenario"], entry["cost_usd"], entry["usage"]) == (
            "insufficient_quota",
            None,
            None,
            None,
        )
    (queue,) = session.queues()
    assert (queue["consumed"], queue["next_response_index"]) == (1, 1)
    usage = session.usage()
    assert usage["totals"]["requests"] == 1
    assert usage["totals"]["cost_usd"] == answered["cost_usd"]
    assert usage["budget"]["refused_requests"] == attempts - 1
    assert usage["budget"]["exhausted"].startswith(f"{answered['cost_usd']:.6f} USD spent of max_cost_usd")


def test_openai_gets_insufficient_quota_and_its_sdk_does_not_retry(llmts_session: SessionClient) -> None:
    _configure(llmts_session, "gpt-4o")
    # The SDK's default retries (2) stay on: insufficient_quota must not be retried.
    client = llmts_session.openai_client(_strict_response_validation=True)
    messages: Any = [{"role": "user", "content": HI}]
    assert (
        client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content == "one"
    )
    with pytest.raises(openai.RateLimitError) as refused:
        client.chat.completions.create(model="gpt-4o", messages=messages)
    assert refused.value.status_code == 429
    assert refused.value.code == "insufficient_quota" and refused.value.type == "insufficient_quota"
    body: Any = refused.value.body
    assert body["message"].startswith("You exceeded your current quota, please check your plan")
    assert refused.value.response.headers["x-should-retry"] == "false"
    _assert_refused_and_nothing_consumed(llmts_session, "openai")


def test_anthropic_gets_a_400_about_the_credit_balance(llmts_session: SessionClient) -> None:
    model = "claude-3-5-haiku-20241022"
    _configure(llmts_session, model)
    client = llmts_session.anthropic_client(_strict_response_validation=True)
    messages: Any = [{"role": "user", "content": HI}]
    client.messages.create(model=model, max_tokens=64, messages=messages)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model=model, max_tokens=64, messages=messages)
    body: Any = refused.value.body
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"] == (
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
        "upgrade or purchase credits."
    )
    _assert_refused_and_nothing_consumed(llmts_session, "anthropic")


def test_gemini_gets_resource_exhausted(llmts_session: SessionClient) -> None:
    model = "gemini-2.5-flash"
    _configure(llmts_session, model)
    client = llmts_session.gemini_client()
    client.models.generate_content(model=model, contents=HI)
    with pytest.raises(errors.ClientError) as refused:
        client.models.generate_content(model=model, contents=HI)
    assert (refused.value.code, refused.value.status) == (429, "RESOURCE_EXHAUSTED")
    assert "You exceeded your current quota" in (refused.value.message or "")
    _assert_refused_and_nothing_consumed(llmts_session, "gemini")


def test_bedrock_gets_a_throttling_exception(llmts_session: SessionClient) -> None:
    model = "anthropic.claude-3-5-haiku-20241022-v1:0"
    _configure(llmts_session, model)
    client = llmts_session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))
    messages = [{"role": "user", "content": [{"text": HI}]}]
    client.converse(modelId=model, messages=messages)
    with pytest.raises(client.exceptions.ThrottlingException) as refused:
        client.converse(modelId=model, messages=messages)
    assert isinstance(refused.value, botocore.exceptions.ClientError)
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
    _assert_refused_and_nothing_consumed(llmts_session, "bedrock")


@pytest.mark.parametrize(
    ("model", "provider", "ask", "refusal"),
    [
        pytest.param(
            "command-r-plus-08-2024",
            "cohere",
            lambda s, m: s.cohere_client(max_retries=0).chat(
                model=m, messages=[{"role": "user", "content": HI}]
            ),
            cohere.TooManyRequestsError,
            id="cohere",
        ),
        pytest.param(
            "llama3.2",
            "ollama",
            lambda s, m: s.ollama_client().chat(model=m, messages=[{"role": "user", "content": HI}]),
            ollama.ResponseError,
            id="ollama",
        ),
    ],
)
def test_cohere_and_ollama_get_their_429(
    llmts_session: SessionClient,
    model: str,
    provider: str,
    ask: Callable[[SessionClient, str], Any],
    refusal: type[Exception],
) -> None:
    # Ollama's models cost nothing: a token budget runs out there.
    _configure(llmts_session, model, {"max_total_tokens": 1000})
    ask(llmts_session, model)
    with pytest.raises(refusal) as refused:
        ask(llmts_session, model)
    assert getattr(refused.value, "status_code", None) == 429
    entries = llmts_session.requests(order="asc")
    assert [(e["status"], e["error_code"]) for e in entries] == [(200, None), (429, "insufficient_quota")]
    assert llmts_session.usage()["budget"]["exhausted"] == "1100 tokens used of max_total_tokens 1000"
    (queue,) = llmts_session.queues()
    assert queue["consumed"] == 1
