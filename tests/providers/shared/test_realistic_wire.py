"""Realistic answers on the wire, per provider, with raw HTTP: the block order and block events of one
answer with reasoning, text and a tool call, streamed, exactly as each provider sends them
(docs/realistic-answers.md)."""

from __future__ import annotations

from functools import partial

from llmts import SessionClient
from tests.helpers import USER_HI, WEATHER_TOOL
from tests.support.configure import script
from tests.support.in_process import send_raw
from tests.support.sse import data_events, typed_events

MODEL = "any-model"
CALL = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
MIXED = {
    "reasoning": {"text": "Think.", "summary": ["Sum."], "signature": "c2ln", "tokens": 5},
    "text": "Checking.",
    "chunks": ["Check", "ing."],
    "tool_calls": [CALL],
}


_configure = partial(script, models=[MODEL])


def test_chat_stream_text_deltas_then_tool_call_deltas(app_session: SessionClient) -> None:
    _configure(app_session, MIXED)

    body = {"model": MODEL, "messages": USER_HI, "tools": [WEATHER_TOOL], "stream": True}
    response = send_raw(app_session, "POST", "/openai/v1/chat/completions", body)

    deltas = [data["choices"][0]["delta"] for data in data_events(response.body, done=True)]
    assert deltas[0] == {"role": "assistant", "content": "", "refusal": None}
    assert [d.get("content") for d in deltas[1:3]] == ["Check", "ing."]
    assert deltas[3]["tool_calls"][0]["id"] == "call_1"
    assert all("content" not in d for d in deltas[3:])


def test_chat_refusal_deltas(app_session: SessionClient) -> None:
    _configure(app_session, {"refusal": "No."})

    body = {"model": MODEL, "messages": USER_HI, "stream": True}
    response = send_raw(app_session, "POST", "/openai/v1/chat/completions", body)

    choices = [data["choices"][0] for data in data_events(response.body, done=True)]
    assert [c["delta"] for c in choices] == [
        {"role": "assistant", "content": None, "refusal": ""},
        {"refusal": "No."},
        {},
    ]
    assert choices[-1]["finish_reason"] == "stop"


def test_responses_stream_event_order(app_session: SessionClient) -> None:
    _configure(app_session, MIXED)

    body = {
        "model": MODEL,
        "input": "Hi",
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
    }
    response = send_raw(app_session, "POST", "/openai/v1/responses", body)

    events = typed_events(response.body)
    assert [name for name, _ in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    added = events[2][1]["item"]
    assert "encrypted_content" not in added and added["summary"] == []
    done = events[9][1]["item"]
    assert done["encrypted_content"] == "c2ln"
    assert done["content"] == [{"type": "reasoning_text", "text": "Think."}]


def test_responses_incomplete_terminal_event(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "Cut", "finish_reason": "length"})

    body = {"model": MODEL, "input": "Hi", "stream": True}
    response = send_raw(app_session, "POST", "/openai/v1/responses", body)

    name, data = typed_events(response.body)[-1]
    assert name == "response.incomplete"
    assert (data["response"]["status"], data["response"]["incomplete_details"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
    )
    assert data["response"]["completed_at"] is None


def test_anthropic_block_events(app_session: SessionClient) -> None:
    _configure(app_session, MIXED)

    body = {
        "model": MODEL,
        "max_tokens": 1024,
        "messages": USER_HI,
        "stream": True,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
    }
    response = send_raw(app_session, "POST", "/anthropic/v1/messages", body, {"x-api-key": "k"})

    steps = []
    for name, data in typed_events(response.body):
        if name == "content_block_start":
            steps.append((data["index"], "start", data["content_block"]["type"]))
        elif name == "content_block_delta":
            steps.append((data["index"], "delta", data["delta"]["type"]))
        elif name == "content_block_stop":
            steps.append((data["index"], "stop", None))
        else:
            steps.append((None, name, None))
    assert steps == [
        (None, "message_start", None),
        (0, "start", "thinking"),
        (None, "ping", None),
        (0, "delta", "thinking_delta"),
        (0, "delta", "signature_delta"),
        (0, "stop", None),
        (1, "start", "text"),
        (1, "delta", "text_delta"),
        (1, "delta", "text_delta"),
        (1, "stop", None),
        (2, "start", "tool_use"),
        (2, "delta", "input_json_delta"),
        (2, "delta", "input_json_delta"),
        (2, "stop", None),
        (None, "message_delta", None),
        (None, "message_stop", None),
    ]
    deltas = [data["delta"] for name, data in typed_events(response.body) if name == "content_block_delta"]
    assert deltas[:2] == [
        {"type": "thinking_delta", "thinking": "Think."},
        {"type": "signature_delta", "signature": "c2ln"},
    ]


def test_anthropic_refusal_stop_reason_raw(app_session: SessionClient) -> None:
    _configure(app_session, {"refusal": "No."})

    body = {"model": MODEL, "max_tokens": 64, "messages": USER_HI}
    response = send_raw(app_session, "POST", "/anthropic/v1/messages", body, {"x-api-key": "k"})

    payload = response.json()
    assert payload["stop_reason"] == "refusal"
    assert payload["content"] == [{"type": "text", "text": "No."}]


def test_gemini_stream_parts_order(app_session: SessionClient) -> None:
    _configure(app_session, MIXED)

    body = {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
    }
    path = f"/gemini/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    response = send_raw(app_session, "POST", path, body, {"x-goog-api-key": "k"})

    chunks = data_events(response.body, newline="\r\n")
    parts = [chunk["candidates"][0]["content"]["parts"] for chunk in chunks]
    assert parts == [
        [{"text": "Think.", "thought": True, "thoughtSignature": "c2ln"}],
        [{"text": "Check"}],
        [{"text": "ing."}],
        [{"functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}}],
        [{"text": ""}],
    ]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"]["thoughtsTokenCount"] == 5


def test_gemini_safety_ratings_raw(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "Part", "finish_reason": "content_filter"})

    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    path = f"/gemini/v1beta/models/{MODEL}:generateContent"
    response = send_raw(app_session, "POST", path, body, {"x-goog-api-key": "k"})

    candidate = response.json()["candidates"][0]
    assert candidate["finishReason"] == "SAFETY"
    assert {
        "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
        "probability": "HIGH",
        "blocked": True,
    } in candidate["safetyRatings"]


def test_gemini_json_array_stream_with_a_redacted_thought(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"reasoning": {"redacted": True, "signature": "c2ln"}, "text": "ab", "chunks": ["a", "b"]},
    )

    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    path = f"/gemini/v1/models/{MODEL}:streamGenerateContent"
    response = send_raw(app_session, "POST", path, body, {"x-goog-api-key": "k"})

    parts = [chunk["candidates"][0]["content"]["parts"] for chunk in response.json()]
    assert parts == [[{"text": "a", "thoughtSignature": "c2ln"}], [{"text": "b"}], [{"text": ""}]]
