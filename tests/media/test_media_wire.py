"""Image and audio routes over raw HTTP, for what the SDK hides: multipart edge cases (missing file,
wrong field, bad boundary, malformed bodies, oversize uploads), the frames of the streams, the image
URL route and OpenAI's envelope on every error (docs/images.md, docs/audio.md); through the app in process
(the CLI's body limit over a real server is tests/server/api/test_configure.py's)."""

from __future__ import annotations

import json
from typing import Any

from llmts import SessionClient
from llmts.runtime.media.png import generated_png
from llmts.server.app import LlmtsApp
from tests.helpers import RawResponse
from tests.support.envelopes import assert_openai_error
from tests.support.in_process import InProcessServer, send_raw
from tests.support.sse import typed_events

BOUNDARY = "wire-boundary"
PNG = generated_png(16, 16, b"wire")


def _part(name: str, value: bytes, filename: str | None = None, content_type: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
    head = f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n"
    if content_type:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"\r\n" + value + b"\r\n"


def _form(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def _post(
    session: SessionClient,
    path: str,
    body: bytes,
    content_type: str = f"multipart/form-data; boundary={BOUNDARY}",
) -> RawResponse:
    return send_raw(session, "POST", "/openai/v1" + path, body, {"Content-Type": content_type})


def _openai_error(response: RawResponse, status: int) -> dict[str, Any]:
    """OpenAI's envelope (tests/support/envelopes.py), with the request id the SDKs report."""
    error = assert_openai_error(response, status)
    assert response.headers["x-request-id"]
    return error


_AUDIO = _part("file", b"\x00" * 3200, "a.mp3", "audio/mpeg")
_MODEL = _part("model", b"whisper-1")


def test_multipart_edge_cases_are_openai_400s(app_session: SessionClient) -> None:
    cases: list[tuple[str, bytes, str, str | None]] = [
        ("/audio/transcriptions", _form(_MODEL), "missing_required_parameter", "file"),
        (
            "/audio/transcriptions",
            _form(_part("audio", b"\x00" * 10, "a.mp3"), _MODEL),
            "missing_required_parameter",
            "file",
        ),
        ("/audio/transcriptions", _form(_AUDIO), "missing_required_parameter", "model"),
        (
            "/audio/transcriptions",
            _form(_AUDIO, _MODEL, _part("response_format", b"yaml")),
            "invalid_value",
            "response_format",
        ),
        ("/audio/transcriptions", _form(_AUDIO, _MODEL, _part("stream", b"maybe")), "invalid_type", "stream"),
        ("/images/edits", _form(_part("prompt", b"x")), "missing_required_parameter", "image"),
        (
            "/images/edits",
            _form(_part("file", PNG, "a.png", "image/png"), _part("prompt", b"x")),
            "missing_required_parameter",
            "image",
        ),
        (
            "/images/edits",
            _form(_part("image", PNG, "a.png", "image/png")),
            "missing_required_parameter",
            "prompt",
        ),
        (
            "/images/edits",
            _form(_part("image", PNG, "a.png", "image/png"), _part("prompt", b"x"), _part("n", b"two")),
            "invalid_type",
            "n",
        ),
    ]
    for path, body, code, param in cases:
        error = _openai_error(_post(app_session, path, body), 400)
        assert (error["code"], error["param"], error["type"]) == (code, param, "invalid_request_error"), (
            path,
            error,
        )


def test_malformed_multipart_bodies(app_session: SessionClient) -> None:
    good = _form(_AUDIO, _MODEL)
    for body, content_type, fragment in [
        (good, "multipart/form-data", "needs a boundary"),
        (good, "multipart/form-data; boundary=another", "could not be parsed"),
        (good[:-20], f"multipart/form-data; boundary={BOUNDARY}", "could not be parsed"),
        (b"just bytes", f"multipart/form-data; boundary={BOUNDARY}", "could not be parsed"),
        (json.dumps({"model": "whisper-1"}).encode(), "application/json", "expected multipart/form-data"),
    ]:
        error = _openai_error(_post(app_session, "/audio/transcriptions", body, content_type), 400)
        assert fragment in error["message"]
    # A JSON route given a form: OpenAI's invalid_json.
    form = _openai_error(_post(app_session, "/images/generations", _form(_part("prompt", b"x"))), 400)
    assert form["code"] == "invalid_json"
    assert app_session.requests(success=True) == []


def test_oversize_uploads() -> None:
    session = InProcessServer(LlmtsApp(max_body_bytes=65536)).create_session()
    big = _form(_part("file", b"\x00" * 70_000, "a.mp3", "audio/mpeg"), _MODEL)
    response = _post(session, "/audio/transcriptions", big)
    assert _openai_error(response, 413)["code"] == "request_too_large"
    assert response.headers["connection"] == "close"
    # Under the body limit, a text field past the form's bound is a 400.
    many = _form(*(_part(f"f{i}", b"x") for i in range(70)), _AUDIO, _MODEL)
    assert "parts" in _openai_error(_post(session, "/audio/transcriptions", many), 400)["message"]
    # The mask limit (4 MB) applies under strict_requests once the body limit allows it.
    roomy_session = InProcessServer(LlmtsApp(max_body_bytes=6 * 1024 * 1024)).create_session()
    mask = PNG + b"\x00" * (4 * 1024 * 1024)
    body = _form(
        _part("image", PNG, "a.png", "image/png"),
        _part("mask", mask, "m.png", "image/png"),
        _part("prompt", b"x"),
    )
    error = _openai_error(_post(roomy_session, "/images/edits", body), 400)
    assert error["param"] == "mask" and "less than 4MB" in error["message"]


def test_image_stream_frames(app_session: SessionClient) -> None:
    body = {"model": "gpt-image-1.5", "prompt": "a fox", "size": "64x64", "stream": True, "partial_images": 1}
    response = send_raw(app_session, "POST", "/openai/v1/images/generations", body)
    assert response.status == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert [name for name, _ in typed_events(response.body)] == [
        "image_generation.partial_image",
        "image_generation.completed",
    ]


def test_transcript_stream_frames_and_the_text_formats(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {"operation": "transcription", "responses": [{"transcript": {"text": "Hi there."}}] * 2}
            ]
        }
    )
    stream = _post(
        app_session,
        "/audio/transcriptions",
        _form(_AUDIO, _part("model", b"gpt-4o-transcribe"), _part("stream", b"true")),
    )
    assert stream.body == (
        b'data: {"type":"transcript.text.delta","delta":"Hi"}\n\n'
        b'data: {"type":"transcript.text.delta","delta":" there."}\n\n'
        + b'data: {"type":"transcript.text.done","text":"Hi there.","usage":'
        + stream.body.split(b'"usage":', 1)[1]
    )
    text = _post(
        app_session, "/audio/transcriptions", _form(_AUDIO, _MODEL, _part("response_format", b"text"))
    )
    assert (text.body, text.headers["content-type"]) == (b"Hi there.\n", "text/plain; charset=utf-8")


def test_image_url_route(app_session: SessionClient) -> None:
    missing = send_raw(app_session, "GET", "/openai/v1/images/files/img_nope")
    assert _openai_error(missing, 404)["code"] == "image_not_found"
    wrong_method = send_raw(app_session, "POST", "/openai/v1/images/files/img_nope", b"")
    assert wrong_method.status == 405
