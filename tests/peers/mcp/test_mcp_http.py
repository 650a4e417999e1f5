"""``/mcp/{name}`` on the wire (llmts/server/peers/mcp_http.py): status codes, headers, JSON and SSE
answers, the session lifecycle, the GET stream, revisions, and bad input (never a 500), over raw HTTP
against a real gunicorn+gevent server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import raw_request
from tests.peers.mcp.support import ACCEPT_BOTH, LATEST, MODERN, Wire, events

OUTPUT = {"type": "object", "properties": {"a": {"type": "string"}}}


def _configure(session: SessionClient) -> Wire:
    config = (
        ConfigBuilder()
        .mcp_server("s", instructions="hi")
        .tool("t", title="T", output_schema=OUTPUT, annotations={"readOnlyHint": True})
        .text("one", structured={"a": "x"}, progress=[{"progress": 1, "total": 2, "message": "half"}])
        .text("two")
        .text("three")
        .resource("file:///r", "r", text="R")
        .build()
    )
    session.configure(config)
    return Wire(session.provider_base, "s")


def test_initialize_issues_a_session_and_answers_json(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    params = {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    response = wire.request("initialize", params)
    assert response.status == 200
    assert response.headers["content-type"] == "application/json"
    assert len(response.headers["mcp-session-id"]) == 32
    body = response.json()
    assert body["id"] == 1 and body["result"]["protocolVersion"] == LATEST
    assert body["result"]["serverInfo"] == {"name": "s", "version": "1.0.0"}
    assert body["result"]["instructions"] == "hi"


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2024-10-07", LATEST),
        ("2026-07-28", LATEST),
    ],
)
def test_each_revision_is_negotiated_and_shapes_the_answers(
    llmts_session: SessionClient, requested: str, answered: str
) -> None:
    wire = _configure(llmts_session)
    params = {"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    init = wire.request("initialize", params)
    result = init.json()["result"]
    assert result["protocolVersion"] == answered
    assert ("completions" in result["capabilities"]) == (answered >= "2025-03-26")
    session = init.headers["mcp-session-id"]
    (tool,) = wire.request("tools/list", session=session, version=answered).json()["result"]["tools"]
    # Fields a revision does not define are left out of its answers.
    assert ("outputSchema" in tool, "title" in tool) == ((answered >= "2025-06-18"),) * 2
    assert ("annotations" in tool) == (answered >= "2025-03-26")
    call = wire.request(
        "tools/call", {"name": "t", "_meta": {"progressToken": "p"}}, session=session, version=answered
    )
    *notes, final = events(call.body)
    assert ("structuredContent" in final["result"]) == (answered >= "2025-06-18")
    assert ("message" in notes[0]["params"]) == (answered >= "2025-03-26")


def test_progress_makes_the_answer_sse_only_with_a_progress_token(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    streamed = wire.request("tools/call", {"name": "t", "_meta": {"progressToken": 7}}, session=session)
    assert streamed.status == 200
    assert streamed.headers["content-type"] == "text/event-stream"
    assert streamed.headers["cache-control"] == "no-cache"
    assert streamed.body.startswith(b": llmts\n\nevent: message\ndata: ")
    progress, result = events(streamed.body)
    assert progress == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 7, "progress": 1, "total": 2, "message": "half"},
    }
    assert result["id"] == wire.last_id and result["result"]["structuredContent"] == {"a": "x"}
    # The next result has no progress: nothing precedes it, so it is plain JSON.
    plain = wire.request("tools/call", {"name": "t", "_meta": {"progressToken": 8}}, session=session)
    assert plain.headers["content-type"] == "application/json"
    assert plain.json()["result"] == {"content": [{"type": "text", "text": "two"}], "isError": False}
    # Progress goes only to a call that asked for it: without a token, JSON.
    llmts_session.reset()
    silent = wire.request("tools/call", {"name": "t"}, session=session)
    assert silent.headers["content-type"] == "application/json"
    assert silent.json()["result"]["content"] == [{"type": "text", "text": "one"}]


def test_a_client_that_accepts_only_sse_gets_sse(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    response = wire.request("ping", session=session, headers={"Accept": "text/event-stream"})
    assert response.headers["content-type"] == "text/event-stream"
    assert events(response.body) == [{"jsonrpc": "2.0", "id": wire.last_id, "result": {}}]


def test_session_lifecycle_missing_unknown_deleted_and_reset(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    missing = wire.request("ping")
    assert missing.status == 400 and "Mcp-Session-Id" in missing.json()["error"]["message"]
    unknown = wire.request("ping", session="0" * 32)
    assert unknown.status == 404 and unknown.json()["error"]["code"] == -32600
    session = wire.initialize()
    assert wire.request("ping", session=session).status == 200
    # A reset starts the script over but keeps the client sessions.
    llmts_session.reset()
    assert wire.request("ping", session=session).status == 200
    deleted = wire.raw("DELETE", {"Mcp-Session-Id": session, "Mcp-Protocol-Version": LATEST})
    assert deleted.status == 204 and deleted.body == b""
    assert wire.request("ping", session=session).status == 404
    assert wire.raw("DELETE", {"Mcp-Session-Id": session}).status == 404
    # A configuration without the server ends its sessions; the server itself is gone (404).
    other = wire.initialize()
    llmts_session.configure(ConfigBuilder().mcp_server("t").build())
    gone = wire.request("ping", session=other)
    assert gone.status == 404 and gone.json()["error"]["data"]["code"] == "not_found"


def test_notifications_and_responses_are_accepted_with_202(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    assert wire.post(cancelled, session).status == 202
    answer = {"jsonrpc": "2.0", "id": "llmts-99", "result": {}}
    response = wire.post(answer, session)
    assert response.status == 202 and response.body == b""
    assert wire.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 400


def test_get_stream_carries_list_changed_and_ends_with_the_session(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    with wire.stream(session) as stream:
        assert stream.status == 200 and stream.headers["content-type"] == "text/event-stream"
        llmts_session.configure(ConfigBuilder().mcp_server("s").tool("u").build())
        assert stream.next_message() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert stream.next_message() == {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
        assert wire.raw("DELETE", {"Mcp-Session-Id": session}).status == 204
        assert stream.next_message() is None


def test_a_second_get_stream_takes_over(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    with wire.stream(session) as first, wire.stream(session) as second:
        assert first.next_message() is None
        llmts_session.configure(ConfigBuilder().mcp_server("s").build())
        assert second.next_message() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


BAD_BODIES: list[tuple[bytes, int, int]] = [
    (b"{not json", 400, -32700),
    (b"[]", 400, -32600),
    (b'"text"', 400, -32600),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": ""}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}', 400, -32602),
    (b'{"jsonrpc": "2.0", "id": 1}', 400, -32600),
]


@pytest.mark.parametrize(("body", "status", "code"), BAD_BODIES)
def test_malformed_messages_get_the_protocol_errors(
    llmts_session: SessionClient, body: bytes, status: int, code: int
) -> None:
    wire = _configure(llmts_session)
    response = wire.post(body)
    assert response.status == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": response.json()["error"]}
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("nope/nothing", None, -32601),
        ("tools/call", {"arguments": {}}, -32602),
        ("tools/call", {"name": "t", "arguments": [1]}, -32602),
        ("tools/call", {"name": "unknown"}, -32602),
        ("tools/list", {"cursor": "x"}, -32602),
        ("tools/list", {"cursor": "999999"}, -32602),
        ("resources/read", {}, -32602),
        ("resources/read", {"uri": "file:///none"}, -32002),
        ("resources/subscribe", {"uri": "file:///none"}, -32002),
        ("prompts/get", {"name": "none"}, -32602),
        ("logging/setLevel", {"level": "loud"}, -32602),
        ("completion/complete", {}, -32602),
    ],
)
def test_method_errors_answer_200_with_a_jsonrpc_error(
    llmts_session: SessionClient, method: str, params: dict[str, Any] | None, code: int
) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    response = wire.request(method, params, session=session)
    assert response.status == 200  # mcp 1.x drops its whole session on any other 4xx but 404
    assert response.json()["id"] == wire.last_id and response.json()["error"]["code"] == code


def test_initialize_with_bad_params_is_invalid_params(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    response = wire.request("initialize", {"protocolVersion": LATEST})
    assert response.status == 200 and response.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in response.headers


def test_http_level_refusals(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = {"Mcp-Session-Id": session}
    not_acceptable = wire.post(ping, session, headers={"Accept": "text/plain"})
    assert not_acceptable.status == 406
    wrong_type = wire.post(ping, session, headers={"Content-Type": "text/plain"})
    assert wrong_type.status == 415
    bad_version = wire.post(ping, session, version="1999-01-01")
    assert (
        bad_version.status == 400 and "Unsupported protocol version" in bad_version.json()["error"]["message"]
    )
    assert wire.raw("GET", {**headers, "Accept": "application/json"}).status == 406
    assert wire.raw("GET", {"Accept": "text/event-stream"}).status == 400
    for method in ("PUT", "PATCH"):
        refused = wire.raw(method, headers)
        assert refused.status == 405 and refused.headers["allow"] == "GET, POST, DELETE"
        assert refused.json()["error"]["code"] == -32600
    assert raw_request(llmts_session.provider_base, "POST", "/mcp/unknown", ping).status == 404
    assert raw_request(llmts_session.provider_base, "POST", "/mcp/s/extra", ping).status == 404
    assert raw_request(llmts_session.provider_base, "POST", "/mcp/", ping).status == 404


def _modern(wire: Wire, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    sent = {"Mcp-Protocol-Version": MODERN, "Mcp-Method": method, **headers}
    return wire.request(method, {**(params or {}), "_meta": meta}, headers=sent, version=None)


def test_stateless_revision_discover_and_stamped_results(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    discover = _modern(wire, "server/discover")
    assert discover.status == 200 and "mcp-session-id" not in discover.headers
    result = discover.json()["result"]
    assert result["supportedVersions"] == [MODERN] and result["instructions"] == "hi"
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "s", "version": "1.0.0"}
    listed = _modern(wire, "tools/list").json()["result"]
    assert listed["tools"][0]["name"] == "t" and listed["ttlMs"] == 0
    called = _modern(wire, "tools/call", {"name": "t"}, **{"Mcp-Name": "t"}).json()["result"]
    assert called["resultType"] == "complete" and "ttlMs" not in called
    # Header values that are not ASCII travel base64-encoded.
    read = _modern(wire, "resources/read", {"uri": "file:///r"}, **{"Mcp-Name": "=?base64?ZmlsZTovLy9y?="})
    assert read.json()["result"]["contents"][0]["text"] == "R"


@pytest.mark.parametrize(
    ("method", "params", "headers", "status", "code"),
    [
        ("tools/list", {"_meta": None}, {}, 400, -32602),
        ("tools/call", {"name": "t"}, {"Mcp-Name": "other"}, 400, -32020),
        ("tools/list", None, {"Mcp-Method": "tools/call"}, 400, -32020),
        ("initialize", None, {}, 404, -32601),
        ("ping", None, {}, 404, -32601),
        ("resources/subscribe", {"uri": "file:///r"}, {}, 404, -32601),
        ("tools/call", {"name": "t", "requestState": "forged"}, {}, 400, -32602),
        ("tools/call", {"name": "nope"}, {}, 400, -32602),
    ],
)
@pytest.mark.parametrize("accept", [ACCEPT_BOTH, "text/event-stream"])
def test_stateless_revision_errors(
    llmts_session: SessionClient,
    method: str,
    params: dict[str, Any] | None,
    headers: dict[str, str],
    status: int,
    code: int,
    accept: str,
) -> None:
    """An error status comes with a JSON body even to a client that accepts only SSE (found by the deep
    fuzz: such a client got its 400 as an SSE event), as every other refusal does."""
    wire = _configure(llmts_session)
    if params is not None and params.get("_meta", 1) is None:  # no envelope at all
        sent = {"Mcp-Protocol-Version": MODERN, "Accept": accept}
        response = wire.request(method, {}, headers=sent, version=None)
    else:
        response = _modern(wire, method, params, **headers, Accept=accept)
    assert response.status == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == code


def test_stateless_input_required_round_trip(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().mcp_server("s").tool("t").text("done", elicit={"message": "Name?"}).build()
    )
    wire = Wire(llmts_session.provider_base, "s")
    first = _modern(wire, "tools/call", {"name": "t"}).json()["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "n1": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        }
    }
    answers = {"n1": {"action": "accept", "content": {"name": "Ada"}}}
    again = {"name": "t", "inputResponses": answers, "requestState": first["requestState"]}
    second = _modern(wire, "tools/call", again).json()["result"]
    assert second["content"] == [{"type": "text", "text": "done"}]
    # A requestState answers once.
    assert _modern(wire, "tools/call", again).json()["error"]["code"] == -32602
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert wire.post(notification, headers={"Mcp-Protocol-Version": MODERN}, version=None).status == 202


def test_every_request_is_one_journal_entry(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    wire.request("tools/call", {"name": "t", "arguments": {"q": 1}}, session=session)
    wire.request("nope", session=session)
    wire.post(b"{bad")
    entries = llmts_session.requests(provider="mcp")
    assert [(e["operation"], e["status"], e["success"]) for e in reversed(entries)] == [
        ("initialize", 200, True),
        ("tools/call", 200, True),
        ("unknown", 200, False),
        ("invalid", 400, False),
    ]
    call = entries[2]
    assert call["mcp_server"] == "s" and call["tool_name"] == "t" and call["arguments"] == {"q": 1}
    assert call["method"] == "POST" and call["path"].endswith("/mcp/s")
    assert entries[1]["error_code"] == "jsonrpc_-32601"
    assert [e["tool_name"] for e in llmts_session.requests(provider="mcp", tool_name="t")] == ["t"]


def test_verify_filters_on_server_and_tool(llmts_session: SessionClient) -> None:
    wire = _configure(llmts_session)
    session = wire.initialize()
    for _ in range(2):
        wire.request("tools/call", {"name": "t", "arguments": {}}, session=session)
    expectation = {"name": "two calls", "query": {"provider": "mcp", "mcp_server": "s", "tool_name": "t"}}
    passed = llmts_session.verify({"requests": [{**expectation, "minimum_count": 2, "maximum_count": 2}]})
    assert passed.passed
    failed = llmts_session.verify({"requests": [{**expectation, "minimum_count": 3, "maximum_count": None}]})
    assert not failed.passed


def test_accept_header_parsing() -> None:
    from llmts.server.peers.mcp_common import accepts

    assert accepts(None) == (True, True)
    assert accepts(ACCEPT_BOTH) == (True, True)
    assert accepts("application/json;q=0.9") == (True, False)
    assert accepts("text/event-stream") == (False, True)
    assert accepts("*/*") == (True, True)
    assert accepts("text/html") == (False, False)
