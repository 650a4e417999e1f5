"""The OpenAI Realtime protocol, sans-IO: the conversation - function calls and their outputs, and
conversation items (create, retrieve, delete, truncate, user audio items). Server events are validated
strictly against the SDK's models (tests/providers/openai/realtime_support.py)."""

from __future__ import annotations

import orjson

from llmts.providers.openai.realtime.audio import input_transcript
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.faults import FrameKind
from tests.providers.openai.realtime_support import (
    Client,
    completion,
    event_types,
    speech_b64,
    text_client,
    tool_call,
)

# --- function calls ------------------------------------------------------------------------------------


def test_a_function_call_round_trip() -> None:
    client = text_client(tools=[{"type": "function", "name": "get_weather"}])
    client.say("weather in Paris?")
    call = tool_call("get_weather", '{"city":"Paris"}', "call_abc", ('{"city":', '"Paris"}'))
    written, events = client.answer(client.respond(), completion(tool_calls=(call,)))
    assert event_types(events) == [
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
    client = text_client()
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
    client = text_client()
    error = client.error(
        {
            "type": "conversation.item.create",
            "item": {"type": "function_call_output", "call_id": "call_x", "output": "1"},
        }
    )
    assert error["code"] == "invalid_tool_call_id" and "call_x" in error["message"]
    assert len(client.protocol.conversation) == 0


def test_a_client_function_call_gets_a_call_id_and_its_output_is_accepted() -> None:
    client = text_client()
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
    client = text_client()
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
    client = text_client()
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
    client = text_client()
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
