"""Regressions of the MCP review (docs/mcp.md): client input that reached a 500, a refused call that
consumed its result, a configuration change while a body arrived, refusals missing from the journal, an
unbounded ``prompts/get``, ``logging/setLevel`` ignored, and the two transports' sessions mixed. Raw HTTP
against a real gunicorn+gevent server; each test checks that no journal entry stays in progress."""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import raw_request
from tests.peers.mcp.support import ACCEPT_BOTH, LATEST, Wire, events

_ELICIT = {"message": "Name?"}


def _all_finished(session: SessionClient) -> list[dict[str, Any]]:
    entries = session.requests(provider="mcp")
    assert all(entry["completed_at"] is not None for entry in entries), entries
    return entries


def _server(session: SessionClient, builder: Any = None) -> Wire:
    session.configure(
        builder
        or ConfigBuilder()
        .mcp_server("s", page_size=1)
        .tool("t")
        .text("one")
        .tool("u")
        .prompt("p", "{a}", arguments=["a"])
        .build()
    )
    return Wire(session.provider_base, "s")


def _legacy_endpoint(
    session: SessionClient,
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, str]:
    parts = urlsplit(session.provider_base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("GET", parts.path + "/mcp/s/sse", headers={"Accept": "text/event-stream"})
    response = connection.getresponse()
    assert response.readline() == b"event: endpoint\n"
    endpoint = response.readline().decode().removeprefix("data: ").strip()
    response.readline()
    return connection, response, endpoint.removeprefix(parts.path)


def _next_data(response: http.client.HTTPResponse) -> dict[str, Any]:
    while True:
        line = response.readline()
        assert line, "the stream ended"
        if line.startswith(b"data: "):
            return json.loads(line[6:])  # type: ignore[no-any-return]


@pytest.mark.parametrize("cursor", ["²", "\u0661", "1²", " 1"])
def test_a_cursor_of_non_ascii_digits_is_invalid_params(llmts_session: SessionClient, cursor: str) -> None:
    wire = _server(llmts_session)
    session = wire.initialize()
    response = wire.request("tools/list", {"cursor": cursor}, session=session)
    assert response.status == 200 and response.json()["error"]["code"] == -32602
    assert (
        wire.request("tools/list", {"cursor": "1"}, session=session).json()["result"]["tools"][0]["name"]
        == "u"
    )
    _all_finished(llmts_session)


def test_a_cursor_of_non_ascii_digits_on_the_legacy_transport(llmts_session: SessionClient) -> None:
    _server(llmts_session)
    connection, stream, endpoint = _legacy_endpoint(llmts_session)
    try:
        listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "²"}}
        assert raw_request(llmts_session.provider_base, "POST", endpoint, listed).status == 202
        assert _next_data(stream)["error"]["code"] == -32602
    finally:
        connection.close()
    assert [entry["error_code"] for entry in _all_finished(llmts_session)] == ["jsonrpc_-32602"]


@pytest.mark.parametrize("request_id", [[1], {}, None, True, 1.5])
def test_a_cancel_naming_no_call_id_is_accepted(llmts_session: SessionClient, request_id: Any) -> None:
    wire = _server(llmts_session)
    session = wire.initialize()
    notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    assert wire.post(notice, session).status == 202
    assert wire.request("ping", session=session).status == 200
    connection, stream, endpoint = _legacy_endpoint(llmts_session)
    try:
        assert raw_request(llmts_session.provider_base, "POST", endpoint, notice).status == 202
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert raw_request(llmts_session.provider_base, "POST", endpoint, ping).status == 202
        assert _next_data(stream) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    finally:
        connection.close()
    _all_finished(llmts_session)


def test_a_call_refused_for_a_missing_capability_consumes_nothing(llmts_session: SessionClient) -> None:
    wire = _server(
        llmts_session,
        ConfigBuilder()
        .mcp_server("s", answer_timeout_ms=200)
        .tool("t")
        .text("asks", elicit=_ELICIT)
        .text("second")
        .build(),
    )
    plain = wire.initialize()
    for _ in range(2):  # the first result stays unconsumed: the second call is refused too
        refused = wire.request("tools/call", {"name": "t"}, session=plain).json()
        assert refused["error"]["code"] == -32021
    capable = wire.initialize(capabilities={"elicitation": {}})
    ask = events(
        wire.request("tools/call", {"name": "t"}, session=capable, headers={"Accept": ACCEPT_BOTH}).body
    )
    assert ask[0]["method"] == "elicitation/create"


