"""Requests parsed off a connection by llhttp (``httptools``), each with its WSGI environ built as it parses.

llhttp is node.js's HTTP/1.1 parser, in C: it checks the request line, the header syntax, the framing
(``Content-Length``, chunked, both at once) and pipelining, and calls back for each piece. The callbacks
here build the request's environ in the same pass (one dict write per header field), so a request costs
no second loop over its head. llhttp parses everything it is given: a packet holding several pipelined
requests queues several :class:`Request` objects in ``ready``; body bytes land in the request they belong to.

What llhttp does not bound, this does (docs/architecture.md, "Hostile input, limits and timeouts"): the
request target (8 KiB, 414), the number of header fields (100) and one field's length (64 KiB), the
whole head (:data:`MAX_HEAD_BYTES`), the HTTP version (1.0 and 1.1 only) and HEAD with a body (400).
"""

from __future__ import annotations

from collections import deque
from typing import Any
from urllib.parse import unquote

from httptools import HttpParserError, HttpParserUpgrade, HttpRequestParser

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_HEADER_FIELDS",
    "MAX_HEAD_BYTES",
    "MAX_TARGET_BYTES",
    "Rejection",
    "Request",
    "RequestParser",
    "tokens",
]

MAX_TARGET_BYTES = 8192 - len("OPTIONS  HTTP/1.1\r\n")  # the request line fits 8 KiB, as under gevent
MAX_HEADER_FIELDS = 100  # http.client's and gevent's bound
MAX_HEADER_BYTES = 65_536  # one field's name and value (http.client's line bound)
# The whole head, request line and fields: far above what any client sends, bounding what a client that
# never ends its head makes the server hold (llhttp keeps a partial field until its line ends).
MAX_HEAD_BYTES = 256 * 1024

_NO_KEY = ""  # the environ key of a field that is dropped (a name with "_")
_KEYS: dict[bytes, str] = {}  # field name as sent -> environ key; bounded below
_MAX_KEYS = 512


