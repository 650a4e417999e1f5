"""OpenAI Chat Completions on the wire (raw HTTP): exact SSE frames, malformed requests, routing errors.

In process (the wire format is the subject); the keep-alive and chunked-body tests use raw sockets to the
real server."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import OPENAI_CHAT_PATH, raw_request
from tests.support.envelopes import assert_openai_error
from tests.support.in_process import send_raw
from tests.support.openai_tokens import o200k
from tests.support.sse import sse_events

pytestmark = pytest.mark.sdk


def _chat(session: SessionClient, body: Any, headers: dict[str, str] | None = None) -> Any:
    return send_raw(session, "POST", OPENAI_CHAT_PATH, body, {"Authorization": "Bearer k", **(headers or {})})


def _sse_events(body: bytes) -> list[str]:
    """The data of each event: Chat Completions streams have no ``event:`` lines."""
    events = sse_events(body)
    assert all(name is None for name, _ in events)
    return [data for _, data in events]


def test_stream_frames_end_with_done_and_the_body_closes(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("Hi!", chunks=["H", "i!"]).build())

    response = _chat(
        app_session,
        {
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "x"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )

    assert response.status == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-request-id"].startswith("req_")
    events = _sse_events(response.body)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert [c["choices"][0]["delta"] for c in chunks[:-2]] == [
        {"role": "assistant", "content": "", "refusal": None},
        {"content": "H"},
        {"content": "i!"},
    ]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == o200k("Hi!")
    assert all(c["usage"] is None for c in chunks[:-1])


def test_streamed_tool_call_ids_and_names_only_in_first_delta(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder().scenario().tool_call("f", {"a": "0123456789012345678"}, id="c1").build()
    )

    response = _chat(
        app_session,
        {
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "x"}],
            "stream": True,
            "tools": [{"type": "function", "function": {"name": "f"}}],
        },
    )

    deltas = [json.loads(e)["choices"][0]["delta"] for e in _sse_events(response.body)[:-1]]
    tool_deltas = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert tool_deltas[0] == {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    assert all(
        set(d) == {"index", "function"} and set(d["function"]) == {"arguments"} for d in tool_deltas[1:]
    )
    assert "".join(d["function"]["arguments"] for d in tool_deltas) == '{"a":"0123456789012345678"}'


def test_stream_over_keep_alive_connection_finishes_each_body(llmts_session: SessionClient) -> None:
    """Two streamed requests on one connection: each body ends (chunked terminator) right after [DONE]."""
    llmts_session.configure(
        ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    )
    parts = urlsplit(llmts_session.provider_base)
    body = json.dumps(
        {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "x"}], "stream": True}
    )
    request = (
        f"POST {parts.path}{OPENAI_CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        for _ in range(2):
            sock.sendall(request)
            received = b""
            while not received.endswith(b"0\r\n\r\n"):
                data = sock.recv(65536)
                assert data, "server closed the keep-alive connection"
                received += data
            assert b"data: [DONE]\n\n" in received
            assert b"Transfer-Encoding: chunked" in received


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        (b"", None),
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "gpt-4.1-mini"}, "messages"),
        ({"model": "gpt-4.1-mini", "messages": []}, "messages"),
        ({"model": "gpt-4.1-mini", "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ({"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        (
            {"model": "gpt-4.1-mini", "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id",
        ),
        ({"model": 7, "messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}, "stream"),
        (
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream_options": {}},
            "stream_options",
        ),
        ({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": {"a": 1}}, "tools"),
        (
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_choice": "sometimes"},
            "tool_choice",
        ),
        (
            {
                "model": "m",
                "messages": [{"role": "user", "content": "x"}],
                "response_format": {"type": "yaml"},
            },
            "response_format.type",
        ),
    ],
)
def test_malformed_requests_get_400_in_openai_envelope(
    app_session: SessionClient, body: Any, param: str | None
) -> None:
    app_session.configure(ConfigBuilder().scenario().text("never").build())

    response = _chat(app_session, body)

    error = assert_openai_error(response, 400, "invalid_request_error")
    assert error["param"] == param
    # Nothing was consumed by the bad requests.
    good = _chat(app_session, {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "x"}]})
    assert good.json()["choices"][0]["message"]["content"] == "never"


def test_unknown_provider_route_and_wrong_method(app_session: SessionClient) -> None:
    missing = send_raw(app_session, "POST", "/openai/v1/embeddingz", {})
    assert assert_openai_error(missing, 404)["code"] == "not_found"

    wrong_method = send_raw(app_session, "GET", OPENAI_CHAT_PATH)
    assert wrong_method.status == 405
    assert wrong_method.json()["error"]["code"] == "method_not_allowed"


def test_route_outside_every_provider_is_json_404(llmts_server: Any) -> None:
    response = raw_request(llmts_server.url, "GET", "/nothing/here")
    assert response.status == 404
    assert response.json()["error"]["code"] == "not_found"
    assert response.headers["content-type"] == "application/json"


def test_trailing_slash_is_accepted(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("slash").build())
    response = send_raw(
        app_session,
        "POST",
        OPENAI_CHAT_PATH + "/",
        {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "x"}]},
    )
    assert response.status == 200
    assert response.json()["choices"][0]["message"]["content"] == "slash"


def test_chunked_request_body_is_read(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text("chunked ok").build())
    parts = urlsplit(llmts_session.provider_base)
    body = json.dumps({"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "x"}]}).encode()
    half = len(body) // 2
    chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, body[:half], len(body) - half, body[half:])
    request = (
        f"POST {parts.path}{OPENAI_CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode() + chunked
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while data := sock.recv(65536):
            received += data
    assert received.startswith(b"HTTP/1.1 200")
    assert b"chunked ok" in received
