"""Bedrock in the journal and verification: terminal evidence per streaming route (ConverseStream's
``messageStop``/``metadata``; InvokeModelWithResponseStream has none, so requiring it is refused), and
determinism: two sessions with the same seed and clock give byte-identical answers."""

from __future__ import annotations

import json
from typing import Any

import botocore.config
import pytest

from llmts import LlmTestServer, SessionClient

pytestmark = pytest.mark.sdk

MODEL = "eu.anthropic.claude-3-7-sonnet-20250219-v1:0"
NOVA = "eu.amazon.nova-pro-v1:0"
TITAN = "amazon.titan-text-lite-v1"
HI = [{"role": "user", "content": [{"text": "Hi"}]}]
INVOKE_BODY = json.dumps(
    {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "Hi"}],
    }
)


def _client(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def _expect(operation: str) -> dict[str, Any]:
    return {
        "requests": [
            {
                "name": operation,
                "query": {"provider": "bedrock", "operation": operation},
                "require_streaming_terminal_marker": True,
            }
        ]
    }


def test_converse_stream_marker_passes_and_a_cut_stream_fails(llmts_session: SessionClient) -> None:
    cut = {"mode": "early_clean_end", "after_content_frames": 1}
    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {"text": "a b", "chunks": ["a", " b"]},
                        {"text": "a b", "chunks": ["a", " b"], "stream_delivery": cut},
                    ]
                }
            ],
        }
    )
    client = _client(llmts_session)
    list(client.converse_stream(modelId=MODEL, messages=HI)["stream"])
    assert llmts_session.verify(_expect("converse-stream")).passed

    list(client.converse_stream(modelId=MODEL, messages=HI)["stream"])
    result = llmts_session.verify(
        {
            **_expect("converse-stream"),
            "requests": [
                {**_expect("converse-stream")["requests"][0], "minimum_count": 2, "maximum_count": 2}
            ],
        }
    )
    assert not result.passed
    assert [f.kind for f in result.failures] == ["terminal_marker"]


def test_invoke_stream_terminal_marker_verification_is_refused(llmts_session: SessionClient) -> None:
    llmts_session.configure({"models": [MODEL], "scenarios": [{"responses": [{"text": "whole"}]}]})
    response = _client(llmts_session).invoke_model_with_response_stream(modelId=MODEL, body=INVOKE_BODY)
    assert json.loads(list(response["body"])[-1]["chunk"]["bytes"])["type"] == "message_stop"

    result = llmts_session.verify(_expect("invoke-with-response-stream"))

    assert not result.passed
    (failure,) = result.failures
    assert failure.kind == "terminal_marker_unavailable"
    assert "bedrock invoke-with-response-stream" in failure.message and "EOF" in failure.message
    # Without the marker requirement the same request verifies.
    plain = _expect("invoke-with-response-stream")
    plain["requests"][0]["require_streaming_terminal_marker"] = False
    assert llmts_session.verify(plain).passed


def _run(session: SessionClient) -> list[Any]:
    session.configure(
        {
            "models": [MODEL, NOVA, TITAN],
            "determinism": {"seed": "bedrock-42", "fixed_utc": "2026-01-01T00:00:00Z"},
            "scenarios": [
                {
                    "responses": [
                        {"tool_calls": [{"id": "tooluse_1", "name": "f", "arguments": {"x": 1}}]},
                        {"text": "Two words.", "chunks": ["Two", " words."]},
                        {"text": "Invoked."},
                        # No id: Nova's toolUseId comes from the seed.
                        {"tool_calls": [{"name": "f", "arguments": {"x": 2}}]},
                        {"text": "Titan.", "chunks": ["Ti", "tan."]},
                    ]
                }
            ],
        }
    )
    client = _client(session)
    tools = {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]}
    first = client.converse(modelId=MODEL, messages=HI, toolConfig=tools)
    stream = list(client.converse_stream(modelId=MODEL, messages=HI)["stream"])
    invoked = json.loads(client.invoke_model(modelId=MODEL, body=INVOKE_BODY)["body"].read())
    nova_body = json.dumps({"messages": HI, "toolConfig": tools})
    nova = [
        e["chunk"] for e in client.invoke_model_with_response_stream(modelId=NOVA, body=nova_body)["body"]
    ]
    titan_body = json.dumps({"inputText": "Hi"})
    titan = [
        e["chunk"] for e in client.invoke_model_with_response_stream(modelId=TITAN, body=titan_body)["body"]
    ]
    headers = first["ResponseMetadata"]["HTTPHeaders"]
    return [first["output"], first["usage"], stream, invoked, headers["date"], nova, titan]


def test_two_sessions_with_the_same_seed_answer_identically(llmts_server: LlmTestServer) -> None:
    one, two = llmts_server.create_session(), llmts_server.create_session()
    try:
        assert _run(one) == _run(two)
        assert _run(one)[3]["id"].startswith("msg_bdrk_")
        nova = [json.loads(chunk["bytes"]) for chunk in _run(one)[5]]
        start = next(c["contentBlockStart"] for c in nova if "contentBlockStart" in c)
        assert start["start"]["toolUse"]["toolUseId"]  # seeded, and the same in both sessions
    finally:
        one.delete()
        two.delete()
