"""Small WSGI helpers shared by the control API and the provider dispatcher."""

from __future__ import annotations

import hmac
import io
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from http import HTTPStatus
from typing import Any

import orjson

from llmts.errors import (
    BodyIncomplete,
    BodyReadTimeout,
    BodyTooLarge,
    ControlKeyThrottled,
    InvalidRequest,
    LlmtsError,
)
from llmts.transport import client_socket
from llmts.transport.deadline import SERVER_CONNECTION_DEADLINES, Deadline, stop_reading

__all__ = [
    "StartResponse",
    "bearer_token",
    "control_error",
    "json_body",
    "read_body",
    "same_secret",
    "send",
    "status_line",
]


StartResponse = Callable[..., Any]

_STATUS_LINES = {status.value: f"{status.value} {status.phrase}" for status in HTTPStatus}


def status_line(status: int) -> str:
    return _STATUS_LINES.get(status) or f"{status} Status {status}"


def send(
    start_response: StartResponse, status: int, headers: list[tuple[str, str]], body: bytes
) -> Iterable[bytes]:
    if status != 204:
        headers = [*headers, ("Content-Length", str(len(body)))]
    start_response(status_line(status), headers)
    return [body] if body else []


def json_body(start_response: StartResponse, status: int, payload: Any) -> Iterable[bytes]:
    return send(start_response, status, [("Content-Type", "application/json")], orjson.dumps(payload))


def bearer_token(environ: Mapping[str, Any]) -> str | None:
    """The token of ``Authorization: Bearer <token>``; None without one (no header, or another scheme)."""
    scheme, _, token = str(environ.get("HTTP_AUTHORIZATION", "")).partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def bearer_matches(environ: Mapping[str, Any], key: str) -> bool:
    """The request's ``Authorization: Bearer <token>`` names ``key`` (compared in constant time)."""
    token = bearer_token(environ)
    return token is not None and same_secret(token, key)


def same_secret(presented: str, expected: str) -> bool:
    """Constant-time comparison of two credentials of any characters (``hmac.compare_digest`` refuses
    non-ASCII ``str``; a client's non-ASCII credential must be a plain mismatch, never an error)."""
    return hmac.compare_digest(
        presented.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


def read_body(environ: Mapping[str, Any], limit: int, timeout: float | None = None) -> bytes:
    """The request body, at most ``limit`` bytes, complete within ``timeout`` seconds (None: unbounded)."""
    try:
        return _read_body(environ, limit, timeout)
    except OSError:
        # gevent raises OSError (its _InvalidClientInput too) for a body that ends before its
        # Content-Length (the client left) or breaks chunked framing: the client's fault, not a bug.
        raise BodyIncomplete(
            "the request body ended before its Content-Length, or its chunked framing is broken"
        ) from None


def _read_body(environ: Mapping[str, Any], limit: int, timeout: float | None) -> bytes:
    stream = environ["wsgi.input"]
    length_text = environ.get("CONTENT_LENGTH")
    if length_text:
        try:
            length = int(length_text)
        except ValueError:
            raise InvalidRequest("Content-Length is not a number", code="invalid_request") from None
        if length > limit:
            raise BodyTooLarge(f"the request body is {length} bytes; the limit is {limit} bytes")
        return _read_within(environ, timeout, stream, length) if length > 0 else b""
    if environ.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked":
        body = _read_within(environ, timeout, stream, limit + 1)
        if len(body) > limit:
            raise BodyTooLarge(f"the request body exceeds the limit of {limit} bytes")
        return body
    return b""


def _read_within(environ: Mapping[str, Any], timeout: float | None, stream: Any, size: int) -> bytes:
    # A body already in memory (the handler's fast path read it with the head) cannot stall: no timer.
    if timeout is None or isinstance(stream, io.BytesIO):
        return bytes(stream.read(size))
    spares: dict[str, Deadline] | None = environ.get(SERVER_CONNECTION_DEADLINES)
    deadline = spares.get("body") if spares is not None else None
    if deadline is None:  # the connection's first body (or a server without spare deadlines)
        message = f"the request body did not arrive within {timeout:g} s"
        deadline = Deadline(timeout, partial(BodyReadTimeout, message))
        if spares is not None:
            spares["body"] = deadline
    deadline.arm()
    try:
        return bytes(stream.read(size))
    except BodyReadTimeout:
        # The server would otherwise wait for the rest of the body before closing the connection.
        stop_reading(client_socket(environ))
        raise
    finally:
        if spares is None:
            deadline.close()
        else:
            deadline.disarm()


def control_error(start_response: StartResponse, error: LlmtsError) -> Iterable[bytes]:
    headers = [("Content-Type", "application/json")]
    if isinstance(error, (BodyTooLarge, BodyReadTimeout, BodyIncomplete)):
        headers.append(("Connection", "close"))
    elif isinstance(error, ControlKeyThrottled):
        headers.append(("Retry-After", str(error.retry_after)))
    return send(start_response, error.http_status, headers, orjson.dumps(error.to_control_body()))
