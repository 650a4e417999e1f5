"""What the media operations (images, transcription and translation, speech) and realtime audio share:
the media limits, base64 checks, the speech formats, how a transcript streams, and timed text.

Each operation's fixture and compiled answer live in its module of ``llmts/schema/operations/``
(``images.py``, ``transcription.py``, ``speech.py``); their lists and byte strings are bounded by
``MEDIA_LIMITS`` (merged into ``LIMITS``).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Literal, NamedTuple

from pydantic import AfterValidator

__all__ = [
    "AUDIO_DELTA_BYTES",
    "AUDIO_FORMATS",
    "MEDIA_LIMITS",
    "AudioFormat",
    "MediaB64",
    "TimedText",
    "b64_decoded_size",
    "decode_b64",
    "transcript_pieces",
]

# Documented in docs/configuration.md ("Limits"); each overflow is a 400 naming the field.
MEDIA_LIMITS: dict[str, int] = {
    "images_per_response": 10,
    # Decoded bytes of one scripted image or speech answer.
    "media_fixture_bytes": 8 * 1024 * 1024,
    "transcript_chars": 262_144,
    "transcript_segments": 4096,
    "transcript_words": 16_384,
    "media_url_chars": 2048,
    # Pixels one request may have llmts draw: n images and their partial images (48 Mpx, about 0.2 s of
    # CPU: e.g. ten 1024x1024 images with three partial images each).
    "generated_image_pixels": 50_331_648,
}

# How a streamed speech answer splits its audio (one ``speech.audio.delta`` event per piece).
AUDIO_DELTA_BYTES = 16_384

# OpenAI's speech formats; llmts generates each (``mp3``, ``opus``, ``aac``, ``flac`` with ``llmts[media]``).
AudioFormat = Literal["mp3", "opus", "aac", "flac", "wav", "pcm"]
AUDIO_FORMATS: tuple[str, ...] = ("mp3", "opus", "aac", "flac", "wav", "pcm")


def decode_b64(value: str) -> bytes:
    """Standard base64 (padding required), or ValueError."""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("must be standard base64") from None


def b64_decoded_size(value: str) -> int:
    """The byte length ``value`` (valid, padded base64) decodes to, without decoding it."""
    return len(value) // 4 * 3 - value[-2:].count("=")


_PIECE = re.compile(r"\s*\S+")


def transcript_pieces(text: str) -> tuple[str, ...]:
    """How a stream delivers a transcript (``transcript.text.delta`` events): each word with the
    whitespace before it; the pieces concatenate to the text."""
    pieces = _PIECE.findall(text)
    rest = text[len("".join(pieces)) :]
    if pieces and rest:
        pieces[-1] += rest
    return tuple(pieces) or ((text,) if text else ())


def _media_b64(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    limit = MEDIA_LIMITS["media_fixture_bytes"]
    if len(value) > (limit + 2) // 3 * 4:
        raise ValueError(f"decodes to more than {limit} bytes (media_fixture_bytes)")
    decode_b64(value)
    return value


MediaB64 = Annotated[str, AfterValidator(_media_b64)]


class TimedText(NamedTuple):
    """A transcript segment or word and when it is spoken, in seconds."""

    start: float
    end: float
    text: str
