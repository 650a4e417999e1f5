"""The ``speech`` operation's schema: its row, its fixture (exact speech bytes in one of OpenAI's formats,
bounded by ``MEDIA_LIMITS``) and its compiled answer (docs/audio.md)."""

from __future__ import annotations

from pydantic import BaseModel

from llmts.schema.media import AudioFormat, MediaB64
from llmts.schema.model_base import STRICT
from llmts.schema.operation_row import OperationResult, OperationRow

__all__ = ["SPEECH_ROW", "AudioFixture", "AudioResult"]

SPEECH_ROW = OperationRow("speech", ("audio",))


class AudioFixture(BaseModel):
    """Scripted speech: the exact bytes (base64) of audio in ``format``."""

    model_config = STRICT

    format: AudioFormat
    b64: MediaB64


class AudioResult(OperationResult):
    """Speech: the audio bytes and their format."""

    format: str
    data: bytes
