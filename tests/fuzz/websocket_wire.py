"""A raw WebSocket client for the realtime fuzz (tests/fuzz/test_fuzz_realtime.py): handshakes and frames
built byte by byte, so anything can be sent (unmasked frames, reserved opcodes and bits, lying lengths,
fragmented control frames), and a strict reader of what the server sends back.

What the server sends must be well-formed whatever it was sent (RFC 6455): unmasked frames, no reserved
bits or opcodes (RSV1 only on the first frame of a compressed message, when permessage-deflate was
negotiated), control frames whole and at most 125 bytes, nothing after a close frame, a close frame with
a code a server may send and a UTF-8 reason, text messages in UTF-8.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BINARY",
    "CLOSE",
    "CONTINUATION",
    "PING",
    "PONG",
    "TEXT",
    "Handshake",
    "Received",
    "WireClient",
    "close_payload",
    "deflate",
    "frame",
    "upgrade_request",
]

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_DATA = {CONTINUATION, TEXT, BINARY}
_CONTROL = {CLOSE, PING, PONG}
# What a server may put in a close frame: the RFC's codes an endpoint sends (1004-1006 and 1015 never go
# on the wire), the registered ones up to 1014, and the application ranges 3000-4999.
_SENDABLE_CLOSE = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014}
_MASK = b"\x37\xfa\x21\x3d"
_KEY = base64.b64encode(b"llmts-fuzz-key!!").decode()
PROBE = b"llmts-probe"


def frame(
    opcode: int,
    payload: bytes = b"",
    *,
    fin: bool = True,
    rsv: int = 0,
    masked: bool = True,
    length: int | None = None,
    width: int | None = None,
) -> bytes:
    """One frame as given: ``length`` declares another payload length than the real one, ``width`` forces
    the 7-, 16- or 64-bit length encoding (7, 16 or 64; the shortest that fits by default)."""
    declared = len(payload) if length is None else length
    if width is None:
        width = 7 if declared <= 125 else 16 if declared <= 0xFFFF else 64
    head = bytes([(0x80 if fin else 0) | (rsv & 0x7) << 4 | (opcode & 0xF)])
    mask_bit = 0x80 if masked else 0
    if width == 7:
        head += bytes([mask_bit | (declared & 0x7F)])
    elif width == 16:
        head += bytes([mask_bit | 126]) + (declared & 0xFFFF).to_bytes(2, "big")
    else:
        head += bytes([mask_bit | 127]) + (declared & (2**64 - 1)).to_bytes(8, "big")
    if not masked:
        return head + payload
    repeated = (_MASK * (len(payload) // 4 + 1))[: len(payload)]
    body = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(payload), "big")
    return head + _MASK + body


def close_payload(code: int | None, reason: bytes = b"") -> bytes:
    return b"" if code is None else code.to_bytes(2, "big") + reason


def deflate(payload: bytes) -> bytes:
    """``payload`` compressed as permessage-deflate sends a message (the final empty block removed)."""
    compressor = zlib.compressobj(wbits=-15)
    data = compressor.compress(payload) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return data[:-4] if data.endswith(b"\x00\x00\xff\xff") else data


def upgrade_request(
    target: str, headers: Mapping[str, str | None], *, method: str = "GET", version: str = "1.1"
) -> bytes:
    """An upgrade request: a valid handshake's headers unless ``headers`` replaces them (a value of None
    leaves one out)."""
    base: dict[str, str | None] = {
        "Host": "127.0.0.1",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": _KEY,
        "Sec-WebSocket-Version": "13",
    }
    base.update(headers)
    lines = [f"{method} {target} HTTP/{version}"]
    lines += [f"{name}: {value}" for name, value in base.items() if value is not None]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")


@dataclass
class Handshake:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def compressed(self) -> bool:
        return "permessage-deflate" in self.headers.get("sec-websocket-extensions", "")


@dataclass
class Received:
    """What the server sent after the handshake, until it ended the connection."""

    messages: list[bytes] = field(default_factory=list)
    close: tuple[int, str] | None = None  # (code, reason); (1005, "") for a close frame without a code
    pongs: list[bytes] = field(default_factory=list)
    reset: bool = False  # the connection ended with a TCP reset

    def events(self) -> list[Any]:
        import json

        return [json.loads(message) for message in self.messages]


class WireClient:
    """One TCP connection to the server: an upgrade request, raw bytes, then everything the server sent."""

    def __init__(self, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self._buffer = b""
        self.compressed = False

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def handshake(self, request: bytes) -> Handshake:
        """Send ``request`` and read the answer's head (and a refusal's body, unless it was HEAD)."""
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self._buffer:
            chunk = self._recv()
            assert chunk, f"the server closed without answering the handshake: {self._buffer[:200]!r}"
            self._buffer += chunk
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        assert status_line.startswith("HTTP/1.1 "), status_line
        status = int(status_line.split(" ", 2)[1])
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status == 101:
            shaken = Handshake(status, headers, b"")
            self.compressed = shaken.compressed
            return shaken
        length = 0 if request.startswith(b"HEAD ") else int(headers.get("content-length", "0"))
        while len(self._buffer) < length:
            chunk = self._recv()
            assert chunk, "the server closed in the middle of a refusal's body"
            self._buffer += chunk
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        return Handshake(status, headers, body)

    def rest(self) -> bytes:
        """Everything the server sends until it closes (after an answer it closes with)."""
        data, self._buffer = self._buffer, b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := self._recv():
                data += chunk
        return data

    def send(self, data: bytes) -> bool:
        """Whether the bytes went out (the server may have closed already)."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True

    def finish(self, *, probe: bool = False) -> Received:
        """Optionally a ping (its pong proves everything before it was read and the connection is still
        open), then end our side and read all the server sends until it closes; its frames checked."""
        if probe:
            self.send(frame(PING, PROBE))
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
        received = Received()
        data = self._buffer
        while True:
            try:
                chunk = self._recv()
            except ConnectionResetError:
                received.reset = True
                break
            if not chunk:
                break
            data += chunk
        _parse(data, received, self.compressed)
        return received

    def _recv(self) -> bytes:
        return self.sock.recv(1 << 16)


