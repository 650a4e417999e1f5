"""The legacy HTTP+SSE transport (the 2024-11-05 revision's, mcp's ``sse_client``) at ``/mcp/{name}/sse``
(docs/mcp.md, "Revisions and transports").

``GET /mcp/{name}/sse`` opens a client session and its stream: the first event names the endpoint
(``event: endpoint``, ``data: /mcp/{name}/messages?session_id=...``), every later one is a server message
(``event: message``). The client POSTs each message to the endpoint and gets 202; the answer comes on the
stream. A ``tools/call`` runs beside the POST (a thread: gevent's greenlet in the worker), because the
client POSTs one message at a time and may have to POST its answer to the server's own request while the
call waits for it. Closing the stream ends the client session. ``stream_delivery`` plans do not act here
(the stream is shared by every answer); the protocol faults do.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs

import orjson

from llmts.peers.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonRpcError, RequestId, parse_message
from llmts.peers.mcp import Answer, CallPlan, McpClient, McpServerState, answer, initialize, notified
from llmts.peers.mcp.engine import KNOWN_METHODS
from llmts.peers.mcp.revisions import LATEST_HANDSHAKE
from llmts.providers.base import Reply
from llmts.runtime.journal import JournalRecord
from llmts.server.peers.context import PeerRequest
from llmts.server.peers.mcp_common import accepts, journal_call
from llmts.server.peers.mcp_streams import (
    REQUEST_TIMEOUT,
    SSE_HEADERS,
    await_answer,
    get_stream,
    stopper,
)
from llmts.transport import DeliveryEvidence, WaitOutcome, wait

__all__ = ["legacy"]

# Calls one legacy client session may have running at once (each holds a greenlet while it waits).
_CALLS_IN_FLIGHT = 64


def _error(request_id: RequestId | None, code: int, text: str, data: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": JsonRpcError(code, text, data).to_object()}


def legacy(request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
    if request.rest == "/sse":
        if request.method != "GET":
            return _refuse(request, 405, f"{request.method} is not allowed here", [("Allow", "GET")])
        return _open_stream(request, state)
    if request.method != "POST":
        return _refuse(request, 405, f"{request.method} is not allowed here", [("Allow", "POST")])
    return _post(request, state)


def _refuse(
    request: PeerRequest, status: int, text: str, headers: list[tuple[str, str]] | None = None
) -> Iterable[bytes]:
    request.services.metrics.reject("mcp", status)
    return request.json(status, _error(None, INVALID_REQUEST, text), headers)


def _open_stream(request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
    if not accepts(request.header("Accept"))[1]:
        return _refuse(request, 406, "Not Acceptable: the stream is text/event-stream")
    client = state.clients.open(LATEST_HANDSHAKE, {}, {}, legacy=True)
    token = client.attach_stream()
    endpoint = f"{request.mount}/messages?session_id={client.id}"
    request.start_response("200 OK", list(SSE_HEADERS))
    opening = b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n"

    def ended() -> None:  # no reconnection in this transport: the stream is the session
        state.clients.remove(client.id)

    return get_stream(request, client, token, opening, ended)


def _legacy_client(request: PeerRequest, state: McpServerState) -> McpClient | str:
    values = parse_qs(str(request.environ.get("QUERY_STRING", ""))).get("session_id")
    if not values:
        return "missing"
    client = state.clients.get(values[0])
    if client is None or not client.legacy or not client.usable:
        return "unknown"
    return client


def _post(request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
    client = _legacy_client(request, state)
    if client == "missing":
        return _refuse(request, 400, "Bad Request: the endpoint needs ?session_id=")
    if isinstance(client, str):
        return _refuse(request, 404, "Session not found")
    body = request.read_body()
    try:
        message = parse_message(body)
    except JsonRpcError as error:
        return _refuse(request, 400, f"Could not parse the message: {error.message}")
    accepted = request.reply(Reply(202, [("Content-Type", "text/plain")], b"Accepted"))
    if message.is_response:
        client.answered(message)
        return accepted
    if message.is_notification:
        notified(client, message)
        return accepted
    assert message.method is not None and message.id is not None
    operation = message.method if message.method in KNOWN_METHODS else "unknown"
    entry = request.journal(operation, request.services.new_request_id("mcp_"), body)
    entry.answered(202)
    if message.method == "initialize":
        _, reply = initialize(state, message, client)
        _deliver(request, client, entry, [reply.message], reply.error_code)
        return accepted
    outcome = answer(state, client, message)
    if isinstance(outcome, Answer):
        _deliver(request, client, entry, [outcome.message], outcome.error_code)
        return accepted
    journal_call(request, entry, message)
    generation = request.session.generation
    timeout = state.config.answer_timeout_ms / 1000
    if client.calls_in_flight() >= _CALLS_IN_FLIGHT:
        refused = _error(message.id, INTERNAL_ERROR, f"llmts: at most {_CALLS_IN_FLIGHT} calls run at once")
        _deliver(request, client, entry, [refused], "mcp_too_many_calls")
        return accepted
    cancelled = client.call_started(message.id)
    runner = threading.Thread(
        target=_run_call,
        args=(request, client, message.id, outcome, entry, generation, cancelled, timeout),
        daemon=True,
    )
    runner.start()
    return accepted


def _deliver(
    request: PeerRequest,
    client: McpClient,
    entry: JournalRecord,
    messages: list[dict[str, Any]],
    error_code: str | None,
    outcome: str = "completed",
) -> None:
    """Put the answer on the client's stream and complete the entry (delivered means queued here: the
    stream is shared, so its writes are not this request's evidence)."""
    for message in messages:
        client.push(message)
    journal = request.session.journal
    journal.record_response(entry, b"\n".join(orjson.dumps(message) for message in messages), None)
    evidence = DeliveryEvidence(None)
    evidence.transport_outcome = outcome
    evidence.terminal_marker_observed = outcome == "completed"
    entry.apply_evidence(evidence)
    if error_code is not None:
        entry.rpc_error(error_code)
    journal.finish(entry)
    request.services.metrics.record(entry)


