"""Scripted input transcripts (``realtime.input_transcripts``; docs/realtime.md): what the user "said" in
each committed audio input, in order, through the official SDKs; past the end, the audio is described."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from google.genai import types

from llmts.client import SessionClient
from tests.realtime.support import check_openai_event, events_until, text_of

_SPEECH_24K = (1000).to_bytes(2, "little", signed=True) * 4800  # 200 ms of sound at 24 kHz
_SILENCE_24K = bytes(2 * 24_000 // 2)  # 500 ms of silence


def _configure(session: SessionClient, transcripts: list[str], *responses: dict[str, Any]) -> None:
    session.configure(
        {
            "realtime": {"input_transcripts": transcripts},
            "scenarios": [{"operation": "realtime", "responses": list(responses)}],
        }
    )


def test_openai_vad_turns_hear_the_scripted_words_in_order(llmts_session: SessionClient) -> None:
    _configure(llmts_session, ["What's the weather in Paris?"], {"text": "Sunny."}, {"text": "Again."})
    client = llmts_session.openai_client(max_retries=0)
    heard: list[str] = []
    with client.realtime.connect(model="gpt-realtime") as connection:
        check_openai_event(connection.recv())
        connection.session.update(
            session={
                "type": "realtime",
                "output_modalities": ["text"],
                "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}},
            }
        )
        for _ in range(2):
            connection.input_audio_buffer.append(audio=base64.b64encode(_SPEECH_24K).decode())
            connection.input_audio_buffer.append(audio=base64.b64encode(_SILENCE_24K).decode())
            events = list(events_until(connection))
            heard += [
                e["transcript"]
                for e in events
                if e["type"] == "conversation.item.input_audio_transcription.completed"
            ]
            assert text_of(events) in ("Sunny.", "Again.")
    assert heard[0] == "What's the weather in Paris?"
    assert heard[1].startswith("[audio: ")  # past the script: the audio described


def test_gemini_live_hears_the_scripted_words(tls_session: SessionClient) -> None:
    _configure(tls_session, ["Book a table for two."], {"text": "Booked."})
    client = tls_session.gemini_client(api_key="g-key")
    speech_16k = (1000).to_bytes(2, "little", signed=True) * 3200  # 200 ms at 16 kHz
    silence_16k = bytes(16_000)  # 500 ms

    async def talk() -> list[types.LiveServerMessage]:
        config = types.LiveConnectConfig(
            response_modalities=[types.Modality.TEXT],
            input_audio_transcription=types.AudioTranscriptionConfig(),
        )
        async with client.aio.live.connect(model="gemini-live-2.5-flash-preview", config=config) as live:
            for chunk in (speech_16k, silence_16k):
                await live.send_realtime_input(audio=types.Blob(data=chunk, mime_type="audio/pcm;rate=16000"))
            return [message async for message in live.receive()]

    messages = asyncio.run(asyncio.wait_for(talk(), 30))
    heard = [
        m.server_content.input_transcription.text
        for m in messages
        if m.server_content and m.server_content.input_transcription
    ]
    assert heard == ["Book a table for two."]
    said = "".join(
        part.text or ""
        for m in messages
        if m.server_content and m.server_content.model_turn
        for part in m.server_content.model_turn.parts or ()
    )
    assert said == "Booked."
