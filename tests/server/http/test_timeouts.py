"""Timeouts and graceful stop over raw sockets, on both gunicorn workers (docs/server.md)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmts import LlmTestServer, SessionClient
from llmts.server.http.timeouts import Timeouts
from tests.helpers import USER_HI, free_port, raw_request, read_until
from tests.support.servers import BackgroundStops

# One shared server per worker class for every test that leaves it serving: the head, body and keep-alive
# tests get small answers (the write deadline never waits), and the write tests send their requests whole
# and at once. The body gets 2 s, not 0.5: the write tests' 6 MB configure bodies must arrive within it,
# also on a loaded machine.
_SHARED = ["--request-head-timeout", "0.5", "--keepalive-timeout", "0.5", "--body-timeout", "2"]
_SHARED += ["--write-timeout", "0.5"]
_WORKERS = ["llmts", "gevent_pywsgi", "gevent"]


@pytest.fixture(scope="module")
def shared_server(background_stops: BackgroundStops) -> Iterator[Callable[..., LlmTestServer]]:
    """One server per set of options for this module's tests that leave it serving (each uses its own
    session and connections), instead of a start per test; tests that stop theirs start their own."""
    servers: dict[tuple[str, ...], LlmTestServer] = {}

    def get(*extra_args: str) -> LlmTestServer:
        if extra_args not in servers:
            servers[extra_args] = LlmTestServer.start(extra_args=list(extra_args))
        return servers[extra_args]

    yield get
    for server in servers.values():
        background_stops.stop(server)


def _connect(server: LlmTestServer, rcvbuf: int | None = None) -> socket.socket:
    parts = urlsplit(server.url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect((parts.hostname, parts.port))
    sock.settimeout(5)
    return sock


def _read_to_close(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _read_health(sock: socket.socket) -> None:
    data = b""
    while not data.endswith(b'{"status":"ok"}'):
        data += sock.recv(65536)
    assert data.startswith(b"HTTP/1.1 200")


def _chat_request(session: SessionClient, body: dict[str, Any], declared: int | None = None) -> bytes:
    raw = json.dumps(body).encode()
    path = urlsplit(session.provider_base).path + "/openai/v1/chat/completions"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {declared if declared is not None else len(raw)}\r\n\r\n"
    )
    return head.encode() + raw


@pytest.mark.parametrize("worker", _WORKERS)
def test_stuck_clients_are_closed_after_the_head_timeout_while_others_are_served(
    shared_server: Callable[..., LlmTestServer], worker: str
) -> None:
    server = shared_server(*_SHARED, "--worker-class", worker)
    baseline = server.process_stats()["open_sockets"]
    # Before the first connection: each one's head deadline starts at or after this instant, however long
    # a busy machine takes to open the forty.
    opened = time.monotonic()
    stuck = [_connect(server) for _ in range(40)]
    for index, sock in enumerate(stuck):  # silent, half a request line, or headers without the blank line
        sock.sendall(
            [b"", b"POST /openai/v1/chat", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"][index % 3]
        )
    sent = time.monotonic()

    # Served meanwhile, at once.
    assert raw_request(server.url, "GET", "/health").status == 200
    assert time.monotonic() - sent < 0.4

    for sock in stuck:
        assert _read_to_close(sock) == b""  # closed without an answer: nothing was admitted
        sock.close()
    assert 0.4 < time.monotonic() - opened < 3.0
    deadline = time.monotonic() + 3
    while server.process_stats()["open_sockets"] > baseline + 1:
        assert time.monotonic() < deadline, "the server kept the stuck sockets"
        time.sleep(0.05)


@pytest.mark.parametrize("worker", _WORKERS)
def test_idle_keepalive_connection_is_closed_after_the_keepalive_timeout(
    shared_server: Callable[..., LlmTestServer], worker: str
) -> None:
    server = shared_server(*_SHARED, "--worker-class", worker)
    sock = _connect(server)
    # The server's 0.5 s keep-alive starts after its answer, so after ``sent``: the lower bound counts from
    # there (on a busy machine this process may read the answer well after the server wrote it).
    sent = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    _read_health(sock)
    answered = time.monotonic()

    assert _read_to_close(sock) == b""
    closed = time.monotonic()
    assert closed - sent > 0.45 and closed - answered < 3.0


@pytest.mark.parametrize("worker", _WORKERS)
def test_body_shorter_than_content_length_gets_408_and_is_journaled(
    shared_server: Callable[..., LlmTestServer], worker: str
) -> None:
    server = shared_server(*_SHARED, "--worker-class", worker)
    session = server.create_session()
    request = _chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI}, declared=4000)
    sock = _connect(server)
    sent = time.monotonic()  # before the server can start the body deadline
    sock.sendall(request)

    answer = _read_to_close(sock)  # the server answers and closes the connection

    assert 1.9 < time.monotonic() - sent < 4.5  # the shared servers' 2 s body timeout
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["error"]["code"] == "llm_test_server_body_timeout"  # OpenAI's envelope
    [entry] = session.requests()
    assert (entry["status"], entry["error_code"], entry["success"]) == (
        408,
        "llm_test_server_body_timeout",
        False,
    )


def test_a_kept_alive_connections_later_body_is_bounded_too(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """Idle periods and bodies are bounded afresh per request (docs/architecture.md, "The server's hot
    path"): two idle gaps that add up to more than the keep-alive timeout keep the connection, and the
    third request's stalled body still gets its 408 in time (its deadline is re-armed, not remade)."""
    # Idle gaps of 0.6 s under a 1 s keep-alive: apart within it, together beyond it.
    server = own_server_factory(
        extra_args=["--request-head-timeout", "1", "--keepalive-timeout", "1", "--body-timeout", "0.5"]
    )
    session = server.create_session()
    body = {"model": "gpt-4.1-mini", "messages": USER_HI}
    sock = _connect(server)
    for _ in range(2):  # whole bodies, well within the timeout each
        sock.sendall(_chat_request(session, body))
        data = b""
        while b'"finish_reason"' not in data:
            data += sock.recv(65536)
        assert data.startswith(b"HTTP/1.1 200")
        time.sleep(0.6)  # each gap's deadline starts afresh
    sent = time.monotonic()  # before the server can start the body deadline
    sock.sendall(_chat_request(session, body, declared=4000))
    head, _, _ = _read_to_close(sock).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and 0.4 < time.monotonic() - sent < 3.0
    assert [e["status"] for e in session.requests()] == [408, 200, 200]


def test_control_route_body_timeout_answers_in_the_control_envelope(
    shared_server: Callable[..., LlmTestServer],
) -> None:
    server = shared_server(*_SHARED, "--worker-class", "llmts")
    sock = _connect(server)
    sock.sendall(b"POST /admin-api/configure HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\n{")

    head, _, body = _read_to_close(sock).partition(b"\r\n\r\n")

    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["error"]["code"] == "llm_test_server_body_timeout"


@pytest.mark.parametrize("worker", _WORKERS)
def test_stream_nobody_reads_is_dropped_after_the_write_timeout(
    shared_server: Callable[..., LlmTestServer], worker: str
) -> None:
    server = shared_server(*_SHARED, "--worker-class", worker)
    session = server.create_session()
    session.configure({"scenarios": [{"responses": [{"text": "x" * 6_000_000}]}]})  # > the kernel's buffers
    # A tiny receive window and a reader that never reads: the server's sendall blocks.
    sock = _connect(server, rcvbuf=4096)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "stream": True, "messages": USER_HI}))

    deadline = time.monotonic() + 5
    while not (entries := session.requests(completed=True)):
        assert time.monotonic() < deadline, "the stalled write was never given up"
        time.sleep(0.05)
    [entry] = entries
    assert entry["transport_outcome"] == "client_gone"
    assert entry["error_code"] == "llm_test_server_write_timeout"
    assert entry["success"] is False and entry["terminal_marker_observed"] is False
    with pytest.raises(ConnectionResetError):  # dropped with a reset: the unsent megabytes are discarded
        _read_to_close(sock)
    sock.close()
    assert raw_request(server.url, "GET", "/health").status == 200


