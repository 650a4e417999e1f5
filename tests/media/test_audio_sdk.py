"""OpenAI audio through the official ``openai`` SDK (strict response validation) against a real server:
transcriptions and translations in every ``response_format``, streamed transcripts, speech as WAV, PCM
and SSE, fixtures against generated answers, scripted errors, strict rules and the journal
(docs/audio.md)."""

from __future__ import annotations

import base64
import io
import json
import time
import wave
from typing import Any

import openai
import pytest

from llmts import SessionClient
from llmts.runtime.media.audio import SAMPLE_RATE
from tests.support.journal import completed_entry

pytestmark = pytest.mark.sdk

TRANSCRIBE = "gpt-4o-transcribe"
WHISPER = "whisper-1"
TTS = "gpt-4o-mini-tts"
UPLOAD = ("memo.mp3", b"\x00\x01" * 16_000, "audio/mpeg")  # 32,000 bytes: 2 s by the size rule
SCRIPTED = {
    "text": "Book a table for two. At eight, please.",
    "language": "english",
    "duration": 4.0,
    "segments": [
        {"start": 0.0, "end": 1.8, "text": "Book a table for two."},
        {"start": 1.8, "end": 4.0, "text": "At eight, please."},
    ],
}

# OpenAI marks translations deprecated; llmts serves them as long as the SDK has them.
_TRANSLATIONS_DEPRECATED = pytest.mark.filterwarnings("ignore:deprecated:DeprecationWarning")


def _script(session: SessionClient, operation: str, *responses: dict[str, Any]) -> None:
    session.configure({"scenarios": [{"operation": operation, "responses": list(responses)}]})


def test_generated_transcript_is_derived_from_the_upload(app_openai: Any) -> None:
    first = app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD)
    assert first.text.startswith("Transcribed audio: 32000 bytes, sha256 ")
    assert app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD).text == first.text
    other = app_openai.audio.transcriptions.create(
        model=TRANSCRIBE, file=("b.mp3", b"\x07" * 999, "audio/mpeg")
    )
    assert other.text != first.text
    assert first.usage is not None and first.usage.type == "tokens"
    whisper = app_openai.audio.transcriptions.create(model=WHISPER, file=UPLOAD)
    assert whisper.usage is not None and whisper.usage.type == "duration" and whisper.usage.seconds == 2.0


def test_speech_round_trips_through_transcription(app_openai: Any) -> None:
    spoken = "Hello there. General Kenobi!"
    audio = app_openai.audio.speech.create(model=TTS, voice="alloy", input=spoken, response_format="wav")
    transcript = app_openai.audio.transcriptions.create(
        model=WHISPER,
        file=("hello.wav", audio.content, "audio/wav"),
        response_format="verbose_json",
        timestamp_granularities=["word", "segment"],
    )
    assert transcript.text == spoken
    assert [s.text for s in transcript.segments] == ["Hello there.", "General Kenobi!"]
    assert [w.word for w in transcript.words] == ["Hello", "there", "General", "Kenobi"]
    with wave.open(io.BytesIO(audio.content)) as reader:
        assert transcript.duration == round(reader.getnframes() / reader.getframerate(), 3)


@pytest.mark.parametrize("fmt", ["json", "text", "srt", "vtt", "verbose_json"])
def test_every_response_format_of_a_scripted_transcript(app_session: SessionClient, fmt: str) -> None:
    _script(app_session, "transcription", {"transcript": SCRIPTED})
    client = app_session.openai_client(_strict_response_validation=True, max_retries=0)

    answer = client.audio.transcriptions.create(model=WHISPER, file=UPLOAD, response_format=fmt)

    if fmt == "json":
        assert answer.text == SCRIPTED["text"]
    elif fmt == "text":
        assert answer == SCRIPTED["text"] + "\n"
    elif fmt == "srt":
        assert answer == (
            "1\n00:00:00,000 --> 00:00:01,800\nBook a table for two.\n\n"
            "2\n00:00:01,800 --> 00:00:04,000\nAt eight, please.\n\n"
        )
    elif fmt == "vtt":
        assert answer == (
            "WEBVTT\n\n00:00:00.000 --> 00:00:01.800\nBook a table for two.\n\n"
            "00:00:01.800 --> 00:00:04.000\nAt eight, please.\n\n"
        )
    else:
        assert (answer.language, answer.duration, answer.text) == ("english", 4.0, SCRIPTED["text"])
        assert [(s.id, s.start, s.end) for s in answer.segments] == [(0, 0.0, 1.8), (1, 1.8, 4.0)]
        assert answer.words is None  # words only with timestamp_granularities=["word"]


def test_words_only_granularity_and_fixture_without_timings(app_session: SessionClient) -> None:
    _script(app_session, "transcription", {"transcript": {"text": "One two three.", "duration": 3.0}})
    client = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    answer = client.audio.transcriptions.create(
        model=WHISPER, file=UPLOAD, response_format="verbose_json", timestamp_granularities=["word"]
    )
    assert answer.segments is None
    assert [(w.word, w.end) for w in answer.words][-1] == ("three", 3.0)


