"""An agent's requests against the session's lifecycle and its bounds (docs/a2a.md, "Delays and stream
faults" and "Limits"): a request is answered from the configuration in force once its body has arrived,
a reset, configure or delete after that supersedes it (HTTP 200, -32603, as the SDKs read JSON-RPC
errors), a client leaving during a delay is journaled, and one task never holds more than the agent's
task bytes."""

from __future__ import annotations

import concurrent.futures
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from llmts import ConfigBuilder, SessionClient
from llmts.peers.a2a import state as state_module
from llmts.server import app as app_module
from llmts.server.peers import a2a_http
from tests.helpers import post_across
from tests.peers.a2a.a2a_helpers import rpc, rpc_events, v1_message

_SUPERSEDED = {"code": "llm_test_server_request_superseded"}


def _wait_for(condition: Callable[[], Any], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _body(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def _while_the_body_arrives(session: SessionClient, body: bytes, meanwhile: Callable[[], None]) -> Any:
    """POST ``body`` to the agent in two halves, doing ``meanwhile`` between them, and return the decoded
    answer."""
    response = post_across(session.provider_base, "/a2a/helper", body, meanwhile)
    assert response.status == 200
    return response.json()


def test_a_configure_while_the_body_arrives_is_answered_from_the_new_configuration(
    llmts_session: SessionClient,
) -> None:
    """The state used to be taken before the body was read: the old script answered, its task landed in
    the state the configure dropped, and GetTask then said -32001 for the id the client was just given."""
    llmts_session.configure(ConfigBuilder().a2a_agent("helper").text("old script").build())
    new = ConfigBuilder().a2a_agent("helper").task("submitted", "working", message="new script").build()
    answer = _while_the_body_arrives(
        llmts_session,
        _body("SendMessage", {"message": v1_message("hi")}),
        lambda: llmts_session.configure(new),
    )
    task = answer["result"]["task"]
    assert task["status"]["message"]["parts"] == [{"text": "new script"}]
    got = rpc(llmts_session, "helper", "GetTask", {"id": task["id"]}).json()
    assert got["result"]["id"] == task["id"] and got["result"]["status"]["state"] == "TASK_STATE_WORKING"

    # A reset as well: the task is kept by the state the reset left in force.
    llmts_session.configure(new)
    answer = _while_the_body_arrives(
        llmts_session, _body("SendMessage", {"message": v1_message("again")}), llmts_session.reset
    )
    task_id = answer["result"]["task"]["id"]
    assert rpc(llmts_session, "helper", "GetTask", {"id": task_id}).json()["result"]["id"] == task_id


def test_a_reset_during_a_delay_is_superseded_and_a_client_leaving_is_journaled(
    llmts_session: SessionClient,
) -> None:
    llmts_session.configure(
        ConfigBuilder()
        .a2a_agent("helper")
        .text("slow", delay_ms=3000)
        .task("submitted", "working", "completed", delay_ms=3000)
        .build()
    )
    for method in ("SendMessage", "SendStreamingMessage"):
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = pool.submit(rpc, llmts_session, "helper", method, {"message": v1_message("x")})
            _wait_for(lambda: llmts_session.requests(provider="a2a"))
            llmts_session.reset()
            superseded = pending.result(timeout=10)
        assert time.monotonic() - started < 2.5
        # As the SDKs read a JSON-RPC error (HTTP 200) and as the MCP servers answer it.
        if method == "SendStreamingMessage":
            (error,) = (event["error"] for event in rpc_events(superseded))
        else:
            assert superseded.status == 200
            error = superseded.json()["error"]
        assert error["code"] == -32603 and error["data"] == _SUPERSEDED
        assert "reset, reconfigured or deleted" in error["message"]
    # A client that leaves during the delay: the wait ends, the entry says so.
    parts = urlsplit(llmts_session.provider_base)
    body = _body("SendMessage", {"message": v1_message("y")})
    head = f"POST {parts.path}/a2a/helper HTTP/1.1\r\nHost: {parts.netloc}\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        _wait_for(lambda: llmts_session.requests(provider="a2a"))
    _wait_for(lambda: llmts_session.requests(provider="a2a", completed=True))
    (entry,) = llmts_session.requests(provider="a2a")
    assert (
        entry["status"] == 499 and entry["transport_outcome"] == "client_gone" and entry["success"] is False
    )
    assert entry["completed_monotonic_seconds"] - entry["started_monotonic_seconds"] < 2.5


@pytest.fixture
def in_process() -> Iterator[tuple[Client, Any]]:
    """The app in this process (no gunicorn): a test can then act at an exact point of a request."""
    app = app_module.create_app()
    yield Client(app), app.registry.get("default")


def test_an_answer_decided_from_a_closed_state_is_superseded(
    in_process: tuple[Client, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reset between taking the agent's state and writing the answer: the task went into a state
    nobody reads any more, so the client must not be given its id as if it were kept."""
    client, session = in_process
    config = {"a2a_agents": [{"name": "helper", "responses": [{"task": {"states": ["working"]}}]}]}
    assert client.post("/admin-api/configure", json=config).status_code == 200
    decide = a2a_http.answer

    def reset_after_deciding(state: Any, call: Any) -> Any:
        decided = decide(state, call)
        session.reset()
        return decided

    monkeypatch.setattr(a2a_http, "answer", reset_after_deciding)
    sent = client.post("/a2a/helper", data=_body("SendMessage", {"message": v1_message("x")}))
    assert sent.status_code == 200
    assert sent.json["error"]["code"] == -32603 and sent.json["error"]["data"] == _SUPERSEDED
    monkeypatch.setattr(a2a_http, "answer", decide)
    # The reset script answers afresh: its one response was not consumed by the superseded request.
    again = client.post("/a2a/helper", data=_body("SendMessage", {"message": v1_message("x")}))
    assert again.json["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING"


def test_one_task_holds_at_most_the_agents_task_bytes(llmts_session: SessionClient) -> None:
    """The task being answered was never evicted, so one task kept 64 messages of any size; now the
    message that would take it over the limit is refused and changes nothing."""
    llmts_session.configure(
        {
            "a2a_agents": [
                {
                    "name": "helper",
                    "terminal_policy": "repeat_last_response",
                    "responses": [{"task": {"states": ["input-required"]}}],
                }
            ]
        }
    )
    task = rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("start")}).json()["result"]
    task_id = task["task"]["id"]
    big = "x" * 1_000_000
    sent = 1
    while True:
        answer = rpc(llmts_session, "helper", "SendMessage", {"message": v1_message(big, taskId=task_id)})
        if "error" in answer.json():
            break
        sent += 1
        assert sent <= 9
    # 8 MiB hold eight messages of a million bytes (and the first one): the ninth is refused.
    assert sent == 9
    error = answer.json()["error"]
    assert error["code"] == -32602 and f"task {task_id} would hold" in error["message"]
    assert str(state_module.TASK_BYTES) in error["message"]
    got = rpc(llmts_session, "helper", "GetTask", {"id": task_id, "historyLength": 1}).json()["result"]
    assert got["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    listed = rpc(llmts_session, "helper", "ListTasks", {}).json()["result"]
    assert listed["totalSize"] == 1 and len(listed["tasks"][0]["history"]) == sent
    # A smaller message still fits.
    small = rpc(llmts_session, "helper", "SendMessage", {"message": v1_message("ok", taskId=task_id)}).json()
    assert small["result"]["task"]["id"] == task_id
