"""When realtime audio makes a user turn: a deterministic stand-in for the service's voice activity
detection (docs/design/gemini-live.md, "When audio makes a turn").

* Automatic activity detection (the default): a chunk with any non-zero byte is speech, a chunk of zero
  bytes is silence. Speech starts at the first chunk that is not silence (the user barging in if the
  model is answering) and ends when the zero bytes it ends with reach ``silenceDurationMs`` (default
  500 ms) at the chunk's sample rate, or at ``audioStreamEnd``. Silence before speech belongs to no turn.
  Generated speech has 50 ms gaps between words, so it never ends a turn by itself: send half a second of
  zeros (16,000 bytes at 16 kHz) or ``audioStreamEnd`` after it.
* Manual (``automaticActivityDetection.disabled``): the utterance is the audio between ``activityStart``
  and ``activityEnd``; audio outside an activity is counted and ignored.

What llmts hears in an utterance is what its transcription endpoints hear in a file it did not generate
(``llmts.runtime.media.transcript``): ``Transcribed audio: <bytes> bytes, sha256 <12 hex digits>.``, the
same words for the same audio. The audio is hashed as it arrives, never kept; an utterance longer than
``MAX_UTTERANCE_BYTES`` closes the connection (1009).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from llmts.providers.gemini.live.client_types import AudioChunk, LiveInvalid

__all__ = ["MAX_UTTERANCE_BYTES", "SILENCE_MS", "SpeechInput", "Utterance"]

SILENCE_MS = 500
# 15 MiB: eight minutes of 16 kHz PCM16, past the service's 15-minute audio session at any useful rate.
MAX_UTTERANCE_BYTES = 15 * 1024 * 1024
_MESSAGE_TOO_BIG = 1009


@dataclass(frozen=True, slots=True)
class Utterance:
    """One user utterance: its size and the first 12 hex digits of its SHA-256."""

    size: int
    digest: str

    def text(self) -> str:
        return f"Transcribed audio: {self.size} bytes, sha256 {self.digest}."


class SpeechInput:
    """One connection's input audio: whether the user is speaking, and the utterance so far."""

    __slots__ = ("_automatic", "_hash", "_silence_ms", "_size", "_trailing", "speaking")

    def __init__(self, automatic: bool, silence_ms: int | None) -> None:
        self._automatic = automatic
        self._silence_ms = silence_ms or SILENCE_MS
        self.speaking = False
        self._hash = hashlib.sha256()
        self._size = 0
        self._trailing = 0  # zero bytes at the end of the utterance so far

    def _begin(self) -> None:
        self.speaking = True
        self._hash = hashlib.sha256()
        self._size = 0
        self._trailing = 0

    def _add(self, data: bytes) -> None:
        if self._size + len(data) > MAX_UTTERANCE_BYTES:
            raise LiveInvalid(
                f"Audio input exceeds {MAX_UTTERANCE_BYTES // (1024 * 1024)} MiB without an end of speech "
                "(llmts limit).",
                code=_MESSAGE_TOO_BIG,
            )
        self._hash.update(data)
        self._size += len(data)

    def _end(self) -> Utterance | None:
        if not self.speaking:
            return None
        self.speaking = False
        if self._size == 0:
            return None
        return Utterance(self._size, self._hash.hexdigest()[:12])

    def audio(self, chunk: AudioChunk) -> tuple[bool, Utterance | None]:
        """(speech started with this chunk, the utterance it ended)."""
        data = chunk.data
        if not self._automatic:
            if self.speaking:
                self._add(data)
            return False, None
        voiced = data.rstrip(b"\x00")
        started = False
        if not self.speaking:
            if not voiced:
                return False, None
            self._begin()
            started = True
        self._trailing = len(data) - len(voiced) if voiced else self._trailing + len(data)
        self._add(data)
        silence_bytes = max(2, chunk.rate * 2 * self._silence_ms // 1000)
        return started, self._end() if self._trailing >= silence_bytes else None

    def activity_start(self) -> bool:
        """Manual detection: the user starts speaking (False if already speaking)."""
        if self.speaking:
            return False
        self._begin()
        return True

    def activity_end(self) -> Utterance | None:
        return self._end()

    def stream_end(self) -> Utterance | None:
        """``audioStreamEnd``: ends the speech under automatic detection (ignored under manual)."""
        return self._end() if self._automatic else None
