"""Stream delivery plans and pacing on the media streams (image generation and edits, transcripts,
speech SSE), through the official ``openai`` SDK, with the journal's evidence."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import openai
import pytest

from llmts import SessionClient
from llmts.runtime.media.png import generated_png
from tests.helpers import transport_errors

pytestmark = pytest.mark.sdk

MODEL = "gpt-image-1.5"
FINAL = base64.b64encode(generated_png(16, 16, b"final")).decode()
UPLOAD = ("memo.mp3", b"\x00" * 3200, "audio/mpeg")


def _entry(session: SessionClient, **filters: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(**filters)
        if entries and entries[0]["completed"]:
            return entries[0]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _script(session: SessionClient, operation: str, response: dict[str, Any]) -> None:
    session.configure({"scenarios": [{"operation": operation, "responses": [response]}]})


def test_image_stream_ends_early_after_the_first_partial_image(llmts_session: SessionClient) -> None:
    _script(
        llmts_session,
        "images",
        {"images": [{"b64_json": FINAL}], "stream_delivery": {"mode": "early_clean_end"}},
    )
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    events = list(client.images.generate(model=MODEL, prompt="x", stream=True, partial_images=2))

    assert [e.type for e in events] == ["image_generation.partial_image"]
    assert events[0].b64_json == FINAL  # a scripted image's previews are the image itself
    entry = _entry(llmts_session, operation="images")
    assert (
        entry["transport_outcome"],
        entry["terminal_marker_observed"],
        entry["emitted_content_frames"],
    ) == (
        "early_end",
        False,
        1,
    )
    assert entry["stream_delivery_applied"] is True


def test_image_plan_needs_partial_images_to_reach_its_boundary(llmts_session: SessionClient) -> None:
    _script(
        llmts_session,
        "images",
        {"images": [{"b64_json": FINAL}], "stream_delivery": {"mode": "early_clean_end"}},
    )
    client = llmts_session.openai_client(max_retries=0)
    with pytest.raises(openai.ConflictError) as caught:
        list(client.images.generate(model=MODEL, prompt="x", stream=True))
    assert "after_content_frames 1 is unreachable" in caught.value.message


def test_edit_stream_abort_raises_a_connection_error(llmts_session: SessionClient) -> None:
    _script(
        llmts_session,
        "images",
        {"images": [{"b64_json": FINAL}], "stream_delivery": {"mode": "abort_connection"}},
    )
    client = llmts_session.openai_client(max_retries=0)
    seen = []
    with pytest.raises(transport_errors()):
        for event in client.images.edit(
            model=MODEL,
            image=("a.png", generated_png(8, 8, b"a"), "image/png"),
            prompt="x",
            stream=True,
            partial_images=1,
        ):
            seen.append(event.type)
    assert seen == ["image_edit.partial_image"]
    assert _entry(llmts_session, operation="images")["transport_outcome"] == "aborted"


def test_transcript_stream_malformed_frame(llmts_session: SessionClient) -> None:
    _script(
        llmts_session,
        "transcription",
        {
            "transcript": {"text": "One two three."},
            "stream_delivery": {"mode": "malformed_frame", "after_content_frames": 2},
        },
    )
    client = llmts_session.openai_client(max_retries=0)
    deltas = []
    with pytest.raises(json.JSONDecodeError):
        for event in client.audio.transcriptions.create(model="gpt-4o-transcribe", file=UPLOAD, stream=True):
            deltas.append(event.delta)
    assert deltas == ["One", " two"]


def test_transcript_stream_delay_then_continue(llmts_session: SessionClient) -> None:
    _script(
        llmts_session,
        "transcription",
        {
            "transcript": {"text": "One two."},
            "stream_delivery": {"mode": "delay_then_continue", "delay_ms": 400},
        },
    )
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)
    arrivals = []
    for event in client.audio.transcriptions.create(model="gpt-4o-transcribe", file=UPLOAD, stream=True):
        arrivals.append((event.type, time.monotonic()))
    assert [kind for kind, _ in arrivals] == [
        "transcript.text.delta",
        "transcript.text.delta",
        "transcript.text.done",
    ]
    assert arrivals[1][1] - arrivals[0][1] >= 0.3
    entry = _entry(llmts_session, operation="transcription")
    assert (entry["transport_outcome"], entry["terminal_marker_observed"]) == ("completed", True)


def test_speech_sse_truncated(llmts_session: SessionClient) -> None:
    audio = base64.b64encode(b"\x01\x02" * 20_000).decode()  # 40,000 bytes: three audio deltas
    _script(
        llmts_session,
        "speech",
        {
            "audio": {"format": "pcm", "b64": audio},
            "stream_delivery": {"mode": "truncate_bytes", "cut_bytes": 10},
        },
    )
    client = llmts_session.openai_client(max_retries=0)
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input="x", response_format="pcm", stream_format="sse"
    ) as response:
        body = response.read()
    frames = body.split(b"\n\n")
    assert frames[0].startswith(b'data: {"type":"speech.audio.delta"') and frames[1] == b'data: {"ty'
    entry = _entry(llmts_session, operation="speech")
    assert (entry["terminal_marker_observed"], entry["emitted_content_frames"]) == (False, 1)


def test_paced_image_stream(llmts_session: SessionClient) -> None:
    llmts_session.configure({"pacing": {"ttft_ms": 300}})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)
    started = time.monotonic()
    events = list(
        client.images.generate(model=MODEL, prompt="x", size="64x64", stream=True, partial_images=1)
    )
    assert len(events) == 2 and time.monotonic() - started >= 0.3
    entry = _entry(llmts_session, operation="images")
    assert entry["first_frame_monotonic_seconds"] - entry["started_monotonic_seconds"] >= 0.3
