"""Bad client events on an OpenAI Realtime connection: every one gets exactly one ``error`` event in the
service's words, changes nothing and never raises; and what a connection keeps is bounded."""

from __future__ import annotations

import base64
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmts.providers.openai.realtime import state as realtime_state
from llmts.providers.openai.realtime.client_events import CLIENT_EVENTS
from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.runtime.resident_size import value_size
from tests.providers.openai.realtime_support import Client, check_event, speech_b64

_USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}


def _state(client: Client) -> Any:
    protocol = client.protocol
    return (
        [item.wire for item in protocol.conversation.items()],
        orjson.dumps(protocol.settings.wire),
        protocol._buffer.size,
        protocol.active,
    )


def _item(**changes: Any) -> dict[str, Any]:
    return {"type": "conversation.item.create", "event_id": "e1", "item": {**_USER, **changes}}


def _part(part: Any, role: str = "user") -> dict[str, Any]:
    return {"type": "conversation.item.create", "item": {"type": "message", "role": role, "content": [part]}}


CASES: list[tuple[str, Any, str, str | None]] = [
    ("not json", b"{not json", "invalid_json", None),
    ("an array", b"[1, 2]", "invalid_type", None),
    ("a string", b'"session.update"', "invalid_type", None),
    ("binary garbage", b"\xff\xfe\x00", "invalid_json", None),
    ("no type", {}, "missing_required_parameter", "type"),
    ("type not a string", {"type": 5}, "invalid_type", "type"),
    ("unknown type", {"type": "response.text.delta"}, "invalid_value", "type"),
    ("beta type", {"type": "conversation.item.created"}, "invalid_value", "type"),
    ("event_id not a string", {"type": "response.cancel", "event_id": 7}, "invalid_type", "event_id"),
    (
        "event_id too long",
        {"type": "response.cancel", "event_id": "e" * 200},
        "string_above_max_length",
        "event_id",
    ),
    (
        "unknown key",
        {"type": "response.create", "event_id": "e1", "modalities": ["text"]},
        "unknown_parameter",
        "modalities",
    ),
    (
        "session missing",
        {"type": "session.update", "event_id": "e1"},
        "missing_required_parameter",
        "session",
    ),
    ("audio missing", {"type": "input_audio_buffer.append"}, "missing_required_parameter", "audio"),
    ("audio not base64", {"type": "input_audio_buffer.append", "audio": "@@@@"}, "invalid_value", "audio"),
    ("audio not a string", {"type": "input_audio_buffer.append", "audio": [1]}, "invalid_type", "audio"),
    ("item missing", {"type": "conversation.item.create"}, "missing_required_parameter", "item"),
    ("item not an object", {"type": "conversation.item.create", "item": "hi"}, "invalid_type", "item"),
    ("item without type", _item(type=None), "missing_required_parameter", "item.type"),
    ("item type unknown", _item(type="reasoning"), "invalid_value", "item.type"),
    ("mcp item", _item(type="mcp_call"), "invalid_value", "item.type"),
    ("role unknown", _item(role="developer"), "invalid_value", "item.role"),
    ("role missing", _item(role=None), "missing_required_parameter", "item.role"),
    ("content not a list", _item(content="hi"), "invalid_type", "item.content"),
    (
        "too many parts",
        _item(content=[{"type": "input_text", "text": "x"}] * 65),
        "array_above_max_length",
        "item.content",
    ),
    ("unknown item key", _item(name="x"), "unknown_parameter", "item.name"),
    ("object wrong", _item(object="realtime.response"), "invalid_value", "item.object"),
    ("status wrong", _item(status="done"), "invalid_value", "item.status"),
    ("id not a string", _item(id=5), "invalid_type", "item.id"),
    (
        "beta part type",
        _part({"type": "text", "text": "x"}, "assistant"),
        "invalid_value",
        "item.content[0].type",
    ),
    (
        "user output_text",
        _part({"type": "output_text", "text": "x"}),
        "invalid_value",
        "item.content[0].type",
    ),
    (
        "system audio",
        _part({"type": "input_audio", "audio": ""}, "system"),
        "invalid_value",
        "item.content[0].type",
    ),
    (
        "assistant audio",
        _part({"type": "output_audio", "transcript": "x"}, "assistant"),
        "invalid_value",
        "item.content[0].type",
    ),
    ("text missing", _part({"type": "input_text"}), "missing_required_parameter", "item.content[0].text"),
    ("text not a string", _part({"type": "input_text", "text": 1}), "invalid_type", "item.content[0].text"),
    (
        "part key unknown",
        _part({"type": "input_text", "text": "x", "audio": "AA=="}),
        "unknown_parameter",
        "item.content[0].audio",
    ),
    (
        "audio part bad",
        _part({"type": "input_audio", "audio": "%%"}),
        "invalid_value",
        "item.content[0].audio",
    ),
    (
        "image without url",
        _part({"type": "input_image"}),
        "missing_required_parameter",
        "item.content[0].image_url",
    ),
    (
        "image detail",
        _part({"type": "input_image", "image_url": "u", "detail": "max"}),
        "invalid_value",
        "item.content[0].detail",
    ),
    ("part not an object", _part("hi"), "invalid_type", "item.content[0]"),
    (
        "text too long",
        _part({"type": "input_text", "text": "x" * 262_145}),
        "string_above_max_length",
        "item",
    ),
    (
        "call without name",
        {"type": "conversation.item.create", "item": {"type": "function_call", "arguments": "{}"}},
        "missing_required_parameter",
        "item.name",
    ),
    (
        "call arguments not a string",
        {"type": "conversation.item.create", "item": {"type": "function_call", "name": "f", "arguments": {}}},
        "invalid_type",
        "item.arguments",
    ),
    (
        "output without output",
        {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "c"}},
        "missing_required_parameter",
        "item.output",
    ),
    ("previous not a string", {**_item(), "previous_item_id": 3}, "invalid_type", "previous_item_id"),
    ("retrieve without id", {"type": "conversation.item.retrieve"}, "missing_required_parameter", "item_id"),
    ("delete id not a string", {"type": "conversation.item.delete", "item_id": 1}, "invalid_type", "item_id"),
    (
        "truncate index a string",
        {"type": "conversation.item.truncate", "item_id": "x", "content_index": "0", "audio_end_ms": 0},
        "invalid_type",
        "content_index",
    ),
    (
        "truncate without audio_end_ms",
        {"type": "conversation.item.truncate", "item_id": "x", "content_index": 0},
        "missing_required_parameter",
        "audio_end_ms",
    ),
    ("response not an object", {"type": "response.create", "response": []}, "invalid_type", "response"),
    (
        "response key unknown",
        {"type": "response.create", "response": {"voice": "x"}},
        "unknown_parameter",
        "response.voice",
    ),
    (
        "response modalities",
        {"type": "response.create", "response": {"output_modalities": "text"}},
        "invalid_type",
        "response.output_modalities",
    ),
    (
        "response conversation id",
        {"type": "response.create", "response": {"conversation": "conv_1"}},
        "invalid_value",
        "response.conversation",
    ),
    (
        "metadata value",
        {"type": "response.create", "response": {"metadata": {"a": 1}}},
        "invalid_type",
        "response.metadata.a",
    ),
    (
        "metadata keys",
        {"type": "response.create", "response": {"metadata": {str(i): "v" for i in range(17)}}},
        "invalid_value",
        "response.metadata",
    ),
    (
        "input not a list",
        {"type": "response.create", "response": {"input": {}}},
        "invalid_type",
        "response.input",
    ),
    (
        "input item bad",
        {"type": "response.create", "response": {"input": [{"type": "message", "role": "user"}]}},
        "missing_required_parameter",
        "response.input[0].content",
    ),
    (
        "response tool choice",
        {"type": "response.create", "response": {"tool_choice": {"type": "function"}}},
        "missing_required_parameter",
        "response.tool_choice.name",
    ),
    (
        "response audio voice",
        {"type": "response.create", "response": {"audio": {"output": {"voice": 3}}}},
        "invalid_type",
        "response.audio.output.voice",
    ),
    ("cancel id not a string", {"type": "response.cancel", "response_id": 5}, "invalid_type", "response_id"),
    ("output buffer clear", {"type": "output_audio_buffer.clear"}, "invalid_value", "type"),
]


