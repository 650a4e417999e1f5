"""The stateless 2026-07-28 revision (mcp 2.x ``Client``): not spoken yet. ``server/discover`` gets
-32601, which makes the client fall back to the ``initialize`` handshake at once."""

from __future__ import annotations

from collections.abc import Iterable

from llmts.peers.jsonrpc import METHOD_NOT_FOUND, JsonRpcError, parse_message
from llmts.peers.mcp import McpServerState
from llmts.peers.mcp.revisions import HANDSHAKE_VERSIONS
from llmts.server.peers.context import PeerRequest

__all__ = ["modern_post"]

UNSUPPORTED_PROTOCOL_VERSION = -32022


def modern_post(
    request: PeerRequest, state: McpServerState, body: bytes, json_ok: bool, sse_ok: bool
) -> Iterable[bytes]:
    try:
        message = parse_message(body)
    except JsonRpcError as invalid:
        return request.json(400, {"jsonrpc": "2.0", "id": None, "error": invalid.to_object()})
    if message.method == "server/discover":
        missing = JsonRpcError(METHOD_NOT_FOUND, "Method not found: server/discover")
        return request.json(404, {"jsonrpc": "2.0", "id": message.id, "error": missing.to_object()})
    requested = request.header("Mcp-Protocol-Version")
    data = {"supported": list(HANDSHAKE_VERSIONS), "requested": requested}
    error = JsonRpcError(UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version: {requested}", data)
    return request.json(400, {"jsonrpc": "2.0", "id": message.id, "error": error.to_object()})
