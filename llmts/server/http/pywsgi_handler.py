"""llmts's connection handler for gevent's pywsgi (``--worker-class gevent_pywsgi``, the previous default):
the request head, the response bytes and the access log. The default worker runs llmts's own HTTP/1.1
loop instead (server/http/); this handler overrides private methods of gevent's ``WSGIHandler``
(``_sendall``, ``_write_with_headers``...), which is why pyproject.toml bounds gevent's version while it
is kept (docs/server.md).

Two jobs (docs/architecture.md, "The server's hot path" and "Hostile input, limits and timeouts"):

- **Lean per-request work.** The header block is read by server/http/request_head.py instead of the ``email``
  package; the environ is built in one pass; the status line, headers and first body chunk leave in one
  ``send`` (gevent sends headers and body separately, and asks the kernel for the socket's buffer size
  on every ``sendall``); the ``Date`` header is formatted once per second; the access log is
  server/http/access_log.py's batched writer instead of gunicorn's per-request ``logging`` record; a
  response's first write waits for the other ready greenlets, so the answers of one pass of the event
  loop leave together.
- **Malformed HTTP** that gevent rejects before the app runs (bad request line, more than 100 headers,
  ``Content-Length: abc``, a request line over 8 KiB, broken chunked framing) gets a small JSON error in
  the control envelope instead of gevent's bare text, one escaped log line instead of a traceback, and
  one access-log line.
"""

from __future__ import annotations

import io
from typing import Any

import orjson
from gevent import sleep as _sleep
from gevent.pywsgi import MAX_REQUEST_LINE, Input, unquote_latin1
from gunicorn.workers.ggevent import GeventPyWSGIWorker, PyWSGIHandler

from llmts.errors import LlmtsError, MalformedHttp, RequestLineTooLong
from llmts.server.http.access_log import AccessLog, basic_auth_user
from llmts.server.http.connections import GracefulWorker, HeadDeadlineHandler, ReplacementAware
from llmts.server.http.held_writes import SSLSocket, memory_budget, send_held, try_send_tls
from llmts.server.http.log_text import log_text
from llmts.server.http.request_head import HeaderFields, environ_key, header_fields_from, read_header_block
from llmts.server.http.response import HttpDate
from llmts.server.http.response import error_response as _error_response
from llmts.server.http.wsgi import status_line
from llmts.server.process.boot import WorkerBoot
from llmts.transport.deadline import (
    SERVER_CONNECTION_DEADLINES,
    SERVER_WRITE_DEADLINE,
    Deadline,
    write_timed_out,
)
from llmts.transport.whole_stream import WholeStream

__all__ = ["LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker"]


_MALFORMED = MalformedHttp("the HTTP request is malformed (request line, headers or framing)")
_REJECTIONS = {
    "400": _error_response(_MALFORMED),
    "414": _error_response(RequestLineTooLong("the request line is longer than 8 KiB")),
}
_INTERNAL = LlmtsError(
    "llmts hit an internal error; see the server log", code="llm_test_server_internal_error"
)
_NO_REQUEST_LINE = "- - -"  # what the access log shows for a request rejected before it was parsed
_NOT_FAST = object()  # the fast path declined a request (nothing consumed): gevent's reader takes it
# A response body at least this large is sent after its head instead of copied into one buffer with it:
# a client that does not read would otherwise hold two copies until the write timeout.
_SEPARATE_BODY_BYTES = 128 * 1024


class _BufferedBody(io.BytesIO):
    """A request body read together with its head (the fast path): the app's ``wsgi.input``."""

    def _discard(self) -> None:  # gevent's handler discards unread input after each response
        return None


