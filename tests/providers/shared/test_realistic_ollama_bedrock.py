"""Pacing and rate limits on Ollama and AWS Bedrock (docs/realistic-answers.md, "Pacing", "Rate limits"),
through the official clients against a real server: every stream kind of the native Ollama API, Bedrock
ConverseStream and InvokeModelWithResponseStream, paced as planned on the server's own journal clock;
an exhausted window is Ollama's 429 (``ollama.ResponseError``) and Bedrock's ``ThrottlingException``,
which botocore retries (its own back-off, not ``retry-after``) into the next window. Bedrock's
``content_filter`` finish reason is ``content_filtered``."""

from __future__ import annotations

from typing import Any

import botocore.config
import botocore.exceptions
import ollama
import orjson
import pytest

from llmts import SessionClient

pytestmark = pytest.mark.sdk

OLLAMA = "llama3.2"
BEDROCK = "anthropic.claude-3-7-sonnet-20250219-v1:0"
TEXT = "One two three four five six seven eight nine ten."
CHUNKS = [TEXT[i : i + 10] for i in range(0, len(TEXT), 10)]
PACING = {"ttft_ms": 150, "tokens_per_second": 200}
CALL = {"id": "tooluse_1", "name": "get_weather", "arguments": {"city": "Paris, a long enough argument text"}}
HI = [{"role": "user", "content": "Hi"}]
CONVERSE_HI = [{"role": "user", "content": [{"text": "Hi"}]}]
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}


def _boto(session: SessionClient, **retries: Any) -> Any:
    config = botocore.config.Config(retries=retries or {"total_max_attempts": 1})
    return session.bedrock_client(config=config)


def _assert_paced(entries: list[dict[str, Any]]) -> None:
    assert entries
    for entry in entries:
        tokens = entry["usage"]["output_tokens"]
        assert entry["success"], entry
        assert entry["pacing_planned_ms"] == pytest.approx(150 + tokens * 5, abs=1)
        assert entry["first_frame_monotonic_seconds"] - entry["started_monotonic_seconds"] >= 0.15
        spread = entry["last_frame_monotonic_seconds"] - entry["first_frame_monotonic_seconds"]
        assert spread >= tokens * 0.005 - 0.02


def test_ollama_streams_are_paced(llmts_session: SessionClient) -> None:
    reasoning = {"reasoning": {"text": "Think it over. " * 4}, "text": TEXT, "chunks": CHUNKS}
    llmts_session.configure(
        {
            "models": [OLLAMA],
            "pacing": PACING,
            "scenarios": [
                {"responses": [reasoning, {"tool_calls": [CALL]}, {"text": TEXT, "chunks": CHUNKS}]}
            ],
        }
    )
    client = llmts_session.ollama_client()
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}

    assert "".join(p.message.content for p in client.chat(model=OLLAMA, messages=HI, stream=True)) == TEXT
    assert list(client.chat(model=OLLAMA, messages=HI, tools=[weather], stream=True))[-1].done
    assert "".join(p.response for p in client.generate(model=OLLAMA, prompt="Hi", stream=True)) == TEXT

    _assert_paced(llmts_session.requests(order="asc"))


def test_bedrock_streams_are_paced(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "models": [BEDROCK],
            "pacing": PACING,
            "scenarios": [
                {
                    "responses": [
                        {"reasoning": {"text": "Think it over. " * 4}, "text": TEXT, "chunks": CHUNKS},
                        {"tool_calls": [CALL]},
                        {"text": TEXT, "chunks": CHUNKS},
                    ]
                }
            ],
        }
    )
    client = _boto(llmts_session)

    events = list(client.converse_stream(modelId=BEDROCK, messages=CONVERSE_HI)["stream"])
    assert "messageStop" in events[-2]
    calls = list(client.converse_stream(modelId=BEDROCK, messages=CONVERSE_HI, toolConfig=TOOLS)["stream"])
    assert calls[-2]["messageStop"] == {"stopReason": "tool_use"}
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 256, "messages": HI}
    invoked = client.invoke_model_with_response_stream(modelId=BEDROCK, body=orjson.dumps(body))["body"]
    assert [orjson.loads(e["chunk"]["bytes"])["type"] for e in invoked][-1] == "message_stop"

    _assert_paced(llmts_session.requests(order="asc"))


def test_bedrock_content_filter_is_content_filtered(llmts_session: SessionClient) -> None:
    cut = {"text": "Partial", "finish_reason": "content_filter"}
    llmts_session.configure({"models": [BEDROCK], "scenarios": [{"responses": [cut, cut]}]})
    client = _boto(llmts_session)

    assert client.converse(modelId=BEDROCK, messages=CONVERSE_HI)["stopReason"] == "content_filtered"
    events = list(client.converse_stream(modelId=BEDROCK, messages=CONVERSE_HI)["stream"])
    assert events[-2]["messageStop"] == {"stopReason": "content_filtered"}


def test_ollama_rate_limit_is_a_429_response_error(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "models": [OLLAMA],
            "rate_limits": {"requests_per_minute": 1},
            "scenarios": [{"responses": [{"text": "first"}, {"text": "second"}]}],
        }
    )
    client = llmts_session.ollama_client()
    assert client.chat(model=OLLAMA, messages=HI).message.content == "first"
    with pytest.raises(ollama.ResponseError) as error:
        client.chat(model=OLLAMA, messages=HI)
    assert error.value.status_code == 429 and "Rate limit reached for requests" in error.value.error
    (refused, _) = llmts_session.requests()
    assert (refused["status"], refused["error_code"]) == (429, "rate_limit_exceeded")
    assert 59 < refused["retry_after_seconds"] <= 60


def test_bedrock_rate_limit_is_throttling_which_botocore_retries(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "models": [BEDROCK],
            "rate_limits": {"requests_per_minute": 1, "window_seconds": 1.5},
            "scenarios": [{"responses": [{"text": "first"}, {"text": "second"}, {"text": "third"}]}],
        }
    )
    once = _boto(llmts_session)
    assert (
        once.converse(modelId=BEDROCK, messages=CONVERSE_HI)["output"]["message"]["content"][0]["text"]
        == "first"
    )
    with pytest.raises(once.exceptions.ThrottlingException) as error:
        once.converse(modelId=BEDROCK, messages=CONVERSE_HI)
    response = error.value.response
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert float(response["ResponseMetadata"]["HTTPHeaders"]["retry-after"]) == 2  # 1.5 s, rounded up

    # botocore retries ThrottlingException with its own back-off; enough attempts reach the next window.
    retrying = _boto(llmts_session, total_max_attempts=10, mode="standard")
    answer = retrying.converse(modelId=BEDROCK, messages=CONVERSE_HI)
    assert answer["output"]["message"]["content"][0]["text"] == "second"
    assert answer["ResponseMetadata"]["RetryAttempts"] >= 1
    statuses = [entry["status"] for entry in llmts_session.requests(order="asc")]
    assert statuses[:2] == [200, 429] and statuses[-1] == 200 and set(statuses[2:-1]) <= {429}
