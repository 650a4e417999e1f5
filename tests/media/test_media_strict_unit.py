"""The strict rules of the image and audio routes, in memory: each rule on the bodies it refuses and a
body it accepts, the tables' names and sources, the docs table, and hostile values never crashing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmts.errors import StrictRequestRejected
from llmts.providers.openai.media_strict import (
    IMAGE_EDIT_RULES,
    IMAGE_GENERATION_RULES,
    SPEECH_RULES,
    TRANSCRIPTION_RULES,
    TRANSLATION_RULES,
)
from llmts.providers.strict import StrictRule, check_strict
from llmts.runtime.media.audio import wav_bytes
from llmts.runtime.media.png import generated_png
from llmts.runtime.signatures import SignatureBook, signing_key

TABLES = (IMAGE_GENERATION_RULES, IMAGE_EDIT_RULES, TRANSCRIPTION_RULES, TRANSLATION_RULES, SPEECH_RULES)
PNG = generated_png(4, 4, b"x")
BOOK = SignatureBook(signing_key(None))


def _file(filename: str, content_type: str, data: bytes) -> list[dict[str, Any]]:
    return [{"filename": filename, "content_type": content_type, "size": len(data), "data": data}]


def _broken(table: tuple[StrictRule, ...], body: dict[str, Any]) -> str | None:
    try:
        check_strict(table, b"", body, BOOK)  # the media rules name no markers: the raw body is not read
    except StrictRequestRejected as rejected:
        return rejected.rule
    return None


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"prompt": "a fox", "size": "1024x1024"}, None),
        ({"prompt": "a fox", "size": "1536x864"}, None),  # divisible by 16, within 3:1
        ({"prompt": ""}, "image_prompt_length"),
        ({"prompt": "   "}, "image_prompt_length"),
        ({"prompt": "x" * 32_001}, "image_prompt_length"),
        ({"prompt": "a fox", "size": "100x100"}, "image_size_unsupported"),
        ({"prompt": "a fox", "size": "3840x1024"}, "image_size_unsupported"),  # wider than 3:1
        ({"prompt": "a fox", "size": "4096x4096"}, "image_size_unsupported"),
    ],
)
def test_image_generation_rules(body: dict[str, Any], rule: str | None) -> None:
    assert _broken(IMAGE_GENERATION_RULES, body) == rule


@pytest.mark.parametrize(
    ("files", "rule"),
    [
        ({"image": _file("a.png", "image/png", PNG)}, None),
        ({"image[]": _file("a.png", "image/png", PNG) * 2, "mask": _file("m.png", "image/png", PNG)}, None),
        ({"image": _file("a.txt", "text/plain", b"x")}, "image_file_type"),
        ({"image": _file("a.png", "", PNG)}, "image_file_type"),
        ({"image[]": _file("a.png", "image/png", PNG) * 17}, "image_file_too_large"),
        (  # just under 50 MiB: "less than 50MB"
            {
                "image": [
                    {"filename": "a.png", "content_type": "image/png", "size": 50 * 2**20 - 1, "data": PNG}
                ]
            },
            None,
        ),
        (
            {"image": [{"filename": "a.png", "content_type": "image/png", "size": 50 * 2**20, "data": PNG}]},
            "image_file_too_large",
        ),
        (
            {"image": _file("a.png", "image/png", PNG), "mask": _file("m.jpg", "image/jpeg", b"\xff\xd8")},
            "image_mask",
        ),
        (
            {
                "image": _file("a.png", "image/png", PNG),
                "mask": _file("m.png", "image/png", PNG + bytes(4 * 2**20)),
            },
            "image_mask",
        ),
    ],
)
def test_image_edit_rules(files: dict[str, Any], rule: str | None) -> None:
    assert _broken(IMAGE_EDIT_RULES, {"prompt": "a hat", **files}) == rule


_WAV = _file("a.wav", "audio/wav", wav_bytes(b"\x00" * 48_000))


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"file": _WAV, "model": "whisper-1", "response_format": "srt"}, None),
        ({"file": _file("a.MP3", "audio/mpeg", b"x" * 100), "model": "whisper-1"}, None),
        ({"file": _file("a.txt", "text/plain", b"x"), "model": "whisper-1"}, "audio_file_format"),
        ({"file": _file("noext", "audio/wav", b"x"), "model": "whisper-1"}, "audio_file_format"),
        (
            {"file": [{"filename": "a.wav", "content_type": "", "size": 25 * 2**20 + 1, "data": b""}]},
            "audio_file_too_large",
        ),
        ({"file": _file("a.wav", "audio/wav", b""), "model": "whisper-1"}, "audio_too_short"),
        (
            {"file": _file("a.wav", "audio/wav", wav_bytes(b"\x00" * 400)), "model": "whisper-1"},
            "audio_too_short",
        ),
        (
            {"file": _WAV, "model": "gpt-4o-transcribe", "response_format": "verbose_json"},
            "transcription_response_format",
        ),
        (
            {"file": _WAV, "model": "whisper-1", "response_format": "diarized_json"},
            "transcription_response_format",
        ),
        ({"file": _WAV, "model": "gpt-4o-transcribe-diarize", "response_format": "diarized_json"}, None),
        (
            {"file": _WAV, "model": "whisper-1", "timestamp_granularities[]": "word"},
            "timestamp_granularities_format",
        ),
        (
            {
                "file": _WAV,
                "model": "whisper-1",
                "timestamp_granularities[]": "word",
                "response_format": "verbose_json",
            },
            None,
        ),
    ],
)
def test_transcription_rules(body: dict[str, Any], rule: str | None) -> None:
    assert _broken(TRANSCRIPTION_RULES, body) == rule


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"model": "gpt-4o-mini-tts", "voice": "alloy", "input": "Hi", "stream_format": "sse"}, None),
        ({"model": "gpt-4o-mini-tts", "voice": {"id": "v"}, "input": "Hi"}, None),
        ({"model": "gpt-4o-mini-tts", "voice": "alloy", "input": ""}, "speech_input_length"),
        ({"model": "gpt-4o-mini-tts", "voice": "alloy", "input": "x" * 4097}, "speech_input_length"),
        ({"model": "gpt-4o-mini-tts", "input": "Hi"}, "speech_voice_missing"),
        (
            {"model": "tts-1", "voice": "alloy", "input": "Hi", "stream_format": "sse"},
            "speech_model_features",
        ),
        (
            {"model": "tts-1-hd", "voice": "alloy", "input": "Hi", "instructions": "calm"},
            "speech_model_features",
        ),
    ],
)
def test_speech_rules(body: dict[str, Any], rule: str | None) -> None:
    assert _broken(SPEECH_RULES, body) == rule


def test_every_rule_names_a_source_is_unique_per_table_and_documented() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "realistic-answers.md").read_text(encoding="utf-8")
    for table in TABLES:
        names = [rule.name for rule in table]
        assert len(names) == len(set(names))
        for rule in table:
            assert rule.source.startswith("https://") and f"`{rule.name}`" in text, rule.name


@pytest.mark.parametrize("hostile", [{}, [], None, 1.5, {"type": {}}, [{"size": "x"}], [{}], "x"])
def test_rules_never_crash_on_hostile_values(hostile: Any) -> None:
    keys = (
        "prompt",
        "size",
        "image",
        "image[]",
        "mask",
        "file",
        "model",
        "response_format",
        "input",
        "voice",
    )
    for table in TABLES:
        for key in keys:
            _broken(table, {key: hostile})  # a rule's 400 or nothing, never another exception
