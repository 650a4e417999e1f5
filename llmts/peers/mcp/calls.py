"""``tools/call``: which scripted result answers a call, and the plan of its answer (sans-IO): the delay,
the server's own requests to the client first (elicitation, sampling, roots), the notifications that
precede the result (a flood, progress), the JSON-RPC response, the delivery plan and the protocol fault.
The server layer (``llmts/server/peers/mcp_http.py``) carries the plan out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmts.errors import MemoryBudgetExceeded
from llmts.peers.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JsonRpcError,
    Message,
    RequestId,
)
from llmts.peers.mcp.clients import McpClient
from llmts.peers.mcp.render import call_result
from llmts.peers.mcp.revisions import STRUCTURED_OUTPUT, TOOL_ANNOTATIONS, at_least
from llmts.peers.mcp.state import McpServerState
from llmts.schema.faults import StreamDelivery
from llmts.schema.mcp import McpToolResult

__all__ = [
    "MISSING_CAPABILITY",
    "CallPlan",
    "CallRefused",
    "ServerAsk",
    "call_arguments",
    "plan_call",
    "planned",
]

# The 2026-07-28 revision's code for a request the client's declared capabilities cannot serve; llmts
# answers it at every revision (a clear, documented error).
MISSING_CAPABILITY = -32021


class CallRefused(JsonRpcError):
    """A JSON-RPC error whose journal ``error_code`` is llmts's reason rather than ``jsonrpc_<code>``."""

    def __init__(self, code: int, message: str, reason: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.reason = reason


def memory_refused(what: str) -> CallRefused:
    """``what`` does not fit the server's memory budget (docs/mcp.md "Limits")."""
    code = MemoryBudgetExceeded.code
    message = (
        f"llmts: the server's memory budget (--max-memory) has no room for {what}; delete or reset sessions"
    )
    return CallRefused(INTERNAL_ERROR, message, code, {"code": code})


@dataclass(frozen=True, slots=True)
class ServerAsk:
    """A request the server sends the client before the result; ``params`` without an id yet."""

    method: str
    params: dict[str, Any] | None


@dataclass(slots=True)
class CallPlan:
    tool: str
    index: int
    delay_seconds: float
    asks: tuple[ServerAsk, ...]
    # Sent before the response, after the client answered every ask.
    notifications: tuple[dict[str, Any], ...]
    response: dict[str, Any]
    error_code: str | None
    delivery: StreamDelivery | None
    expire: bool
    # What the client answered in an earlier round (2026-07-28 ``inputResponses``), for the journal.
    client_answers: tuple[dict[str, Any], ...] = ()

    @property
    def streams(self) -> bool:
        """Answered as an SSE stream: something precedes the result, or a delivery plan acts on it."""
        return bool(self.asks or self.notifications) or self.delivery is not None


def call_arguments(message: Message) -> tuple[str, dict[str, Any]]:
    params = message.params
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise JsonRpcError(INVALID_PARAMS, "tools/call needs params.name, a tool name")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise JsonRpcError(INVALID_PARAMS, "tools/call params.arguments must be an object")
    return name, arguments


def _progress_token(message: Message) -> str | int | None:
    meta = message.params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)):
        return token
    return None


def _asks(result: McpToolResult, client: McpClient) -> tuple[ServerAsk, ...]:
    asks = []
    version = client.version
    if result.elicit is not None:
        if not at_least(version, STRUCTURED_OUTPUT):
            raise JsonRpcError(
                MISSING_CAPABILITY, f"elicitation needs protocol revision {STRUCTURED_OUTPUT} or later"
            )
        params: dict[str, Any] = {
            "message": result.elicit.message,
            "requestedSchema": result.elicit.requested_schema,
        }
        if version >= "2025-11-25":
            params = {"mode": "form", **params}
        asks.append(("elicitation", ServerAsk("elicitation/create", params)))
    if result.sample is not None:
        sample: dict[str, Any] = {
            "messages": result.sample.wire_messages(),
            "maxTokens": result.sample.max_tokens,
        }
        if result.sample.system_prompt is not None:
            sample["systemPrompt"] = result.sample.system_prompt
        asks.append(("sampling", ServerAsk("sampling/createMessage", sample)))
    if result.list_roots:
        asks.append(("roots", ServerAsk("roots/list", None)))
    for capability, ask in asks:
        if not client.declares(capability):
            raise JsonRpcError(
                MISSING_CAPABILITY,
                f"the tool sends {ask.method} before its result, but the client did not declare the "
                f"{capability} capability",
                {"requiredCapabilities": {capability: {}}},
            )
    return tuple(ask for _, ask in asks)


