"""The request line and the response head in the handler's own pass (docs/architecture.md, "The server's
hot path"): the same connection semantics and refusals as gevent's pywsgi, over raw sockets."""

from __future__ import annotations

import http.client
import io
import json
import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from llmts import ConfigBuilder, LlmTestServer
from llmts.server.http.pywsgi_handler import LlmtsPyWSGIHandler
from llmts.server.http.wsgi import read_body
from llmts.transport.deadline import SERVER_CONNECTION_DEADLINES
from tests.helpers import OPENAI_CHAT_PATH
from tests.support.servers import BackgroundStops

_BODY = b'{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}]}'


@pytest.fixture(scope="module")
def server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    fixtures = ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    started = LlmTestServer.start(fixtures=fixtures)
    yield started
    background_stops.stop(started)


def _connect(server: LlmTestServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=10)


def _answer(sock: socket.socket, method: str = "GET") -> http.client.HTTPResponse:
    response = http.client.HTTPResponse(sock, method=method)
    response.begin()
    response.read()
    return response


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize(
    ("version", "connection", "kept", "answered"),
    [
        ("HTTP/1.1", None, True, None),
        ("HTTP/1.1", "close", False, "close"),
        ("HTTP/1.1", "Close", False, "close"),
        ("HTTP/1.0", None, False, "close"),
        ("HTTP/1.0", "keep-alive", True, "keep-alive"),
        ("HTTP/1.0", "Keep-Alive", True, "keep-alive"),
    ],
)
def test_each_version_keeps_or_closes_the_connection_as_http_says(
    server: LlmTestServer, version: str, connection: str | None, kept: bool, answered: str | None
) -> None:
    extra = f"Connection: {connection}\r\n" if connection else ""
    with _connect(server) as sock:
        sock.sendall(
            f"POST {OPENAI_CHAT_PATH} {version}\r\nHost: 127.0.0.1\r\n{extra}"
            f"Content-Length: {len(_BODY)}\r\n\r\n".encode()
            + _BODY
        )
        first = _answer(sock, "POST")
        assert first.status == 200 and first.getheader("Connection") == answered
        if kept:
            sock.sendall(f"GET /health {version}\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode())
            assert _answer(sock).status == 200
        else:
            assert _closed_by_server(sock)


@pytest.mark.parametrize(
    "data",
    [
        b"GET /health HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"HEAD /health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
        b"GET /health HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n",
        b"GET /health HTTP/2.0\r\n\r\n",
        b"GET /health HTTP/1.x\r\n\r\n",
        b"POST /health\r\n\r\n",
        b"GET /health HTTP/1.1 extra\r\n\r\n",
    ],
)
def test_a_request_line_or_length_gevent_refuses_is_refused_alike(server: LlmTestServer, data: bytes) -> None:
    with _connect(server) as sock:
        sock.sendall(data)
        answer = _answer(sock)
        assert answer.status == 400 and answer.getheader("Content-Type") == "application/json"
        assert _closed_by_server(sock)


def test_a_request_with_both_chunked_framing_and_a_content_length_is_refused(server: LlmTestServer) -> None:
    """RFC 9112 6.1: such a request may be smuggling one; a server may refuse it and must close."""
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(_BODY), _BODY)
    with _connect(server) as sock:
        sock.sendall(
            f"POST {OPENAI_CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n".encode()
            + b"Content-Length: 3\r\n\r\n"
            + chunked
        )
        answer = _answer(sock, "POST")
        assert answer.status == 400 and answer.getheader("Connection") == "close"
        assert _closed_by_server(sock)


def _handler(version: str = "HTTP/1.1") -> LlmtsPyWSGIHandler:
    handler = LlmtsPyWSGIHandler.__new__(LlmtsPyWSGIHandler)
    handler.request_version = version
    handler.close_connection = False
    return handler


def test_start_response_encodes_the_head_and_notes_what_the_app_provided() -> None:
    handler = _handler()
    handler.start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2"), ("Date", "d")])
    assert handler.status == b"200 OK" and handler.code == 200
    assert handler.response_headers == [
        (b"Content-Type", b"text/plain"),
        (b"Content-Length", b"2"),
        (b"Date", b"d"),
    ]
    assert handler.provided_content_length == "2" and handler.provided_date == "d"
    closing = _handler()
    closing.start_response("200 OK", [("Connection", "close")])
    assert closing.close_connection
    old = _handler("HTTP/1.0")
    old.start_response("200 OK", [])
    assert old.response_headers == [(b"Connection", b"keep-alive")]


@pytest.mark.parametrize(
    ("status", "headers", "error"),
    [
        ("200 OK", [("X-Injected", "a\r\nSet-Cookie: b")], ValueError),
        ("200 OK", [("X-Bad\n", "a")], ValueError),
        ("200 OK\r\nX: y", [], ValueError),
        ("200 OK", [("X-Name", "snowman \u2603")], UnicodeError),
        ("200 OK", [(b"X-Bytes", "a")], UnicodeError),
        ("204 No Content", [("Content-Length", "5")], AssertionError),
    ],
)
def test_start_response_refuses_what_gevent_refuses(
    status: str, headers: list[tuple[str, str]], error: type[Exception]
) -> None:
    with pytest.raises(error):
        _handler().start_response(status, headers)


