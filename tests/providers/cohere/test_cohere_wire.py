"""Cohere v2 on the wire (raw HTTP through the app in process): exact SSE framing, the error envelope and
retry headers, Bearer credentials, malformed requests, models pages, and the parser's mapping (in memory)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, ProviderRequest
from llmts.providers.cohere.parse import parse_chat_request
from tests.helpers import RawResponse
from tests.support.in_process import send_raw
from tests.support.sse import typed_events

CHAT = "/cohere/v2/chat"
MODEL = "command-a-03-2025"
HI = [{"role": "user", "content": "Hi"}]
AUTH = {"Authorization": "Bearer co-key"}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def _post(session: SessionClient, body: Any, headers: dict[str, str] | None = None) -> RawResponse:
    return send_raw(session, "POST", CHAT, body, {**AUTH, **(headers or {})})


def _body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": HI, **fields}


def _sse(response: RawResponse) -> list[tuple[str, dict[str, Any]]]:
    """Split a stream into (event name, data) pairs, asserting the exact framing of every event."""
    assert response.headers["content-type"] == "text/event-stream"
    return typed_events(response.body)


def _assert_envelope(response: RawResponse, status: int, code: str) -> dict[str, Any]:
    assert response.status == status
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"id", "message", "code"}
    assert body["code"] == code and body["message"]
    assert body["id"] == response.headers["x-request-id"] and body["id"].startswith("req_")
    return body


def test_text_stream_frames_exactly(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder().models(MODEL).scenario().text("Hi there", chunks=["Hi", " there"]).build()
    )

    response = _post(app_session, _body(stream=True))

    assert response.status == 200
    events = _sse(response)
    message_id = events[0][1]["id"]
    assert events == [
        (
            "message-start",
            {
                "type": "message-start",
                "id": message_id,
                "delta": {
                    "message": {
                        "role": "assistant",
                        "content": [],
                        "tool_plan": "",
                        "tool_calls": [],
                        "citations": [],
                    }
                },
            },
        ),
        (
            "content-start",
            {
                "type": "content-start",
                "index": 0,
                "delta": {"message": {"content": {"type": "text", "text": ""}}},
            },
        ),
        (
            "content-delta",
            {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "Hi"}}}},
        ),
        (
            "content-delta",
            {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": " there"}}}},
        ),
        ("content-end", {"type": "content-end", "index": 0}),
        (
            "message-end",
            {
                "type": "message-end",
                "delta": {
                    "finish_reason": "COMPLETE",
                    "usage": {
                        "billed_units": {"input_tokens": 8, "output_tokens": 2},
                        "tokens": {"input_tokens": 8, "output_tokens": 2},
                        "cached_tokens": 0,
                    },
                },
            },
        ),
    ]


def test_tool_stream_frames_exactly(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {
                                    "id": "get_weather_1",
                                    "name": "get_weather",
                                    "arguments": {"city": "Paris"},
                                    "arguments_chunks": ['{"city":', '"Paris"}'],
                                }
                            ]
                        }
                    ]
                }
            ],
        }
    )

    events = _sse(_post(app_session, _body(stream=True, tools=[WEATHER])))

    assert [name for name, _ in events] == [
        "message-start",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-delta",
        "tool-call-end",
        "message-end",
    ]
    assert events[1][1] == {
        "type": "tool-plan-delta",
        "delta": {"message": {"tool_plan": "I will use get_weather."}},
    }
    assert events[2][1] == {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "get_weather_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            }
        },
    }
    pieces = [data["delta"]["message"]["tool_calls"]["function"]["arguments"] for _, data in events[3:5]]
    assert pieces == ['{"city":', '"Paris"}']
    assert events[5][1] == {"type": "tool-call-end", "index": 0}
    assert events[6][1]["delta"]["finish_reason"] == "TOOL_CALL"


def test_json_body_shape(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder().models(MODEL).scenario().tool_call("get_weather", {"city": "Oslo"}, id="w").build()
    )

    response = _post(app_session, _body(tools=[WEATHER]))

    assert response.status == 200 and response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"id", "finish_reason", "message", "usage"}
    assert body["finish_reason"] == "TOOL_CALL"
    assert body["message"] == {
        "role": "assistant",
        "tool_plan": "I will use get_weather.",
        "tool_calls": [
            {
                "id": "w",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
            }
        ],
    }
    assert set(body["usage"]) == {"billed_units", "tokens", "cached_tokens"}


def test_stream_false_and_absent_answer_json(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder().models(MODEL).scenario(terminal_policy="repeat_last_response").text("ok").build()
    )

    assert _post(app_session, _body(stream=False)).json()["message"]["content"] == [
        {"type": "text", "text": "ok"}
    ]
    assert _post(app_session, _body()).json()["finish_reason"] == "COMPLETE"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"{not json", "not valid JSON"),
        ({"messages": HI}, "model"),
        ({"model": MODEL}, "messages"),
        ({"model": MODEL, "messages": []}, "messages"),
        ({"model": MODEL, "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ({"model": MODEL, "messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
        ({"model": MODEL, "messages": [{"role": "user", "content": 7}]}, "messages[0].content"),
        (
            {
                "model": MODEL,
                "messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}],
            },
            "messages[0].tool_calls[0].function.name",
        ),
        ({"model": MODEL, "messages": HI, "tool_choice": "ANY"}, "tool_choice"),
        ({"model": MODEL, "messages": HI, "response_format": {"type": "yaml"}}, "response_format.type"),
        ({"model": MODEL, "messages": HI, "tools": [{"type": "function"}]}, "tools[0].function.name"),
        ({"model": MODEL, "messages": HI, "stream": "yes"}, "stream"),
        ({"model": MODEL, "messages": HI, "documents": [7]}, "documents[0]"),
    ],
)
def test_bad_requests_get_cohere_400(app_session: SessionClient, body: Any, needle: str) -> None:
    app_session.configure(ConfigBuilder().models(MODEL).scenario().text("unused").build())

    code = "invalid_json" if isinstance(body, bytes) else "invalid_request"
    envelope = _assert_envelope(_post(app_session, body), 400, code)

    assert needle in envelope["message"]
    assert _post(app_session, _body()).json()["message"]["content"][0]["text"] == "unused"  # nothing consumed


def test_scripted_retry_after_is_sent_in_both_headers(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .models(MODEL)
        .scenario()
        .error(429, "rate_limited", "Slow down", retry_after=2)
        .build()
    )

    response = _post(app_session, _body())

    assert _assert_envelope(response, 429, "rate_limited")["message"] == "Slow down"
    assert (response.headers["retry-after"], response.headers["retry-after-ms"]) == ("2", "2000")


def test_llmts_diagnostics_ask_for_a_one_millisecond_retry(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().models(MODEL).scenario().text("once").build())
    _post(app_session, _body())

    response = _post(app_session, _body())

    _assert_envelope(response, 409, "llm_test_server_scenario_exhausted")
    assert response.headers["retry-after-ms"] == "1" and "retry-after" not in response.headers


def test_bearer_credential_and_unknown_session(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .models(MODEL)
        .credentials(cohere="co-key")
        .scenario(terminal_policy="repeat_last_response")
        .text("ok")
        .build()
    )

    assert _post(app_session, _body()).status == 200
    _assert_envelope(_post(app_session, _body(), {"Authorization": "Bearer wrong"}), 401, "invalid_api_key")
    _assert_envelope(_post(app_session, _body(), {"Authorization": "co-key"}), 401, "invalid_api_key")
    missing = _post(app_session.server.session(f"ses_{'0' * 32}"), _body())
    _assert_envelope(missing, 404, "llm_test_server_session_not_found")


def test_models_routes(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().models(MODEL, "command-r7b", "c4ai-aya").build())
    page = send_raw(app_session, "GET", "/cohere/v1/models?page_size=2", None, AUTH).json()
    rest = send_raw(app_session, "GET", "/cohere/v1/models?page_size=2&page_token=2", None, AUTH).json()
    embed = send_raw(app_session, "GET", "/cohere/v1/models?endpoint=embed", None, AUTH).json()
    one = send_raw(app_session, "GET", f"/cohere/v1/models/{MODEL}", None, AUTH)

    assert [m["name"] for m in page["models"]] == [MODEL, "command-r7b"] and page["next_page_token"] == "2"
    assert [m["name"] for m in rest["models"]] == ["c4ai-aya"] and rest["next_page_token"] is None
    assert embed == {"models": [], "next_page_token": None}
    assert one.status == 200 and one.json()["name"] == MODEL
    missing = send_raw(app_session, "GET", "/cohere/v1/models/nope", None, AUTH)
    _assert_envelope(missing, 404, "model_not_found")
    bad = send_raw(app_session, "GET", "/cohere/v1/models?page_size=0", None, AUTH)
    _assert_envelope(bad, 400, "invalid_request")


# --- the parser, in memory ----------------------------------------------------------------------


def _parse(body: dict[str, Any]) -> Any:
    request = ProviderRequest("POST", CHAT, {}, json.dumps(body).encode(), {})
    return parse_chat_request(ProviderCall(request, session=None, request_id="req_1"))  # type: ignore[arg-type]


def test_parse_maps_history_tools_documents_and_formats() -> None:
    parsed = _parse(
        {
            "model": MODEL,
            "stream": True,
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "Be terse."}]},
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "tool_plan": "I will check.",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "c1",
                    "content": [{"type": "document", "document": {"data": {"t": 20}}}],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "20 degrees."}]},
            ],
            "tools": [WEATHER],
            "documents": ["Rome is warm.", {"id": "d2", "data": {"text": "Oslo is cold."}}],
            "tool_choice": "NONE",
            "response_format": {"type": "json_object", "json_schema": {"type": "object"}},
        }
    )

    assert [(m.role, m.text) for m in parsed.messages] == [
        ("system", "Be terse."),
        ("user", "Weather?"),
        ("assistant", ""),
        ("tool", '{"t":20}'),
        ("assistant", "20 degrees."),
    ]
    assert [(c.id, c.name, c.arguments) for c in parsed.messages[2].tool_calls] == [
        ("c1", "get_weather", '{"city":"Rome"}')
    ]
    assert parsed.messages[3].tool_call_id == "c1"
    assert parsed.tool_names == ("get_weather",) and parsed.tool_choice.mode == "none"
    assert parsed.response_format == "json_schema" and parsed.stream is True
    assert "Oslo is cold." in parsed.preamble and "get_weather" in parsed.preamble
    assert (parsed.provider, parsed.operation, parsed.cache_mode) == ("cohere", "chat", "implicit")
    assert _parse(_body(response_format={"type": "json_object"})).response_format == "json_object"
    assert _parse(_body(tool_choice="required")).tool_choice.mode == "required"
    with pytest.raises(InvalidRequest):
        _parse(_body(response_format={"type": "json_object", "json_schema": "x"}))
