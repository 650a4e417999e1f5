"""The methods of a scripted MCP server (handshake revisions, sans-IO): one JSON-RPC message and the
client session in, the answer out: a JSON-RPC response (``Answer``) or, for ``tools/call``, the plan of
an answer that may stream (``CallPlan``, llmts/peers/mcp/calls.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmts.peers.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonRpcError,
    Message,
    RequestId,
    error_response,
)
from llmts.peers.mcp.calls import CallPlan, memory_refused, plan_call
from llmts.peers.mcp.clients import CLIENT_RESIDENT_BYTES, LOG_LEVELS, McpClient, subscription_bytes
from llmts.peers.mcp.render import (
    initialize_result,
    page,
    prompt_item,
    prompt_messages,
    resource_contents,
    resource_item,
    template_item,
    tool_item,
)
from llmts.peers.mcp.revisions import negotiate
from llmts.peers.mcp.state import McpServerState
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = [
    "KNOWN_METHODS",
    "LOG_LEVELS",
    "RESOURCE_NOT_FOUND",
    "Answer",
    "answer",
    "error_answer",
    "initialize",
    "notified",
]

# The 2025 specification's code for an unknown resource URI.
RESOURCE_NOT_FOUND = -32002


@dataclass(frozen=True, slots=True)
class Answer:
    """A JSON-RPC response to send as it is; ``error_code`` is the journal's when it is an error."""

    message: dict[str, Any]
    error_code: str | None = None


def _result(request_id: RequestId, result: dict[str, Any]) -> Answer:
    return Answer({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_answer(request_id: RequestId | None, error: JsonRpcError) -> Answer:
    """The error's response; journaled as ``jsonrpc_<code>``, or llmts's reason for a refused call."""
    reason = getattr(error, "reason", None) or f"jsonrpc_{error.code}"
    return Answer(error_response(request_id, error.code, error.message, error.data), reason)


def initialize(
    state: McpServerState, message: Message, client: McpClient | None = None
) -> tuple[McpClient | None, Answer]:
    """``initialize``: a new client session (or ``client``, one the legacy transport opened with its
    stream) at the client's revision when llmts speaks it, else the newest (the client then decides
    whether it can go on)."""
    assert message.id is not None
    params = message.params
    capabilities = params.get("capabilities")
    client_info = params.get("clientInfo")
    if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
        error = JsonRpcError(
            INVALID_PARAMS, "initialize needs params.capabilities and params.clientInfo objects"
        )
        return None, error_answer(message.id, error)
    version = negotiate(params.get("protocolVersion"))
    if client is None:
        # A full book ends its oldest session for the new one: no growth then.
        if not state.clients.full and not state.memory.fits(CLIENT_RESIDENT_BYTES):
            return None, error_answer(message.id, memory_refused("another client session"))
        client = state.clients.open(version, capabilities, client_info)
    else:
        client.handshake(version, capabilities, client_info)
    return client, _result(message.id, initialize_result(state.config, version))


def notified(client: McpClient, message: Message) -> None:
    """A client notification: the handshake's end, or a cancellation of a call in flight; others (roots
    changed, progress of the client's own) need nothing."""
    if message.method == "notifications/initialized":
        client.initialized = True
    elif message.method == "notifications/cancelled":
        client.cancel(message.params.get("requestId"))


def answer(
    state: McpServerState, client: McpClient, message: Message, *, sse: bool = True
) -> Answer | CallPlan:
    """Any request but ``initialize``; a ``JsonRpcError`` from a method becomes its error answer. ``sse``:
    whether the answer may be an SSE stream (a call that asks the client something first must be)."""
    assert message.id is not None and message.method is not None
    method = _METHODS.get(message.method)
    try:
        if method is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {message.method}")
        if method is _call:
            return plan_call(state, client, message, sse=sse)
        return _result(message.id, method(state, client, message.params))
    except JsonRpcError as error:
        return error_answer(message.id, error)


def _ping(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    return {}


def _paged(
    params: dict[str, Any], items: list[Any], key: str, render: Any, state: McpServerState, client: McpClient
) -> dict[str, Any]:
    chosen, next_cursor = page(items, params.get("cursor"), state.config.page_size)
    result: dict[str, Any] = {key: [render(item, client.version) for item in chosen]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _tools(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    return _paged(params, state.config.tools, "tools", tool_item, state, client)


def _resources(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    return _paged(params, state.config.resources, "resources", resource_item, state, client)


def _templates(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    templates = state.config.resource_templates
    return _paged(params, templates, "resourceTemplates", template_item, state, client)


def _prompts(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    return _paged(params, state.config.prompts, "prompts", prompt_item, state, client)


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise JsonRpcError(INVALID_PARAMS, "params.uri must be a non-empty string")
    return uri


def _read(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    uri = _uri(params)
    resource = state.resources.get(uri)
    if resource is None:
        raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
    return resource_contents(resource)


def _subscribe(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    uri = _uri(params)
    if uri not in state.resources:
        raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
    if (
        uri not in client.subscriptions
        and len(client.subscriptions) >= PEER_LIMITS["mcp_subscriptions_per_session"]
    ):
        raise JsonRpcError(INVALID_REQUEST, "too many subscriptions in this session")
    if uri not in client.subscriptions and not state.memory.fits(subscription_bytes(uri)):
        raise memory_refused("another subscription")
    client.subscribe((uri,))
    return {}


def _unsubscribe(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    client.unsubscribe(_uri(params))
    return {}


def _get_prompt(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    prompt = state.prompts.get(name) if isinstance(name, str) else None
    if prompt is None:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise JsonRpcError(INVALID_PARAMS, "prompts/get params.arguments must map names to strings")
    return prompt_messages(prompt, arguments)


def _set_level(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise JsonRpcError(INVALID_PARAMS, f"params.level must be one of {', '.join(LOG_LEVELS)}")
    client.log_level = level
    return {}


def _complete(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(params.get("ref"), dict) or not isinstance(params.get("argument"), dict):
        raise JsonRpcError(INVALID_PARAMS, "completion/complete needs params.ref and params.argument")
    return {"completion": {"values": [], "total": 0, "hasMore": False}}


def _call(state: McpServerState, client: McpClient, params: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("tools/call is planned by plan_call")  # pragma: no cover


_METHODS = {
    "ping": _ping,
    "tools/list": _tools,
    "tools/call": _call,
    "resources/list": _resources,
    "resources/templates/list": _templates,
    "resources/read": _read,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "prompts/list": _prompts,
    "prompts/get": _get_prompt,
    "logging/setLevel": _set_level,
    "completion/complete": _complete,
}

KNOWN_METHODS = frozenset({"initialize", *_METHODS})