# --- the handler's fast path: a head and body already buffered are parsed in one pass; anything else
# goes through gevent's reader, with the same answers.


def _chat(extra: str = "") -> bytes:
    head = (
        f"POST {OPENAI_CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Content-Length: {len(_BODY)}\r\n\r\n"
    )
    return head.encode() + _BODY


def _responses(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Consecutive ``Content-Length`` responses read off one connection."""
    found = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        length = int(headers["content-length"])
        found.append((int(status_line.split()[1]), headers, rest[:length]))
        raw = rest[length:]
    return found


def test_pipelined_requests_in_one_packet_are_answered_in_order(server: LlmTestServer) -> None:
    with _connect(server) as sock:
        sock.sendall(
            _chat() + b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + _chat("Connection: close\r\n")
        )
        received = b""
        while chunk := sock.recv(65536):  # the server closes after the third (Connection: close)
            received += chunk
    answers = _responses(received)
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert json.loads(answers[0][2])["choices"][0]["message"]["content"] == "ok"
    assert json.loads(answers[1][2]) == {"status": "ok"}
    assert answers[2][1]["connection"] == "close"


def test_a_body_that_arrives_after_its_head_is_still_read(server: LlmTestServer) -> None:
    request = _chat()
    split = request.index(b"\r\n\r\n") + 4 + 10  # the head and 10 bytes of the body, then the rest
    with _connect(server) as sock:
        sock.sendall(request[:split])
        time.sleep(0.2)
        sock.sendall(request[split:])
        answer = http.client.HTTPResponse(sock, method="POST")
        answer.begin()
        assert answer.status == 200
        assert json.loads(answer.read())["choices"][0]["message"]["content"] == "ok"


@pytest.mark.parametrize("length", ["\u00b2", "5x"])
def test_a_content_length_that_is_not_ascii_digits_is_refused(server: LlmTestServer, length: str) -> None:
    with _connect(server) as sock:
        sock.sendall(
            f"POST {OPENAI_CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\n".encode(
                "latin-1"
            )
        )
        assert _answer(sock).status == 400


def _fast(data: bytes) -> tuple[object, LlmtsPyWSGIHandler, io.BufferedReader, list[dict[str, Any]]]:
    """The handler's fast path on ``data`` as the connection's buffer (the response step recorded)."""
    handler = LlmtsPyWSGIHandler.__new__(LlmtsPyWSGIHandler)
    rfile = io.BufferedReader(io.BytesIO(data))
    handler.rfile = rfile
    handler.server = SimpleNamespace(application=None, get_environ=dict)
    handler.client_address = ("127.0.0.1", 1)
    handler.socket = None
    answered: list[dict[str, Any]] = []
    handler.handle_one_response = lambda: answered.append(handler.environ)  # type: ignore[method-assign]
    return handler._fast_request(), handler, rfile, answered


def test_the_fast_path_takes_a_buffered_request_and_leaves_the_next_in_the_buffer() -> None:
    following = b"GET /health HTTP/1.1\r\n\r\n"
    result, handler, rfile, answered = _fast(_chat("Connection: keep-alive\r\n") + following)
    assert result is True and len(answered) == 1
    environ = answered[0]
    assert environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"] == OPENAI_CHAT_PATH
    assert environ["CONTENT_LENGTH"] == str(len(_BODY)) and environ["wsgi.input"].read() == _BODY
    assert handler.requestline == f"POST {OPENAI_CHAT_PATH} HTTP/1.1" and handler.close_connection is False
    assert rfile.read() == following


@pytest.mark.parametrize(
    "data",
    [
        _chat().replace(b"HTTP/1.1", b"HTTP/1.0", 1),
        b"HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
        b"GET /x HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /x HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
        _chat()[:-5],  # the body is still arriving
        b"POST /x HTTP/1.1\r\nContent-Length: 5x\r\n\r\n",
        b"GET /x HTTP/1.1\r\nBad Name: 1\r\n\r\n",
        b"GET /x HTTP/1.1\r\nA: 1\r\n folded\r\n\r\n",
        b"GET  /x  HTTP/1.1 extra\r\n\r\n",
        b"GET /x HTTP/1.1\r\nA: 1\r\n",  # the head is still arriving
    ],
)
def test_the_fast_path_leaves_everything_else_to_gevent_untouched(data: bytes) -> None:
    result, _, rfile, answered = _fast(data)
    assert result is not True and result is not None and not answered
    assert rfile.read() == data


def test_a_body_read_with_its_head_needs_no_body_deadline() -> None:
    """The fast path's in-memory body cannot stall: the app reads it without arming a timer."""
    spares: dict[str, Any] = {}
    environ = {
        "wsgi.input": io.BytesIO(_BODY),
        "CONTENT_LENGTH": str(len(_BODY)),
        SERVER_CONNECTION_DEADLINES: spares,
    }
    assert read_body(environ, 1 << 20, 0.001) == _BODY
    assert spares == {}  # no per-connection body deadline was made
