"""A response's first write waits for the other ready greenlets (docs/architecture.md, "The server's hot
path"): the answers of one pass of the event loop leave together. Under llmts's own loop (the default
worker) and under the gevent_pywsgi handler."""

from __future__ import annotations

import gevent

from llmts.server.http.connection import Connection, Http1Server
from llmts.server.http.connections import ConnectionTracker
from llmts.server.http.parser import RequestParser
from llmts.server.http.pywsgi_handler import LlmtsPyWSGIHandler


class _Socket:
    """Records each ``send`` in the shared log and takes every byte."""

    def __init__(self, name: str, log: list[str]) -> None:
        self._name = name
        self._log = log
        self.sent = b""

    def send(self, data: bytes, flags: int = 0, timeout: float | None = None) -> int:
        self._log.append(f"{self._name} sent")
        self.sent += bytes(data)
        return len(data)


def _handler(sock: _Socket) -> LlmtsPyWSGIHandler:
    handler = LlmtsPyWSGIHandler.__new__(LlmtsPyWSGIHandler)
    handler.request_version = "HTTP/1.1"
    handler.command = "GET"
    handler.close_connection = False
    handler.socket = sock
    handler.response_length = 0
    handler.response_use_chunked = False
    handler.result = None
    handler.start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return handler


def test_a_pywsgi_response_leaves_after_the_other_ready_greenlets_have_run() -> None:
    log: list[str] = []
    sockets = {name: _Socket(name, log) for name in ("a", "b")}

    def answer(name: str) -> None:
        handler = _handler(sockets[name])
        log.append(f"{name} ready")
        handler._write_with_headers(b"ok")

    gevent.joinall([gevent.spawn(answer, "a"), gevent.spawn(answer, "b")], raise_error=True)
    # Without the yield: ["a ready", "a sent", "b ready", "b sent"].
    assert log == ["a ready", "b ready", "a sent", "b sent"]
    for sock in sockets.values():
        assert sock.sent.startswith(b"HTTP/1.1 200 OK\r\n") and sock.sent.endswith(b"\r\n\r\nok")


def test_a_response_leaves_after_the_other_ready_greenlets_have_run() -> None:
    log: list[str] = []
    sockets = {name: _Socket(name, log) for name in ("a", "b")}
    server = Http1Server(None, {}, ConnectionTracker(5.0, 5.0), None, None)

    def answer(name: str) -> None:
        connection = Connection(server, sockets[name], ("127.0.0.1", 1))
        parser = RequestParser({})
        parser.feed(b"GET / HTTP/1.1\r\n\r\n")
        [connection.request] = parser.ready
        connection.start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        log.append(f"{name} ready")
        connection._write_result([b"ok"])

    gevent.joinall([gevent.spawn(answer, "a"), gevent.spawn(answer, "b")], raise_error=True)
    # Without the yield: ["a ready", "a sent", "b ready", "b sent"].
    assert log == ["a ready", "b ready", "a sent", "b sent"]
    for sock in sockets.values():
        assert sock.sent.startswith(b"HTTP/1.1 200 OK\r\n") and sock.sent.endswith(b"\r\n\r\nok")
