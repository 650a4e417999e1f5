"""Cohere v2 chat through the official ``cohere`` SDK (``ClientV2``) against a real gunicorn+gevent server.

The SDK has no strict response validation (it builds its models leniently, and skips stream events it
cannot parse), so these tests assert every field the SDK exposes, and
tests/providers/cohere/test_cohere_wire.py asserts the bytes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import cohere
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.providers.cohere.cohere_helpers import HI, MODEL, TIME, WEATHER
from tests.providers.cohere.cohere_helpers import builder as _builder
from tests.providers.cohere.cohere_helpers import chat as _chat
from tests.providers.cohere.cohere_helpers import entries as _entries
from tests.providers.cohere.cohere_helpers import stream as _stream

pytestmark = pytest.mark.sdk


@pytest.fixture
def client(app_session: SessionClient) -> Any:
    return app_session.cohere_client(max_retries=0)


# The same on the real server, for this module's smoke tests over real HTTP.
@pytest.fixture
def live_client(llmts_session: SessionClient) -> Any:
    return llmts_session.cohere_client(max_retries=0)


# --- text ---------------------------------------------------------------------------------------


def test_text_answer_with_usage(llmts_session: SessionClient, live_client: Any) -> None:
    llmts_session.configure(_builder().scenario().text("Hello there.").build())

    reply = _chat(live_client)

    assert isinstance(reply, cohere.V2ChatResponse)
    assert reply.id and reply.finish_reason == "COMPLETE"
    assert reply.message.role == "assistant"
    assert [(c.type, c.text) for c in reply.message.content] == [("text", "Hello there.")]
    assert reply.message.tool_calls is None and reply.message.tool_plan is None
    # Documented estimate: 3 per request + (4 + ceil(2/4)) per message; output ceil(12/4).
    assert (reply.usage.billed_units.input_tokens, reply.usage.billed_units.output_tokens) == (8, 3)
    assert (reply.usage.tokens.input_tokens, reply.usage.tokens.output_tokens) == (8, 3)
    assert reply.usage.cached_tokens == 0


def test_system_and_content_blocks_are_read(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        _builder()
        .conversation("sys")
        .step("one")
        .when(system_contains="pirate", latest_user_equals="Ahoy there")
        .text("Arr.")
        .complete()
        .config
    )
    messages = [
        {"role": "system", "content": "You are a pirate."},
        {"role": "user", "content": [{"type": "text", "text": "Ahoy"}, {"type": "text", "text": " there"}]},
    ]

    assert _chat(client, messages=messages).message.content[0].text == "Arr."


def test_stream_events_in_cohere_order(llmts_session: SessionClient, live_client: Any) -> None:
    llmts_session.configure(_builder().scenario().text("Hello there.", chunks=["Hello", " there."]).build())

    events = _stream(live_client)

    assert [e.type for e in events] == [
        "message-start",
        "content-start",
        "content-delta",
        "content-delta",
        "content-end",
        "message-end",
    ]
    start, end = events[0], events[-1]
    assert start.id and start.delta.message.role == "assistant"
    assert events[1].index == 0 and events[1].delta.message.content.type == "text"
    assert [e.delta.message.content.text for e in events[2:4]] == ["Hello", " there."]
    assert end.delta.finish_reason == "COMPLETE"
    assert (end.delta.usage.tokens.input_tokens, end.delta.usage.tokens.output_tokens) == (8, 3)
    assert end.delta.usage.billed_units.output_tokens == 3


def test_async_client_streams(llmts_session: SessionClient) -> None:
    llmts_session.configure(_builder().scenario().text("Async hello.", chunks=["Async", " hello."]).build())

    async def run() -> list[str]:
        client = llmts_session.async_cohere_client(max_retries=0)
        return [
            e.delta.message.content.text
            async for e in client.chat_stream(model=MODEL, messages=HI)
            if e.type == "content-delta"
        ]

    assert asyncio.run(run()) == ["Async", " hello."]


# --- tools --------------------------------------------------------------------------------------


def test_tool_call_then_result_round_trip(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        _builder()
        .scenario()
        .tool_call("get_weather", {"city": "Paris"}, id="get_weather_1")
        .text("It is sunny in Paris.")
        .build()
    )
    ask = [{"role": "user", "content": "Weather in Paris?"}]

    first = _chat(client, messages=ask, tools=[WEATHER])

    assert first.finish_reason == "TOOL_CALL"
    assert first.message.tool_plan == "I will use get_weather."
    assert first.message.content is None
    [call] = first.message.tool_calls
    assert (call.id, call.type, call.function.name) == ("get_weather_1", "function", "get_weather")
    assert json.loads(call.function.arguments) == {"city": "Paris"}

    history = [
        *ask,
        {"role": "assistant", "tool_plan": first.message.tool_plan, "tool_calls": first.message.tool_calls},
        {
            "role": "tool",
            "tool_call_id": call.id,
            "content": [{"type": "document", "document": {"data": {"weather": "sunny"}}}],
        },
    ]
    second = _chat(client, messages=history, tools=[WEATHER])

    assert second.message.content[0].text == "It is sunny in Paris."
    first_entry, second_entry = _entries(app_session, order="asc")
    assert [(c["id"], c["name"]) for c in first_entry["response_tool_calls"]] == [
        ("get_weather_1", "get_weather")
    ]
    assert [(c["id"], c["name"]) for c in second_entry["request_tool_calls"]] == [
        ("get_weather_1", "get_weather")
    ]
    [result] = second_entry["tool_results"]
    assert (result["call_id"], result["name"]) == ("get_weather_1", "get_weather")
    assert json.loads(result["content"]) == {"weather": "sunny"}


def test_streamed_parallel_tool_calls(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        _builder()
        .scenario()
        .tool_calls(
            {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "w1"},
            {"name": "get_time", "arguments": {"tz": "CET"}, "id": "t1"},
        )
        .build()
    )

    events = _stream(client, tools=[WEATHER, TIME])

    assert [e.type for e in events] == [
        "message-start",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "message-end",
    ]
    assert events[1].delta.message.tool_plan == "I will use get_weather, get_time."
    starts = [e for e in events if e.type == "tool-call-start"]
    assert [
        (e.index, e.delta.message.tool_calls.id, e.delta.message.tool_calls.function.name) for e in starts
    ] == [
        (0, "w1", "get_weather"),
        (1, "t1", "get_time"),
    ]
    assert all(e.delta.message.tool_calls.function.arguments == "" for e in starts)
    arguments = [e.delta.message.tool_calls.function.arguments for e in events if e.type == "tool-call-delta"]
    assert [json.loads(a) for a in arguments] == [{"city": "Paris"}, {"tz": "CET"}]
    assert events[-1].delta.finish_reason == "TOOL_CALL"


def test_tool_choice_required_and_none(app_session: SessionClient) -> None:
    app_session.configure(
        _builder().scenario().text("plain").tool_call("get_weather", {"city": "Oslo"}).build()
    )
    client = app_session.cohere_client(max_retries=0)

    with pytest.raises(cohere.core.ApiError) as caught:  # 409: the SDK models no class for it
        _chat(client, tools=[WEATHER], tool_choice="REQUIRED")
    assert caught.value.status_code == 409
    assert caught.value.body["code"] == "llm_test_server_fixture_mismatch"
    assert _chat(client, tools=[WEATHER], tool_choice="NONE").message.content[0].text == "plain"
    assert _chat(client, tools=[WEATHER], tool_choice="REQUIRED").finish_reason == "TOOL_CALL"


def test_predicate_driven_tool_loop(app_session: SessionClient, client: Any) -> None:
    """A conversation graph drives a whole agent loop: call, result with its arguments, answer."""
    app_session.configure(
        _builder()
        .conversation("agent")
        .step("call")
        .when(latest_user_contains="weather", declares_tool="get_weather")
        .tool_call("get_weather", {"city": "Paris"}, id="call_w")
        .then("answer")
        .step("answer")
        .when(tool_result={"name": "get_weather", "call_id": "call_w"})
        .text("Sunny, 21 degrees.")
        .complete()
        .config
    )
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]

    while True:
        reply = _chat(client, messages=messages, tools=[WEATHER])
        if reply.finish_reason != "TOOL_CALL":
            break
        messages.append(
            {
                "role": "assistant",
                "tool_plan": reply.message.tool_plan,
                "tool_calls": reply.message.tool_calls,
            }
        )
        for call in reply.message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"sky": "sunny"}'})

    assert reply.message.content[0].text == "Sunny, 21 degrees."
    [state] = app_session.conversations()
    assert (state["executed_steps"], state["state"]) == (["call", "answer"], "completed")


# --- structured output --------------------------------------------------------------------------


def test_json_object_and_json_schema(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().json({"answer": 42}).json({"city": "Paris"}).build())

    plain = _chat(client, response_format={"type": "json_object"})
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    typed = _chat(client, response_format={"type": "json_object", "json_schema": schema})

    assert json.loads(plain.message.content[0].text) == {"answer": 42}
    assert json.loads(typed.message.content[0].text) == {"city": "Paris"}
    assert typed.finish_reason == "COMPLETE"


def test_text_that_is_not_json_does_not_answer_json_mode(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("not json").build())

    with pytest.raises(cohere.core.ApiError) as caught:
        _chat(client, response_format={"type": "json_object"})
    assert caught.value.status_code == 409


# --- models -------------------------------------------------------------------------------------


def test_models_list_and_get(app_session: SessionClient, client: Any) -> None:
    app_session.configure(ConfigBuilder().models(MODEL, "command-r7b").build())

    listed = client.models.list()
    one = client.models.get(MODEL)

    assert [m.name for m in listed.models] == [MODEL, "command-r7b"]
    assert listed.next_page_token is None
    assert listed.models[0].endpoints == ["chat"] and listed.models[0].context_length == 128000
    assert one.name == MODEL
    paged = client.models.list(page_size=1)
    assert [m.name for m in paged.models] == [MODEL] and paged.next_page_token == "1"
    rest = client.models.list(page_size=1, page_token=paged.next_page_token)
    assert [m.name for m in rest.models] == ["command-r7b"] and rest.next_page_token is None
    with pytest.raises(cohere.NotFoundError) as caught:
        client.models.get("command-nope")
    assert "command-nope" in caught.value.body["message"]


# --- citations ------------------------------------------------------------------------------------

DOCUMENTS = [
    "The tallest mountain is Everest.",
    {"id": "penguins", "data": {"title": "Penguins", "snippet": "Emperor penguins are the tallest"}},
]
CITED = "Emperor penguins are the tallest species. The tallest mountain is Everest."


def test_documents_quoted_by_the_answer_are_cited(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        _builder()
        .scenario(terminal_policy="repeat_last_response")
        .text(CITED, chunks=[CITED[:42], CITED[42:]])
        .build()
    )

    reply = _chat(client, documents=DOCUMENTS)
    events = _stream(client, documents=DOCUMENTS)
    off = _chat(client, documents=DOCUMENTS, citation_options={"mode": "OFF"})

    first, second = reply.message.citations
    assert (first.start, first.end, first.text) == (0, 32, "Emperor penguins are the tallest")
    assert (second.start, second.end, second.text) == (42, 74, "The tallest mountain is Everest.")
    assert first.type == "TEXT_CONTENT" and first.content_index == 0
    [source] = first.sources
    assert (source.type, source.id) == ("document", "penguins")
    assert source.document == {
        "id": "penguins",
        "title": "Penguins",
        "snippet": "Emperor penguins are the tallest",
    }
    assert second.sources[0].id == "doc:0"
    assert second.sources[0].document == {"id": "doc:0", "content": "The tallest mountain is Everest."}
    assert [e.type for e in events] == [
        "message-start",
        "content-start",
        "content-delta",
        "content-delta",
        "citation-start",
        "citation-end",
        "citation-start",
        "citation-end",
        "content-end",
        "message-end",
    ]
    streamed = [e.delta.message.citations for e in events if e.type == "citation-start"]
    assert [(c.start, c.end, c.sources[0].id) for c in streamed] == [(0, 32, "penguins"), (42, 74, "doc:0")]
    assert off.message.citations is None
    assert _chat(client).message.citations is None  # no documents, no citations


def test_implicit_prompt_cache_reports_cached_tokens(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    # Over 1024 estimated tokens (4 characters each): long enough to be cached.
    messages = [{"role": "system", "content": "You answer in one short sentence. " * 140}, *HI]

    first = _chat(client, messages=messages)
    second = _chat(client, messages=messages)

    assert first.usage.cached_tokens == 0
    assert second.usage.cached_tokens > 0 and second.usage.cached_tokens % 128 == 0
    assert second.usage.tokens.input_tokens == first.usage.tokens.input_tokens


def test_finish_reason_length_and_mixed_answer(app_session: SessionClient, client: Any) -> None:
    """Realistic answers: ``length`` is ``MAX_TOKENS``; the text of a mixed answer is the tool plan."""
    app_session.configure(
        _builder()
        .scenario(terminal_policy="repeat_last_response")
        .response({"text": "Cut", "finish_reason": "length"})
        .build()
    )
    assert _chat(client).finish_reason == "MAX_TOKENS"
    assert _stream(client)[-1].delta.finish_reason == "MAX_TOKENS"

    app_session.configure(
        _builder()
        .scenario()
        .response(
            {"text": "Let me check.", "tool_calls": [{"id": "w", "name": "get_weather", "arguments": {}}]}
        )
        .build()
    )
    reply = _chat(client, tools=[WEATHER])
    assert (reply.finish_reason, reply.message.tool_plan) == ("TOOL_CALL", "Let me check.")
