"""Generated speech in every ``response_format`` OpenAI answers, through the official ``openai`` SDK (strict
response validation) against a real server, decoded by a decoder that shares no code with llmts's encoder
(tests/media/media_check.py): whole files, ``stream_format: sse`` deltas joined, and the transcription
round trip of the formats that carry llmts's speech tag (docs/audio.md)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from llmts import SessionClient
from llmts.runtime.media.audio import SAMPLE_RATE, speech_pcm
from tests.media.media_check import decode_audio
from tests.support.journal import completed_entry

pytestmark = pytest.mark.sdk

TTS = "gpt-4o-mini-tts"
SPOKEN = "Your table for two is booked at eight. Grüße! 😀"
MEDIA_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}
COMPRESSED = ["mp3", "opus", "aac", "flac"]
# How far a decoder's duration may stray from the samples llmts encoded: AAC's headers count the
# encoder's priming and last-frame padding (1,024 samples each); MP3 and Opus decoders drop theirs.
_TOLERANCE = {"aac": 0.1}


def _seconds(text: str) -> float:
    """How long llmts speaks ``text``: its 16-bit mono samples."""
    return len(speech_pcm(text)) / (2 * SAMPLE_RATE)


def _speech(client: Any, fmt: str | None, text: str = SPOKEN) -> Any:
    if fmt is None:
        return client.audio.speech.create(model=TTS, voice="alloy", input=text)
    return client.audio.speech.create(model=TTS, voice="alloy", input=text, response_format=fmt)


def _check_audio(fmt: str, data: bytes, text: str = SPOKEN) -> None:
    expected = _seconds(text)
    if fmt == "pcm":
        assert len(data) == round(expected * SAMPLE_RATE) * 2
        return
    decoded = decode_audio(fmt, data)
    assert (decoded.sample_rate, decoded.channels) == (SAMPLE_RATE, 1), decoded
    assert decoded.seconds == pytest.approx(expected, abs=_TOLERANCE.get(fmt, 0.03)), decoded


@pytest.mark.parametrize("fmt", [*COMPRESSED, "wav", "pcm"])
def test_generated_speech_decodes_in_every_format(app_openai: Any, fmt: str) -> None:
    answer = _speech(app_openai, fmt)

    assert answer.response.headers["content-type"] == MEDIA_TYPES[fmt]
    _check_audio(fmt, answer.content)
    assert _speech(app_openai, fmt).content == answer.content  # the same input, the same bytes


def test_default_speech_is_a_real_mp3(app_openai: Any) -> None:
    """The API's default format answers without a fixture (it was a 400 ``unsupported_response_format``)."""
    answer = _speech(app_openai, None)

    assert answer.response.headers["content-type"] == "audio/mpeg"
    _check_audio("mp3", answer.content)


@pytest.mark.parametrize(("fmt", "filename"), [("mp3", "a.mp3"), ("opus", "a.ogg"), ("flac", "a.flac")])
def test_tagged_speech_round_trips_through_transcription(app_openai: Any, fmt: str, filename: str) -> None:
    audio = _speech(app_openai, fmt)

    heard = app_openai.audio.transcriptions.create(
        model="whisper-1", file=(filename, audio.content, MEDIA_TYPES[fmt]), response_format="verbose_json"
    )
    assert heard.text == SPOKEN
    assert heard.duration == round(_seconds(SPOKEN), 3)


@pytest.mark.parametrize("fmt", COMPRESSED)
def test_streamed_speech_deltas_join_into_the_same_file(
    app_session: SessionClient, app_openai: Any, fmt: str
) -> None:
    text = " ".join(f"Sentence {n} of the announcement." for n in range(12))
    with app_openai.audio.speech.with_streaming_response.create(
        model=TTS, voice="alloy", input=text, response_format=fmt, stream_format="sse"
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]

    deltas = [event for event in events if event["type"] == "speech.audio.delta"]
    assert len(deltas) >= 2 and events[-1]["type"] == "speech.audio.done"
    joined = b"".join(base64.b64decode(event["audio"]) for event in deltas)
    _check_audio(fmt, joined, text)
    assert joined == _speech(app_openai, fmt, text).content
    entry = completed_entry(app_session, operation="speech", streaming=True)
    assert (entry["emitted_content_frames"], entry["terminal_marker_observed"]) == (len(deltas), True)
