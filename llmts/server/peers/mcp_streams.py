"""The MCP answers that wait on the client (docs/mcp.md): a ``tools/call`` whose SSE answer first sends
the server's own requests (elicitation, sampling, roots) and waits for the client's POSTed answers, and
the GET stream that carries server notifications (``list_changed``, ``resources/updated``).

Waiting happens here, outside every lock, in slices: a wait ends when the answer arrives (a ``threading``
event, gevent's under the worker), when the client leaves (its socket reads EOF; a graceful stop shuts
the read side, so it ends these waits too), when the session is reset, reconfigured or deleted, when the
client session ends, or at its deadline (docs/architecture.md, "The agent's peers").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from llmts.peers.jsonrpc import INTERNAL_ERROR, RequestId
from llmts.peers.mcp import CallPlan, McpClient, PendingAnswer
from llmts.providers.base import Reply
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import FrameKind
from llmts.server.peers.context import PeerRequest
from llmts.transport import DeliveryEvidence, client_socket, peer_gone
from llmts.transport.deadline import ActiveDelivery

__all__ = [
    "OPENING_FRAME",
    "REQUEST_TIMEOUT",
    "SSE_HEADERS",
    "Stop",
    "await_answer",
    "event_frame",
    "get_stream",
    "staged_call",
    "stopper",
]

SSE_HEADERS = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
# The first frame of an SSE answer that carries a delivery plan, and of the GET stream: a comment every
# SSE parser skips. It sends the response head at once and is the plan's first content frame.
OPENING_FRAME = b": llmts\n\n"
_KEEPALIVE = b": keepalive\n\n"
# How often a wait looks at the client's socket and the session (also the bound on noticing a reset).
_SLICE_SECONDS = 0.05
# A comment on an idle GET stream this often, so proxies and idle timeouts keep it open.
_KEEPALIVE_SECONDS = 15.0
# JSON-RPC code of a server request the client did not answer in time (mcp 2.x uses it for timeouts).
REQUEST_TIMEOUT = -32001

Stop = Callable[[], "str | None"]


def event_frame(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + orjson.dumps(message) + b"\n\n"


def stopper(request: PeerRequest, client: McpClient, generation: int, cancelled: Any) -> Stop:
    """Why a call should stop waiting now: ``superseded`` (reset, configure, delete), ``ended`` (its
    client session ended or expired), ``cancelled`` (``notifications/cancelled``), or None."""
    session = request.session

    def stop() -> str | None:
        if not session.is_current(generation):
            return "superseded"
        if not client.usable:
            return "ended"
        if cancelled.is_set():
            return "cancelled"
        return None

    return stop


def await_answer(pending: PendingAnswer, seconds: float, sock: Any, stop: Stop) -> str:
    """Wait for the client's answer: ``answered``, ``timeout``, ``client_gone`` or ``stop()``'s reason."""
    deadline = time.monotonic() + seconds
    while True:
        remaining = deadline - time.monotonic()
        if pending.done.wait(max(0.0, min(_SLICE_SECONDS, remaining))) and pending.answer is not None:
            return "answered"
        reason = stop()
        if reason is not None:
            return reason
        if peer_gone(sock):
            return "client_gone"
        if time.monotonic() >= deadline:
            return "timeout"


def _ask_message(pending: PendingAnswer, params: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": pending.id, "method": pending.method}
    if params is not None:
        message["params"] = params
    return message


def _answer_record(pending: PendingAnswer) -> dict[str, Any]:
    answer = pending.answer
    assert answer is not None
    record: dict[str, Any] = {"method": pending.method, "id": pending.id}
    if answer.error is not None:
        record["error"] = answer.error
    else:
        record["result"] = answer.result
    return record


def _error(request_id: RequestId, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _stopped_error(request_id: RequestId, reason: str) -> tuple[dict[str, Any], str]:
    if reason == "superseded":
        text = "llmts: the session was reset, reconfigured or deleted during the call"
        code = "llm_test_server_request_superseded"
    else:
        text = f"llmts: the call ended ({reason})"
        code = f"mcp_call_{reason}"
    return _error(request_id, INTERNAL_ERROR, text, {"code": code}), code


def _finish_unanswered(request: PeerRequest, entry: JournalRecord, sent: list[bytes], outcome: str) -> None:
    """The stream ended before its result (the client left, or its session or call ended)."""
    journal = request.session.journal
    journal.record_response(entry, b"".join(sent), None)
    evidence = DeliveryEvidence(None)
    evidence.headers_committed = True
    evidence.emitted_frames = len(sent)
    evidence.emitted_bytes = sum(len(frame) for frame in sent)
    evidence.transport_outcome = outcome
    entry.apply_evidence(evidence)
    journal.finish(entry)
    request.services.metrics.record(entry)


def _ignore_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
    return None


def staged_call(
    request: PeerRequest,
    client: McpClient,
    request_id: RequestId,
    plan: CallPlan,
    entry: JournalRecord,
    stop: Stop,
    timeout: float,
) -> Iterator[bytes]:
    """The SSE answer of a call that asks the client first: each request, then its answer awaited (and
    journaled in ``client_answers``), then the rest through the transport with the result's delivery plan
    (whose content frames count from here: the opening frame, the notifications, then the result)."""
    request.start_response("200 OK", list(SSE_HEADERS))
    entry.answered(200)
    sock = client_socket(request.environ)
    journal = request.session.journal
    sent: list[bytes] = []
    handed_over = False
    # Visible to a graceful stop while it waits (which shuts the read side: the wait sees the client gone).
    waiting = ActiveDelivery(DeliveryEvidence(None), sock)
    active = request.services.deliveries
    if active is not None:
        active.add(waiting)
    try:
        final: list[dict[str, Any]] = []
        error_code: str | None = None
        for ask in plan.asks:
            pending = client.ask(ask.method)
            frame = event_frame(_ask_message(pending, ask.params))
            sent.append(frame)
            yield frame
            reason = await_answer(pending, timeout, sock, stop)
            if reason == "answered":
                record = _answer_record(pending)
                entry.client_answered(record, len(orjson.dumps(record)), journal.preview_bytes)
                continue
            client.forget(pending)
            if reason in ("client_gone", "ended", "cancelled"):
                _finish_unanswered(
                    request, entry, sent, "client_gone" if reason == "client_gone" else "early_end"
                )
                handed_over = True
                if reason != "client_gone":
                    entry.rpc_error(f"mcp_call_{reason}")
                return
            if reason == "timeout":
                # As the specification asks of a sender that stops waiting: cancel, then fail the call.
                cancel = {"requestId": pending.id, "reason": f"no answer within {timeout:g} s"}
                final.append({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
                text = f"llmts: the client did not answer {ask.method} within {timeout:g} s"
                final.append(_error(request_id, REQUEST_TIMEOUT, text))
                error_code = "mcp_client_answer_timeout"
            else:
                message, error_code = _stopped_error(request_id, reason)
                final.append(message)
            break
        if active is not None:
            active.discard(waiting)
        if final:
            frames = [event_frame(message) for message in final]
            kinds = [FrameKind.CONTENT] * (len(frames) - 1) + [FrameKind.TERMINAL]
            delivery = None
        else:
            frames = [OPENING_FRAME, *map(event_frame, plan.notifications), event_frame(plan.response)]
            kinds = [FrameKind.CONTENT] * (len(frames) - 1) + [FrameKind.TERMINAL]
            delivery = plan.delivery
            error_code = plan.error_code
        body = request.reply(
            Reply(200, list(SSE_HEADERS), frames=frames, frame_kinds=kinds),
            plan=delivery,
            entry=entry,
            start_response=_ignore_start,
        )
        journal.record_response(entry, b"".join(sent) + b"".join(frames), None)
        if error_code is not None:
            entry.rpc_error(error_code)
        handed_over = True
        yield from body
    finally:
        client.call_ended(request_id)
        if active is not None:
            active.discard(waiting)
        if not handed_over:  # the client left while a request was being written
            _finish_unanswered(request, entry, sent, "client_gone")


def get_stream(
    request: PeerRequest,
    client: McpClient,
    token: object,
    opening: bytes = OPENING_FRAME,
    on_end: Callable[[], None] | None = None,
) -> Iterator[bytes]:
    """The GET stream of a client session: ``opening``, then its queued messages as they come, a
    keep-alive comment when idle; it ends when the session ends, a newer stream takes over, the client
    leaves or the server stops (then ``on_end`` runs)."""
    sock = client_socket(request.environ)
    evidence = DeliveryEvidence(None)
    delivery = ActiveDelivery(evidence, sock)
    active = request.services.deliveries
    if active is not None:
        active.add(delivery)
    try:
        yield opening
        quiet_since = time.monotonic()
        while client.usable and client.owns_stream(token) and evidence.ended_by is None:
            messages = client.drain()
            if messages:
                yield b"".join(event_frame(message) for message in messages)
                quiet_since = time.monotonic()
                continue
            if client.wake.wait(_SLICE_SECONDS):
                continue
            if peer_gone(sock):
                return
            if time.monotonic() - quiet_since >= _KEEPALIVE_SECONDS:
                yield _KEEPALIVE
                quiet_since = time.monotonic()
    finally:
        client.detach_stream(token)
        if active is not None:
            active.discard(delivery)
        if on_end is not None:
            on_end()
