"""Helpers for tests: raw HTTP (what SDKs hide) and common request pieces."""

from __future__ import annotations

import http.client
import itertools
import json
import random
import socket
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from llmts.client import new_session_id


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def parent_pid(pid: int) -> int:
    """The parent of process ``pid``, from ``/proc`` (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError(f"no parent of {pid}")


def free_port(count: int = 1) -> int:
    """A loopback port nothing is bound to (the first of ``count`` consecutive ones), for a server a test
    starts on it. Chosen below the system's ephemeral range: a port the kernel hands out (``bind(0)``) can
    go to another process's outgoing connection between this check and the server's own bind, as a
    loaded run showed (``Address already in use``); below the range only an explicit bind takes it. At
    random, so concurrent xdist workers seldom try the same one."""
    low = _ephemeral_low()
    pick = random.SystemRandom()
    for _ in range(200):
        base = pick.randrange(10_000, low - count)
        probes: list[socket.socket] = []
        try:
            for port in range(base, base + count):
                probes.append(socket.socket())
                probes[-1].bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for probe in probes:
                probe.close()
        return base
    raise AssertionError(f"no {count} consecutive free ports below {low}")


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            return max(11_000, int(handle.read().split()[0]))
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def raw_request(
    base_url: str,
    method: str,
    path: str,
    body: bytes | str | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> RawResponse:
    """One HTTP request over a fresh connection, with nothing added or hidden by an SDK."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        if isinstance(body, dict):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, parts.path.rstrip("/") + path, body=body, headers=all_headers)
        response = conn.getresponse()
        return RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        conn.close()


# The OpenAI Chat Completions route under the default session, for raw HTTP tests.
OPENAI_CHAT_PATH = "/openai/v1/chat/completions"
USER_HI = [{"role": "user", "content": "Hi"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
    },
}


def _error_classes(spec: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = []
    for module_name, names in spec:
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        errors.extend(getattr(module, name) for name in names if hasattr(module, name))
    return tuple(errors)


def transport_errors() -> tuple[type[BaseException], ...]:
    """What an SDK may raise when the connection breaks mid-stream: newer SDKs wrap it in their own
    APIConnectionError, older ones (openai 1.x, anthropic 2.x on httpx2) let httpx's error through."""
    return _error_classes(
        (
            ("openai", ("APIConnectionError",)),
            ("anthropic", ("APIConnectionError",)),
            ("httpx", ("ReadError", "RemoteProtocolError")),
            ("httpx2", ("ReadError", "RemoteProtocolError")),
        )
    )


def timeout_errors() -> tuple[type[BaseException], ...]:
    """What an SDK may raise when its read timeout passes mid-stream (wrapped or raw, by SDK version)."""
    return _error_classes(
        (
            ("openai", ("APITimeoutError",)),
            ("httpx", ("ReadTimeout",)),
            ("httpx2", ("ReadTimeout",)),
        )
    )


# The approval example of docs/conversations.md: ask, then approve or cancel.
APPROVAL_STEPS: list[dict[str, Any]] = [
    {
        "id": "ask",
        "when": {"latest_user_equals": "Start", "turn": 1},
        "response": {"text": "Approve or cancel?"},
        "then": ["approve", "cancel"],
    },
    {
        "id": "approve",
        "when": {"latest_user_equals": "Approve", "turn": 2},
        "response": {"text": "Approved"},
        "complete": True,
    },
    {
        "id": "cancel",
        "when": {"latest_user_equals": "Cancel", "turn": 2},
        "response": {"text": "Cancelled"},
        "complete": True,
    },
]


# The dashboard's browser tests (tests/dashboard/): the control key of their server, and what this
# machine's Chromium needs headless as root with no network traffic of its own (docs/dashboard.md).
DASHBOARD_CONTROL_KEY = "dashboard-control-key"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    """What a raw socket received up to and including ``marker`` (and whatever came with it)."""
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed before {marker!r}: {data!r}"
        data += chunk
    return data


def alternating_session_ids() -> Iterator[str]:
    """Fresh random session ids whose last hex digit alternates in parity, so that sessions spread by id
    over two processes or servers (the owner is the id's number modulo their count) land on both every
    time: random ids all land on one of two once in 2**(n-1) runs of n."""
    for index in itertools.count():
        yield new_session_id()[:-1] + str(index % 2)


def post_across(
    base_url: str,
    path: str,
    body: bytes,
    meanwhile: Callable[[], object],
    headers: dict[str, str] | None = None,
) -> RawResponse:
    """POST ``body`` to ``base_url`` + ``path`` in two halves, doing ``meanwhile`` between them (once the
    server is surely reading the rest): what a request whose body arrives across a reset, a configure or
    a delete sees."""
    parts = urlsplit(base_url)
    head = f"POST {parts.path}{path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
    for name, value in (headers or {}).items():
        head += f"{name}: {value}\r\n"
    half = len(body) // 2
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body[:half])
        time.sleep(0.5)  # the handler is reading the body (a shorter wait only weakens the test)
        meanwhile()
        sock.sendall(body[half:])
        response = http.client.HTTPResponse(sock, method="POST")
        response.begin()
        return RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())


def parsed_size(raw: bytes) -> tuple[int, Any]:
    """The bytes ``orjson.loads(raw)`` holds (tracemalloc), and the value."""
    tracemalloc.start()
    try:
        value = orjson.loads(raw)
        return tracemalloc.get_traced_memory()[0], value
    finally:
        tracemalloc.stop()
