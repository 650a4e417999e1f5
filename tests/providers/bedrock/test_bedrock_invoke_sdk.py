"""Bedrock InvokeModel / InvokeModelWithResponseStream with the Anthropic-on-Bedrock body, through
``boto3`` and through the Anthropic SDK's ``AnthropicBedrock`` (strict response validation, SigV4-signed
by the SDK) against a real gunicorn+gevent server."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import anthropic
import botocore.config
import pytest

from llmts import SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

MODEL = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "name": "get_weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


_configure = partial(script, models=[MODEL])


def _boto(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def _body(**fields: Any) -> str:
    return json.dumps(
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 256, "messages": HI, **fields}
    )


@pytest.fixture
def claude(llmts_session: SessionClient) -> Any:
    return llmts_session.anthropic_bedrock_client(_strict_response_validation=True, max_retries=0)


def test_invoke_model_answers_the_anthropic_message(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello there."})

    response = _boto(llmts_session).invoke_model(modelId=MODEL, body=_body())

    message = json.loads(response["body"].read())
    assert message["id"].startswith("msg_bdrk_")
    assert (message["model"], message["content"]) == (MODEL, [{"type": "text", "text": "Hello there."}])
    assert message["usage"]["input_tokens"] == 8
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amzn-bedrock-input-token-count"] == "8"
    assert headers["x-amzn-bedrock-output-token-count"] == "3"
    assert llmts_session.requests()[0]["operation"] == "invoke"


def test_invoke_stream_chunks_carry_base64_anthropic_events(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "ab", "chunks": ["a", "b"]})

    response = _boto(llmts_session).invoke_model_with_response_stream(modelId=MODEL, body=_body())
    events = [json.loads(event["chunk"]["bytes"]) for event in response["body"]]

    # botocore's model marks the result's contentType (X-Amzn-Bedrock-Content-Type) required.
    assert response["contentType"] == "application/json"

    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[-1]["amazon-bedrock-invocationMetrics"]["outputTokenCount"] == 1
    entry = llmts_session.requests()[0]
    assert (entry["operation"], entry["streaming"], entry["transport_outcome"]) == (
        "invoke-with-response-stream",
        True,
        "completed",
    )
    assert entry["emitted_content_frames"] == 2
    # The stream ends at EOF: there is no terminal marker to observe.
    assert entry["terminal_marker_observed"] is False


def test_invoke_missing_anthropic_version_is_a_validation_exception(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "never"})
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ValidationException) as raised:
        client.invoke_model(modelId=MODEL, body=json.dumps({"max_tokens": 5, "messages": HI}))
    assert "anthropic_version" in raised.value.response["Error"]["Message"]


def test_invoke_stream_scripted_throttle(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"error": {"status": 429, "code": "slow", "message": "Too many"}})
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ThrottlingException):
        client.invoke_model_with_response_stream(modelId=MODEL, body=_body())


def test_anthropic_bedrock_text_and_stream(llmts_session: SessionClient, claude: Any) -> None:
    _configure(
        llmts_session,
        {"text": "One two", "chunks": ["One", " two"]},
        scenario={"terminal_policy": "repeat_last_response"},
    )

    message = claude.messages.create(model=MODEL, max_tokens=64, messages=HI)
    with claude.messages.stream(model=MODEL, max_tokens=64, messages=HI) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()

    assert [b.text for b in message.content] == ["One two"]
    assert pieces == ["One", " two"]
    assert final.stop_reason == "end_turn"
    assert [e["operation"] for e in llmts_session.requests(order="asc")] == [
        "invoke",
        "invoke-with-response-stream",
    ]
    # The SDK signs with SigV4: its access key id is the session's credential.
    assert all(e["status"] == 200 for e in llmts_session.requests())


def test_anthropic_bedrock_tool_round_trip(llmts_session: SessionClient, claude: Any) -> None:
    call = {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    _configure(llmts_session, {"tool_calls": [call]}, {"text": "Sunny."})

    first = claude.messages.create(model=MODEL, max_tokens=64, messages=HI, tools=[WEATHER])
    assert first.stop_reason == "tool_use"
    (use,) = first.content
    assert (use.id, use.name, use.input) == ("toolu_1", "get_weather", {"city": "Paris"})
    history = [
        *HI,
        {"role": "assistant", "content": [use.model_dump(exclude_none=True)]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "clear"}]},
    ]
    second = claude.messages.create(model=MODEL, max_tokens=64, messages=history, tools=[WEATHER])
    assert [b.text for b in second.content] == ["Sunny."]
    results = llmts_session.requests(order="asc")[-1]["tool_results"]
    assert [(r["call_id"], r["content"]) for r in results] == [("toolu_1", "clear")]


def test_anthropic_bedrock_errors_are_typed(llmts_session: SessionClient, claude: Any) -> None:
    _configure(
        llmts_session,
        {"error": {"status": 429, "code": "slow", "message": "Too many"}},
        {"error": {"status": 400, "code": "bad", "message": "no"}},
    )
    with pytest.raises(anthropic.RateLimitError):
        claude.messages.create(model=MODEL, max_tokens=64, messages=HI)
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(model=MODEL, max_tokens=64, messages=HI)
