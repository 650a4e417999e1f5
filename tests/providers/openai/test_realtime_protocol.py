"""The OpenAI Realtime protocol, sans-IO (llmts/providers/openai/realtime/): client events exactly as the
openai SDK sends them, turns answered with hand-built completions, every server event validated strictly
against the SDK's models (tests/providers/openai/realtime_support.py)."""

from __future__ import annotations

import base64
import warnings
from array import array
from typing import Any

import orjson
import pytest

from llmts.errors import ScriptedError
from llmts.providers.openai.realtime.audio import encode_output, input_transcript
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Usage
from tests.providers.openai.realtime_support import (
    Client,
    completion,
    silence_b64,
    speech_b64,
    tool_call,
)

TEXT = {"type": "realtime", "output_modalities": ["text"]}
MANUAL = {"type": "realtime", "audio": {"input": {"turn_detection": None}}}


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def _text_client(**session: Any) -> Client:
    client = Client.connect()
    assert client.types({"type": "session.update", "session": {**TEXT, **session}}) == ["session.updated"]
    return client


# --- the session ---------------------------------------------------------------------------------------


def test_session_created_is_the_first_event_with_the_service_defaults() -> None:
    client = Client.connect(model="gpt-realtime-mini")
    [created] = client.received
    session = created["session"]
    assert created["type"] == "session.created"
    assert session["type"] == "realtime" and session["object"] == "realtime.session"
    assert session["id"].startswith("sess_") and session["model"] == "gpt-realtime-mini"
    assert session["output_modalities"] == ["audio"]
    assert (session["instructions"], session["tools"], session["tool_choice"]) == ("", [], "auto")
    assert session["max_output_tokens"] == "inf"
    audio = session["audio"]
    assert audio["input"]["format"] == audio["output"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert audio["input"]["turn_detection"] == {
        "type": "server_vad",
        "threshold": 0.5,
        "prefix_padding_ms": 300,
        "silence_duration_ms": 200,
        "idle_timeout_ms": None,
        "create_response": True,
        "interrupt_response": True,
    }
    assert audio["input"]["transcription"] is None and audio["output"]["voice"] == "marin"


def test_session_update_merges_and_answers_with_the_whole_session() -> None:
    client = Client.connect()
    reaction, [updated] = client.send(
        {
            "type": "session.update",
            "event_id": "evt_1",
            "session": {
                "type": "realtime",
                "instructions": "Be brief.",
                "output_modalities": ["text"],
                "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
                "tool_choice": {"type": "function", "name": "get_weather"},
                "audio": {
                    "input": {"turn_detection": {"type": "semantic_vad"}},
                    "output": {"voice": "cedar"},
                },
            },
        }
    )
    session = updated["session"]
    assert updated["type"] == "session.updated" and reaction.turn is None
    assert session["instructions"] == "Be brief." and session["output_modalities"] == ["text"]
    assert session["tools"][0]["name"] == "get_weather"
    assert session["audio"]["input"]["turn_detection"] == {
        "type": "semantic_vad",
        "eagerness": "auto",
        "create_response": True,
        "interrupt_response": True,
    }
    # keys the update left out keep their values
    assert session["audio"]["output"] == {
        "format": {"type": "audio/pcm", "rate": 24000},
        "voice": "cedar",
        "speed": 1.0,
    }
    assert session["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert session["id"] == client.received[0]["session"]["id"]


@pytest.mark.parametrize(
    ("session", "code", "param"),
    [
        ({"instructions": "x"}, "missing_required_parameter", "session.type"),
        ({"type": "transcription"}, "invalid_value", "session.type"),
        ({"type": "realtime", "voice": "alloy"}, "unknown_parameter", "session.voice"),
        ({"type": "realtime", "instructions": 3}, "invalid_type", "session.instructions"),
        (
            {"type": "realtime", "output_modalities": ["text", "audio"]},
            "invalid_value",
            "session.output_modalities",
        ),
        (
            {"type": "realtime", "output_modalities": ["video"]},
            "invalid_value",
            "session.output_modalities[0]",
        ),
        (
            {"type": "realtime", "tools": [{"type": "function"}]},
            "missing_required_parameter",
            "session.tools[0].name",
        ),
        ({"type": "realtime", "tool_choice": "sometimes"}, "invalid_value", "session.tool_choice"),
        ({"type": "realtime", "max_output_tokens": 5000}, "invalid_value", "session.max_output_tokens"),
        (
            {"type": "realtime", "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}},
            "invalid_value",
            "session.audio.input.format.rate",
        ),
        (
            {
                "type": "realtime",
                "audio": {"input": {"turn_detection": {"type": "server_vad", "eagerness": "low"}}},
            },
            "unknown_parameter",
            "session.audio.input.turn_detection.eagerness",
        ),
        (
            {"type": "realtime", "audio": {"output": {"speed": 3}}},
            "invalid_value",
            "session.audio.output.speed",
        ),
        (
            {"type": "realtime", "instructions": "x" * 262_145},
            "string_above_max_length",
            "session.instructions",
        ),
        ("realtime", "invalid_type", "session"),
    ],
)
def test_a_refused_session_update_is_an_error_and_changes_nothing(
    session: Any, code: str, param: str
) -> None:
    client = Client.connect()
    before = client.protocol.settings.wire
    error = client.error({"type": "session.update", "event_id": "evt_9", "session": session})
    assert (error["code"], error["param"], error["event_id"]) == (code, param, "evt_9")
    assert client.protocol.settings.wire == before


# --- a text turn ---------------------------------------------------------------------------------------


def test_a_text_turn_follows_the_service_sequence_and_joins_the_conversation() -> None:
    client = _text_client(instructions="Be brief.", tools=[{"type": "function", "name": "lookup"}])
    client.say("hello")
    turn = client.respond()
    neutral = turn.neutral
    assert (neutral.provider, neutral.operation, neutral.model) == ("openai", "realtime", "gpt-realtime")
    assert [(m.role, m.text) for m in neutral.messages] == [("user", "hello")]
    assert neutral.stream and neutral.system == "Be brief." and neutral.tool_names == ("lookup",)
    assert neutral.preamble.startswith("Be brief.\n") and '"lookup"' in neutral.preamble
    assert not turn.audio and turn.response_id.startswith("resp_")
    assert [e["type"] for e in turn.client_events] == [
        "session.update",
        "conversation.item.create",
        "response.create",
    ]
    assert turn.client_events[1]["role"] == "user" and turn.client_events[1]["text"] == "hello"

    written, events = client.answer(turn, completion("Hi there", chunks=("Hi", " there")))
    assert _types(events) == [
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    kinds = [event.kind for event in written]
    assert kinds.count(FrameKind.CONTENT) == 2 and kinds[3:5] == [FrameKind.CONTENT] * 2
    item_id = events[0]["item"]["id"]
    assert item_id.startswith("item_") and all(
        e.get("response_id", turn.response_id) == turn.response_id for e in events
    )
    assert events[1]["previous_item_id"] == client.protocol.conversation.items()[0].id
    assert [e["delta"] for e in events[3:5]] == ["Hi", " there"] and events[5]["text"] == "Hi there"
    assert events[7]["item"]["content"] == [{"type": "output_text", "text": "Hi there"}]
    done = events[-1]["response"]
    assert done["status"] == "completed" and done["id"] == turn.response_id
    assert done["output"] == [events[7]["item"]] and done["output_modalities"] == ["text"]
    assert done["usage"] == {
        "total_tokens": 18,
        "input_tokens": 11,
        "output_tokens": 7,
        "input_token_details": {
            "text_tokens": 11,
            "audio_tokens": 0,
            "image_tokens": 0,
            "cached_tokens": 3,
            "cached_tokens_details": {"text_tokens": 3, "audio_tokens": 0, "image_tokens": 0},
        },
        "output_token_details": {"text_tokens": 7, "audio_tokens": 0},
    }
    # the answer joined the conversation: the next turn reads it
    client.say("and then?")
    follow = client.respond()
    assert [(m.role, m.text) for m in follow.neutral.messages] == [
        ("user", "hello"),
        ("assistant", "Hi there"),
        ("user", "and then?"),
    ]
    assert [e["type"] for e in follow.client_events] == ["conversation.item.create", "response.create"]


def test_a_length_finish_is_an_incomplete_response() -> None:
    client = _text_client()
    client.say("hello")
    _, events = client.answer(client.respond(), completion("Hi", finish_reason="length"))
    done = events[-1]["response"]
    assert done["status"] == "incomplete"
    assert done["status_details"] == {"type": "incomplete", "reason": "max_output_tokens"}
    assert done["output"][0]["status"] == "incomplete"


def test_one_response_at_a_time() -> None:
    client = _text_client()
    client.say("hello")
    turn = client.respond()
    error = client.error({"type": "response.create", "event_id": "evt_2"})
    assert (
        error["code"] == "conversation_already_has_active_response" and turn.response_id in error["message"]
    )
    assert error["event_id"] == "evt_2"
    client.protocol.answer(turn, completion("Hi"))
    # written but not yet finished: still active
    assert client.error({"type": "response.create"})["code"] == "conversation_already_has_active_response"
    client.protocol.finished(turn)
    client.respond()


# --- audio ---------------------------------------------------------------------------------------------


def test_an_audio_turn_interleaves_generated_speech_with_its_transcript() -> None:
    client = Client.connect()
    client.say("hello")
    turn = client.respond()
    assert turn.audio
    text = "Hello there, this is a spoken answer long enough for several audio deltas"
    written, events = client.answer(turn, completion(text, chunks=()))
    types = _types(events)
    assert types[:3] == [
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
    ]
    assert types[-6:] == [
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    middle = events[3:-6]
    audio = [base64.b64decode(e["delta"]) for e in middle if e["type"] == "response.output_audio.delta"]
    transcript = [e["delta"] for e in middle if e["type"] == "response.output_audio_transcript.delta"]
    assert len(audio) + len(transcript) == len(middle)
    assert (
        b"".join(audio) == speech_pcm(text)
        and all(len(chunk) <= 24_000 for chunk in audio)
        and len(audio) > 2
    )
    assert "".join(transcript) == text and len(transcript) == len(text.split())
    # interleaved, not one kind after the other
    assert _types(middle)[:2] != _types(middle)[-2:] and "response.output_audio.delta" in _types(middle)[:3]
    assert all(w.kind is FrameKind.CONTENT for w in written[3:-6])
    assert events[-6 + 1]["transcript"] == text
    assert events[-3]["item"]["content"] == [{"type": "output_audio", "transcript": text}]
    assert events[2]["part"] == {"type": "audio", "transcript": ""}
    assert events[-4]["part"] == {"type": "audio", "transcript": text}
    usage = events[-1]["response"]["usage"]
    assert usage["output_token_details"] == {"text_tokens": 0, "audio_tokens": 7}
    assert events[-1]["response"]["audio"]["output"] == {
        "format": {"type": "audio/pcm", "rate": 24000},
        "voice": "marin",
    }


def test_scripted_audio_bytes_are_sent_as_they_are() -> None:
    client = Client.connect()
    client.say("hello")
    pcm = bytes(range(256)) * 200  # 51 200 bytes: three deltas
    _, events = client.answer(client.respond(), completion("Scripted words", audio_pcm=pcm))
    audio = [base64.b64decode(e["delta"]) for e in events if e["type"] == "response.output_audio.delta"]
    assert b"".join(audio) == pcm and [len(chunk) for chunk in audio] == [24_000, 24_000, 3_200]


@pytest.mark.parametrize(("kind", "silence"), [("audio/pcmu", 0xFF), ("audio/pcma", 0xD5)])
def test_a_g711_output_format_gets_g711_audio_at_8_khz(kind: str, silence: int) -> None:
    client = Client.connect()
    update = {"type": "realtime", "audio": {"output": {"format": {"type": kind}}}}
    assert client.types({"type": "session.update", "session": update}) == ["session.updated"]
    client.say("hello")
    _, events = client.answer(client.respond(), completion("", audio_pcm=bytes(4800)))
    audio = b"".join(
        base64.b64decode(e["delta"]) for e in events if e["type"] == "response.output_audio.delta"
    )
    assert audio == bytes([silence]) * 800  # 100 ms: every third of 2400 samples
    assert events[-1]["response"]["audio"]["output"]["format"] == {"type": kind}


def test_the_g711_encoders_match_the_standard_librarys() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # gone from Python 3.13
    every_sample = array("h", range(-32768, 32768)).tobytes()
    tripled = array("h", [s for s in range(-32768, 32768) for _ in range(3)]).tobytes()
    assert encode_output(tripled, {"type": "audio/pcmu"}) == audioop.lin2ulaw(every_sample, 2)
    assert encode_output(tripled, {"type": "audio/pcma"}) == audioop.lin2alaw(every_sample, 2)
    assert encode_output(every_sample, {"type": "audio/pcm", "rate": 24000}) == every_sample


# --- function calls ------------------------------------------------------------------------------------


def test_a_function_call_round_trip() -> None:
    client = _text_client(tools=[{"type": "function", "name": "get_weather"}])
    client.say("weather in Paris?")
    call = tool_call("get_weather", '{"city":"Paris"}', "call_abc", ('{"city":', '"Paris"}'))
    written, events = client.answer(client.respond(), completion(tool_calls=(call,)))
    assert _types(events) == [
        "response.output_item.added",
        "conversation.item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    assert [w.kind for w in written[2:4]] == [FrameKind.CONTENT] * 2
    assert events[0]["item"] == {
        "id": events[0]["item"]["id"],
        "object": "realtime.item",
        "type": "function_call",
        "status": "in_progress",
        "name": "get_weather",
        "call_id": "call_abc",
        "arguments": "",
    }
    assert [e["delta"] for e in events[2:4]] == ['{"city":', '"Paris"}'] and events[2][
        "call_id"
    ] == "call_abc"
    assert events[4]["name"] == "get_weather" and events[4]["arguments"] == '{"city":"Paris"}'
    assert events[-1]["response"]["output"][0]["arguments"] == '{"city":"Paris"}'
    # the client answers the call and asks again
    _, [added, _] = client.send(
        {
            "type": "conversation.item.create",
            "item": {"type": "function_call_output", "call_id": "call_abc", "output": '{"temp":21}'},
        }
    )
    assert (
        added["item"]["type"] == "function_call_output"
        and added["previous_item_id"] == events[0]["item"]["id"]
    )
    turn = client.respond()
    messages = turn.neutral.messages
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert (
        messages[1].tool_calls[0].id == "call_abc"
        and messages[1].tool_calls[0].arguments == '{"city":"Paris"}'
    )
    assert (messages[2].tool_call_id, messages[2].text) == ("call_abc", '{"temp":21}')
    assert turn.client_events[0] == {
        "type": "conversation.item.create",
        "item_id": added["item"]["id"],
        "item_type": "function_call_output",
        "call_id": "call_abc",
        "output": '{"temp":21}',
    }


def test_text_then_calls_in_one_answer() -> None:
    client = _text_client()
    client.say("hi")
    calls = (tool_call("a", "{}", "call_1"), tool_call("b", '{"x":1}', "call_2"))
    _, events = client.answer(client.respond(), completion("Let me check.", tool_calls=calls))
    output = events[-1]["response"]["output"]
    assert [item["type"] for item in output] == ["message", "function_call", "function_call"]
    assert [e["output_index"] for e in events if e["type"] == "response.output_item.added"] == [0, 1, 2]
    added = [e for e in events if e["type"] == "conversation.item.added"]
    assert added[1]["previous_item_id"] == output[0]["id"] and added[2]["previous_item_id"] == output[1]["id"]
    client.say("ok")
    turn = client.respond()
    assistant = turn.neutral.messages[1]
    assert assistant.text == "Let me check." and [c.id for c in assistant.tool_calls] == ["call_1", "call_2"]


def test_a_function_call_output_for_an_unknown_call_is_refused() -> None:
    client = _text_client()
    error = client.error(
        {
            "type": "conversation.item.create",
            "item": {"type": "function_call_output", "call_id": "call_x", "output": "1"},
        }
    )
    assert error["code"] == "invalid_tool_call_id" and "call_x" in error["message"]
    assert len(client.protocol.conversation) == 0


def test_a_client_function_call_gets_a_call_id_and_its_output_is_accepted() -> None:
    client = _text_client()
    _, [added, _] = client.send(
        {
            "type": "conversation.item.create",
            "item": {"type": "function_call", "name": "f", "arguments": "{}"},
        }
    )
    call_id = added["item"]["call_id"]
    assert call_id.startswith("call_")
    client.send(
        {
            "type": "conversation.item.create",
            "item": {"type": "function_call_output", "call_id": call_id, "output": "r"},
        }
    )
    assert [m.role for m in client.respond().neutral.messages] == ["assistant", "tool"]


# --- conversation items --------------------------------------------------------------------------------


def test_items_keep_their_ids_and_go_where_previous_item_id_says() -> None:
    client = _text_client()
    client.say("second")
    first_id = client.protocol.conversation.items()[0].id
    _, events = client.send(
        {
            "type": "conversation.item.create",
            "previous_item_id": "root",
            "item": {
                "id": "my_item",
                "type": "message",
                "role": "system",
                "content": [{"type": "input_text", "text": "first"}],
            },
        }
    )
    assert events[0]["item"]["id"] == "my_item" and events[0]["previous_item_id"] is None
    _, events = client.send(
        {
            "type": "conversation.item.create",
            "previous_item_id": "my_item",
            "item": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "middle"}],
            },
        }
    )
    assert events[0]["previous_item_id"] == "my_item" and events[1]["item"]["status"] == "completed"
    assert [m.text for m in client.respond().neutral.messages] == ["first", "middle", "second"]
    assert client.protocol.conversation.items()[-1].id == first_id


def test_retrieve_delete_and_unknown_ids() -> None:
    client = _text_client()
    client.say("hello")
    item_id = client.protocol.conversation.items()[0].id
    _, [retrieved] = client.send({"type": "conversation.item.retrieve", "item_id": item_id})
    assert (
        retrieved["type"] == "conversation.item.retrieved"
        and retrieved["item"]["content"][0]["text"] == "hello"
    )
    _, [deleted] = client.send({"type": "conversation.item.delete", "item_id": item_id})
    assert deleted == {
        "type": "conversation.item.deleted",
        "event_id": deleted["event_id"],
        "item_id": item_id,
    }
    assert len(client.protocol.conversation) == 0
    for kind, code in (
        ("conversation.item.retrieve", "item_retrieve_invalid_item_id"),
        ("conversation.item.delete", "item_delete_invalid_item_id"),
    ):
        error = client.error({"type": kind, "item_id": item_id, "event_id": "evt_x"})
        assert (error["code"], error["param"], error["event_id"]) == (code, "item_id", "evt_x")
    error = client.error(
        {"type": "conversation.item.truncate", "item_id": "nope", "content_index": 0, "audio_end_ms": 0}
    )
    assert error["code"] == "item_truncate_invalid_item_id"
    error = client.error(
        {
            "type": "conversation.item.create",
            "previous_item_id": "nope",
            "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
        }
    )
    assert error["code"] == "item_create_invalid_previous_item_id" and error["param"] == "previous_item_id"
    client.say("again")
    again = client.protocol.conversation.items()[0].wire
    error = client.error({"type": "conversation.item.create", "item": {**again}})
    assert error["code"] == "item_id_already_exists"


def test_truncating_assistant_audio_keeps_what_was_heard() -> None:
    client = Client.connect()
    client.say("hello")
    text = "one two three four"
    _, events = client.answer(client.respond(), completion(text))
    item_id = events[0]["item"]["id"]
    total_ms = len(speech_pcm(text)) // 48
    _, [truncated] = client.send(
        {
            "type": "conversation.item.truncate",
            "item_id": item_id,
            "content_index": 0,
            "audio_end_ms": total_ms // 2,
        }
    )
    assert truncated["type"] == "conversation.item.truncated"
    assert (truncated["item_id"], truncated["content_index"], truncated["audio_end_ms"]) == (
        item_id,
        0,
        total_ms // 2,
    )
    _, [retrieved] = client.send({"type": "conversation.item.retrieve", "item_id": item_id})
    heard = retrieved["item"]["content"][0]["transcript"]
    assert heard in ("one two", "one two three", "one") and text.startswith(heard)
    client.say("sorry?")
    assert client.respond().neutral.messages[1].text == heard
    # past the (now shorter) audio, a text part, a user item: refused
    error = client.error(
        {
            "type": "conversation.item.truncate",
            "item_id": item_id,
            "content_index": 0,
            "audio_end_ms": total_ms,
        }
    )
    assert error["code"] == "invalid_value" and error["param"] == "audio_end_ms"
    user_id = client.protocol.conversation.items()[0].id
    error = client.error(
        {"type": "conversation.item.truncate", "item_id": user_id, "content_index": 0, "audio_end_ms": 0}
    )
    assert error["param"] == "item_id"
    error = client.error(
        {"type": "conversation.item.truncate", "item_id": item_id, "content_index": 1, "audio_end_ms": 0}
    )
    assert error["param"] == "content_index"


def test_a_user_audio_item_is_heard_through_the_transcript_hook() -> None:
    client = _text_client()
    audio = speech_b64(200)
    _, [added, _] = client.send(
        {
            "type": "conversation.item.create",
            "item": {"type": "message", "role": "user", "content": [{"type": "input_audio", "audio": audio}]},
        }
    )
    assert added["item"]["content"] == [
        {"type": "input_audio", "transcript": None}
    ]  # audio bytes are not kept
    client.send(
        {
            "type": "conversation.item.create",
            "item": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_audio", "audio": audio, "transcript": "scripted words"}],
            },
        }
    )
    turn = client.respond()
    assert [m.text for m in turn.neutral.messages] == [input_transcript(9600), "scripted words"]
    assert (
        turn.client_events[1]["audio_parts"] == 1
        and audio[:40] not in orjson.dumps(turn.client_events).decode()
    )


# --- cancellation and interruption ---------------------------------------------------------------------


def test_response_cancel_without_an_active_response_is_an_error() -> None:
    client = _text_client()
    error = client.error({"type": "response.cancel", "event_id": "evt_c"})
    assert error["code"] == "response_cancel_not_active" and error["event_id"] == "evt_c"
    client.say("hi")
    turn = client.respond()
    assert client.error({"type": "response.cancel", "response_id": "resp_other"})["code"] == (
        "response_cancel_not_active"
    )
    reaction, events = client.send({"type": "response.cancel", "response_id": turn.response_id})
    assert events == [] and reaction.cancel == "client_cancelled"


def test_a_cancelled_text_answer_is_closed_where_it_was_cut() -> None:
    client = _text_client()
    client.say("hi")
    turn = client.respond()
    written = client.protocol.answer(
        turn, completion("Hello there friend", chunks=("Hello", " there", " friend"))
    )
    delivered = written[:5]  # up to the second text delta
    client._take([event.data for event in delivered])
    assert client.send({"type": "response.cancel"})[0].cancel == "client_cancelled"
    closing = client.interrupt(turn, delivered, "client_cancelled")
    assert _types(closing) == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    assert closing[0]["text"] == "Hello there" and closing[1]["part"] == {
        "type": "text",
        "text": "Hello there",
    }
    assert closing[2]["item"]["status"] == "incomplete"
    done = closing[-1]["response"]
    assert done["status"] == "cancelled" and done["status_details"]["reason"] == "client_cancelled"
    assert done["output"] == [closing[2]["item"]]
    # the conversation keeps what was delivered, and another response may start
    client.say("go on")
    assert [m.text for m in client.respond().neutral.messages] == ["hi", "Hello there", "go on"]


def test_a_cancel_before_the_answer_was_rendered_ends_the_response_empty() -> None:
    client = _text_client()
    client.say("hi")
    turn = client.respond()
    client.send({"type": "response.cancel"})
    [done] = client.interrupt(turn, [], "client_cancelled")
    assert done["type"] == "response.done" and done["response"]["status"] == "cancelled"
    assert done["response"]["output"] == [] and len(client.protocol.conversation) == 1
    client.respond()


def test_items_never_announced_leave_the_conversation_and_faults_in_between_are_ignored() -> None:
    client = _text_client()
    client.say("hi")
    turn = client.respond()
    calls = (tool_call("a", "{}", "call_1"),)
    written = client.protocol.answer(turn, completion("Checking.", tool_calls=calls))
    delivered = written[:3]
    client._take([event.data for event in delivered])
    from llmts.providers.realtime import ServerEvent

    noise = ServerEvent(b"{not json", FrameKind.OTHER)  # a fault plan's malformed event
    closing = client.interrupt(turn, [delivered[0], noise, *delivered[1:]], "turn_detected")
    assert _types(closing)[-1] == "response.done"
    assert closing[-1]["response"]["status_details"]["reason"] == "turn_detected"
    assert [item["type"] for item in closing[-1]["response"]["output"]] == ["message"]
    assert [item.kind for item in client.protocol.conversation.items()] == ["message", "message"]


def test_nothing_to_close_once_response_done_went() -> None:
    client = _text_client()
    client.say("hi")
    turn = client.respond()
    written = client.protocol.answer(turn, completion("Hi"))
    assert client.protocol.interrupted(turn, written, "client_cancelled") == []
    assert client.protocol.active is None
    # a cancel the driver acts on after it finished the turn closes nothing either
    client.say("again")
    turn = client.respond()
    client.answer(turn, completion("Hi"))
    assert client.protocol.interrupted(turn, [], "client_cancelled") == []
    assert "answer" not in turn.context  # its events were let go


def test_speech_interrupts_an_audio_answer() -> None:
    client = Client.connect()
    client.say("tell me a story")
    turn = client.respond()
    written = client.protocol.answer(turn, completion("Once upon a time there was a test server"))
    delivered = written[:6]
    client._take([event.data for event in delivered])
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert _types(events) == ["input_audio_buffer.speech_started"] and reaction.cancel == "turn_detected"
    closing = client.interrupt(turn, delivered, "turn_detected")
    assert _types(closing) == [
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    assert closing[-1]["response"]["status_details"] == {"type": "cancelled", "reason": "turn_detected"}
    item = client.protocol.conversation.items()[-1]
    sent = sum(
        len(base64.b64decode(e["delta"]))
        for e in client.received
        if e["type"] == "response.output_audio.delta"
    )
    assert item.audio_ms == sent // 48 and item.wire["status"] == "incomplete"
    # the user's speech then ends and is answered
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(200)})
    assert _types(events)[0] == "input_audio_buffer.speech_stopped" and reaction.turn is not None


def test_speech_does_not_interrupt_when_interrupt_response_is_off_or_the_answer_is_out_of_band() -> None:
    client = Client.connect()
    client.say("hi")
    turn = client.respond({"conversation": "none"})
    reaction, _ = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert reaction.cancel is None
    client.protocol.finished(turn)
    off = {
        "type": "realtime",
        "audio": {"input": {"turn_detection": {"type": "server_vad", "interrupt_response": False}}},
    }
    client.send({"type": "session.update", "session": off})
    client.respond()
    client.send({"type": "input_audio_buffer.clear"})
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert _types(events) == ["input_audio_buffer.speech_started"] and reaction.cancel is None
    # speech ending while a response is active starts no second one
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(300)})
    assert "input_audio_buffer.committed" in _types(events) and reaction.turn is None


