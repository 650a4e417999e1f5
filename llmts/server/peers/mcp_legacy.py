"""The legacy HTTP+SSE transport (the 2024-11-05 revision's, mcp's ``sse_client``) at ``/mcp/{name}/sse``
(docs/mcp.md, "Revisions and transports").

``GET /mcp/{name}/sse`` opens a client session and its stream: the first event names the endpoint
(``event: endpoint``, ``data: /mcp/{name}/messages?session_id=...``), every later one is a server message
(``event: message``). The client POSTs each message to the endpoint and gets 202; the answer comes on the
stream. A ``tools/call`` runs beside the POST (a thread: gevent's greenlet in the worker), because the
client POSTs one message at a time and may have to POST its answer to the server's own request while the
call waits for it. Closing the stream ends the client session. ``stream_delivery`` plans do not act here
(the stream is shared by every answer); the protocol faults do.

Answers and the server's requests wait for the stream in the client session's queue and are never
dropped: at most ``mcp_legacy_calls_in_flight`` wait, and beyond that a POST (or a call) waits until the
stream took some, so a client that reads its stream slowly is slowed down, not lost answers. Only
notifications are dropped (the oldest) when too many wait. A request's journal entry completes when its
answer left on the stream, or fails when the stream ended first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs

import orjson

from llmts.errors import LlmtsError
from llmts.peers.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JsonRpcError,
    RequestId,
    error_response,
    parse_message,
)
from llmts.peers.mcp import Answer, CallPlan, McpClient, McpServerState, answer, initialize, notified
from llmts.peers.mcp.calls import memory_refused
from llmts.peers.mcp.clients import CLIENT_RESIDENT_BYTES, Flight
from llmts.peers.mcp.engine import KNOWN_METHODS
from llmts.peers.mcp.revisions import LATEST_HANDSHAKE
from llmts.providers.base import Reply
from llmts.runtime.journal import JournalRecord
from llmts.schema.peer_limits import PEER_LIMITS
from llmts.server.http.log_text import log_text
from llmts.server.peers.context import PeerRequest
from llmts.server.peers.mcp_common import accepts, check_server, journal_call, mcp_state, stopped, stopper
from llmts.server.peers.mcp_streams import REQUEST_TIMEOUT, SSE_HEADERS, await_answer, get_stream
from llmts.transport import DeliveryEvidence, WaitOutcome, wait

__all__ = ["legacy"]

_log = logging.getLogger("llmts")

# Calls one legacy client session may have running at once (each holds a greenlet while it waits), and
# answers waiting for its stream.
_CALLS_IN_FLIGHT = PEER_LIMITS["mcp_legacy_calls_in_flight"]
# How long a wait for room on the stream sleeps before it looks at the session again.
_ROOM_SLICE_SECONDS = 1.0


def legacy(request: PeerRequest) -> Iterable[bytes]:
    if request.rest == "/sse":
        if request.method != "GET":
            check_server(request)
            return _refuse(request, 405, f"{request.method} is not allowed here", [("Allow", "GET")])
        return _open_stream(request, mcp_state(request))
    if request.method != "POST":
        check_server(request)
        return _refuse(request, 405, f"{request.method} is not allowed here", [("Allow", "POST")])
    return _post(request)


def _refuse(
    request: PeerRequest, status: int, text: str, headers: list[tuple[str, str]] | None = None
) -> Iterable[bytes]:
    request.services.metrics.reject("mcp", status)
    return request.json(status, error_response(None, INVALID_REQUEST, text), headers)


def _open_stream(request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
    if not accepts(request.header("Accept"))[1]:
        return _refuse(request, 406, "Not Acceptable: the stream is text/event-stream")
    if not state.clients.full and not state.memory.fits(CLIENT_RESIDENT_BYTES):
        refused = memory_refused("another client session")
        request.services.metrics.reject("mcp", 507)
        return request.json(507, error_response(None, refused.code, refused.message, refused.data))
    client = state.clients.open(LATEST_HANDSHAKE, {}, {}, legacy=True)
    token = client.attach_stream()
    endpoint = f"{request.mount}/messages?session_id={client.id}"
    request.start_response("200 OK", list(SSE_HEADERS))
    opening = b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n"

    def ended() -> None:  # no reconnection in this transport: the stream is the session
        state.clients.remove(client.id)

    return get_stream(request, client, token, opening, ended)


def _legacy_client(state: McpServerState, session_id: str) -> McpClient | None:
    client = state.clients.get(session_id)
    if client is None or not client.legacy or not client.usable:
        return None
    return client


def _post(request: PeerRequest) -> Iterable[bytes]:
    check_server(request)
    values = parse_qs(str(request.environ.get("QUERY_STRING", ""))).get("session_id")
    if not values:
        return _refuse(request, 400, "Bad Request: the endpoint needs ?session_id=")
    if _legacy_client(mcp_state(request), values[0]) is None:
        return _refuse(request, 404, "Session not found")
    new_id = request.services.new_request_id
    try:
        body = request.read_body()
    except LlmtsError as error:  # too large, too slow, cut short: journaled, the connection closed
        entry = request.journal("invalid", new_id("mcp_"))
        entry.failed(error.code)
        payload = error_response(None, INVALID_REQUEST, str(error), {"code": error.code})
        return request.json(error.http_status, payload, [("Connection", "close")], entry=entry)
    # After the body: a reset or configure while it arrived is in force for this request.
    state = mcp_state(request)
    client = _legacy_client(state, values[0])
    if client is None:
        return _refuse(request, 404, "Session not found")
    try:
        message = parse_message(body)
    except JsonRpcError as error:
        entry = request.journal("invalid", new_id("mcp_"), body)
        entry.failed(f"jsonrpc_{error.code}")
        payload = error_response(None, error.code, f"Could not parse the message: {error.message}")
        return request.json(400, payload, entry=entry)
    if message.is_response:
        client.answered(message)
        return _accepted(request)
    if message.is_notification:
        notified(client, message)
        return _accepted(request)
    assert message.method is not None and message.id is not None
    operation = message.method if message.method in KNOWN_METHODS else "unknown"
    entry = request.journal(operation, new_id("mcp_"), body)
    # The POST's status; the entry completes when the answer left on the stream.
    entry.answered(202)
    if message.method == "initialize":
        _, reply = initialize(state, message, client)
        return _answer(request, client, entry, message.id, reply)
    if message.method == "tools/call":
        journal_call(request, entry, message)
        if client.calls_in_flight() >= _CALLS_IN_FLIGHT:  # before the call consumes its result
            text = f"llmts: at most {_CALLS_IN_FLIGHT} calls run at once"
            refused = Answer(error_response(message.id, INTERNAL_ERROR, text), "mcp_too_many_calls")
            return _answer(request, client, entry, message.id, refused)
    outcome = answer(state, client, message)
    if isinstance(outcome, Answer):
        return _answer(request, client, entry, message.id, outcome)
    flight = client.call_started(message.id)
    timeout = state.config.answer_timeout_ms / 1000
    runner = threading.Thread(
        target=_run_call,
        args=(request, state, client, message.id, outcome, entry, flight, timeout),
        daemon=True,
    )
    runner.start()
    return _accepted(request)


def _accepted(request: PeerRequest) -> Iterable[bytes]:
    return request.reply(Reply(202, [("Content-Type", "text/plain")], b"Accepted"))


def _answer(
    request: PeerRequest, client: McpClient, entry: JournalRecord, request_id: RequestId, reply: Answer
) -> Iterable[bytes]:
    """A request answered at once: its answer waits for the stream (the POST waits for room there), and
    the POST gets 202; 404 when the session ended first."""
    if _queued(request, client, entry, [], reply.message, reply.error_code):
        return _accepted(request)
    entry.failed("mcp_session_unknown")
    return request.json(404, error_response(request_id, INVALID_REQUEST, "Session not found"), entry=entry)


def _queue(client: McpClient, message: dict[str, Any], sent: Any) -> bool:
    """Put an answer or a server request on the client's stream, waiting for room; False when the session
    ended first."""
    while not client.offer(message, sent):
        if not client.usable:
            return False
        client.room.wait(_ROOM_SLICE_SECONDS)
    return True


def _queued(
    request: PeerRequest,
    client: McpClient,
    entry: JournalRecord,
    notes: list[dict[str, Any]],
    reply: dict[str, Any],
    error_code: str | None,
) -> bool:
    """``notes`` (notifications) and the request's answer on the stream; the entry completes once the
    answer left (or the stream ended first). False: the session ended, nothing of the answer was queued."""
    request.session.journal.record_response(
        entry, b"\n".join(orjson.dumps(item) for item in [*notes, reply]), None
    )
    if error_code is not None:
        entry.failed_after_status(error_code)
    for note in notes:
        client.push(note)

    def sent(delivered: bool) -> None:
        _finish(request, entry, "completed" if delivered else "client_gone")

    return _queue(client, reply, sent)


def _finish(request: PeerRequest, entry: JournalRecord, outcome: str, error_code: str | None = None) -> None:
    """Complete a legacy entry: ``completed`` when its answer left on the stream."""
    if entry.completed:
        return
    evidence = DeliveryEvidence(None)
    evidence.transport_outcome = outcome
    evidence.terminal_marker_observed = outcome == "completed"
    entry.apply_evidence(evidence)
    if error_code is not None:
        entry.failed_after_status(error_code)
    request.session.journal.finish(entry)
    request.services.metrics.record(entry)


def _ignore(delivered: bool) -> None:
    return None


def _run_call(
    request: PeerRequest,
    state: McpServerState,
    client: McpClient,
    request_id: RequestId,
    plan: CallPlan,
    entry: JournalRecord,
    flight: Flight,
    timeout: float,
) -> None:
    try:
        _call(request, state, client, request_id, plan, entry, flight, timeout)
    except Exception:  # a bug: the client still gets an answer, the log a traceback, the entry an end
        _log.exception("unhandled error in an MCP call on %s", log_text(request.mount))
        failure = error_response(
            request_id, INTERNAL_ERROR, "llmts hit an internal error; see the server log"
        )
        if entry.completed or not _queued(
            request, client, entry, [], failure, "llm_test_server_internal_error"
        ):
            _finish(request, entry, "client_gone", "llm_test_server_internal_error")
    finally:
        client.call_ended(request_id, flight)


def _call(
    request: PeerRequest,
    state: McpServerState,
    client: McpClient,
    request_id: RequestId,
    plan: CallPlan,
    entry: JournalRecord,
    flight: Flight,
    timeout: float,
) -> None:
    stop = stopper(state, client, flight.cancelled)

    def settle(notes: list[dict[str, Any]], reply: dict[str, Any], error_code: str | None) -> None:
        if not _queued(request, client, entry, notes, reply, error_code):
            _finish(request, entry, "client_gone")

    if (
        plan.delay_seconds
        and wait(plan.delay_seconds, None, lambda: stop() is not None) is WaitOutcome.CANCELLED
    ):
        halted = stopped(request_id, stop() or "superseded")
        settle([], halted.message, halted.error_code)
        return
    if plan.expire:
        client.end(expired=True)
        _finish(request, entry, "early_end", "mcp_session_expired")
        return
    journal = request.session.journal
    for ask in plan.asks:
        pending = client.ask(ask.method)
        if not _queue(client, pending.request(ask.params), _ignore):
            client.forget(pending)
            _finish(request, entry, "early_end", "mcp_call_ended")
            return
        reason = await_answer(pending, timeout, None, stop)
        if reason == "answered":
            record = pending.record()
            entry.client_answered(record, orjson.dumps(record), journal.preview_bytes)
            continue
        client.forget(pending)
        if reason == "timeout":
            cancel = {"requestId": pending.id, "reason": f"no answer within {timeout:g} s"}
            notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            text = f"llmts: the client did not answer {ask.method} within {timeout:g} s"
            settle([notice], error_response(request_id, REQUEST_TIMEOUT, text), "mcp_client_answer_timeout")
        else:
            halted = stopped(request_id, reason)
            settle([], halted.message, halted.error_code)
        return
    settle(list(plan.notifications), plan.response, plan.error_code)
