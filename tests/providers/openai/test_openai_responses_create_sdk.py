"""OpenAI Responses API through the official ``openai`` SDK (strict response validation) against a real
gunicorn+gevent server, creating responses: the Response object, streams (raw, the ``responses.stream()``
helper and its async form), function calls, structured output, tool choice and the echoed tools, prompt
caching and an unconfigured session's echo (docs/providers.md, "OpenAI Responses")."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pydantic
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.providers.openai.responses_sdk_support import MODEL, TIME, WEATHER
from tests.support.in_process import send_raw
from tests.support.openai_tokens import message_tokens as _msg
from tests.support.openai_tokens import o200k

pytestmark = pytest.mark.sdk

TEXT_EVENTS_HEAD = ["response.created", "response.in_progress", "response.output_item.added"]


def _tokens(text: str) -> int:
    """MODEL's own encoding (docs/tokens.md)."""
    return o200k(text)


def test_text_response_object(llmts_session: SessionClient, openai_client: Any) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text("Hello there.").build())

    response = openai_client.responses.create(model=MODEL, input="Hi")

    assert response.id.startswith("resp_")
    assert response.object == "response"
    assert response.status == "completed"
    assert response.model == MODEL
    assert response.output_text == "Hello there."
    (message,) = response.output
    assert message.type == "message" and message.role == "assistant" and message.status == "completed"
    assert message.id.startswith("msg_")
    (part,) = message.content
    assert (part.type, part.text, part.annotations) == ("output_text", "Hello there.", [])
    assert response.store is True
    assert response.previous_response_id is None
    assert response.tool_choice == "auto" and response.tools == [] and response.parallel_tool_calls is True
    assert response.text.format.type == "text"
    usage = response.usage
    assert usage.input_tokens == 3 + _msg("Hi")
    assert usage.output_tokens == _tokens("Hello there.")
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0
    assert usage.output_tokens_details.reasoning_tokens == 0


def test_instructions_and_message_items_count_as_input(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("ok").build())

    response = app_openai.responses.create(
        model=MODEL,
        instructions="Be brief.",
        input=[
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "noted"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]},
        ],
    )

    assert response.instructions == "Be brief."
    expected = 3 + _msg("Be brief.", "system") + _msg("first") + _msg("noted", "assistant") + _msg("second")
    assert response.usage.input_tokens == expected