# --- failures ------------------------------------------------------------------------------------------


def test_a_failed_turn_is_an_error_event_and_a_failed_response() -> None:
    client = _text_client()
    client.say("hi")
    reaction, _ = client.send({"type": "response.create", "event_id": "evt_r"})
    assert reaction.turn is not None
    error = ScriptedError(
        "Rate limit reached",
        code="rate_limit_exceeded",
        http_status=429,
        error_type=None,
        retry_after=1.0,
        should_retry=None,
    )
    failed = client.protocol.failed(reaction.turn, error)
    events = client._take(failed.events)
    assert _types(events) == ["error", "response.done"]
    assert events[0]["error"] == {
        "type": "rate_limit_error",
        "code": "rate_limit_exceeded",
        "message": "Rate limit reached",
        "param": None,
        "event_id": "evt_r",
    }
    response = events[1]["response"]
    assert (
        response["status"] == "failed"
        and response["status_details"]["error"]["code"] == "rate_limit_exceeded"
    )
    client.respond()  # no longer active
    [alone] = client._take(
        client.protocol.failed(
            None,
            ScriptedError(
                "boom",
                code="server_error",
                http_status=500,
                error_type=None,
                retry_after=None,
                should_retry=None,
            ),
        ).events
    )
    assert alone["type"] == "error" and alone["error"]["type"] == "server_error"


