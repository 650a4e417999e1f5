"""The A2A routes over raw HTTP (docs/a2a.md): the card, both JSON-RPC wires in the exact shapes the
official clients send, every answer validated by the SDK's own types (the 0.3 pydantic models, which
a2a-sdk 1.x keeps in ``a2a.compat.v0_3.types`` and 0.3 ships as ``a2a.types``; and, with 1.x, the 1.0
protobuf messages parsed strictly, so a misspelt key fails instead of being dropped), bad input, the
journal and determinism. Runs in the default suite whichever a2a-sdk major is installed."""

from __future__ import annotations

import http.client
import importlib
import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from tests.helpers import raw_request
from tests.peers.a2a.a2a_helpers import SDK_MAJOR, needs_sdk1, rpc, rpc_events, v03_message, v1_message

CARD = "/.well-known/agent-card.json"
_SCRIPT = [
    {"text": "hello back"},
    {
        "task": {
            "states": ["submitted", "working", "completed"],
            "artifacts": [{"name": "report", "text": "all good"}, {"name": "numbers", "data": {"k": 1.5}}],
            "message": "done",
        }
    },
    {"task": {"states": ["submitted", "working"]}},
]


def _types03() -> Any:
    """The 0.3 pydantic models the 0.3 client validates with."""
    name = "a2a.compat.v0_3.types" if SDK_MAJOR == 1 else "a2a.types"
    return importlib.import_module(name)


def _configure(session: SessionClient, **agent: Any) -> None:
    session.configure({"a2a_agents": [{"name": "helper", "responses": _SCRIPT, **agent}]})


def test_the_card_is_accepted_by_both_majors(llmts_session: SessionClient) -> None:
    _configure(llmts_session, skills=[{"id": "search", "name": "Search", "tags": ["web"]}])
    response = raw_request(llmts_session.provider_base, "GET", "/a2a/helper" + CARD)
    assert response.status == 200 and response.headers["content-type"] == "application/json"
    card = response.json()
    endpoint = llmts_session.provider_base + "/a2a/helper"
    assert card["url"] == endpoint and "/sessions/" in endpoint
    assert [(i["url"], i["protocolVersion"]) for i in card["supportedInterfaces"]] == [
        (endpoint, "1.0"),
        (endpoint, "0.3"),
    ]
    parsed = _types03().AgentCard.model_validate(card)
    assert parsed.url == endpoint and parsed.capabilities.streaming is True
    assert parsed.skills[0].id == "search"
    if SDK_MAJOR == 1:
        from a2a.client.card_resolver import parse_agent_card

        resolved = parse_agent_card(dict(card))
        assert resolved.supported_interfaces[0].protocol_version == "1.0"
        assert not resolved.capabilities.push_notifications


