"""Property-based fuzzing of the MCP routes (``/mcp/{name}``, the legacy ``/mcp/{name}/messages``) against
one real server (docs/contributing.md, "Fuzzing and soak"): mutated JSON-RPC messages, hostile headers
(session ids, protocol versions, Accept, Content-Type) and methods never get a 5xx; every error is a
JSON-RPC error object, and nothing client-written reaches the server log. ``GET /mcp/{name}/sse`` is
left out: it opens a stream that stays open (docs/mcp.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.fuzz.harness import (
    BOUNDED,
    CONTROL_KEY,
    DEEP,
    DEEP_TIMEOUT,
    FuzzServer,
    family_of,
    fuzz_server,
    survive,
)
from tests.fuzz.strategies import METHODS, bodies, headers, session_prefixed
from tests.fuzz.test_fuzz_providers import _PREFIXES as PROVIDER_PREFIXES

__all__ = ["fuzz_server"]

_CONFIG = {
    "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "fuzzed"}]}],
    "mcp_servers": [
        {
            "name": "s",
            "page_size": 1,
            "tools": [
                {
                    "name": "t",
                    "terminal_policy": "repeat_last_response",
                    "results": [{"text": "r", "progress": [{"progress": 1}]}],
                },
                {"name": "u", "results": [{"error": {"code": -32000, "message": "m"}}]},
            ],
            "resources": [{"uri": "file:///r", "name": "r", "text": "R"}],
            "prompts": [
                {
                    "name": "p",
                    "arguments": [{"name": "a", "required": True}],
                    "messages": [{"role": "user", "text": "{a}"}],
                }
            ],
        }
    ],
}
_META = {"progressToken": 1}
_SEEDS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "f", "version": "1"},
        },
    },
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"q": 1}, "_meta": _META},
    },
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "1"}},
    {"jsonrpc": "2.0", "id": "x", "method": "resources/read", "params": {"uri": "file:///r"}},
    {"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "p", "arguments": {"a": "b"}}},
    {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "completion/complete",
        "params": {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
    },
    {"jsonrpc": "2.0", "id": 6, "method": "server/discover", "params": {"_meta": {}}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
    {"jsonrpc": "2.0", "id": "llmts-1", "result": {"action": "accept"}},
]


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


# Inputs that once reached a 500 (docs/mcp.md): digits ``int`` reads but no client should send in a cursor
# (or that ``isdigit`` admits and ``int`` refuses), a cancelled ``requestId`` that is not a JSON-RPC id, and
# JSON nested deeper than ``MAX_NESTING``. Each is also sent as it is before the fuzz run.
_REGRESSIONS = [
    {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"cursor": "²"}},
    {"jsonrpc": "2.0", "id": 8, "method": "prompts/list", "params": {"cursor": "\u0661"}},
    {"jsonrpc": "2.0", "id": 9, "method": "resources/list", "params": {"cursor": "1\u00b9"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"a": [1]}}},
    {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "t", "arguments": _nested(70)}},
]
_SEEDS += _REGRESSIONS
_SESSIONS = ["default", "nope"]
_ROUTES = [
    "/mcp/s",
    "/mcp/s",
    "/mcp/s",
    "/mcp/s/messages",
    "/mcp/s/messages?session_id=0",
    "/mcp/nope",
    "/mcp/",
    "/mcp/s/sse",
]
# Filled with a live client session's id once the server is configured, so most requests get past it.
_LIVE: list[str] = []
_HOSTILE_HEADERS = {
    "Mcp-Session-Id": st.sampled_from(["", "0" * 32]) | st.text(max_size=40),
    "Mcp-Protocol-Version": st.sampled_from(["2024-11-05", "2026-07-28", "1999-01-01", ""]),
    "Accept": st.sampled_from(["text/event-stream", "application/json", "text/html", "*/*"]),
    "Content-Type": st.sampled_from(["application/json; charset=utf-8", "text/plain", ""]),
    "Mcp-Method": st.sampled_from(["tools/call", "server/discover", "x"]),
}


@st.composite
def _mcp_headers(draw: st.DrawFn) -> dict[str, str]:
    """A real client's headers (a live session), each one dropped or made hostile a quarter of the time."""
    chosen = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": _LIVE[0],
        "Mcp-Protocol-Version": "2025-11-25",
    }
    for name, hostile in _HOSTILE_HEADERS.items():
        if draw(st.integers(0, 3)) == 0:
            if draw(st.booleans()):
                chosen.pop(name, None)
            else:
                chosen[name] = draw(hostile)
    return chosen


