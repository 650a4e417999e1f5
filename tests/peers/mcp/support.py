"""Helpers of the MCP tests: the installed ``mcp`` major's names, running a coroutine, and a raw
Streamable HTTP client for what the SDKs hide (status codes, headers, frames, the GET stream)."""

from __future__ import annotations

import builtins
import http.client
import importlib
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio

from llmts.client.mcp import mcp_major
from tests.helpers import RawResponse, raw_request

MCP_MAJOR = mcp_major()
# What escapes the SDK's task groups (the ``exceptiongroup`` backport before Python 3.11).
EXCEPTION_GROUP: type[BaseException] = getattr(builtins, "BaseExceptionGroup", None) or (
    importlib.import_module("exceptiongroup").BaseExceptionGroup
)
LATEST = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT_BOTH = "application/json, text/event-stream"


def mcp_error_type() -> type[Exception]:
    """The exception a call raises for a JSON-RPC error: ``MCPError`` (2.x) or ``McpError`` (1.x)."""
    if MCP_MAJOR >= 2:
        from mcp import MCPError

        return MCPError
    from mcp.shared.exceptions import McpError  # type: ignore[import-not-found,unused-ignore]

    return McpError  # type: ignore[no-any-return,unused-ignore]


def error_code(error: BaseException) -> int:
    """The JSON-RPC code of either major's error."""
    inner = getattr(error, "error", None)
    return int(inner.code if inner is not None else error.code)  # type: ignore[attr-defined]


def field(model: Any, name: str) -> Any:
    """A result model's field by its snake_case name (2.x) or camelCase name (1.x)."""
    if hasattr(model, name):
        return getattr(model, name)
    head, *rest = name.split("_")
    return getattr(model, head + "".join(part.title() for part in rest))


def run(function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return anyio.run(function, *args)


def events(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body (comments and empty events skipped)."""
    messages = []
    for block in body.decode().split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data and "".join(data):
            messages.append(json.loads("".join(data)))
    return messages


class Wire:
    """Raw Streamable HTTP requests to one MCP server of a session."""

    def __init__(self, provider_base: str, name: str) -> None:
        self.base = provider_base
        self.path = f"/mcp/{name}"
        self._ids = 0

    def post(
        self,
        message: dict[str, Any] | bytes,
        session: str | None = None,
        headers: dict[str, str] | None = None,
        version: str | None = LATEST,
    ) -> RawResponse:
        sent = {"Accept": ACCEPT_BOTH}
        if session is not None:
            sent["Mcp-Session-Id"] = session
            if version is not None:
                sent["Mcp-Protocol-Version"] = version
        sent.update(headers or {})
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        return raw_request(self.base, "POST", self.path, body, sent)

    @property
    def last_id(self) -> int:
        return self._ids

    def request(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> RawResponse:
        self._ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            message["params"] = params
        return self.post(message, **kwargs)

    def initialize(self, version: str = LATEST, capabilities: dict[str, Any] | None = None) -> str:
        params = {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        response = self.request("initialize", params)
        assert response.status == 200, response.body
        session = response.headers["mcp-session-id"]
        ack = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session, version=version)
        assert ack.status == 202
        return session

    def raw(
        self, method: str, headers: dict[str, str] | None = None, body: bytes | None = None
    ) -> RawResponse:
        return raw_request(self.base, method, self.path, body, headers)

    @contextmanager
    def stream(self, session: str, version: str = LATEST) -> Iterator[StreamReader]:
        """The GET stream, read incrementally."""
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session, "Mcp-Protocol-Version": version}
        with self._open("GET", None, headers) as reader:
            yield reader

    @contextmanager
    def posting(self, message: dict[str, Any], session: str) -> Iterator[StreamReader]:
        """A POST whose SSE answer is read incrementally (a call that waits on the client)."""
        headers = {
            "Accept": ACCEPT_BOTH,
            "Content-Type": "application/json",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": LATEST,
        }
        with self._open("POST", json.dumps(message).encode(), headers) as reader:
            yield reader

    @contextmanager
    def _open(self, method: str, body: bytes | None, headers: dict[str, str]) -> Iterator[StreamReader]:
        parts = urlsplit(self.base)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        try:
            connection.request(method, parts.path.rstrip("/") + self.path, body=body, headers=headers)
            yield StreamReader(connection.getresponse())
        finally:
            connection.close()


class StreamReader:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.response = response
        self.status = response.status
        self.headers = {k.lower(): v for k, v in response.getheaders()}

    def next_message(self, timeout: float = 5.0) -> dict[str, Any] | None:
        """The next JSON-RPC message, or None when the stream ended."""
        deadline = time.monotonic() + timeout
        data: list[str] = []
        while time.monotonic() < deadline:
            try:
                line = self.response.readline()
            except TimeoutError:
                continue
            if not line:
                return None
            text = line.decode().rstrip("\r\n")
            if text.startswith("data:"):
                data.append(text[5:].lstrip())
            elif not text and data and "".join(data):
                return json.loads("".join(data))  # type: ignore[no-any-return]
        raise AssertionError("no message on the GET stream in time")
