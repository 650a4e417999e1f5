"""What the MCP transports share (``mcp_http.py``, ``mcp_legacy.py``): the server a request names, the
``Accept`` header, and a call's journal fields."""

from __future__ import annotations

import orjson

from llmts.errors import RouteNotFound
from llmts.peers.jsonrpc import JsonRpcError, Message
from llmts.peers.mcp import McpServerState
from llmts.peers.mcp.calls import call_arguments
from llmts.runtime.journal import JournalRecord
from llmts.schema.mcp import McpServer
from llmts.server.peers.context import PeerRequest

__all__ = ["accepts", "journal_call", "mcp_state"]

_JSON = "application/json"


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


def _server_config(request: PeerRequest) -> McpServer:
    config = request.session.plan.configuration
    for server in config.mcp_servers if config is not None else ():
        if server.name == request.name:
            return server
    raise RouteNotFound(f"no MCP server {request.name!r} in this session")


def mcp_state(request: PeerRequest) -> McpServerState:
    """The session's state of the server the request names (404 when it is not configured)."""
    server = _server_config(request)
    return request.session.peers.state("mcp", request.name, lambda: McpServerState(server))


def journal_call(request: PeerRequest, entry: JournalRecord, message: Message) -> None:
    """A ``tools/call``'s tool name and arguments on its journal entry (left out when malformed)."""
    try:
        name, arguments = call_arguments(message)
    except JsonRpcError:
        return
    size = len(orjson.dumps(arguments))
    limit = request.session.journal.preview_bytes
    entry.peer_call(
        mcp_server=request.name, tool_name=name, arguments=arguments, arguments_bytes=size, limit=limit
    )
