"""The ``transcription`` and ``translation`` operations (docs/audio.md): one input and one answer
(a transcript) for both, its fixture's timings, and the generated transcript
(llmts/runtime/media/transcript.py hears the upload)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from llmts.runtime.media.transcript import generated_transcript, timed_segments, timed_words
from llmts.runtime.operations.unit import OperationUnit, answer
from llmts.runtime.tokens import estimate_text_tokens
from llmts.schema.media import TimedText, transcript_pieces
from llmts.schema.neutral import OperationInput, ScriptedOutput
from llmts.schema.operations.transcription import TranscriptFixture, TranscriptResult

__all__ = ["TRANSCRIPTION", "TRANSLATION", "TranscriptionInput"]

_DEFAULT_LANGUAGE = "english"


@dataclass(frozen=True, slots=True)
class TranscriptionInput(OperationInput):
    """The uploaded audio, the request's prompt (empty: none) and the language it names (its full name,
    ``english``; empty when none)."""

    upload: bytes
    prompt: str = ""
    language: str = ""

    recorded_options: ClassVar[tuple[str, ...]] = ("language",)

    def texts(self) -> tuple[str, ...]:
        return (self.prompt,) if self.prompt else ()

    def uploaded(self) -> bytes:
        return self.upload


def _transcript(
    text: str,
    language: str,
    duration: float,
    segments: tuple[TimedText, ...] | None = None,
    words: tuple[TimedText, ...] | None = None,
) -> ScriptedOutput:
    result = TranscriptResult(
        text=text,
        language=language,
        duration=duration,
        segments=segments if segments is not None else timed_segments(text, duration),
        words=words if words is not None else timed_words(text, duration),
        pieces=transcript_pieces(text),
    )
    return answer("transcript", result, estimate_text_tokens(text))


def _compile(fixture: TranscriptFixture) -> ScriptedOutput:
    """A scripted transcript; timings it leaves out are spread over its duration (given, else the end
    of its last timing, else one second per 15 characters, at least 0.1 s)."""
    ends = [s.end for s in fixture.segments or ()] + [w.end for w in fixture.words or ()]
    duration = fixture.duration
    if duration is None:
        duration = max(ends) if ends else max(0.1, round(len(fixture.text) / 15, 3))
    segments = (
        tuple(TimedText(s.start, s.end, s.text) for s in fixture.segments)
        if fixture.segments is not None
        else None
    )
    words = (
        tuple(TimedText(w.start, w.end, w.word) for w in fixture.words) if fixture.words is not None else None
    )
    return _transcript(fixture.text, fixture.language or _DEFAULT_LANGUAGE, duration, segments, words)


def _fits(request: TranscriptionInput, output: ScriptedOutput, where: str, stream: bool) -> None:
    """Any transcript answers any upload."""


def _generate(request: TranscriptionInput, seed: str) -> ScriptedOutput:
    """What llmts hears in the upload (llmts/runtime/media/transcript.py); the seed plays no part, so a
    file always gives the same text."""
    del seed
    text, duration = generated_transcript(request.upload)
    return _transcript(text, request.language or _DEFAULT_LANGUAGE, duration)


def _content_frames(request: TranscriptionInput, output: ScriptedOutput) -> int | None:
    """A stream's transcript deltas."""
    result = output.result
    return len(result.pieces) if isinstance(result, TranscriptResult) else None


TRANSCRIPTION = OperationUnit(
    "transcription",
    TranscriptionInput,
    "transcript",
    _compile,
    _fits,
    _generate,
    content_frames=_content_frames,
)
TRANSLATION = OperationUnit(
    "translation",
    TranscriptionInput,
    "transcript",
    _compile,
    _fits,
    _generate,
    content_frames=_content_frames,
)