# --- out-of-band responses and response overrides ------------------------------------------------------


def test_an_out_of_band_response_reads_the_conversation_and_joins_none() -> None:
    client = Client.connect()
    client.say("hello")
    turn = client.respond(
        {
            "conversation": "none",
            "output_modalities": ["text"],
            "instructions": "Classify the sentiment.",
            "metadata": {"topic": "sentiment"},
            "tools": [],
            "tool_choice": "none",
            "max_output_tokens": 100,
        }
    )
    assert not turn.audio and turn.neutral.system == "Classify the sentiment."
    assert turn.neutral.tool_choice.mode == "none"
    assert [m.text for m in turn.neutral.messages] == ["hello"]
    assert turn.client_events[-1] == {
        "type": "response.create",
        "conversation": "none",
        "instructions": "Classify the sentiment.",
    }
    _, events = client.answer(turn, completion("positive"))
    assert "conversation.item.added" not in _types(events) and "conversation.item.done" not in _types(events)
    done = events[-1]["response"]
    assert done["conversation_id"] is None and done["metadata"] == {"topic": "sentiment"}
    assert done["max_output_tokens"] == 100
    assert len(client.protocol.conversation) == 1


def test_a_response_input_replaces_the_conversation_as_context() -> None:
    client = _text_client()
    client.say("kept")
    kept_id = client.protocol.conversation.items()[0].id
    client.say("ignored")
    turn = client.respond(
        {
            "conversation": "none",
            "input": [
                {"type": "item_reference", "id": kept_id},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "extra"}]},
            ],
        }
    )
    assert [m.text for m in turn.neutral.messages] == ["kept", "extra"]
    assert len(client.protocol.conversation) == 2
    client.protocol.finished(turn)
    error = client.error(
        {"type": "response.create", "response": {"input": [{"type": "item_reference", "id": "gone"}]}}
    )
    assert error["code"] == "item_reference_not_found"


