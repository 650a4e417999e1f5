"""Gemini Live, sans-IO: google-genai's own ``aio.live.connect`` session sends every client message and
parses every server message (``live_harness.SdkLoop`` stands in for the socket and the server's driver).

Covered here: the setup handshake, ``clientContent`` turns, both key spellings, audio answers, the tool
round trip, ``contextUpdate``, ``goAway`` and the conversation bounds. Realtime input and interruptions:
``test_live_audio.py``; refusals and errors: ``test_live_refusals.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from google.genai import types

from llmts.providers.gemini.live import conversation
from llmts.providers.gemini.live.protocol import GeminiLiveProtocol
from llmts.providers.gemini.live.render import AUDIO_CHUNK_BYTES, go_away
from llmts.providers.realtime import Reaction
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.neutral import NeutralReasoning, NeutralToolCall, ScriptedOutput
from tests.providers.gemini.live_harness import (
    MODEL,
    PCM16K,
    SdkLoop,
    ask,
    completion,
    content,
    function_calls,
    opening,
    parts,
    run,
    said,
    sdk_parse,
    texts,
    usage,
    user,
)

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