def test_stream_helper_text(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("Hello there.", chunks=["Hel", "lo", " there."]))

    with app_openai.responses.stream(model=MODEL, input="Hi") as stream:
        events = list(stream)
        final = stream.get_final_response()

    assert [e.type for e in events] == [
        *TEXT_EVENTS_HEAD,
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert [e.delta for e in deltas] == ["Hel", "lo", " there."]
    assert [e.snapshot for e in deltas] == ["Hel", "Hello", "Hello there."]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert final.output_text == "Hello there."
    assert final.id == events[0].response.id
    assert final.usage.output_tokens == 3
    stored = app_openai.responses.retrieve(final.id)
    assert stored.output_text == "Hello there." and stored.usage == final.usage


def test_create_stream_true_event_order_ids_and_sequence(
    llmts_session: SessionClient, openai_client: Any
) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text("ab", chunks=["a", "b"]).build())

    events = list(openai_client.responses.create(model=MODEL, input="Hi", stream=True))

    assert [e.type for e in events] == [
        *TEXT_EVENTS_HEAD,
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    created, in_progress, added = events[0], events[1], events[2]
    assert created.response.status == "in_progress" and created.response.output == []
    assert created.response.usage is None
    assert in_progress.response.id == created.response.id == events[-1].response.id
    item_id = added.item.id
    assert added.item.status == "in_progress" and added.item.content == []
    assert {e.item_id for e in events[3:-2]} == {item_id}
    assert events[-2].item.id == item_id and events[-2].item.status == "completed"
    assert events[-4].text == "ab"
    completed = events[-1].response
    assert completed.status == "completed" and completed.output_text == "ab"
    assert completed.model_dump() == openai_client.responses.retrieve(completed.id).model_dump()


def test_function_call_json(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().tool_call("get_weather", {"city": "Paris"}, id="call_1"))

    response = app_openai.responses.create(model=MODEL, input="Weather?", tools=[WEATHER])

    (call,) = response.output
    assert call.type == "function_call"
    assert call.id.startswith("fc_") and call.status == "completed"
    assert (call.call_id, call.name) == ("call_1", "get_weather")
    assert json.loads(call.arguments) == {"city": "Paris"}
    assert response.output_text == ""
    assert response.tools[0].name == "get_weather"
    assert response.usage.output_tokens == _tokens("get_weather") + _tokens('{"city":"Paris"}')


def test_parallel_function_calls_streamed_with_helper(app_session: SessionClient, app_openai: Any) -> None:
    long_args = {"city": "Paris", "note": "a fairly long argument value to split"}
    app_session.configure(
        ConfigBuilder()
        .scenario()
        .tool_calls(
            {"id": "call_a", "name": "get_weather", "arguments": long_args},
            {"id": "call_b", "name": "get_time", "arguments": {}},
        )
        .build()
    )

    with app_openai.responses.stream(model=MODEL, input="Hi", tools=[WEATHER, TIME]) as stream:
        events = list(stream)
        final = stream.get_final_response()

    added = [e for e in events if e.type == "response.output_item.added"]
    assert [(e.output_index, e.item.type, e.item.call_id) for e in added] == [
        (0, "function_call", "call_a"),
        (1, "function_call", "call_b"),
    ]
    deltas = [e for e in events if e.type == "response.function_call_arguments.delta" and e.output_index == 0]
    assert len(deltas) > 2  # arguments really arrive in pieces
    assert json.loads(deltas[-1].snapshot) == long_args
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [json.loads(e.arguments) for e in done] == [long_args, {}]
    calls = final.output
    assert [(c.call_id, c.name) for c in calls] == [("call_a", "get_weather"), ("call_b", "get_time")]
    # The helper parses arguments of strict tools it was given.
    assert calls[0].parsed_arguments == long_args


def test_function_call_output_round_trip(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder()
        .scenario()
        .tool_call("get_weather", {"city": "Paris"}, id="call_9")
        .text("Sunny in Paris.")
        .text("Still sunny.")
        .build()
    )
    user = [{"role": "user", "content": "Weather in Paris?"}]

    first = app_openai.responses.create(model=MODEL, input=user, tools=[WEATHER])
    call = first.output[0]
    result = {"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "clear"}'}
    # Stateless: the whole history goes back, the function_call item as the SDK returned it.
    second = app_openai.responses.create(
        model=MODEL, input=[*user, call.model_dump(exclude_none=True), result], tools=[WEATHER], store=False
    )
    # Stateful: only the result, the rest restored from the stored first response.
    third = app_openai.responses.create(
        model=MODEL, previous_response_id=first.id, input=[result], tools=[WEATHER]
    )

    assert second.output_text == "Sunny in Paris."
    assert third.output_text == "Still sunny."
    assert second.usage.input_tokens == third.usage.input_tokens > first.usage.input_tokens
    # Added to the first prompt: the assistant's call turn and the tool result.
    call_turn = _msg("", "assistant") + _tokens("get_weather") + _tokens('{"city":"Paris"}')
    result_turn = _msg('{"sky": "clear"}', "tool")
    assert third.usage.input_tokens - first.usage.input_tokens == call_turn + result_turn


def test_parse_with_pydantic_text_format(app_session: SessionClient, app_openai: Any) -> None:
    class Answer(pydantic.BaseModel):
        answer: int
        reason: str

    app_session.configure(ConfigBuilder().scenario().json({"answer": 42, "reason": "because"}).build())

    response = app_openai.responses.parse(model=MODEL, input="Why?", text_format=Answer)

    assert response.output_parsed == Answer(answer=42, reason="because")
    assert response.text.format.type == "json_schema"
    assert response.text.format.name == "Answer"


def test_stream_helper_with_text_format(app_session: SessionClient, app_openai: Any) -> None:
    class Answer(pydantic.BaseModel):
        answer: int

    app_session.configure(ConfigBuilder().scenario().json({"answer": 7}).build())

    with app_openai.responses.stream(model=MODEL, input="n?", text_format=Answer) as stream:
        done = [e for e in stream if e.type == "response.output_text.done"]
        final = stream.get_final_response()

    assert done[0].parsed == Answer(answer=7)
    assert final.output_parsed == Answer(answer=7)


def test_text_fixture_for_json_schema_request_is_a_fixture_mismatch(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(ConfigBuilder().scenario().text("not json").build())

    with pytest.raises(openai.ConflictError) as caught:
        app_openai.responses.create(model=MODEL, input="x", text={"format": {"type": "json_object"}})
    assert caught.value.code == "llm_test_server_fixture_mismatch"


@pytest.mark.parametrize(
    ("tool_choice", "fixture"),
    [
        ("none", "tool"),
        ("required", "text"),
        ({"type": "function", "name": "get_time"}, "tool"),
    ],
)
def test_tool_choice_is_enforced(
    app_session: SessionClient, app_openai: Any, tool_choice: Any, fixture: str
) -> None:
    builder = ConfigBuilder().scenario()
    if fixture == "tool":
        builder.tool_call("get_weather", {"city": "Paris"})
    else:
        builder.text("plain")
    app_session.configure(builder.build())

    with pytest.raises(openai.ConflictError) as caught:
        app_openai.responses.create(model=MODEL, input="x", tools=[WEATHER, TIME], tool_choice=tool_choice)
    assert caught.value.code == "llm_test_server_fixture_mismatch"


def test_forced_function_is_answered_and_echoed(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().tool_call("get_time", {}).build())

    response = app_openai.responses.create(
        model=MODEL, input="x", tools=[WEATHER, TIME], tool_choice={"type": "function", "name": "get_time"}
    )

    assert response.output[0].name == "get_time"
    assert response.tool_choice.type == "function" and response.tool_choice.name == "get_time"


def test_function_tools_are_echoed_as_the_real_api_echoes_them(
    app_session: SessionClient, app_openai: Any
) -> None:
    """A function tool sent without ``strict`` (or ``description``) comes back with ``strict: true`` (the
    Responses API's default) and ``description: null``, in the answer, its stream and a stored retrieve."""
    app_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    lax = {**TIME, "strict": False}

    created = app_openai.responses.create(model=MODEL, input="x", tools=[TIME, WEATHER, lax])
    with app_openai.responses.stream(model=MODEL, input="x", tools=[TIME]) as stream:
        streamed = stream.get_final_response()
    raw = send_raw(
        app_session,
        "POST",
        "/openai/v1/responses",
        {"model": MODEL, "input": "x", "tools": [TIME]},
    )

    echoed = [tool.model_dump() for tool in created.tools]
    assert echoed[0] == {**TIME, "description": None, "strict": True} | {
        key: value for key, value in echoed[0].items() if key not in {*TIME, "description", "strict"}
    }
    assert (echoed[0]["strict"], echoed[1]["strict"], echoed[2]["strict"]) == (True, True, False)
    assert echoed[1]["description"] == "Weather for a city"
    assert streamed.tools[0].strict is True
    assert raw.json()["tools"] == [{**TIME, "description": None, "strict": True}]
    assert app_openai.responses.retrieve(created.id).tools[0].strict is True


def test_prompt_cache_cached_tokens_rise_on_repeated_long_prompt(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    instructions = "You are a careful assistant. " * 200  # 1,200 tokens, over the 1,024 cacheable minimum

    first = app_openai.responses.create(model=MODEL, instructions=instructions, input="Question one")
    second = app_openai.responses.create(model=MODEL, instructions=instructions, input="Question one")
    third = app_openai.responses.create(model=MODEL, instructions=instructions, input="Question two")

    assert first.usage.input_tokens > 1024
    assert first.usage.input_tokens_details.cached_tokens == 0
    cached = second.usage.input_tokens_details.cached_tokens
    assert 1024 <= cached <= second.usage.input_tokens and cached % 128 == 0
    # A different last message still reads the shared instructions prefix.
    assert 1024 <= third.usage.input_tokens_details.cached_tokens <= cached


def test_async_stream_helper(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().scenario().text("async hello", chunks=["async", " hello"]).build()
    )

    async def run() -> tuple[list[str], str]:
        client = llmts_session.async_openai_client(_strict_response_validation=True, max_retries=0)
        async with client, client.responses.stream(model=MODEL, input="Hi") as stream:
            deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
            final = await stream.get_final_response()
        return deltas, final.output_text

    assert asyncio.run(run()) == (["async", " hello"], "async hello")


def test_unconfigured_session_echoes_latest_user_text(app_openai: Any) -> None:
    response = app_openai.responses.create(
        model="any-model",
        input=[
            {"role": "user", "content": "first"},
            {"role": "user", "content": [{"type": "input_text", "text": "echo"}]},
        ],
    )

    assert response.output_text == "echo"
