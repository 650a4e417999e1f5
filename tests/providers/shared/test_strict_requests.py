"""The strict request contract as a table: rule -> request -> the provider's status and error type, raised
by the official SDK as its typed exception; the journal records the 400 with the rule's code, and nothing
is consumed (the next valid request gets the scenario's first answer). With ``strict_requests: false``
the same request is answered. Rules: docs/realistic-answers.md, "Strict request contract".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import botocore.config
import botocore.exceptions
import openai
import orjson
import pytest
from cohere.errors import BadRequestError as CohereBadRequest
from google.genai import errors as genai_errors
from google.genai import types

from llmts import SessionClient
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

BEDROCK = "anthropic.claude-3-7-sonnet-20250219-v1:0"
COHERE = "command-a-03-2025"
MODELS = [
    "gpt-test",
    "o3-mini",
    "gpt-5-mini",
    "gpt-4.1-nano",
    "claude-test-1",
    "gemini-test",
    BEDROCK,
    COHERE,
]
HI = [{"role": "user", "content": "Hi"}]


def _config(strict: bool | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "models": MODELS,
        "azure_deployments": {"gpt-test": "gpt-test"},
        "scenarios": [{"id": "s", "responses": [{"text": "first"}, {"text": "second"}]}],
    }
    if strict is not None:
        config["strict_requests"] = strict
    return config


# --- the requests a strict provider rejects ----------------------------------------------------


def _chat(**kwargs: Any) -> Callable[[SessionClient], str]:
    kwargs.setdefault("model", "gpt-test")
    kwargs.setdefault("messages", HI)

    def send(session: SessionClient) -> str:
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        return str(client.chat.completions.create(**kwargs).choices[0].message.content)

    return send


def _azure_chat(**kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.azure_openai_client(_strict_response_validation=True, max_retries=0)
        return str(client.chat.completions.create(model="gpt-test", **kwargs).choices[0].message.content)

    return send


def _responses(**kwargs: Any) -> Callable[[SessionClient], str]:
    kwargs.setdefault("model", "gpt-test")

    def send(session: SessionClient) -> str:
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        return str(client.responses.create(**kwargs).output_text)

    return send


def _messages(**kwargs: Any) -> Callable[[SessionClient], str]:
    kwargs.setdefault("model", "claude-test-1")
    kwargs.setdefault("max_tokens", 256)
    kwargs.setdefault("messages", HI)

    def send(session: SessionClient) -> str:
        client = session.anthropic_client(_strict_response_validation=True, max_retries=0)
        message = client.messages.create(**kwargs)
        return "".join(block.text for block in message.content if block.type == "text")

    return send


def _gemini(contents: list[types.Content], *, stream: bool = False) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.gemini_client()  # kept: the client closes its connection pool when collected
        if stream:
            chunks = client.models.generate_content_stream(model="gemini-test", contents=contents)
            return "".join(chunk.text or "" for chunk in chunks)
        return str(client.models.generate_content(model="gemini-test", contents=contents).text)

    return send


def _gemini_config(**config: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.gemini_client()
        answer = client.models.generate_content(
            model="gemini-test", contents="Hi", config=types.GenerateContentConfig(**config)
        )
        return str(answer.text)

    return send


def _chat_stream(**kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        chunks = client.chat.completions.create(model="gpt-test", stream=True, **kwargs)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    return send


def _messages_stream(**kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.anthropic_client(_strict_response_validation=True, max_retries=0)
        with client.messages.stream(model="claude-test-1", max_tokens=4096, **kwargs) as stream:
            return str(stream.get_final_text())

    return send


def _call(call_id: str, name: str = "get_weather") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"city":"Paris"}'}}


def _tool_use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "get_weather", "input": {"city": "Paris"}}


def _tool_result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "sunny"}


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _fn_call(name: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args={"city": "Paris"}))


def _fn_response(name: str) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(name=name, response={"result": "sunny"}))


def _cohere(messages: list[dict[str, Any]], **kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.cohere_client(max_retries=0)
        content = client.chat(model=COHERE, messages=messages, **kwargs).message.content
        return "".join(getattr(block, "text", "") for block in content or ())

    return send


def _boto(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def _converse(*, stream: bool = False, **kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = _boto(session)
        if stream:
            events = client.converse_stream(modelId=BEDROCK, **kwargs)["stream"]
            return "".join(
                e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
            )
        content = client.converse(modelId=BEDROCK, **kwargs)["output"]["message"]["content"]
        return "".join(block.get("text", "") for block in content)

    return send


def _invoke(**fields: Any) -> Callable[[SessionClient], str]:
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 4096, "messages": HI, **fields}

    def send(session: SessionClient) -> str:
        answer = orjson.loads(
            _boto(session).invoke_model(modelId=BEDROCK, body=orjson.dumps(body))["body"].read()
        )
        return "".join(block.get("text", "") for block in answer["content"])

    return send


def _text(text: str) -> list[dict[str, str]]:
    return [{"text": text}]


@dataclass(frozen=True)
class Case:
    rule: str
    send: Callable[[SessionClient], str]
    sdk: str  # openai | anthropic | gemini | cohere | bedrock
    error_type: str  # OpenAI/Anthropic ``type``, Gemini ``status``, the cohere exception, the AWS code
    param: str | None = None
    code: str | None = None  # the provider's code when it has one; else the rule's name


THINKING = {"type": "enabled", "budget_tokens": 1024}

CASES = [
    Case(
        "tool_result_without_call",
        _chat(messages=[*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}]),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "tool_result_without_call",
        _chat(
            messages=[
                *HI,
                {"role": "assistant", "content": None, "tool_calls": [_call("call_a")]},
                {"role": "tool", "tool_call_id": "call_b", "content": "sunny"},
            ]
        ),
        "openai",
        "invalid_request_error",
        "messages.[2].tool_call_id",
    ),
    Case(
        "tool_calls_unanswered",
        _chat(
            messages=[
                *HI,
                {"role": "assistant", "content": None, "tool_calls": [_call("call_a"), _call("call_b")]},
                {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
                {"role": "user", "content": "and?"},
            ]
        ),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "tool_calls_unanswered",
        _azure_chat(messages=[*HI, {"role": "assistant", "content": None, "tool_calls": [_call("call_a")]}]),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "reasoning_model_temperature",
        _chat(model="o3-mini", temperature=0.2),
        "openai",
        "invalid_request_error",
        "temperature",
        "unsupported_value",
    ),
    Case(
        "reasoning_model_top_p",
        _chat(model="gpt-5-mini", top_p=0.5),
        "openai",
        "invalid_request_error",
        "top_p",
        "unsupported_value",
    ),
    Case(
        "function_call_output_without_call",
        _responses(input=[{"type": "function_call_output", "call_id": "call_x", "output": "sunny"}]),
        "openai",
        "invalid_request_error",
        "input",
    ),
    Case(
        "function_call_unanswered",
        _responses(
            input=[
                {"role": "user", "content": "Weather?"},
                {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{}"},
                {"role": "user", "content": "and?"},
            ]
        ),
        "openai",
        "invalid_request_error",
        "input",
    ),
    Case(
        "reasoning_model_temperature",
        _responses(model="o3-mini", input="Hi", temperature=0.3),
        "openai",
        "invalid_request_error",
        "temperature",
        "unsupported_value",
    ),
    Case(
        "first_message_not_user",
        _messages(messages=[{"role": "assistant", "content": "Hello"}, *HI]),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "tool_result_without_tool_use",
        _messages(messages=[*HI, {"role": "user", "content": [_tool_result("toolu_x")]}]),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "tool_use_without_tool_result",
        _messages(
            messages=[
                *HI,
                {"role": "assistant", "content": [_tool_use("toolu_a")]},
                {"role": "user", "content": "and?"},
            ]
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thinking_budget",
        _messages(max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 512}),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thinking_budget",
        _messages(max_tokens=1024, thinking=THINKING),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thinking_block_not_first",
        _messages(
            max_tokens=4096,
            thinking=THINKING,
            messages=[
                *HI,
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Let me look."}, _tool_use("toolu_a")],
                },
                {"role": "user", "content": [_tool_result("toolu_a")]},
            ],
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "function_response_without_call",
        _gemini([_user("Weather?"), types.Content(role="user", parts=[_fn_response("get_weather")])]),
        "gemini",
        "INVALID_ARGUMENT",
    ),
    Case(
        "function_calls_unanswered",
        _gemini(
            [
                _user("Weather?"),
                types.Content(role="model", parts=[_fn_call("get_weather"), _fn_call("get_weather")]),
                types.Content(role="user", parts=[_fn_response("get_weather")]),
            ]
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
]
# Reasoning blocks passed back must be the ones llmts issued (a forged signature, a changed text).
_FORGED = {"type": "thinking", "thinking": "I need the weather first.", "signature": "forged"}
CASES += [
    Case(
        "thinking_block_modified",
        _messages(
            max_tokens=4096,
            thinking=THINKING,
            messages=[
                *HI,
                {"role": "assistant", "content": [_FORGED, _tool_use("toolu_a")]},
                {"role": "user", "content": [_tool_result("toolu_a")]},
            ],
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "thought_signature_corrupted",
        _gemini(
            [
                _user("Weather?"),
                types.Content(role="model", parts=[types.Part(text="Sunny.", thought_signature=b"forged")]),
                _user("Thanks"),
            ]
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
]
CASES += [
    Case(
        "encrypted_content_unverified",
        _responses(
            input=[
                {"role": "user", "content": "Hi"},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAforged=="},
                {"role": "user", "content": "Again"},
            ]
        ),
        "openai",
        "invalid_request_error",
        code="invalid_encrypted_content",
    ),
]
# Cohere v2 chat: cohere.errors.BadRequestError.
_COHERE_CALL = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
CASES += [
    Case(
        "tool_result_without_call",
        _cohere([*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}]),
        "cohere",
        "BadRequestError",
    ),
    Case(
        "tool_calls_unanswered",
        _cohere([*HI, {"role": "assistant", "tool_calls": [_COHERE_CALL], "tool_plan": "Look."}, *HI]),
        "cohere",
        "BadRequestError",
    ),
]
# Bedrock Converse (and Anthropic's rules on InvokeModel): botocore's ValidationException.
_USE = {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather", "input": {"city": "Paris"}}}
_RESULT = {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "sunny"}]}}
_ON = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
_REASONING = {
    "reasoningContent": {"reasoningText": {"text": "I need the weather first.", "signature": "forged"}}
}
CASES += [
    Case(
        "first_message_not_user",
        _converse(
            messages=[
                {"role": "assistant", "content": _text("Hello")},
                {"role": "user", "content": _text("Hi")},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "roles_not_alternating",
        _converse(
            messages=[{"role": "user", "content": _text("Hi")}, {"role": "user", "content": _text("Hi")}]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "tool_result_without_tool_use",
        _converse(
            messages=[
                {"role": "user", "content": _text("Weather?")},
                {"role": "assistant", "content": _text("Let me see.")},
                {"role": "user", "content": [_RESULT]},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "tool_use_without_tool_result",
        _converse(
            messages=[
                {"role": "user", "content": _text("Weather?")},
                {"role": "assistant", "content": [_USE]},
                {"role": "user", "content": _text("and?")},
            ]
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_budget",
        _converse(
            messages=[{"role": "user", "content": _text("Hi")}],
            inferenceConfig={"maxTokens": 1024},
            additionalModelRequestFields=_ON,
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_block_not_first",
        _converse(
            stream=True,
            messages=[
                {"role": "user", "content": _text("Weather?")},
                {"role": "assistant", "content": [_USE]},
                {"role": "user", "content": [_RESULT]},
            ],
            additionalModelRequestFields=_ON,
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_block_modified",
        _converse(
            messages=[
                {"role": "user", "content": _text("Weather?")},
                {"role": "assistant", "content": [_REASONING, _USE]},
                {"role": "user", "content": [_RESULT]},
            ],
            additionalModelRequestFields=_ON,
        ),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "tool_result_without_tool_use",
        _invoke(messages=[*HI, {"role": "user", "content": [_tool_result("toolu_x")]}]),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "thinking_block_modified",
        _invoke(
            thinking=THINKING,
            messages=[
                *HI,
                {"role": "assistant", "content": [_FORGED, _tool_use("toolu_a")]},
                {"role": "user", "content": [_tool_result("toolu_a")]},
            ],
        ),
        "bedrock",
        "ValidationException",
    ),
]
# The same rules on streamed requests: the 400 comes before any stream starts.
CASES += [
    Case(
        "tool_result_without_call",
        _chat_stream(messages=[*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}]),
        "openai",
        "invalid_request_error",
        "messages.[1].role",
    ),
    Case(
        "thinking_block_not_first",
        _messages_stream(
            thinking=THINKING,
            messages=[
                *HI,
                {"role": "assistant", "content": [_tool_use("toolu_a")]},
                {"role": "user", "content": [_tool_result("toolu_a")]},
            ],
        ),
        "anthropic",
        "invalid_request_error",
    ),
    Case(
        "function_response_without_call",
        _gemini(
            [_user("Weather?"), types.Content(role="user", parts=[_fn_response("get_weather")])], stream=True
        ),
        "gemini",
        "INVALID_ARGUMENT",
    ),
]
# Published numeric ranges (``parameter_out_of_range``): OpenAI's code names the side and the type.
CASES += [
    Case(
        "parameter_out_of_range",
        _chat(temperature=3),
        "openai",
        "invalid_request_error",
        "temperature",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        _chat(top_p=1.5),
        "openai",
        "invalid_request_error",
        "top_p",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        _chat(presence_penalty=-2.5),
        "openai",
        "invalid_request_error",
        "presence_penalty",
        "decimal_below_min_value",
    ),
    Case(
        "parameter_out_of_range",
        _chat(frequency_penalty=3),
        "openai",
        "invalid_request_error",
        "frequency_penalty",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        _chat(logprobs=True, top_logprobs=21),
        "openai",
        "invalid_request_error",
        "top_logprobs",
        "integer_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        _azure_chat(messages=HI, temperature=-0.5),
        "openai",
        "invalid_request_error",
        "temperature",
        "decimal_below_min_value",
    ),
    Case(
        "parameter_out_of_range",
        _responses(input="Hi", temperature=2.5),
        "openai",
        "invalid_request_error",
        "temperature",
        "decimal_above_max_value",
    ),
    Case(
        "parameter_out_of_range",
        _messages(extra_body={"temperature": 1.5}),
        "anthropic",
        "invalid_request_error",
    ),
    Case("parameter_out_of_range", _messages(extra_body={"top_k": -1}), "anthropic", "invalid_request_error"),
    Case("parameter_out_of_range", _gemini_config(temperature=3), "gemini", "INVALID_ARGUMENT"),
    Case("parameter_out_of_range", _gemini_config(top_p=1.5), "gemini", "INVALID_ARGUMENT"),
    Case("parameter_out_of_range", _cohere(HI, p=1.5), "cohere", "BadRequestError"),
    Case(
        "parameter_out_of_range",
        _converse(messages=[{"role": "user", "content": _text("Hi")}], inferenceConfig={"temperature": 1.5}),
        "bedrock",
        "ValidationException",
    ),
    Case(
        "native_tool_model",
        _responses(model="gpt-4.1-nano", input="Hi", tools=[{"type": "web_search"}]),
        "openai",
        "invalid_request_error",
        "tools[0]",
        "unsupported_value",
    ),
]
IDS = [f"{case.rule}-{index}" for index, case in enumerate(CASES)]


def _rejection(case: Case, session: SessionClient) -> tuple[str, str, str | None, str]:
    """(error type, code, param, message) from the SDK's typed 400 exception."""
    if case.sdk == "openai":
        with pytest.raises(openai.BadRequestError) as openai_error:
            case.send(session)
        err = openai_error.value
        assert err.status_code == 400
        return str(err.type), str(err.code), err.param, err.message
    if case.sdk == "anthropic":
        with pytest.raises(anthropic.BadRequestError) as anthropic_error:
            case.send(session)
        assert anthropic_error.value.status_code == 400
        body = anthropic_error.value.body
        assert isinstance(body, dict) and body["type"] == "error"
        return body["error"]["type"], body["error"]["code"], None, body["error"]["message"]
    if case.sdk == "cohere":
        with pytest.raises(CohereBadRequest) as cohere_error:
            case.send(session)
        assert cohere_error.value.status_code == 400
        cohere_body = cohere_error.value.body
        assert isinstance(cohere_body, dict)
        return type(cohere_error.value).__name__, cohere_body["code"], None, cohere_body["message"]
    if case.sdk == "bedrock":
        with pytest.raises(botocore.exceptions.ClientError) as aws_error:
            case.send(session)
        response = aws_error.value.response
        assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
        # Bedrock sends no code: the journal names the rule.
        return (
            response["Error"]["Code"],
            session.requests()[-1]["error_code"],
            None,
            response["Error"]["Message"],
        )
    with pytest.raises(genai_errors.ClientError) as gemini_error:
        case.send(session)
    assert gemini_error.value.code == 400
    details = gemini_error.value.details["error"]["details"]
    return str(gemini_error.value.status), details[0]["reason"], None, str(gemini_error.value.message)


