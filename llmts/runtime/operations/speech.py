"""The ``speech`` operation (docs/audio.md): its input, its fixture's audio, the fit check and the
generated speech (llmts/runtime/media/audio.py and speech_codecs.py write it)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from llmts.errors import FixtureMismatch, InvalidRequest
from llmts.runtime.media.audio import pcm_seconds, speech_pcm, speech_tag, wav_bytes
from llmts.runtime.media.speech_codecs import encode_speech
from llmts.runtime.operations.unit import OperationUnit, answer
from llmts.schema.media import AUDIO_DELTA_BYTES, AUDIO_FORMATS, decode_b64
from llmts.schema.neutral import OperationInput, ScriptedOutput
from llmts.schema.operations.speech import AudioFixture, AudioResult

__all__ = ["GENERATED_AUDIO_FORMATS", "SPEECH", "SpeechInput"]

# Every format OpenAI answers; all but wav and pcm need the extra llmts[media] (encoders).
GENERATED_AUDIO_FORMATS = AUDIO_FORMATS
# Output tokens: one per KiB of audio.
_AUDIO_BYTES_PER_TOKEN = 1024


@dataclass(frozen=True, slots=True)
class SpeechInput(OperationInput):
    """The text to speak, the audio format asked for (empty: mp3) and the speaking speed."""

    text: str
    output_format: str = ""
    speed: float = 1.0

    recorded_options: ClassVar[tuple[str, ...]] = ("output_format", "speed")

    def texts(self) -> tuple[str, ...]:
        return (self.text,)


def _audio(fmt: str, data: bytes) -> ScriptedOutput:
    tokens = max(1, math.ceil(len(data) / _AUDIO_BYTES_PER_TOKEN))
    return answer("audio", AudioResult(format=fmt, data=data), tokens)


def _compile(fixture: AudioFixture) -> ScriptedOutput:
    return _audio(fixture.format, decode_b64(fixture.b64))


def _fits(request: SpeechInput, output: ScriptedOutput, where: str, stream: bool) -> None:
    """The format asked for."""
    result = output.result
    if not isinstance(result, AudioResult):
        return
    asked = request.output_format or "mp3"
    if result.format != asked:
        raise FixtureMismatch(
            f"{where} scripts {result.format} audio but the request asks for {asked}", param="response_format"
        )


def _generate(request: SpeechInput, seed: str) -> ScriptedOutput:
    """Tones for the input text in the requested format: ``pcm``, ``wav`` (the text in a ``LIST`` chunk),
    or ``mp3``/``opus``/``aac``/``flac`` (llmts/runtime/media/speech_codecs.py; the text in a tag where the
    container has metadata)."""
    del seed
    fmt = request.output_format or "mp3"
    if fmt not in GENERATED_AUDIO_FORMATS:
        raise InvalidRequest(
            f"llmts generates speech as {', '.join(GENERATED_AUDIO_FORMATS)}; response_format {fmt[:32]} "
            "needs an audio fixture with the bytes to return",
            code="unsupported_response_format",
            param="response_format",
        )
    pcm = speech_pcm(request.text, request.speed or 1.0)
    if fmt == "pcm":
        data = pcm
    elif fmt == "wav":
        data = wav_bytes(pcm, request.text)
    else:
        data = encode_speech(fmt, pcm, speech_tag(request.text, pcm_seconds(pcm)))
    return _audio(fmt, data)


def _content_frames(request: SpeechInput, output: ScriptedOutput) -> int | None:
    """A stream's audio deltas."""
    result = output.result
    return math.ceil(len(result.data) / AUDIO_DELTA_BYTES) if isinstance(result, AudioResult) else None


SPEECH = OperationUnit(
    "speech", SpeechInput, "audio", _compile, _fits, _generate, content_frames=_content_frames
)