def _run_call(
    request: PeerRequest,
    client: McpClient,
    request_id: RequestId,
    plan: CallPlan,
    entry: JournalRecord,
    generation: int,
    cancelled: threading.Event,
    timeout: float,
) -> None:
    stop = stopper(request, client, generation, cancelled)
    sent: list[dict[str, Any]] = []
    try:
        if (
            plan.delay_seconds
            and wait(plan.delay_seconds, None, lambda: stop() is not None) is WaitOutcome.CANCELLED
        ):
            reason = stop() or "superseded"
            _deliver(request, client, entry, [_stopped(request_id, reason)], _stopped_code(reason))
            return
        if plan.expire:
            client.end(expired=True)
            _deliver(request, client, entry, [], "mcp_session_expired", "early_end")
            return
        for ask in plan.asks:
            pending = client.ask(ask.method)
            question: dict[str, Any] = {"jsonrpc": "2.0", "id": pending.id, "method": ask.method}
            if ask.params is not None:
                question["params"] = ask.params
            client.push(question)
            sent.append(question)
            reason = await_answer(pending, timeout, None, stop)
            if reason == "answered":
                assert pending.answer is not None
                record: dict[str, Any] = {"method": ask.method, "id": pending.id}
                if pending.answer.error is not None:
                    record["error"] = pending.answer.error
                else:
                    record["result"] = pending.answer.result
                entry.client_answered(
                    record, len(orjson.dumps(record)), request.session.journal.preview_bytes
                )
                continue
            client.forget(pending)
            if reason == "timeout":
                text = f"llmts: the client did not answer {ask.method} within {timeout:g} s"
                cancel = {"requestId": pending.id, "reason": f"no answer within {timeout:g} s"}
                notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
                _deliver(
                    request,
                    client,
                    entry,
                    [notice, _error(request_id, REQUEST_TIMEOUT, text)],
                    "mcp_client_answer_timeout",
                )
            else:
                _deliver(request, client, entry, [_stopped(request_id, reason)], _stopped_code(reason))
            return
        _deliver(request, client, entry, [*plan.notifications, plan.response], plan.error_code)
    finally:
        client.call_ended(request_id)


def _stopped_code(reason: str) -> str:
    return "llm_test_server_request_superseded" if reason == "superseded" else f"mcp_call_{reason}"


def _stopped(request_id: RequestId, reason: str) -> dict[str, Any]:
    text = f"llmts: the call ended ({reason})"
    return _error(request_id, INTERNAL_ERROR, text, {"code": _stopped_code(reason)})
