"""llmts's own HTTP/1.1 loop (llmts/server/http/, docs/architecture.md "The server's hot path"), in memory:
the parser's environ and bounds, the response head's checks, the batching yield, and the upgrade seam
(a gevent socket pair stands for the client). The same behaviour over real sockets is in
test_request_line.py, test_hostile_input.py and test_timeouts.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import gevent
import orjson
import pytest
from gevent import socket as gsocket

from llmts.server.http.access_log import AccessLog
from llmts.server.http.body import BodyBroken, StreamingBody
from llmts.server.http.connection import Http1Server
from llmts.server.http.connections import ConnectionTracker
from llmts.server.http.parser import (
    MAX_HEAD_BYTES,
    MAX_HEADER_FIELDS,
    MAX_TARGET_BYTES,
    Request,
    RequestParser,
)
from llmts.server.http.response import ResponseHead
from llmts.server.http.upgrade import UpgradeRequest

_BASE = {"wsgi.version": (1, 0), "SCRIPT_NAME": ""}


def _parsed(*packets: bytes) -> RequestParser:
    parser = RequestParser(dict(_BASE))
    for packet in packets:
        parser.feed(memoryview(packet))
    return parser


# --- the parser ------------------------------------------------------------------------------------------


def test_the_environ_follows_gevents_rules() -> None:
    """Repeated fields joined (cookies with "; "), names with "_" dropped, Content-Type/-Length under their
    own keys, the path unquoted, the raw target kept, trailing whitespace of a value dropped."""
    parser = _parsed(
        b"POST /a%20b?x=1 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-A: 1 \r\n"
        b"x-a: 2\r\nCookie: a=1\r\nCookie: b=2\r\nX_Forged: evil\r\n\r\n{}"
    )
    [request] = parser.ready
    env = request.environ
    assert (env["REQUEST_METHOD"], env["SERVER_PROTOCOL"]) == ("POST", "HTTP/1.1")
    assert (env["PATH_INFO"], env["QUERY_STRING"], env["RAW_URI"]) == ("/a b", "x=1", "/a%20b?x=1")
    assert (env["CONTENT_TYPE"], env["CONTENT_LENGTH"]) == ("application/json", "2")
    assert env["HTTP_X_A"] == "1,2" and env["HTTP_COOKIE"] == "a=1; b=2"
    assert "HTTP_X_FORGED" not in env and "HTTP_CONTENT_TYPE" not in env
    assert env["SCRIPT_NAME"] == "" and request.complete and request.body == [b"{}"]
    assert not request.close and not parser.dead


def test_pipelined_requests_queue_in_order_and_a_body_may_arrive_later() -> None:
    parser = _parsed(
        b"GET /one HTTP/1.1\r\n\r\nPOST /two HTTP/1.1\r\nContent-Length: 6\r\nConnection: close\r\n\r\nab"
    )
    first, second = parser.ready
    assert first.environ["PATH_INFO"] == "/one" and first.complete
    assert second.environ["PATH_INFO"] == "/two" and not second.complete and second.close
    parser.feed(b"cdef")
    assert second.complete and b"".join(second.body) == b"abcdef"


@pytest.mark.parametrize(
    ("version", "connection", "close"),
    [
        ("1.1", None, False),
        ("1.1", "close", True),
        ("1.1", "Keep-Alive, Close", True),
        ("1.0", None, True),
        ("1.0", "keep-alive", False),
        ("1.0", "Keep-Alive", False),
    ],
)
def test_each_version_keeps_or_closes_as_http_says(version: str, connection: str | None, close: bool) -> None:
    extra = f"Connection: {connection}\r\n" if connection else ""
    [request] = _parsed(f"GET / HTTP/{version}\r\n{extra}\r\n".encode()).ready
    assert request.close is close


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET / HTTP/2.0\r\n\r\n", 400),
        (b"GET /\r\n\r\n", 400),  # HTTP/0.9
        (b"HEAD / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 400),
        (
            b"GET / HTTP/1.1\r\n"
            + b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADER_FIELDS + 1))
            + b"\r\n",
            400,
        ),
        (b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 66_000 + b"\r\n\r\n", 400),
        (b"GET /" + b"a" * MAX_TARGET_BYTES + b" HTTP/1.1\r\n\r\n", 414),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nBad Name: 1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n", 400),
    ],
)
def test_what_the_server_refuses_before_the_app(data: bytes, status: int) -> None:
    parser = _parsed(data)
    assert not parser.ready and parser.dead
    assert parser.error is not None and parser.error.status == status


def test_the_target_is_bounded_while_it_arrives() -> None:
    parser = _parsed(b"GET /" + b"a" * 5000, b"a" * 5000)  # no line end yet: refused all the same
    assert parser.error is not None and parser.error.status == 414


def test_a_head_that_never_ends_is_bounded() -> None:
    parser = _parsed(b"GET / HTTP/1.1\r\nX-Endless: ")
    for _ in range(MAX_HEAD_BYTES // 60_000 + 2):
        if parser.dead:
            break
        parser.feed(b"a" * 60_000)
    assert parser.error is not None and "head is longer" in parser.error.reason


def test_broken_chunked_framing_after_a_good_head_is_the_bodys_error() -> None:
    """The head reaches the app, whose body read fails (it answers 400 in its route's envelope)."""
    parser = _parsed(b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
    [request] = parser.ready
    assert parser.error is None and request.body_error is not None and not request.complete

    def pull(_: Request) -> None:
        raise BodyBroken("broken")

    with pytest.raises(OSError):
        StreamingBody(request, pull, None).read(100)


def test_an_upgrade_stops_the_parsing_and_keeps_the_bytes_after_it() -> None:
    parser = _parsed(b"GET /ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello")
    [request] = parser.ready
    assert request.upgrade and parser.dead and parser.leftover == b"\x81\x05hello"


def test_a_streaming_body_sends_100_continue_once_and_reads_what_it_is_asked() -> None:
    parser = _parsed(b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 6\r\n\r\n")
    [request] = parser.ready
    assert request.expect_continue and not request.complete
    events: list[str] = []
    arrivals = iter([b"abc", b"def"])

    def pull(_: Request) -> None:
        events.append("read")
        parser.feed(next(arrivals))

    body = StreamingBody(request, pull, lambda: events.append("100 Continue"))
    assert body.read(2) == b"ab" and body.read() == b"cdef" and body.read() == b""
    assert events == ["100 Continue", "read", "read"]


# --- the response head ------------------------------------------------------------------------------------


def test_the_response_head_is_encoded_and_notes_what_the_app_provided() -> None:
    head = ResponseHead("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2"), ("Date", "d")])
    assert head.status == b"200 OK" and head.code == 200 and head.content_length == "2" and head.date
    assert bytes(head.fields) == b"Content-Type: text/plain\r\nContent-Length: 2\r\nDate: d\r\n"
    assert ResponseHead("200 OK", [("Connection", "close")]).close


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        ("200 OK", [("X-Injected", "a\r\nSet-Cookie: b")]),
        ("200 OK", [("X-Bad\n", "a")]),
        ("200 OK\r\nX: y", []),
        ("200 OK", [("X-Name", "snowman \u2603")]),
        ("200 OK", [(b"X-Bytes", "a")]),
        ("204 No Content", [("Content-Length", "5")]),
        ("2000 Huge", []),
        ("OK", []),
    ],
)
def test_the_response_head_refuses_what_pep_3333_and_http_refuse(status: str, headers: list[Any]) -> None:
    with pytest.raises(ValueError):
        ResponseHead(status, headers)


