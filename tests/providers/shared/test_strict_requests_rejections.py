"""The strict request contract's table (strict_request_cases.py) run: each rule -> the provider's status
and error type, raised by the official SDK as its typed exception; the journal records the 400 with the
rule's code, and nothing is consumed (the next valid request gets the scenario's first answer). With
``strict_requests: false`` the same request is answered. Also: an unconfigured session is strict, the
setting round-trips, and each provider's 400 envelope on the raw wire. Rules:
docs/realistic-answers.md, "Strict request contract".
"""

from __future__ import annotations

import anthropic
import botocore.exceptions
import openai
import pytest
from cohere.errors import BadRequestError as CohereBadRequest
from google.genai import errors as genai_errors

from llmts import SessionClient
from tests.providers.shared.strict_request_cases import CASES, IDS
from tests.providers.shared.strict_requests_support import (
    HI,
    Case,
    send_chat,
    strict_config,
)
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk


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
    session.configure(strict_config(strict))

    error_type, code, param, message = _rejection(case, session)

    assert (error_type, code) == (case.error_type, case.code or case.rule)
    assert case.param is None or param == case.param
    assert f"llmts strict rule {case.rule}" in message
    entry = session.requests()[-1]
    assert (entry["status"], entry["error_code"], entry["scenario"]) == (400, case.code or case.rule, None)
    # Nothing was consumed: the scenario still answers with its first response.
    assert send_chat()(session) == "first"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_strict_requests_false_accepts_the_request(session: SessionClient, case: Case) -> None:
    session.configure(strict_config(False))

    assert case.send(session) == "first"
    assert session.requests()[-1]["status"] == 200


def test_unconfigured_session_is_strict(app_session: SessionClient) -> None:
    with pytest.raises(openai.BadRequestError) as error:
        send_chat(messages=[*HI, {"role": "tool", "tool_call_id": "call_x", "content": "sunny"}])(app_session)
    assert error.value.code == "tool_result_without_call"


def test_strict_requests_round_trips_through_the_configuration(app_session: SessionClient) -> None:
    app_session.configure(strict_config(False))
    assert app_session.configuration()["strict_requests"] is False
    app_session.configure(strict_config(True))
    assert "strict_requests" not in app_session.configuration()  # the default is not echoed


def test_envelopes_on_the_wire(app_session: SessionClient) -> None:
    """Raw HTTP: each provider's 400 envelope, its request-id header and ``x-should-retry: false``."""
    app_session.configure(strict_config(None))
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