def test_the_03_wire_in_the_shapes_the_03_client_validates(llmts_session: SessionClient) -> None:
    _configure(llmts_session, push_notifications=True)
    types = _types03()
    sent = rpc(llmts_session, "helper", "message/send", {"message": v03_message("hi")})
    message = types.SendMessageResponse.model_validate(sent.json()).root.result
    assert isinstance(message, types.Message) and message.parts[0].root.text == "hello back"

    events = rpc_events(rpc(llmts_session, "helper", "message/stream", {"message": v03_message("go")}))
    parsed = [types.SendStreamingMessageResponse.model_validate(event).root.result for event in events]
    assert [type(item).__name__ for item in parsed] == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    task_id, context_id = parsed[0].id, parsed[0].context_id
    assert all(item.context_id == context_id for item in parsed)
    assert parsed[-1].final is True and parsed[-1].status.state == types.TaskState.completed
    assert parsed[-1].status.message.parts[0].root.text == "done"
    assert parsed[3].artifact.parts[0].root.data == {"k": 1.5}

    got = types.GetTaskResponse.model_validate(
        rpc(llmts_session, "helper", "tasks/get", {"id": task_id}).json()
    )
    assert got.root.result.status.state == types.TaskState.completed and len(got.root.result.artifacts) == 2
    refused = types.CancelTaskResponse.model_validate(
        rpc(llmts_session, "helper", "tasks/cancel", {"id": task_id}).json()
    )
    assert refused.root.error.code == -32002

    working = rpc(llmts_session, "helper", "message/send", {"message": v03_message("wait")}).json()["result"]
    resubscribed = rpc_events(rpc(llmts_session, "helper", "tasks/resubscribe", {"id": working["id"]}))
    assert (
        types.SendStreamingMessageResponse.model_validate(resubscribed[0]).root.result.status.state
        == "working"
    )
    config = {
        "taskId": working["id"],
        "pushNotificationConfig": {"id": "cfg1", "url": "http://127.0.0.1:9/cb", "token": "tok"},
    }
    stored = rpc(llmts_session, "helper", "tasks/pushNotificationConfig/set", config).json()
    assert (
        types.SetTaskPushNotificationConfigResponse.model_validate(
            stored
        ).root.result.push_notification_config.id
        == "cfg1"
    )
    fetched = rpc(
        llmts_session,
        "helper",
        "tasks/pushNotificationConfig/get",
        {"id": working["id"], "pushNotificationConfigId": "cfg1"},
    )
    assert (
        types.GetTaskPushNotificationConfigResponse.model_validate(
            fetched.json()
        ).root.result.push_notification_config.token
        == "tok"
    )
    listed = rpc(llmts_session, "helper", "tasks/pushNotificationConfig/list", {"id": working["id"]}).json()
    assert len(types.ListTaskPushNotificationConfigResponse.model_validate(listed).root.result) == 1
    deleted = rpc(
        llmts_session,
        "helper",
        "tasks/pushNotificationConfig/delete",
        {"id": working["id"], "pushNotificationConfigId": "cfg1"},
    )
    assert types.DeleteTaskPushNotificationConfigResponse.model_validate(deleted.json()).root.result is None
    canceled = rpc(llmts_session, "helper", "tasks/cancel", {"id": working["id"]}).json()
    assert (
        types.CancelTaskResponse.model_validate(canceled).root.result.status.state == types.TaskState.canceled
    )

    # 0.3 sends the extended-card request without params; a scripted agent has none.
    extended = rpc(llmts_session, "helper", "agent/getAuthenticatedExtendedCard").json()
    assert extended["error"]["code"] == -32007


@needs_sdk1
def test_the_10_wire_parses_strictly_as_protobuf(llmts_session: SessionClient) -> None:
    from a2a import types
    from google.protobuf.json_format import ParseDict

    def strict(value: Any, message: Any) -> Any:
        return ParseDict(value, message)  # unknown keys fail: a misspelling cannot pass silently

    _configure(llmts_session, push_notifications=True)
    sent = rpc(
        llmts_session, "helper", "SendMessage", {"message": v1_message("hi"), "configuration": {}}
    ).json()
    assert strict(sent["result"], types.SendMessageResponse()).message.parts[0].text == "hello back"
    events = rpc_events(rpc(llmts_session, "helper", "SendStreamingMessage", {"message": v1_message("go")}))
    stream = [strict(event["result"], types.StreamResponse()) for event in events]
    assert [item.WhichOneof("payload") for item in stream] == [
        "task",
        "status_update",
        "artifact_update",
        "artifact_update",
        "status_update",
    ]
    assert stream[-1].status_update.status.state == types.TaskState.TASK_STATE_COMPLETED
    task_id = stream[0].task.id
    got = rpc(llmts_session, "helper", "GetTask", {"id": task_id, "historyLength": 1}).json()["result"]
    assert strict(got, types.Task()).artifacts[1].parts[0].data.struct_value["k"] == 1.5
    working = rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("w")}).json()["result"][
        "task"
    ]
    listed = rpc(llmts_session, "helper", "ListTasks", {"pageSize": 1}).json()["result"]
    page = strict(listed, types.ListTasksResponse())
    assert (
        [task.id for task in page.tasks] == [working["id"]] and page.total_size == 2 and page.next_page_token
    )
    config = {
        "taskId": working["id"],
        "id": "c1",
        "url": "http://127.0.0.1:9/cb",
        "authentication": {"scheme": "Bearer", "credentials": "s"},
    }
    created = rpc(llmts_session, "helper", "CreateTaskPushNotificationConfig", config).json()["result"]
    assert strict(created, types.TaskPushNotificationConfig()).authentication.scheme == "Bearer"
    configs = rpc(
        llmts_session, "helper", "ListTaskPushNotificationConfigs", {"taskId": working["id"]}
    ).json()["result"]
    assert len(strict(configs, types.ListTaskPushNotificationConfigsResponse()).configs) == 1
    deleted = rpc(
        llmts_session, "helper", "DeleteTaskPushNotificationConfig", {"taskId": working["id"], "id": "c1"}
    ).json()
    assert "result" in deleted and deleted["result"] is None  # 1.x requires the member


