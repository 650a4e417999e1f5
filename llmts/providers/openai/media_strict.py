"""OpenAI's request rules for its image and audio routes (the strict request contract,
``llmts/providers/strict.py``). Multipart routes are checked on ``MultipartForm.rule_body()``: text
fields as strings, each file field a list of ``{"filename", "content_type", "size", "data"}``.
docs/realistic-answers.md lists each rule with its source.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.media.transcript import read_wav
from llmts.runtime.signatures import SignatureBook

__all__ = [
    "IMAGE_EDIT_RULES",
    "IMAGE_GENERATION_RULES",
    "SPEECH_RULES",
    "TRANSCRIPTION_RULES",
    "TRANSLATION_RULES",
]

_IMAGES_GUIDE = "https://platform.openai.com/docs/api-reference/images"
_AUDIO_GUIDE = "https://platform.openai.com/docs/api-reference/audio"
_PROMPT_CHARS = 32_000
_SPEECH_CHARS = 4096
_IMAGE_BYTES = 50 * 1024 * 1024
_MASK_BYTES = 4 * 1024 * 1024
_AUDIO_BYTES = 25 * 1024 * 1024
_EDIT_IMAGES = 16
_STANDARD_SIZES = (
    "1024x1024",
    "1024x1536",
    "1536x1024",
    "auto",
    "256x256",
    "512x512",
    "1792x1024",
    "1024x1792",
)
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/webp")
_AUDIO_EXTENSIONS = ("flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm")
# Models whose transcription answers only these formats (OpenAI's response_format documentation).
_FORMATS_BY_MODEL = {
    "gpt-4o-transcribe": ("json", "text"),
    "gpt-4o-mini-transcribe": ("json", "text"),
    "gpt-4o-mini-transcribe-2025-12-15": ("json", "text"),
    "gpt-4o-transcribe-diarize": ("json", "text", "diarized_json"),
}
_TTS_CLASSIC = frozenset({"tts-1", "tts-1-hd"})


def _text_length(body: dict[str, Any], name: str, maximum: int) -> Violation | None:
    value = body.get(name)
    if not isinstance(value, str):
        return None
    if not value.strip():
        return Violation(
            f"Invalid '{name}': string too short. Expected a string with minimum length 1, but got an empty "
            "string instead.",
            name,
        )
    if len(value) > maximum:
        return Violation(
            f"Invalid '{name}': string too long. Expected a string with maximum length {maximum}, but got a "
            f"string with length {len(value)} instead.",
            name,
        )
    return None


def _prompt_length(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    return _text_length(body, "prompt", _PROMPT_CHARS)


def _size_supported(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """A standard size, or WIDTHxHEIGHT with both edges divisible by 16, at most 3840 a side and
    3840x2160 in pixels, with an aspect ratio between 1:3 and 3:1."""
    size = body.get("size")
    if not isinstance(size, str) or size in _STANDARD_SIZES:
        return None
    width, _, height = size.partition("x")
    if width.isdigit() and height.isdigit():
        w, h = int(width), int(height)
        if (
            w % 16 == 0
            and h % 16 == 0
            and 0 < w <= 3840
            and 0 < h <= 3840
            and w * h <= 3840 * 2160
            and max(w, h) <= 3 * min(w, h)
        ):
            return None
    return Violation(
        f"Invalid value: '{size[:64]}'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and "
        "'auto' (or WIDTHxHEIGHT with both edges divisible by 16, an aspect ratio between 1:3 and 3:1, and "
        "at most 3840x2160).",
        "size",
    )


def _files(body: dict[str, Any], *names: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for name in names:
        value = body.get(name)
        if isinstance(value, list):
            found.extend(item for item in value if isinstance(item, dict) and "data" in item)
    return found


def _image_types(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    for upload in _files(body, "image", "image[]"):
        content_type = upload["content_type"] or "application/octet-stream"
        if content_type not in _IMAGE_TYPES:
            return Violation(
                f"Invalid file 'image': unsupported mimetype ('{content_type[:64]}'). Supported file formats "
                "are 'image/jpeg', 'image/png', and 'image/webp'.",
                "image",
            )
    return None


def _image_sizes(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    images = _files(body, "image", "image[]")
    if len(images) > _EDIT_IMAGES:
        return Violation(
            f"Too many images: {len(images)}; at most {_EDIT_IMAGES} images can be edited.", "image"
        )
    for upload in images:
        if upload["size"] >= _IMAGE_BYTES:  # "less than 50MB", as the mask's "less than 4MB"
            return Violation(
                f"Invalid file 'image': the file is {upload['size']} bytes; images must be less than 50MB.",
                "image",
            )
    return None


def _mask(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    for upload in _files(body, "mask"):
        if not upload["data"].startswith(b"\x89PNG\r\n\x1a\n"):
            return Violation("Invalid file 'mask': the mask must be a valid PNG file.", "mask")
        if upload["size"] >= _MASK_BYTES:
            return Violation(
                f"Invalid file 'mask': the file is {upload['size']} bytes; the mask must be less than 4MB.",
                "mask",
            )
    return None


def _audio_format(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    for upload in _files(body, "file"):
        extension = upload["filename"].rpartition(".")[2].lower() if "." in upload["filename"] else ""
        if extension not in _AUDIO_EXTENSIONS:
            supported = ", ".join(f"'{e}'" for e in _AUDIO_EXTENSIONS)
            return Violation(f"Invalid file format. Supported formats: [{supported}]", "file")
    return None


def _audio_size(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    for upload in _files(body, "file"):
        if upload["size"] > _AUDIO_BYTES:
            return Violation(
                f"Maximum content size limit ({_AUDIO_BYTES}) exceeded ({upload['size']} bytes read)", "file"
            )
    return None


def _audio_length(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    for upload in _files(body, "file"):
        duration, _ = read_wav(upload["data"])
        if upload["size"] == 0 or (duration is not None and duration < 0.1):
            return Violation("Audio file is too short. Minimum audio length is 0.1 seconds.", "file")
    return None


def _format_for_model(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    model, fmt = body.get("model"), body.get("response_format", "json")
    allowed = _FORMATS_BY_MODEL.get(model) if isinstance(model, str) else None
    if allowed is None or not isinstance(fmt, str):
        if fmt == "diarized_json" and model != "gpt-4o-transcribe-diarize":
            return Violation(
                f"response_format 'diarized_json' is not compatible with model '{str(model)[:64]}'.",
                "response_format",
            )
        return None
    if fmt not in allowed:
        names = " or ".join(f"'{name}'" for name in allowed)
        return Violation(
            f"response_format '{fmt[:32]}' is not compatible with model '{model}'. Use {names} instead.",
            "response_format",
        )
    return None


def _granularities(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    given = body.get("timestamp_granularities[]", body.get("timestamp_granularities"))
    if given and body.get("response_format") != "verbose_json":
        return Violation(
            "timestamp_granularities requires response_format to be verbose_json.", "timestamp_granularities"
        )
    return None


def _speech_input(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    return _text_length(body, "input", _SPEECH_CHARS)


def _speech_voice(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    if body.get("voice") is None:
        return Violation("Missing required parameter: 'voice'.", "voice")
    return None


def _speech_model_features(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    model = body.get("model")
    if not isinstance(model, str) or model not in _TTS_CLASSIC:
        return None
    if body.get("stream_format") == "sse":
        return Violation(f"stream_format 'sse' is not supported for model '{model}'.", "stream_format")
    if body.get("instructions"):
        return Violation(f"instructions are not supported for model '{model}'.", "instructions")
    return None


_PROMPT = StrictRule("image_prompt_length", _prompt_length, "invalid_value", _IMAGES_GUIDE)
_SIZE = StrictRule("image_size_unsupported", _size_supported, "invalid_value", _IMAGES_GUIDE)

IMAGE_GENERATION_RULES = (_PROMPT, _SIZE)
IMAGE_EDIT_RULES = (
    _PROMPT,
    _SIZE,
    StrictRule("image_file_type", _image_types, "unsupported_file_mimetype", _IMAGES_GUIDE),
    StrictRule("image_file_too_large", _image_sizes, "invalid_value", _IMAGES_GUIDE),
    StrictRule("image_mask", _mask, "invalid_value", _IMAGES_GUIDE),
)
_AUDIO_COMMON = (
    StrictRule("audio_file_format", _audio_format, "invalid_value", _AUDIO_GUIDE),
    StrictRule("audio_file_too_large", _audio_size, "invalid_value", _AUDIO_GUIDE),
    StrictRule("audio_too_short", _audio_length, "audio_too_short", _AUDIO_GUIDE),
)
TRANSCRIPTION_RULES = (
    *_AUDIO_COMMON,
    StrictRule("transcription_response_format", _format_for_model, "unsupported_value", _AUDIO_GUIDE),
    StrictRule("timestamp_granularities_format", _granularities, "invalid_value", _AUDIO_GUIDE),
)
TRANSLATION_RULES = (
    *_AUDIO_COMMON,
    StrictRule("timestamp_granularities_format", _granularities, "invalid_value", _AUDIO_GUIDE),
)
SPEECH_RULES = (
    StrictRule("speech_input_length", _speech_input, "invalid_value", _AUDIO_GUIDE),
    StrictRule("speech_voice_missing", _speech_voice, "missing_required_parameter", _AUDIO_GUIDE),
    StrictRule("speech_model_features", _speech_model_features, "unsupported_value", _AUDIO_GUIDE),
)