class LlmtsPyWSGIHandler(PyWSGIHandler):  # type: ignore[misc]
    """gunicorn's pywsgi handler with a lean request head and response path (see the module docstring)."""

    environ: dict[str, Any] | None
    response_headers: list[tuple[bytes, bytes]] | None
    headers: HeaderFields
    status: Any  # bytes once start_response ran; gevent's own str for what it rejected
    code: int
    _http_date = HttpDate()
    # The connection's write deadline (transport/deadline.py), made at its first request, and the
    # deadlines the app keeps per connection (the request body's), closed with the connection.
    _llmts_write_deadline: Deadline | None = None
    _llmts_app_deadlines: dict[str, Deadline] | None = None

    # --- the request head --------------------------------------------------------------------------

    def handle_one_request(self) -> Any:
        # A keep-alive connection reuses this handler: forget the previous request, so a rejected one
        # is never logged under its predecessor's method, path or headers.
        self.environ = None
        self.response_headers = None
        self.__dict__.pop("headers", None)
        handled = self._fast_request()
        if handled is not _NOT_FAST:
            return handled
        result = super().handle_one_request()
        if isinstance(result, tuple):  # gevent's bare-text (status, response) for what it cannot parse
            status = result[0]
            response = _REJECTIONS.get(status, _REJECTIONS["400"])
            self.response_length = len(response)
            return status, response
        return result

    def _fast_request(self) -> Any:
        """An HTTP/1.1 request whose head and ``Content-Length`` body are already buffered, parsed from the
        buffer in one pass and answered; gevent's ``handle_one_request`` result (None: close, True: keep
        reading). Anything else (another version, HEAD, chunked or 100-continue bodies, an upgrade or a
        ``Connection`` other than keep-alive, a header block the one-pass reader does not take, a body
        still arriving) returns ``_NOT_FAST`` having consumed nothing, and gevent's reader takes it."""
        rfile = self.rfile
        if rfile.closed:
            return None
        try:
            data: bytes = rfile.peek(0)  # waits for the request under the head deadline
        except OSError:
            return None
        if not data:
            return None  # the client closed its side between requests
        end = data.find(b"\r\n\r\n")
        if end <= 0:
            return _NOT_FAST
        request_line, _, header_text = data[:end].decode("latin-1").partition("\r\n")
        words = request_line.split()
        if len(words) != 3 or words[2] != "HTTP/1.1" or words[0] == "HEAD":
            return _NOT_FAST
        if len(request_line) + 2 >= MAX_REQUEST_LINE:
            return _NOT_FAST  # gevent's 414
        headers = header_fields_from(header_text)
        if headers is None:
            return _NOT_FAST
        get = headers.get
        connection = get("connection")
        if (
            get("transfer-encoding") is not None
            or get("expect") is not None
            or get("upgrade") is not None
            or (connection is not None and connection.lower() != "keep-alive")
        ):
            return _NOT_FAST
        length_text = get("content-length")
        length = 0
        if length_text is not None:
            if not (length_text.isascii() and length_text.isdigit()):
                return _NOT_FAST  # gevent's 400
            length = int(length_text)
        size = end + 4 + length
        if size > len(data):
            return _NOT_FAST  # the body is still arriving: read under the app's body deadline
        raw = rfile.read(size)
        self.requestline = request_line.rstrip()
        self.command, self.path, self.request_version = words
        self.headers = headers
        self.close_connection = False
        self._llmts_head_arrived()
        env = self._environ()
        body = self.wsgi_input = _BufferedBody(raw[end + 4 :])
        env["wsgi.input"] = body
        env["wsgi.input_terminated"] = True
        self.environ = env
        self.application = self.server.application
        self.handle_one_response()
        if self.close_connection or rfile.closed:
            return None
        return True

    def _llmts_head_arrived(self) -> None:
        """The request head is complete (server/http/connections.py stops its deadline here)."""
        return None

    def MessageClass(self, rfile: Any, *_: Any) -> HeaderFields:  # gevent's hook name
        return read_header_block(rfile)

    def get_environ(self) -> dict[str, Any]:
        env = self._environ()
        chunked = env.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked"
        expect = self.socket if env.get("HTTP_EXPECT") == "100-continue" else None
        self.wsgi_input = Input(self.rfile, self.content_length, socket=expect, chunked_input=chunked)
        upgrade = self._connection_upgrade_requested()
        env["wsgi.input"] = self.rfile if upgrade else self.wsgi_input
        env["wsgi.input_terminated"] = not upgrade
        return env

    def _environ(self) -> dict[str, Any]:
        """The request's environ without ``wsgi.input`` (the caller adds the body's reader)."""
        env: dict[str, Any] = self.server.get_environ()
        env["REQUEST_METHOD"] = self.command
        env["SCRIPT_NAME"] = ""
        raw_path: str = self.path
        path, _, query = raw_path.partition("?")
        env["PATH_INFO"] = unquote_latin1(path) if "%" in path else path
        env["QUERY_STRING"] = query
        headers = self.headers
        content_type = headers.get("content-type")
        if content_type is not None:
            env["CONTENT_TYPE"] = content_type
        length = headers.get("content-length")
        if length:
            env["CONTENT_LENGTH"] = length
        env["SERVER_PROTOCOL"] = self.request_version
        address = self.client_address
        if isinstance(address, tuple):
            env["REMOTE_ADDR"] = str(address[0])
            env["REMOTE_PORT"] = str(address[1])
        for name, value in headers.fields:
            key = environ_key(name)
            if key is None:
                continue
            if key in env:  # a repeated field: joined as RFC 9110 allows (cookies with "; ")
                env[key] += ("; " if key == "HTTP_COOKIE" else ",") + value
            else:
                env[key] = value
        env["gunicorn.sock"] = self.socket  # what gunicorn's handler adds: the app's transport uses it
        env["RAW_URI"] = raw_path
        deadline = self._llmts_write_deadline
        if deadline is None:
            tracker = getattr(self.server, "llmts_connections", None)
            seconds = tracker.write if tracker is not None else None
            if seconds is not None:
                deadline = self._llmts_write_deadline = Deadline(seconds, write_timed_out)
        if deadline is not None:
            deadline.expired = False  # one per connection, read per response
            deadline.ended_by = "write_timeout"
            env[SERVER_WRITE_DEADLINE] = deadline
        spares = self._llmts_app_deadlines
        if spares is None:
            spares = self._llmts_app_deadlines = {}
        env[SERVER_CONNECTION_DEADLINES] = spares
        return env

    def handle(self) -> None:
        try:
            super().handle()
        finally:
            if self._llmts_write_deadline is not None:
                self._llmts_write_deadline.close()
                self._llmts_write_deadline = None
            if self._llmts_app_deadlines is not None:
                for spare in self._llmts_app_deadlines.values():
                    spare.close()
                self._llmts_app_deadlines = None

    # --- the response ------------------------------------------------------------------------------

    def start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        # gevent's checks (native strings, no CR or LF, latin-1) and bookkeeping in one pass over the
        # headers instead of two; anything it would refuse goes to gevent's own, which raises its error.
        if exc_info is not None or type(status) is not str or "\r" in status or "\n" in status:
            return super().start_response(status, headers, exc_info)
        encoded: list[tuple[bytes, bytes]] = []
        connection = date = length = None
        try:
            for name, value in headers:
                if (
                    type(name) is not str
                    or type(value) is not str
                    or "\r" in name
                    or "\n" in name
                    or "\r" in value
                    or "\n" in value
                ):
                    return super().start_response(status, headers, exc_info)
                encoded.append((name.encode("latin-1"), value.encode("latin-1")))
                lower = name.lower()
                if lower == "content-length":
                    length = value
                elif lower == "date":
                    date = value
                elif lower == "connection":
                    connection = value
            code = int(status.split(" ", 1)[0])
            status_bytes = status.encode("latin-1")
        except (UnicodeEncodeError, ValueError):
            return super().start_response(status, headers, exc_info)
        if code in (304, 204) and length not in (None, "0"):
            return super().start_response(status, headers, exc_info)
        self.status = status_bytes
        self._orig_status = status
        self.response_headers = encoded
        self.code = code
        self.provided_date = date
        self.provided_content_length = length
        if connection is None:
            # HTTP/1.0 says either way; an HTTP/1.1 client that asked to close hears it (RFC 9112 9.6).
            if self.close_connection:
                encoded.append((b"Connection", b"close"))
            elif self.request_version == "HTTP/1.0":
                encoded.append((b"Connection", b"keep-alive"))
        elif connection == "close":
            self.close_connection = True
        return self.write

    def finalize_headers(self) -> None:
        if self.provided_date is None:
            self.response_headers.append((b"Date", self._http_date.now()))  # type: ignore[union-attr]
        self.connection_upgraded = self.code == 101
        if self.code not in (304, 204) and self.provided_content_length is None:
            if hasattr(self.result, "__len__") and type(self.result) is not WholeStream:
                total = sum(len(chunk) for chunk in self.result)
                self.response_headers.append((b"Content-Length", str(total).encode("ascii")))  # type: ignore[union-attr]
            else:
                self.response_use_chunked = (
                    not self.connection_upgraded and self.request_version != "HTTP/1.0"
                )
                if self.response_use_chunked:
                    self.response_headers.append((b"Transfer-Encoding", b"chunked"))  # type: ignore[union-attr]
        if self.command == "HEAD":
            # gevent's pywsgi writes whatever the app returns even for HEAD; on a kept-alive connection the
            # client would read those bytes as the start of the next response. No chunk framing either.
            self.response_use_chunked = False

    def write(self, data: bytes) -> None:
        super().write(b"" if self.command == "HEAD" else data)

    def process_result(self) -> None:
        result = self.result
        if type(result) is not WholeStream or self.headers_sent:
            super().process_result()
            return
        # A stream with nothing to do between frames: head, frames and chunked end in one send.
        self._write_with_headers(b"" if self.command == "HEAD" else result[0], end=True)
        result.written = True

    def _write_with_headers(self, data: bytes, end: bool = False) -> None:
        # Let every other greenlet that is ready run first: the responses of one pass of the event loop
        # then leave together, and the server and its clients wake each other far less often
        # (docs/architecture.md, "The server's hot path": ~16 % less CPU per request under load).
        _sleep(0)
        self.headers_sent = True
        self.finalize_headers()
        out = bytearray(b"HTTP/1.1 ")
        out += self.status
        out += b"\r\n"
        for name, value in self.response_headers:  # type: ignore[union-attr]
            out += name
            out += b": "
            out += value
            out += b"\r\n"
        out += b"\r\n"
        if len(data) >= _SEPARATE_BODY_BYTES:
            self._write_large(out, data, end)
            return
        if data:
            if self.response_use_chunked:
                out += b"%x\r\n" % len(data)
                out += data
                out += b"\r\n"
            else:
                out += data
        if end and self.response_use_chunked:
            out += b"0\r\n\r\n"
        self._sendall(out)

    def _write_large(self, head: bytearray, data: bytes, end: bool) -> None:
        """Head (and chunk size line), body and end as separate writes: the body is never copied."""
        if self.response_use_chunked:
            head += b"%x\r\n" % len(data)
            self._sendall(head)
            self._sendall(data)
            self._sendall(b"\r\n0\r\n\r\n" if end else b"\r\n")
        else:
            self._sendall(head)
            self._sendall(data)

    def _sendall(self, data: bytes | bytearray) -> None:
        # One ``send`` that never waits takes the whole of a small response. Only what the socket buffer
        # refused goes through gevent's ``sendall`` (which waits cooperatively, and asks for SO_SNDBUF on
        # each call), under the connection's write deadline: a write that fits costs no timer at all.
        try:
            if isinstance(self.socket, SSLSocket):
                sent = try_send_tls(self.socket, data)
            else:
                try:
                    sent = self.socket.send(data, 0, 0.0)
                except BlockingIOError:
                    sent = 0
            if sent < len(data):
                rest = memoryview(data)[sent:]
                deadline = self._llmts_write_deadline
                if deadline is None:
                    self.socket.sendall(rest)
                else:
                    send_held(self.socket, rest, deadline, memory_budget(self.server.application), len(data))
        except OSError as ex:
            self.status = f"socket error: {ex}"
            if self.code > 0:
                self.code = -self.code
            raise
        self.response_length += len(data)

    # --- malformed HTTP (rejected before the app) --------------------------------------------------

    def _handle_client_error(self, ex: BaseException) -> tuple[str, bytes]:
        # gevent prints a traceback for parse errors that are not ValueErrors and logs the raw request
        # text; one escaped line is all a client's mistake deserves.
        reason = str(ex) or type(ex).__name__
        self.server.error_log.write(
            f"llmts: rejected malformed HTTP from {log_text(self.client_address)}: {log_text(reason)}\n"
        )
        return "400", _REJECTIONS["400"]

    def _send_error_response_if_possible(self, error_code: int) -> None:
        if self.response_length:  # the app's answer is partly out: all that is left is to close
            self.close_connection = True
            return
        error = _MALFORMED if error_code < 500 else _INTERNAL
        body = orjson.dumps(error.to_control_body())
        headers = [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
        try:
            self.start_response(status_line(error.http_status), headers)
            self.write(body)
        except OSError:
            self.close_connection = True

    # --- the access log ----------------------------------------------------------------------------

    def log_request(self) -> None:
        access: AccessLog | None = getattr(self.server, "llmts_access_log", None)
        environ = self.environ
        if access is None:  # gunicorn's own logger (a custom format or handler)
            if environ is None:
                self.environ = {
                    "REQUEST_METHOD": "-",
                    "RAW_URI": "-",
                    "SERVER_PROTOCOL": "-",
                    "QUERY_STRING": "",
                    "REMOTE_ADDR": _remote_addr(self.client_address),
                }
            if self.response_headers is None:
                self.response_headers = []
            super().log_request()
            return
        headers = self.__dict__.get("headers")
        status = self._orig_status or self.status or "000"
        if isinstance(status, bytes):
            status = status.decode("latin-1")
        access.request(
            _remote_addr(self.client_address),
            basic_auth_user(headers.get("authorization")) if headers is not None else "-",
            _NO_REQUEST_LINE if environ is None else f"{self.command} {self.path} {self.request_version}",
            status.split(" ", 1)[0],
            self.response_length,
            (headers.get("referer") if headers is not None else None) or "-",
            (headers.get("user-agent") if headers is not None else None) or "-",
            self.time_start,
            self.time_finish,
        )


def _remote_addr(address: Any) -> str:
    return str(address[0]) if isinstance(address, tuple) and address else "-"


class _Handler(HeadDeadlineHandler, LlmtsPyWSGIHandler):
    pass


class _UnloggedHandler(_Handler):
    def log_request(self) -> None:
        return None


class LlmtsPyWSGIWorker(WorkerBoot, ReplacementAware, GracefulWorker, GeventPyWSGIWorker):  # type: ignore[misc]
    """gunicorn's ``gevent_pywsgi`` worker with this handler (``--worker-class gevent_pywsgi``)."""

    wsgi_handler = _Handler
    batched_access_log = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.cfg.accesslog:
            self.wsgi_handler = _UnloggedHandler
