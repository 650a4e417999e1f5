"""``/mcp/{name}``: a session's scripted MCP server over Streamable HTTP (docs/mcp.md).

POST carries one JSON-RPC message: a request is answered as JSON, or as an SSE stream when something
precedes its result (the server's own requests, progress, a notification flood) or a delivery plan acts
on it; a notification or a response (the client answering the server) gets 202. ``initialize`` issues the
``Mcp-Session-Id`` every later request must carry (400 without it, 404 for one llmts does not know or that
ended); DELETE ends it; GET opens the session's notification stream (``mcp_streams.py``). The legacy
HTTP+SSE transport is ``mcp_legacy.py``.

Status codes follow what the official clients survive (docs/mcp.md, "Revisions and transports"): a
JSON-RPC error to a well-formed request is HTTP 200 (mcp 1.x drops its whole session on any other 4xx
but 404); malformed messages and header errors are 4xx with a JSON-RPC error body, journaled when they
answer a request; nothing is a 500. The body is read before the server's state is looked up, so a
reset or configure that lands meanwhile is in force for the request; a call that waits stops when that
state is replaced.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from llmts.errors import LlmtsError, RouteNotFound
from llmts.peers.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JsonRpcError,
    Message,
    RequestId,
    error_response,
    parse_message,
)
from llmts.peers.mcp import (
    Answer,
    CallPlan,
    McpClient,
    McpServerState,
    answer,
    error_answer,
    initialize,
    notified,
)
from llmts.peers.mcp.engine import KNOWN_METHODS
from llmts.peers.mcp.listens import LISTEN, Listen, acknowledged, completed, open_listen
from llmts.peers.mcp.modern import envelope, modern_answer, status_for
from llmts.peers.mcp.revisions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from llmts.providers.base import Reply
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import CONNECTION_MODES, FrameKind
from llmts.schema.peer_limits import PEER_LIMITS
from llmts.server.peers.context import PeerRequest, PeerServices, client_gone, wait_delay
from llmts.server.peers.mcp_common import accepts, check_server, journal_call, mcp_state, stopped, stopper
from llmts.server.peers.mcp_streams import (
    OPENING_FRAME,
    SSE_HEADERS,
    Cancellable,
    event_frame,
    get_stream,
    listen_stream,
    staged_call,
)
from llmts.transport import WaitOutcome, client_socket

__all__ = ["McpHttp"]

_JSON = "application/json"
_SESSION_HEADER = "Mcp-Session-Id"
_ALLOW = [("Allow", "GET, POST, DELETE")]
_MODERN_METHODS = frozenset({"server/discover", LISTEN})


class McpHttp:
    def __init__(self, services: PeerServices) -> None:
        self._services = services

    def __call__(self, request: PeerRequest) -> Iterable[bytes]:
        if request.rest in ("/sse", "/messages"):
            from llmts.server.peers.mcp_legacy import legacy

            return legacy(request)
        if request.rest:
            raise RouteNotFound(f"no route {request.method} {request.mount}{request.rest}")
        method = request.method
        if method == "POST":
            return self._post(request)
        if method == "GET":
            return self._get(request, mcp_state(request))
        if method == "DELETE":
            return self._delete(request, mcp_state(request))
        check_server(request)
        return self._refuse(request, 405, f"{method} is not allowed here", _ALLOW)

    # --- answers before the method runs ---------------------------------------------------------------

    def _refuse(
        self,
        request: PeerRequest,
        status: int,
        text: str,
        headers: list[tuple[str, str]] | None = None,
        request_id: RequestId | None = None,
        entry: JournalRecord | None = None,
        reason: str | None = None,
    ) -> Iterable[bytes]:
        """An HTTP-level refusal (-32600), journaled as ``reason`` when it answers a request's ``entry``."""
        payload = error_response(request_id, INVALID_REQUEST, text)
        if entry is None:
            self._services.metrics.reject("mcp", status)
            return request.json(status, payload, headers)
        if reason is not None:
            entry.failed(reason)
        return request.json(status, payload, headers, entry=entry)

    def _entry(self, request: PeerRequest, message: Message, body: bytes, modern: bool) -> JournalRecord:
        """A request's journal entry; a method llmts does not serve is journaled as ``unknown`` (a client
        cannot grow the metrics' labels)."""
        assert message.method is not None
        known = message.method in KNOWN_METHODS or (modern and message.method in _MODERN_METHODS)
        entry = request.journal(
            message.method if known else "unknown", self._services.new_request_id("mcp_"), body
        )
        if message.method == "tools/call":
            journal_call(request, entry, message)
        return entry

    def _accepted(self, request: PeerRequest) -> Iterable[bytes]:
        return request.reply(Reply(202, [("Content-Type", _JSON)]))

    def _client(self, request: PeerRequest, state: McpServerState) -> McpClient | str:
        """The request's client session, or why there is none (400: no header, 404: unknown or ended). A
        legacy transport's session is not one of this transport's."""
        session_id = request.header(_SESSION_HEADER)
        if not session_id:
            return "missing"
        client = state.clients.get(session_id)
        if client is None or client.legacy or not client.usable:
            return "expired" if client is not None and client.expired else "unknown"
        return client

    def _version_error(self, request: PeerRequest) -> str | None:
        version = request.header("Mcp-Protocol-Version")
        if version is None or version in HANDSHAKE_VERSIONS:
            return None
        return f"Unsupported protocol version: {version} (supported: {', '.join(HANDSHAKE_VERSIONS)})"

    # --- POST ----------------------------------------------------------------------------------------

    def _post(self, request: PeerRequest) -> Iterable[bytes]:
        check_server(request)
        json_ok, sse_ok = accepts(request.header("Accept"))
        content_type = str(request.environ.get("CONTENT_TYPE", "")).split(";", 1)[0].strip().lower()
        try:
            body = request.read_body()
        except LlmtsError as error:  # too large, too slow, cut short: journaled, the connection closed
            entry = request.journal("invalid", self._services.new_request_id("mcp_"))
            entry.failed(error.code)
            payload = error_response(None, INVALID_REQUEST, str(error), {"code": error.code})
            return request.json(error.http_status, payload, [("Connection", "close")], entry=entry)
        # After the body: a reset or configure while it arrived is in force for this request.
        state = mcp_state(request)
        try:
            message = parse_message(body)
        except JsonRpcError as error:
            entry = request.journal("invalid", self._services.new_request_id("mcp_"), body)
            return self._send(request, entry, error_answer(None, error), 400, sse=False)
        modern = request.header("Mcp-Protocol-Version") in MODERN_VERSIONS
        refusal = self._refusal(request, json_ok, sse_ok, content_type, modern)
        if refusal is not None:
            status, text, reason = refusal
            refused = self._entry(request, message, body, modern) if message.is_request else None
            return self._refuse(request, status, text, request_id=message.id, entry=refused, reason=reason)
        if modern:
            return self._modern(request, state, message, body, json_ok, sse_ok)
        if message.method == "initialize" and message.id is not None:
            entry = request.journal("initialize", self._services.new_request_id("mcp_"), body)
            opened, reply = initialize(state, message)
            headers = [(_SESSION_HEADER, opened.id)] if opened is not None else []
            return self._send(request, entry, reply, 200, sse=not json_ok, headers=headers)
        client = self._client(request, state)
        if not message.is_request:
            if isinstance(client, str):
                return self._session_refused(request, client, None)
            if message.is_response:
                client.answered(message)
            else:
                notified(client, message)
            return self._accepted(request)
        assert message.id is not None
        entry = self._entry(request, message, body, modern=False)
        if isinstance(client, str):
            return self._session_refused(request, client, message.id, entry)
        outcome = answer(state, client, message, sse=sse_ok)
        if isinstance(outcome, Answer):
            return self._send(request, entry, outcome, 200, sse=not json_ok)
        return self._call(request, state, client, message.id, outcome, entry, json_ok, sse_ok)

    def _refusal(
        self, request: PeerRequest, json_ok: bool, sse_ok: bool, content_type: str, modern: bool
    ) -> tuple[int, str, str] | None:
        """What the headers refuse: (status, text, journal reason), or None."""
        if not (json_ok or sse_ok):
            text = "Not Acceptable: accept application/json or text/event-stream"
            return 406, text, "mcp_not_acceptable"
        if content_type != _JSON:
            return 415, "Unsupported Media Type: send application/json", "mcp_unsupported_media_type"
        if not modern and (problem := self._version_error(request)) is not None:
            return 400, problem, "mcp_unsupported_protocol_version"
        return None

    def _modern(
        self,
        request: PeerRequest,
        state: McpServerState,
        message: Message,
        body: bytes,
        json_ok: bool,
        sse_ok: bool,
    ) -> Iterable[bytes]:
        """A 2026-07-28 request: no session, the envelope in ``params._meta`` (llmts/peers/mcp/modern.py)."""
        if not message.is_request:  # nothing to answer: a cancel aborts its own POST at this revision
            return self._accepted(request)
        assert message.id is not None
        entry = self._entry(request, message, body, modern=True)
        try:
            client = envelope(message, request.header)
        except JsonRpcError as error:
            refused = error_answer(message.id, error)
            return self._send(request, entry, refused, status_for(error.code), sse=not json_ok)
        if message.method == LISTEN:
            return self._listen(request, state, message, entry, json_ok, sse_ok)
        outcome = modern_answer(state, client, message)
        if isinstance(outcome, Answer):
            failure = outcome.message.get("error")
            status = status_for(failure.get("code") if isinstance(failure, dict) else None)
            return self._send(request, entry, outcome, status, sse=not json_ok)
        limit = request.session.journal.preview_bytes
        for record in outcome.client_answers:
            entry.client_answered(record, orjson.dumps(record), limit)
        return self._call(request, state, client, message.id, outcome, entry, json_ok, sse_ok)

    def _listen(
        self,
        request: PeerRequest,
        state: McpServerState,
        message: Message,
        entry: JournalRecord,
        json_ok: bool,
        sse_ok: bool,
    ) -> Iterable[bytes]:
        """``subscriptions/listen``: its answer is the long-lived SSE stream of what changes
        (llmts/peers/mcp/listens.py), so a client must accept SSE."""
        assert message.id is not None
        try:
            listen = Listen(message.params)
        except JsonRpcError as error:
            return self._send(request, entry, error_answer(message.id, error), 400, sse=not json_ok)
        if not sse_ok:
            text = "Not Acceptable: subscriptions/listen answers text/event-stream"
            return self._refuse(
                request, 406, text, request_id=message.id, entry=entry, reason="mcp_not_acceptable"
            )
        try:
            listener = open_listen(state, listen, message.id)
        except JsonRpcError as error:  # the memory budget has no room for it
            return self._send(request, entry, error_answer(message.id, error), 200, sse=not json_ok)
        if listener is None:
            limit = PEER_LIMITS["mcp_listens_per_server"]
            text = f"llmts: {limit} subscriptions/listen streams are open on this server already"
            refused = Answer(error_response(message.id, INTERNAL_ERROR, text), "mcp_listen_limit")
            return self._send(request, entry, refused, 200, sse=False)
        server = state.config
        complete = completed(message.id, {"name": server.name, "version": server.version})
        ack = acknowledged(listen, message.id)
        return listen_stream(
            request, listener, ack, complete, entry, lambda: state.listens.remove(listener.id)
        )

    def _session_refused(
        self, request: PeerRequest, why: str, request_id: RequestId | None, entry: JournalRecord | None = None
    ) -> Iterable[bytes]:
        if why == "missing":
            status, text = 400, "Bad Request: an Mcp-Session-Id header is required (send initialize first)"
        elif why == "expired":
            status, text = 404, "Session not found: it expired (a scripted session_expired fault)"
        else:
            status, text = 404, "Session not found"
        message = error_response(request_id, INVALID_REQUEST, text)
        if entry is None:
            self._services.metrics.reject("mcp", status)
            return request.json(status, message)
        return self._send(request, entry, Answer(message, f"mcp_session_{why}"), status, sse=False)

    def _send(
        self,
        request: PeerRequest,
        entry: JournalRecord,
        reply: Answer,
        status: int,
        *,
        sse: bool,
        headers: list[tuple[str, str]] | None = None,
    ) -> Iterable[bytes]:
        """One JSON-RPC response: JSON, or a one-event SSE stream for a client that accepts only that. An
        error status is JSON whatever the client accepts, as every refusal here: a client reads an HTTP
        error's body whole, not as a stream."""
        if sse and status < 400:
            entry.parsed(entry.operation or "unknown", streaming=True)
            frames = [event_frame(reply.message)]
            answer_reply = Reply(
                status, [*SSE_HEADERS, *(headers or [])], frames=frames, frame_kinds=[FrameKind.TERMINAL]
            )
        else:
            answer_reply = Reply(
                status, [("Content-Type", _JSON), *(headers or [])], orjson.dumps(reply.message)
            )
        body = request.reply(answer_reply, entry=entry)
        if reply.error_code is not None:
            entry.failed_after_status(reply.error_code)
        return body

    # --- tools/call -------------------------------------------------------------------------------------

    def _call(
        self,
        request: PeerRequest,
        state: McpServerState,
        client: McpClient,
        request_id: RequestId,
        plan: CallPlan,
        entry: JournalRecord,
        json_ok: bool,
        sse_ok: bool,
    ) -> Iterable[bytes]:
        flight = client.call_started(request_id)
        stop = stopper(state, client, flight.cancelled)
        handed_over = False  # the call stays in flight with its answer's body (a cancel may still end it)
        try:
            if plan.delay_seconds:
                outcome = wait_delay(request, plan.delay_seconds, lambda: stop() is not None)
                if outcome is WaitOutcome.CLIENT_GONE:
                    return client_gone(request, entry)
                if outcome is WaitOutcome.CANCELLED:
                    return self._stopped(request, entry, request_id, stop() or "superseded", json_ok)
            if plan.expire:
                client.end(expired=True)
                return self._session_refused(request, "expired", request_id, entry)
            delivery = plan.delivery
            if delivery is not None and delivery.mode in CONNECTION_MODES:
                # Before any byte: the server's own requests are never sent either.
                reply = Reply(200, [("Content-Type", _JSON)], orjson.dumps(plan.response))
                return request.reply(reply, plan=delivery, entry=entry)
            if not plan.streams:
                return self._send(
                    request, entry, Answer(plan.response, plan.error_code), 200, sse=not json_ok
                )
            if not sse_ok:
                # A client that takes only JSON gets the result alone (a call that must ask it something
                # first was refused before it consumed its result).
                return self._send(request, entry, Answer(plan.response, plan.error_code), 200, sse=False)
            entry.parsed("tools/call", streaming=True)
            if plan.asks:
                handed_over = True
                timeout = state.config.answer_timeout_ms / 1000
                return staged_call(request, client, request_id, plan, entry, stop, timeout, flight)
            frames = [OPENING_FRAME, *map(event_frame, plan.notifications), event_frame(plan.response)]
            kinds = [FrameKind.CONTENT] * (len(frames) - 1) + [FrameKind.TERMINAL]
            body = request.reply(
                Reply(200, list(SSE_HEADERS), frames=frames, frame_kinds=kinds), plan=delivery, entry=entry
            )
            if plan.error_code is not None:
                entry.failed_after_status(plan.error_code)
            if delivery is None:
                return body
            handed_over = True
            sock = client_socket(request.environ)
            return Cancellable(body, flight, entry, sock, lambda: client.call_ended(request_id, flight))
        finally:
            if not handed_over:
                client.call_ended(request_id, flight)

    def _stopped(
        self, request: PeerRequest, entry: JournalRecord, request_id: RequestId, reason: str, json_ok: bool
    ) -> Iterable[bytes]:
        if reason == "ended":
            return self._session_refused(request, "unknown", request_id, entry)
        return self._send(request, entry, stopped(request_id, reason), 200, sse=not json_ok)

    # --- GET and DELETE ------------------------------------------------------------------------------

    def _get(self, request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
        _, sse_ok = accepts(request.header("Accept"))
        if not sse_ok:
            return self._refuse(request, 406, "Not Acceptable: the GET stream is text/event-stream")
        if (problem := self._version_error(request)) is not None:
            return self._refuse(request, 400, problem)
        client = self._client(request, state)
        if isinstance(client, str):
            return self._session_refused(request, client, None)
        token = client.attach_stream()
        request.start_response("200 OK", list(SSE_HEADERS))
        return get_stream(request, client, token)

    def _delete(self, request: PeerRequest, state: McpServerState) -> Iterable[bytes]:
        client = self._client(request, state)
        if isinstance(client, str):
            return self._session_refused(request, client, None)
        state.clients.remove(client.id)
        return request.reply(Reply(204, []))
