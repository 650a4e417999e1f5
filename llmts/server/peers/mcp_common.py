"""What the MCP transports share (``mcp_http.py``, ``mcp_legacy.py``, ``mcp_streams.py``): the server a
request names, the ``Accept`` header, a call's journal fields, why a waiting call stops, and its answer
then."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from llmts.errors import RouteNotFound
from llmts.peers.jsonrpc import INTERNAL_ERROR, JsonRpcError, Message, RequestId, error_response
from llmts.peers.mcp import Answer, McpClient, McpServerState
from llmts.peers.mcp.calls import call_arguments
from llmts.runtime.journal import JournalRecord
from llmts.runtime.session_memory import MemoryShare
from llmts.server.peers.context import PeerRequest

__all__ = ["Stop", "accepts", "check_server", "journal_call", "mcp_state", "stopped", "stopper"]

_JSON = "application/json"

Stop = Callable[[], "str | None"]

# Why a call stopped waiting: its answer's text and the journal's ``error_code`` (docs/mcp.md).
_STOPPED = {
    "superseded": (
        "llmts: the session was reset, reconfigured or deleted during the call",
        "llm_test_server_request_superseded",
    ),
    "cancelled": ("llmts: the client cancelled the call", "mcp_call_cancelled"),
    "ended": ("llmts: the client session ended during the call", "mcp_call_ended"),
    "shutdown": ("llmts: the server is stopping", "llm_test_server_shutdown"),
}


def accepts(header: str | None) -> tuple[bool, bool]:
    """Whether an ``Accept`` header admits a JSON answer and an SSE answer (no header admits both)."""
    if not header:
        return True, True
    types = {part.split(";", 1)[0].strip().lower() for part in header.split(",")}
    anything = "*/*" in types
    return (
        anything or _JSON in types or "application/*" in types,
        anything or "text/event-stream" in types or "text/*" in types,
    )


def check_server(request: PeerRequest) -> None:
    """404 when the session has no MCP server of the request's name (checked before a body is read)."""
    config = request.session.plan.configuration
    if not any(server.name == request.name for server in (config.mcp_servers if config is not None else ())):
        raise RouteNotFound(f"no MCP server {request.name!r} in this session")


def mcp_state(request: PeerRequest) -> McpServerState:
    """The session's state of the server the request names, for the configuration in force now (404 when
    it is not configured). Get it after the body was read: a reset or configure meanwhile is then seen."""
    session, name = request.session, request.name

    def build(memory: MemoryShare) -> McpServerState:  # with the session lock held: no configure meanwhile
        config = session.plan.configuration
        for server in config.mcp_servers if config is not None else ():
            if server.name == name:
                return McpServerState(server, memory=memory)
        raise RouteNotFound(f"no MCP server {name!r} in this session")

    return session.peers.state("mcp", name, build)


def stopper(state: McpServerState, client: McpClient, cancelled: Any) -> Stop:
    """Why a call should stop waiting now: ``superseded`` (its server's state was replaced by a reset,
    configure or delete), ``ended`` (its client session ended or expired), ``cancelled``
    (``notifications/cancelled``), or None."""

    def stop() -> str | None:
        if state.closed:
            return "superseded"
        if not client.usable:
            return "ended"
        if cancelled.is_set():
            return "cancelled"
        return None

    return stop


def stopped(request_id: RequestId, reason: str) -> Answer:
    """The error answer of a call that stopped for ``reason`` (a key of ``stopper``, or ``shutdown``)."""
    text, code = _STOPPED[reason]
    return Answer(error_response(request_id, INTERNAL_ERROR, text, {"code": code}), code)


def journal_call(request: PeerRequest, entry: JournalRecord, message: Message) -> None:
    """A ``tools/call``'s tool name and arguments on its journal entry (left out when malformed)."""
    try:
        name, arguments = call_arguments(message)
    except JsonRpcError:
        return
    limit = request.session.journal.preview_bytes
    entry.peer_call(
        mcp_server=request.name,
        tool_name=name,
        arguments=arguments,
        arguments_json=orjson.dumps(arguments),
        limit=limit,
    )