@pytest.fixture
def session(request: pytest.FixtureRequest) -> SessionClient:
    """In process, but Bedrock's cases on the real server: boto3 takes no WSGI transport."""
    case = request.node.callspec.params["case"]
    session: SessionClient = request.getfixturevalue(
        "llmts_session" if case.sdk == "bedrock" else "app_session"
    )
    return session


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("strict", [None, True], ids=["default", "explicit"])
def test_strict_rule_answers_the_providers_400_and_consumes_nothing(
    session: SessionClient, case: Case, strict: bool | None
) -> None:
    session.configure(_config(strict))

    error_type, code, param, message = _rejection(case, session)

    assert (error_type, code) == (case.error_type, case.code or case.rule)
    assert case.param is None or param == case.param
    assert f"llmts strict rule {case.rule}" in message
    entry = session.requests()[-1]
    assert (entry["status"], entry["error_code"], entry["scenario"]) == (400, case.code or case.rule, None)
    # Nothing was consumed: the scenario still answers with its first response.
    assert _chat()(session) == "first"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_strict_requests_false_accepts_the_request(session: SessionClient, case: Case) -> None:
    session.configure(_config(False))

    assert case.send(session) == "first"
    assert session.requests()[-1]["status"] == 200


def test_unconfigured_session_is_strict(app_session: SessionClient) -> None:
    with pytest.raises(openai.BadRequestError) as error:
        _chat(messages=[*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}])(app_session)
    assert error.value.code == "tool_result_without_call"


