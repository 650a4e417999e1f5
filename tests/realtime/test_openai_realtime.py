"""OpenAI Realtime through the official openai SDK's realtime client against a real gunicorn+gevent server
(docs/realtime.md): text, audio, a tool round trip, cancellation and each WebSocket fault; every server
event checked strictly with the SDK's own models (the SDK itself does not validate)."""

from __future__ import annotations

import base64
import functools
import json
import time
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosedError

from llmts.client import SessionClient
from llmts.runtime.media.audio import speech_pcm
from tests.realtime.support import check_openai_event, events_until, pcm_bytes, text_of
from tests.support.configure import script

MODEL = "gpt-realtime"
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


# One realtime scenario answering the given responses in order; top-level fields as keywords.
_configure = functools.partial(script, scenario={"id": "voice", "operation": "realtime"})


def _connect(session: SessionClient, **kwargs: Any) -> Any:
    client = session.openai_client(max_retries=0)
    return client.realtime.connect(model=MODEL, **kwargs)


def _ask(connection: Any, text: str, modalities: list[str] | None = None) -> None:
    """A user message, then a response (text unless told otherwise: the service's default is audio)."""
    connection.conversation.item.create(
        item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )
    connection.response.create(response={"output_modalities": modalities or ["text"]})


def test_a_text_turn_follows_the_ga_sequence(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello there.", "chunks": ["Hello", " there."]})
    with _connect(llmts_session) as connection:
        first = check_openai_event(connection.recv())
        assert first["type"] == "session.created"
        connection.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        updated = check_openai_event(connection.recv())
        assert updated["type"] == "session.updated"
        assert updated["session"]["output_modalities"] == ["text"]
        _ask(connection, "hi")
        events = list(events_until(connection))
    types = [event["type"] for event in events]
    assert types[:2] == ["conversation.item.added", "conversation.item.done"]
    assert types.index("response.created") < types.index("response.output_text.delta")
    assert [t for t in types if t == "response.output_text.delta"] == ["response.output_text.delta"] * 2
    assert text_of(events) == "Hello there."
    done = events[-1]["response"]
    assert done["status"] == "completed"
    assert done["usage"]["output_tokens"] > 0
    assert done["output"][0]["content"][0]["text"] == "Hello there."
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["provider"] == "openai" and entry["model"] == MODEL and entry["success"] is True
    assert entry["scenario"] == "voice" and entry["transport_outcome"] == "completed"
    assert entry["terminal_marker_observed"] is True
    sent = [event["type"] for event in entry["client_events"]]
    assert "conversation.item.create" in sent and sent[-1] == "response.create"


def test_an_audio_turn_sends_pcm16_as_long_as_the_words_and_their_transcript(
    llmts_session: SessionClient,
) -> None:
    _configure(llmts_session, {"text": "Hi there, friend.", "audio": "generated"})
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "say hi", ["audio"])
        events = list(events_until(connection))
    assert pcm_bytes(events) == speech_pcm("Hi there, friend.")
    assert text_of(events, "response.output_audio_transcript.delta") == "Hi there, friend."
    assert not text_of(events)  # no text deltas in an audio answer


def test_scripted_audio_bytes_are_sent_as_given(llmts_session: SessionClient) -> None:
    pcm = bytes(range(256)) * 200
    _configure(llmts_session, {"audio": base64.b64encode(pcm).decode(), "transcript": "beep"})
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "beep please", ["audio"])
        events = list(events_until(connection))
    assert pcm_bytes(events) == pcm
    assert text_of(events, "response.output_audio_transcript.delta") == "beep"