class Rejection(Exception):
    """A request the server answers itself with ``status`` (400 or 414), before or instead of the app."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.request_line = ""  # the request target as far as it was parsed, for the log


class Request:
    """One request: its environ (without ``wsgi.input``), its body as it arrives, and how it is framed."""

    __slots__ = (
        "body",
        "body_error",
        "buffered",
        "close",
        "complete",
        "environ",
        "expect_continue",
        "fields",
        "head_done",
        "method",
        "target",
        "upgrade",
        "version",
    )

    def __init__(self, environ: dict[str, Any]) -> None:
        self.environ = environ
        self.target = b""
        self.method = ""
        self.version = ""
        self.fields = 0
        self.body: list[bytes] = []
        self.buffered = 0  # bytes in ``body`` not yet read by the app
        self.head_done = False
        self.complete = False  # the whole body arrived
        self.close = False  # the client asked to close after this request (or HTTP/1.0 without keep-alive)
        self.expect_continue = False
        self.upgrade = False  # llhttp stopped after this request: the connection asks for another protocol
        self.body_error: Rejection | None = None  # the body's framing broke (the app's read fails)


def tokens(value: str | None) -> set[str]:
    """The comma-separated tokens of a header value, lower case (``Connection``, ``Upgrade``)."""
    return {token.strip() for token in value.lower().split(",")} if value else set()


def _environ_key(name: bytes) -> str:
    """The environ key of a field name: ``HTTP_`` + upper case with ``_`` for ``-``; Content-Type/-Length
    have their own keys; a name with ``_`` is dropped (as gevent and gunicorn do, so that ``X_Forwarded``
    cannot pose as ``X-Forwarded``)."""
    text = name.decode("latin-1")
    lower = text.lower()
    if "_" in text:
        key = _NO_KEY
    elif lower == "content-type":
        key = "CONTENT_TYPE"
    elif lower == "content-length":
        key = "CONTENT_LENGTH"
    else:
        key = "HTTP_" + text.upper().replace("-", "_")
    if len(_KEYS) < _MAX_KEYS:  # a client inventing names only stops the cache from growing
        _KEYS[name] = key
    return key


class RequestParser:
    """llhttp's callbacks for one connection: complete heads are queued in ``ready``; ``error`` is a
    rejection to answer once the requests before it are served; ``dead`` once llhttp parses no more
    (after an error, or after an upgrade request, whose following bytes are in ``leftover``)."""

    __slots__ = (
        "_base",
        "_head_bytes",
        "_parser",
        "_request",
        "_target_parts",
        "dead",
        "error",
        "leftover",
        "ready",
    )

    def __init__(self, base_environ: dict[str, Any]) -> None:
        self._base = base_environ
        self._parser = HttpRequestParser(self)
        self._request: Request | None = None  # the message llhttp is in
        self._target_parts: list[bytes] = []
        self._head_bytes = -1  # bytes fed since a head began (-1: not in a head)
        self.ready: deque[Request] = deque()
        self.error: Rejection | None = None
        self.dead = False
        self.leftover = b""

    def feed(self, data: bytes | memoryview) -> None:
        """Parse ``data`` (read off the socket): callbacks fill in requests; problems end the parsing."""
        try:
            self._parser.feed_data(data)
        except HttpParserUpgrade as upgrade:
            # llhttp stops after a request with ``Connection: upgrade`` (or CONNECT): what follows is no
            # longer HTTP/1.1. The request is complete and queued; the bytes after it belong to the new
            # protocol (server/http/upgrade.py).
            self.dead = True
            self.leftover = bytes(data[int(upgrade.args[0]) :])
            if self.ready:
                self.ready[-1].upgrade = True
            return
        except HttpParserError as exc:
            cause = exc.__context__
            self._failed(cause if isinstance(cause, Rejection) else Rejection(400, str(exc) or "malformed"))
            return
        except Rejection as rejection:  # pragma: no cover - httptools reports callback errors as above
            self._failed(rejection)
            return
        if self._head_bytes >= 0:
            self._head_bytes += len(data)  # counted per read: at most one read too high
            if self._head_bytes > MAX_HEAD_BYTES:
                self._failed(Rejection(400, f"the request head is longer than {MAX_HEAD_BYTES} bytes"))

    def _failed(self, rejection: Rejection) -> None:
        self.dead = True
        request = self._request
        if request is not None and request.head_done:
            request.body_error = rejection  # its head was fine: the app reads the broken body and says so
            return
        if request is not None:
            rejection.request_line = b"".join(self._target_parts).decode("latin-1")
        self.error = rejection

    # --- llhttp's callbacks ----------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._request = Request(self._base.copy())
        self._target_parts = []
        self._head_bytes = 0

    def on_url(self, part: bytes) -> None:
        parts = self._target_parts
        parts.append(part)
        if len(part) > MAX_TARGET_BYTES or (len(parts) > 1 and sum(map(len, parts)) > MAX_TARGET_BYTES):
            raise Rejection(414, "the request line is longer than 8 KiB")

    def on_header(self, name: bytes, value: bytes) -> None:
        request = self._request
        assert request is not None
        request.fields += 1
        if request.fields > MAX_HEADER_FIELDS:
            raise Rejection(400, f"more than {MAX_HEADER_FIELDS} header fields")
        if len(name) + len(value) > MAX_HEADER_BYTES:
            raise Rejection(400, f"a header field is longer than {MAX_HEADER_BYTES} bytes")
        key = _KEYS.get(name)
        if key is None:
            key = _environ_key(name)
        if not key:
            return
        text = value.decode("latin-1")
        if text and text[-1] in " \t":  # llhttp drops the whitespace before a value, not after it
            text = text.rstrip(" \t")
        environ = request.environ
        if key not in environ:
            environ[key] = text
        elif key == "HTTP_COOKIE":
            environ[key] += "; " + text
        elif key[0] == "H":  # a repeated field is one list (RFC 9110 5.3); Content-Type keeps the first
            environ[key] += "," + text

    def on_headers_complete(self) -> None:
        request = self._request
        assert request is not None
        self._head_bytes = -1
        parser = self._parser
        parts = self._target_parts
        target = request.target = parts[0] if len(parts) == 1 else b"".join(parts)
        method = request.method = parser.get_method().decode("ascii")
        version = request.version = parser.get_http_version()
        if version != "1.1" and version != "1.0":
            raise Rejection(400, f"HTTP/{version} is not served (HTTP/1.0 and HTTP/1.1 are)")
        environ = request.environ
        text = target.decode("latin-1")
        path, _, query = text.partition("?")
        environ["REQUEST_METHOD"] = method
        environ["PATH_INFO"] = unquote(path, "latin-1") if "%" in path else path
        environ["QUERY_STRING"] = query
        environ["SERVER_PROTOCOL"] = "HTTP/1.1" if version == "1.1" else "HTTP/1.0"
        environ["RAW_URI"] = text
        connection = environ.get("HTTP_CONNECTION")
        if version == "1.1":
            request.close = (
                connection is not None and connection != "keep-alive" and "close" in tokens(connection)
            )
            expect = environ.get("HTTP_EXPECT")
            request.expect_continue = expect is not None and expect.lower() == "100-continue"
        else:
            request.close = connection is None or "keep-alive" not in tokens(connection)
        if method == "HEAD" and environ.get("CONTENT_LENGTH", "0").lstrip("0"):
            # A HEAD answer has no body, so a HEAD request with one is not a HEAD request (as gevent had it).
            raise Rejection(400, "a HEAD request with a body")
        request.head_done = True
        self.ready.append(request)

    def on_body(self, data: bytes) -> None:
        request = self._request
        assert request is not None
        request.body.append(data)
        request.buffered += len(data)

    def on_message_complete(self) -> None:
        request = self._request
        assert request is not None
        request.complete = True
        self._request = None
