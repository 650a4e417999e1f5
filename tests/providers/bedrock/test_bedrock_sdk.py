"""AWS Bedrock Runtime Converse through ``boto3`` (``bedrock-runtime``, SigV4-signed with fake credentials)
against a real gunicorn+gevent server: text, model ids, tool round trip, structured output, prompt-cache
usage, every modelled error class, botocore's retry of ``ThrottlingException``, and the event stream.

botocore validates requests against its service model and parses responses by it (it has no strict
response mode); ``tests/providers/bedrock/test_bedrock_wire.py`` checks what it hides (headers, frames, CRCs).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import botocore.config
import botocore.exceptions
import pytest

from llmts import SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
PROFILE = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
HI = [{"role": "user", "content": [{"text": "Hi"}]}]
WEATHER = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Weather for a city",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
}
# Over 1024 estimated tokens (4 characters each): long enough to be cached at a cache point.
LONG_SYSTEM = "You are a careful assistant who answers in one short sentence. " * 72


def _client(session: SessionClient, **retries: Any) -> Any:
    config = botocore.config.Config(retries=retries or {"total_max_attempts": 1})
    return session.bedrock_client(config=config)


@pytest.fixture
def client(llmts_session: SessionClient) -> Any:
    return _client(llmts_session)


_configure = partial(script, models=[MODEL], scenario={"id": "s"})


def _converse(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("modelId", MODEL)
    kwargs.setdefault("messages", HI)
    return client.converse(**kwargs)


def _stream_events(client: Any, **kwargs: Any) -> list[dict[str, Any]]:
    kwargs.setdefault("modelId", MODEL)
    kwargs.setdefault("messages", HI)
    return list(client.converse_stream(**kwargs)["stream"])


# --- text and model ids ---------------------------------------------------------------------------


def test_text_answer_with_usage(llmts_session: SessionClient, client: Any) -> None:
    _configure(llmts_session, {"text": "Hello there."})

    answer = _converse(client)

    assert answer["output"]["message"] == {"role": "assistant", "content": [{"text": "Hello there."}]}
    assert answer["stopReason"] == "end_turn"
    # Documented estimate: 3 per request + (4 + ceil(2/4)) per message; output ceil(12/4).
    assert answer["usage"] == {
        "inputTokens": 8,
        "outputTokens": 3,
        "totalTokens": 11,
        "cacheReadInputTokens": 0,
        "cacheWriteInputTokens": 0,
    }
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert answer["ResponseMetadata"]["RequestId"].startswith("req_")


@pytest.mark.parametrize(
    "model_id",
    [
        PROFILE,
        "eu.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "amazon.nova-lite-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    ],
)
def test_model_ids_with_colons_dots_profiles_and_arns(llmts_session: SessionClient, model_id: str) -> None:
    llmts_session.configure(
        {"models": [model_id], "scenarios": [{"model": model_id, "responses": [{"text": "ok"}]}]}
    )

    answer = _converse(_client(llmts_session), modelId=model_id)

    assert answer["output"]["message"]["content"] == [{"text": "ok"}]
    entry = llmts_session.requests(order="asc")[-1]
    assert (entry["provider"], entry["model"], entry["operation"]) == ("bedrock", model_id, "converse")


def test_unconfigured_session_echoes(llmts_session: SessionClient, client: Any) -> None:
    answer = _converse(client, messages=[{"role": "user", "content": [{"text": "echo me"}]}])
    assert answer["output"]["message"]["content"] == [{"text": "echo me"}]


# --- tools and structured output -----------------------------------------------------------------


def test_tool_use_round_trip(llmts_session: SessionClient, client: Any) -> None:
    llmts_session.configure(
        {
            "models": [MODEL],
            "conversations": [
                {
                    "id": "weather",
                    "start_at": "ask",
                    "steps": [
                        {
                            "id": "ask",
                            "when": {"latest_user_contains": "weather"},
                            "response": {
                                "tool_calls": [
                                    {"id": "tooluse_1", "name": "get_weather", "arguments": {"city": "Paris"}}
                                ]
                            },
                            "then": ["answer"],
                        },
                        {
                            "id": "answer",
                            "when": {"tool_result": {"name": "get_weather", "call_id": "tooluse_1"}},
                            "response": {"text": "Sunny in Paris."},
                            "complete": True,
                        },
                    ],
                }
            ],
        }
    )
    ask = [{"role": "user", "content": [{"text": "What is the weather in Paris?"}]}]
    tools = {"tools": [WEATHER]}

    first = _converse(client, messages=ask, toolConfig=tools)

    assert first["stopReason"] == "tool_use"
    call = first["output"]["message"]["content"][0]["toolUse"]
    assert call == {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}
    history = [
        *ask,
        first["output"]["message"],
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"json": {"sky": "clear"}}]}}],
        },
    ]
    second = _converse(client, messages=history, toolConfig=tools)
    assert second["output"]["message"]["content"] == [{"text": "Sunny in Paris."}]
    assert llmts_session.conversations()[0]["executed_steps"] == ["ask", "answer"]
    results = llmts_session.requests(order="asc")[-1]["tool_results"]
    assert [(r["call_id"], r["name"], r["content"]) for r in results] == [
        ("tooluse_1", "get_weather", '{"sky":"clear"}')
    ]


def test_structured_output(llmts_session: SessionClient, client: Any) -> None:
    request_shape = client.meta.service_model.operation_model("Converse").input_shape
    if "outputConfig" not in request_shape.members:  # older botocore models predate structured output
        pytest.skip("this botocore's Converse model has no outputConfig")
    _configure(llmts_session, {"json": {"answer": 42}})
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}}
    output_config = {
        "textFormat": {
            "type": "json_schema",
            "structure": {"jsonSchema": {"schema": json.dumps(schema), "name": "a"}},
        }
    }

    answer = _converse(client, outputConfig=output_config)

    assert json.loads(answer["output"]["message"]["content"][0]["text"]) == {"answer": 42}


# --- prompt cache ----------------------------------------------------------------------------------


def test_cache_points_write_then_read(llmts_session: SessionClient, client: Any) -> None:
    _configure(llmts_session, {"text": "ok"}, scenario={"id": "s", "terminal_policy": "repeat_last_response"})
    system = [{"text": LONG_SYSTEM}, {"cachePoint": {"type": "default"}}]

    first = _converse(client, system=system)["usage"]
    second = _converse(client, system=system)["usage"]
    uncached = _converse(client, system=[{"text": LONG_SYSTEM}])["usage"]

    prefix = first["cacheWriteInputTokens"]
    assert prefix > 1024 and first["cacheReadInputTokens"] == 0
    assert (second["cacheWriteInputTokens"], second["cacheReadInputTokens"]) == (0, prefix)
    # inputTokens is only the uncached part: the three add up to the whole prompt.
    assert second["inputTokens"] + prefix == first["inputTokens"] + prefix == uncached["inputTokens"]
    assert second["totalTokens"] == uncached["totalTokens"]
    stream_usage = _stream_events(client, system=system)[-1]["metadata"]["usage"]
    assert stream_usage["cacheReadInputTokens"] == prefix


# --- errors and retries --------------------------------------------------------------------------

ERRORS = [
    (400, "ValidationException"),
    (403, "AccessDeniedException"),
    (404, "ResourceNotFoundException"),
    (429, "ThrottlingException"),
    (503, "ServiceUnavailableException"),
    (500, "InternalServerException"),
    (408, "ModelTimeoutException"),
    (424, "ModelErrorException"),
]


@pytest.mark.parametrize(("status", "name"), ERRORS)
def test_scripted_errors_raise_the_modelled_exception(
    llmts_session: SessionClient, client: Any, status: int, name: str
) -> None:
    _configure(llmts_session, {"error": {"status": status, "code": "scripted", "message": f"{name} here"}})

    with pytest.raises(getattr(client.exceptions, name)) as raised:
        _converse(client)

    error = raised.value.response
    assert (error["Error"]["Code"], error["Error"]["Message"]) == (name, f"{name} here")
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status
    assert llmts_session.requests(order="asc")[-1]["error_code"] == "scripted"


def test_aws_exception_name_as_code_wins(llmts_session: SessionClient, client: Any) -> None:
    _configure(
        llmts_session, {"error": {"status": 429, "code": "ModelNotReadyException", "message": "warming"}}
    )
    with pytest.raises(client.exceptions.ModelNotReadyException):
        _converse(client)


def test_model_stream_error_on_a_stream_route(llmts_session: SessionClient, client: Any) -> None:
    failure = {"status": 424, "code": "ModelStreamErrorException", "message": "the model stream broke"}
    _configure(llmts_session, {"error": failure})
    with pytest.raises(client.exceptions.ModelStreamErrorException) as raised:
        _stream_events(client)
    assert raised.value.response["Error"]["Message"] == "the model stream broke"


def test_botocore_retries_throttling_then_succeeds(llmts_session: SessionClient) -> None:
    throttle = {"error": {"status": 429, "code": "throttled", "message": "Too many requests"}}
    _configure(llmts_session, throttle, throttle, {"text": "finally"})
    client = _client(llmts_session, mode="standard", total_max_attempts=3)

    answer = _converse(client)

    assert answer["output"]["message"]["content"] == [{"text": "finally"}]
    assert answer["ResponseMetadata"]["RetryAttempts"] == 2
    assert [e["status"] for e in llmts_session.requests(order="asc")] == [429, 429, 200]


def test_botocore_gives_up_after_max_attempts(llmts_session: SessionClient) -> None:
    throttle = {"error": {"status": 429, "code": "throttled", "message": "Too many requests"}}
    _configure(llmts_session, throttle, scenario={"id": "s", "terminal_policy": "repeat_last_response"})
    client = _client(llmts_session, mode="standard", total_max_attempts=2)

    with pytest.raises(client.exceptions.ThrottlingException) as raised:
        _converse(client)

    assert raised.value.response["ResponseMetadata"]["RetryAttempts"] == 1
    assert len(llmts_session.requests()) == 2


def test_validation_errors_are_not_retried(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"error": {"status": 400, "code": "bad", "message": "no"}}, {"text": "never"})
    client = _client(llmts_session, mode="standard", total_max_attempts=3)
    with pytest.raises(client.exceptions.ValidationException):
        _converse(client)
    assert len(llmts_session.requests()) == 1


def test_unknown_model_is_a_validation_exception(llmts_session: SessionClient, client: Any) -> None:
    """As AWS answers an unknown model id: 400 ValidationException (tests/providers/
    test_bedrock_invoke_amazon_sdk.py covers every operation)."""
    llmts_session.configure({"models": [MODEL], "scenarios": [{"responses": [{"text": "x"}]}]})
    with pytest.raises(client.exceptions.ValidationException) as raised:
        _converse(client, modelId="us.meta.llama3-2-1b-instruct-v1:0")
    assert raised.value.response["Error"]["Message"] == "The provided model identifier is invalid."


def test_malformed_request_is_a_validation_exception(llmts_session: SessionClient, client: Any) -> None:
    _configure(llmts_session, {"text": "never"})
    with pytest.raises(client.exceptions.ValidationException) as raised:
        _converse(
            client,
            messages=[{"role": "user", "content": [{"text": "a"}, {"cachePoint": {"type": "default"}}]}] * 5,
        )
    assert "cachePoint" in raised.value.response["Error"]["Message"]
    assert llmts_session.requests(order="asc")[-1]["status"] == 400


def test_exhausted_scenario_keeps_its_llmts_code(llmts_session: SessionClient, client: Any) -> None:
    _configure(llmts_session, {"text": "once"})
    _converse(client)
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        _converse(client)
    assert raised.value.response["Error"]["Code"] == "llm_test_server_scenario_exhausted"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409


def test_provider_credentials_are_the_access_key_id(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "models": [MODEL],
            "provider_credentials": {"bedrock": "AKIDLLMTSTEST"},
            "scenarios": [{"responses": [{"text": "in"}]}],
        }
    )
    wrong = llmts_session.bedrock_client(
        aws_access_key_id="AKIDWRONG", config=botocore.config.Config(retries={"total_max_attempts": 1})
    )
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        _converse(wrong)
    assert raised.value.response["Error"]["Code"] == "UnrecognizedClientException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403

    assert _converse(_client(llmts_session))["output"]["message"]["content"] == [{"text": "in"}]


# --- converse-stream -----------------------------------------------------------------------------


def test_stream_text_events(llmts_session: SessionClient, client: Any) -> None:
    _configure(llmts_session, {"text": "One two three", "chunks": ["One", " two", " three"]})

    events = _stream_events(client)

    assert [next(iter(e)) for e in events] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    assert [e["contentBlockDelta"]["delta"]["text"] for e in events[1:4]] == ["One", " two", " three"]
    assert events[5]["messageStop"] == {"stopReason": "end_turn"}
    assert events[6]["metadata"]["usage"]["outputTokens"] == 4
    entry = llmts_session.requests(order="asc")[-1]
    assert (entry["operation"], entry["streaming"], entry["terminal_marker_observed"]) == (
        "converse-stream",
        True,
        True,
    )
    assert entry["transport_outcome"] == "completed"


def test_stream_tool_use(llmts_session: SessionClient, client: Any) -> None:
    call = {"id": "tooluse_9", "name": "get_weather", "arguments": {"city": "Oslo"}}
    _configure(llmts_session, {"tool_calls": [call]})

    events = _stream_events(client, toolConfig={"tools": [WEATHER]})

    start = events[1]["contentBlockStart"]
    assert start == {
        "start": {"toolUse": {"toolUseId": "tooluse_9", "name": "get_weather"}},
        "contentBlockIndex": 0,
    }
    pieces = "".join(
        e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events if "contentBlockDelta" in e
    )
    assert json.loads(pieces) == {"city": "Oslo"}
    assert events[-2]["messageStop"] == {"stopReason": "tool_use"}


def test_stream_scripted_error_before_the_stream(llmts_session: SessionClient, client: Any) -> None:
    _configure(llmts_session, {"error": {"status": 429, "code": "x", "message": "slow"}})
    with pytest.raises(client.exceptions.ThrottlingException):
        _stream_events(client)


def test_verify_requires_terminal_marker_for_converse_stream(
    llmts_session: SessionClient, client: Any
) -> None:
    _configure(llmts_session, {"text": "ok"})
    _stream_events(client)
    result = llmts_session.verify(
        {
            "requests": [
                {
                    "name": "stream",
                    "query": {"provider": "bedrock", "operation": "converse-stream"},
                    "minimum_count": 1,
                    "require_streaming_terminal_marker": True,
                }
            ]
        }
    )
    assert result.passed, result.failures


# --- one session, every provider -----------------------------------------------------------------


def test_one_shared_scenario_across_providers(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {"id": "shared", "responses": [{"text": f"answer {i}"} for i in range(1, 6)]},
            ],
        }
    )
    client = _client(llmts_session)
    gemini = llmts_session.gemini_client()
    user = [{"role": "user", "content": "Hi"}]

    answers = [
        _converse(client)["output"]["message"]["content"][0]["text"],
        llmts_session.openai_client(max_retries=0)
        .chat.completions.create(model=MODEL, messages=user)
        .choices[0]
        .message.content,
        llmts_session.anthropic_client(max_retries=0)
        .messages.create(model=MODEL, max_tokens=8, messages=user)
        .content[0]
        .text,
        gemini.models.generate_content(model=MODEL, contents="Hi").text,
        llmts_session.anthropic_bedrock_client(max_retries=0)
        .messages.create(model=MODEL, max_tokens=8, messages=user)
        .content[0]
        .text,
    ]

    assert answers == [f"answer {i}" for i in range(1, 6)]
    journal = llmts_session.requests(order="asc")
    assert [(e["provider"], e["operation"], e["response_index"]) for e in journal] == [
        ("bedrock", "converse", 0),
        ("openai", "chat.completions", 1),
        ("anthropic", "messages", 2),
        ("gemini", "generate_content", 3),
        ("bedrock", "invoke", 4),
    ]


def test_conversation_client_sends_its_header_through_boto3(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "tagged"})
    client = llmts_session.for_conversation("c-bedrock").bedrock_client(
        config=botocore.config.Config(retries={"total_max_attempts": 1})
    )

    assert _converse(client)["output"]["message"]["content"] == [{"text": "tagged"}]
    assert llmts_session.requests()[0]["conversation"] == "c-bedrock"


# --- realistic answers (docs/realistic-answers.md) ----------------------------------------------------


def test_reasoning_mixed_answer_and_finish_reasons(llmts_session: SessionClient, client: Any) -> None:
    mixed = {
        "reasoning": {"text": "Look the city up.", "signature": "sig-1"},
        "text": "Let me check.",
        "tool_calls": [{"id": "tooluse_2", "name": "get_weather", "arguments": {"city": "Rome"}}],
    }
    _configure(
        llmts_session,
        mixed,
        mixed,
        {"text": "The answer is", "finish_reason": "length"},
        {"refusal": "I can't help with that."},
        {"reasoning": {"text": "hidden", "redacted": True, "signature": "opaque"}, "text": "Done."},
    )
    tools = {"tools": [WEATHER]}

    whole = _converse(client, toolConfig=tools)
    assert whole["output"]["message"]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "Look the city up.", "signature": "sig-1"}}},
        {"text": "Let me check."},
        {"toolUse": {"toolUseId": "tooluse_2", "name": "get_weather", "input": {"city": "Rome"}}},
    ]
    assert whole["stopReason"] == "tool_use"

    events = _stream_events(client, toolConfig=tools)
    deltas = [
        (e["contentBlockDelta"]["contentBlockIndex"], e["contentBlockDelta"]["delta"])
        for e in events
        if "contentBlockDelta" in e
    ]
    assert deltas[:3] == [
        (0, {"reasoningContent": {"text": "Look the city up."}}),
        (0, {"reasoningContent": {"signature": "sig-1"}}),
        (1, {"text": "Let me check."}),
    ]
    assert events[-2]["messageStop"] == {"stopReason": "tool_use"}

    assert _converse(client)["stopReason"] == "max_tokens"
    refused = _converse(client)
    assert (refused["stopReason"], refused["output"]["message"]["content"]) == (
        "content_filtered",
        [{"text": "I can't help with that."}],
    )
    redacted = _converse(client)["output"]["message"]["content"][0]["reasoningContent"]
    assert redacted == {"redactedContent": b"opaque"}  # botocore decodes the base64 blob
