"""Anthropic Messages on the wire (raw HTTP): exact SSE framing, error envelopes and headers, auth headers,
malformed requests, count_tokens and models pagination."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import RawResponse, raw_request
from tests.support.configure import built
from tests.support.envelopes import assert_anthropic_error
from tests.support.in_process import send_raw
from tests.support.sse import typed_events

pytestmark = pytest.mark.sdk

MESSAGES = "/anthropic/v1/messages"
MODEL = "claude-test-1"
HI = [{"role": "user", "content": "Hi"}]
KEY = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def _post(
    session: SessionClient, body: Any, headers: dict[str, str] | None = None, path: str = MESSAGES
) -> RawResponse:
    return send_raw(session, "POST", path, body, {**KEY, **(headers or {})})


def _body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": HI, **fields}


_configure = built


def _sse(response: RawResponse) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) per event, the exact framing of every event asserted."""
    return typed_events(response.body)


# --- streams ------------------------------------------------------------------------------------


def test_text_stream_framing_and_sequence(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().models(MODEL).scenario().text("Hi!", chunks=["H", "i!"]))

    response = _post(app_session, _body(stream=True))

    assert response.status == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["request-id"].startswith("req_")
    events = _sse(response)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    message = events[0][1]["message"]
    assert message["id"].startswith("msg_") and message["content"] == [] and message["stop_reason"] is None
    assert message["usage"]["input_tokens"] == 8 and message["usage"]["output_tokens"] == 0
    assert {"cache_creation_input_tokens", "cache_read_input_tokens"} <= set(message["usage"])
    assert events[1][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert [data["delta"] for _, data in events[3:5]] == [
        {"type": "text_delta", "text": "H"},
        {"type": "text_delta", "text": "i!"},
    ]
    assert events[5][1] == {"type": "content_block_stop", "index": 0}
    delta = events[6][1]
    assert delta["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert delta["usage"] == {
        "input_tokens": 8,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }


def test_tool_use_stream_sends_input_json_pieces(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {"id": "toolu_1", "name": "f", "arguments": {"a": 1}},
                                {
                                    "id": "toolu_2",
                                    "name": "g",
                                    "arguments": {"b": "xy"},
                                    "arguments_chunks": ['{"b":', '"xy"}'],
                                },
                            ]
                        }
                    ]
                }
            ],
        }
    )

    tools = [
        {"name": "f", "input_schema": {"type": "object"}},
        {"name": "g", "input_schema": {"type": "object"}},
    ]
    events = _sse(_post(app_session, _body(stream=True, tools=tools)))

    blocks = [(d["index"], d["content_block"]) for n, d in events if n == "content_block_start"]
    assert blocks == [
        (0, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}),
        (1, {"type": "tool_use", "id": "toolu_2", "name": "g", "input": {}}),
    ]
    pieces = [(d["index"], d["delta"]["partial_json"]) for n, d in events if n == "content_block_delta"]
    assert all(d["delta"]["type"] == "input_json_delta" for n, d in events if n == "content_block_delta")
    assert pieces == [(0, ""), (0, '{"a":1}'), (1, ""), (1, '{"b":'), (1, '"xy"}')]
    assert [d["index"] for n, d in events if n == "content_block_stop"] == [0, 1]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-1][0] == "message_stop"


def test_json_response_body(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().models(MODEL).scenario().json({"ok": True}))

    response = _post(app_session, _body())

    assert response.status == 200
    body = response.json()
    assert set(body) == {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
    assert body["content"] == [{"type": "text", "text": '{"ok":true}'}]
    assert body["usage"]["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    assert response.headers["request-id"].startswith("req_")


# --- auth and request ids -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"x-api-key": "sk-ant-right"},
        {"Authorization": "Bearer sk-ant-right"},
        {"x-api-key": "sk-ant-right", "anthropic-version": "2099-12-31"},
        {"Authorization": "Bearer sk-ant-right", "anthropic-version": "not-a-date"},
    ],
)
def test_both_auth_headers_and_any_version_are_accepted(
    app_session: SessionClient, headers: dict[str, str]
) -> None:
    _configure(
        app_session,
        ConfigBuilder().models(MODEL).credentials(anthropic="sk-ant-right").scenario().text("ok"),
    )

    response = send_raw(app_session, "POST", MESSAGES, _body(), headers)

    assert response.status == 200, response.body
    assert response.json()["content"][0]["text"] == "ok"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-api-key": "sk-ant-wrong"},
        {"Authorization": "Bearer sk-ant-wrong"},
        {"Authorization": "Basic x"},
    ],
)
def test_missing_or_wrong_credentials_are_401(app_session: SessionClient, headers: dict[str, str]) -> None:
    _configure(
        app_session,
        ConfigBuilder().models(MODEL).credentials(anthropic="sk-ant-right").scenario().text("ok"),
    )

    response = send_raw(app_session, "POST", MESSAGES, _body(), headers)

    error = assert_anthropic_error(response, 401, "authentication_error")
    assert error["code"] == "invalid_api_key"
    assert "sk-ant-right" not in response.body.decode()