# --- the connection, over a gevent socket pair ------------------------------------------------------------


class _App:
    """A WSGI app recording what it saw; ``upgrade_handler`` is the seam's hook."""

    def __init__(self, upgrade: Callable[[UpgradeRequest], None] | None = None) -> None:
        self.environs: list[dict[str, Any]] = []
        self._upgrade = upgrade

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        self.environs.append(environ)
        body = environ["wsgi.input"].read()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"got " + body]

    def upgrade_handler(self, environ: dict[str, Any]) -> Callable[[UpgradeRequest], None] | None:
        return self._upgrade if environ["PATH_INFO"] == "/ws" else None


def _served(app: Any) -> Iterator[tuple[Any, gevent.Greenlet]]:
    client, server_side = gsocket.socketpair()
    server = Http1Server(app, dict(_BASE), ConnectionTracker(5.0, 5.0), None, None)
    greenlet = gevent.spawn(server.handle, server_side, ("127.0.0.1", 1))
    yield client, greenlet
    client.close()
    greenlet.kill()


@pytest.fixture
def connect() -> Iterator[Callable[[Any], tuple[Any, gevent.Greenlet]]]:
    opened: list[Iterator[tuple[Any, gevent.Greenlet]]] = []

    def start(app: Any) -> tuple[Any, gevent.Greenlet]:
        served = _served(app)
        opened.append(served)
        return next(served)

    yield start
    for served in opened:
        next(served, None)


