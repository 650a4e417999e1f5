"""Property-based fuzzing of the A2A routes (docs/a2a.md, docs/contributing.md "Fuzzing and soak"):
generated JSON-RPC bodies of both wires, paths (also behind ``/sessions/{id}``), headers and methods never
get a 5xx, always get a JSON-RPC answer (or the control envelope off the ``/a2a/`` tree), and never put a
traceback or a client-written line in the server log."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import strategies as st

from llmts.peers.jsonrpc import MAX_NESTING
from tests.fuzz.harness import (
    BOUNDED,
    CONTROL_KEY,
    DEEP,
    DEEP_TIMEOUT,
    Answer,
    FuzzServer,
    assert_envelope,
    family_of,
    fuzz_server,
    survive,
)
from tests.fuzz.strategies import bodies, headers, methods, mutate, node_paths, routed_paths, session_prefixed
from tests.fuzz.test_fuzz_providers import _PREFIXES as PROVIDER_PREFIXES

__all__ = ["fuzz_server"]

_SESSIONS = ["default", "nope"]
# Where a target that is not A2A's lands, and whose envelope answers it (as in test_fuzz_mcp.py).
_OTHER_PREFIXES = {"/mcp": "mcp", **PROVIDER_PREFIXES}
_MESSAGE_V1 = {
    "messageId": "m1",
    "role": "ROLE_USER",
    "parts": [{"text": "hi"}, {"data": {"k": 1}}],
    "contextId": "c",
}
_MESSAGE_V03 = {
    "kind": "message",
    "messageId": "m1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}
_PARAMS: dict[str, dict[str, Any]] = {
    "SendMessage": {"message": _MESSAGE_V1, "configuration": {"returnImmediately": True, "historyLength": 2}},
    "SendStreamingMessage": {"message": {**_MESSAGE_V1, "taskId": "task-x"}},
    "GetTask": {"id": "task-x", "historyLength": 1},
    "ListTasks": {
        "contextId": "c",
        "status": "TASK_STATE_WORKING",
        "pageSize": 2,
        "pageToken": "3",
        "statusTimestampAfter": "2026-01-01T00:00:00Z",
    },
    "CancelTask": {"id": "task-x"},
    "SubscribeToTask": {"id": "task-x"},
    "CreateTaskPushNotificationConfig": {
        "taskId": "task-x",
        "id": "c1",
        "url": "http://h/cb",
        "authentication": {"scheme": "Bearer"},
    },
    "GetTaskPushNotificationConfig": {"taskId": "task-x", "id": "c1"},
    "ListTaskPushNotificationConfigs": {"taskId": "task-x"},
    "DeleteTaskPushNotificationConfig": {"taskId": "task-x", "id": "c1"},
    "GetExtendedAgentCard": {},
    "message/send": {
        "message": _MESSAGE_V03,
        "configuration": {"blocking": False, "acceptedOutputModes": []},
    },
    "message/stream": {
        "message": {**_MESSAGE_V03, "parts": [{"kind": "file", "file": {"uri": "u", "mimeType": "t"}}]}
    },
    "tasks/get": {"id": "task-x"},
    "tasks/cancel": {"id": "task-x"},
    "tasks/resubscribe": {"id": "task-x"},
    "tasks/pushNotificationConfig/set": {
        "taskId": "task-x",
        "pushNotificationConfig": {"url": "http://h", "authentication": {"schemes": ["Bearer"]}},
    },
    "tasks/pushNotificationConfig/get": {"id": "task-x", "pushNotificationConfigId": "c1"},
    "tasks/pushNotificationConfig/list": {"id": "task-x"},
    "tasks/pushNotificationConfig/delete": {"id": "task-x", "pushNotificationConfigId": "c1"},
    "agent/getAuthenticatedExtendedCard": {},
}


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


# Found by review: ``"²".isdigit()`` is true but ``int("²")`` raises (a 500), and ``int("٣")`` is 3.
_UNICODE_DIGITS = ("²", "٣", "\uff11", "-²", "1²")  # \uff11: a full-width 1
# A data part as deep as a message may nest (docs/a2a.md "Limits") and one level deeper.
_DEPTH_INSIDE_DATA = MAX_NESTING - 5  # the request, params, message, parts, the part
_EXTRA: list[tuple[str, dict[str, Any]]] = [
    *(("GetTask", {"id": "task-x", "historyLength": digits}) for digits in _UNICODE_DIGITS),
    *(("ListTasks", {"pageToken": digits, "historyLength": digits}) for digits in _UNICODE_DIGITS),
    ("ListTasks", {"pageSize": "٣"}),
    ("ListTasks", {"pageSize": 0}),
    ("SendMessage", {"message": _MESSAGE_V1, "configuration": {"historyLength": "²"}}),
    ("message/send", {"message": _MESSAGE_V03, "configuration": {"historyLength": "٣"}}),
    *(
        (
            "message/send",
            {"message": {**_MESSAGE_V03, "parts": [{"kind": "data", "data": _nested(depth)}]}},
        )
        for depth in (_DEPTH_INSIDE_DATA, _DEPTH_INSIDE_DATA + 1)
    ),
]
SEEDS = [
    {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
    for method, params in [*_PARAMS.items(), *_EXTRA]
]
_RULES = [
    "/a2a/<agent>",
    "/a2a/<agent>",
    "/a2a/<agent>",
    "/a2a/<agent>/.well-known/agent-card.json",
    "/a2a/<agent>/<x>",
]
_ARGUMENTS = {"agent": ["helper", "helper", "helper", "nobody"], "x": ["x", ".well-known"]}


@pytest.fixture(scope="module", autouse=True)
def _agent(fuzz_server: FuzzServer) -> None:
    """The default session's agent, whose script cycles through every kind of answer."""
    responses = [
        {"text": "fuzzed"},
        {"task": {"states": ["submitted", "input-required"], "message": "more?"}},
        {"task": {"artifacts": [{"text": "a"}, {"data": {"k": 1}}], "message": "done"}},
        {"task": {"states": ["working"]}},
        {"error": {"code": -32001, "message": "scripted"}},
    ]
    agent = {
        "name": "helper",
        "responses": responses,
        "terminal_policy": "restart",
        "push_notifications": True,
    }
    fuzz_server.server.default_session.configure({"a2a_agents": [agent]})


