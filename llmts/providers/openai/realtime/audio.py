"""Audio on a Realtime connection: the session's formats, silence, and what llmts "hears".

Formats are the API's: ``audio/pcm`` (PCM16 mono little-endian at 24 kHz, 48 bytes a millisecond),
``audio/pcmu`` and ``audio/pcma`` (G.711 mu-law and A-law at 8 kHz, 8 bytes a millisecond). Answers are
generated or scripted as 24 kHz PCM16; for a G.711 output format they are encoded here (every third
sample, G.711 by the ITU's segment tables: stdlib ``audioop`` is gone from Python 3.13).

Silence drives the server VAD rule (docs/realtime.md, "Voice activity"): a chunk is silent when every
sample is the format's zero level (PCM16 ``0x0000``, mu-law ``0xFF``/``0x7F``, A-law ``0xD5``/``0x55``).
"""

from __future__ import annotations

import sys
from array import array
from functools import cache
from typing import Any

__all__ = [
    "DEFAULT_FORMAT",
    "FORMAT_TYPES",
    "audio_ms",
    "bytes_per_ms",
    "encode_output",
    "format_type",
    "input_transcript",
    "is_silence",
]

DEFAULT_FORMAT: dict[str, Any] = {"type": "audio/pcm", "rate": 24000}
FORMAT_TYPES = ("audio/pcm", "audio/pcmu", "audio/pcma")
_BYTES_PER_MS = {"audio/pcm": 48, "audio/pcmu": 8, "audio/pcma": 8}
_SILENT = {"audio/pcm": b"\x00", "audio/pcmu": b"\xff\x7f", "audio/pcma": b"\xd5\x55"}


def format_type(audio_format: dict[str, Any] | None) -> str:
    kind = (audio_format or DEFAULT_FORMAT).get("type")
    return kind if isinstance(kind, str) and kind in _BYTES_PER_MS else "audio/pcm"


def bytes_per_ms(audio_format: dict[str, Any] | None) -> int:
    return _BYTES_PER_MS[format_type(audio_format)]


def audio_ms(size: int, audio_format: dict[str, Any] | None) -> int:
    """Whole milliseconds of ``size`` bytes of audio in ``audio_format``."""
    return size // bytes_per_ms(audio_format)


def is_silence(chunk: bytes, audio_format: dict[str, Any] | None) -> bool:
    """Every sample of a non-empty ``chunk`` is the format's zero level."""
    return bool(chunk) and not chunk.strip(_SILENT[format_type(audio_format)])


def input_transcript(size: int) -> str:
    """What llmts "hears" in committed input audio: the text a turn's user message carries to scenario
    matching (and the input transcription, when the session enables one), unless the session scripts
    what the user said (``realtime.input_transcripts``, ``RealtimeOpening.heard``): the audio's size."""
    return f"[audio: {size} bytes]"


def encode_output(pcm: bytes, audio_format: dict[str, Any] | None) -> bytes:
    """24 kHz PCM16 in the session's output format."""
    kind = format_type(audio_format)
    if kind == "audio/pcm":
        return pcm
    samples = array("H", pcm[: len(pcm) // 2 * 2])
    if sys.byteorder == "big":  # pragma: no cover - the wire format is little-endian everywhere
        samples.byteswap()
    table = _ulaw_table() if kind == "audio/pcmu" else _alaw_table()
    return bytes(map(table.__getitem__, samples[::3]))


def _segment(value: int, ends: tuple[int, ...]) -> int:
    for index, end in enumerate(ends):
        if value <= end:
            return index
    return len(ends)


_ULAW_ENDS = (0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF)
_ALAW_ENDS = (0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF)


def _linear_to_ulaw(sample: int) -> int:
    value = sample >> 2
    mask = 0xFF
    if value < 0:
        value, mask = -value, 0x7F
    value = min(value, 8159) + 0x21
    segment = _segment(value, _ULAW_ENDS)
    if segment >= 8:
        return 0x7F ^ mask
    return ((segment << 4) | ((value >> (segment + 1)) & 0xF)) ^ mask


def _linear_to_alaw(sample: int) -> int:
    value = sample >> 3
    mask = 0xD5
    if value < 0:
        value, mask = -value - 1, 0x55
    segment = _segment(value, _ALAW_ENDS)
    if segment >= 8:
        return 0x7F ^ mask
    shift = 1 if segment < 2 else segment
    return ((segment << 4) | ((value >> shift) & 0xF)) ^ mask


def _signed(unsigned: int) -> int:
    return unsigned - 0x10000 if unsigned & 0x8000 else unsigned


@cache
def _ulaw_table() -> bytes:
    """mu-law of every 16-bit sample, indexed by its unsigned value (built once, on first use)."""
    return bytes(_linear_to_ulaw(_signed(value)) for value in range(0x10000))


@cache
def _alaw_table() -> bytes:
    return bytes(_linear_to_alaw(_signed(value)) for value in range(0x10000))
