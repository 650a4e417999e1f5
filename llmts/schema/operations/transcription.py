"""The ``transcription`` and ``translation`` operations' schema: their rows (both answered by the
``transcript`` kind: a translation is a transcript in English), the fixture (text, language, duration and
timings, bounded by ``MEDIA_LIMITS``) and the compiled answer (docs/audio.md)."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, model_validator

from llmts.schema.media import MEDIA_LIMITS, TimedText
from llmts.schema.model_base import STRICT, OmitsNone
from llmts.schema.operation_row import OperationResult, OperationRow

__all__ = [
    "TRANSCRIPTION_ROW",
    "TRANSLATION_ROW",
    "SegmentFixture",
    "TranscriptFixture",
    "TranscriptResult",
    "WordFixture",
]

TRANSCRIPTION_ROW = OperationRow("transcription", ("transcript",))
TRANSLATION_ROW = OperationRow("translation", ("transcript",))


def _time(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number of seconds")
    return value


Seconds = Annotated[float, Field(ge=0), AfterValidator(_time)]


class _Timed(BaseModel):
    """When a segment or word is spoken: from ``start`` to ``end``, in seconds."""

    model_config = STRICT

    start: Seconds
    end: Seconds

    @model_validator(mode="after")
    def _ordered(self) -> _Timed:
        if self.end < self.start:
            raise ValueError("end must not be before start")
        return self


class SegmentFixture(_Timed):
    text: str = Field(max_length=MEDIA_LIMITS["transcript_chars"])


class WordFixture(_Timed):
    word: str = Field(max_length=MEDIA_LIMITS["transcript_chars"])


class TranscriptFixture(OmitsNone):
    """A scripted transcription (or translation): the text, and optionally language, duration and timings."""

    model_config = STRICT

    text: str = Field(max_length=MEDIA_LIMITS["transcript_chars"])
    language: str | None = Field(default=None, min_length=1, max_length=64)
    duration: Seconds | None = None
    segments: list[SegmentFixture] | None = Field(
        default=None, max_length=MEDIA_LIMITS["transcript_segments"]
    )
    words: list[WordFixture] | None = Field(default=None, max_length=MEDIA_LIMITS["transcript_words"])


class TranscriptResult(OperationResult):
    """A transcription or translation: text, language, duration and timings (always filled)."""

    text: str
    language: str
    duration: float
    segments: tuple[TimedText, ...]
    words: tuple[TimedText, ...]
    # How a stream delivers the text (concatenates to it; llmts/runtime/media/transcript.py).
    pieces: tuple[str, ...]
