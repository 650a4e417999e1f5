"""Images, transcripts and speech: their response fixtures, their compiled (neutral) answers and their
limits (docs/images.md, docs/audio.md).

Fixtures (``ResponseFixture`` kinds ``images``, ``transcript``, ``audio``):

* ``{"images": [{"b64_json": "<base64>" | "url": "https://...", "revised_prompt": "..."}]}``: exact
  image bytes (any format; llmts serves them as they are) or a URL passed through;
* ``{"transcript": {"text", "language", "duration", "segments": [{"start", "end", "text"}],
  "words": [{"start", "end", "word"}]}}``: only ``text`` is required; missing timings are spread over
  the duration (llmts/runtime/media/transcript.py);
* ``{"audio": {"format": "mp3", "b64": "<base64>"}}``: exact speech bytes in any of OpenAI's formats.

Every list and byte string is bounded by ``MEDIA_LIMITS`` (merged into ``LIMITS``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_serializer, model_validator

from llmts.schema.operation_row import OperationResult

__all__ = [
    "AUDIO_DELTA_BYTES",
    "AUDIO_FORMATS",
    "MEDIA_LIMITS",
    "AudioFixture",
    "AudioFormat",
    "AudioResult",
    "ImageFixture",
    "ImagesFixture",
    "ImagesResult",
    "NeutralImage",
    "TimedText",
    "TranscriptFixture",
    "TranscriptResult",
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

_STRICT = ConfigDict(defer_build=True, extra="forbid", frozen=True)
_FROZEN = ConfigDict(defer_build=True, frozen=True)


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


def _http_url(value: str) -> str:
    limit = MEDIA_LIMITS["media_url_chars"]
    if len(value) > limit:
        raise ValueError(f"must be at most {limit} characters")
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or any(c.isspace() for c in value):
        raise ValueError("must be an absolute http(s) URL")
    return value


MediaB64 = Annotated[str, AfterValidator(_media_b64)]


class ImageFixture(BaseModel):
    """One scripted image: its bytes (``b64_json``) or a URL, and an optional revised prompt."""

    model_config = _STRICT

    b64_json: MediaB64 | None = None
    url: Annotated[str, AfterValidator(_http_url)] | None = None
    revised_prompt: str | None = Field(default=None, max_length=MEDIA_LIMITS["transcript_chars"])

    @model_validator(mode="after")
    def _one_source(self) -> ImageFixture:
        if (self.b64_json is None) == (self.url is None):
            raise ValueError("an image needs exactly one of b64_json and url")
        return self

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


# The images of one answer, in order (one per image the request asks for: ``n``).
ImagesFixture = Annotated[
    list[ImageFixture], Field(min_length=1, max_length=MEDIA_LIMITS["images_per_response"])
]


def _time(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number of seconds")
    return value


Seconds = Annotated[float, Field(ge=0), AfterValidator(_time)]


class SegmentFixture(BaseModel):
    model_config = _STRICT

    start: Seconds
    end: Seconds
    text: str = Field(max_length=MEDIA_LIMITS["transcript_chars"])

    @model_validator(mode="after")
    def _ordered(self) -> SegmentFixture:
        if self.end < self.start:
            raise ValueError("end must not be before start")
        return self


class WordFixture(BaseModel):
    model_config = _STRICT

    start: Seconds
    end: Seconds
    word: str = Field(max_length=MEDIA_LIMITS["transcript_chars"])

    @model_validator(mode="after")
    def _ordered(self) -> WordFixture:
        if self.end < self.start:
            raise ValueError("end must not be before start")
        return self


class TranscriptFixture(BaseModel):
    """A scripted transcription (or translation): the text, and optionally language, duration and timings."""

    model_config = _STRICT

    text: str = Field(max_length=MEDIA_LIMITS["transcript_chars"])
    language: str | None = Field(default=None, min_length=1, max_length=64)
    duration: Seconds | None = None
    segments: list[SegmentFixture] | None = Field(
        default=None, max_length=MEDIA_LIMITS["transcript_segments"]
    )
    words: list[WordFixture] | None = Field(default=None, max_length=MEDIA_LIMITS["transcript_words"])

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class AudioFixture(BaseModel):
    """Scripted speech: the exact bytes (base64) of audio in ``format``."""

    model_config = _STRICT

    format: AudioFormat
    b64: MediaB64


# --- compiled answers (``ScriptedOutput.result``) ---------------------------------------------------


class TimedText(NamedTuple):
    """A transcript segment or word and when it is spoken, in seconds."""

    start: float
    end: float
    text: str


class NeutralImage(BaseModel):
    """One image of an answer: its bytes, or a URL given as is; ``partials`` are a stream's previews
    (generated images have them; a scripted image's previews are the image itself)."""

    model_config = _FROZEN

    data: bytes = b""
    url: str | None = None
    revised_prompt: str | None = None
    partials: tuple[bytes, ...] = ()


class ImagesResult(OperationResult):
    """The images of one answer, in order."""

    images: tuple[NeutralImage, ...]


class TranscriptResult(OperationResult):
    """A transcription or translation: text, language, duration and timings (always filled)."""

    text: str
    language: str
    duration: float
    segments: tuple[TimedText, ...]
    words: tuple[TimedText, ...]
    # How a stream delivers the text (concatenates to it; llmts/runtime/media/transcript.py).
    pieces: tuple[str, ...]


class AudioResult(OperationResult):
    """Speech: the audio bytes and their format."""

    format: str
    data: bytes