@pytest.mark.parametrize(
    ("body", "code", "request_id"),
    [
        (b"{not json", -32700, None),
        (b"[]", -32600, None),
        (b'"text"', -32600, None),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "SendMessage"}', -32600, None),
        (b'{"jsonrpc": "2.0", "method": "SendMessage", "params": {}}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 7, "result": {}}', -32600, 7),
        (b'{"jsonrpc": "2.0", "id": true, "method": "SendMessage"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": "x", "method": "SendMessage", "params": [1]}', -32602, None),
        (b'{"jsonrpc": "2.0", "id": "x", "method": "tasks/unknown"}', -32601, "x"),
        (b'{"jsonrpc": "2.0", "id": "x", "method": "SendMessage", "params": {"message": 1}}', -32602, "x"),
        (
            b'{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "t", "historyLength": -1}}',
            -32602,
            3,
        ),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": "missing"}}', -32001, 4),
    ],
)
def test_bad_json_rpc_gets_the_protocol_error_with_http_200(
    llmts_session: SessionClient, body: bytes, code: int, request_id: Any
) -> None:
    _configure(llmts_session)
    response = raw_request(llmts_session.provider_base, "POST", "/a2a/helper", body)
    assert response.status == 200 and response.headers["content-type"] == "application/json"
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id
    assert answer["error"]["code"] == code and answer["error"]["message"]
    (entry,) = llmts_session.requests(provider="a2a")
    assert entry["a2a_agent"] == "helper" and entry["success"] is False and entry["error_code"] == str(code)
    # Nothing was consumed: the first scripted answer is still next.
    sent = rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("hi")}).json()
    assert sent["result"]["message"]["parts"] == [{"text": "hello back"}]


def test_streaming_errors_are_sse_events(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().a2a_agent("helper").error(-32050, "scripted", data={"why": "test"}).build()
    )
    (event,) = rpc_events(rpc(llmts_session, "helper", "message/stream", {"message": v03_message("x")}))
    assert event == {
        "jsonrpc": "2.0",
        "id": "req-1",
        "error": {"code": -32050, "message": "scripted", "data": {"why": "test"}},
    }
    (unknown,) = rpc_events(rpc(llmts_session, "helper", "SubscribeToTask", {"id": "nope"}))
    assert unknown["error"]["code"] == -32001
    entries = llmts_session.requests(provider="a2a", order="asc")
    assert [(e["operation"], e["streaming"], e["error_code"], e["response_index"]) for e in entries] == [
        ("message/stream", True, "-32050", 0),
        ("SubscribeToTask", True, "-32001", None),
    ]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", "", "POST"),
        ("PUT", "", "POST"),
        ("DELETE", "/", "POST"),
        ("POST", CARD, "GET"),
        ("HEAD", CARD, "GET"),
    ],
)
def test_wrong_http_methods_get_405(
    llmts_session: SessionClient, method: str, path: str, allowed: str
) -> None:
    _configure(llmts_session)
    body = None if method == "HEAD" else b"{}"
    response = raw_request(llmts_session.provider_base, method, "/a2a/helper" + path, body)
    assert response.status == 405 and response.headers["allow"] == allowed
    if method != "HEAD":
        assert response.json()["error"]["data"] == {"code": "method_not_allowed"}
    assert llmts_session.requests(provider="a2a") == []


def test_unknown_agents_sessions_and_routes_get_404(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": v1_message("x")}}
    for path in ("/a2a/nobody", "/a2a/nobody" + CARD, "/a2a/helper/extra", "/a2a/"):
        response = raw_request(llmts_session.provider_base, "POST", path, body)
        assert response.status == 404, path
        assert response.json()["error"]["data"]["code"] == "not_found"
    root = urlsplit(llmts_session.provider_base)
    lost = raw_request(
        f"{root.scheme}://{root.netloc}/sessions/ses_0000000000000000/a2a/helper", "POST", "", body
    )
    assert lost.status == 404 and lost.json()["error"]["data"]["code"] == "llm_test_server_session_not_found"
    assert llmts_session.requests(provider="a2a") == []
    assert rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("x")}).json()["result"][
        "message"
    ]


