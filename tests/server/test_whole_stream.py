"""Plain streams leave in one write with their chunked end (docs/architecture.md, "The server's hot path"):
the bytes on the wire and the journal's evidence are the same as frame by frame."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

from llmts import SessionClient


def _exchange(session: SessionClient, body: dict[str, object]) -> bytes:
    parts = urlsplit(session.provider_base)
    payload = json.dumps(body).encode()
    head = (
        f"POST {parts.path}/openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nConnection: close\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port or 80), timeout=10) as sock:
        sock.sendall(head.encode() + payload)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def _dechunk(body: bytes) -> tuple[bytes, bool]:
    out, rest = b"", body
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return out, rest == b"\r\n"
        out, rest = out + rest[:size], rest[size + 2 :]


def test_a_plain_stream_is_chunked_complete_and_journaled(llmts_session: SessionClient) -> None:
    chunks = ["Hel", "lo ", "wor", "ld"]
    llmts_session.configure({"scenarios": [{"responses": [{"text": "Hello world", "chunks": chunks}]}]})
    body = {"model": "gpt-4.1-mini", "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    head, _, raw = _exchange(llmts_session, body).partition(b"\r\n\r\n")

    assert head.startswith(b"HTTP/1.1 200") and b"Transfer-Encoding: chunked" in head
    assert b"Content-Length" not in head
    payload, ended = _dechunk(raw)
    assert ended and payload.endswith(b"data: [DONE]\n\n")
    events = [json.loads(line[6:]) for line in payload.split(b"\n") if line.startswith(b"data: {")]
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events) == "Hello world"
    [entry] = llmts_session.requests(completed=True)
    assert entry["transport_outcome"] == "completed" and entry["success"] is True
    assert entry["terminal_marker_observed"] is True and entry["emitted_content_frames"] == len(chunks)
