"""The AWS event-stream message encoder (``application/vnd.amazon.eventstream``), as botocore decodes it.

A message is ``prelude | headers | payload | message CRC``: the prelude is the total length and the
headers length (big-endian uint32 each) and a CRC32 of those 8 bytes; each header is a one-byte name
length, the name, a type byte (7 = string), a big-endian uint16 value length and the value; the message
CRC32 covers everything before it. Only string headers are written: Bedrock's events use nothing else.

Hand-written (docs/architecture.md, "Hand-written code and why"): botocore ships only the decoder, and
awscrt encodes messages only inside its RPC client connection, with no public encode-to-bytes call.
"""

from __future__ import annotations

import struct
from binascii import crc32

__all__ = ["STRING_HEADER", "encode_message", "event_message", "exception_message", "with_broken_crc"]

STRING_HEADER = 7
_PRELUDE = struct.Struct(">II")
_UINT32 = struct.Struct(">I")
_JSON = b"application/json"


def _header(name: bytes, value: bytes) -> bytes:
    return bytes((len(name),)) + name + bytes((STRING_HEADER,)) + struct.pack(">H", len(value)) + value


def encode_message(headers: tuple[tuple[bytes, bytes], ...], payload: bytes) -> bytes:
    """One event-stream message with valid prelude and message CRCs."""
    encoded = b"".join(_header(name, value) for name, value in headers)
    prelude = _PRELUDE.pack(16 + len(encoded) + len(payload), len(encoded))
    head = prelude + _UINT32.pack(crc32(prelude) & 0xFFFFFFFF)
    body = head + encoded + payload
    return body + _UINT32.pack(crc32(body) & 0xFFFFFFFF)


def event_message(event_type: bytes, payload: bytes, content_type: bytes = _JSON) -> bytes:
    """An ``event`` message (``:message-type: event``) carrying ``payload``."""
    return encode_message(
        ((b":event-type", event_type), (b":content-type", content_type), (b":message-type", b"event")),
        payload,
    )


def exception_message(exception_type: bytes, payload: bytes) -> bytes:
    """An ``exception`` message: botocore raises the modelled error named by ``:exception-type``."""
    return encode_message(
        (
            (b":exception-type", exception_type),
            (b":content-type", _JSON),
            (b":message-type", b"exception"),
        ),
        payload,
    )


def with_broken_crc(message: bytes) -> bytes:
    """``message`` with its message CRC flipped: the framing is intact, the checksum is not (the decoder
    raises ``ChecksumMismatch``)."""
    return message[:-4] + _UINT32.pack(_UINT32.unpack(message[-4:])[0] ^ 0xFFFFFFFF)
