"""Gemini Live, sans-IO: google-genai's own ``aio.live.connect`` session sends every client message and
parses every server message (``live_harness.SdkLoop`` stands in for the socket and the server's driver).

Covered: the setup handshake, ``clientContent`` turns, realtime text and audio (the turn rule of
``llmts/providers/gemini/live/speech.py``), audio answers, the tool round trip, interruption, both key
spellings, ``contextUpdate``, ``goAway`` and the conversation bounds. Refusals and errors:
``test_live_refusals.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
import pytest
from google import genai
from google.genai import live, types

from llmts.providers.gemini.live import conversation
from llmts.providers.gemini.live.protocol import GeminiLiveProtocol
from llmts.providers.gemini.live.render import AUDIO_CHUNK_BYTES, go_away
from llmts.providers.realtime import Reaction
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.neutral import NeutralReasoning, NeutralToolCall, ScriptedOutput
from tests.providers.gemini.live_harness import (
    SdkLoop,
    completion,
    content,
    function_calls,
    opening,
    parts,
    said,
    sdk_parse,
    usage,
)

T = TypeVar("T")
MODEL = "gemini-live-2.5-flash-preview"
PCM16K = "audio/pcm;rate=16000"
WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="w",
            parameters=types.Schema(
                type=types.Type.OBJECT, properties={"city": types.Schema(type=types.Type.STRING)}
            ),
        )
    ]
)


class SpokenOutput(ScriptedOutput):
    """A spoken fixture's output with its scripted PCM bytes (the field the driver's compile adds)."""

    audio_pcm: bytes | None = None


def run(
    monkeypatch: pytest.MonkeyPatch,
    loop: SdkLoop,
    config: Any,
    body: Callable[[Any], Awaitable[T]],
) -> T:
    monkeypatch.setattr(live, "ws_connect", loop.connect)

    async def main() -> T:
        client = genai.Client(api_key="g-key")
        async with client.aio.live.connect(model=MODEL, config=config) as session:
            return await body(session)

    return asyncio.run(main())


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


async def ask(session: Any, text: str) -> list[types.LiveServerMessage]:
    await session.send_client_content(turns=user(text))
    return [message async for message in session.receive()]


def texts(messages: list[types.LiveServerMessage]) -> str:
    return "".join(message.text or "" for message in messages if message.server_content)


# --- handshake and text turns ---------------------------------------------------------------------


def test_setup_answers_setup_complete_and_a_text_turn_streams_its_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = SdkLoop([completion("Hello there, friend.", chunks=("Hello", " there,", " friend."))])
    config = {"response_modalities": ["TEXT"], "system_instruction": "be brief", "tools": [WEATHER]}

    async def body(session: Any) -> tuple[str | None, list[types.LiveServerMessage]]:
        return session.session_id, await ask(session, "hi")

    session_id, messages = run(monkeypatch, loop, config, body)

    assert session_id == "session_1"
    assert "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent" in loop.uri
    assert [message.text for message in messages[:3]] == ["Hello", " there,", " friend."]
    assert content(messages[3]).generation_complete is True
    last = messages[-1]
    assert content(last).turn_complete is True
    counts = usage(last)
    assert (counts.prompt_token_count, counts.response_token_count, counts.total_token_count) == (7, 5, 12)
    text_tokens = types.ModalityTokenCount(modality=types.MediaModality.TEXT, token_count=5)
    assert counts.response_tokens_details == [text_tokens]
    (turn,) = loop.turns
    neutral = turn.neutral
    assert (neutral.provider, neutral.operation, neutral.model) == ("gemini", "realtime", MODEL)
    assert (neutral.system, neutral.tool_names, neutral.stream) == ("be brief", ("get_weather",), True)
    assert neutral.preamble.startswith("be brief\n[") and "get_weather" in neutral.preamble
    assert [(m.role, m.text) for m in neutral.messages] == [("user", "hi")]
    assert turn.audio is False
    assert [event["type"] for event in turn.client_events] == ["setup", "clientContent"]
    assert turn.client_events[1]["turns"] == [{"role": "user", "text": "hi"}]


def test_turn_complete_false_waits_and_an_empty_client_content_makes_the_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = SdkLoop([completion("Both.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_client_content(turns=user("first"), turn_complete=False)
        await session.send_client_content(
            turns=[user("second"), {"role": "model", "parts": [{"text": "ok"}]}]
        )
        return [message async for message in session.receive()]

    # The second call completes the turn (google-genai's default turn_complete=True).
    messages = run(monkeypatch, loop, {"response_modalities": ["TEXT"]}, body)
    assert texts(messages) == "Both."
    (turn,) = loop.turns
    assert [(m.role, m.text) for m in turn.neutral.messages] == [
        ("user", "first"),
        ("user", "second"),
        ("assistant", "ok"),
    ]

    loop = SdkLoop([completion("Done.")])

    async def empty(session: Any) -> list[types.LiveServerMessage]:
        await session.send_client_content(turns=user("only"), turn_complete=False)
        await session.send_client_content()  # {"client_content": {"turnComplete": true}}
        return [message async for message in session.receive()]

    assert texts(run(monkeypatch, loop, {"response_modalities": ["TEXT"]}, empty)) == "Done."
    assert loop.client_frames[-1] == b'{"client_content": {"turnComplete": true}}'


def test_history_calls_and_responses_pair_by_name_when_ids_are_missing() -> None:
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(orjson.dumps({"setup": {"model": f"models/{MODEL}"}}))
    history = [
        user("weather?"),
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp": 3}}}]},
    ]
    reaction = protocol.receive(orjson.dumps({"client_content": {"turns": history, "turnComplete": True}}))
    assert reaction.turn is not None
    _, assistant, tool = reaction.turn.neutral.messages
    (call,) = assistant.tool_calls
    assert (call.name, orjson.loads(call.arguments)) == ("get_weather", {"city": "Oslo"})
    assert (tool.role, tool.tool_call_id, orjson.loads(tool.text)) == ("tool", call.id, {"temp": 3})


def test_both_key_spellings_give_the_same_turns() -> None:
    def session(spell: Callable[[str], str]) -> list[Reaction]:
        protocol = GeminiLiveProtocol(opening())
        setup = {
            "model": f"models/{MODEL}",
            "generationConfig": {"responseModalities": ["TEXT"], "thinkingConfig": {"thinkingBudget": 0}},
            "systemInstruction": {"parts": [{"text": "sys"}]},
            "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
            "realtimeInputConfig": {"automaticActivityDetection": {"silenceDurationMs": 100}},
            "inputAudioTranscription": {},
        }
        messages = [
            {"setup": setup},
            {"clientContent": {"turns": [user("hi")], "turnComplete": True}},
            {"toolResponse": {"functionResponses": [{"id": "c1", "name": "get_weather", "response": {}}]}},
            {"realtimeInput": {"audio": {"data": "AQEBAQ==", "mimeType": PCM16K}}},
            {"realtimeInput": {"audio": {"data": "AAAAAAAAAAA=", "mimeType": "audio/pcm;rate=10"}}},
            {"realtimeInput": {"audioStreamEnd": True}},
            {"realtimeInput": {"text": "typed"}},
        ]
        return [protocol.receive(orjson.dumps(respell(message, spell))) for message in messages]

    camel = session(lambda key: key)
    snake = session(lambda key: "".join("_" + c.lower() if c.isupper() else c for c in key))
    assert [r.close for r in camel] == [None] * 7
    assert [r.events for r in camel] == [r.events for r in snake]
    camel_turns = [r.turn for r in camel if r.turn]
    snake_turns = [r.turn for r in snake if r.turn]
    assert len(camel_turns) == 3
    for mine, theirs in zip(camel_turns, snake_turns, strict=True):
        # (the preamble carries the tools as sent, in the client's spelling, like the REST parse)
        skip = {"preamble"}
        assert mine.neutral.model_dump(exclude=skip) == theirs.neutral.model_dump(exclude=skip)
        assert mine.client_events == theirs.client_events
    assert camel_turns[0].neutral.reasoning_settings == {"thinkingBudget": 0}
    assert camel_turns[1].neutral.latest_user_text().startswith("Transcribed audio: 12 bytes")


def respell(value: Any, spell: Callable[[str], str]) -> Any:
    """Every key of a message in another spelling (the values, function args included, unchanged)."""
    if isinstance(value, dict):
        kept = ("response", "args", "thinkingConfig")  # free-form values: sent as they are
        return {spell(k): v if k in kept else respell(v, spell) for k, v in value.items()}
    if isinstance(value, list):
        return [respell(item, spell) for item in value]
    return value


# --- audio answers --------------------------------------------------------------------------------


def test_audio_answer_is_generated_speech_in_chunks_with_its_transcription(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "Sunny and warm in Paris today, with a light breeze from the west and no rain."
    loop = SdkLoop([completion(text)])
    config = {"response_modalities": ["AUDIO"], "output_audio_transcription": {}}
    messages = run(monkeypatch, loop, config, lambda session: ask(session, "weather?"))

    audio_parts = [
        part.inline_data
        for message in messages
        if message.server_content and message.server_content.model_turn
        for part in parts(message)
        if part.inline_data is not None
    ]
    assert len(audio_parts) > 2
    assert all(part.mime_type == "audio/pcm;rate=24000" for part in audio_parts)
    assert all(len(part.data or b"") <= AUDIO_CHUNK_BYTES for part in audio_parts)
    assert b"".join(part.data or b"" for part in audio_parts) == speech_pcm(text)
    words = said(messages)
    assert "".join(words) == text and len(words) > 1
    assert content(messages[-1]).turn_complete is True
    details = usage(messages[-1]).response_tokens_details
    assert details is not None and details[0].modality == types.MediaModality.AUDIO
    assert loop.turns[0].audio is True
    assert all(len(frame) < 64 * 1024 for frame in loop.server_frames)


def test_scripted_audio_bytes_are_sent_as_scripted_and_text_sessions_get_the_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pcm = bytes(range(256)) * 200  # 51,200 bytes: three chunks
    spoken = SpokenOutput(kind="audio", text="Hi there", audio_pcm=pcm)
    loop = SdkLoop([completion(output=spoken)])
    # Without responseModalities a session answers AUDIO (google-genai documents that default).
    messages = run(
        monkeypatch, loop, {"output_audio_transcription": {}}, lambda session: ask(session, "hello")
    )
    chunks = [message.data for message in messages if message.data]
    assert [len(chunk) for chunk in chunks] == [24_000, 24_000, 3_200]
    assert b"".join(chunks) == pcm
    assert said(messages) == ["Hi ", "there"]

    loop = SdkLoop([completion(output=spoken)])
    text_session = run(monkeypatch, loop, {"response_modalities": ["TEXT"]}, lambda s: ask(s, "hello"))
    assert texts(text_session) == "Hi there"
    assert not any(message.data for message in text_session)


def test_visible_reasoning_is_a_thought_part_and_a_refusal_is_rejected() -> None:
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(
        orjson.dumps({"setup": {"model": MODEL, "generationConfig": {"responseModalities": ["TEXT"]}}})
    )
    turn = protocol.receive(orjson.dumps({"realtimeInput": {"text": "hmm"}})).turn
    assert turn is not None
    output = ScriptedOutput(
        kind="text",
        text="No.",
        chunks=("No.",),
        refusal="I can't help with that.",
        finish_reason="refusal",
        reasoning=NeutralReasoning(text="Thinking it over."),
    )
    parsed = [sdk_parse(event.data) for event in protocol.answer(turn, completion(output=output))]
    thought = parts(parsed[0])[0]
    assert (thought.text, thought.thought) == ("Thinking it over.", True)
    assert parts(parsed[1])[0].text == "I can't help with that."
    assert content(parsed[-1]).turn_complete_reason == types.TurnCompleteReason.RESPONSE_REJECTED


# --- tool calls -----------------------------------------------------------------------------------


def test_tool_call_round_trip_continues_the_same_receive_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    call = NeutralToolCall(id="call_w", name="get_weather", arguments='{"city": "Paris"}')
    loop = SdkLoop([completion(tool_calls=(call,)), completion("It is 20 degrees in Paris.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_client_content(turns=user("weather in Paris?"))
        seen = []
        async for message in session.receive():
            seen.append(message)
            if message.tool_call:
                asked = message.tool_call.function_calls[0]
                response = types.FunctionResponse(id=asked.id, name=asked.name, response={"temp": 20})
                await session.send_tool_response(function_responses=[response])
        return seen

    messages = run(monkeypatch, loop, {"response_modalities": ["TEXT"], "tools": [WEATHER]}, body)
    (asked,) = function_calls(messages[0])
    assert (asked.id, asked.name, asked.args) == ("call_w", "get_weather", {"city": "Paris"})
    assert usage(messages[0]).total_token_count == 12
    assert texts(messages) == "It is 20 degrees in Paris."
    assert content(messages[-1]).turn_complete is True
    _, second = loop.turns
    assert [(m.role, m.tool_call_id) for m in second.neutral.messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "call_w"),
    ]
    assert second.neutral.messages[1].tool_calls == (call,)
    assert orjson.loads(second.neutral.messages[2].text) == {"temp": 20}
    assert second.client_events == [
        {
            "type": "toolResponse",
            "functionResponses": [{"id": "call_w", "name": "get_weather", "response": '{"temp":20}'}],
        }
    ]


def test_parallel_calls_make_the_next_turn_only_when_all_are_answered() -> None:
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(orjson.dumps({"setup": {"model": MODEL}}))
    turn = protocol.receive(orjson.dumps({"realtimeInput": {"text": "two cities"}})).turn
    assert turn is not None
    calls = tuple(NeutralToolCall(id=f"c{n}", name="get_weather", arguments="{}") for n in (1, 2))
    events = protocol.answer(turn, completion(tool_calls=calls))
    assert [call.id for call in function_calls(sdk_parse(events[-1].data))] == ["c1", "c2"]

    def respond(call_id: str) -> Reaction:
        message = {
            "tool_response": {"functionResponses": [{"id": call_id, "name": "get_weather", "response": {}}]}
        }
        return protocol.receive(orjson.dumps(message))

    assert respond("c2").turn is None
    following = respond("c1").turn
    assert following is not None
    assert [m.tool_call_id for m in following.neutral.messages[-2:]] == ["c2", "c1"]
    assert [event["type"] for event in following.client_events] == ["toolResponse", "toolResponse"]


# --- realtime input and the audio turn rule --------------------------------------------------------


def heard(utterance: bytes) -> str:
    return f"Transcribed audio: {len(utterance)} bytes, sha256 {hashlib.sha256(utterance).hexdigest()[:12]}."


def blob(data: bytes) -> types.Blob:
    return types.Blob(data=data, mime_type=PCM16K)


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


# --- context updates, goAway, bounds -------------------------------------------------------------


def test_context_update_changes_the_next_turns_system_and_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = SdkLoop([completion("Expert answer.")])

    async def body(session: Any) -> list[types.LiveServerMessage]:
        await session.send_context_update(
            system_instruction="You are an expert.", tools=[{"function_declarations": [{"name": "lookup"}]}]
        )
        return await ask(session, "explain")

    assert (
        texts(run(monkeypatch, loop, {"response_modalities": ["TEXT"], "system_instruction": "old"}, body))
        == "Expert answer."
    )
    (turn,) = loop.turns
    assert (turn.neutral.system, turn.neutral.tool_names) == ("You are an expert.", ("lookup",))
    assert turn.client_events[1] == {
        "type": "contextUpdate",
        "systemInstruction": "You are an expert.",
        "tools": ["lookup"],
    }


def test_go_away_tells_the_time_left_as_a_duration() -> None:
    assert sdk_parse(go_away(10)).go_away == types.LiveServerGoAway(time_left="10s")
    assert sdk_parse(go_away(0.25)).go_away == types.LiveServerGoAway(time_left="0.250s")
    assert sdk_parse(go_away(-3)).go_away == types.LiveServerGoAway(time_left="0s")
    assert GeminiLiveProtocol(opening()).go_away(1.5) == b'{"goAway":{"timeLeft":"1.500s"}}'


def test_the_conversation_is_bounded_and_slides_with_context_window_compression(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(conversation, "MAX_MESSAGES", 4)
    five = {"client_content": {"turns": [user(str(n)) for n in range(5)], "turnComplete": True}}

    protocol = GeminiLiveProtocol(opening())
    protocol.receive(orjson.dumps({"setup": {"model": MODEL}}))
    code, reason = protocol.receive(orjson.dumps(five)).close or (0, "")
    assert code == 1007 and "limit (4 messages" in reason

    sliding = GeminiLiveProtocol(opening())
    sliding.receive(
        orjson.dumps({"setup": {"model": MODEL, "contextWindowCompression": {"slidingWindow": {}}}})
    )
    turn = sliding.receive(orjson.dumps(five)).turn
    assert turn is not None
    assert [m.text for m in turn.neutral.messages] == ["1", "2", "3", "4"]


def encode(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()