# --- input audio and server VAD ------------------------------------------------------------------------


def test_server_vad_speech_then_silence_commits_and_answers() -> None:
    client = _text_client()
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(500)})
    assert events == [] and reaction.turn is None
    reaction, [started] = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(400)})
    assert started["type"] == "input_audio_buffer.speech_started" and reaction.cancel is None
    assert started["audio_start_ms"] == 200  # 500 ms of silence, of which prefix_padding_ms (300) is kept
    assert client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})[1] == []
    assert client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})[1] == []
    assert client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})[1] == []  # a pause
    assert client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})[1] == []
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})
    assert _types(events) == [
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
        "response.created",
    ]
    item_id = started["item_id"]
    assert events[0]["item_id"] == events[1]["item_id"] == events[2]["item"]["id"] == item_id
    assert events[0]["audio_end_ms"] == 500 + 400 + 100 + 100 + 100 + 100 + 100
    assert events[2]["item"]["role"] == "user" and events[2]["item"]["content"] == [
        {"type": "input_audio", "transcript": None}
    ]
    turn = reaction.turn
    assert turn is not None and events[-1]["response"]["id"] == turn.response_id
    committed = (300 + 400 + 100 + 100 + 100 + 100 + 100) * 48
    assert turn.neutral.messages[-1].text == input_transcript(committed)
    assert turn.client_events[1:] == [
        {"type": "input_audio_buffer.append", "events": 7, "audio_bytes": (500 + 400 + 500) * 48},
        {"type": "input_audio_buffer.committed", "item_id": item_id, "audio_bytes": committed},
    ]