def _parse(data: bytes, received: Received, compressed: bool) -> None:
    position = 0
    parts: list[bytes] = []
    message_compressed, message_opcode = False, TEXT
    while position < len(data):
        assert received.close is None, f"a frame after the close frame: {data[position : position + 40]!r}"
        assert len(data) - position >= 2, f"a partial frame at the end: {data[position:]!r}"
        first, second = data[position], data[position + 1]
        fin, rsv, opcode = bool(first & 0x80), (first >> 4) & 0x7, first & 0xF
        assert not second & 0x80, "a masked frame from the server"
        length, position = second & 0x7F, position + 2
        if length == 126:
            length, position = int.from_bytes(data[position : position + 2], "big"), position + 2
        elif length == 127:
            length, position = int.from_bytes(data[position : position + 8], "big"), position + 8
        payload = data[position : position + length]
        assert len(payload) == length, f"a partial frame at the end (opcode {opcode}, {length} bytes)"
        position += length
        assert opcode in _DATA | _CONTROL, f"reserved opcode {opcode:#x} from the server"
        if opcode in _CONTROL:
            assert fin and length <= 125 and rsv == 0, f"a malformed control frame (opcode {opcode:#x})"
            if opcode == CLOSE:
                received.close = _close_of(payload)
            elif opcode == PONG:
                received.pongs.append(payload)
            continue
        if opcode == CONTINUATION:
            assert parts or message_compressed, "a continuation frame without a message"
            assert rsv == 0, "RSV bits on a continuation frame"
        else:
            assert not parts, "a new message inside a fragmented one"
            assert rsv in (0, 4) and (rsv == 0 or compressed), f"RSV bits {rsv:#b} on a data frame"
            message_compressed, message_opcode = rsv == 4, opcode
        parts.append(payload)
        if fin:
            message = b"".join(parts)
            if message_compressed:
                message = zlib.decompressobj(wbits=-15).decompress(message + b"\x00\x00\xff\xff")
            if message_opcode == TEXT:
                message.decode("utf-8")  # a server's text is UTF-8
            received.messages.append(message)
            parts, message_compressed = [], False


def _close_of(payload: bytes) -> tuple[int, str]:
    assert len(payload) != 1, "a close frame with a one-byte payload"
    if not payload:
        return 1005, ""
    code = int.from_bytes(payload[:2], "big")
    assert code in _SENDABLE_CLOSE or 3000 <= code <= 4999, f"close code {code} is not one a server sends"
    return code, payload[2:].decode("utf-8")