@pytest.mark.parametrize("worker", _WORKERS)
def test_whole_body_nobody_reads_is_dropped_after_the_write_timeout(
    shared_server: Callable[..., LlmTestServer], worker: str
) -> None:
    # Non-stream answers are one write; under the llmts and gevent_pywsgi workers the server arms the deadline
    # only for the part the socket buffer refused (docs/architecture.md, "The server's hot path").
    server = shared_server(*_SHARED, "--worker-class", worker)
    session = server.create_session()
    session.configure({"scenarios": [{"responses": [{"text": "x" * 6_000_000}]}]})
    sock = _connect(server, rcvbuf=4096)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI}))

    deadline = time.monotonic() + 5
    while not (entries := session.requests(completed=True)):
        assert time.monotonic() < deadline, "the stalled write was never given up"
        time.sleep(0.05)
    [entry] = entries
    assert entry["transport_outcome"] == "client_gone"
    assert entry["error_code"] == "llm_test_server_write_timeout" and entry["success"] is False
    with pytest.raises(ConnectionResetError):
        _read_to_close(sock)
    sock.close()
    assert raw_request(server.url, "GET", "/health").status == 200


@pytest.mark.parametrize("worker", _WORKERS)
def test_each_write_gets_the_whole_write_timeout_however_long_earlier_ones_waited(
    own_server_factory: Callable[..., LlmTestServer], worker: str
) -> None:
    """A deadline is re-armed for every write: two answers on one connection that each wait 2.5 s for a
    slow reader both arrive under a 4 s write timeout (a resumed timer would have 1.5 s left and fire
    during the second wait). The 1.5 s left after each wait is the margin for reading the 6 MB answer,
    which the reader takes with a large receive buffer: through the 4 KB one the wait needs, the ~1,500
    wake-ups of the read overran 1.5 s on a busy machine."""
    server = own_server_factory(extra_args=["--write-timeout", "4", "--worker-class", worker])
    session = server.create_session()
    text = "x" * 6_000_000  # more than the kernel buffers: the server's write waits for the reader
    session.configure({"scenarios": [{"terminal_policy": "restart", "responses": [{"text": text}]}]})
    sock = _connect(server, rcvbuf=4096)
    request = _chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI})
    for _ in range(2):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(request)
        time.sleep(2.5)  # the server's write is blocked meanwhile
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        head, _, body = head.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:])
        length = int(fields[b"Content-Length"])
        while len(body) < length:
            body += sock.recv(1 << 20)
        assert json.loads(body)["choices"][0]["message"]["content"] == text
    sock.close()
    assert [e["success"] for e in session.requests()] == [True, True]