@st.composite
def _request(draw: st.DrawFn) -> tuple[str, str, dict[str, str], bytes]:
    route = draw(st.sampled_from(_ROUTES))
    # A GET of the legacy stream (or of /mcp/s with a live session) stays open: not for a fuzzer.
    usual = ["POST", "POST", "POST", "DELETE"] + ([] if route.endswith("/sse") else ["GET"])
    method = draw(st.sampled_from(usual) | st.sampled_from([m for m in METHODS if m != "GET"]))
    path = draw(session_prefixed(st.just(route), _SESSIONS))
    chosen = draw(_mcp_headers())
    if method == "GET" and chosen.get("Mcp-Session-Id") in _LIVE:
        chosen.pop("Mcp-Session-Id")  # a live session's GET stream stays open: not for a fuzzer
    extra = draw(headers(_SESSIONS, [])) if draw(st.integers(0, 3)) == 0 else {}
    return method, path, {**extra, **chosen}, draw(bodies(_SEEDS))


# A hostile session id can hide the route (``/sessions/x%2Fbedrock/mcp/s`` routes ``/bedrock/mcp/s``): the
# provider's envelope then applies, as in test_fuzz_providers.py.
_PREFIXES = {"/mcp": "mcp", "/a2a": "a2a", **PROVIDER_PREFIXES}


def _open_session(server: FuzzServer) -> None:
    initialize = json.dumps(_SEEDS[0]).encode()
    answer = server.send("POST", "/mcp/s", {"Content-Type": "application/json"}, initialize)
    _LIVE[:] = [answer.headers["mcp-session-id"]]


def _configured(server: FuzzServer) -> FuzzServer:
    server.server.default_session.configure(_CONFIG)
    _open_session(server)
    return server


def _check(server: FuzzServer, request: tuple[str, str, dict[str, str], bytes]) -> None:
    method, target, request_headers, body = request
    answer = server.send(method, target, request_headers, body)
    server.check(answer, family_of(target, _PREFIXES), method)
    if answer.status == 204 or (answer.status == 404 and request_headers.get("Mcp-Session-Id") in _LIVE):
        _open_session(server)  # the live session was deleted or expired: the next requests get a new one


def _live_headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": _LIVE[0],
        "Mcp-Protocol-Version": "2025-11-25",
    }


def _journal_still_answers(server: FuzzServer) -> None:
    """The fuzzed session's journal still serializes (a deep or odd body once broke its listing), and no
    MCP entry stayed in progress."""
    answer = server.send(
        "GET", "/admin-api/requests?provider=mcp", {"Authorization": f"Bearer {CONTROL_KEY}"}
    )
    server.check(answer, "control", "GET")
    assert answer.status == 200, answer.body[:500]
    assert all(entry["completed_at"] is not None for entry in answer.json()), answer.body[:2000]


def test_mcp_routes_survive_hostile_requests(fuzz_server: FuzzServer) -> None:
    server = _configured(fuzz_server)
    for seed in _REGRESSIONS:
        _check(server, ("POST", "/mcp/s", _live_headers(), json.dumps(seed).encode()))
    deep = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {"name": "t", "arguments": _nested(300)},
    }
    _check(server, ("POST", "/mcp/s", _live_headers(), json.dumps(deep).encode()))
    survive(server, _request(), lambda r: _check(server, r), BOUNDED, "mcp")
    _journal_still_answers(server)


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_mcp_routes_survive_hostile_requests_deep(fuzz_server: FuzzServer) -> None:
    server = _configured(fuzz_server)
    survive(server, _request(), lambda r: _check(server, r), DEEP, "mcp")
    _journal_still_answers(server)
