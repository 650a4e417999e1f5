"""The legacy HTTP+SSE transport at ``/mcp/{name}/sse`` (llmts/server/peers/mcp_legacy.py): the official
``sse_client`` of each ``mcp`` major, and the wire."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import types

from llmts import ConfigBuilder, SessionClient
from tests.helpers import raw_request
from tests.peers.mcp.support import MCP_MAJOR, field, run

pytestmark = [pytest.mark.sdk, pytest.mark.filterwarnings("ignore:.*as of 2026-07-28")]


def _configure(session: SessionClient) -> None:
    session.configure(
        ConfigBuilder()
        .mcp_server("s", instructions="legacy")
        .tool("t")
        .text("one", progress=[{"progress": 1, "total": 1}], delay_ms=50)
        .text("two", elicit={"message": "Name?"})
        .text("three", fault="wrong_id")
        .build()
    )


def test_sse_client_handshake_calls_progress_and_elicitation(llmts_session: SessionClient) -> None:
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    _configure(llmts_session)
    seen: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async def scenario() -> list[str]:
        async with (
            sse_client(llmts_session.mcp_url("s") + "/sse") as (read, write),
            ClientSession(read, write, elicitation_callback=on_elicit) as session,
        ):
            init = await session.initialize()
            assert init.instructions == "legacy" and field(init, "protocol_version") == "2025-11-25"
            texts = []
            for _ in range(2):
                result = await session.call_tool("t", {}, progress_callback=on_progress)
                texts.append(result.content[0].text)
            return texts

    assert run(scenario) == ["one", "two"]
    assert seen == [1.0, "Name?"]
    calls = llmts_session.requests(provider="mcp", operation="tools/call")
    assert calls[0]["client_answers"][0]["result"] == {"action": "accept", "content": {"name": "Ada"}}
    assert [entry["status"] for entry in calls] == [202, 202]


@pytest.mark.skipif(MCP_MAJOR < 2, reason="mcp.Client is new in mcp 2")
def test_high_level_client_over_sse_falls_back_from_discover(llmts_session: SessionClient) -> None:
    from mcp import Client
    from mcp.client.sse import sse_client

    _configure(llmts_session)

    async def scenario() -> tuple[str, float]:
        started = time.monotonic()
        async with Client(sse_client(llmts_session.mcp_url("s") + "/sse")) as client:
            result = await client.call_tool("t", {})
            return result.content[0].text, time.monotonic() - started

    text, elapsed = run(scenario)
    assert text == "one" and elapsed < 5


def _open(session: SessionClient) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, str]:
    parts = urlsplit(session.provider_base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("GET", parts.path + "/mcp/s/sse", headers={"Accept": "text/event-stream"})
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    assert response.readline() == b"event: endpoint\n"
    endpoint = response.readline().decode().removeprefix("data: ").strip()
    assert response.readline() == b"\n"
    return connection, response, endpoint


def _next_message(response: http.client.HTTPResponse) -> dict[str, Any]:
    while True:
        line = response.readline()
        assert line, "the stream ended"
        if line.startswith(b"data: "):
            return json.loads(line[6:])  # type: ignore[no-any-return]


def test_the_wire_endpoint_event_202_and_answers_on_the_stream(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    connection, response, endpoint = _open(llmts_session)
    try:
        path = endpoint.removeprefix(urlsplit(llmts_session.provider_base).path)
        assert path.startswith("/mcp/s/messages?session_id=") and len(path.split("=")[1]) == 32
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        posted = raw_request(llmts_session.provider_base, "POST", path, init)
        assert posted.status == 202 and posted.body == b"Accepted"
        assert _next_message(response)["result"]["protocolVersion"] == "2024-11-05"
        raw_request(
            llmts_session.provider_base,
            "POST",
            path,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}},
        )
        assert _next_message(response)["result"]["content"][0]["text"] == "one"
        # Each answer comes when it is ready (a call runs beside its POST). A reset keeps the session.
        llmts_session.reset()
        for number in (3, 4, 5):
            call = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "t"}}
            raw_request(llmts_session.provider_base, "POST", path, call)
        answers = {str(message["id"]): message for message in (_next_message(response) for _ in range(3))}
        assert answers["3"]["result"]["content"][0]["text"] == "one"
        # No elicitation capability was declared: refused, and a refused call consumes nothing.
        assert answers["4"]["error"]["code"] == answers["5"]["error"]["code"] == -32021
        # A configure keeps the session too (its tool list is the same: nothing to tell); protocol faults act.
        llmts_session.configure(
            ConfigBuilder().mcp_server("s").tool("t").text("three", fault="wrong_id").build()
        )
        call = {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "t"}}
        raw_request(llmts_session.provider_base, "POST", path, call)
        assert _next_message(response)["id"] == "llmts-wrong-id-6"
        assert raw_request(llmts_session.provider_base, "POST", path, b"{bad").status == 400
    finally:
        connection.close()
    # Closing the stream ends the session.
    deadline = time.monotonic() + 5
    while (
        raw_request(
            llmts_session.provider_base, "POST", path, {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        ).status
        != 404
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_refusals(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    base = llmts_session.provider_base
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert raw_request(base, "POST", "/mcp/s/messages", ping).status == 400
    assert raw_request(base, "POST", "/mcp/s/messages?session_id=" + "0" * 32, ping).status == 404
    not_allowed = raw_request(base, "POST", "/mcp/s/sse", ping)
    assert not_allowed.status == 405 and not_allowed.headers["allow"] == "GET"
    assert raw_request(base, "GET", "/mcp/s/messages").headers["allow"] == "POST"
    assert raw_request(base, "GET", "/mcp/s/sse", headers={"Accept": "application/json"}).status == 406
    assert raw_request(base, "GET", "/mcp/unknown/sse").status == 404


def _slow_stream(session: SessionClient) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, str]:
    """The legacy stream over a socket with a small receive buffer, so the server's writes block as soon
    as the test stops reading."""
    parts = urlsplit(session.provider_base)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect((parts.hostname, parts.port))
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.sock = sock
    connection.request("GET", parts.path + "/mcp/s/sse", headers={"Accept": "text/event-stream"})
    response = connection.getresponse()
    assert response.readline() == b"event: endpoint\n"
    endpoint = response.readline().decode().removeprefix("data: ").strip().removeprefix(parts.path)
    assert response.readline() == b"\n"
    return connection, response, endpoint


def _flood_server(session: SessionClient) -> None:
    session.configure(
        ConfigBuilder()
        .mcp_server("s")
        .tool("flood", terminal_policy="repeat_last_response")
        .text("flooded", fault="notification_flood", flood_count=1000)
        .tool("plain")
        .text("plain")
        .build()
    )


def _post_calls(session: SessionClient, endpoint: str, floods: int) -> None:
    base = session.provider_base
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "r", "version": "1"},
        },
    }
    assert raw_request(base, "POST", endpoint, init).status == 202
    for number in range(2, floods + 2):
        call = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "flood"}}
        assert raw_request(base, "POST", endpoint, call).status == 202
    plain = {"jsonrpc": "2.0", "id": floods + 2, "method": "tools/call", "params": {"name": "plain"}}
    assert raw_request(base, "POST", endpoint, plain).status == 202


def test_a_slow_reader_loses_notifications_never_answers(llmts_session: SessionClient) -> None:
    _flood_server(llmts_session)
    connection, response, endpoint = _slow_stream(llmts_session)
    try:
        # 80,000 notifications, about 9 MB, in 80 calls: more than the socket buffers hold, so the stream's
        # writes wait while the test does not read. A POST may wait too (backpressure), so they go from a
        # thread, and the reading starts a little later.
        def post() -> None:
            _post_calls(llmts_session, endpoint, 80)
            last = {"jsonrpc": "2.0", "id": 99, "method": "ping"}  # answered after every call
            raw_request(llmts_session.provider_base, "POST", endpoint, last)

        poster = threading.Thread(target=post)
        poster.start()
        poster.join(1.5)
        answered: list[Any] = []
        notifications = 0
        while 99 not in answered:
            message = _next_message(response)
            if "id" in message:
                answered.append(message["id"])
            else:
                notifications += 1
        poster.join(10)
    finally:
        connection.close()
    assert sorted(answered) == [*range(1, 83), 99]  # every answer (the plain call's, 82, among them)
    assert notifications < 80_000  # the oldest notifications were dropped
    calls = llmts_session.requests(provider="mcp", operation="tools/call")
    assert len(calls) == 81 and all(call["transport_outcome"] == "completed" for call in calls)
    assert all(call["success"] for call in calls)


def test_answers_that_never_left_are_journaled_as_failed(llmts_session: SessionClient) -> None:
    _flood_server(llmts_session)
    connection, _, endpoint = _slow_stream(llmts_session)
    # 60 calls: fewer answers than may wait for the stream, so no POST waits for the reader.
    _post_calls(llmts_session, endpoint, 60)
    time.sleep(0.5)
    connection.close()  # without reading: the answers still waiting never reach the client
    deadline = time.monotonic() + 10
    while True:
        calls = llmts_session.requests(provider="mcp", operation="tools/call")
        if all(call["completed_at"] is not None for call in calls):
            break
        assert time.monotonic() < deadline, calls
        time.sleep(0.1)
    plain = calls[0]
    assert plain["tool_name"] == "plain" and plain["status"] == 202
    assert plain["success"] is False and plain["transport_outcome"] == "client_gone"
