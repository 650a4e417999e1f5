"""Gemini Live, sans-IO: realtime input (text, video, and audio by the turn rule of
``llmts/providers/gemini/live/speech.py``) and interruptions, with google-genai's own session sending and
parsing every message (``live_harness.SdkLoop``).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from google.genai import types

from llmts.providers.gemini.live.protocol import GeminiLiveProtocol
from llmts.providers.realtime import Reaction
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.neutral import NeutralToolCall
from tests.providers.gemini.live_harness import (
    MODEL,
    PCM16K,
    SdkLoop,
    blob,
    completion,
    content,
    encode,
    heard,
    opening,
    run,
    said,
    sdk_parse,
    texts,
    user,
)

# --- realtime input and the audio turn rule --------------------------------------------------------


def test_realtime_audio_makes_a_turn_after_half_a_second_of_silence(monkeypatch: pytest.MonkeyPatch) -> None:
    speech = speech_pcm("what is the weather in Paris")
    loop = SdkLoop([completion("Sunny.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_realtime_input(audio=blob(bytes(3_200)))  # silence before speech: no turn's
        for at in range(0, len(speech), 3_200):
            await session.send_realtime_input(audio=blob(speech[at : at + 3_200]))
        assert loop.turns == []  # the gaps between words are 50 ms: speech goes on
        await session.send_realtime_input(audio=blob(bytes(16_000)))  # 500 ms at 16 kHz ends it
        return [message async for message in session.receive()]

    config = {"response_modalities": ["TEXT"], "input_audio_transcription": {}}
    messages = run(monkeypatch, loop, config, body)
    expected = heard(speech + bytes(16_000))
    assert said(messages, "input") == [expected]
    assert texts(messages) == "Sunny."
    (turn,) = loop.turns
    assert turn.neutral.latest_user_text() == expected
    audio_event = turn.client_events[1]
    assert audio_event == {
        "type": "realtimeInput.audio",
        "bytes": 3_200 + len(speech) + 16_000,
        "chunks": 2 + -(-len(speech) // 3_200),
        "mimeType": PCM16K,
    }
    assert b"AAAA" not in orjson.dumps(turn.client_events)


def test_audio_stream_end_or_a_configured_silence_ends_speech_and_silence_alone_makes_no_turn() -> None:
    def fresh(silence_ms: int | None = None) -> GeminiLiveProtocol:
        protocol = GeminiLiveProtocol(opening())
        detection = {} if silence_ms is None else {"silence_duration_ms": silence_ms}
        setup = {"model": MODEL, "realtimeInputConfig": {"automatic_activity_detection": detection}}
        protocol.receive(orjson.dumps({"setup": setup}))
        return protocol

    def audio(protocol: GeminiLiveProtocol, data: bytes) -> Reaction:
        return protocol.receive(
            orjson.dumps({"realtime_input": {"audio": {"data": encode(data), "mime_type": PCM16K}}})
        )

    protocol = fresh()
    assert audio(protocol, bytes(64_000)).turn is None  # silence only
    assert protocol.receive(b'{"realtime_input": {"audioStreamEnd": true}}').turn is None
    assert audio(protocol, b"\x01\x02" * 100 + bytes(15_998)).turn is None  # 15,998 zero bytes < 500 ms
    ended = protocol.receive(b'{"realtime_input": {"audioStreamEnd": true}}').turn
    assert ended is not None
    assert ended.neutral.latest_user_text() == heard(b"\x01\x02" * 100 + bytes(15_998))

    protocol = fresh(silence_ms=100)
    turn = audio(protocol, b"\x05\x00" * 10 + bytes(3_200)).turn  # 100 ms at 16 kHz
    assert turn is not None and turn.neutral.latest_user_text() == heard(b"\x05\x00" * 10 + bytes(3_200))


def test_manual_activity_detection_takes_the_audio_between_activity_start_and_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = SdkLoop([completion("Heard you.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_realtime_input(audio=blob(b"\x09" * 640))  # outside any activity: ignored
        await session.send_realtime_input(activity_start=types.ActivityStart())
        await session.send_realtime_input(audio=blob(b"\x07" * 640))
        await session.send_realtime_input(audio=blob(bytes(64_000)))  # silence does not end manual activity
        assert loop.turns == []
        await session.send_realtime_input(activity_end=types.ActivityEnd())
        return [message async for message in session.receive()]

    config = {
        "response_modalities": ["TEXT"],
        "realtime_input_config": {"automatic_activity_detection": {"disabled": True}},
    }
    assert texts(run(monkeypatch, loop, config, body)) == "Heard you."
    (turn,) = loop.turns
    assert turn.neutral.latest_user_text() == heard(b"\x07" * 640 + bytes(64_000))
    kinds = [event["type"] for event in turn.client_events]
    assert kinds == [
        "setup",
        "realtimeInput.audio",
        "realtimeInput.activityStart",
        "realtimeInput.audio",
        "realtimeInput.activityEnd",
    ]


def test_realtime_text_is_a_user_turn_and_video_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = SdkLoop([completion("Nice picture.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_realtime_input(video=types.Blob(data=b"\xff\xd8\xff" * 10, mime_type="image/jpeg"))
        await session.send_realtime_input(text="what do you see?")
        return [message async for message in session.receive()]

    assert texts(run(monkeypatch, loop, {"response_modalities": ["TEXT"]}, body)) == "Nice picture."
    (turn,) = loop.turns
    assert turn.neutral.latest_user_text() == "what do you see?"
    assert turn.client_events[1:] == [
        {"type": "realtimeInput.video", "bytes": 30, "chunks": 1, "mimeType": "image/jpeg"},
        {"type": "realtimeInput.text", "text": "what do you see?"},
    ]


# --- interruption ---------------------------------------------------------------------------------


def test_speech_during_an_answer_interrupts_it_and_the_conversation_keeps_what_was_heard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    loop = SdkLoop([completion(text), completion("Okay, stopping.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_client_content(turns=user("count"))
        seen = []
        async for message in session.receive():
            seen.append(message)
            if len(seen) == 2:  # the first audio chunk and its transcription
                await session.send_realtime_input(audio=blob(speech_pcm("stop")))
                await session.send_realtime_input(audio_stream_end=True)
        return seen

    config = {"response_modalities": ["AUDIO"], "output_audio_transcription": {}}
    messages = run(monkeypatch, loop, config, body)
    first_piece = said(messages[1:2])[0]
    assert content(messages[2]).interrupted is True
    assert sum(1 for message in messages[:3] if message.data) == 1
    assert "".join(said(messages[3:])) == "Okay, stopping."
    assert content(messages[-1]).turn_complete is True
    _, second = loop.turns
    assert [(m.role, m.text) for m in second.neutral.messages] == [
        ("user", "count"),
        ("assistant", first_piece),
        ("user", heard(speech_pcm("stop"))),
    ]
    assert first_piece and text.startswith(first_piece) and first_piece != text


def test_client_content_during_an_answer_interrupts_it_and_its_turn_sees_the_cut_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = SdkLoop([completion("one two three", chunks=("one", " two", " three")), completion("Stopped.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_client_content(turns=user("count"))
        seen = []
        async for message in session.receive():
            seen.append(message)
            if len(seen) == 1:
                await session.send_client_content(turns=user("stop"))  # one message: cancel and a turn
        return seen

    messages = run(monkeypatch, loop, {"response_modalities": ["TEXT"]}, body)
    assert messages[0].text == "one"
    assert content(messages[1]).interrupted is True
    assert texts(messages[2:]) == "Stopped."
    _, second = loop.turns
    assert [(m.role, m.text) for m in second.neutral.messages] == [
        ("user", "count"),
        ("assistant", "one"),
        ("user", "stop"),
    ]


@pytest.mark.parametrize(
    "moving_on",
    [
        {"realtime_input": {"audio": {"data": "AQEBAQEB"}}},  # speech starts
        {"client_content": {"turns": [user("never mind")], "turnComplete": True}},  # a new user turn
    ],
)
def test_moving_on_while_a_tool_call_waits_cancels_it_and_a_late_response_makes_no_turn(
    moving_on: dict[str, Any],
) -> None:
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(orjson.dumps({"setup": {"model": MODEL}}))
    turn = protocol.receive(b'{"realtime_input": {"text": "book it"}}').turn
    assert turn is not None
    protocol.answer(turn, completion(tool_calls=(NeutralToolCall(id="c9", name="book", arguments="{}"),)))
    reaction = protocol.receive(orjson.dumps(moving_on))
    assert reaction.cancel == "turn_detected"
    cancelled = types.LiveServerToolCallCancellation(ids=["c9"])
    assert [sdk_parse(event).tool_call_cancellation for event in reaction.events] == [cancelled]
    late = protocol.receive(
        b'{"tool_response": {"functionResponses": [{"id": "c9", "name": "book", "response": {}}]}}'
    )
    assert late.turn is None


def test_interrupted_ends_only_an_unfinished_turn_and_no_interruption_is_honoured() -> None:
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(orjson.dumps({"setup": {"model": MODEL}}))
    turn = protocol.receive(b'{"realtime_input": {"text": "hi"}}').turn
    assert turn is not None
    assert protocol.interrupted(turn, [], "turn_detected") == [b'{"serverContent":{"interrupted":true}}']
    assert content(sdk_parse(protocol.interrupted(turn, [], "turn_detected")[0])).interrupted is True
    events = protocol.answer(turn, completion("Hello."))
    assert protocol.interrupted(turn, events, "turn_detected") == []

    calm = GeminiLiveProtocol(opening())
    setup = {"model": MODEL, "realtimeInputConfig": {"activityHandling": "NO_INTERRUPTION"}}
    calm.receive(orjson.dumps({"setup": setup}))
    calm.receive(b'{"realtime_input": {"text": "hi"}}')
    assert (
        calm.receive(orjson.dumps({"realtime_input": {"audio": {"data": encode(b"\x01" * 32)}}})).cancel
        is None
    )
