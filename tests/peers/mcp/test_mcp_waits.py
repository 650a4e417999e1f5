"""Every way a ``tools/call`` that waits ends early (llmts/server/peers/mcp_streams.py, docs/mcp.md):
``notifications/cancelled`` during its delay, its wait for the client's answer and its delivery plan's
stall; a reset, configure or delete of the llmts session, a DELETE of the client session and a graceful
stop of the server while it waits for the client's answer. Raw HTTP against a real gunicorn+gevent
server."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from tests.helpers import RawResponse
from tests.peers.mcp.support import LATEST, Wire

_ELICIT = {"message": "Name?"}


def _call(call_id: int, name: str = "t") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": {"name": name}}


def _cancel(wire: Wire, session: str, call_id: int) -> None:
    notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call_id}}
    assert wire.post(notice, session).status == 202


def _elicitation_server(session: SessionClient) -> tuple[Wire, str]:
    session.configure(ConfigBuilder().mcp_server("s").tool("t").text("done", elicit=_ELICIT).build())
    wire = Wire(session.provider_base, "s")
    return wire, wire.initialize(capabilities={"elicitation": {}})


def _only_call(session: SessionClient) -> dict[str, Any]:
    (entry,) = session.requests(provider="mcp", operation="tools/call")
    return entry


def test_a_cancel_during_the_delay_ends_the_call(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().mcp_server("s").tool("t").text("late", delay_ms=20_000).build())
    wire = Wire(llmts_session.provider_base, "s")
    session = wire.initialize()
    answers: list[RawResponse] = []
    caller = threading.Thread(target=lambda: answers.append(wire.post(_call(5), session)))
    started = time.monotonic()
    caller.start()
    time.sleep(0.5)
    _cancel(wire, session, 5)
    caller.join(15)
    assert time.monotonic() - started < 10  # far below the 20 s delay
    (answer,) = answers
    assert answer.status == 200 and answer.json()["error"]["data"]["code"] == "mcp_call_cancelled"
    entry = _only_call(llmts_session)
    assert entry["error_code"] == "mcp_call_cancelled" and entry["success"] is False


def test_a_cancel_during_the_elicitation_wait_ends_the_stream(llmts_session: SessionClient) -> None:
    wire, session = _elicitation_server(llmts_session)
    with wire.posting(_call(3), session) as call:
        assert call.next_message()["method"] == "elicitation/create"  # type: ignore[index]
        _cancel(wire, session, 3)
        assert call.next_message() is None  # no result: the call was cancelled
    entry = _only_call(llmts_session)
    assert entry["error_code"] == "mcp_call_cancelled" and entry["transport_outcome"] == "early_end"


@pytest.mark.parametrize("mode", ["stall", "slow_drip"])
def test_a_cancel_ends_a_stalled_or_dripping_answer(llmts_session: SessionClient, mode: str) -> None:
    plan = (
        {"mode": "stall", "delay_ms": 20_000}
        if mode == "stall"
        else {"mode": "slow_drip", "bytes_per_second": 2}
    )
    llmts_session.configure(
        {
            "mcp_servers": [
                {"name": "s", "tools": [{"name": "t", "results": [{"text": "r", "stream_delivery": plan}]}]}
            ]
        }
    )
    wire = Wire(llmts_session.provider_base, "s")
    session = wire.initialize()
    started = time.monotonic()
    with wire.posting(_call(4), session) as call:
        assert call.status == 200 and call.headers["content-type"] == "text/event-stream"
        time.sleep(0.3)
        _cancel(wire, session, 4)
        assert call.next_message(timeout=8) is None  # the stream ended without its result
    assert time.monotonic() - started < 8  # the stall or drip would take 20 s or more
    entry = _only_call(llmts_session)
    assert entry["error_code"] == "mcp_call_cancelled" and entry["success"] is False
    assert entry["terminal_marker_observed"] is False


def _configure_again(session: SessionClient) -> None:
    session.configure(ConfigBuilder().mcp_server("s").tool("t").text("other").build())


@pytest.mark.parametrize(
    "supersede",
    [SessionClient.reset, _configure_again, SessionClient.delete],
    ids=["reset", "configure", "delete"],
)
def test_a_reset_configure_or_delete_during_the_elicitation_wait_supersedes_the_call(
    llmts_session: SessionClient, supersede: Callable[[SessionClient], None]
) -> None:
    wire, session = _elicitation_server(llmts_session)
    with wire.posting(_call(8), session) as call:
        assert call.next_message()["method"] == "elicitation/create"  # type: ignore[index]
        supersede(llmts_session)
        error = call.next_message()
        assert error is not None and error["id"] == 8
        assert error["error"]["data"]["code"] == "llm_test_server_request_superseded"
        assert call.next_message() is None  # (the journal the entry was in was cleared or deleted)


def test_deleting_the_client_session_during_a_call_ends_its_stream(llmts_session: SessionClient) -> None:
    wire, session = _elicitation_server(llmts_session)
    with wire.posting(_call(9), session) as call:
        assert call.next_message()["method"] == "elicitation/create"  # type: ignore[index]
        assert wire.raw("DELETE", {"Mcp-Session-Id": session, "Mcp-Protocol-Version": LATEST}).status == 204
        assert call.next_message() is None
    entry = _only_call(llmts_session)
    assert entry["error_code"] == "mcp_call_ended" and entry["transport_outcome"] == "early_end"
    assert wire.request("ping", session=session).status == 404


def test_a_graceful_stop_during_the_elicitation_wait_answers_the_call(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(extra_args=["--graceful-timeout", "2"])
    wire, session = _elicitation_server(server.create_session())
    with wire.posting(_call(2), session) as call:
        assert call.next_message()["method"] == "elicitation/create"  # type: ignore[index]
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        error = call.next_message(timeout=8)
        assert error is not None and error["id"] == 2
        assert error["error"]["data"]["code"] == "llm_test_server_shutdown"
        assert call.next_message() is None
    assert server.process.wait(10) == 0