def test_semantic_vad_waits_500_ms_and_create_response_false_commits_only() -> None:
    client = _text_client(
        audio={"input": {"turn_detection": {"type": "semantic_vad", "create_response": False}}}
    )
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert client.send({"type": "input_audio_buffer.append", "audio": silence_b64(400)})[1] == []
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})
    assert _types(events)[:2] == ["input_audio_buffer.speech_stopped", "input_audio_buffer.committed"]
    assert "response.created" not in _types(events) and reaction.turn is None


def test_input_transcription_when_the_session_enables_it() -> None:
    client = _text_client(audio={"input": {"transcription": {"model": "gpt-4o-transcribe"}}})
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    _, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(200)})
    assert _types(events)[4] == "conversation.item.input_audio_transcription.completed"
    transcription = events[4]
    assert transcription["transcript"] == input_transcript(300 * 48)
    assert (
        transcription["usage"] == {"type": "duration", "seconds": 0.3} and transcription["content_index"] == 0
    )
    _, [retrieved] = client.send({"type": "conversation.item.retrieve", "item_id": transcription["item_id"]})
    assert retrieved["item"]["content"][0]["transcript"] == transcription["transcript"]


def test_manual_commit_and_clear() -> None:
    client = _text_client(audio={"input": {"turn_detection": None}})
    error = client.error({"type": "input_audio_buffer.commit", "event_id": "evt_e"})
    assert error["code"] == "input_audio_buffer_commit_empty" and error["event_id"] == "evt_e"
    assert "0.00ms" in error["message"]
    assert client.send({"type": "input_audio_buffer.append", "audio": speech_b64(50)})[1] == []
    assert client.error({"type": "input_audio_buffer.commit"})["code"] == "input_audio_buffer_commit_empty"
    client.send({"type": "input_audio_buffer.append", "audio": silence_b64(50)})  # no VAD: silence is kept
    reaction, events = client.send({"type": "input_audio_buffer.commit"})
    assert _types(events) == [
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    assert reaction.turn is None  # a commit never starts a response
    assert client.protocol.conversation.items()[0].text == input_transcript(4800)
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(200)})
    assert client.types({"type": "input_audio_buffer.clear"}) == ["input_audio_buffer.cleared"]
    assert client.error({"type": "input_audio_buffer.commit"})["code"] == "input_audio_buffer_commit_empty"
    turn = client.respond()
    item_id = client.protocol.conversation.items()[0].id
    # refused events are summarised with their error; appends fold; audio is counted, never kept
    assert turn.client_events[1:] == [
        {
            "type": "input_audio_buffer.commit",
            "event_id": "evt_e",
            "error": "input_audio_buffer_commit_empty",
        },
        {"type": "input_audio_buffer.append", "events": 1, "audio_bytes": 2400},
        {"type": "input_audio_buffer.commit", "error": "input_audio_buffer_commit_empty"},
        {"type": "input_audio_buffer.append", "events": 1, "audio_bytes": 2400},
        {"type": "input_audio_buffer.commit", "item_id": item_id, "audio_bytes": 4800},
        {"type": "input_audio_buffer.append", "events": 1, "audio_bytes": 9600},
        {"type": "input_audio_buffer.clear", "audio_bytes": 9600},
        {"type": "input_audio_buffer.commit", "error": "input_audio_buffer_commit_empty"},
        {"type": "response.create", "conversation": "auto"},
    ]


