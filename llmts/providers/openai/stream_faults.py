"""Which OpenAI operations stream plain SSE text frames that in-stream ``stream_delivery`` plans act on
(the operations ``chat_parse`` and ``responses_parse`` put on their neutral requests)."""

from __future__ import annotations

__all__ = [
    "CHAT_STREAM_FAULTS",
    "IMAGE_STREAM_FAULTS",
    "RESPONSES_STREAM_FAULTS",
    "SPEECH_STREAM_FAULTS",
    "TRANSCRIPTION_STREAM_FAULTS",
]

CHAT_STREAM_FAULTS = frozenset({"chat.completions"})
RESPONSES_STREAM_FAULTS = frozenset({"responses"})
# Image streams (partial images are the counted frames), transcript deltas and speech audio deltas.
IMAGE_STREAM_FAULTS = frozenset({"images"})
TRANSCRIPTION_STREAM_FAULTS = frozenset({"transcription"})
SPEECH_STREAM_FAULTS = frozenset({"speech"})
