"""OpenAI ``/audio/transcriptions`` and ``/audio/translations`` (multipart upload, every
``response_format``, streamed transcripts) and ``/audio/speech`` (audio bytes or ``stream_format: sse``)
(docs/audio.md).

Transcripts come from a ``transcript`` fixture or are generated from the upload; speech comes from an
``audio`` fixture or is generated in the requested format (``llmts/runtime/media``; ``mp3``, ``opus``,
``aac`` and ``flac`` need the extra ``llmts[media]``).
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from typing import Any

import orjson

from llmts.providers.base import ProviderCall, Reply, json_reply
from llmts.providers.openai.media_params import Params, bad, missing
from llmts.providers.openai.subtitles import srt, vtt
from llmts.providers.operations import operation_request, operation_result
from llmts.runtime.operations.speech import SpeechInput
from llmts.runtime.operations.transcription import TranscriptionInput
from llmts.schema.faults import FrameKind
from llmts.schema.media import AUDIO_DELTA_BYTES, AUDIO_FORMATS
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.speech import AudioResult
from llmts.schema.operations.transcription import TranscriptResult

__all__ = [
    "SPEECH_MEDIA_TYPES",
    "TRANSCRIPT_FORMATS",
    "TranscriptAsk",
    "parse_speech",
    "parse_transcription",
    "parse_translation",
    "render_speech",
    "render_transcript",
    "transcript_ask",
]

TRANSCRIPT_FORMATS = ("json", "text", "srt", "verbose_json", "vtt", "diarized_json")
_TRANSLATION_FORMATS = ("json", "text", "srt", "verbose_json", "vtt")
_GRANULARITIES = frozenset({"word", "segment"})
# Models whose transcription streams (whisper-1 ignores ``stream``, as OpenAI documents).
_NON_STREAMING = frozenset({"whisper-1"})
_DURATION_BILLED = frozenset({"whisper-1"})
SPEECH_MEDIA_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}
_SSE_HEADERS = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]
_TEXT_HEADERS = [("Content-Type", "text/plain; charset=utf-8")]
_LANGUAGES = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "ru": "russian",
    "ja": "japanese",
    "zh": "chinese",
    "ko": "korean",
}


@dataclass(frozen=True, slots=True)
class TranscriptAsk:
    """What a transcription or translation asks for, as the renderer needs it."""

    model: str
    translate: bool
    response_format: str
    words: bool
    segments: bool
    stream: bool
    language: str


def transcript_ask(call: ProviderCall) -> TranscriptAsk:
    params = Params(form=call.request.form())
    translate = call.request.path.endswith("/translations")
    model = params.text("model", required=True)
    if not model:
        raise missing("model")
    response_format = params.choice(
        "response_format", _TRANSLATION_FORMATS if translate else TRANSCRIPT_FORMATS, "json"
    )
    granularities = params.texts("timestamp_granularities")
    for value in granularities:
        if value not in _GRANULARITIES:
            raise bad(
                f"Invalid value for 'timestamp_granularities': '{value[:32]}' "
                "(expected 'word' or 'segment').",
                "timestamp_granularities",
            )
    language = params.text("language").strip().lower()[:32]  # an ISO-639-1 code; echoed, so bounded
    return TranscriptAsk(
        model=model,
        translate=translate,
        response_format=response_format,
        words="word" in granularities,
        segments="segment" in granularities or not granularities,
        stream=not translate and params.flag("stream") and model not in _NON_STREAMING,
        language="english" if translate else _LANGUAGES.get(language, language or "english"),
    )


def _audio_upload(call: ProviderCall) -> bytes:
    files = Params(form=call.request.form()).files("file")
    if not files:
        raise missing("file")
    return files[0].data


def _parse_transcript(call: ProviderCall) -> NeutralRequest:
    ask = transcript_ask(call)
    upload = _audio_upload(call)
    prompt = Params(form=call.request.form()).text("prompt")
    operation = "translation" if ask.translate else "transcription"
    given = TranscriptionInput(upload, prompt, ask.language)
    return operation_request("openai", operation, ask.model, given, stream=ask.stream)


def parse_transcription(call: ProviderCall) -> NeutralRequest:
    return _parse_transcript(call)


def parse_translation(call: ProviderCall) -> NeutralRequest:
    return _parse_transcript(call)


def _transcript(completion: Completion) -> TranscriptResult:
    return operation_result(completion, TranscriptResult)


def _token_usage(completion: Completion) -> dict[str, Any]:
    usage = completion.usage
    return {
        "type": "tokens",
        "input_tokens": usage.input_tokens,
        "input_token_details": {"audio_tokens": usage.input_tokens, "text_tokens": 0},
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _segment_tokens(text: str) -> list[int]:
    return [zlib.crc32(word.encode()) % 50_000 for word in text.split()]


def render_transcript(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    ask = transcript_ask(call)
    result = _transcript(completion)
    headers = [("x-request-id", call.request_id)]
    if request.stream:
        return _transcript_stream(result, completion)
    fmt = ask.response_format
    if fmt == "text":
        return Reply(200, [*_TEXT_HEADERS, *headers], (result.text + "\n").encode())
    if fmt == "srt":
        return Reply(200, [*_TEXT_HEADERS, *headers], srt(result.segments).encode())
    if fmt == "vtt":
        return Reply(200, [*_TEXT_HEADERS, *headers], vtt(result.segments).encode())
    seconds = {"type": "duration", "seconds": round(result.duration, 3)}
    if fmt == "verbose_json":
        body: dict[str, Any] = {
            "task": "translate" if ask.translate else "transcribe",
            "language": result.language,
            "duration": result.duration,
            "text": result.text,
        }
        if ask.segments:
            body["segments"] = [
                {
                    "id": index,
                    "seek": 0,
                    "start": segment.start,
                    "end": segment.end,
                    "text": segment.text,
                    "tokens": _segment_tokens(segment.text),
                    "temperature": 0.0,
                    "avg_logprob": -0.25,
                    "compression_ratio": 1.2,
                    "no_speech_prob": 0.01,
                }
                for index, segment in enumerate(result.segments)
            ]
        if ask.words:
            body["words"] = [{"word": w.text, "start": w.start, "end": w.end} for w in result.words]
        if not ask.translate:
            body["usage"] = seconds
        return json_reply(200, body, headers)
    if fmt == "diarized_json":
        body = {
            "task": "transcribe",
            "duration": result.duration,
            "text": result.text,
            "segments": [
                {
                    "type": "transcript.text.segment",
                    "id": f"seg_{index}",
                    "start": segment.start,
                    "end": segment.end,
                    "speaker": "A",
                    "text": segment.text,
                }
                for index, segment in enumerate(result.segments)
            ],
            "usage": seconds,
        }
        return json_reply(200, body, headers)
    body = {"text": result.text}
    if not ask.translate:
        body["usage"] = seconds if ask.model in _DURATION_BILLED else _token_usage(completion)
    return json_reply(200, body, headers)


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def _transcript_stream(result: TranscriptResult, completion: Completion) -> Reply:
    frames = [_data({"type": "transcript.text.delta", "delta": piece}) for piece in result.pieces]
    kinds = [FrameKind.CONTENT] * len(frames)
    frames.append(
        _data({"type": "transcript.text.done", "text": result.text, "usage": _token_usage(completion)})
    )
    kinds.append(FrameKind.TERMINAL)
    return Reply(200, list(_SSE_HEADERS), frames=frames, frame_kinds=kinds)


# --- speech ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SpeechAsk:
    model: str
    text: str
    response_format: str
    speed: float
    sse: bool


def _speech_ask(call: ProviderCall) -> _SpeechAsk:
    params = Params(call.request.json_object())
    model = params.text("model", required=True)
    text = params.text("input", required=True)
    voice = params.raw("voice")
    if voice is not None and not isinstance(voice, (str, dict)):
        raise bad(
            "Invalid type for 'voice': expected a string or an object with an id.", "voice", "invalid_type"
        )
    return _SpeechAsk(
        model=model,
        text=text,
        response_format=params.choice("response_format", AUDIO_FORMATS, "mp3"),
        speed=params.number("speed", 1.0, 0.25, 4.0),
        sse=params.choice("stream_format", ("sse", "audio"), "audio") == "sse",
    )


def parse_speech(call: ProviderCall) -> NeutralRequest:
    ask = _speech_ask(call)
    given = SpeechInput(ask.text, ask.response_format, ask.speed)
    return operation_request("openai", "speech", ask.model, given, stream=ask.sse)


def render_speech(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    result = operation_result(completion, AudioResult)
    if request.stream:
        frames = [
            _data(
                {
                    "type": "speech.audio.delta",
                    "audio": base64.b64encode(result.data[i : i + AUDIO_DELTA_BYTES]).decode(),
                }
            )
            for i in range(0, len(result.data), AUDIO_DELTA_BYTES)
        ]
        kinds = [FrameKind.CONTENT] * len(frames)
        usage = completion.usage
        done = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }
        frames.append(_data({"type": "speech.audio.done", "usage": done}))
        kinds.append(FrameKind.TERMINAL)
        return Reply(200, list(_SSE_HEADERS), frames=frames, frame_kinds=kinds)
    media_type = SPEECH_MEDIA_TYPES.get(result.format, "application/octet-stream")
    return Reply(200, [("Content-Type", media_type), ("x-request-id", call.request_id)], result.data)