def test_a_manual_commit_during_vad_speech_ends_the_segment_without_a_response() -> None:
    client = _text_client()
    _, [started] = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(200)})
    reaction, events = client.send({"type": "input_audio_buffer.commit"})
    assert _types(events) == [
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    assert events[1]["item_id"] == started["item_id"] and reaction.turn is None


def test_g711_input_silence_is_its_zero_level() -> None:
    client = _text_client(audio={"input": {"format": {"type": "audio/pcmu"}}})
    assert (
        client.send({"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\xff" * 800).decode()})[
            1
        ]
        == []
    )
    _, [started] = client.send(
        {"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\x10" * 800).decode()}
    )
    assert started["audio_start_ms"] == 0  # 100 ms of mu-law silence, all kept as padding
    _, events = client.send(
        {"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\x7f" * 1600).decode()}
    )
    assert events[0]["type"] == "input_audio_buffer.speech_stopped" and events[0]["audio_end_ms"] == 400


def test_the_turns_of_an_azure_connection_name_its_namespace() -> None:
    client = Client.connect(provider="azure-openai")
    client.say("hi")
    assert client.respond().neutral.provider == "azure-openai"


def test_usage_without_cache_and_a_response_without_text() -> None:
    client = _text_client()
    client.say("hi")
    _, events = client.answer(client.respond(), completion("", usage=Usage(input_tokens=1, output_tokens=0)))
    assert _types(events)[3] == "response.output_text.done" and events[3]["text"] == ""
    assert events[-1]["response"]["usage"]["total_tokens"] == 1
