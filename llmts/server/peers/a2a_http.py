"""``/a2a/{name}``: a session's scripted A2A agent over HTTP (docs/a2a.md).

``GET /a2a/{name}/.well-known/agent-card.json`` is the agent card; ``POST /a2a/{name}`` one JSON-RPC
request, answered as JSON or, for the streaming methods, as an SSE stream of JSON-RPC responses. The
engine (``llmts/peers/a2a``) decides and commits the answer under the agent's lock; here the answer's
``delay_ms`` is waited outside every lock (the client leaving ends it) and the reply is written through
the transport with the answer's ``stream_delivery`` plan. Every card fetch and JSON-RPC request of a
known agent is one journal entry (provider ``a2a``, operation the method, ``a2a_agent``); JSON-RPC errors
are answered with HTTP 200, as the SDKs expect, and journaled as failures with the JSON-RPC code.

The agent's state is taken once the body has arrived, so a request is answered from the configuration
in force when it was complete; a reset, configure or delete after that supersedes it (-32603 with
``data.code`` ``llm_test_server_request_superseded``, as the MCP servers answer).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from llmts.errors import LlmtsError, MethodNotAllowed, RequestSuperseded, RouteNotFound
from llmts.peers.a2a import A2aAgentState, A2aAnswer, A2aCall, agent_card, answer, is_method
from llmts.peers.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JsonRpcError,
    RequestId,
    error_response,
    parse_message,
)
from llmts.providers.base import Reply
from llmts.runtime import Session
from llmts.runtime.journal import JournalRecord
from llmts.schema.a2a import A2aAgent
from llmts.server.peers.context import (
    SSE_HEADERS,
    PeerRequest,
    PeerServices,
    client_gone,
    sse_frames,
    wait_delay,
)
from llmts.transport import WaitOutcome

__all__ = ["CARD_PATH", "A2aHttp"]

CARD_PATH = "/.well-known/agent-card.json"
_JSON_HEADERS = [("Content-Type", "application/json")]


def _agent(session: Session, name: str) -> A2aAgent:
    config = session.plan.configuration
    for agent in config.a2a_agents if config is not None else ():
        if agent.name == name:
            return agent
    raise RouteNotFound(f"no A2A agent {name!r} in this session (configure it under a2a_agents)")


def _state(session: Session, name: str) -> A2aAgentState:
    """The agent's state for the configuration in force now (built inside the session lock, so from
    the same configuration the state belongs to)."""
    return session.peers.state("a2a", name, lambda memory: A2aAgentState(_agent(session, name), memory))


def _endpoint(environ: dict[str, Any], mount: str) -> str:
    """The agent's absolute JSON-RPC URL as this client reached it (the card sends clients there)."""
    host = (
        environ.get("HTTP_HOST")
        or f"{environ.get('SERVER_NAME', 'localhost')}:{environ.get('SERVER_PORT', '80')}"
    )
    return f"{environ.get('wsgi.url_scheme', 'http')}://{host}{mount}"


