"""The transport notices a client that leaves during a delay (raw sockets), and keeps serving others."""

from __future__ import annotations

import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from llmts import ConfigBuilder
from tests.helpers import USER_HI, raw_request


def test_client_leaving_during_delay_ends_the_wait(own_server_factory: Any) -> None:
    server = own_server_factory()
    session = server.create_session()
    session.configure(ConfigBuilder().scenario().text("never read", delay_ms=5000).text("next").build())
    parts = urlsplit(session.provider_base)
    body = json.dumps({"model": "gpt-4.1-mini", "messages": USER_HI})
    request = (
        f"POST {parts.path}/openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()

    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        sock.sendall(request)
        time.sleep(0.2)
    left_at = time.monotonic()

    # The server logs the abandoned request (499) once its wait noticed the departure: well before 5 s.
    assert server.log_path is not None
    while b'" 499 ' not in server.log_path.read_bytes():
        assert time.monotonic() - left_at < 2.0, "the delay was not interrupted by the disconnect"
        time.sleep(0.02)
    follow_up = raw_request(
        session.provider_base,
        "POST",
        "/openai/v1/chat/completions",
        {"model": "gpt-4.1-mini", "messages": USER_HI},
    )
    assert follow_up.json()["choices"][0]["message"]["content"] == "next"
