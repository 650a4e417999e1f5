"""Input tokens of images and audio in an OpenAI prompt (docs/tokens.md, "The rules": images, audio).

Images follow OpenAI's published tile rule; their size is read from the header of a ``data:`` URL's
PNG, JPEG, GIF or WebP, and an image whose size cannot be read (a remote URL, a file id) counts as
1024x1024. Audio has no published rule for Chat Completions: 10 tokens per second, the duration read
from a WAV header, else estimated from the decoded size at 16,000 bytes per second.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from typing import Any

__all__ = [
    "AUDIO_TOKENS_PER_SECOND",
    "IMAGE_BASE_TOKENS",
    "IMAGE_TILE_TOKENS",
    "UNKNOWN_IMAGE_SIZE",
    "audio_tokens",
    "content_media_tokens",
    "image_size",
    "image_tokens",
]

IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
_TILE = 512
_FIT = 2048
_SHORT_SIDE = 768
UNKNOWN_IMAGE_SIZE = (1024, 1024)

AUDIO_TOKENS_PER_SECOND = 10
_COMPRESSED_BYTES_PER_SECOND = 16_000
# Only the start of a base64 payload is decoded to find an image's size or a WAV header: a JPEG's size
# comes after its metadata segments, rarely past the first 64 KiB.
_HEAD_CHARS = 64 * 1024 * 4 // 3


def image_tokens(width: int, height: int, detail: str) -> int:
    """OpenAI's tile rule: ``low`` is 85 tokens; ``high`` (and ``auto``) fits the image within
    2048x2048, scales its shorter side down to 768, and adds 170 per 512-pixel tile to the 85."""
    if detail == "low" or width <= 0 or height <= 0:
        return IMAGE_BASE_TOKENS
    scale = min(1.0, _FIT / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, _SHORT_SIDE / min(w, h))
    w, h = w * scale, h * scale
    tiles = math.ceil(round(w, 6) / _TILE) * math.ceil(round(h, 6) / _TILE)
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        # Start-of-frame markers (not DHT C4, JPG C8, DAC CC) carry the height, then the width.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG, GIF or WebP header; None when it is none of them."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return width, height
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def _decoded_head(payload: str) -> bytes:
    head = payload[: _HEAD_CHARS - _HEAD_CHARS % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _data_url_size(url: str) -> tuple[int, int] | None:
    if not url.startswith("data:"):
        return None
    _, comma, payload = url.partition(",")
    if not comma:
        return None
    return image_size(_decoded_head(payload))


def _image_url_tokens(url: Any, detail: Any) -> int:
    size = _data_url_size(url) if isinstance(url, str) else None
    width, height = size or UNKNOWN_IMAGE_SIZE
    return image_tokens(width, height, detail if isinstance(detail, str) else "auto")


def audio_tokens(payload: str, audio_format: str) -> int:
    """10 tokens per second of base64 ``payload``: a WAV's duration from its header, else the decoded
    size at 16,000 bytes per second."""
    size = len(payload) * 3 // 4 - payload[-2:].count("=")
    seconds = size / _COMPRESSED_BYTES_PER_SECOND
    if audio_format == "wav":
        head = _decoded_head(payload[:64])
        if head[:4] == b"RIFF" and head[8:12] == b"WAVE" and len(head) >= 32:
            (byte_rate,) = struct.unpack("<I", head[28:32])
            if byte_rate:
                seconds = max(0, size - 44) / byte_rate
    return math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)


def _part_tokens(part: dict[str, Any]) -> int:
    kind = part.get("type")
    if kind == "image_url":  # Chat Completions: {"image_url": {"url", "detail"}}
        image = part.get("image_url")
        if isinstance(image, dict):
            return _image_url_tokens(image.get("url"), image.get("detail"))
        return _image_url_tokens(image, None)
    if kind == "input_image":  # Responses: {"image_url", "file_id", "detail"}
        return _image_url_tokens(part.get("image_url"), part.get("detail"))
    if kind == "input_audio":
        audio = part.get("input_audio", part)
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            return audio_tokens(audio["data"], str(audio.get("format", "")))
    return 0


def content_media_tokens(content: Any) -> int:
    """The image and audio tokens of a message's content (0 for a string or text-only parts)."""
    if not isinstance(content, list):
        return 0
    return sum(_part_tokens(part) for part in content if isinstance(part, dict))
