"""Refused realtime handshakes over raw sockets (what the SDKs hide): the answer's status and envelope
before any 101, and the access log's status for it (docs/realtime.md, "Routes and authentication")."""

from __future__ import annotations

import base64
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from llmts.client import LlmTestServer


def _upgrade(url: str, path: str, host: str | None = None, head_only: bool = False) -> bytes:
    """The server's answer to a WebSocket upgrade: all it sends until it closes, or its head alone."""
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16)).decode()
    head = (
        f"GET {path} HTTP/1.1\r\nHost: {host or parts.netloc}\r\n"
        "Connection: Upgrade\r\nUpgrade: websocket\r\n"
        f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\nAuthorization: Bearer k\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode())
        answer = b""
        while (chunk := sock.recv(65536)) and not (head_only and b"\r\n\r\n" in answer + chunk):
            answer += chunk
        answer += chunk
    return answer


def test_refusals_are_logged_with_their_status_and_a_foreign_host_gets_403(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=True)
    missing_model = _upgrade(server.url, "/openai/v1/realtime")
    assert missing_model.startswith(b"HTTP/1.1 400 ")
    assert b'"code":"missing_required_parameter"' in missing_model.replace(b" ", b"")
    foreign = _upgrade(server.url, "/openai/v1/realtime?model=gpt-realtime", host="evil.example")
    assert foreign.startswith(b"HTTP/1.1 403 ")
    assert b"llm_test_server_host_not_allowed" in foreign and b'"type"' in foreign  # OpenAI's envelope
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        log = Path(server.log_path).read_text(encoding="utf-8")
        lines = [line for line in log.splitlines() if "/openai/v1/realtime" in line]
        if len(lines) >= 2:
            break
        time.sleep(0.1)
    assert '/openai/v1/realtime HTTP/1.1" 400' in lines[0]
    assert '/openai/v1/realtime?model=gpt-realtime HTTP/1.1" 403' in lines[1]


def test_an_unsupported_websocket_version_gets_426_naming_13(llmts_server: LlmTestServer) -> None:
    parts = urlsplit(llmts_server.url)
    key = base64.b64encode(os.urandom(16)).decode()
    head = (
        f"GET /openai/v1/realtime?model=gpt-realtime HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 8\r\n"
        f"Sec-WebSocket-Key: {key}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 426 Upgrade Required\r\n")
    assert b"\r\nSec-WebSocket-Version: 13\r\n" in answer


def test_a_double_slash_before_the_route_is_no_websocket_route(llmts_server: LlmTestServer) -> None:
    """As on the HTTP path, where ``//openai/v1/models`` is a 404: werkzeug strips an extra leading "/", so
    ``/sessions/0%2F/openai/v1/realtime`` (session ``0``, then ``//openai/...``) reached OpenAI's route and
    its envelope (found by the deep fuzz with new draws)."""
    session = llmts_server.create_session()
    for path in (
        "//openai/v1/realtime?model=gpt-realtime",
        f"/sessions/{session.id}//openai/v1/realtime?model=gpt-realtime",
        "/sessions/0%2F/openai/v1/realtime?model=gpt-realtime",
    ):
        answer = _upgrade(llmts_server.url, path)
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
        assert b'"code":"websocket_not_supported"' in answer.replace(b" ", b""), answer
    # The route itself still upgrades under the session's path.
    upgraded = _upgrade(
        llmts_server.url, f"/sessions/{session.id}/openai/v1/realtime?model=gpt-realtime", head_only=True
    )
    assert upgraded.startswith(b"HTTP/1.1 101 "), upgraded[:200]
