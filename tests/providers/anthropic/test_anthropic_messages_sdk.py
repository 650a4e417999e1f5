"""Anthropic Messages through the official ``anthropic`` SDK (strict response validation) against a real
gunicorn+gevent server: text answers and streams (sync and async), tool use and tool choice, structured
output, count_tokens and the models list. Written against the API both majors share (1.x sends
``x-api-key``, 2.x Bearer): ``tox -e anthropic1`` runs it with anthropic 1.x."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pydantic
import pytest

from llmts import SessionClient
from tests.providers.anthropic.sdk_support import (
    HI,
    MODEL,
    WEATHER,
    body_error_code,
    config_builder,
    create_message,
    # the ``client`` fixture: pytest finds it by name once it is imported here
    strict_anthropic_client,  # noqa: F401
    strict_client,
)

pytestmark = pytest.mark.sdk

TIME = {"name": "get_time", "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}}}


# The strict client on the real server, for this module's smoke tests over real HTTP.
@pytest.fixture
def live_client(llmts_session: SessionClient) -> Any:
    return strict_client(llmts_session)


# --- text ---------------------------------------------------------------------------------------


def test_text_answer_with_usage(llmts_session: SessionClient, live_client: Any) -> None:
    llmts_session.configure(config_builder().scenario().text("Hello there.").build())

    message = create_message(live_client)

    assert message.id.startswith("msg_")
    assert (message.type, message.role, message.model) == ("message", "assistant", MODEL)
    assert [(b.type, b.text) for b in message.content] == [("text", "Hello there.")]
    assert message.stop_reason == "end_turn"
    assert message.stop_sequence is None
    # Documented estimate: 3 per request + (4 + ceil(2/4)) per message; output ceil(12/4).
    assert (message.usage.input_tokens, message.usage.output_tokens) == (8, 3)
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0


def test_system_prompt_string_or_blocks_counts_as_input(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        config_builder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    )
    system = "Be brief and kind."  # 18 characters: 5 tokens

    plain = create_message(client).usage.input_tokens
    as_string = create_message(client, system=system).usage.input_tokens
    as_blocks = create_message(client, system=[{"type": "text", "text": system}]).usage.input_tokens

    assert as_string == as_blocks == plain + 5


def test_stream_helper_text_stream_and_final_message(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().text("One two three", chunks=["One", " two", " three"]))

    with client.messages.stream(model=MODEL, max_tokens=256, messages=HI) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()

    assert pieces == ["One", " two", " three"]
    assert final.id.startswith("msg_")
    assert [b.text for b in final.content] == ["One two three"]
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (8, 4)


def test_raw_stream_event_order(llmts_session: SessionClient, live_client: Any) -> None:
    llmts_session.configure(config_builder().scenario().text("ab", chunks=["a", "b"]).build())

    events = list(create_message(live_client, stream=True))

    assert [e.type for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0].message
    assert start.content == [] and start.stop_reason is None and start.usage.input_tokens == 8
    assert [e.delta.text for e in events[2:4]] == ["a", "b"]
    assert events[5].delta.stop_reason == "end_turn"
    assert events[5].usage.output_tokens == 1


def test_async_client_streams(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        config_builder().scenario().text("async hello", chunks=["async", " hello"]).build()
    )

    async def run() -> tuple[list[str], str]:
        client = llmts_session.async_anthropic_client(_strict_response_validation=True, max_retries=0)
        async with client, client.messages.stream(model=MODEL, max_tokens=64, messages=HI) as stream:
            pieces = [text async for text in stream.text_stream]
            final = await stream.get_final_message()
            return pieces, final.content[0].text

    assert asyncio.run(run()) == (["async", " hello"], "async hello")


# --- tools --------------------------------------------------------------------------------------


def test_tool_use_json(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        config_builder().scenario().tool_call("get_weather", {"city": "Paris"}, id="toolu_1").build()
    )

    message = create_message(client, tools=[WEATHER])

    assert message.stop_reason == "tool_use"
    (block,) = message.content
    assert (block.type, block.id, block.name, block.input) == (
        "tool_use",
        "toolu_1",
        "get_weather",
        {"city": "Paris"},
    )


def test_streamed_tool_use_reassembles_in_final_message(app_session: SessionClient, client: Any) -> None:
    long_args = {"city": "Paris", "units": "metric", "days": 3, "note": "a fairly long argument value"}
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {"id": "toolu_a", "name": "get_weather", "arguments": long_args},
                                {
                                    "id": "toolu_b",
                                    "name": "get_time",
                                    "arguments": {"tz": "CET"},
                                    "arguments_chunks": ['{"tz"', ':"CET"}'],
                                },
                            ]
                        }
                    ]
                }
            ],
        }
    )

    with client.messages.stream(model=MODEL, max_tokens=256, messages=HI, tools=[WEATHER, TIME]) as stream:
        events = list(stream)
        final = stream.get_final_message()

    json_pieces = [e.partial_json for e in events if e.type == "input_json"]
    assert len(json_pieces) > 3  # the arguments really arrive in pieces
    assert json_pieces[-2:] == ['{"tz"', ':"CET"}']  # the configured chunks, as configured
    assert final.stop_reason == "tool_use"
    assert [(b.type, b.id, b.name) for b in final.content] == [
        ("tool_use", "toolu_a", "get_weather"),
        ("tool_use", "toolu_b", "get_time"),
    ]
    assert final.content[0].input == long_args
    assert final.content[1].input == {"tz": "CET"}


def test_tool_result_round_trip(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        config_builder()
        .scenario()
        .tool_call("get_weather", {"city": "Paris"}, id="toolu_9")
        .text("It is sunny in Paris.")
        .build()
    )

    first = create_message(client, tools=[WEATHER])
    call = first.content[0]
    history = [
        *HI,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": '{"sky": "clear"}'}],
        },
    ]
    second = create_message(client, tools=[WEATHER], messages=history)

    assert second.content[0].text == "It is sunny in Paris."
    assert second.stop_reason == "end_turn"
    assert second.usage.input_tokens > first.usage.input_tokens


def test_tool_results_are_not_user_turns(client: Any) -> None:
    """Unconfigured sessions echo the latest user text: a message of tool results alone adds none."""
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "weather "}, {"type": "text", "text": "please"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]},
    ]

    message = create_message(client, messages=history, tools=[WEATHER])

    assert message.content[0].text == "weather please"


@pytest.mark.parametrize(
    ("tool_choice", "fixture", "tools"),
    [
        ({"type": "none"}, "tool", [WEATHER]),
        ({"type": "any"}, "text", [WEATHER]),
        ({"type": "tool", "name": "get_time"}, "tool", [WEATHER, TIME]),
        ({"type": "auto"}, "tool", [TIME]),  # calls a tool the request never declared
    ],
)
def test_tool_choice_constraints_are_enforced(
    app_session: SessionClient, client: Any, tool_choice: Any, fixture: str, tools: list[Any]
) -> None:
    builder = config_builder().scenario()
    if fixture == "tool":
        builder.tool_call("get_weather", {"city": "Paris"})
    else:
        builder.text("plain")
    app_session.configure(builder.build())

    with pytest.raises(anthropic.ConflictError) as caught:
        create_message(client, tools=tools, tool_choice=tool_choice)
    assert body_error_code(caught.value) == "llm_test_server_fixture_mismatch"


def test_forced_tool_choice_is_answered(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().tool_call("get_time", {"tz": "UTC"}).build())

    message = create_message(client, tools=[WEATHER, TIME], tool_choice={"type": "tool", "name": "get_time"})

    assert message.content[0].name == "get_time"


# --- structured output --------------------------------------------------------------------------


def test_json_fixture_is_a_text_block_with_the_json(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().json({"answer": 42, "items": ["a"]}).build())

    message = create_message(
        client,
        output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}},
    )

    (block,) = message.content
    assert block.type == "text"
    assert json.loads(block.text) == {"answer": 42, "items": ["a"]}
    assert message.stop_reason == "end_turn"


def test_parse_helper_with_output_format(app_session: SessionClient, client: Any) -> None:
    class Answer(pydantic.BaseModel):
        answer: int
        reason: str

    app_session.configure(config_builder().scenario().json({"answer": 42, "reason": "because"}).build())

    message = client.messages.parse(model=MODEL, max_tokens=256, messages=HI, output_format=Answer)

    assert message.parsed_output == Answer(answer=42, reason="because")


def test_text_fixture_for_json_request_is_a_fixture_mismatch(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().text("not json").build())

    with pytest.raises(anthropic.ConflictError) as caught:
        create_message(
            client, output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}}
        )
    assert body_error_code(caught.value) == "llm_test_server_fixture_mismatch"
    assert create_message(client).content[0].text == "not json"  # the rejected fixture was not consumed


# --- count_tokens and models --------------------------------------------------------------------


def test_count_tokens_matches_usage_and_changes_nothing(app_session: SessionClient, client: Any) -> None:
    app_session.configure(config_builder().scenario().text("first").build())
    prompt: dict[str, Any] = {
        "model": MODEL,
        "system": "Be brief.",
        "tools": [WEATHER],
        "messages": [
            *HI,
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Weather?"},
        ],
    }

    counted = client.messages.count_tokens(**prompt)
    message = client.messages.create(max_tokens=64, **prompt)

    assert message.content[0].text == "first"  # count_tokens consumed no scripted answer
    assert counted.input_tokens == message.usage.input_tokens > 8
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="claude-imaginary", messages=HI)


def test_models_list_pages_and_retrieve(app_session: SessionClient, client: Any) -> None:
    app_session.configure({"models": [MODEL, "claude-other-2", "claude-third"]})

    page = client.models.list()
    assert [m.id for m in page.data] == [MODEL, "claude-other-2", "claude-third"]
    assert page.has_more is False
    assert (page.first_id, page.last_id) == (MODEL, "claude-third")
    assert page.data[0].type == "model" and page.data[0].display_name == "Claude Test 1"
    # One per page: the SDK's auto-pagination follows last_id until has_more is false.
    assert [m.id for m in client.models.list(limit=1)] == [MODEL, "claude-other-2", "claude-third"]
    assert client.models.retrieve("claude-other-2").id == "claude-other-2"
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("claude-imaginary")
