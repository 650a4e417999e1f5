"""Hostile JSON on both peers' routes (docs/mcp.md and docs/a2a.md, "Limits"): JSON nested deeper than
the JSON-RPC layer accepts is an invalid request, and the session's journal stays readable after it."""

from __future__ import annotations

import json

import pytest

from llmts import SessionClient
from llmts.peers.jsonrpc import MAX_NESTING
from tests.helpers import raw_request

_PEERS = {
    "mcp_servers": [{"name": "files", "tools": [{"name": "read", "results": [{"text": "ok"}]}]}],
    "a2a_agents": [{"name": "helper", "responses": [{"text": "ok"}]}],
}


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def _call(route: str, depth: int) -> bytes:
    if route == "/mcp/files":
        params = {"name": "read", "arguments": _nested(depth)}
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    part = {"kind": "data", "data": _nested(depth)}
    message = {"role": "user", "parts": [part], "messageId": "m1", "kind": "message"}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    ).encode()


@pytest.mark.parametrize("route", ["/mcp/files", "/a2a/helper"])
@pytest.mark.parametrize("depth", [250, 300])
def test_deep_json_is_an_invalid_request_and_the_journal_stays_readable(
    llmts_session: SessionClient, route: str, depth: int
) -> None:
    """orjson reads ~1,024 levels but writes ~254: a message nested 250 deep used to be answered and then
    break ``GET /admin-api/requests`` for the session; 300 deep answered 500."""
    llmts_session.configure(_PEERS)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    answer = raw_request(llmts_session.provider_base, "POST", route, _call(route, depth), headers=headers)
    assert answer.status < 500, answer.body[:300]
    assert answer.json()["error"]["code"] == -32600
    assert str(MAX_NESTING) in answer.json()["error"]["message"]
    entries = llmts_session.requests()  # the journal answers (it was a 500 before)
    assert entries and all(entry["completed"] for entry in entries)