@_TRANSLATIONS_DEPRECATED
def test_translation_in_json_verbose_and_text(app_session: SessionClient, app_openai: Any) -> None:
    generated = app_openai.audio.translations.create(model=WHISPER, file=UPLOAD)
    assert generated.text.startswith("Transcribed audio: 32000 bytes")
    _script(
        app_session,
        "translation",
        {"transcript": {"text": "Good morning.", "duration": 1.0}},
        {"transcript": {"text": "Good night.", "duration": 1.0}},
    )
    verbose = app_openai.audio.translations.create(model=WHISPER, file=UPLOAD, response_format="verbose_json")
    assert (verbose.text, verbose.language, verbose.segments[0].text) == (
        "Good morning.",
        "english",
        "Good morning.",
    )
    assert (
        app_openai.audio.translations.create(model=WHISPER, file=UPLOAD, response_format="text")
        == "Good night.\n"
    )
    # The translation scenario answered translations only: a transcription is still generated.
    assert app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD).text.startswith(
        "Transcribed"
    )


def test_streamed_transcript_sends_deltas_then_done(app_session: SessionClient, app_openai: Any) -> None:
    _script(app_session, "transcription", {"transcript": SCRIPTED})

    events = list(app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD, stream=True))

    deltas = [e.delta for e in events if e.type == "transcript.text.delta"]
    assert "".join(deltas) == SCRIPTED["text"] and deltas[:2] == ["Book", " a"]
    assert events[-1].type == "transcript.text.done" and events[-1].text == SCRIPTED["text"]
    assert events[-1].usage is not None and events[-1].usage.output_tokens > 0
    entry = completed_entry(app_session, operation="transcription")
    assert (entry["streaming"], entry["terminal_marker_observed"], entry["emitted_content_frames"]) == (
        True,
        True,
        len(deltas),
    )


def test_whisper_ignores_stream_as_openai_documents(app_openai: Any, app_session: SessionClient) -> None:
    response = app_openai.audio.transcriptions.with_raw_response.create(
        model=WHISPER, file=UPLOAD, stream=True
    )
    assert response.headers["content-type"] == "application/json"
    assert json.loads(response.http_response.read())["text"].startswith("Transcribed audio")


def test_speech_generated_wav_and_pcm(app_openai: Any) -> None:
    wav = app_openai.audio.speech.create(model=TTS, voice="alloy", input="Hello world", response_format="wav")
    assert wav.response.headers["content-type"] == "audio/wav"
    with wave.open(io.BytesIO(wav.content)) as reader:
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (1, 2, SAMPLE_RATE)
        frames = reader.readframes(reader.getnframes())
    pcm = app_openai.audio.speech.create(model=TTS, voice="alloy", input="Hello world", response_format="pcm")
    assert pcm.content == frames  # the same samples, without the container
    slow = app_openai.audio.speech.create(
        model=TTS, voice="alloy", input="Hello world", response_format="pcm", speed=0.5
    )
    assert len(slow.content) > 1.8 * len(pcm.content)


def test_a_speech_fixture_answers_its_format(app_session: SessionClient, app_openai: Any) -> None:
    # Generated speech in every format: tests/media/test_speech_formats_sdk.py.
    mp3 = b"ID3\x04\x00scripted mp3 bytes"
    _script(app_session, "speech", {"audio": {"format": "mp3", "b64": base64.b64encode(mp3).decode()}})
    with pytest.raises(openai.ConflictError) as mismatch:
        app_openai.audio.speech.create(model=TTS, voice="alloy", input="Hello", response_format="wav")
    assert "scripts mp3 audio but the request asks for wav" in mismatch.value.message
    answer = app_openai.audio.speech.create(model=TTS, voice="alloy", input="Hello")
    assert answer.content == mp3 and answer.response.headers["content-type"] == "audio/mpeg"


def test_speech_sse_stream(app_session: SessionClient, app_openai: Any) -> None:
    with app_openai.audio.speech.with_streaming_response.create(
        model=TTS, voice="alloy", input="Hello world", response_format="pcm", stream_format="sse"
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    pcm = app_openai.audio.speech.create(model=TTS, voice="alloy", input="Hello world", response_format="pcm")
    assert [e["type"] for e in events][-1] == "speech.audio.done"
    assert b"".join(base64.b64decode(e["audio"]) for e in events[:-1]) == pcm.content
    assert events[-1]["usage"]["output_tokens"] > 0
    entry = completed_entry(app_session, operation="speech", streaming=True)
    assert entry["terminal_marker_observed"] is True


def test_scripted_errors_and_delays(app_session: SessionClient, app_openai: Any) -> None:
    _script(
        app_session,
        "transcription",
        {"error": {"status": 500, "code": "server_error", "message": "The server had an error."}},
        {"transcript": {"text": "late"}, "delay_ms": 300},
    )
    with pytest.raises(openai.InternalServerError):
        app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD)
    started = time.monotonic()
    assert app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD).text == "late"
    assert time.monotonic() - started >= 0.3
    failed = app_session.requests(operation="transcription", success=False)
    assert [e["error_code"] for e in failed] == ["server_error"]


