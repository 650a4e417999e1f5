"""llmts's HTTP/1.1 connection loop: one greenlet per connection, reading requests, running the WSGI app,
writing its answers (docs/architecture.md, "The server's hot path").

Per request: one ``recv_into`` into the worker's read buffer usually holds the whole request, which llhttp
parses (server/http/parser.py) into a queued :class:`Request` whose environ is already built; the app
runs; its answer's head and first body bytes leave in one ``send``, tried without waiting, and only what
the socket buffer refuses waits, under the connection's one write deadline and charged to the memory
budget. A response's first write yields once to the other ready greenlets first, so the answers of one
pass of the event loop leave together. The access line goes to server/http/access_log.py's batched log.

Around that: the request-head and keep-alive deadlines and the graceful stop (server/http/connections.py's
``ConnectionTracker``), ``Connection: close`` and HTTP/1.0 rules, HEAD, ``Expect: 100-continue``, bodies
still arriving (server/http/body.py), malformed requests answered in the control envelope, and the seam
for protocol upgrades (server/http/upgrade.py).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
import traceback
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from gevent import get_hub, getcurrent
from gevent import sleep as _sleep

from llmts.errors import LlmtsError, MalformedHttp, RequestLineTooLong, WebSocketNotSupported
from llmts.server.http.access_log import AccessLog, basic_auth_user
from llmts.server.http.body import BodyBroken, BufferedBody, StreamingBody
from llmts.server.http.connections import ConnectionTracker, HeadTimeout
from llmts.server.http.held_writes import SSLSocket, memory_budget, send_held, try_send_tls
from llmts.server.http.log_text import log_text
from llmts.server.http.parser import Rejection, Request, RequestParser
from llmts.server.http.response import HttpDate, ResponseHead, error_response
from llmts.server.http.upgrade import UpgradeRequest, upgrade_handler, wants_websocket
from llmts.transport.deadline import (
    SERVER_CONNECTION_DEADLINES,
    SERVER_WRITE_DEADLINE,
    Deadline,
    write_timed_out,
)
from llmts.transport.peer import shutdown_under_tls
from llmts.transport.whole_stream import WholeStream

__all__ = ["Connection", "Http1Server"]

# One read: a whole SDK request fits; a larger body takes several.
READ_BYTES = 64 * 1024
# A response body at least this large is sent after its head instead of copied into one buffer with it:
# a client that does not read would otherwise hold two copies until the write timeout.
_SEPARATE_BODY_BYTES = 128 * 1024
_REJECTIONS = {
    400: error_response(MalformedHttp("the HTTP request is malformed (request line, headers or framing)")),
    414: error_response(RequestLineTooLong("the request line is longer than 8 KiB")),
}
# A plain HTTP request on a TLS port (``llmts serve --tls``) is answered in clear text, then closed.
_PLAIN_HTTP_ON_TLS = error_response(
    MalformedHttp("this server speaks TLS (llmts serve --tls): send the request to its https:// URL")
)
_INTERNAL = error_response(
    LlmtsError("llmts hit an internal error; see the server log", code="llm_test_server_internal_error")
)
_NO_REQUEST_LINE = "- - -"  # what the access log shows for a request rejected before it was parsed
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class Http1Server:
    """A worker's state shared by its connections: the app, the base environ, the tracker of head
    deadlines, the access log, and one read buffer (each read is parsed before the greenlet yields, and
    llhttp's callbacks copy what they keep, so the connections can share it)."""

    def __init__(
        self,
        app: Any,
        environ: dict[str, Any],
        tracker: ConnectionTracker,
        access: AccessLog | None,
        log: Any,
        *,
        gunicorn_access: bool = False,
    ) -> None:
        self.app = app
        self.environ = environ
        self.tracker = tracker
        self.access = access
        self.log = log
        # gunicorn's own access logger (a custom format or handler) instead of ``access``.
        self.gunicorn_access = gunicorn_access and access is None
        self.buffer = bytearray(READ_BYTES)
        self.view = memoryview(self.buffer)
        self.memory = memory_budget(app)
        self.date = HttpDate()
        self.loop = get_hub().loop

    def handle(self, sock: Any, address: Any) -> None:
        """gevent's ``StreamServer`` handler: serve one connection until it closes."""
        Connection(self, sock, address).serve()


class Connection:
    """One client connection and the response being written on it."""

    __slots__ = (
        "_app_deadlines",
        "_expired",
        "_timers",
        "_write_deadline",
        "chunked",
        "close",
        "head",
        "head_only",
        "head_sent",
        "kept_alive",
        "parser",
        "remote",
        "request",
        "sent",
        "server",
        "sock",
        "tls",
    )

    def __init__(self, server: Http1Server, sock: Any, address: Any) -> None:
        self.server = server
        self.sock = sock
        self.tls = isinstance(sock, SSLSocket)  # llmts serve --tls (docs/tls.md)
        self.remote = str(address[0]) if isinstance(address, tuple) and address else "-"
        self._app_deadlines: dict[str, Deadline] = {}
        base = server.environ.copy()  # what every request's environ starts from
        base["gunicorn.socket"] = sock
        base[SERVER_CONNECTION_DEADLINES] = self._app_deadlines
        if isinstance(address, tuple) and len(address) >= 2:
            base["REMOTE_ADDR"] = self.remote
            base["REMOTE_PORT"] = str(address[1])
        self.parser = RequestParser(base)
        self._write_deadline: Deadline | None = None
        self._timers: dict[float, Any] = {}
        self._expired = HeadTimeout()
        self.kept_alive = False
        self.request: Request | None = None
        self.head: ResponseHead | None = None
        self.head_sent = False
        self.head_only = False
        self.chunked = False
        self.close = False
        self.sent = 0

    # --- the connection ----------------------------------------------------------------------------

    def serve(self) -> None:
        try:
            self._requests()
        except HeadTimeout:
            pass  # a stopping worker closed the connection as its head arrived: nothing was admitted
        except OSError:
            pass  # the client left
        finally:
            self._close()

    def _requests(self) -> None:
        parser = self.parser
        ready = parser.ready
        while True:
            if not ready:
                if parser.error is not None:
                    self._reject(parser.error)
                    return
                if parser.dead or not self._read_head():
                    return
                continue
            request = ready.popleft()
            if request.upgrade:
                self._upgrade(request)
                return
            if not self._serve(request):
                return

    def _read_head(self) -> bool:
        """Read until a request head is complete (or the parser gives up), under the head deadline:
        ``request_head`` seconds on a new connection, ``keepalive`` after a response. False: close."""
        tracker = self.server.tracker
        if tracker.stopping:
            return False
        seconds = tracker.head_seconds(self.kept_alive)
        timer = self._timers.get(seconds)
        if timer is None:
            # ``again`` restarts from ``repeat``: ``start`` after a ``stop`` would resume the time the timer
            # had left, so a kept-alive connection's idle periods would add up to one timeout.
            timer = self._timers[seconds] = self.server.loop.timer(seconds, seconds)
        expired = self._expired
        current = getcurrent()
        timer.again(current.throw, expired)
        waiting = tracker.waiting
        waiting[current] = expired  # a stopping worker closes it (ConnectionTracker.stop)
        parser = self.parser
        ready = parser.ready
        recv_into = self.sock.recv_into
        buffer = self.server.buffer
        view = self.server.view
        try:
            while not ready:
                count = recv_into(buffer)
                if not count:
                    return False  # the client closed its side
                parser.feed(view[:count])
                if parser.dead:
                    break
            return True
        except HeadTimeout as exc:
            if exc is not expired:
                raise
            return False  # no head in time: close, nothing was admitted
        except OSError as exc:
            if self.tls and getattr(exc, "reason", None) == "HTTP_REQUEST":
                self._refuse_plain_http()
            return False
        finally:
            timer.stop()
            waiting.pop(current, None)

    def _refuse_plain_http(self) -> None:
        """OpenSSL read a plain HTTP request where a TLS handshake was due: say so in clear text on the
        socket under TLS, reading what is left of the request first (closing with unread bytes would reset
        the connection before the client reads the answer)."""
        # The descriptor itself: the TLS socket's methods would encrypt (gevent keeps it non-blocking, and the
        # answer fits an empty socket buffer).
        descriptor = self.sock.fileno()
        with contextlib.suppress(OSError):
            os.read(descriptor, READ_BYTES)
        with contextlib.suppress(OSError):
            os.write(descriptor, _PLAIN_HTTP_ON_TLS)
            shutdown_under_tls(self.sock, socket.SHUT_WR)

    def _close(self) -> None:
        for timer in self._timers.values():
            timer.close()
        if self._write_deadline is not None:
            self._write_deadline.close()
        for deadline in self._app_deadlines.values():
            deadline.close()
        with contextlib.suppress(OSError):
            self.sock.close()

    # --- one request -------------------------------------------------------------------------------

    def _serve(self, request: Request) -> bool:
        """Run the app for ``request`` and write its answer; whether the connection stays open."""
        server = self.server
        self.kept_alive = True
        environ = request.environ
        if request.complete:
            body = request.body
            environ["wsgi.input"] = BufferedBody(body[0] if len(body) == 1 else b"".join(body))
        else:
            send_continue = self._send_continue if request.expect_continue else None
            environ["wsgi.input"] = StreamingBody(request, self._pull, send_continue)
        deadline = self._write_deadline
        if deadline is None and server.tracker.write is not None:
            deadline = self._write_deadline = Deadline(server.tracker.write, write_timed_out)
        if deadline is not None:
            environ[SERVER_WRITE_DEADLINE] = deadline
            deadline.expired = False  # one per connection, read per response
            deadline.ended_by = "write_timeout"
        self._begin_response(request)
        started = time.time()
        try:
            result = server.app(environ, self.start_response)
            try:
                self._write_result(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        except OSError:
            self.close = True  # the client left, a write timed out, or a fault plan dropped the connection
        except Exception:
            self.close = True
            what = f"llmts: error handling {log_text(request.method)} {log_text(environ.get('RAW_URI'))}"
            if server.log is not None:
                server.log.exception(what)
            else:
                traceback.print_exc()
            if not self.head_sent:
                self.head = None
                with contextlib.suppress(OSError):
                    self._sendall(_INTERNAL)
        code = self.head.code if self.head is not None else (500 if self.sent else 0)
        self._log(environ, code, started)
        return not self.close and request.complete

    def _begin_response(self, request: Request) -> None:
        """The per-response state, reset before the app runs. A method of its own because the app sets
        ``head`` (through ``start_response``) before ``_serve`` reads it: reset inline, a type checker (and
        the compiled build, docs/design/compiled.md) would take ``head`` for None there."""
        self.request = request
        self.close = request.close or self.server.tracker.stopping
        self.head = None
        self.head_sent = False
        self.head_only = request.method == "HEAD"
        self.chunked = False
        self.sent = 0

    def start_response(
        self, status: object, headers: Iterable[tuple[object, object]], exc_info: Any = None
    ) -> Any:
        """PEP 3333's ``start_response``: the head is checked (``ResponseHead``, hence ``object``) and encoded
        now, sent with the body's start."""
        if exc_info is not None:
            try:
                if self.head_sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.head_sent:
            raise AssertionError("start_response called again after the response head was sent")
        self.head = ResponseHead(status, headers)
        return self.write

    def write(self, data: bytes) -> None:
        """PEP 3333's ``write`` callable (llmts's app returns its body instead)."""
        if self.head_sent:
            self._more(data)
        elif data:
            self._first(data, False, None)

    def _write_result(self, result: Any) -> None:
        kind = type(result)
        if not self.head_sent:
            if kind is WholeStream:
                # A stream with nothing to do between frames: head, frames and chunked end in one send.
                self._first(result[0], True, None)
                result.written = True
                return
            if kind is list and len(result) == 1:  # a whole body (server/http.py ``send``)
                self._first(result[0], True, result)
                return
        for data in result:
            if data:
                if self.head_sent:
                    self._more(data)
                else:
                    self._first(data, False, result)
        if not self.head_sent:
            self._first(b"", True, result)
        elif self.chunked:
            self._sendall(b"0\r\n\r\n")

    def _first(self, data: bytes, end: bool, result: Any) -> None:
        """The head and the first body bytes (and, with ``end``, the end of the body) in one send."""
        # Let every other greenlet that is ready run first: the responses of one pass of the event loop
        # then leave together, and the server and its clients wake each other far less often
        # (docs/architecture.md, "The server's hot path").
        _sleep(0)
        head = self.head
        if head is None:
            raise AssertionError("the app wrote its body before start_response")
        request = self.request
        assert request is not None
        out = bytearray(b"HTTP/1.1 ")
        out += head.status
        out += b"\r\n"
        out += head.fields
        if not head.date:
            out += b"Date: "
            out += self.server.date.now()
            out += b"\r\n"
        code = head.code
        if code != 204 and code != 304 and head.content_length is None:
            if result is not None and hasattr(result, "__len__") and type(result) is not WholeStream:
                out += b"Content-Length: %d\r\n" % sum(len(chunk) for chunk in result)
            elif request.version == "1.1":
                self.chunked = True
                out += b"Transfer-Encoding: chunked\r\n"
            else:
                self.close = True  # HTTP/1.0 without a length: the body ends with the connection
        if not request.complete:
            self.close = True  # a body the app did not read: the next request's start is unknown
        if head.close:
            self.close = True
        elif self.close:
            out += b"Connection: close\r\n"
        elif request.version == "1.0":
            out += b"Connection: keep-alive\r\n"
        out += b"\r\n"
        self.head_sent = True
        if self.head_only:
            # A HEAD answer has no body (and no chunk framing): bytes here would be read as the next answer.
            self.chunked = False
            self._sendall(out)
            return
        chunked = self.chunked
        if len(data) >= _SEPARATE_BODY_BYTES:
            if chunked:
                out += b"%x\r\n" % len(data)
                self._sendall(out)
                self._sendall(data)
                self._sendall(b"\r\n0\r\n\r\n" if end else b"\r\n")
                self.chunked = not end
            else:
                self._sendall(out)
                self._sendall(data)
            return
        if data:
            if chunked:
                out += b"%x\r\n" % len(data)
                out += data
                out += b"\r\n"
            else:
                out += data
        if end and chunked:
            out += b"0\r\n\r\n"
            self.chunked = False
        self._sendall(out)

    def _more(self, data: bytes) -> None:
        if self.head_only or not data:
            return
        if not self.chunked:
            self._sendall(data)
        elif len(data) >= _SEPARATE_BODY_BYTES:
            self._sendall(b"%x\r\n" % len(data))
            self._sendall(data)
            self._sendall(b"\r\n")
        else:
            out = bytearray(b"%x\r\n" % len(data))
            out += data
            out += b"\r\n"
            self._sendall(out)

    def _sendall(self, data: bytes | bytearray | memoryview) -> None:
        # One ``send`` that never waits takes the whole of a small response. Only what the socket buffer
        # refused goes through gevent's ``sendall`` (which waits cooperatively), under the connection's
        # write deadline: a write that fits costs no timer at all.
        sock = self.sock
        if self.tls:
            sent = try_send_tls(sock, data)
        else:
            try:
                sent = sock.send(data, 0, 0.0)
            except BlockingIOError:
                sent = 0
        if sent < len(data):
            rest = memoryview(data)[sent:]
            deadline = self._write_deadline
            if deadline is None:
                sock.sendall(rest)
            else:
                send_held(self.sock, rest, deadline, self.server.memory, len(data))
        self.sent += len(data)

    # --- a body still arriving ---------------------------------------------------------------------

    def _pull(self, request: Request) -> None:
        """Read the connection once for ``request``'s body (the app's body deadline bounds the wait)."""
        if request.body_error is not None:
            raise BodyBroken(request.body_error.reason)
        if self.parser.dead:
            raise BodyBroken("the request body cannot be read")
        count = self.sock.recv_into(self.server.buffer)
        if not count:
            raise BodyBroken("the client closed the connection before the body ended")
        self.parser.feed(self.server.view[:count])
        if request.body_error is not None:
            raise BodyBroken(request.body_error.reason)

    def _send_continue(self) -> None:
        self.sock.sendall(_CONTINUE)

    # --- answers without the app -------------------------------------------------------------------

    def _reject(self, rejection: Rejection) -> None:
        """A request the parser refused: one escaped log line, the JSON answer, one access line, close."""
        reason = rejection.reason
        if rejection.request_line:
            reason += f" (target {rejection.request_line})"
        note = f"llmts: rejected malformed HTTP from {log_text(self.remote)}: {log_text(reason)}"
        log = self.server.log
        if log is not None:
            log.info(note)  # gunicorn's error log, in its format (one JSON object with --log-format json)
        else:
            sys.stderr.write(note + "\n")
        self._answer_alone(_REJECTIONS.get(rejection.status, _REJECTIONS[400]), rejection.status, None)

    def _answer_alone(self, response: bytes, status: int, environ: dict[str, Any] | None) -> None:
        started = time.time()
        self.head = None
        self.sent = 0
        with contextlib.suppress(OSError):
            self._sendall(response)
        self._log(environ, status, started)

    def _upgrade(self, request: Request) -> None:
        """A request after which llhttp stopped: a WebSocket upgrade goes to the app's handler
        (server/http/upgrade.py); another protocol is ignored and the request served as HTTP/1.1."""
        environ = request.environ
        if wants_websocket(environ):
            handler = upgrade_handler(self.server.app, environ)
            if handler is None:
                error = WebSocketNotSupported(
                    f"llmts serves no WebSocket on {environ.get('PATH_INFO')!r}: this route answers HTTP "
                    "requests only (see docs/server.md)"
                )
                self._answer_alone(error_response(error, head_only=request.method == "HEAD"), 400, environ)
                return
            started = time.time()
            self.head = None
            self.sent = 0
            status = handler(UpgradeRequest(environ, self.sock, self.parser.leftover))
            self._log(environ, status or 101, started)
            return
        if environ.get("CONTENT_LENGTH", "0").lstrip("0") or "HTTP_TRANSFER_ENCODING" in environ:
            self._reject(Rejection(400, "an Upgrade request with a body"))
            return
        request.close = True  # the bytes after it are another protocol's
        self._serve(request)

    # --- the access log ----------------------------------------------------------------------------

    def _log(self, environ: dict[str, Any] | None, code: int, started: float) -> None:
        server = self.server
        access = server.access
        status = str(code) if code else "000"
        if access is not None:
            if environ is None:
                access.request(
                    self.remote, "-", _NO_REQUEST_LINE, status, self.sent, "-", "-", started, time.time()
                )
                return
            access.request(
                self.remote,
                basic_auth_user(environ.get("HTTP_AUTHORIZATION")),
                f"{environ['REQUEST_METHOD']} {environ['RAW_URI']} {environ['SERVER_PROTOCOL']}",
                status,
                self.sent,
                environ.get("HTTP_REFERER") or "-",
                environ.get("HTTP_USER_AGENT") or "-",
                started,
                time.time(),
            )
        elif server.gunicorn_access:
            self._gunicorn_access(environ, status, started)

    def _gunicorn_access(self, environ: dict[str, Any] | None, status: str, started: float) -> None:
        """gunicorn's own access logger (a custom ``access_log_format`` or log handler)."""
        if environ is None:
            environ = {
                "REQUEST_METHOD": "-",
                "RAW_URI": "-",
                "SERVER_PROTOCOL": "-",
                "QUERY_STRING": "",
                "REMOTE_ADDR": self.remote,
            }
        request_headers = [
            (key[5:].replace("_", "-").lower(), value)
            for key, value in environ.items()
            if key.startswith("HTTP_") and isinstance(value, str)
        ]
        head = self.head
        response_headers = []
        if head is not None:
            for line in bytes(head.fields).decode("latin-1").split("\r\n"):
                name, colon, value = line.partition(": ")
                if colon:
                    response_headers.append((name, value))
        response = _AccessResponse(status, response_headers, self.sent)
        elapsed = timedelta(seconds=max(0.0, time.time() - started))
        self.server.log.access(response, request_headers, environ, elapsed)


class _AccessResponse:
    """What gunicorn's ``Logger.access`` reads of a response."""

    __slots__ = ("headers", "sent", "status")

    def __init__(self, status: str, headers: list[tuple[str, str]], sent: int) -> None:
        self.status = status
        self.headers = headers
        self.sent = sent