def test_request_ids_are_unique_and_match_error_bodies(app_session: SessionClient) -> None:
    _configure(
        app_session,
        ConfigBuilder()
        .models(MODEL)
        .scenario()
        .text("a")
        .text("b", chunks=["b"])
        .error(500, "boom", "Broken"),
    )

    plain = _post(app_session, _body())
    streamed = _post(app_session, _body(stream=True))
    failed = _post(app_session, _body())

    ids = [r.headers["request-id"] for r in (plain, streamed, failed)]
    assert all(i.startswith("req_") and len(i) > 12 for i in ids)
    assert len(set(ids)) == 3
    assert_anthropic_error(failed, 500, "api_error")


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (503, "api_error"),
        (529, "overloaded_error"),
    ],
)
def test_scripted_error_types_by_status(app_session: SessionClient, status: int, error_type: str) -> None:
    _configure(
        app_session, ConfigBuilder().models(MODEL).scenario().error(status, "scripted_code", "Scripted")
    )

    error = assert_anthropic_error(_post(app_session, _body()), status, error_type)

    assert (error["message"], error["code"]) == ("Scripted", "scripted_code")


def test_scripted_error_type_wins_and_retry_headers(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 429,
                                "code": "slow",
                                "message": "Slow down",
                                "type": "custom_limit_error",
                                "retry_after": 1.5,
                                "should_retry": True,
                            }
                        }
                    ]
                }
            ],
        }
    )

    response = _post(app_session, _body())

    assert_anthropic_error(response, 429, "custom_limit_error")
    assert response.headers["retry-after"] == "2"  # whole seconds, rounded up; the exact wait in -ms
    assert response.headers["retry-after-ms"] == "1500"
    assert response.headers["x-should-retry"] == "true"


def test_llmts_diagnostics_say_do_not_retry(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().models(MODEL).scenario("once").text("a"))
    _post(app_session, _body())

    response = _post(app_session, _body())

    error = assert_anthropic_error(response, 409, "conflict_error")
    assert error["code"] == "llm_test_server_scenario_exhausted"
    assert response.headers["x-should-retry"] == "false"
    assert "retry-after" not in response.headers


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b"", "empty"),
        ({"max_tokens": 5, "messages": HI}, "model: Field required"),
        ({"model": 5, "max_tokens": 5, "messages": HI}, "model:"),
        ({"model": MODEL, "messages": HI}, "max_tokens: Field required"),
        ({"model": MODEL, "max_tokens": -1, "messages": HI}, "max_tokens:"),
        ({"model": MODEL, "max_tokens": "5", "messages": HI}, "max_tokens:"),
        ({"model": MODEL, "max_tokens": 5}, "messages: Field required"),
        ({"model": MODEL, "max_tokens": 5, "messages": []}, "messages:"),
        ({"model": MODEL, "max_tokens": 5, "messages": {"role": "user"}}, "messages:"),
        (_body(messages=[{"role": "system", "content": "x"}]), "messages.0.role"),
        (_body(messages=[{"role": "user"}]), "messages.0.content: Field required"),
        (_body(messages=[{"role": "user", "content": 5}]), "messages.0.content"),
        (_body(messages=[{"role": "user", "content": [{"type": "text"}]}]), "messages.0.content.0.text"),
        (_body(messages=[{"role": "user", "content": ["x"]}]), "messages.0.content.0"),
        (
            _body(
                messages=[
                    {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}
                ]
            ),
            "messages.0.content.0.type",
        ),
        (
            _body(
                messages=[{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}]
            ),
            "messages.0.content.0.id",
        ),
        (
            _body(
                messages=[{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}]
            ),
            "messages.0.content.0.input",
        ),
        (_body(messages=[{"role": "user", "content": [{"type": "tool_result"}]}]), "tool_use_id"),
        (_body(system=[{"type": "image"}]), "system.0.type"),
        (_body(system=5), "system"),
        (_body(tools={"name": "f"}), "tools"),
        (_body(tools=[{"input_schema": {}}]), "tools.0.name"),
        (_body(tool_choice={"type": "sometimes"}), "tool_choice"),
        (_body(tool_choice={"type": "tool"}), "tool_choice.name"),
        (_body(stream="yes"), "stream"),
        (_body(output_config={"format": {"type": "yaml"}}), "output_config.format.type"),
        (_body(output_config={"format": {"type": "json_schema"}}), "output_config.format.schema"),
        (
            _body(system=[{"type": "text", "text": "x", "cache_control": {"type": "forever"}}]),
            "cache_control",
        ),
        (
            _body(
                system=[{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * 3,
                messages=[
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}],
                    }
                ],
                cache_control={"type": "ephemeral"},
            ),
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
    ],
)
def test_malformed_requests_get_400_in_anthropic_envelope(
    app_session: SessionClient, body: Any, fragment: str
) -> None:
    _configure(app_session, ConfigBuilder().models(MODEL).scenario().text("never"))

    response = _post(app_session, body)

    error = assert_anthropic_error(response, 400, "invalid_request_error")
    assert fragment in error["message"]
    # Nothing was consumed by the bad request.
    assert _post(app_session, _body()).json()["content"][0]["text"] == "never"


