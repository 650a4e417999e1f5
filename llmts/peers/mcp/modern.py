"""The stateless 2026-07-28 revision (mcp 2.x's ``mcp.Client`` after its ``server/discover`` probe),
sans-IO: no handshake and no session, every request carries its envelope in ``params._meta`` (protocol
version, client info, client capabilities) beside the ``Mcp-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` headers; every result says ``resultType``; the server's requests to the client travel as an
``InputRequiredResult`` that the client answers by sending the same call again with its
``inputResponses`` and the ``requestState`` (docs/mcp.md, "Revisions and transports").
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from llmts.peers.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcError,
    Message,
)
from llmts.peers.mcp.calls import MISSING_CAPABILITY, CallPlan, call_arguments, plan_call, planned
from llmts.peers.mcp.clients import McpClient
from llmts.peers.mcp.engine import Answer, answer, error_answer
from llmts.peers.mcp.revisions import MODERN_VERSIONS
from llmts.peers.mcp.state import McpServerState
from llmts.schema.mcp import McpServer

__all__ = ["MODERN", "envelope", "modern_answer", "status_for"]

MODERN = MODERN_VERSIONS[0]
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_INFO_KEY = "io.modelcontextprotocol/clientInfo"
_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
_SERVER_KEY = "io.modelcontextprotocol/serverInfo"
# Gone at 2026-07-28 (``subscriptions/listen`` replaces the GET stream and resources/subscribe: the server
# layer serves it, llmts/peers/mcp/listens.py).
_REMOVED = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)
# Results the client may cache: llmts asks it not to (``ttlMs`` 0), since a configure changes them.
_CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
_BAD_REQUEST = frozenset(
    {
        PARSE_ERROR,
        INVALID_REQUEST,
        INVALID_PARAMS,
        HEADER_MISMATCH,
        MISSING_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)


def status_for(code: int | None) -> int:
    """The HTTP status of an answer at 2026-07-28: 400 for envelope and parameter errors, 404 for an
    unknown method, 200 otherwise (the revision's table)."""
    if code is None:
        return 200
    if code in _BAD_REQUEST:
        return 400
    return 404 if code == METHOD_NOT_FOUND else 200


def _header_value(value: str) -> str:
    # Values that are not printable ASCII travel as ``=?base64?<base64 of the UTF-8>?=``.
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return value
    return value


def envelope(message: Message, header: Callable[[str], str | None]) -> McpClient:
    """The request's envelope checked against its headers; the client it describes (for this request
    only: there is no session)."""
    version = header("Mcp-Protocol-Version")
    if version not in MODERN_VERSIONS:
        data = {"supported": list(MODERN_VERSIONS), "requested": version}
        raise JsonRpcError(UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version: {version}", data)
    meta = message.params.get("_meta")
    if not isinstance(meta, dict):
        raise JsonRpcError(INVALID_PARAMS, "params._meta is required at 2026-07-28")
    info, capabilities = meta.get(_INFO_KEY), meta.get(_CAPABILITIES_KEY)
    if not (
        isinstance(info, dict) and isinstance(capabilities, dict) and isinstance(meta.get(_VERSION_KEY), str)
    ):
        needs = f"{_VERSION_KEY}, {_INFO_KEY} and {_CAPABILITIES_KEY}"
        raise JsonRpcError(INVALID_PARAMS, f"params._meta needs {needs}")
    if meta[_VERSION_KEY] != version:
        raise JsonRpcError(HEADER_MISMATCH, "Mcp-Protocol-Version and params._meta disagree")
    method = header("Mcp-Method")
    if method is not None and method != message.method:
        raise JsonRpcError(HEADER_MISMATCH, "Mcp-Method and the body's method disagree")
    name = header("Mcp-Name")
    if name is not None:
        key = "uri" if message.method == "resources/read" else "name"
        if _header_value(name) != message.params.get(key):
            raise JsonRpcError(HEADER_MISMATCH, f"Mcp-Name and params.{key} disagree")
    return McpClient(version, capabilities, info)


def _stamped(server: McpServer, method: str, result: dict[str, Any]) -> dict[str, Any]:
    result.setdefault("resultType", "complete")
    if method in _CACHEABLE:
        result.update(ttlMs=0, cacheScope="private")
    meta = dict(result.get("_meta") or {})
    meta[_SERVER_KEY] = {"name": server.name, "version": server.version}
    result["_meta"] = meta
    return result


def _discover(server: McpServer) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(MODERN_VERSIONS),
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {}},
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def modern_answer(state: McpServerState, client: McpClient, message: Message) -> Answer | CallPlan:
    assert message.id is not None and message.method is not None
    method = message.method
    server = state.config
    try:
        if method in _REMOVED:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method} (not at 2026-07-28)")
        if method == "server/discover":
            result = _stamped(server, method, _discover(server))
            return Answer({"jsonrpc": "2.0", "id": message.id, "result": result})
        if method == "tools/call":
            return _call(state, client, message)
    except JsonRpcError as error:
        return error_answer(message.id, error)
    outcome = answer(state, client, message)
    assert isinstance(outcome, Answer)
    answered = outcome.message.get("result")
    if isinstance(answered, dict):
        _stamped(server, method, answered)
    return outcome


def _call(state: McpServerState, client: McpClient, message: Message) -> Answer | CallPlan:
    assert message.id is not None
    token = message.params.get("requestState")
    if token is None:
        plan = plan_call(state, client, message)
        if plan.asks:
            asks = enumerate(plan.asks, 1)
            requests = {f"n{number}": _input_request(ask.method, ask.params) for number, ask in asks}
            methods = tuple(ask.method for ask in plan.asks)
            pending = {
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": state.await_input(plan.tool, plan.index, methods),
            }
            return Answer({"jsonrpc": "2.0", "id": message.id, "result": pending})
    else:
        resumed = state.resume(token) if isinstance(token, str) else None
        name, _ = call_arguments(message)
        tool = state.tools.get(name)
        if resumed is None or tool is None or resumed[0] != name or resumed[1] >= len(tool.results):
            raise JsonRpcError(INVALID_PARAMS, "requestState is unknown, used or from another configuration")
        plan = planned(message, client, name, resumed[1], tool.results[resumed[1]], asks=False)
        responses = message.params.get("inputResponses")
        responses = responses if isinstance(responses, dict) else {}
        plan.client_answers = tuple(
            {"method": method, "id": f"n{number}", "result": responses.get(f"n{number}")}
            for number, method in enumerate(resumed[2], 1)
        )
    result = plan.response.get("result")
    if isinstance(result, dict):
        _stamped(state.config, "tools/call", result)
    return plan


def _input_request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    request: dict[str, Any] = {"method": method}
    if params is not None:
        request["params"] = params
    return request