def test_strict_rules(app_session: SessionClient, app_openai: Any) -> None:
    def refused(call: Any) -> Any:
        with pytest.raises(openai.BadRequestError) as caught:
            call()
        return caught.value

    wrong_type = refused(
        lambda: app_openai.audio.transcriptions.create(model=WHISPER, file=("notes.txt", b"hi", "text/plain"))
    )
    assert "Invalid file format" in wrong_type.message and wrong_type.param == "file"
    empty = refused(
        lambda: app_openai.audio.transcriptions.create(model=WHISPER, file=("a.wav", b"", "audio/wav"))
    )
    assert empty.code == "audio_too_short"
    srt_4o = refused(
        lambda: app_openai.audio.transcriptions.create(model=TRANSCRIBE, file=UPLOAD, response_format="srt")
    )
    assert srt_4o.code == "unsupported_value" and srt_4o.param == "response_format"
    words_json = refused(
        lambda: app_openai.audio.transcriptions.create(
            model=WHISPER, file=UPLOAD, timestamp_granularities=["word"]
        )
    )
    assert words_json.param == "timestamp_granularities"
    no_input = refused(
        lambda: app_openai.audio.speech.create(model=TTS, voice="alloy", input="", response_format="wav")
    )
    assert no_input.param == "input"
    too_long = refused(
        lambda: app_openai.audio.speech.create(
            model=TTS, voice="alloy", input="x" * 4097, response_format="wav"
        )
    )
    assert "maximum length 4096" in too_long.message
    classic = refused(
        lambda: app_openai.audio.speech.create(
            model="tts-1", voice="alloy", input="x", response_format="wav", stream_format="sse"
        )
    )
    assert classic.param == "stream_format"
    assert app_session.requests(success=True) == []  # each was refused before anything was answered

    app_session.configure({"strict_requests": False})
    assert app_openai.audio.transcriptions.create(model=WHISPER, file=("notes.txt", b"hi", "text/plain")).text
    assert app_openai.audio.speech.create(model=TTS, voice="alloy", input="", response_format="wav").content


def test_builder_helpers_script_media(app_session: SessionClient, app_openai: Any) -> None:
    from llmts import ConfigBuilder
    from llmts.runtime.media.png import generated_png

    png = generated_png(4, 4, b"built")
    builder = ConfigBuilder()
    builder.scenario("pictures").images(png, "https://example.com/a.png", revised_prompt="Two.")
    builder.scenario("heard", operation="transcription").transcript(
        "Hi there.", segments=[(0.0, 1.0, "Hi there.")]
    )
    builder.scenario("said").audio(b"ID3 mp3", "mp3")
    app_session.configure(builder.build())

    images = app_openai.images.generate(model="gpt-image-1.5", prompt="x", n=2)
    assert (
        base64.b64decode(images.data[0].b64_json) == png and images.data[1].url == "https://example.com/a.png"
    )
    assert images.data[0].revised_prompt == "Two."
    srt = app_openai.audio.transcriptions.create(model=WHISPER, file=UPLOAD, response_format="srt")
    assert srt == "1\n00:00:00,000 --> 00:00:01,000\nHi there.\n\n"
    assert app_openai.audio.speech.create(model=TTS, voice="alloy", input="x").content == b"ID3 mp3"


@_TRANSLATIONS_DEPRECATED
def test_language_of_a_generated_transcript(app_openai: Any) -> None:
    german = app_openai.audio.transcriptions.create(
        model=WHISPER, file=UPLOAD, response_format="verbose_json", language="de"
    )
    assert german.language == "german"
    other = app_openai.audio.transcriptions.create(
        model=WHISPER, file=UPLOAD, response_format="verbose_json", language="x" * 100
    )
    assert other.language == "x" * 32
    assert (
        app_openai.audio.translations.create(
            model=WHISPER, file=UPLOAD, response_format="verbose_json"
        ).language
        == "english"
    )


def test_diarized_json(app_session: SessionClient, app_openai: Any) -> None:
    _script(app_session, "transcription", {"transcript": SCRIPTED})
    answer = app_openai.audio.transcriptions.create(
        model="gpt-4o-transcribe-diarize", file=UPLOAD, response_format="diarized_json"
    )
    assert (answer.task, answer.text, answer.duration) == ("transcribe", SCRIPTED["text"], 4.0)
    assert [(s.id, s.speaker, s.text) for s in answer.segments] == [
        ("seg_0", "A", "Book a table for two."),
        ("seg_1", "A", "At eight, please."),
    ]