def test_strict_requests_round_trips_through_the_configuration(app_session: SessionClient) -> None:
    app_session.configure(_config(False))
    assert app_session.configuration()["strict_requests"] is False
    app_session.configure(_config(True))
    assert "strict_requests" not in app_session.configuration()  # the default is not echoed


def test_valid_tool_loops_pass_every_rule(llmts_session: SessionClient) -> None:
    """Well-formed loops (every call answered, thinking passed back first) are not touched."""
    # The thinking block passed back below is one the configuration issues (its second scenario scripts it).
    signed = {"reasoning": {"text": "Look it up.", "signature": "sig"}, "text": "never"}
    scenarios = [{"responses": [{"text": "ok"}] * 4}, {"responses": [signed]}]
    llmts_session.configure({**_config(None), "scenarios": scenarios})
    chat = _chat(
        messages=[
            *HI,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call("call_a"), _call("call_b", "get_time")],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_b", "content": "noon"},
        ],
        model="o3-mini",
        temperature=1,
    )
    responses = _responses(
        input=[
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
        ]
    )
    thinking = {"type": "thinking", "thinking": "Look it up.", "signature": "sig"}
    messages = _messages(
        max_tokens=4096,
        thinking=THINKING,
        messages=[
            *HI,
            {"role": "assistant", "content": [thinking, _tool_use("toolu_a")]},
            {"role": "user", "content": [_tool_result("toolu_a")]},
        ],
    )
    gemini = _gemini(
        [
            _user("Weather?"),
            types.Content(role="model", parts=[_fn_call("get_weather")]),
            types.Content(role="user", parts=[_fn_response("get_weather")]),
        ]
    )
    assert [send(llmts_session) for send in (chat, responses, messages, gemini)] == ["ok"] * 4