def _read_all(client: Any) -> bytes:
    data = b""
    with gevent.Timeout(5):
        while chunk := client.recv(65536):
            data += chunk
    return data


def test_a_websocket_upgrade_is_handed_to_the_routes_handler_with_the_bytes_after_the_head(
    connect: Callable[[Any], tuple[Any, gevent.Greenlet]],
) -> None:
    handed: list[UpgradeRequest] = []

    def handler(upgrade: UpgradeRequest) -> None:
        handed.append(upgrade)
        upgrade.sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\n\r\n" + upgrade.leftover)

    app = _App(handler)
    client, _ = connect(app)
    client.sendall(b"GET /ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nframe")
    answer = _read_all(client)  # the handler returned: the connection is closed
    assert answer == b"HTTP/1.1 101 Switching Protocols\r\n\r\nframe"
    [upgrade] = handed
    assert upgrade.environ["PATH_INFO"] == "/ws" and upgrade.leftover == b"frame" and not app.environs


def test_a_websocket_upgrade_on_a_route_without_one_is_a_clear_400(
    connect: Callable[[Any], tuple[Any, gevent.Greenlet]],
) -> None:
    app = _App()
    client, _ = connect(app)
    client.sendall(b"GET /openai/v1/realtime HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
    head, _, body = _read_all(client).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and b"Connection: close" in head
    error = orjson.loads(body)["error"]
    assert error["code"] == "websocket_not_supported" and "/openai/v1/realtime" in error["message"]
    assert not app.environs


def test_another_protocols_upgrade_is_ignored_and_the_request_served(
    connect: Callable[[Any], tuple[Any, gevent.Greenlet]],
) -> None:
    app = _App()
    client, _ = connect(app)
    client.sendall(b"GET /x HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\r\nPRI * ...")
    head, _, body = _read_all(client).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"Connection: close" in head and body == b"got "


def test_a_body_the_app_reads_while_it_arrives(connect: Callable[[Any], tuple[Any, gevent.Greenlet]]) -> None:
    app = _App()
    client, _ = connect(app)
    client.sendall(
        b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"
    )
    with gevent.Timeout(5):
        assert client.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
    client.sendall(b"ab")
    gevent.sleep(0.05)
    client.sendall(b"cd")
    head, _, body = _read_all(client).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and body == b"got abcd"


def test_the_access_log_gets_one_line_per_request_and_one_for_a_rejection() -> None:
    lines: list[str] = []

    class _Stream:
        def write(self, text: str) -> None:
            lines.extend(text.splitlines())

        def flush(self) -> None:
            return None

    access = AccessLog(lambda: [_Stream()])  # type: ignore[list-item]
    client, server_side = gsocket.socketpair()
    server = Http1Server(_App(), dict(_BASE), ConnectionTracker(5.0, 5.0), access, None)
    greenlet = gevent.spawn(server.handle, server_side, ("127.0.0.1", 1))
    client.sendall(b"GET /a?q=1 HTTP/1.1\r\nUser-Agent: t\r\n\r\nGET /b HTTP/9.9\r\n\r\n")
    _read_all(client)
    greenlet.join(5)
    access.flush()
    assert len(lines) == 2
    assert '"GET /a?q=1 HTTP/1.1" 200 ' in lines[0] and lines[0].endswith('"-" "t"')
    assert '"- - -" 400 ' in lines[1]


def test_an_app_error_before_the_head_is_a_500_in_the_control_envelope(
    connect: Callable[[Any], tuple[Any, gevent.Greenlet]],
) -> None:
    def broken(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        raise RuntimeError("a bug")

    client, _ = connect(broken)
    client.sendall(b"GET /x HTTP/1.1\r\n\r\n")
    head, _, body = _read_all(client).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 500 ") and b"Connection: close" in head
    assert orjson.loads(body)["error"]["code"] == "llm_test_server_internal_error"


def test_an_http_1_0_answer_without_a_length_ends_with_the_connection(
    connect: Callable[[Any], tuple[Any, gevent.Greenlet]],
) -> None:
    def streaming(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        yield b"a"
        yield b"b"

    client, _ = connect(streaming)
    client.sendall(b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    head, _, body = _read_all(client).partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head and b"Connection: close" in head and body == b"ab"


def test_the_default_worker_does_not_load_the_pywsgi_handler() -> None:
    """Only ``--worker-class gevent_pywsgi`` touches gevent's private methods (docs/server.md, "HTTP")."""
    code = (
        "import sys, llmts.app, llmts.server.worker; print('llmts.server.http.pywsgi_handler' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"
