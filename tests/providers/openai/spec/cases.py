"""The requests the spec check sends: every OpenAI operation llmts serves, each in the shapes that change
its answer (streamed or not, every response format, tools, reasoning, native tools, errors), with the
session configuration that makes llmts answer that way. A case's ``xfail`` names an open defect the case
shows (none is open now); such a case must fail until the fix lands (``strict``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmts.runtime.media.png import generated_png
from tests.providers.openai.native_fixtures import (
    CODE_ITEMS,
    CODE_MODEL,
    CODE_TOOL,
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    WEB_ITEMS,
    WEB_MODEL,
    WEB_TOOL,
)
from tests.providers.openai.spec.wire import FormField

__all__ = ["CASES", "PNG", "UPLOAD", "Case"]

CHAT_MODEL = "gpt-4.1-mini"
REASONING_MODEL = "o4-mini"
PNG = ("input.png", generated_png(64, 64, b"spec"), "image/png")
UPLOAD = ("memo.mp3", b"\x00\x01" * 8_000, "audio/mpeg")


USER = [{"role": "user", "content": "What is the weather in Paris?"}]
CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
RESPONSES_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "strict": False,
}
CALLS = [
    {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
    {"id": "call_2", "name": "get_weather", "arguments": {"city": "Lyon"}},
]
REASONING = {"summary": ["Plan the lookup.", "Answer."], "tokens": 32, "signature": "enc_spec"}
JSON_SCHEMA_FORMAT = {
    "type": "json_schema",
    "name": "answer",
    "schema": {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]},
    "strict": True,
}


def _scenario(*responses: dict[str, Any], **filters: Any) -> dict[str, Any]:
    return {"scenarios": [{**filters, "responses": list(responses)}]}


@dataclass(frozen=True)
class Case:
    """One request and what to validate its answer against: ``operation`` (spec path, method), the JSON
    component when the request picks one of a union (``json_schema``); ``expect`` ``"text"`` or
    ``"audio"`` for answers the spec describes no schema for, ``"base64-embeddings"`` for vectors to
    decode first (deviations D4, D5 and D10 of data/README.md)."""

    id: str
    operation: tuple[str, str]
    body: dict[str, Any] | None = None
    form: list[FormField] | None = None
    config: dict[str, Any] | None = None
    json_schema: str | None = None
    expect: str = "spec"
    status: int = 200
    xfail: str | None = None
    path: str = ""

    @property
    def url_path(self) -> str:
        return self.path or self.operation[0]


_CHAT = ("/chat/completions", "post")
_RESPONSES = ("/responses", "post")


def _chat(case_id: str, config: dict[str, Any] | None = None, status: int = 200, **body: Any) -> Case:
    return Case(case_id, _CHAT, {"model": CHAT_MODEL, "messages": USER, **body}, config=config, status=status)


def _responses(
    case_id: str,
    config: dict[str, Any] | None = None,
    status: int = 200,
    **body: Any,
) -> Case:
    request = {"model": CHAT_MODEL, "input": "What is the weather in Paris?", **body}
    return Case(case_id, _RESPONSES, request, config=config, status=status)


def _both(make: Callable[..., Case], case_id: str, *args: Any, **kwargs: Any) -> list[Case]:
    """The case whole and streamed."""
    return [make(case_id, *args, **kwargs), make(case_id + "-stream", *args, stream=True, **kwargs)]


_TEXT = _scenario({"text": "Sunny in Paris.", "chunks": ["Sunny", " in", " Paris."]})
_CALLS = _scenario({"text": "Checking.", "tool_calls": CALLS})
_N2 = _scenario({"text": "Sunny."}, {"tool_calls": CALLS[:1]})

CHAT_CASES = [
    *_both(_chat, "chat-text", _TEXT),
    _chat("chat-stream-usage", _TEXT, stream=True, stream_options={"include_usage": True}),
    *_both(_chat, "chat-n2", _N2, n=2, tools=[CHAT_TOOL]),
    *_both(_chat, "chat-tools", _CALLS, tools=[CHAT_TOOL], tool_choice="auto", parallel_tool_calls=True),
    *_both(
        _chat, "chat-json-mode", _scenario({"json": {"answer": 42}}), response_format={"type": "json_object"}
    ),
    *_both(
        _chat,
        "chat-json-schema",
        _scenario({"json": {"answer": 42}}),
        response_format={
            "type": "json_schema",
            "json_schema": {key: value for key, value in JSON_SCHEMA_FORMAT.items() if key != "type"},
        },
    ),
    *_both(_chat, "chat-logprobs", _TEXT, logprobs=True, top_logprobs=2),
    *_both(_chat, "chat-refusal", _scenario({"refusal": "I can't help with that."})),
    *_both(
        _chat, "chat-length", _scenario({"text": "Sunny", "finish_reason": "length"}), max_completion_tokens=5
    ),
    *_both(
        _chat,
        "chat-reasoning",
        _scenario({"reasoning": REASONING, "text": "Sunny."}),
        model=REASONING_MODEL,
        reasoning_effort="low",
    ),
    _chat("chat-echo"),
    _chat(
        "chat-error-scripted",
        _scenario({"error": {"status": 400, "code": "bad", "message": "No."}}),
        status=400,
    ),
    _chat(
        "chat-error-scripted-stream",
        _scenario({"error": {"status": 503, "code": "overloaded", "message": "Busy."}}),
        status=503,
        stream=True,
    ),
    _chat("chat-error-unknown-model", {"models": [CHAT_MODEL]}, status=404, model="gpt-unknown"),
    _chat("chat-error-invalid", status=400, messages="not a list"),
]

RESPONSES_CASES = [
    *_both(_responses, "responses-text", _TEXT, instructions="Be brief.", metadata={"k": "v"}),
    *_both(_responses, "responses-function-calls", _CALLS, tools=[RESPONSES_TOOL], tool_choice="auto"),
    *_both(
        _responses,
        "responses-function-tool-without-strict",
        _CALLS,
        tools=[{key: value for key, value in RESPONSES_TOOL.items() if key != "strict"}],
    ),
    *_both(
        _responses,
        "responses-reasoning",
        _scenario({"reasoning": {**REASONING, "text": "Raw thought."}, "text": "Sunny."}),
        model=REASONING_MODEL,
        reasoning={"effort": "low", "summary": "auto"},
        include=["reasoning.encrypted_content"],
    ),
    *_both(
        _responses,
        "responses-json-schema",
        _scenario({"json": {"answer": 42}}),
        text={"format": JSON_SCHEMA_FORMAT},
    ),
    *_both(_responses, "responses-refusal", _scenario({"refusal": "I can't help with that."})),
    *_both(
        _responses,
        "responses-incomplete",
        _scenario({"text": "Sunny", "finish_reason": "length"}),
        max_output_tokens=16,
    ),
    *_both(
        _responses,
        "responses-web-search",
        {"models": [WEB_MODEL], **_scenario({"items": WEB_ITEMS})},
        model=WEB_MODEL,
        tools=[WEB_TOOL],
    ),
    *_both(
        _responses,
        "responses-file-search",
        {"models": [FILE_MODEL], **_scenario({"items": FILE_ITEMS})},
        model=FILE_MODEL,
        tools=[FILE_TOOL],
        include=["file_search_call.results"],
    ),
    *_both(
        _responses,
        "responses-code-interpreter",
        {"models": [CODE_MODEL], **_scenario({"items": CODE_ITEMS})},
        model=CODE_MODEL,
        tools=[CODE_TOOL],
        include=["code_interpreter_call.outputs"],
    ),
    _responses(
        "responses-web-search-gpt-5",
        {"models": ["gpt-5"], **_scenario({"items": WEB_ITEMS})},
        model="gpt-5",
        tools=[WEB_TOOL],
    ),
    _responses(
        "responses-file-search-gpt-4.1-mini",
        {"models": [CHAT_MODEL], **_scenario({"items": FILE_ITEMS})},
        tools=[FILE_TOOL],
    ),
    _responses(
        "responses-code-interpreter-gpt-4o-mini",
        {"models": [FILE_MODEL], **_scenario({"items": CODE_ITEMS})},
        model=FILE_MODEL,
        tools=[CODE_TOOL],
    ),
    _responses(
        "responses-error-scripted",
        _scenario({"error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down."}}),
        status=429,
    ),
    _responses(
        "responses-error-scripted-stream",
        _scenario({"error": {"status": 500, "code": "server_error", "message": "Try again."}}),
        status=500,
        stream=True,
    ),
    _responses("responses-error-previous-unknown", status=404, previous_response_id="resp_unknown"),
    _responses("responses-error-invalid", status=400, input=42),
    Case(
        "responses-input-tokens",
        ("/responses/input_tokens", "post"),
        {
            "model": CHAT_MODEL,
            "input": "Tell me a joke.",
            "instructions": "Be brief.",
            "tools": [RESPONSES_TOOL],
        },
    ),
]

_EMBEDDINGS = ("/embeddings", "post")
_MODERATIONS = ("/moderations", "post")
OTHER_CASES = [
    Case("embeddings-float", _EMBEDDINGS, {"model": "text-embedding-3-small", "input": ["a", "b"]}),
    Case(
        "embeddings-base64",
        _EMBEDDINGS,
        {"model": "text-embedding-3-small", "input": "a", "encoding_format": "base64", "dimensions": 8},
        expect="base64-embeddings",
    ),
    Case(
        "embeddings-scripted",
        _EMBEDDINGS,
        {"model": "text-embedding-3-small", "input": "a", "encoding_format": "float"},
        config=_scenario({"embeddings": [[0.5, -0.25, 1.0]]}),
    ),
    Case("moderations-text", _MODERATIONS, {"input": "I want to hug them."}),
    Case(
        "moderations-multimodal",
        _MODERATIONS,
        {
            "model": "omni-moderation-latest",
            "input": [
                {"type": "text", "text": "hello"},
                {"type": "image_url", "image_url": {"url": "https://example.com/image.png"}},
            ],
        },
    ),
    Case(
        "moderations-scripted",
        _MODERATIONS,
        {"input": ["one", "two"]},
        config=_scenario(
            {
                "moderation": {
                    "flagged": True,
                    "categories": {"violence": True},
                    "category_scores": {"violence": 0.97},
                }
            }
        ),
    ),
    Case("models-list", ("/models", "get")),
    Case("models-list-configured", ("/models", "get"), config={"models": [CHAT_MODEL, "o4-mini"]}),
    Case("models-retrieve", ("/models/{model}", "get"), path=f"/models/{CHAT_MODEL}"),
    Case(
        "models-retrieve-unknown",
        ("/models/{model}", "get"),
        config={"models": [CHAT_MODEL]},
        path="/models/gpt-unknown",
        status=404,
    ),
]

_GENERATIONS = ("/images/generations", "post")
_EDITS = ("/images/edits", "post")
IMAGE_CASES = [
    Case(
        "images-generate",
        _GENERATIONS,
        {"model": "gpt-image-1.5", "prompt": "a red fox", "size": "1024x1024"},
    ),
    Case(
        "images-generate-n2-options",
        _GENERATIONS,
        {
            "model": "gpt-image-1",
            "prompt": "a red fox",
            "n": 2,
            "size": "1536x1024",
            "quality": "low",
            "background": "opaque",
            "output_format": "png",
        },
    ),
    Case(
        "images-generate-stream",
        _GENERATIONS,
        {
            "model": "gpt-image-1.5",
            "prompt": "a red fox",
            "size": "1024x1024",
            "stream": True,
            "partial_images": 2,
        },
    ),
    Case(
        "images-generate-url-dall-e-3",
        _GENERATIONS,
        {"model": "dall-e-3", "prompt": "a red fox", "size": "1024x1024", "response_format": "url"},
    ),
    Case(
        "images-generate-dall-e-2",
        _GENERATIONS,
        {"model": "dall-e-2", "prompt": "a red fox", "size": "256x256", "response_format": "b64_json"},
    ),
    Case(
        "images-generate-webp",
        _GENERATIONS,
        {"model": "gpt-image-1.5", "prompt": "a red fox", "output_format": "webp"},
    ),
    Case(
        "images-generate-jpeg",
        _GENERATIONS,
        {"model": "gpt-image-1.5", "prompt": "a red fox", "output_format": "jpeg", "output_compression": 80},
    ),
    Case(
        "images-edit",
        _EDITS,
        form=[("model", "gpt-image-1.5"), ("prompt", "add a hat"), ("image[]", PNG), ("image[]", PNG)],
    ),
    Case(
        "images-edit-stream",
        _EDITS,
        form=[
            ("model", "gpt-image-1.5"),
            ("prompt", "add a hat"),
            ("image", PNG),
            ("stream", "true"),
            ("partial_images", "1"),
        ],
    ),
    Case(
        "images-error-scripted",
        _GENERATIONS,
        {"model": "gpt-image-1.5", "prompt": "x"},
        config=_scenario(
            {"error": {"status": 400, "code": "moderation_blocked", "message": "Rejected."}},
            operation="images",
        ),
        status=400,
    ),
]

_SPEECH = ("/audio/speech", "post")
_TRANSCRIBE = ("/audio/transcriptions", "post")
_TRANSLATE = ("/audio/translations", "post")
_SPEECH_BODY = {"model": "gpt-4o-mini-tts", "input": "The quick brown fox.", "voice": "alloy"}


def _transcribe(
    case_id: str, model: str, response_format: str | None, schema: str | None, *extra: FormField, **kw: Any
) -> Case:
    form: list[FormField] = [("model", model), ("file", UPLOAD), *extra]
    if response_format is not None:
        form.append(("response_format", response_format))
    expect = "text" if response_format in ("text", "srt", "vtt") else "spec"
    return Case(case_id, kw.pop("operation", _TRANSCRIBE), form=form, json_schema=schema, expect=expect, **kw)


AUDIO_CASES = [
    Case("speech-wav", _SPEECH, {**_SPEECH_BODY, "response_format": "wav"}, expect="audio"),
    Case("speech-pcm", _SPEECH, {**_SPEECH_BODY, "response_format": "pcm", "speed": 1.5}, expect="audio"),
    Case("speech-sse", _SPEECH, {**_SPEECH_BODY, "response_format": "wav", "stream_format": "sse"}),
    *[
        Case(
            f"speech-{fmt}",
            _SPEECH,
            {**_SPEECH_BODY, "response_format": fmt},
            expect="audio",
        )
        for fmt in ("mp3", "opus", "aac", "flac")
    ],
    Case("speech-default-format", _SPEECH, dict(_SPEECH_BODY), expect="audio"),
    _transcribe("transcription-json", "gpt-4o-transcribe", None, "CreateTranscriptionResponseJson"),
    _transcribe(
        "transcription-json-logprobs",
        "gpt-4o-transcribe",
        "json",
        "CreateTranscriptionResponseJson",
        ("include[]", "logprobs"),
    ),
    _transcribe("transcription-json-whisper", "whisper-1", "json", "CreateTranscriptionResponseJson"),
    _transcribe(
        "transcription-verbose-json",
        "whisper-1",
        "verbose_json",
        "CreateTranscriptionResponseVerboseJson",
        ("timestamp_granularities[]", "word"),
        ("timestamp_granularities[]", "segment"),
        ("language", "en"),
    ),
    _transcribe(
        "transcription-diarized-json",
        "gpt-4o-transcribe-diarize",
        "diarized_json",
        "CreateTranscriptionResponseDiarizedJson",
        ("chunking_strategy", "auto"),
    ),
    _transcribe("transcription-text", "whisper-1", "text", None),
    _transcribe("transcription-srt", "whisper-1", "srt", None),
    _transcribe("transcription-vtt", "whisper-1", "vtt", None),
    _transcribe("transcription-stream", "gpt-4o-mini-transcribe", None, None, ("stream", "true")),
    _transcribe(
        "transcription-scripted",
        "whisper-1",
        "verbose_json",
        "CreateTranscriptionResponseVerboseJson",
        config=_scenario(
            {"transcript": {"text": "Book a table. At eight.", "duration": 2.0}}, operation="transcription"
        ),
    ),
    _transcribe("translation-json", "whisper-1", None, "CreateTranslationResponseJson", operation=_TRANSLATE),
    _transcribe(
        "translation-verbose-json",
        "whisper-1",
        "verbose_json",
        "CreateTranslationResponseVerboseJson",
        operation=_TRANSLATE,
    ),
    _transcribe("translation-text", "whisper-1", "text", None, operation=_TRANSLATE),
    Case("transcription-error-missing-file", _TRANSCRIBE, form=[("model", "whisper-1")], status=400),
]

CASES: list[Case] = [*CHAT_CASES, *RESPONSES_CASES, *OTHER_CASES, *IMAGE_CASES, *AUDIO_CASES]