def _family() -> st.SearchStrategy[tuple[str, str, dict[str, str], bytes]]:
    return st.tuples(
        methods(("POST", "POST", "GET")),
        session_prefixed(routed_paths(_RULES, _ARGUMENTS), _SESSIONS),
        headers(_SESSIONS, []),
        bodies(SEEDS),
    )


def _in_a2a(target: str) -> bool:
    path = unquote(target.split("?", 1)[0], encoding="latin-1")
    if path.startswith("/sessions/"):
        path = "/" + path[len("/sessions/") :].partition("/")[2]
    return path.startswith("/a2a/")


def _assert_json_rpc(answer: Answer, method: str) -> None:
    assert answer.status < 500, (answer.status, answer.body[:500])
    if method == "HEAD":
        return
    if answer.headers.get("content-type") == "text/event-stream":
        assert answer.status == 200
        events = [
            json.loads(line[len(b"data: ") :])
            for line in answer.body.split(b"\n")
            if line.startswith(b"data: ")
        ]
        assert events and all(event.get("jsonrpc") == "2.0" for event in events), answer.body[:500]
        return
    body = json.loads(answer.body)
    assert isinstance(body, dict), body
    error = body.get("error")
    if isinstance(error, dict) and error.get("code") == "malformed_http_request":
        return assert_envelope(answer, "control", method)  # the HTTP server's own answer
    if answer.status == 200 and "jsonrpc" not in body:
        assert "supportedInterfaces" in body, body  # the card
        return None
    assert body.get("jsonrpc") == "2.0", body
    if answer.status >= 400 or error is not None:
        assert isinstance(error, dict) and isinstance(error.get("code"), int), body
        assert isinstance(error.get("message"), str) and error["message"], body
    return None


def _check(server: FuzzServer, request: tuple[str, str, dict[str, str], bytes]) -> None:
    method, target, request_headers, body = request
    answer = server.send(method, target, request_headers, body)
    lines = server.new_log_lines()
    try:
        if _in_a2a(target):
            _assert_json_rpc(answer, method)
        else:  # a hostile session id can hide another route (``/sessions/%2Fgemini/a2a/x``: Gemini's)
            assert_envelope(answer, family_of(target, _OTHER_PREFIXES), method)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\nserver log:\n" + "\n".join(lines)) from None
    server.assert_lines_clean(lines)


def _assert_journal_readable(server: FuzzServer) -> None:
    """What the fuzzed requests left in the default session's journal can still be listed (a message
    orjson read but could not write back once broke this listing)."""
    listing = server.send(
        "GET", "/admin-api/requests?provider=a2a", {"Authorization": f"Bearer {CONTROL_KEY}"}
    )
    assert listing.status == 200, listing.body[:500]
    assert isinstance(listing.json(), list)


def test_the_seeds_are_answered_without_a_server_error(fuzz_server: FuzzServer) -> None:
    for seed in SEEDS:
        _check(fuzz_server, ("POST", "/a2a/helper", {}, json.dumps(seed).encode()))
    _assert_journal_readable(fuzz_server)


def test_a2a_routes_survive_hostile_requests(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _family(), lambda request: _check(fuzz_server, request), BOUNDED, "a2a")
    _assert_journal_readable(fuzz_server)


def test_every_param_node_replaced_by_a_hostile_value(fuzz_server: FuzzServer) -> None:
    """Each node of each seed becomes an object, an array, null, a number and a string in turn."""
    for seed in SEEDS:
        for node in node_paths(seed):
            for value in ({}, [], None, 1.5, "x", True, -1):
                body = json.dumps(mutate(seed, node, "replace", value)).encode()
                _check(fuzz_server, ("POST", "/a2a/helper", {}, body))
    _assert_journal_readable(fuzz_server)


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_a2a_routes_survive_hostile_requests_deep(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _family(), lambda request: _check(fuzz_server, request), DEEP, "a2a")
    _assert_journal_readable(fuzz_server)
