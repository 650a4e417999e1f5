"""JSON-RPC 2.0 as MCP and A2A speak it: parsing one message, and the error objects.

Hostile input is normal input: any body that is not one JSON-RPC message becomes the protocol's own
parse error (-32700) or invalid-request error (-32600), never an exception the server must catch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from llmts.schema.wire_values import MAX_JSON_NESTING, nests_deeper

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_NESTING",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcError",
    "Message",
    "RequestId",
    "error_object",
    "error_response",
    "parse_message",
    "result_response",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = str | int

# Nesting of a message's JSON (docs/mcp.md and docs/a2a.md, "Limits"): orjson reads about 1,024 levels
# but writes only about 254, so a deeper value could be accepted and then fail to be journaled or echoed.
MAX_NESTING = MAX_JSON_NESTING


class JsonRpcError(Exception):
    """An error answer: raised by a method's handler, rendered as the response's ``error`` member."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_object(self) -> dict[str, Any]:
        return error_object(self.code, self.message, self.data)


@dataclass(frozen=True, slots=True)
class Message:
    """One JSON-RPC message. A request has a ``method`` and an ``id``; a notification a ``method`` and no
    ``id``; a response (the client answering the server's own request) an ``id`` and a ``result`` or an
    ``error``."""

    method: str | None
    id: RequestId | None
    params: dict[str, Any]
    result: Any = None
    error: dict[str, Any] | None = None

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.id is not None

    @property
    def is_notification(self) -> bool:
        return self.method is not None and self.id is None

    @property
    def is_response(self) -> bool:
        return self.method is None


def error_object(code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def error_response(request_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error_object(code, message, data)}


def result_response(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _request_id(value: Any) -> RequestId | None:
    # bool is an int to Python, not to JSON-RPC.
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise JsonRpcError(INVALID_REQUEST, "id must be a string or an integer")


def parse_message(body: bytes) -> Message:
    """One JSON-RPC 2.0 message from a request body; ``JsonRpcError`` (parse error or invalid request)
    for anything else. Batches are refused: no revision the SDKs speak sends them over HTTP. JSON nested
    deeper than ``MAX_NESTING`` is an invalid request."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise JsonRpcError(PARSE_ERROR, "Parse error: the body is not JSON") from None
    if nests_deeper(data, MAX_NESTING):
        raise JsonRpcError(INVALID_REQUEST, f"the message nests JSON deeper than {MAX_NESTING} levels")
    if isinstance(data, list):
        raise JsonRpcError(INVALID_REQUEST, "JSON-RPC batches are not supported")
    if not isinstance(data, dict):
        raise JsonRpcError(INVALID_REQUEST, "a JSON-RPC message is a JSON object")
    if data.get("jsonrpc") != "2.0":
        raise JsonRpcError(INVALID_REQUEST, 'jsonrpc must be "2.0"')
    method = data.get("method")
    raw_params = data.get("params")
    if raw_params is None:
        params: dict[str, Any] = {}
    elif isinstance(raw_params, dict):
        params = raw_params
    else:
        raise JsonRpcError(INVALID_PARAMS, "params must be an object")
    if method is not None:
        if not isinstance(method, str) or not method:
            raise JsonRpcError(INVALID_REQUEST, "method must be a non-empty string")
        request_id = _request_id(data["id"]) if "id" in data else None
        return Message(method, request_id, params)
    if "id" not in data or ("result" in data) == ("error" in data):
        raise JsonRpcError(INVALID_REQUEST, "a message needs a method, or an id with a result or an error")
    error = data.get("error")
    if error is not None and not isinstance(error, dict):
        raise JsonRpcError(INVALID_REQUEST, "error must be an object")
    return Message(None, _request_id(data["id"]), {}, data.get("result"), error)
