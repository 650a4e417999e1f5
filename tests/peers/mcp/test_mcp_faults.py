"""Faults on tool calls (docs/mcp.md, "Faults"): ``stream_delivery`` on the SSE answer through the
transport, and the protocol-level faults (``wrong_id``, ``notification_flood``, ``session_expired``), on
the wire and as each ``mcp`` major sees them."""

from __future__ import annotations

import time
from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.peers.mcp.support import EXCEPTION_GROUP, MCP_MAJOR, Wire, error_code, events, mcp_error_type, run

pytestmark = pytest.mark.sdk

MCPError = mcp_error_type()
# mcp 1.x waits for a response that never comes until its read timeout (docs/mcp.md, "Faults").
V1_TIMEOUT = 1.0


def _server(session: SessionClient, **result: Any) -> Wire:
    session.configure(
        {"mcp_servers": [{"name": "s", "tools": [{"name": "t", "results": [{"text": "r", **result}]}]}]}
    )
    return Wire(session.provider_base, "s")


def _call(session: SessionClient, timeout: float = V1_TIMEOUT, **options: Any) -> tuple[str, float]:
    """The outcome of one call with the installed SDK, and how long it took (``timeout``: the client's
    read timeout, short where a timeout is the expected outcome)."""

    async def scenario() -> str:
        async with session.mcp_session("s", read_timeout_seconds=timeout, **options) as client:
            try:
                result = await client.call_tool("t", {})
                return "ok " + result.content[0].text
            except MCPError as error:
                return f"error {error_code(error)}"

    started = time.monotonic()
    outcome = run(scenario)
    return outcome, time.monotonic() - started


CUT_SHORT = [
    {"mode": "early_clean_end"},
    {"mode": "abort_connection"},
    {"mode": "stall", "delay_ms": 200},
    {"mode": "truncate_bytes", "cut_bytes": 5},
]


@pytest.mark.parametrize("plan", CUT_SHORT, ids=lambda plan: plan["mode"])
def test_an_answer_cut_short_never_reaches_the_client(
    llmts_session: SessionClient, plan: dict[str, Any]
) -> None:
    _server(llmts_session, progress=[{"progress": 1}], stream_delivery=plan)
    outcome, _ = _call(llmts_session)
    # 2.x fails the call at once (-32000: the stream ended without a response); 1.x waits for its timeout.
    assert outcome == ("error -32000" if MCP_MAJOR >= 2 else "error 408")
    (entry,) = llmts_session.requests(provider="mcp", operation="tools/call")
    assert entry["stream_delivery_applied"] is True and entry["success"] is False
    assert entry["terminal_marker_observed"] is False
    assert entry["transport_outcome"] == ("aborted" if plan["mode"] == "abort_connection" else "early_end")


def test_early_clean_end_on_the_wire(llmts_session: SessionClient) -> None:
    plan = {"mode": "early_clean_end", "after_content_frames": 2}
    wire = _server(llmts_session, progress=[{"progress": 1}, {"progress": 2}], stream_delivery=plan)
    session = wire.initialize()
    response = wire.request("tools/call", {"name": "t", "_meta": {"progressToken": 1}}, session=session)
    # Content frames: the opening comment, then the notifications; the result never comes.
    assert response.status == 200 and response.body.startswith(b": llmts\n\n")
    assert [message["params"]["progress"] for message in events(response.body)] == [1]


def test_harmless_plans_deliver_the_result(llmts_session: SessionClient) -> None:
    # A generous read timeout: these answers arrive, however busy the machine is.
    _server(llmts_session, stream_delivery={"mode": "delay_then_continue", "delay_ms": 200})
    outcome, elapsed = _call(llmts_session, timeout=30.0)
    assert outcome == "ok r" and elapsed >= 0.2
    _server(llmts_session, stream_delivery={"mode": "slow_drip", "bytes_per_second": 5000})
    assert _call(llmts_session, timeout=30.0)[0] == "ok r"
    (entry,) = llmts_session.requests(provider="mcp", operation="tools/call")
    assert entry["success"] is True and entry["stream_delivery_applied"] is True


def test_malformed_frame_fails_2x_calls_and_1x_skips_it(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session, stream_delivery={"mode": "malformed_frame"})
    outcome, _ = _call(llmts_session)
    assert outcome == ("error -32700" if MCP_MAJOR >= 2 else "ok r")
    llmts_session.reset()
    session = wire.initialize()
    body = wire.request("tools/call", {"name": "t"}, session=session).body
    assert b'data: {"llmts_malformed_frame": \n\n' in body and body.endswith(b'"isError":false}}\n\n')


def test_http_error_page_instead_of_the_answer(llmts_session: SessionClient) -> None:
    _server(llmts_session, stream_delivery={"mode": "http_error_page", "status": 502})
    if MCP_MAJOR >= 2:
        assert _call(llmts_session)[0] == "error -32603"
    else:  # 1.x raises HTTPStatusError inside its transport: the whole client dies
        with pytest.raises(EXCEPTION_GROUP):
            _call(llmts_session)
    (entry,) = llmts_session.requests(provider="mcp", operation="tools/call")
    assert entry["status"] == 502 and entry["success"] is False


