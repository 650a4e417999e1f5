"""What llmts "hears" in an uploaded audio file when no fixture scripts the transcript.

* A WAV that llmts generated (``llmts.runtime.media.audio``) carries its text in a ``LIST``/``INFO``/
  ``ICMT`` chunk: the transcript is that text, the duration the WAV's own. llmts's MP3, Ogg/Opus and FLAC
  speech carry text and duration in a ``SPEECH_TAG`` (``read_speech_tag``). A speech -> transcription
  round trip in a test therefore gets back what it said.
* Any other upload: ``Transcribed audio: <size> bytes, sha256 <first 12 hex digits>.``, so the same file
  always gives the same text and different files different ones. The duration is the WAV header's for a
  readable WAV, else the size at 128 kbit/s (16,000 bytes a second), at least 0.1 s.

Segments (one per sentence) and words are spread over the duration in proportion to their length; a
transcript fixture that gives only ``text`` gets the same timings (docs/audio.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct

from llmts.runtime.media.audio import SPEECH_TAG, WAV_TEXT_CHUNK
from llmts.schema.media import TimedText

__all__ = ["generated_transcript", "read_speech_tag", "read_wav", "timed_segments", "timed_words"]

_BYTES_PER_SECOND = 16_000
_MIN_SECONDS = 0.1
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MAX_CHUNKS = 64  # a WAV is walked through at most this many chunks (hostile files cannot make it loop)
# Where a speech tag may be: the file's head (ID3v2 and FLAC metadata come first, OpusTags is the second
# Ogg page), which holds the longest tag (4,096 characters, escaped) with room to spare.
_TAG_WINDOW = 128 * 1024
_TAG_MARKER = SPEECH_TAG.encode()
_MAX_TAG_SECONDS = 3600.0


def read_wav(data: bytes) -> tuple[float | None, str | None]:
    """(duration in seconds, embedded llmts text) of a RIFF/WAVE upload; (None, None) if it is not one."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None, None
    offset, byte_rate, frames_bytes, text = 12, 0, None, None
    for _ in range(_MAX_CHUNKS):
        if offset + 8 > len(data):
            break
        kind = data[offset : offset + 4]
        (size,) = struct.unpack_from("<I", data, offset + 4)
        body = data[offset + 8 : offset + 8 + size]
        if kind == b"fmt " and len(body) >= 16:
            (byte_rate,) = struct.unpack_from("<I", body, 8)
        elif kind == b"data":
            frames_bytes = len(body)
        elif kind == b"LIST" and body[:4] == b"INFO":
            text = _info_text(body[4:]) or text
        offset += 8 + size + (size % 2)
    duration = frames_bytes / byte_rate if frames_bytes is not None and byte_rate > 0 else None
    return duration, text


def _info_text(info: bytes) -> str | None:
    offset = 0
    for _ in range(_MAX_CHUNKS):
        if offset + 8 > len(info):
            return None
        kind = info[offset : offset + 4]
        (size,) = struct.unpack_from("<I", info, offset + 4)
        if kind == WAV_TEXT_CHUNK:
            return info[offset + 8 : offset + 8 + size].rstrip(b"\x00").decode("utf-8", "replace") or None
        offset += 8 + size + (size % 2)
    return None


def read_speech_tag(data: bytes) -> tuple[float, str] | None:
    """(duration in seconds, spoken text) of llmts's own compressed speech, from its ``SPEECH_TAG``: the
    key is followed by one separator byte (``=`` in a Vorbis comment, NUL after an ID3 ``TXXX``
    description) and the JSON object, which ends where its braces do whatever the container puts after it.
    None for any other file (or a damaged tag)."""
    head = data[:_TAG_WINDOW]
    at = head.find(_TAG_MARKER)
    if at < 0:
        return None
    start = at + len(_TAG_MARKER) + 1
    if head[start : start + 1] != b"{":
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(head[start:].decode("latin-1"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    text, seconds = value.get("text"), value.get("seconds")
    if (
        not isinstance(text, str)
        or isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not (math.isfinite(seconds) and 0 < seconds <= _MAX_TAG_SECONDS)
    ):
        return None
    return float(seconds), text


def generated_transcript(data: bytes) -> tuple[str, float]:
    """(text, duration in seconds) llmts hears in ``data`` (see the module docstring)."""
    duration, text = read_wav(data)
    if duration is None and text is None:
        tagged = read_speech_tag(data)
        if tagged is not None:
            duration, text = tagged
    if duration is None:
        duration = len(data) / _BYTES_PER_SECOND
    if text is None:
        digest = hashlib.sha256(data).hexdigest()[:12]
        text = f"Transcribed audio: {len(data)} bytes, sha256 {digest}."
    return text, round(max(_MIN_SECONDS, duration), 3)


def _spread(pieces: list[str], weights: list[int], duration: float) -> tuple[TimedText, ...]:
    total = sum(weights) or 1
    timed: list[TimedText] = []
    elapsed = 0
    for piece, weight in zip(pieces, weights, strict=True):
        start = duration * elapsed / total
        elapsed += weight
        timed.append(TimedText(round(start, 3), round(duration * elapsed / total, 3), piece))
    return tuple(timed)


def timed_segments(text: str, duration: float) -> tuple[TimedText, ...]:
    """One segment per sentence, spread over ``duration`` by length."""
    sentences = [sentence for sentence in _SENTENCE_END.split(text.strip()) if sentence]
    return _spread(sentences, [len(sentence) for sentence in sentences], duration)


def timed_words(text: str, duration: float) -> tuple[TimedText, ...]:
    """Each word (without surrounding punctuation), spread over ``duration`` by length."""
    words = [word.strip(".,!?;:\"'()[]") for word in text.split()]
    words = [word for word in words if word]
    return _spread(words, [len(word) + 1 for word in words], duration)