def test_a_body_over_the_limit_is_413_and_journaled(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    parts = urlsplit(llmts_session.provider_base)
    head = (
        f"POST {parts.path}/a2a/helper HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        "Content-Length: 99999999999\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode())
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 413")
    assert b"connection: close" in rest.lower()
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["error"]["data"] == {"code": "request_too_large"}
    (entry,) = llmts_session.requests(provider="a2a")
    assert (
        entry["status"] == 413 and entry["error_code"] == "request_too_large" and entry["operation"] is None
    )


def test_every_request_is_one_journal_entry(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    raw_request(llmts_session.provider_base, "GET", "/a2a/helper" + CARD)
    rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("first question")})
    rpc_events(rpc(llmts_session, "helper", "message/stream", {"message": v03_message("go")}))
    raw_request(llmts_session.provider_base, "POST", "/a2a/helper", b"{broken")
    entries = llmts_session.requests(a2a_agent="helper", order="asc")
    assert [(e["provider"], e["operation"], e["method"], e["streaming"], e["success"]) for e in entries] == [
        ("a2a", "agent_card", "GET", False, True),
        ("a2a", "SendMessage", "POST", False, True),
        ("a2a", "message/stream", "POST", True, True),
        ("a2a", None, "POST", False, False),
    ]
    assert all(
        e["completed"] and e["path"].endswith("/a2a/helper" + (CARD if i == 0 else ""))
        for i, e in enumerate(entries)
    )
    assert (
        "first question" in entries[1]["request_preview"] and "hello back" in entries[1]["response_preview"]
    )
    assert entries[2]["terminal_marker_observed"] and entries[2]["emitted_content_frames"] == 4
    assert [e["response_index"] for e in entries] == [None, 0, 1, None]
    assert llmts_session.requests(a2a_agent="someone-else") == []
    verdict = llmts_session.verify(
        requests=[
            {
                "name": "asked once",
                "query": {"provider": "a2a", "a2a_agent": "helper", "operation": "SendMessage"},
            },
            {
                "name": "streamed to the end",
                "query": {"a2a_agent": "helper", "operation": "message/stream"},
                "require_streaming_terminal_marker": True,
            },
        ]
    )
    verdict.assert_passed()
    failing = llmts_session.verify(
        requests=[{"name": "never", "query": {"a2a_agent": "helper", "operation": "CancelTask"}}]
    )
    assert not failing.passed


def _task_ids(session: SessionClient) -> list[Any]:
    session.configure(
        ConfigBuilder()
        .determinism("same-seed", fixed_utc="2026-01-01T00:00:00Z")
        .a2a_agent("helper")
        .task("submitted", "completed", message="done")
        .text("bye")
        .build()
    )
    task = rpc(session, "helper", "SendMessage", {"message": v1_message("a")}).json()["result"]["task"]
    reply = rpc(
        session, "helper", "message/send", {"message": v03_message("b", contextId=task["contextId"])}
    ).json()
    return [
        task["id"],
        task["contextId"],
        task["status"],
        reply["result"]["messageId"],
        reply["result"]["contextId"],
    ]


def test_determinism_seeds_ids_and_fixes_timestamps(llmts_server: Any) -> None:
    first, second = llmts_server.create_session(), llmts_server.create_session()
    try:
        ids = _task_ids(first)
        assert ids == _task_ids(second)
        assert ids[2]["timestamp"] == "2026-01-01T00:00:00.000Z" and ids[4] == ids[1]
    finally:
        first.delete()
        second.delete()


def test_connection_faults_drop_the_connection_without_a_traceback(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False)
    session = server.create_session()
    plans = [{"mode": "reset_before_headers"}, {"mode": "empty_response"}]
    session.configure(
        {
            "a2a_agents": [
                {"name": "helper", "responses": [{"text": "never seen", "stream_delivery": p} for p in plans]}
            ]
        }
    )
    for _ in plans:
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            rpc(session, "helper", "SendMessage", {"message": v1_message("x")})
    entries = session.requests(provider="a2a", order="asc")
    assert [
        (e["status"], e["success"], e["stream_delivery_applied"], e["response_index"]) for e in entries
    ] == [
        (None, False, True, 0),
        (None, False, True, 1),
    ]
    assert rpc(session, "helper", "GetTask", {"id": "t"}).json()["error"]["code"] == -32001  # still serving
    assert server.log_path is not None
    log = server.log_path.read_text()
    assert "Traceback" not in log and "unhandled error" not in log


def test_the_pytest_expectations_filter_on_the_agent(llmts_session: SessionClient, llmts_expect: Any) -> None:
    _configure(llmts_session)
    rpc(llmts_session, "helper", "message/send", {"message": v03_message("hi")})
    llmts_expect.request("asked the helper", provider="a2a", a2a_agent="helper", operation="message/send")
    llmts_expect.request(
        "never cancelled", a2a_agent="helper", operation="tasks/cancel", minimum_count=0, maximum_count=0
    )
