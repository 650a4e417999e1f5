"""The legacy HTTP+SSE transport at ``/mcp/{name}/sse`` (llmts/server/peers/mcp_legacy.py): the official
``sse_client`` of each ``mcp`` major, and the wire."""

from __future__ import annotations

import http.client
import json
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
        assert answers["4"]["error"]["code"] == -32021  # no elicitation capability was declared
        assert (
            answers["llmts-wrong-id-5"]["result"]["content"][0]["text"] == "three"
        )  # protocol faults act too
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
