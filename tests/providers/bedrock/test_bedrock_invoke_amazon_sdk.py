"""Bedrock InvokeModel / InvokeModelWithResponseStream with Amazon's own body families, through ``boto3``
against a real gunicorn+gevent server: Amazon Nova (``messages-v1``) and Amazon Titan Text
(docs/providers.md, "AWS Bedrock"). Also the answer to a model id the session does not serve."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import anthropic
import botocore.config
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

NOVA = "us.amazon.nova-lite-v1:0"
TITAN = "amazon.titan-text-express-v1"
HI = [{"role": "user", "content": [{"text": "Hi"}]}]
WEATHER = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Weather by city",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
}


_configure = partial(script, models=[NOVA, TITAN])


def _boto(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def _nova(**fields: Any) -> str:
    return json.dumps({"schemaVersion": "messages-v1", "messages": HI, **fields})


def _titan(**fields: Any) -> str:
    return json.dumps(
        {"inputText": "User: Hi\nBot:", "textGenerationConfig": {"maxTokenCount": 64}, **fields}
    )


def _chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(event["chunk"]["bytes"]) for event in response["body"]]


# --- Amazon Nova -------------------------------------------------------------------------------------


def test_nova_invoke_answers_the_nova_message(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello there."})

    response = _boto(llmts_session).invoke_model(
        modelId=NOVA,
        body=_nova(system=[{"text": "Be brief."}], inferenceConfig={"maxTokens": 64, "temperature": 0.2}),
    )

    answer = json.loads(response["body"].read())
    assert answer["output"] == {"message": {"role": "assistant", "content": [{"text": "Hello there."}]}}
    assert answer["stopReason"] == "end_turn"
    usage = answer["usage"]
    assert set(usage) == {
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "cacheReadInputTokenCount",
        "cacheWriteInputTokenCount",
    }
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"] > 0
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amzn-bedrock-output-token-count"] == str(usage["outputTokens"])
    entry = llmts_session.requests()[0]
    assert (entry["operation"], entry["model"], entry["status"]) == ("invoke", NOVA, 200)


def test_nova_stream_sends_converse_events_as_json_chunks(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "ab", "chunks": ["a", "b"]})

    response = _boto(llmts_session).invoke_model_with_response_stream(modelId=NOVA, body=_nova())
    chunks = _chunks(response)

    assert response["contentType"] == "application/json"

    assert [next(iter(c)) for c in chunks] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    assert chunks[0] == {"messageStart": {"role": "assistant"}}
    assert [c["contentBlockDelta"]["delta"]["text"] for c in chunks[1:3]] == ["a", "b"]
    assert chunks[4] == {"messageStop": {"stopReason": "end_turn"}}
    assert chunks[-1]["metadata"]["usage"]["outputTokens"] == 1
    assert chunks[-1]["amazon-bedrock-invocationMetrics"]["outputTokenCount"] == 1
    entry = llmts_session.requests()[0]
    assert (entry["operation"], entry["transport_outcome"], entry["emitted_content_frames"]) == (
        "invoke-with-response-stream",
        "completed",
        2,
    )
    # Every InvokeModel stream ends at EOF: no terminal marker, whatever the body family.
    assert entry["terminal_marker_observed"] is False


def test_nova_tool_round_trip(llmts_session: SessionClient) -> None:
    call = {"id": "tooluse_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    _configure(llmts_session, {"tool_calls": [call]}, {"text": "Sunny."})
    client = _boto(llmts_session)
    tools = {"tools": [WEATHER], "toolChoice": {"auto": {}}}

    first = json.loads(client.invoke_model(modelId=NOVA, body=_nova(toolConfig=tools))["body"].read())
    assert first["stopReason"] == "tool_use"
    (block,) = first["output"]["message"]["content"]
    assert block == {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}
    history = [
        *HI,
        first["output"]["message"],
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"json": {"sky": "clear"}}]}}],
        },
    ]
    second = json.loads(
        client.invoke_model(modelId=NOVA, body=_nova(messages=history, toolConfig=tools))["body"].read()
    )
    assert second["output"]["message"]["content"] == [{"text": "Sunny."}]
    last = llmts_session.requests(order="asc")[-1]
    assert [(r["call_id"], r["content"]) for r in last["tool_results"]] == [("tooluse_1", '{"sky":"clear"}')]


def test_nova_stream_tool_call(llmts_session: SessionClient) -> None:
    call = {"id": "tooluse_2", "name": "get_weather", "arguments": {"city": "Oslo"}}
    _configure(llmts_session, {"tool_calls": [call]})

    response = _boto(llmts_session).invoke_model_with_response_stream(
        modelId=NOVA, body=_nova(toolConfig={"tools": [WEATHER]})
    )
    chunks = _chunks(response)

    start = next(c["contentBlockStart"] for c in chunks if "contentBlockStart" in c)
    assert start["start"] == {"toolUse": {"toolUseId": "tooluse_2", "name": "get_weather"}}
    pieces = [c["contentBlockDelta"]["delta"]["toolUse"]["input"] for c in chunks if "contentBlockDelta" in c]
    assert json.loads("".join(pieces)) == {"city": "Oslo"}
    assert {"messageStop": {"stopReason": "tool_use"}} in chunks


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"schemaVersion": "messages-v1"}, "messages"),
        ({"messages": [{"role": "system", "content": [{"text": "x"}]}]}, "role"),
        ({"messages": HI, "inferenceConfig": {"maxTokens": "many"}}, "maxTokens"),
        ({"messages": HI, "inferenceConfig": []}, "inferenceConfig"),
        ({"messages": HI, "schemaVersion": "messages-v9"}, "schemaVersion"),
    ],
)
def test_nova_malformed_bodies_are_validation_exceptions(
    llmts_session: SessionClient, body: dict[str, Any], needle: str
) -> None:
    _configure(llmts_session, {"text": "never"})
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ValidationException) as raised:
        client.invoke_model(modelId=NOVA, body=json.dumps(body))
    assert needle in raised.value.response["Error"]["Message"]
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_nova_scripted_errors_raise_the_modelled_exceptions(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {"error": {"status": 429, "code": "slow", "message": "Too many"}},
        {"error": {"status": 424, "code": "ModelErrorException", "message": "the model failed"}},
    )
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ThrottlingException):
        client.invoke_model_with_response_stream(modelId=NOVA, body=_nova())
    with pytest.raises(client.exceptions.ModelErrorException) as raised:
        client.invoke_model(modelId=NOVA, body=_nova())
    assert raised.value.response["Error"]["Message"] == "the model failed"


def test_strict_requests_hold_nova_bodies_to_the_converse_rules(llmts_session: SessionClient) -> None:
    """InvokeModel runs Anthropic's strict rules on the Anthropic body and Converse's on Nova's (strict
    requests are on by default): an orphan ``toolResult`` or two user turns in a row are refused."""
    _configure(llmts_session, {"text": "never"})
    client = _boto(llmts_session)
    orphan = [{"role": "user", "content": [{"toolResult": {"toolUseId": "t9", "content": [{"text": "x"}]}}]}]
    twice = [*HI, *HI]
    for messages, rule in ((orphan, "tool_result_without_tool_use"), (twice, "roles_not_alternating")):
        with pytest.raises(client.exceptions.ValidationException) as raised:
            client.invoke_model(modelId=NOVA, body=_nova(messages=messages))
        assert f"llmts strict rule {rule}" in raised.value.response["Error"]["Message"]
    assert [e["status"] for e in llmts_session.requests()] == [400, 400]
    # Titan's body has no messages: no rule applies, the answer is consumed as usual.
    llmts_session.configure({"models": [TITAN], "scenarios": [{"responses": [{"text": "ok"}]}]})
    assert (
        json.loads(client.invoke_model(modelId=TITAN, body=_titan())["body"].read())["results"][0][
            "outputText"
        ]
        == "ok"
    )


# --- Amazon Titan Text -------------------------------------------------------------------------------


def test_titan_invoke_answers_results(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello from Titan."})

    response = _boto(llmts_session).invoke_model(modelId=TITAN, body=_titan())

    answer = json.loads(response["body"].read())
    assert set(answer) == {"inputTextTokenCount", "results"}
    (result,) = answer["results"]
    assert (result["outputText"], result["completionReason"]) == ("Hello from Titan.", "FINISH")
    assert result["tokenCount"] > 0 and answer["inputTextTokenCount"] > 0
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amzn-bedrock-input-token-count"] == str(answer["inputTextTokenCount"])
    entry = llmts_session.requests()[0]
    assert (entry["operation"], entry["model"]) == ("invoke", TITAN)


def test_titan_stream_chunks_end_with_the_reason_and_metrics(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "One two", "chunks": ["One", " two"]})

    response = _boto(llmts_session).invoke_model_with_response_stream(modelId=TITAN, body=_titan())
    chunks = _chunks(response)

    assert [c["outputText"] for c in chunks] == ["One", " two"]
    assert [c["completionReason"] for c in chunks] == [None, "FINISH"]
    assert all(c["index"] == 0 for c in chunks)
    assert chunks[0]["inputTextTokenCount"] > 0
    metrics = chunks[-1]["amazon-bedrock-invocationMetrics"]
    assert metrics["outputTokenCount"] == chunks[-1]["totalOutputTextTokenCount"] > 0
    assert "amazon-bedrock-invocationMetrics" not in chunks[0]
    entry = llmts_session.requests()[0]
    assert (
        entry["transport_outcome"],
        entry["emitted_content_frames"],
        entry["terminal_marker_observed"],
    ) == (
        "completed",
        2,
        False,
    )


def test_titan_finish_reasons(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {"text": "cut", "finish_reason": "length"},
        {"text": "", "finish_reason": "content_filter"},
    )
    client = _boto(llmts_session)
    reasons = [
        json.loads(client.invoke_model(modelId=TITAN, body=_titan())["body"].read())["results"][0][
            "completionReason"
        ]
        for _ in range(2)
    ]
    assert reasons == ["LENGTH", "CONTENT_FILTERED"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"textGenerationConfig": {}}, "inputText"),
        ({"inputText": ["Hi"]}, "inputText"),
        ({"inputText": "Hi", "textGenerationConfig": "hot"}, "textGenerationConfig"),
        ({"inputText": "Hi", "textGenerationConfig": {"maxTokenCount": -1}}, "maxTokenCount"),
        # A Nova or Anthropic body sent to a Titan model is malformed for Titan, as the service answers.
        ({"messages": HI}, "inputText"),
    ],
)
def test_titan_malformed_bodies_are_validation_exceptions(
    llmts_session: SessionClient, body: dict[str, Any], needle: str
) -> None:
    _configure(llmts_session, {"text": "never"})
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ValidationException) as raised:
        client.invoke_model(modelId=TITAN, body=json.dumps(body))
    assert needle in raised.value.response["Error"]["Message"]
    assert raised.value.response["Error"]["Message"].startswith("Malformed input request: ")


def test_titan_has_no_tools_so_a_tool_call_fixture_does_not_fit(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"tool_calls": [{"name": "get_weather", "arguments": {}}]})
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ClientError) as raised:
        client.invoke_model(modelId=TITAN, body=_titan())
    assert raised.value.response["Error"]["Code"] == "llm_test_server_fixture_mismatch"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409


def test_titan_scripted_throttle_on_the_stream(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"error": {"status": 429, "code": "slow", "message": "Too many"}})
    client = _boto(llmts_session)
    with pytest.raises(client.exceptions.ThrottlingException):
        client.invoke_model_with_response_stream(modelId=TITAN, body=_titan())


def test_amazon_prompts_reach_the_conversation_predicates(llmts_session: SessionClient) -> None:
    """Nova's system and tools and Titan's ``inputText`` are the neutral prompt predicates read."""
    config = (
        ConfigBuilder()
        .models(NOVA, TITAN)
        .conversation("nova", model=NOVA)
        .step("answer")
        .when(system_contains="Be brief", declares_tool="get_weather", latest_text_matches=r"^Hi$")
        .text("Nova matched.")
        .complete()
        .conversation("titan", model=TITAN)
        .step("answer")
        .when(latest_text_matches=r"^User: Hi\nBot:$")
        .text("Titan matched.")
        .complete()
        .config.to_dict()
    )
    llmts_session.configure(config)
    client = _boto(llmts_session)

    nova = client.invoke_model(
        modelId=NOVA, body=_nova(system=[{"text": "Be brief."}], toolConfig={"tools": [WEATHER]})
    )
    titan = client.invoke_model(modelId=TITAN, body=_titan())

    assert json.loads(nova["body"].read())["output"]["message"]["content"] == [{"text": "Nova matched."}]
    assert json.loads(titan["body"].read())["results"][0]["outputText"] == "Titan matched."


# --- a model the session does not serve --------------------------------------------------------------


@pytest.mark.parametrize("operation", ["converse", "converse_stream", "invoke_nova", "invoke_anthropic"])
def test_unknown_model_is_a_validation_exception_like_aws(
    llmts_session: SessionClient, operation: str
) -> None:
    """Bedrock Runtime answers an unknown model id with 400 ValidationException "The provided model
    identifier is invalid." (not ResourceNotFoundException): boto3 raises the same modelled class."""
    _configure(llmts_session, {"text": "never"})
    client = _boto(llmts_session)
    unknown = "us.meta.llama3-2-1b-instruct-v1:0"
    calls = {
        "converse": lambda: client.converse(modelId=unknown, messages=HI),
        "converse_stream": lambda: client.converse_stream(modelId=unknown, messages=HI),
        "invoke_nova": lambda: client.invoke_model(modelId="amazon.nova-micro-v1:0", body=_nova()),
        "invoke_anthropic": lambda: client.invoke_model(
            modelId=unknown,
            body=json.dumps(
                {
                    "anthropic_version": "bedrock-2023-05-31",
                    "max_tokens": 5,
                    "messages": [{"role": "user", "content": "Hi"}],
                }
            ),
        ),
    }
    with pytest.raises(client.exceptions.ValidationException) as raised:
        calls[operation]()
    error = raised.value.response
    assert error["Error"]["Message"] == "The provided model identifier is invalid."
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    entry = llmts_session.requests()[0]
    assert (entry["status"], entry["error_code"]) == (400, "model_not_found")


def test_unknown_model_through_anthropic_bedrock_is_a_bad_request(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "never"})
    claude = llmts_session.anthropic_bedrock_client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as raised:
        claude.messages.create(
            model="anthropic.claude-unknown-v9:0", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
        )
    assert "The provided model identifier is invalid." in str(raised.value)
