"""Generated speech audio: deterministic tones as 16-bit PCM, and a WAV container for them.

Each word of the input becomes a sine tone whose pitch derives from the word (CRC-32, stable across runs
and platforms) and whose length grows with the word, separated by short silences; ``speed`` scales the
durations. One period of each tone is computed and repeated, so a minute of audio costs milliseconds.
The WAV carries the input text in a ``LIST``/``INFO``/``ICMT`` chunk (ignored by audio players and by the
standard library's ``wave``), which is how a transcription of llmts's own speech returns the spoken text
(``llmts.runtime.media.transcript``); the compressed formats carry it in a ``speech_tag``
(``llmts.runtime.media.speech_codecs``). Sample format: OpenAI's ``pcm`` (24 kHz, mono, signed 16-bit
little-endian).
"""

from __future__ import annotations

import json
import math
import struct
import sys
import zlib
from array import array

__all__ = [
    "MAX_SPEECH_SECONDS",
    "SAMPLE_RATE",
    "SPEECH_TAG",
    "SPEECH_TAG_CHARS",
    "WAV_TEXT_CHUNK",
    "pcm_seconds",
    "speech_pcm",
    "speech_tag",
    "wav_bytes",
]

SAMPLE_RATE = 24_000
# Longest generated speech; longer input is cut at this duration (docs/audio.md, "Limits").
MAX_SPEECH_SECONDS = 60
WAV_TEXT_CHUNK = b"ICMT"
# The metadata key (ID3 ``TXXX`` description, Vorbis comment name) of a compressed speech file's tag, and
# the longest input it carries: OpenAI's input limit, which keeps the tag inside one Ogg page.
SPEECH_TAG = "LLMTS_SPEECH"
SPEECH_TAG_CHARS = 4096

_AMPLITUDE = 8_000
_SECONDS_PER_CHARACTER = 0.06
_MIN_WORD_SECONDS = 0.12
_GAP_SECONDS = 0.05
_BYTES_PER_SAMPLE = 2


def _period(samples: int) -> bytes:
    """One period of a sine tone ``samples`` samples long, as 16-bit little-endian PCM."""
    wave = array("h", (round(_AMPLITUDE * math.sin(2 * math.pi * i / samples)) for i in range(samples)))
    if sys.byteorder == "big":  # pragma: no cover - the wire format is little-endian everywhere
        wave.byteswap()
    return wave.tobytes()


def speech_pcm(text: str, speed: float = 1.0) -> bytes:
    """The PCM samples that "speak" ``text``: one tone per word, a silence between words, at most
    ``MAX_SPEECH_SECONDS``. Empty text is a short silence."""
    budget = MAX_SPEECH_SECONDS * SAMPLE_RATE * _BYTES_PER_SAMPLE
    gap = bytes(round(_GAP_SECONDS / speed * SAMPLE_RATE) * _BYTES_PER_SAMPLE)
    pieces: list[bytes] = []
    size = 0
    periods: dict[int, bytes] = {}
    for word in text.split() or [""]:
        # 40..119 samples per period: pitches of 200 to 600 Hz at 24 kHz.
        period_samples = 40 + zlib.crc32(word.encode("utf-8", "surrogatepass")) % 80
        period = periods.get(period_samples)
        if period is None:
            period = periods[period_samples] = _period(period_samples)
        seconds = max(_MIN_WORD_SECONDS, len(word) * _SECONDS_PER_CHARACTER) / speed
        tone = period * max(1, round(seconds * SAMPLE_RATE / period_samples))
        for piece in (tone, gap):
            if size + len(piece) >= budget:
                pieces.append(piece[: budget - size])
                return b"".join(pieces)
            pieces.append(piece)
            size += len(piece)
    return b"".join(pieces)


def pcm_seconds(pcm: bytes, sample_rate: int = SAMPLE_RATE) -> float:
    return len(pcm) / (sample_rate * _BYTES_PER_SAMPLE)


def speech_tag(text: str, seconds: float) -> str | None:
    """The value of a compressed speech file's ``SPEECH_TAG``: JSON of the spoken text and the duration,
    ASCII-only (escapes) so it reads the same in every tag encoding and ends where its braces end; None
    for a text longer than ``SPEECH_TAG_CHARS``."""
    if len(text) > SPEECH_TAG_CHARS:
        return None
    return json.dumps({"text": text, "seconds": round(seconds, 3)}, ensure_ascii=True)


def wav_bytes(pcm: bytes, text: str | None = None, sample_rate: int = SAMPLE_RATE) -> bytes:
    """A RIFF/WAVE file of mono 16-bit ``pcm``; ``text`` goes into a ``LIST``/``INFO``/``ICMT`` chunk."""
    fmt = struct.pack("<HHIIHH", 1, 1, sample_rate, sample_rate * _BYTES_PER_SAMPLE, _BYTES_PER_SAMPLE, 16)
    chunks = [b"WAVE", _riff_chunk(b"fmt ", fmt)]
    if text:
        comment = _riff_chunk(WAV_TEXT_CHUNK, text.encode("utf-8", "replace") + b"\x00")
        chunks.append(_riff_chunk(b"LIST", b"INFO" + comment))
    chunks.append(_riff_chunk(b"data", pcm))
    body = b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _riff_chunk(kind: bytes, data: bytes) -> bytes:
    pad = b"\x00" if len(data) % 2 else b""
    return kind + struct.pack("<I", len(data)) + data + pad
