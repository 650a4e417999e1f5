"""Fixtures of the record-and-replay tests: the scripted upstream servers (docs/recording.md)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from llmts import LlmTestServer
from tests.support.servers import BackgroundStops


@pytest.fixture(scope="session")
def upstream_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """The "real provider": a second llmts server, scripted per test through its own sessions (so one
    serves every module of this folder)."""
    server = LlmTestServer.start()
    try:
        yield server
    finally:
        background_stops.stop(server)


class EchoUpstream:
    """A plain HTTP server that answers every request with what it received (path, query, headers), and
    can be told to wait first or to answer with chosen headers and body."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.delay = 0.0
        self.answer: tuple[int, list[tuple[str, str]], bytes] | None = None
        echo = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                seen = {
                    "path": self.path,
                    "headers": [(k.lower(), v) for k, v in self.headers.items()],
                    "body": body.decode(),
                }
                echo.seen.append(seen)
                if echo.delay:
                    time.sleep(echo.delay)
                status, headers, payload = echo.answer or (
                    200,
                    [("Content-Type", "application/json")],
                    json.dumps({"echo": seen}).encode(),
                )
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def echo_upstream() -> Iterator[EchoUpstream]:
    echo = EchoUpstream()
    try:
        yield echo
    finally:
        echo.close()