@pytest.mark.parametrize("mode", ["reset_before_headers", "empty_response"])
def test_connection_faults_end_the_client(llmts_session: SessionClient, mode: str) -> None:
    _server(llmts_session, stream_delivery={"mode": mode})
    with pytest.raises(EXCEPTION_GROUP):
        _call(llmts_session)


def test_wrong_id_over_json_leaves_the_call_unanswered(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session, fault="wrong_id")
    outcome, elapsed = _call(llmts_session)
    assert outcome == ("error -32001" if MCP_MAJOR >= 2 else "error 408")
    assert elapsed >= V1_TIMEOUT
    llmts_session.reset()
    session = wire.initialize()
    answer = wire.request("tools/call", {"name": "t"}, session=session).json()
    assert answer["id"] == f"llmts-wrong-id-{wire.last_id}"


def test_wrong_id_over_sse_is_taken_by_2x_only(llmts_session: SessionClient) -> None:
    # mcp 2.x gives the first response on a POST's stream the request's id; 1.x matches ids.
    _server(llmts_session, fault="wrong_id", progress=[{"progress": 1}])

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        return None

    async def scenario() -> str:
        async with llmts_session.mcp_session("s", read_timeout_seconds=V1_TIMEOUT) as client:
            try:
                result = await client.call_tool("t", {}, progress_callback=on_progress)
                return "ok " + result.content[0].text
            except MCPError as error:
                return f"error {error_code(error)}"

    assert run(scenario) == ("ok r" if MCP_MAJOR >= 2 else "error 408")


def test_notification_flood_precedes_the_result(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session, fault="notification_flood", flood_count=300)
    logged: list[Any] = []

    async def on_log(params: Any) -> None:
        logged.append(params.data)

    assert _call(llmts_session, logging_callback=on_log)[0] == "ok r"
    assert len(logged) == 300 and logged[0] == "flood 1 of 300"
    llmts_session.reset()
    session = wire.initialize()
    response = wire.request("tools/call", {"name": "t"}, session=session)
    *flood, result = events(response.body)
    assert len(flood) == 300 and {message["method"] for message in flood} == {"notifications/message"}
    assert result["result"]["content"][0]["text"] == "r"


def test_session_expired_mid_call_answers_404_from_then_on(llmts_session: SessionClient) -> None:
    wire = _server(llmts_session, fault="session_expired", delay_ms=100)

    async def scenario() -> list[str]:
        outcomes = []
        async with llmts_session.mcp_session("s") as client:
            for _ in range(2):  # neither major re-initializes: the second call fails too
                try:
                    await client.call_tool("t", {})
                    outcomes.append("ok")
                except MCPError as error:
                    outcomes.append(str(error))
        return outcomes

    outcomes = run(scenario)
    assert len(outcomes) == 2 and all("Session" in outcome for outcome in outcomes)
    llmts_session.reset()
    session = wire.initialize()
    expired = wire.request("tools/call", {"name": "t"}, session=session)
    assert expired.status == 404 and "expired" in expired.json()["error"]["message"]
    assert wire.request("ping", session=session).status == 404
    assert wire.raw("DELETE", {"Mcp-Session-Id": session}).status == 404
    entry = llmts_session.requests(provider="mcp", operation="tools/call")[0]
    assert entry["status"] == 404 and entry["error_code"] == "mcp_session_expired"


def test_a_reset_during_a_delay_supersedes_the_call(llmts_session: SessionClient) -> None:
    import threading

    wire = _server(llmts_session, delay_ms=3000)
    session = wire.initialize()
    timer = threading.Timer(0.3, llmts_session.reset)
    timer.start()
    started = time.monotonic()
    answer = wire.request("tools/call", {"name": "t"}, session=session)
    timer.join()
    assert time.monotonic() - started < 2
    assert answer.status == 200
    assert answer.json()["error"]["data"]["code"] == "llm_test_server_request_superseded"


def test_unanswered_server_request_times_out(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder()
        .mcp_server("s", answer_timeout_ms=300)
        .tool("t")
        .text("r", elicit={"message": "?"})
        .build()
    )
    wire = Wire(llmts_session.provider_base, "s")
    session = wire.initialize(capabilities={"elicitation": {}})
    started = time.monotonic()
    response = wire.request("tools/call", {"name": "t"}, session=session)
    assert time.monotonic() - started >= 0.3
    ask, cancelled, error = events(response.body)
    assert ask["method"] == "elicitation/create" and ask["params"]["message"] == "?"
    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": ask["id"], "reason": "no answer within 0.3 s"},
    }
    assert error["id"] == wire.last_id and error["error"]["code"] == -32001
    entry = llmts_session.requests(provider="mcp", operation="tools/call")[0]
    assert entry["error_code"] == "mcp_client_answer_timeout" and entry["success"] is False
