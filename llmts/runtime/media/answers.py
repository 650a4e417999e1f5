"""Images, transcripts and speech as operation answers: fixtures compiled once at configure time,
answers generated when no fixture owns the request, and the checks that a fixture fits the request
(docs/images.md, docs/audio.md). Neutral: adapters parse the wire into an ``OperationRequest`` and render
the ``ScriptedOutput.result`` built here."""

from __future__ import annotations

import hashlib
import math
import struct

from llmts.errors import FixtureMismatch, InvalidRequest
from llmts.runtime.media.audio import pcm_seconds, speech_pcm, speech_tag, wav_bytes
from llmts.runtime.media.image_codecs import IMAGE_FORMATS, draw_image
from llmts.runtime.media.png import PNG_SIGNATURE
from llmts.runtime.media.speech_codecs import encode_speech
from llmts.runtime.media.transcript import generated_transcript, timed_segments, timed_words
from llmts.runtime.tokens import estimate_text_tokens
from llmts.schema.media import (
    AUDIO_DELTA_BYTES,
    AUDIO_FORMATS,
    MEDIA_LIMITS,
    AudioFixture,
    AudioResult,
    ImagesFixture,
    ImagesResult,
    NeutralImage,
    TimedText,
    TranscriptFixture,
    TranscriptResult,
    decode_b64,
    transcript_pieces,
)
from llmts.schema.neutral import OperationRequest, ScriptedOutput, build

__all__ = [
    "GENERATED_AUDIO_FORMATS",
    "GENERATED_IMAGE_FORMATS",
    "check_media_fits",
    "compile_audio",
    "compile_images",
    "compile_transcript",
    "generate_images",
    "generate_speech",
    "generate_transcript",
    "media_content_frames",
]

# Every format OpenAI answers; all but wav, pcm, png and svg need the extra llmts[media] (encoders).
GENERATED_AUDIO_FORMATS = AUDIO_FORMATS
GENERATED_IMAGE_FORMATS = IMAGE_FORMATS
_DEFAULT_LANGUAGE = "english"
# Output tokens: an image counts one per 1,024 pixels (a 1024x1024 image: 1,024); audio one per KiB.
_PIXELS_PER_TOKEN = 1024
_AUDIO_BYTES_PER_TOKEN = 1024
_MAX_PIXELS = MEDIA_LIMITS["generated_image_pixels"]


def _image_tokens(width: int, height: int) -> int:
    return max(1, math.ceil(width * height / _PIXELS_PER_TOKEN))


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data.startswith(PNG_SIGNATURE) and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    return None


def _output(kind: str, result: ImagesResult | TranscriptResult | AudioResult, tokens: int) -> ScriptedOutput:
    return build(ScriptedOutput, kind=kind, result=result, output_tokens=tokens)


# --- fixtures ---------------------------------------------------------------------------------------


def compile_images(fixture: ImagesFixture) -> ScriptedOutput:
    images, tokens = [], 0
    for image in fixture:
        data = decode_b64(image.b64_json) if image.b64_json is not None else b""
        size = _png_size(data)
        tokens += _image_tokens(*size) if size is not None else _image_tokens(1024, 1024)
        images.append(NeutralImage(data=data, url=image.url, revised_prompt=image.revised_prompt))
    return _output("images", ImagesResult(images=tuple(images)), tokens)


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
    return _output("transcript", result, estimate_text_tokens(text))


def compile_transcript(fixture: TranscriptFixture) -> ScriptedOutput:
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


def compile_audio(fixture: AudioFixture) -> ScriptedOutput:
    data = decode_b64(fixture.b64)
    tokens = max(1, math.ceil(len(data) / _AUDIO_BYTES_PER_TOKEN))
    return _output("audio", AudioResult(format=fixture.format, data=data), tokens)


# --- generated answers ------------------------------------------------------------------------------


