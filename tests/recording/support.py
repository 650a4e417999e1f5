"""Shared pieces of the record-and-replay tests: the scripted "real provider" (a second llmts server),
raw HTTP that keeps chunk boundaries, and recording sessions pointed at it (docs/recording.md)."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from llmts import LlmTestServer, SessionClient

__all__ = ["Chunked", "chunked_request", "provider_upstream", "recording_session"]


@dataclass
class Chunked:
    """An HTTP response with its body as the chunks the server wrote (chunked transfer coding)."""

    status: int
    headers: dict[str, str]
    chunks: list[bytes]
    # Seconds from sending the request to the arrival of each chunk.
    arrivals: list[float] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def json(self) -> Any:
        return json.loads(self.body)


def chunked_request(
    base_url: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> Chunked:
    """One request over a raw socket; the body's chunks are kept as the server framed them (a body with
    Content-Length is one chunk)."""
    parts = urlsplit(base_url)
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else (body or b"")
    target = parts.path.rstrip("/") + path
    lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.hostname}:{parts.port}", "Connection: close"]
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    lines += [f"{name}: {value}" for name, value in all_headers.items()]
    lines.append(f"Content-Length: {len(data)}")
    started = time.monotonic()
    sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
    try:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
        reader = _Reader(sock, started)
        head = reader.until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        response_headers: dict[str, str] = {}
        for line in head[1:]:
            if line:
                name, _, value = line.partition(":")
                response_headers[name.strip().lower()] = value.strip()
        chunks: list[bytes] = []
        arrivals: list[float] = []
        if response_headers.get("transfer-encoding") == "chunked":
            while True:
                size = int(reader.until(b"\r\n").split(b";")[0], 16)
                if size == 0:
                    break
                chunks.append(reader.exactly(size))
                arrivals.append(reader.last_arrival)
                reader.exactly(2)
        else:
            length = int(response_headers.get("content-length", "0"))
            if length:
                chunks.append(reader.exactly(length))
                arrivals.append(reader.last_arrival)
        return Chunked(status, response_headers, chunks, arrivals)
    finally:
        sock.close()


class _Reader:
    def __init__(self, sock: socket.socket, started: float) -> None:
        self.sock = sock
        self.buffer = b""
        self.started = started
        self.last_arrival = 0.0

    def _more(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection early")
        self.last_arrival = time.monotonic() - self.started
        self.buffer += data

    def until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            self._more()
        found, _, self.buffer = self.buffer.partition(marker)
        return found

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._more()
        found, self.buffer = self.buffer[:size], self.buffer[size:]
        return found


def provider_upstream(session: SessionClient, prefix: str) -> str:
    """The upstream base URL of a provider served by an llmts session (its provider prefix)."""
    return f"{session.provider_base}/{prefix}"


def recording_session(server: LlmTestServer, upstreams: dict[str, str], **extra: Any) -> SessionClient:
    session = server.create_session()
    session.configure({"upstreams": upstreams, "record": True, **extra})
    return session
