"""The worker's real memory under large requests stays within ``--max-memory`` plus the documented
constant, falls back when the session is deleted, and a client that does not read a large answer is
charged to the budget (docs/server.md, "Memory"; docs/design/memory.md, "Memory beyond the accounted
bytes"). Raw HTTP: what is measured is the server's process, not a client's behaviour."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest

from llmts import LlmTestServer

# The subject is the server process's own memory, measured as ``llmts serve`` runs it (tests/conftest.py).
pytestmark = pytest.mark.fresh_interpreter

MiB = 1024 * 1024
# docs/server.md ("Memory"): the worker's RSS stays within the budget plus this, with up to 8 requests
# of 1 MB in flight.
RSS_ABOVE_BUDGET = 80 * MiB
# Plus, once loaded, the encoding of the model these requests name (docs/tokens.md, "What it costs"):
# llmts's counter for the short texts (about 4 MiB, 5.5 with the ``regex`` module a text that is not all
# ASCII loads) and bpe-openai's for these long ones (about 35 MiB).
O200K_BASE_RSS = 45 * MiB
_SESSION = "ses_00000000000000000000000000f100d0"
_PATH = f"/sessions/{_SESSION}/openai/v1/chat/completions"


def _body(size: int, stream: bool = False) -> bytes:
    words = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    message = {"role": "user", "content": words}
    return orjson.dumps({"model": "gpt-4.1-mini", "stream": stream, "messages": [message]})


def _status_bytes(pid: int, field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (the kernel's exact peak) of a process, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field}")


def _address(server: LlmTestServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _echo_session(server: LlmTestServer) -> None:
    status, _, _ = server.request("PUT", f"/admin-api/sessions/{_SESSION}")  # unconfigured: echoes
    assert status == 201


def test_a_flood_of_1_mb_requests_stays_within_the_budget_and_falls_back_after_delete(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    budget = 16 * MiB  # the session's journal alone (16 MiB of previews) fills it
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "16M"])
    _echo_session(server)
    pid = int(server.process_stats()["pid"])
    body = _body(1_000_000)
    conn = http.client.HTTPConnection(*_address(server), timeout=60)
    try:
        # Each answer echoes the ~1 MB message back. The same text every time: its token count is memoised
        # after the first (docs/tokens.md), so what floods is the bodies, the echoes and the journal.
        for _ in range(200):
            conn.request("POST", _PATH, body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
            assert response.status == 200 and len(answer) > 1_000_000
    finally:
        conn.close()
    peak = _status_bytes(pid, "VmHWM")  # the kernel's high-water mark: no sampler can miss the peak
    flooded = server.process_stats()
    assert flooded["memory"]["used_bytes"] <= budget
    # Before: ~400 MiB here (every echoed answer was a reference cycle; glibc kept the freed buffers).
    assert peak <= budget + RSS_ABOVE_BUDGET + O200K_BASE_RSS, f"peak RSS {peak / MiB:.0f} MiB"

    status, _, _ = server.request("DELETE", f"/admin-api/sessions/{_SESSION}")
    assert status == 204
    deleted = server.process_stats()
    assert deleted["memory"]["used_bytes"] == 0
    # The journal's ~16 MB of previews and the freed buffers go back to the system.
    assert deleted["rss_bytes"] <= peak - 10 * MiB, (deleted["rss_bytes"] / MiB, peak / MiB)


def _stalled(server: LlmTestServer, size: int) -> socket.socket:
    """A connection that asks for a streamed ~``size``-byte echo and never reads it."""
    host, port = _address(server)
    body = _body(size, stream=True)
    head = f"POST {_PATH} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server must wait
    sock.connect((host, port))
    sock.sendall((head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    return sock


def _memory_until(server: LlmTestServer, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        memory: dict[str, Any] = server.process_stats()["memory"]
        if done(memory) or time.monotonic() > deadline:
            return memory
        time.sleep(0.1)


def test_a_client_that_does_not_read_its_answer_is_charged_until_it_leaves(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False)
    _echo_session(server)
    sock = _stalled(server, 7_000_000)  # more than loopback's socket buffers take
    try:
        memory = _memory_until(server, lambda m: m["held_write_bytes"] > 0)
        assert memory["held_write_bytes"] >= 3_000_000  # the answer the server still holds
        assert memory["used_bytes"] >= memory["held_write_bytes"]
    finally:
        sock.close()
    assert _memory_until(server, lambda m: m["held_write_bytes"] == 0)["held_write_bytes"] == 0


def test_an_unread_answer_the_budget_cannot_hold_ends_the_connection_as_memory_exhausted(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "2M"])
    _echo_session(server)
    sock = _stalled(server, 7_000_000)
    try:
        sock.settimeout(20)
        received = b""
        try:
            while chunk := sock.recv(1 << 20):  # the server drops the connection instead of waiting
                received += chunk
        except ConnectionResetError:
            pass
        assert received.startswith(b"HTTP/1.1 200 ") and not received.endswith(b"0\r\n\r\n")
    finally:
        sock.close()
    memory = server.process_stats()["memory"]
    assert memory["held_write_bytes"] == 0 and memory["refused"] >= 1
    _, _, entries = server.request("GET", "/admin-api/requests", session_id=_SESSION)
    [entry] = entries
    assert entry["error_code"] == "llm_test_server_memory_exhausted"
    assert entry["transport_outcome"] == "client_gone" and entry["success"] is False
