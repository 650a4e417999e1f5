"""The WebSocket opening handshake on a request llhttp already parsed, and permessage-deflate with a bound
on inflation: what llmts/transport/websocket.py sets up before the first frame (docs/architecture.md,
"Hand-written code and why")."""

from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import CloseReason, FrameDecoder, FrameProtocol, Opcode, RsvBits
from wsproto.utilities import generate_accept_token

__all__ = ["BoundedDeflate", "HandshakeRefused", "check_request", "negotiate_deflate", "response_head"]


class HandshakeRefused(Exception):
    """``accept`` refused the upgrade request before writing anything: answer it with ``status`` (400 or
    426), ``message`` and ``headers`` (426 names the version llmts speaks)."""

    def __init__(self, status: int, message: str, headers: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []


class BoundedDeflate(PerMessageDeflate):
    """permessage-deflate that inflates at most ``limit`` bytes per message (wsproto's has no bound, so a
    small compressed frame could allocate without limit), and that a control frame leaves alone: wsproto's
    forgets a message was compressed when a ping arrives between its fragments, and takes a ping between
    two messages for the start of an uncompressed one, so the next compressed message went uninflated."""

    def __init__(self, limit: int) -> None:
        super().__init__(client_no_context_takeover=True, server_no_context_takeover=True)
        self._limit = limit
        self._inflated = 0

    def frame_inbound_header(
        self, proto: FrameDecoder | FrameProtocol, opcode: Opcode, rsv: RsvBits, payload_length: int
    ) -> CloseReason | RsvBits:
        if not opcode.iscontrol():
            return super().frame_inbound_header(proto, opcode, rsv, payload_length)
        if rsv.rsv1:
            return CloseReason.PROTOCOL_ERROR
        self._inbound_is_compressible = False  # the message around it, if any, keeps its state
        return RsvBits(True, False, False)

    def frame_inbound_payload_data(
        self, proto: FrameDecoder | FrameProtocol, data: bytes
    ) -> bytes | CloseReason:
        if not self._inbound_compressed or not self._inbound_is_compressible:
            return data
        assert self._decompressor is not None
        room = self._limit - self._inflated
        try:
            out = self._decompressor.decompress(data, room + 1)
        except zlib.error:
            return CloseReason.INVALID_FRAME_PAYLOAD_DATA
        self._inflated += len(out)
        if self._inflated > self._limit:
            return CloseReason.MESSAGE_TOO_BIG
        return out

    def frame_inbound_complete(
        self, proto: FrameDecoder | FrameProtocol, fin: bool
    ) -> bytes | CloseReason | None:
        if not self._inbound_is_compressible:
            return None  # a ping between fragments: the message's state stays
        # What is left is the 4-byte end of the message: at most one deflate symbol more.
        result = super().frame_inbound_complete(proto, fin)
        if isinstance(result, bytes):
            self._inflated += len(result)
            if self._inflated > self._limit:
                return CloseReason.MESSAGE_TOO_BIG
        if fin:
            self._inflated = 0
        return result


def _tokens(value: str) -> list[str]:
    return [token.strip() for token in value.split(",") if token.strip()]


def check_request(environ: dict[str, Any]) -> tuple[tuple[str, ...], str, bytes]:
    """(offered subprotocols, the extensions header, the key) of a valid upgrade request."""
    if environ.get("REQUEST_METHOD") != "GET":
        raise HandshakeRefused(400, "a WebSocket handshake must be a GET request")
    if environ.get("SERVER_PROTOCOL") != "HTTP/1.1":
        raise HandshakeRefused(400, "a WebSocket handshake needs HTTP/1.1")
    if "upgrade" not in {token.lower() for token in _tokens(environ.get("HTTP_CONNECTION", ""))}:
        raise HandshakeRefused(400, "a WebSocket handshake needs 'Connection: Upgrade'")
    if "websocket" not in {token.lower() for token in _tokens(environ.get("HTTP_UPGRADE", ""))}:
        raise HandshakeRefused(400, "a WebSocket handshake needs 'Upgrade: websocket'")
    if not environ.get("HTTP_HOST"):
        raise HandshakeRefused(400, "a WebSocket handshake needs a Host header")
    if environ.get("HTTP_SEC_WEBSOCKET_VERSION", "").strip() != "13":
        raise HandshakeRefused(
            426, "llmts speaks WebSocket version 13 only", [("Sec-WebSocket-Version", "13")]
        )
    key = environ.get("HTTP_SEC_WEBSOCKET_KEY", "").strip()
    try:
        if not key.isascii() or len(base64.b64decode(key, validate=True)) != 16:
            raise ValueError(key)
    except (ValueError, binascii.Error):
        raise HandshakeRefused(400, "Sec-WebSocket-Key must be the base64 of 16 bytes") from None
    protocols = environ.get("HTTP_SEC_WEBSOCKET_PROTOCOL", "")
    extensions = environ.get("HTTP_SEC_WEBSOCKET_EXTENSIONS", "")
    if not protocols.isascii() or not extensions.isascii():
        raise HandshakeRefused(400, "Sec-WebSocket-Protocol and -Extensions must be ASCII")
    return tuple(_tokens(protocols)), extensions, key.encode("ascii")


def negotiate_deflate(extensions: str, limit: int) -> tuple[BoundedDeflate | None, str | None]:
    """The first acceptable permessage-deflate offer (each tried on a fresh extension: ``accept`` keeps
    the parameters it read) and the response header value; (None, None) if there is none."""
    for offer in _tokens(extensions):
        if offer.split(";", 1)[0].strip() != PerMessageDeflate.name:
            continue
        deflate = BoundedDeflate(limit)
        try:
            params = deflate.accept(offer)
        except ValueError:  # e.g. client_max_window_bits=abc (wsproto calls int())
            raise HandshakeRefused(400, "malformed permessage-deflate parameters") from None
        if isinstance(params, str):
            return deflate, f"{PerMessageDeflate.name}; {params}" if params else PerMessageDeflate.name
    return None, None


def response_head(key: bytes, subprotocol: str | None, extensions: str | None) -> bytes:
    """The ``101 Switching Protocols`` answer."""
    head = [
        b"HTTP/1.1 101 Switching Protocols",
        b"Upgrade: websocket",
        b"Connection: Upgrade",
        b"Sec-WebSocket-Accept: " + generate_accept_token(key),
    ]
    if subprotocol is not None:
        head.append(b"Sec-WebSocket-Protocol: " + subprotocol.encode("ascii"))
    if extensions is not None:
        head.append(b"Sec-WebSocket-Extensions: " + extensions.encode("ascii"))
    return b"\r\n".join(head) + b"\r\n\r\n"