def _notifications(
    result: McpToolResult, token: str | int | None, client: McpClient
) -> tuple[dict[str, Any], ...]:
    notes: list[dict[str, Any]] = []
    # The flood is logging at level info: not for a client that asked for less (``logging/setLevel``).
    flood = result.flood if client.wants_log("info") else 0
    version = client.version
    for number in range(1, flood + 1):
        notes.append(
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "logger": "llmts", "data": f"flood {number} of {flood}"},
            }
        )
    if token is not None:  # progress goes only to a call that asked for it
        for step in result.progress:
            params: dict[str, Any] = {"progressToken": token, "progress": step.progress}
            if step.total is not None:
                params["total"] = step.total
            if step.message is not None and at_least(version, TOOL_ANNOTATIONS):
                params["message"] = step.message
            notes.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
    return tuple(notes)


def _response(
    request_id: RequestId, result: McpToolResult, version: str
) -> tuple[dict[str, Any], str | None]:
    answer_id: RequestId = f"llmts-wrong-id-{request_id}" if result.fault == "wrong_id" else request_id
    if result.error is not None:
        error = JsonRpcError(result.error.code, result.error.message, result.error.data)
        return {"jsonrpc": "2.0", "id": answer_id, "error": error.to_object()}, f"jsonrpc_{result.error.code}"
    return {"jsonrpc": "2.0", "id": answer_id, "result": call_result(result, version)}, None


def _asks_client(result: McpToolResult) -> bool:
    return result.elicit is not None or result.sample is not None or result.list_roots


def plan_call(state: McpServerState, client: McpClient, message: Message, *, sse: bool = True) -> CallPlan:
    """Consume the result that answers ``message`` and plan its answer; ``JsonRpcError`` for an unknown
    tool, an exhausted script, or a server request the client cannot take (the client's capabilities and
    revision, and ``sse``: whether its answer may be an SSE stream). A refused call consumes nothing."""
    assert message.id is not None
    name, arguments = call_arguments(message)
    tool = state.tools.get(name)
    if tool is None:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")

    def check(result: McpToolResult) -> None:  # under the script's lock, before the result is consumed
        _asks(result, client)
        if not sse and _asks_client(result):
            text = "this call asks the client something first: accept text/event-stream"
            raise CallRefused(INVALID_REQUEST, text, "mcp_not_acceptable")

    taken = state.take_result(tool, arguments, check)
    if taken is None:
        what = "no scripted result left" if tool.results else "no scripted results"
        raise JsonRpcError(
            INTERNAL_ERROR,
            f"llmts: tool {name!r} has {what} for these arguments (terminal_policy {tool.terminal_policy})",
            {"code": "llm_test_server_tool_exhausted"},
        )
    index, result = taken
    return planned(message, client, name, index, result)


def planned(
    message: Message, client: McpClient, name: str, index: int, result: McpToolResult, *, asks: bool = True
) -> CallPlan:
    """The plan of ``result`` (the tool's ``index``-th) answering ``message``; ``asks=False``: the client
    already answered the server's requests (the 2026-07-28 revision's second round)."""
    assert message.id is not None
    response, error_code = _response(message.id, result, client.version)
    return CallPlan(
        tool=name,
        index=index,
        delay_seconds=result.delay_ms / 1000,
        asks=_asks(result, client) if asks else (),
        notifications=_notifications(result, _progress_token(message), client),
        response=response,
        error_code=error_code,
        delivery=result.stream_delivery,
        expire=result.fault == "session_expired",
    )
