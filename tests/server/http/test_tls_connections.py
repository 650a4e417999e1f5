"""The connection loop on a TLS port (``llmts serve --tls``, docs/tls.md), over raw TLS sockets: no
session tickets are issued, the handshake is bounded by the request-head timeout, a plain HTTP request
gets a clear 400, a client that stops reading is dropped by the write timeout, a client leaving during a
delay is noticed, and a stream cut by a graceful stop still ends cleanly inside TLS."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmts import LlmTestServer, SessionClient
from tests.helpers import USER_HI, read_until
from tests.support.servers import BackgroundStops

_WORKERS = ["llmts", "gevent_pywsgi"]


@pytest.fixture(scope="module")
def tls_servers(background_stops: BackgroundStops) -> Iterator[Callable[[str], LlmTestServer]]:
    """One TLS server per worker class, shared by the tests that leave it serving."""
    servers: dict[str, LlmTestServer] = {}

    def get(worker: str) -> LlmTestServer:
        if worker not in servers:
            options = ["--worker-class", worker, "--request-head-timeout", "2", "--write-timeout", "0.5"]
            servers[worker] = LlmTestServer.start(tls=True, extra_args=options)
        return servers[worker]

    yield get
    for server in servers.values():
        background_stops.stop(server)


def _address(server: LlmTestServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _tls_connect(server: LlmTestServer, rcvbuf: int | None = None) -> ssl.SSLSocket:
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.settimeout(5)
    raw.connect(_address(server))
    context = ssl.create_default_context(cafile=server.ca_file)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def _chat_request(session: SessionClient, body: dict[str, Any]) -> bytes:
    raw = json.dumps(body).encode()
    path = urlsplit(session.provider_base).path + "/openai/v1/chat/completions"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(raw)}\r\n\r\n"
    )
    return head.encode() + raw


def _read_to_close(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _completed(session: SessionClient, within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while not (entries := session.requests(completed=True)):
        assert time.monotonic() < deadline, f"the request did not complete within {within} s"
        time.sleep(0.05)
    [entry] = entries
    return dict(entry)


def test_a_client_that_never_shakes_hands_is_closed_by_the_request_head_timeout(
    tls_servers: Callable[[str], LlmTestServer],
) -> None:
    server = tls_servers("llmts")
    with socket.create_connection(_address(server), timeout=10) as silent:
        connected = time.monotonic()
        assert silent.recv(100) == b""  # closed, no ClientHello ever sent
        assert 1.5 < time.monotonic() - connected < 6
    assert server.health()


def test_a_plain_http_request_on_the_tls_port_gets_a_clear_400(
    tls_servers: Callable[[str], LlmTestServer],
) -> None:
    server = tls_servers("llmts")  # llmts's own connection loop (the default worker class)
    with socket.create_connection(_address(server), timeout=5) as plain:
        plain.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = _read_to_close(plain)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    error = json.loads(body)["error"]
    assert error["code"] == "malformed_http_request" and "https://" in error["message"]


@pytest.mark.parametrize("worker", _WORKERS)
def test_a_tls_client_that_stops_reading_is_dropped_after_the_write_timeout(
    tls_servers: Callable[[str], LlmTestServer], worker: str
) -> None:
    server = tls_servers(worker)
    session = server.create_session()
    session.configure({"scenarios": [{"responses": [{"text": "x" * 6_000_000}]}]})  # > the kernel's buffers
    sock = _tls_connect(server, rcvbuf=4096)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI}))

    entry = _completed(session, within=5)
    assert entry["transport_outcome"] == "client_gone"
    assert entry["error_code"] == "llm_test_server_write_timeout" and entry["success"] is False
    sock.close()
    assert server.health()


def test_a_tls_client_leaving_during_a_delay_is_noticed(tls_servers: Callable[[str], LlmTestServer]) -> None:
    server = tls_servers("llmts")
    session = server.create_session()
    session.configure(
        {"scenarios": [{"responses": [{"text": "never read", "delay_ms": 5000}, {"text": "next"}]}]}
    )
    sock = _tls_connect(server)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI}))
    time.sleep(0.3)
    sock.close()  # Python's ssl closes without close_notify: the server sees the TCP FIN under TLS
    left = time.monotonic()

    entry = _completed(session, within=4)
    assert time.monotonic() - left < 2.5, "the delay was not interrupted by the departure"
    assert entry["transport_outcome"] == "client_gone"
    follow_up = session.openai_client().chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert follow_up.choices[0].message.content == "next"


def test_a_pipelined_request_during_a_delay_is_no_departure(
    tls_servers: Callable[[str], LlmTestServer],
) -> None:
    # Bytes waiting under TLS during a delay are the next request, not a client leaving: both are answered.
    server = tls_servers("llmts")
    session = server.create_session()
    session.configure(
        {"scenarios": [{"responses": [{"text": "first", "delay_ms": 600}, {"text": "second"}]}]}
    )
    request = _chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI})
    sock = _tls_connect(server)
    sock.sendall(request)
    time.sleep(0.2)  # the first request is waiting out its delay
    sock.sendall(request)
    answers = b""
    while answers.count(b"HTTP/1.1 200 ") < 2 or not answers.endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, f"closed after {answers!r}"
        answers += chunk
    sock.close()
    assert b'"content":"first"' in answers and b'"content":"second"' in answers
    assert [entry["success"] for entry in session.requests(order="asc")] == [True, True]


def test_a_tls_client_sending_close_notify_during_a_delay_is_noticed(
    tls_servers: Callable[[str], LlmTestServer],
) -> None:
    server = tls_servers("llmts")
    session = server.create_session()
    session.configure({"scenarios": [{"responses": [{"text": "never read", "delay_ms": 5000}]}]})
    sock = _tls_connect(server)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI}))
    time.sleep(0.3)
    # The TLS close_notify alert (in TLS 1.3 an encrypted record), the TCP connection left open: without
    # waiting, unwrap sends the alert and gives up on reading the server's.
    sock.setblocking(False)
    with pytest.raises(ssl.SSLError):
        sock.unwrap()
    left = time.monotonic()

    entry = _completed(session, within=4)
    assert time.monotonic() - left < 2.5, "the delay was not interrupted by the client's close_notify"
    assert entry["transport_outcome"] == "client_gone"
    sock.close()


def test_a_stream_cut_by_the_graceful_stop_ends_cleanly_inside_tls(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(tls=True, extra_args=["--graceful-timeout", "2"])
    session = server.create_session()
    plan = {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 30_000}
    response = {"text": "a b c", "chunks": ["a ", "b ", "c"], "stream_delivery": plan}
    session.configure({"scenarios": [{"responses": [response]}]})
    sock = _tls_connect(server)
    sock.settimeout(10)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "stream": True, "messages": USER_HI}))
    started = read_until(sock, b'"content":"a "')  # the stream is running (not a sleep: a loaded VM is slow)
    assert server.process is not None
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)

    # Decrypted: the end was written inside TLS, not in clear text after it.
    answer = started + _read_to_close(sock)

    assert answer.endswith(b"\r\n0\r\n\r\n")
    assert b'"content":"a "' in answer and b'"content":"b "' not in answer
    assert 1.0 < time.monotonic() - signalled < 2.0
    assert server.process.wait(10) == 0


@pytest.mark.parametrize("worker", _WORKERS)
def test_no_session_ticket_follows_the_handshake(
    tls_servers: Callable[[str], LlmTestServer], worker: str
) -> None:
    # A ticket would reach a client while it writes its first request; websockets' sync client reads in
    # another thread, on the same SSL object (docs/tls.md, "Session tickets").
    with _tls_connect(tls_servers(worker)) as sock:
        assert sock.version() == "TLSv1.3"  # where tickets come after the handshake
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ")
        session = sock.session
        assert session is not None and not session.has_ticket
