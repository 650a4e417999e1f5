"""``subscriptions/listen`` (2026-07-28), sans-IO: the revision's replacement of the GET stream,
``resources/subscribe`` and the handshake revisions' change notifications. The request names what the
client wants told (``params.notifications``); its answer is a long-lived SSE stream that opens with
``notifications/subscriptions/acknowledged`` (the subset llmts honors: everything asked for), carries a
``list_changed`` or ``resources/updated`` whenever a configure changes what it watches, and ends
gracefully with a ``complete`` result. Every frame names the listen's id in ``_meta`` (docs/mcp.md,
"Change notifications at 2026-07-28"). The stream itself is ``llmts/server/peers/mcp_streams.py``.
"""

from __future__ import annotations

from typing import Any

from llmts.peers.jsonrpc import INVALID_PARAMS, JsonRpcError, RequestId
from llmts.peers.mcp.calls import memory_refused
from llmts.peers.mcp.clients import CLIENT_RESIDENT_BYTES, SUBSCRIPTION_ID_KEY, McpClient, subscription_bytes
from llmts.peers.mcp.revisions import MODERN_VERSIONS
from llmts.peers.mcp.state import McpServerState
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = ["LISTEN", "Listen", "acknowledged", "completed", "open_listen"]

LISTEN = "subscriptions/listen"
# The filter's flags and the list each one watches.
_FLAGS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}
_URIS = "resourceSubscriptions"


class Listen:
    """A parsed listen request: what the acknowledgement echoes, the lists watched, the resource URIs."""

    __slots__ = ("honored", "kinds", "uris")

    def __init__(self, params: dict[str, Any]) -> None:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.notifications must be an object")
        self.honored: dict[str, Any] = {}
        kinds = []
        for flag, kind in _FLAGS.items():
            value = wanted.get(flag)
            if value is not None and not isinstance(value, bool):
                raise JsonRpcError(INVALID_PARAMS, f"params.notifications.{flag} must be a boolean")
            if value:
                self.honored[flag] = True
                kinds.append(kind)
        uris = wanted.get(_URIS)
        if uris is not None and not (isinstance(uris, list) and all(isinstance(uri, str) for uri in uris)):
            raise JsonRpcError(INVALID_PARAMS, f"params.notifications.{_URIS} must be a list of strings")
        self.uris: list[str] = list(dict.fromkeys(uris or ()))
        limit = PEER_LIMITS["mcp_subscriptions_per_session"]
        if len(self.uris) > limit:
            raise JsonRpcError(INVALID_PARAMS, f"params.notifications.{_URIS} names more than {limit} URIs")
        most = PEER_LIMITS["mcp_uri_chars"]
        if any(len(uri) > most for uri in self.uris):  # no configured resource has a longer one
            raise JsonRpcError(
                INVALID_PARAMS, f"params.notifications.{_URIS}: a URI has at most {most} characters"
            )
        if self.uris:
            self.honored[_URIS] = self.uris
        self.kinds = frozenset(kinds)


def open_listen(state: McpServerState, listen: Listen, subscription_id: RequestId) -> McpClient | None:
    """The listen's stream as a pseudo client session of the server (kept across configures like a client
    session); None when ``mcp_listens_per_server`` are open already; ``memory_refused`` (raised) when the
    memory budget has no room for it and the URIs it subscribes to."""
    if state.listens.full:  # refused for the count before any journal entry is evicted for room
        return None
    listener = McpClient(MODERN_VERSIONS[0], {}, {})
    needed = CLIENT_RESIDENT_BYTES + sum(map(subscription_bytes, listen.uris))
    if not state.memory.fits(needed):
        raise memory_refused("another subscriptions/listen stream")
    listener.listening = listen.kinds
    listener.subscription_id = subscription_id
    listener.subscribe(listen.uris)
    return listener if state.listens.admit(listener) else None


def acknowledged(listen: Listen, subscription_id: RequestId) -> dict[str, Any]:
    """The stream's first frame."""
    params = {"notifications": listen.honored, "_meta": {SUBSCRIPTION_ID_KEY: subscription_id}}
    return {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": params}


def completed(subscription_id: RequestId, server_info: dict[str, Any]) -> dict[str, Any]:
    """The stream's graceful end: the listen's result."""
    meta = {SUBSCRIPTION_ID_KEY: subscription_id, "io.modelcontextprotocol/serverInfo": server_info}
    return {"jsonrpc": "2.0", "id": subscription_id, "result": {"resultType": "complete", "_meta": meta}}