def test_a_call_refused_for_a_json_only_accept_consumes_nothing(llmts_session: SessionClient) -> None:
    wire = _server(
        llmts_session,
        ConfigBuilder().mcp_server("s").tool("t").text("asks", elicit=_ELICIT).text("second").build(),
    )
    session = wire.initialize(capabilities={"elicitation": {}})
    for _ in range(2):
        refused = wire.request(
            "tools/call", {"name": "t"}, session=session, headers={"Accept": "application/json"}
        )
        assert refused.status == 200 and refused.json()["error"]["code"] == -32600
    entries = _all_finished(llmts_session)
    assert [entry["error_code"] for entry in entries[:2]] == ["mcp_not_acceptable"] * 2


def test_a_configure_while_the_body_arrives_is_in_force_for_the_request(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session, ConfigBuilder().mcp_server("s").tool("t").text("old").build())
    session = wire.initialize()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}).encode()
    parts = urlsplit(llmts_session.provider_base)
    head = (
        f"POST {parts.path}/mcp/s HTTP/1.1\r\nHost: {parts.hostname}\r\nContent-Type: application/json\r\n"
        f"Accept: {ACCEPT_BOTH}\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: {LATEST}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head + body[:10])
        time.sleep(0.3)  # the server reads the body meanwhile
        llmts_session.configure(ConfigBuilder().mcp_server("s").tool("t").text("new").build())
        sock.sendall(body[10:])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert b'"text":"new"' in answer and b'"text":"old"' not in answer


def _too_large(session: SessionClient, client_session: str) -> tuple[int, Any]:
    """A POST announcing a body over the server's limit: the status and the JSON-RPC error."""
    parts = urlsplit(session.provider_base)
    head = (
        f"POST {parts.path}/mcp/s HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"Mcp-Session-Id: {client_session}\r\nContent-Length: 99999999999\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


def test_http_level_refusals_are_journaled(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session)
    session = wire.initialize()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert wire.post(ping, session, headers={"Accept": "text/plain"}).status == 406
    assert wire.post(ping, session, headers={"Content-Type": "text/plain"}).status == 415
    assert wire.post(ping, session, version="1999-01-01").status == 400
    status, refused = _too_large(llmts_session, session)
    assert status == 413 and refused["error"]["data"]["code"] == "request_too_large"
    # A notification refused at the HTTP level is not an entry (docs/mcp.md, "Journal and verification").
    assert (
        wire.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session, version="x").status
        == 400
    )
    entries = _all_finished(llmts_session)
    assert [(e["operation"], e["status"], e["error_code"]) for e in reversed(entries)][1:] == [
        ("ping", 406, "mcp_not_acceptable"),
        ("ping", 415, "mcp_unsupported_media_type"),
        ("ping", 400, "mcp_unsupported_protocol_version"),
        ("invalid", 413, "request_too_large"),
    ]


def test_prompts_get_output_is_bounded(llmts_session: SessionClient) -> None:
    wire = _server(
        llmts_session, ConfigBuilder().mcp_server("s").prompt("p", "{a}" * 1000, arguments=["a"]).build()
    )
    session = wire.initialize()
    fits = wire.request("prompts/get", {"name": "p", "arguments": {"a": "x" * 1000}}, session=session)
    assert len(fits.json()["result"]["messages"][0]["content"]["text"]) == 1_000_000
    beyond = wire.request("prompts/get", {"name": "p", "arguments": {"a": "x" * 1001}}, session=session)
    assert beyond.status == 200 and beyond.json()["error"]["code"] == -32602
    assert "1000000 characters" in beyond.json()["error"]["message"]


def test_a_flood_respects_the_clients_logging_level(llmts_session: SessionClient) -> None:
    builder = ConfigBuilder().mcp_server("s").tool("t").text("r", fault="notification_flood", flood_count=5)
    wire = _server(llmts_session, builder.config.build())
    session = wire.initialize()
    assert wire.request("logging/setLevel", {"level": "warning"}, session=session).status == 200
    quiet = wire.request("tools/call", {"name": "t"}, session=session)
    assert (
        quiet.headers["content-type"] == "application/json"
        and quiet.json()["result"]["content"][0]["text"] == "r"
    )
    llmts_session.reset()
    assert wire.request("logging/setLevel", {"level": "info"}, session=session).status == 200
    loud = events(wire.request("tools/call", {"name": "t"}, session=session).body)
    assert len(loud) == 6


def test_a_legacy_session_id_is_not_a_streamable_http_session(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session)
    connection, stream, endpoint = _legacy_endpoint(llmts_session)
    try:
        legacy_id = endpoint.rsplit("=", 1)[1]
        assert wire.request("ping", session=legacy_id).status == 404
        assert wire.raw("GET", {"Accept": "text/event-stream", "Mcp-Session-Id": legacy_id}).status == 404
        assert wire.raw("DELETE", {"Mcp-Session-Id": legacy_id}).status == 404
        # The legacy stream is still its own.
        ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
        assert raw_request(llmts_session.provider_base, "POST", endpoint, ping).status == 202
        assert _next_data(stream)["id"] == 7
    finally:
        connection.close()
