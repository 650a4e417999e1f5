"""Property-based fuzzing of the multipart routes (OpenAI image edits, transcriptions, translations)
against one real server (docs/contributing.md, "Fuzzing and soak"): generated ``multipart/form-data``
bodies (realistic parts with hostile names, filenames, content types and values; damaged boundaries,
truncated bodies, too many parts) never get a 5xx, always get OpenAI's envelope, and never put a
traceback or a client-written line in the server log. The JSON media routes (image generations, speech)
are fuzzed with the other provider routes (``test_fuzz_providers.py``)."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from llmts.runtime.media.audio import speech_pcm, wav_bytes
from llmts.runtime.media.png import generated_png
from tests.fuzz import seeds
from tests.fuzz.harness import BOUNDED, DEEP, DEEP_TIMEOUT, FuzzServer, check_request, fuzz_server, survive
from tests.fuzz.strategies import headers, session_prefixed

__all__ = ["fuzz_server"]

_ROUTES = seeds.MULTIPART_ROUTES
_SESSIONS = ["default", "nope"]
_PNG = generated_png(8, 8, b"fuzz")
_WAV = wav_bytes(speech_pcm("fuzz me"), "fuzz me")
_NAMES = [
    "image",
    "image[]",
    "mask",
    "prompt",
    "model",
    "file",
    "n",
    "size",
    "stream",
    "partial_images",
    "response_format",
    "timestamp_granularities[]",
    "language",
    "output_format",
    "quality",
    "background",
]
_VALUES = [
    b"gpt-image-1.5",
    b"whisper-1",
    b"gpt-4o-transcribe",
    b"a fox",
    b"",
    b"2",
    b"0",
    b"11",
    b"-1",
    b"true",
    b"false",
    b"maybe",
    b"64x64",
    b"auto",
    b"5000x5000",
    b"1x1",
    b"verbose_json",
    b"srt",
    b"vtt",
    b"text",
    b"diarized_json",
    b"word",
    b"segment",
    b"en",
    b"png",
    b"webp",
    b"\xff\xfe",
    b"\x00" * 40,
    _PNG,
    _WAV,
    b"--boundary",
    b"\r\n\r\n",
]
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_HEADER_TEXT = st.text(
    st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"'), max_size=20
)


# A valid form per route (name, filename or None, content type or None, value): the generator keeps most
# of it so the parsers, strict rules and renderers past the multipart layer get exercised too.
_SEED_FORMS: dict[str, list[tuple[str, str | None, str | None, bytes]]] = {
    "/openai/v1/images/edits": [
        ("image", "a.png", "image/png", _PNG),
        ("prompt", None, None, b"add a hat"),
        ("size", None, None, b"64x64"),
        ("model", None, None, b"gpt-image-1.5"),
    ],
    "/openai/v1/audio/transcriptions": [
        ("file", "a.wav", "audio/wav", _WAV),
        ("model", None, None, b"whisper-1"),
        ("response_format", None, None, b"verbose_json"),
        ("timestamp_granularities[]", None, None, b"word"),
    ],
    "/openai/v1/audio/translations": [
        ("file", "a.mp3", "audio/mpeg", b"\x00" * 3200),
        ("model", None, None, b"whisper-1"),
        ("response_format", None, None, b"srt"),
    ],
}


def _encode_part(
    boundary: str, name: str, filename: str | None, content_type: str | None, value: bytes
) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
    head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
    if content_type is not None:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"\r\n" + value + b"\r\n"


@st.composite
def _part(draw: st.DrawFn, boundary: str) -> bytes:
    name = draw(st.sampled_from(_NAMES) | _HEADER_TEXT)
    filename = None
    if draw(st.booleans()):
        filename = draw(st.sampled_from(["a.png", "a.wav", "a.mp3", "notes.txt", "", "noext"]) | _HEADER_TEXT)
    content_type = None
    if draw(st.booleans()):
        content_type = draw(
            st.sampled_from(["image/png", "audio/wav", "text/plain", "image/webp"]) | _HEADER_TEXT
        )
    value = draw(st.sampled_from(_VALUES) | st.binary(max_size=64) | _TEXT.map(str.encode))
    return _encode_part(boundary, name, filename, content_type, value)


@st.composite
def _seed_parts(draw: st.DrawFn, route: str, boundary: str) -> list[bytes]:
    """The route's valid form with up to two parts replaced, dropped or joined by a hostile one."""
    parts = [_encode_part(boundary, *seed) for seed in _SEED_FORMS[route]]
    for _ in range(draw(st.integers(0, 2))):
        if not parts:
            break
        where = draw(st.integers(0, len(parts) - 1))
        action = draw(st.sampled_from(("replace", "drop", "add")))
        if action == "drop":
            del parts[where]
        elif action == "replace":
            parts[where] = draw(_part(boundary))
        else:
            parts.insert(where, draw(_part(boundary)))
    return parts


@st.composite
def _multipart(draw: st.DrawFn, route: str) -> tuple[dict[str, str], bytes]:
    """Mostly a well-formed body around a mutated valid form; otherwise hostile parts, a damaged body,
    a wrong or missing boundary, or another content type."""
    hostile = draw(st.integers(0, 3)) == 0
    boundary = "fuzz-boundary"
    if hostile:
        boundary = draw(st.sampled_from(["b" * 70, "x", "a b"]) | _HEADER_TEXT.filter(bool))
    if hostile or draw(st.integers(0, 4)) == 0:
        parts = draw(st.lists(_part(boundary), max_size=8))
    else:
        parts = draw(_seed_parts(route, boundary))
    if draw(st.integers(0, 9)) == 0:  # more parts than the form allows
        parts = parts * 20
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    content_type = f"multipart/form-data; boundary={boundary}"
    if hostile:
        damage = draw(st.integers(0, 3))
        if damage == 0 and body:
            body = body[: draw(st.integers(0, len(body) - 1))]  # truncated
        elif damage == 1:
            body = body.replace(f"--{boundary}--".encode(), b"")  # no closing boundary
        content_type = draw(
            st.sampled_from(
                [
                    content_type,
                    f'multipart/form-data; boundary="{boundary}"',
                    "multipart/form-data",
                    f"multipart/form-data; boundary={boundary}x",
                    "application/json",
                ]
            )
            | _HEADER_TEXT
        )
    extra = draw(headers(_SESSIONS, ["sk-right"])) if draw(st.integers(0, 3)) == 0 else {}
    return {**extra, "Content-Type": content_type}, body


@st.composite
def _request(draw: st.DrawFn) -> tuple[str, str, dict[str, str], bytes]:
    route = draw(st.sampled_from(_ROUTES))
    path = draw(session_prefixed(st.just(route), _SESSIONS)) if draw(st.integers(0, 3)) == 0 else route
    request_headers, body = draw(_multipart(route))
    return "POST", path, request_headers, body


# A hostile session id can hide the route (``/sessions/%2F/openai/...`` routes ``//openai/...``): then the
# answer is the control 404, as for any unrouted path (``family_of`` says which envelope applies).
_PREFIXES = {"/openai": "openai"}


def test_multipart_routes_survive_hostile_forms(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _request(), lambda r: check_request(fuzz_server, r, _PREFIXES), BOUNDED, "multipart")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_multipart_routes_survive_hostile_forms_deep(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _request(), lambda r: check_request(fuzz_server, r, _PREFIXES), DEEP, "multipart")
