"""The OpenAI Realtime protocol, sans-IO (llmts/providers/openai/realtime/): the session and the life of a
response - session.created and session.update, a text turn, failed turns, out-of-band responses and
response overrides. Client events are sent exactly as the openai SDK sends them, turns are answered
with hand-built completions, and every server event is validated strictly against the SDK's models
(tests/providers/openai/realtime_support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.errors import ScriptedError
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Usage
from tests.providers.openai.realtime_support import (
    Client,
    completion,
    event_types,
    text_client,
)

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
    client = text_client(instructions="Be brief.", tools=[{"type": "function", "name": "lookup"}])
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
    assert event_types(events) == [
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
    client = text_client()
    client.say("hello")
    _, events = client.answer(client.respond(), completion("Hi", finish_reason="length"))
    done = events[-1]["response"]
    assert done["status"] == "incomplete"
    assert done["status_details"] == {"type": "incomplete", "reason": "max_output_tokens"}
    assert done["output"][0]["status"] == "incomplete"


def test_one_response_at_a_time() -> None:
    client = text_client()
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


# --- failures ------------------------------------------------------------------------------------------


def test_a_failed_turn_is_an_error_event_and_a_failed_response() -> None:
    client = text_client()
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
    assert event_types(events) == ["error", "response.done"]
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
    assert "conversation.item.added" not in event_types(
        events
    ) and "conversation.item.done" not in event_types(events)
    done = events[-1]["response"]
    assert done["conversation_id"] is None and done["metadata"] == {"topic": "sentiment"}
    assert done["max_output_tokens"] == 100
    assert len(client.protocol.conversation) == 1


def test_a_response_input_replaces_the_conversation_as_context() -> None:
    client = text_client()
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


def test_the_turns_of_an_azure_connection_name_its_namespace() -> None:
    client = Client.connect(provider="azure-openai")
    client.say("hi")
    assert client.respond().neutral.provider == "azure-openai"


def test_usage_without_cache_and_a_response_without_text() -> None:
    client = text_client()
    client.say("hi")
    _, events = client.answer(client.respond(), completion("", usage=Usage(input_tokens=1, output_tokens=0)))
    assert event_types(events)[3] == "response.output_text.done" and events[3]["text"] == ""
    assert events[-1]["response"]["usage"]["total_tokens"] == 1