def generate_images(request: OperationRequest, seed: str) -> ScriptedOutput:
    """``count`` images of the requested size and ``output_format``, each from (seed, prompt, size, index,
    uploads' digest); a stream's partial images reveal the cells row by row, a GIF's frames cell by cell
    (llmts/runtime/media/image_codecs.py)."""
    fmt = request.output_format or "png"
    if fmt not in GENERATED_IMAGE_FORMATS:
        raise InvalidRequest(
            f"llmts generates images as {', '.join(GENERATED_IMAGE_FORMATS)}; output_format {fmt[:32]} needs "
            "an images fixture with the bytes to return",
            code="unsupported_output_format",
            param="output_format",
        )
    prompt = request.inputs[0] if request.inputs else ""
    width, height = request.width or 1024, request.height or 1024
    frames = max(1, request.frame_count) if fmt == "gif" else 1
    pixels = width * height * max(1, request.count) * (1 + request.partial_images) * frames
    if pixels > _MAX_PIXELS:
        raise InvalidRequest(
            f"the request asks llmts to draw {pixels} pixels (n images of {width}x{height}, their partial "
            f"images and GIF frames); llmts draws at most {_MAX_PIXELS} per request (generated_image_pixels)",
            code="invalid_value",
            param="n",
        )
    images = []
    for index in range(max(1, request.count)):  # count 0: the wire names no number; one image
        key = (
            b"\x00".join(
                (seed.encode(), prompt.encode("utf-8", "surrogatepass"), f"{width}x{height}:{index}".encode())
            )
            + hashlib.sha256(request.upload).digest()
        )
        partials = tuple(
            draw_image(fmt, width, height, key, reveal=(step + 1) / (request.partial_images + 1))
            for step in range(request.partial_images)
        )
        data = draw_image(
            fmt, width, height, key, frame_count=frames, frame_duration_ms=request.frame_duration_ms
        )
        images.append(NeutralImage(data=data, partials=partials))
    tokens = _image_tokens(width, height) * len(images)
    return _output("images", ImagesResult(images=tuple(images)), tokens)


def generate_transcript(request: OperationRequest, seed: str) -> ScriptedOutput:
    """What llmts hears in the upload (llmts/runtime/media/transcript.py); the seed plays no part, so a
    file always gives the same text."""
    del seed
    text, duration = generated_transcript(request.upload)
    return _transcript(text, request.language or _DEFAULT_LANGUAGE, duration)


def generate_speech(request: OperationRequest, seed: str) -> ScriptedOutput:
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
    text = request.inputs[0] if request.inputs else ""
    pcm = speech_pcm(text, request.speed or 1.0)
    if fmt == "pcm":
        data = pcm
    elif fmt == "wav":
        data = wav_bytes(pcm, text)
    else:
        data = encode_speech(fmt, pcm, speech_tag(text, pcm_seconds(pcm)))
    tokens = max(1, math.ceil(len(data) / _AUDIO_BYTES_PER_TOKEN))
    return _output("audio", AudioResult(format=fmt, data=data), tokens)


# --- fit -------------------------------------------------------------------------------------------


def check_media_fits(request: OperationRequest, output: ScriptedOutput, where: str) -> None:
    """Images: one per image asked for (``n``), bytes for a stream; speech: the format asked for."""
    result = output.result
    if isinstance(result, ImagesResult):
        if request.count and len(result.images) != request.count:
            raise FixtureMismatch(
                f"{where} scripts {len(result.images)} image(s) but the request asks for {request.count} (n)",
                param="n",
            )
        if request.stream and any(not image.data for image in result.images):
            raise FixtureMismatch(
                f"{where} scripts an image by url, but streamed image events carry b64_json",
                param="stream",
            )
    elif isinstance(result, AudioResult):
        asked = request.output_format or "mp3"
        if result.format != asked:
            raise FixtureMismatch(
                f"{where} scripts {result.format} audio but the request asks for {asked}",
                param="response_format",
            )


def media_content_frames(request: OperationRequest, output: ScriptedOutput) -> int | None:
    """How many counted content frames the streamed answer has (None: not a media answer): partial
    images, transcript deltas or audio deltas."""
    result = output.result
    if isinstance(result, ImagesResult):
        return len(result.images) * request.partial_images
    if isinstance(result, TranscriptResult):
        return len(result.pieces)
    if isinstance(result, AudioResult):
        return math.ceil(len(result.data) / AUDIO_DELTA_BYTES)
    return None