class A2aHttp:
    def __init__(self, services: PeerServices) -> None:
        self._services = services

    def __call__(self, request: PeerRequest) -> Iterable[bytes]:
        agent = _agent(request.session, request.name)  # an unknown agent is a 404 before anything else
        rest = request.rest
        if rest in ("", "/"):
            if request.method != "POST":
                return _not_allowed(request, "POST")
            return self._rpc(request)
        if rest == CARD_PATH:
            if request.method != "GET":
                return _not_allowed(request, "GET")
            entry = request.journal("agent_card", self._services.new_request_id("a2a_"))
            card = agent_card(agent, _endpoint(request.environ, request.mount))
            return request.json(200, card, entry=entry)
        raise RouteNotFound(
            f"no route {request.mount}{rest[:200]}: an A2A agent answers JSON-RPC at {request.mount} and "
            f"serves its card at {request.mount}{CARD_PATH}"
        )

    def _rpc(self, request: PeerRequest) -> Iterable[bytes]:
        request_id = self._services.new_request_id("a2a_")
        try:
            body = request.read_body()
        except LlmtsError as error:  # too large, too slow, cut short: journaled, the connection closed
            entry = request.journal(None, request_id)
            entry.failed(error.code)
            payload = error_response(None, INVALID_REQUEST, str(error), {"code": error.code})
            return request.json(error.http_status, payload, [("Connection", "close")], entry=entry)
        # Only now, so a reset or configure while the body arrived is not answered from the old
        # configuration (the agent may be gone: 404). One from here on closes this state (a delete
        # before it was built retires the session): the request is then superseded.
        session = request.session
        state = _state(session, request.name)
        generation = session.generation

        def superseded() -> bool:
            return state.closed or not session.is_current(generation)

        try:
            message = parse_message(body)
        except JsonRpcError as error:
            return self._write(request, request.journal(None, request_id, body), _refusal(error, None))
        if message.method is None or message.id is None:  # a notification, or a response to nothing
            refused = JsonRpcError(INVALID_REQUEST, "an A2A request needs a method and an id")
            return self._write(
                request, request.journal(None, request_id, body), _refusal(refused, message.id)
            )
        operation = message.method if is_method(message.method) else None
        entry = request.journal(operation, request_id, body)
        wire = session.plan.wire_identity(entry)
        epoch = wire.fixed_epoch if wire.fixed_epoch is not None else entry.started_epoch
        call = A2aCall(message.method, message.id, message.params, wire.id_for, epoch, len(body), body)
        result = answer(state, call)
        if superseded():  # what the answer changed is in a state nobody reads any more
            return self._write(request, entry, _superseded(message.id, result.stream))
        if result.delay_ms:
            outcome = wait_delay(request, result.delay_ms / 1000, superseded)
            if outcome is WaitOutcome.CLIENT_GONE:
                return client_gone(request, entry)
            if outcome is WaitOutcome.CANCELLED:
                return self._write(request, entry, _superseded(message.id, result.stream))
        return self._write(request, entry, result)

    def _write(self, request: PeerRequest, entry: JournalRecord, result: A2aAnswer) -> Iterable[bytes]:
        if result.stream:  # only the streaming methods answer as a stream: their operation is known
            entry.parsed(entry.operation or "", streaming=True)
            frames, kinds = sse_frames(result.payloads)
            reply = Reply(200, list(SSE_HEADERS), frames=frames, frame_kinds=kinds)
        else:
            reply = Reply(200, list(_JSON_HEADERS), orjson.dumps(result.payloads[0]))
        # Before the reply (a connection fault may end the request inside it) and again after it set the
        # status: a JSON-RPC error over HTTP 200 is still a failed attempt.
        entry.peer_answered(result.response_index, result.error_code)
        written = request.reply(reply, plan=result.plan, entry=entry)
        entry.peer_answered(result.response_index, result.error_code)
        return written


def _superseded(request_id: RequestId, stream: bool) -> A2aAnswer:
    """The answer to a request whose configuration went (reset, configure, delete) before it was written:
    an internal error with ``data.code``, as the MCP servers answer it (HTTP 200: the SDKs read nothing
    else as a JSON-RPC error)."""
    payload = error_response(
        request_id,
        INTERNAL_ERROR,
        "llmts: the session was reset, reconfigured or deleted during this request",
        {"code": RequestSuperseded.code},
    )
    return A2aAnswer([payload], stream, error_code=RequestSuperseded.code)


def _refusal(error: JsonRpcError, request_id: Any) -> A2aAnswer:
    return A2aAnswer(
        [error_response(request_id, error.code, error.message, error.data)], False, error_code=str(error.code)
    )


def _not_allowed(request: PeerRequest, allowed: str) -> Iterable[bytes]:
    error = MethodNotAllowed(
        f"{request.mount}{request.rest[:200]} takes {allowed}, not {request.method[:16]}"
    )
    payload = error_response(None, INVALID_REQUEST, str(error), {"code": error.code})
    return request.json(405, payload, [("Allow", allowed)])
