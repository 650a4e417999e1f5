"""Gemini Live audio input through google-genai's ``client.aio.live.connect`` against a real gunicorn+gevent
server over TLS (docs/realtime.md, "Gemini Live"): ``send_realtime_input(audio=...)`` speech ends after
500 ms of zero bytes or at ``audio_stream_end``; the utterance becomes the user's turn, and its
``inputTranscription`` when the setup asks for one. Each message is parsed by the SDK itself."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from google.genai import types

from llmts.client import SessionClient
from llmts.runtime.media.audio import speech_pcm

MODEL = "gemini-live-2.5-flash-preview"
MIME = "audio/pcm;rate=16000"
# Non-zero PCM16 samples (the tones of generated speech; their rate does not matter to the rule) and
# 16 kHz PCM16 silence: 32 bytes a millisecond.
SPEECH = speech_pcm("what is the weather")
SILENCE_250MS = bytes(32 * 250)


def _run(test: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 30))


def _heard(audio: bytes) -> str:
    """What llmts hears in an utterance (docs/realtime.md): its size and the start of its SHA-256."""
    return f"Transcribed audio: {len(audio)} bytes, sha256 {hashlib.sha256(audio).hexdigest()[:12]}."


def _text(messages: list[types.LiveServerMessage]) -> str:
    return "".join(
        part.text or ""
        for message in messages
        if message.server_content and message.server_content.model_turn
        for part in message.server_content.model_turn.parts or ()
    )


def _transcriptions(messages: list[types.LiveServerMessage]) -> list[str]:
    return [
        m.server_content.input_transcription.text or ""
        for m in messages
        if m.server_content and m.server_content.input_transcription
    ]


async def _speak(live: Any, *chunks: bytes) -> None:
    for chunk in chunks:
        await live.send_realtime_input(audio=types.Blob(data=chunk, mime_type=MIME))


def test_half_a_second_of_zeros_ends_speech_and_the_utterance_is_transcribed(
    tls_session: SessionClient,
) -> None:
    # No scenario: the session echoes the latest user text, which is what it heard.
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> list[types.LiveServerMessage]:
        config = types.LiveConnectConfig(
            response_modalities=[types.Modality.TEXT],
            input_audio_transcription=types.AudioTranscriptionConfig(),
        )
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            # Silence before speech belongs to no turn; trailing zeros add up across chunks.
            await _speak(live, SILENCE_250MS, SPEECH, SILENCE_250MS, SILENCE_250MS)
            return [message async for message in live.receive()]

    messages = _run(talk)
    utterance = SPEECH + SILENCE_250MS + SILENCE_250MS
    assert _transcriptions(messages) == [_heard(utterance)]
    first = messages[0].server_content
    assert first is not None and first.input_transcription is not None  # before the model's answer
    assert _text(messages) == _heard(utterance)
    assert messages[-1].server_content is not None and messages[-1].server_content.turn_complete
    [entry] = tls_session.requests(operation="realtime")
    [audio] = [e for e in entry["client_events"] if e["type"] == "realtimeInput.audio"]
    assert audio == {
        "type": "realtimeInput.audio",
        "bytes": len(SILENCE_250MS) * 3 + len(SPEECH),
        "chunks": 4,
        "mimeType": MIME,
    }


def test_audio_stream_end_ends_speech_without_silence(tls_session: SessionClient) -> None:
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> list[types.LiveServerMessage]:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            await _speak(live, SPEECH, SILENCE_250MS)  # 250 ms of zeros: not yet the end
            await live.send_realtime_input(audio_stream_end=True)
            return [message async for message in live.receive()]

    messages = _run(talk)
    # The echo of what was heard: the utterance ended with the audio sent before the stream's end.
    assert _text(messages) == _heard(SPEECH + SILENCE_250MS)
    assert _transcriptions(messages) == []  # the setup asked for none
    [entry] = tls_session.requests(operation="realtime")
    kinds = [e["type"] for e in entry["client_events"]]
    assert kinds[-2:] == ["realtimeInput.audio", "realtimeInput.audioStreamEnd"]