def test_a_tool_round_trip_and_its_verification(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {"tool_calls": [{"id": "call_w1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "It is sunny in Paris."},
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        connection.session.update(session={"type": "realtime", "tools": [WEATHER_TOOL]})
        check_openai_event(connection.recv())
        _ask(connection, "weather in Paris?")
        first = list(events_until(connection))
        [arguments] = [e for e in first if e["type"] == "response.function_call_arguments.done"]
        assert arguments["call_id"] == "call_w1" and json.loads(arguments["arguments"]) == {"city": "Paris"}
        assert arguments["name"] == "get_weather"
        connection.conversation.item.create(
            item={"type": "function_call_output", "call_id": "call_w1", "output": '{"sky": "clear"}'}
        )
        connection.response.create(response={"output_modalities": ["text"]})
        second = list(events_until(connection))
    assert text_of(second) == "It is sunny in Paris."
    entries = llmts_session.requests(operation="realtime", order="asc")
    assert len(entries) == 2
    assert entries[1]["tool_results"][0]["call_id"] == "call_w1"
    outputs = [e for e in entries[1]["client_events"] if e["type"] == "conversation.item.create"]
    assert outputs and outputs[0].get("call_id") == "call_w1"
    report = llmts_session.verify(
        {
            "requests": [
                {
                    "name": "answered the tool",
                    "query": {"operation": "realtime", "request_id": entries[1]["request_id"]},
                    "tools": [{"kind": "result", "call_id": "call_w1", "result": {"sky": "clear"}}],
                }
            ]
        }
    )
    assert report.passed, report


def test_response_cancel_ends_the_answer_as_cancelled(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {
            "text": "one two three",
            "chunks": ["one", " two", " three"],
            "stream_delivery": {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 5000},
        },
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "count")
        seen = []
        for event in connection:
            data = check_openai_event(event)
            seen.append(data)
            if data["type"] == "response.output_text.delta":
                started = time.monotonic()
                connection.response.cancel()
                break
        rest = list(events_until(connection))
        assert time.monotonic() - started < 4  # the cancel cut the 5 s delay short
    done = rest[-1]["response"]
    assert done["status"] == "cancelled"
    assert done["status_details"]["reason"] == "client_cancelled"
    assert "three" not in text_of(seen + rest)
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["success"] is False


def test_close_after_n_events_reaches_the_client_with_its_code_and_reason(
    llmts_session: SessionClient,
) -> None:
    _configure(
        llmts_session,
        {
            "text": "a b c",
            "chunks": ["a", " b", " c"],
            "stream_delivery": {"mode": "close", "after_content_frames": 2, "code": 1011, "reason": "boom"},
        },
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "go")
        seen: list[dict[str, Any]] = []
        with pytest.raises(ConnectionClosedError) as closed:
            for event in connection:
                seen.append(check_openai_event(event))
    assert text_of(seen) == "a b"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
    assert closed.value.rcvd.reason == "boom"
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["close_code"] == 1011 and entry["close_reason"] == "boom"
    assert entry["transport_outcome"] == "early_end" and entry["success"] is False


def test_abort_connection_drops_tcp_without_a_close_frame(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {"text": "a b", "chunks": ["a", " b"], "stream_delivery": {"mode": "abort_connection"}},
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "go")
        with pytest.raises(ConnectionClosedError) as closed:
            for event in connection:
                check_openai_event(event)
    assert closed.value.rcvd is None  # no close frame received
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["transport_outcome"] == "aborted"


def test_malformed_event_is_not_json(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {"text": "a b", "chunks": ["a", " b"], "stream_delivery": {"mode": "malformed_event"}},
        {"text": "recovered"},
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "go")
        with pytest.raises(json.JSONDecodeError):
            for event in connection:
                check_openai_event(event)
        # The connection stays open: the next turn is answered.
        _ask(connection, "again")
        events = list(events_until(connection))
    assert text_of(events) == "recovered"


def test_an_error_fixture_is_the_protocols_error_event(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session, {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down"}}
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "go")
        events = list(events_until(connection))
    [error] = [e for e in events if e["type"] == "error"]
    assert error["error"]["code"] == "rate_limit_exceeded" and error["error"]["message"] == "Slow down"
    assert events[-1]["response"]["status"] == "failed"
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["status"] == 429 and entry["error_code"] == "rate_limit_exceeded"


def test_a_wrong_key_gets_the_error_event_and_close_3000(llmts_session: SessionClient) -> None:
    llmts_session.configure({"provider_credentials": {"openai": "sk-right"}})
    client = llmts_session.openai_client(api_key="sk-wrong", max_retries=0)
    with client.realtime.connect(model=MODEL) as connection, pytest.raises(ConnectionClosedError) as closed:
        for event in connection:
            data = check_openai_event(event)
            assert data["type"] == "error" and data["error"]["code"] == "invalid_api_key"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 3000


def test_the_default_session_echoes_like_chat(llmts_server: Any) -> None:
    import openai

    client = openai.OpenAI(api_key="sk-any", base_url=llmts_server.url + "/openai/v1")
    with client.realtime.connect(model=MODEL) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "echo me", ["text"])
        events = list(events_until(connection))
    assert text_of(events) == "echo me"


def test_a_reset_during_a_fault_pause_fails_the_turn_in_the_protocols_way(
    llmts_session: SessionClient,
) -> None:
    _configure(
        llmts_session,
        {
            "text": "a b",
            "chunks": ["a", " b"],
            "stream_delivery": {"mode": "stall", "after_content_frames": 1, "delay_ms": 5000},
        },
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "go")
        for event in connection:
            if check_openai_event(event)["type"] == "response.output_text.delta":
                break
        started = time.monotonic()
        llmts_session.reset()
        rest = list(events_until(connection))
    assert time.monotonic() - started < 4  # the reset ended the 5 s stall
    [error] = [e for e in rest if e["type"] == "error"]
    assert error["error"]["code"] == "llm_test_server_request_superseded"
    assert rest[-1]["response"]["status"] == "failed"