@pytest.mark.parametrize("worker", _WORKERS)
def test_sigterm_exits_as_soon_as_work_is_done_despite_idle_keepalive(
    own_server_factory: Callable[..., LlmTestServer], worker: str
) -> None:
    server = own_server_factory(extra_args=["--graceful-timeout", "20", "--worker-class", worker])
    session = server.create_session()
    session.configure({"scenarios": [{"responses": [{"text": "late", "delay_ms": 700}]}]})
    idle = _connect(server)
    idle.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    _read_health(idle)
    busy = _connect(server)
    busy.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "messages": USER_HI}))
    time.sleep(0.2)
    assert server.process is not None
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)

    head, _, body = _read_to_close(busy).partition(b"\r\n\r\n")  # in-flight work still completes
    assert head.startswith(b"HTTP/1.1 200") and b"late" in body
    assert _read_to_close(idle) == b""
    assert server.process.wait(10) == 0
    assert time.monotonic() - signalled < 5.0  # far below the 20 s budget


@pytest.mark.parametrize("worker", _WORKERS)
def test_stream_running_at_the_graceful_deadline_gets_a_clean_end(
    own_server_factory: Callable[..., LlmTestServer], worker: str
) -> None:
    server = own_server_factory(extra_args=["--graceful-timeout", "2", "--worker-class", worker])
    session = server.create_session()
    plan = {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 30_000}
    response = {"text": "a b c", "chunks": ["a ", "b ", "c"], "stream_delivery": plan}
    session.configure({"scenarios": [{"responses": [response]}]})
    sock = _connect(server)
    sock.sendall(_chat_request(session, {"model": "gpt-4.1-mini", "stream": True, "messages": USER_HI}))
    started = read_until(sock, b'"content":"a "')  # the stream is running (not a sleep: a loaded VM is slow)
    assert server.process is not None
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)

    answer = started + _read_to_close(sock)

    assert answer.endswith(b"\r\n0\r\n\r\n")  # the chunked terminator: a clean end, like early_clean_end
    assert b'"content":"a "' in answer and b'"content":"b "' not in answer and b"[DONE]" not in answer
    assert 1.0 < time.monotonic() - signalled < 2.0
    assert server.process.wait(10) == 0
    assert time.monotonic() - signalled < 4.0


def test_timeouts_validate_and_read_the_environment() -> None:
    assert Timeouts() == Timeouts(request_head=10, body=30, write=60, keepalive=30, graceful=5)
    env = {"LLMTS_WRITE_TIMEOUT": "2.5", "LLMTS_GRACEFUL_TIMEOUT": "1"}
    assert Timeouts.from_env(env) == Timeouts(write=2.5, graceful=1)
    with pytest.raises(ValueError, match="LLMTS_BODY_TIMEOUT"):
        Timeouts.from_env({"LLMTS_BODY_TIMEOUT": "soon"})
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="write timeout"):
            Timeouts(write=bad)


def test_invalid_timeout_options_exit_with_2(
    cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llmts serve``'s checks before it starts anything, through its ``main`` in process (a real
    ``python -m llmts serve`` exiting 2 is tests/server/process/test_cli.py's)."""
    status, _, err = cli("serve", "--port", "0", "--write-timeout", "0")
    assert status == 2 and "write timeout" in err
    monkeypatch.setenv("LLMTS_KEEPALIVE_TIMEOUT", "later")
    status, _, err = cli("serve", "--port", "0")
    assert status == 2 and "LLMTS_KEEPALIVE_TIMEOUT" in err


def test_plain_gunicorn_gets_body_and_head_deadlines(tmp_path: Any) -> None:
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-k", "gevent", "-w", "1", "--no-control-socket"]
    command += ["--keep-alive", "1", "-b", f"127.0.0.1:{port}", "llmts.app:create_app()"]
    env = {**os.environ, "LLMTS_BODY_TIMEOUT": "0.5"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        server = LlmTestServer.attach(f"http://127.0.0.1:{port}", timeout=20)
        silent = _connect(server)  # gunicorn's own keep-alive setting bounds the head
        sock = _connect(server)
        sock.sendall(
            _chat_request(server.create_session(), {"model": "m", "messages": USER_HI}, declared=900)
        )

        assert _read_to_close(sock).startswith(b"HTTP/1.1 408")
        assert _read_to_close(silent) == b""
    finally:
        proc.kill()
        proc.wait(10)