def test_envelopes_on_the_wire(app_session: SessionClient) -> None:
    """Raw HTTP: each provider's 400 envelope, its request-id header and ``x-should-retry: false``."""
    app_session.configure(_config(None))
    chat = send_raw(
        app_session,
        "POST",
        "/openai/v1/chat/completions",
        {"model": "o3-mini", "messages": HI, "temperature": 0.5},
        {"Authorization": "Bearer " + app_session.credential("openai")},
    )
    assert (chat.status, chat.headers["x-should-retry"]) == (400, "false")
    error = chat.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "invalid_request_error",
        "unsupported_value",
        "temperature",
    )
    assert error["message"].startswith(
        "Unsupported value: 'temperature' does not support 0.5 with this model."
    )

    messages = send_raw(
        app_session,
        "POST",
        "/anthropic/v1/messages",
        {
            "model": "claude-test-1",
            "max_tokens": 64,
            "messages": [{"role": "assistant", "content": "x"}, *HI],
        },
        {"x-api-key": app_session.credential("anthropic")},
    )
    body = messages.json()
    assert (messages.status, body["type"], body["error"]["type"]) == (400, "error", "invalid_request_error")
    assert body["error"]["message"].startswith('messages: first message must use the "user" role')
    assert body["request_id"] == messages.headers["request-id"]

    gemini = send_raw(
        app_session,
        "POST",
        "/gemini/v1beta/models/gemini-test:generateContent",
        {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]},
        {"x-goog-api-key": app_session.credential("gemini")},
    )
    error = gemini.json()["error"]
    assert (gemini.status, error["code"], error["status"]) == (400, 400, "INVALID_ARGUMENT")
    assert error["details"][0]["reason"] == "function_response_without_call"
    assert [entry["status"] for entry in app_session.requests()[-3:]] == [400, 400, 400]


@pytest.mark.parametrize(
    "dummy", [b"skip_thought_signature_validator", b"context_engineering_is_the_way_to_go"]
)
def test_gemini_documented_dummy_thought_signature_passes(app_session: SessionClient, dummy: bytes) -> None:
    """The thought signatures guide's dummy values pass the real API, so they pass here (pydantic-ai's
    GoogleModel sends the first on every function call it passes back without a signature)."""
    app_session.configure(_config(None))
    signed = _fn_call("get_weather")
    signed.thought_signature = dummy
    contents = [
        _user("Weather?"),
        types.Content(role="model", parts=[signed]),
        types.Content(role="user", parts=[_fn_response("get_weather")]),
    ]
    assert _gemini(contents)(app_session) == "first"
    forged = _fn_call("get_weather")
    forged.thought_signature = dummy + b"!"
    with pytest.raises(genai_errors.ClientError) as error:
        _gemini([contents[0], types.Content(role="model", parts=[forged]), contents[2]])(app_session)
    assert error.value.code == 400