@pytest.mark.parametrize(
    ("event", "code", "param"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_each_bad_event_is_one_error_that_changes_nothing(event: Any, code: str, param: str | None) -> None:
    client = Client.connect()
    client.say("hello")
    before = _state(client)
    message = event if isinstance(event, bytes) else orjson.dumps(event)
    error = client.error(message)
    assert error["code"] == code
    if param is not None:
        assert error["param"] == param
    sent_id = event.get("event_id") if isinstance(event, dict) else None
    assert error["event_id"] == (sent_id if isinstance(sent_id, str) and len(sent_id) <= 128 else None)
    assert _state(client) == before


def test_the_truncate_fields_are_checked_by_type() -> None:
    client = Client.connect()
    client.say("hello")
    item_id = client.protocol.conversation.items()[0].id
    base = {"type": "conversation.item.truncate", "item_id": item_id}
    error = client.error({**base, "content_index": "0", "audio_end_ms": 0})
    assert (error["code"], error["param"]) == ("invalid_type", "content_index")
    error = client.error({**base, "content_index": 0, "audio_end_ms": -1})
    assert (error["code"], error["param"]) == ("integer_below_min_value", "audio_end_ms")


def _nested(depth: int) -> Any:
    value: Any = {"type": "string"}
    for _ in range(depth):
        value = {"type": "object", "properties": {"x": value}}
    return value


def test_deep_json_is_refused_before_it_reaches_the_session() -> None:
    """Deeper than the echo could be written back (orjson writes at most 254 levels)."""
    client = Client.connect()
    tool = {"type": "function", "name": "f", "parameters": _nested(150)}
    update = {"type": "session.update", "session": {"type": "realtime", "tools": [tool]}}
    error = client.error(json.dumps(update).encode())  # deeper than orjson itself writes
    assert error["code"] == "invalid_value" and "nested" in error["message"]
    assert client.protocol.settings.tools == []
    error = client.error(json.dumps({"type": "response.create", "response": {"tools": [tool]}}).encode())
    assert "nested" in error["message"] and client.protocol.active is None
    tool = {"type": "function", "name": "f", "parameters": _nested(29)}  # 64 levels with the envelope
    _, [updated] = client.send({"type": "session.update", "session": {"type": "realtime", "tools": [tool]}})
    assert updated["session"]["tools"] == [tool]


def test_numbers_past_the_json_parsers_range() -> None:
    client = Client.connect()
    assert client.error(b'{"type": "response.cancel", "event_id": 1e400}')["code"] == "invalid_json"
    error = client.error(b'{"type": "response.cancel", "event_id": 123456789012345678901234567890}')
    assert (error["code"], error["param"]) == ("invalid_type", "event_id")  # read as a float


def test_a_binary_frame_carrying_an_event_is_read_like_text() -> None:
    client = Client.connect()
    _, [updated] = client.send_raw(orjson.dumps({"type": "session.update", "session": {"type": "realtime"}}))
    assert updated["type"] == "session.updated"


# --- arbitrary input never raises ----------------------------------------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
_FIELDS = sorted(
    {name for fields, _ in CLIENT_EVENTS.values() for name in fields} | {"event_id", "item", "session"}
)
_SHAPED = st.builds(
    lambda kind, fields: {"type": kind, **fields},
    st.sampled_from(sorted(CLIENT_EVENTS)),
    st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=3),
)
# Valid events with one field replaced by anything.
_VALID = [
    {
        "type": "session.update",
        "session": {"type": "realtime", "instructions": "x", "output_modalities": ["text"]},
    },
    {"type": "conversation.item.create", "item": _USER},
    {"type": "input_audio_buffer.append", "audio": speech_b64(20)},
    {"type": "response.create", "response": {"output_modalities": ["text"], "conversation": "none"}},
    {"type": "conversation.item.truncate", "item_id": "x", "content_index": 0, "audio_end_ms": 10},
]
_MUTATED = st.builds(
    lambda event, key, value: {**event, key: value},
    st.sampled_from(_VALID),
    st.sampled_from(["session", "item", "audio", "response", "item_id", "content_index", "event_id"]),
    _JSON,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(_JSON | _SHAPED | _MUTATED, min_size=1, max_size=4))
def test_arbitrary_events_never_raise_and_every_answer_is_a_valid_event(events: list[Any]) -> None:
    """...and what the conversation is charged (the memory budget's ``realtime_bytes``) stays the size of
    the items it holds, whatever the events did to them."""
    client = Client.connect()
    for event in events:
        reaction = client.protocol.receive(orjson.dumps(event))
        for data in reaction.events:
            check_event(data)
        assert reaction.close is None
        if reaction.turn is not None:
            client.protocol.finished(reaction.turn)
        assert client.protocol.retained_bytes() == _held(client)


def _held(client: Client) -> int:
    """The items' sizes, and the session's settings' (instructions, tools)."""
    items = sum(map(realtime_state._resident, client.protocol.conversation.items()))
    return items + value_size(client.protocol.settings.wire)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_raise(message: bytes) -> None:
    client = Client.connect()
    for data in client.protocol.receive(message).events:
        check_event(data)


# --- bounds --------------------------------------------------------------------------------------------


def test_the_input_audio_buffer_is_bounded() -> None:
    client = Client.connect()
    client.send(
        {
            "type": "session.update",
            "session": {"type": "realtime", "audio": {"input": {"turn_detection": None}}},
        }
    )
    chunk = base64.b64encode(b"\x01" * (4 * 1024 * 1024)).decode()
    for _ in range(3):
        assert client.send({"type": "input_audio_buffer.append", "audio": chunk})[1] == []
    error = client.error({"type": "input_audio_buffer.append", "audio": chunk})
    assert error["code"] == "input_audio_buffer_full"
    assert client.protocol._buffer.size == 12 * 1024 * 1024
    huge = base64.b64encode(b"\x01" * (REALTIME_LIMITS["input_audio_bytes"] + 3)).decode()
    assert client.error({"type": "input_audio_buffer.append", "audio": huge})["code"] == "audio_too_large"


def test_the_conversation_drops_its_oldest_items_past_its_bounds() -> None:
    client = Client.connect()
    limit = REALTIME_LIMITS["conversation_items"]
    for index in range(limit + 2):
        client.protocol.receive(
            orjson.dumps(_part({"type": "input_text", "text": f"m{index}"}) | {"event_id": f"e{index}"})
        )
    items = client.protocol.conversation.items()
    assert len(items) == limit and items[0].text == "m2" and items[-1].text == f"m{limit + 1}"
    big = "x" * REALTIME_LIMITS["item_chars"]
    for _ in range(4):
        client.send(_part({"type": "input_text", "text": big}))
    assert (
        sum(item.chars for item in client.protocol.conversation.items())
        <= REALTIME_LIMITS["conversation_chars"]
    )
    assert client.protocol.conversation.items()[-1].text == big
    assert client.protocol.retained_bytes() == _held(client) > 4 * len(big)


def test_a_turn_carries_the_latest_client_event_summaries() -> None:
    client = Client.connect()
    for index in range(100):
        client.error({"type": "conversation.item.delete", "item_id": f"gone{index}"})
    client.say("x" * 1000)
    turn = client.respond()
    kept = REALTIME_LIMITS["turn_client_events"]
    assert len(turn.client_events) == kept + 1
    assert turn.client_events[0] == {"type": "omitted", "count": 100 + 2 - kept}
    assert turn.client_events[-2]["text"] == "x" * 199 + "…"
    assert turn.client_events[-1] == {"type": "response.create", "conversation": "auto"}
    client.protocol.finished(turn)
    assert [e["type"] for e in client.respond().client_events] == ["response.create"]


def test_an_append_after_a_refused_append_gets_a_summary_of_its_own() -> None:
    """Found by tests/fuzz/test_fuzz_realtime.py: the next append was folded into the refused one's summary
    (which counts no audio) and raised, closing the connection with 1011."""
    client = Client.connect()
    assert client.error({"type": "input_audio_buffer.append", "audio": {}})["code"] == "invalid_type"
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    client.say("hi")
    summaries = client.respond().client_events
    assert summaries[:2] == [
        {"type": "input_audio_buffer.append", "error": "invalid_type"},
        {"type": "input_audio_buffer.append", "events": 2, "audio_bytes": 2 * 4800},
    ]


def test_buffered_input_audio_is_counted_not_kept() -> None:
    """What llmts hears in committed audio is its size (or the session's script), so the buffer holds no
    audio: 12 MiB appended (manual mode, nothing committed) leave well under a MiB allocated."""
    import base64
    import tracemalloc

    client = Client.connect()
    client.send(
        {
            "type": "session.update",
            "session": {"type": "realtime", "audio": {"input": {"turn_detection": None}}},
        }
    )
    chunk = base64.b64encode((1000).to_bytes(2, "little", signed=True) * 512 * 1024).decode()  # 1 MiB
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(12):
            client.send({"type": "input_audio_buffer.append", "audio": chunk})
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert client.protocol._buffer.size == 12 * 1024 * 1024
    assert kept < 1024 * 1024, kept