def test_unknown_route_and_wrong_method_in_anthropic_envelope(app_session: SessionClient) -> None:
    missing = send_raw(app_session, "POST", "/anthropic/v1/completionz", {}, KEY)
    assert_anthropic_error(missing, 404, "not_found_error")
    assert missing.json()["error"]["code"] == "not_found"

    wrong_method = send_raw(app_session, "GET", MESSAGES, None, KEY)
    error = assert_anthropic_error(wrong_method, 405, "invalid_request_error")
    assert error["code"] == "method_not_allowed"


def test_unknown_session_is_404_in_anthropic_envelope(llmts_server: Any) -> None:
    response = raw_request(llmts_server.url, "POST", "/sessions/ses_nope" + MESSAGES, _body(), KEY)

    error = assert_anthropic_error(response, 404, "not_found_error")
    assert error["code"] == "llm_test_server_session_not_found"
    assert response.headers["x-should-retry"] == "false"


# --- cache warm-up, count_tokens, models --------------------------------------------------------


def test_max_tokens_zero_raw_answer(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().models(MODEL).scenario().text("kept"))

    warm = _post(app_session, _body(max_tokens=0))
    streamed = _post(app_session, _body(max_tokens=0, stream=True))

    body = warm.json()
    assert (body["content"], body["stop_reason"]) == ([], "max_tokens")
    assert body["usage"]["output_tokens"] == 0
    assert [name for name, _ in _sse(streamed)] == ["message_start", "ping", "message_delta", "message_stop"]
    assert _post(app_session, _body()).json()["content"][0]["text"] == "kept"


def test_count_tokens_raw(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().models(MODEL).scenario().text("x"))
    path = MESSAGES + "/count_tokens"

    counted = _post(app_session, {"model": MODEL, "messages": HI}, path=path)
    bad = _post(app_session, {"model": MODEL}, path=path)

    assert counted.status == 200 and counted.json() == {"input_tokens": 8}
    assert counted.headers["request-id"].startswith("req_")
    assert "messages: Field required" in assert_anthropic_error(bad, 400, "invalid_request_error")["message"]


def test_models_pagination_raw(app_session: SessionClient) -> None:
    app_session.configure({"models": ["m-a", "m-b", "m-c"]})

    def page(query: str) -> dict[str, Any]:
        response = send_raw(app_session, "GET", "/anthropic/v1/models" + query, None, KEY)
        assert response.status == 200
        return dict(response.json())

    first = page("?limit=2")
    assert ([m["id"] for m in first["data"]], first["has_more"], first["first_id"], first["last_id"]) == (
        ["m-a", "m-b"],
        True,
        "m-a",
        "m-b",
    )
    assert first["data"][0] == {
        "type": "model",
        "id": "m-a",
        "display_name": "M A",
        "created_at": "1970-01-01T00:00:00Z",
        "lifecycle": "active",
    }
    rest = page("?limit=2&after_id=m-b")
    assert ([m["id"] for m in rest["data"]], rest["has_more"]) == (["m-c"], False)
    before = page("?limit=1&before_id=m-c")
    assert ([m["id"] for m in before["data"]], before["has_more"]) == (["m-b"], True)
    empty = page("?after_id=m-c")
    assert (empty["data"], empty["has_more"], empty["first_id"], empty["last_id"]) == ([], False, None, None)
    bad = send_raw(app_session, "GET", "/anthropic/v1/models?limit=0", None, KEY)
    assert_anthropic_error(bad, 400, "invalid_request_error")
    missing = send_raw(app_session, "GET", "/anthropic/v1/models/m-z", None, KEY)
    assert_anthropic_error(missing, 404, "not_found_error")
