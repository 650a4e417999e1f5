"""Anthropic Messages through the official ``anthropic`` SDK (strict response validation) against a real
gunicorn+gevent server. Written against the API both majors share (1.x sends ``x-api-key``, 2.x Bearer):
``tox -e anthropic1`` runs this module with anthropic 1.x."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import anthropic
import pydantic
import pytest

from llmts import ConfigBuilder, SessionClient

pytestmark = pytest.mark.sdk

MODEL = "claude-test-1"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TIME = {"name": "get_time", "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}}}
# Over 1024 estimated tokens (4 characters each): long enough to be cached at a breakpoint.
LONG_SYSTEM = "You are a careful assistant who answers in one short sentence. " * 72


def _builder() -> ConfigBuilder:
    return ConfigBuilder().models(MODEL)


def _client(session: SessionClient, **kwargs: Any) -> Any:
    kwargs.setdefault("max_retries", 0)
    return session.anthropic_client(_strict_response_validation=True, **kwargs)


@pytest.fixture
def client(app_session: SessionClient) -> Any:
    return _client(app_session)


# The same on the real server, for this module's smoke tests over real HTTP.
@pytest.fixture
def live_client(llmts_session: SessionClient) -> Any:
    return _client(llmts_session)


def _create(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("max_tokens", 256)
    kwargs.setdefault("messages", HI)
    return client.messages.create(**kwargs)


def _error_code(error: anthropic.APIStatusError) -> str:
    body = error.body
    assert isinstance(body, dict)
    return str(body["error"]["code"])


# --- text ---------------------------------------------------------------------------------------


def test_text_answer_with_usage(llmts_session: SessionClient, live_client: Any) -> None:
    llmts_session.configure(_builder().scenario().text("Hello there.").build())

    message = _create(live_client)

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
    app_session.configure(_builder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    system = "Be brief and kind."  # 18 characters: 5 tokens

    plain = _create(client).usage.input_tokens
    as_string = _create(client, system=system).usage.input_tokens
    as_blocks = _create(client, system=[{"type": "text", "text": system}]).usage.input_tokens

    assert as_string == as_blocks == plain + 5


def test_stream_helper_text_stream_and_final_message(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("One two three", chunks=["One", " two", " three"]))

    with client.messages.stream(model=MODEL, max_tokens=256, messages=HI) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()

    assert pieces == ["One", " two", " three"]
    assert final.id.startswith("msg_")
    assert [b.text for b in final.content] == ["One two three"]
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (8, 4)


def test_raw_stream_event_order(llmts_session: SessionClient, live_client: Any) -> None:
    llmts_session.configure(_builder().scenario().text("ab", chunks=["a", "b"]).build())

    events = list(_create(live_client, stream=True))

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
    llmts_session.configure(_builder().scenario().text("async hello", chunks=["async", " hello"]).build())

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
        _builder().scenario().tool_call("get_weather", {"city": "Paris"}, id="toolu_1").build()
    )

    message = _create(client, tools=[WEATHER])

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
        _builder()
        .scenario()
        .tool_call("get_weather", {"city": "Paris"}, id="toolu_9")
        .text("It is sunny in Paris.")
        .build()
    )

    first = _create(client, tools=[WEATHER])
    call = first.content[0]
    history = [
        *HI,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": '{"sky": "clear"}'}],
        },
    ]
    second = _create(client, tools=[WEATHER], messages=history)

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

    message = _create(client, messages=history, tools=[WEATHER])

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
    builder = _builder().scenario()
    if fixture == "tool":
        builder.tool_call("get_weather", {"city": "Paris"})
    else:
        builder.text("plain")
    app_session.configure(builder.build())

    with pytest.raises(anthropic.ConflictError) as caught:
        _create(client, tools=tools, tool_choice=tool_choice)
    assert _error_code(caught.value) == "llm_test_server_fixture_mismatch"


def test_forced_tool_choice_is_answered(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().tool_call("get_time", {"tz": "UTC"}).build())

    message = _create(client, tools=[WEATHER, TIME], tool_choice={"type": "tool", "name": "get_time"})

    assert message.content[0].name == "get_time"


# --- structured output --------------------------------------------------------------------------


def test_json_fixture_is_a_text_block_with_the_json(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().json({"answer": 42, "items": ["a"]}).build())

    message = _create(
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

    app_session.configure(_builder().scenario().json({"answer": 42, "reason": "because"}).build())

    message = client.messages.parse(model=MODEL, max_tokens=256, messages=HI, output_format=Answer)

    assert message.parsed_output == Answer(answer=42, reason="because")


def test_text_fixture_for_json_request_is_a_fixture_mismatch(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("not json").build())

    with pytest.raises(anthropic.ConflictError) as caught:
        _create(client, output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}})
    assert _error_code(caught.value) == "llm_test_server_fixture_mismatch"
    assert _create(client).content[0].text == "not json"  # the rejected fixture was not consumed


# --- errors and retries -------------------------------------------------------------------------


def test_scripted_429_is_retried_into_next_answer(app_session: SessionClient) -> None:
    app_session.configure(
        _builder()
        .scenario()
        .error(429, "rate_limit_exceeded", "Slow down", retry_after=0.25)
        .text("Later.")
        .build()
    )
    client = _client(app_session, max_retries=2)

    started = time.monotonic()
    raw = client.messages.with_raw_response.create(model=MODEL, max_tokens=64, messages=HI)
    elapsed = time.monotonic() - started

    assert raw.parse().content[0].text == "Later."
    assert raw.retries_taken == 1
    assert elapsed >= 0.25  # the SDK honoured retry-after-ms


def test_scripted_429_without_retries(app_session: SessionClient, client: Any) -> None:
    app_session.configure(
        _builder().scenario().error(429, "rate_limit_exceeded", "Slow down", retry_after=2).build()
    )

    with pytest.raises(anthropic.RateLimitError) as caught:
        _create(client)

    error = caught.value
    assert error.status_code == 429
    assert error.body["error"]["type"] == "rate_limit_error"
    assert error.body["error"]["message"] == "Slow down"
    assert error.response.headers["retry-after"] == "2"
    assert error.response.headers["retry-after-ms"] == "2000"
    assert error.request_id and error.request_id.startswith("req_")
    assert error.request_id == error.body["request_id"]


def test_529_is_overloaded_and_retried(app_session: SessionClient) -> None:
    app_session.configure(
        _builder()
        .scenario()
        .error(529, "overloaded", "Overloaded", retry_after=0.05)
        .error(529, "overloaded", "Overloaded", retry_after=0.05)
        .text("Back.")
        .build()
    )

    # anthropic exports OverloadedError at the top level from 0.109; older 0.x raise the same class.
    overloaded = getattr(anthropic, "OverloadedError", None) or anthropic._exceptions.OverloadedError
    with pytest.raises(overloaded) as caught:
        _create(_client(app_session))
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"
    # The next attempt gets the second 529, then the answer: retried like the API's overload.
    assert _create(_client(app_session, max_retries=1)).content[0].text == "Back."


def test_non_retryable_400_is_bad_request(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 400,
                                "code": "prompt_too_long",
                                "message": "prompt is too long",
                            }
                        },
                        {"text": "unused"},
                    ]
                }
            ],
        }
    )
    client = _client(app_session, max_retries=2)

    with pytest.raises(anthropic.BadRequestError) as caught:
        _create(client)

    assert caught.value.body["error"] == {
        "type": "invalid_request_error",
        "message": "prompt is too long",
        "code": "prompt_too_long",
        "details": {"error_code": "prompt_too_long"},
    }
    assert _create(client).content[0].text == "unused"  # no retry consumed it


def test_scripted_should_retry_false_stops_sdk_retries(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 500,
                                "code": "boom",
                                "message": "Broken",
                                "type": "custom_error",
                                "should_retry": False,
                            }
                        },
                        {"text": "still here"},
                    ]
                }
            ],
        }
    )
    client = _client(app_session, max_retries=2)

    with pytest.raises(anthropic.InternalServerError) as caught:
        _create(client)

    assert caught.value.body["error"]["type"] == "custom_error"  # the fixture's type wins
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert _create(client).content[0].text == "still here"


def test_unknown_model_is_not_found(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("ok").build())

    with pytest.raises(anthropic.NotFoundError) as caught:
        _create(client, model="claude-imaginary")

    assert caught.value.body["error"]["type"] == "not_found_error"
    assert _error_code(caught.value) == "model_not_found"
    if hasattr(caught.value, "error_code"):  # anthropic 2.x reads error.details.error_code
        assert caught.value.error_code == "model_not_found"


def test_wrong_credentials_are_authentication_error(app_session: SessionClient) -> None:
    app_session.configure(_builder().credentials(anthropic="sk-ant-right").scenario().text("ok").build())
    wrong = _client(app_session, api_key="sk-ant-wrong-key")

    with pytest.raises(anthropic.AuthenticationError) as caught:
        _create(wrong)
    assert caught.value.body["error"]["type"] == "authentication_error"
    assert "sk-ant-right" not in str(caught.value)
    # The failed attempt consumed nothing; the right key (api_key) works, and so does auth_token (Bearer).
    assert _create(_client(app_session)).content[0].text == "ok"


def test_auth_token_is_accepted(llmts_session: SessionClient) -> None:
    llmts_session.configure(_builder().credentials(anthropic="tok-right").scenario().text("ok").build())
    client = anthropic.Anthropic(
        base_url=f"{llmts_session.provider_base}/anthropic",
        auth_token="tok-right",
        max_retries=0,
        _strict_response_validation=True,
    )

    assert _create(client).content[0].text == "ok"


def test_exhausted_queue_is_conflict_and_not_retried(app_session: SessionClient) -> None:
    app_session.configure(_builder().scenario("only").text("once").build())
    client = _client(app_session, max_retries=2)
    _create(client)

    started = time.monotonic()
    with pytest.raises(anthropic.ConflictError) as caught:
        _create(client)

    assert _error_code(caught.value) == "llm_test_server_scenario_exhausted"
    assert caught.value.body["error"]["type"] == "conflict_error"
    assert time.monotonic() - started < 0.4  # x-should-retry: false, no backoff


# --- count_tokens and models --------------------------------------------------------------------


def test_count_tokens_matches_usage_and_changes_nothing(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("first").build())
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


# --- prompt cache -------------------------------------------------------------------------------


def _cached_system() -> list[dict[str, Any]]:
    return [{"type": "text", "text": LONG_SYSTEM, "cache_control": {"type": "ephemeral"}}]


def test_prompt_cache_write_then_read(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    prefix = 3 + (len(LONG_SYSTEM) + 3) // 4  # the preamble segment: request overhead + system text

    first = _create(client, system=_cached_system()).usage
    second = _create(client, system=_cached_system()).usage

    assert prefix > 1024
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (prefix, 0)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, prefix)
    # input_tokens is only the uncached part (the message "Hi"): the three add up to the whole prompt.
    assert first.input_tokens == second.input_tokens == 4 + 1
    # A later turn with a moved breakpoint reads the system prefix and writes the rest.
    marked_turn = [{"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}}]
    history = [*HI, {"role": "assistant", "content": "ok"}, {"role": "user", "content": marked_turn}]
    third = _create(client, system=_cached_system(), messages=history).usage
    assert third.cache_read_input_tokens == prefix
    assert third.cache_creation_input_tokens == 3 * (4 + 1)  # three short messages
    assert third.input_tokens == 0


def test_prompt_cache_counters_in_stream(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    _create(client, system=_cached_system())

    with client.messages.stream(model=MODEL, max_tokens=64, messages=HI, system=_cached_system()) as stream:
        final = stream.get_final_message()

    assert final.usage.cache_read_input_tokens > 1024
    assert final.usage.cache_creation_input_tokens == 0


def test_max_tokens_zero_only_warms_the_cache(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("the only answer").build())

    warm = _create(client, max_tokens=0, system=_cached_system())
    again = _create(client, max_tokens=0, system=_cached_system())
    real = _create(client, system=_cached_system())

    assert warm.content == [] and warm.stop_reason == "max_tokens" and warm.id.startswith("msg_")
    assert warm.usage.cache_creation_input_tokens > 1024 and warm.usage.output_tokens == 0
    assert again.usage.cache_read_input_tokens == warm.usage.cache_creation_input_tokens
    # Neither warm-up consumed the single scripted answer, and the real request reads the warm cache.
    assert real.content[0].text == "the only answer"
    assert real.usage.cache_read_input_tokens == warm.usage.cache_creation_input_tokens


def test_max_tokens_zero_stream_and_unknown_model(app_session: SessionClient, client: Any) -> None:
    app_session.configure(_builder().scenario().text("kept").build())

    with client.messages.stream(model=MODEL, max_tokens=0, messages=HI, system=_cached_system()) as stream:
        final = stream.get_final_message()
    with pytest.raises(anthropic.NotFoundError):
        _create(client, model="claude-imaginary", max_tokens=0)

    assert final.content == [] and final.stop_reason == "max_tokens"
    assert final.usage.cache_creation_input_tokens > 1024
    assert _create(client).content[0].text == "kept"


@pytest.mark.parametrize("placement", ["tool_result", "top_level"])
def test_prompt_cache_breakpoint_at_the_last_turn(
    app_session: SessionClient, client: Any, placement: str
) -> None:
    app_session.configure(_builder().scenario(terminal_policy="repeat_last_response").text("ok").build())
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}
    extra: dict[str, Any] = {}
    if placement == "tool_result":
        result["cache_control"] = {"type": "ephemeral"}
    else:
        extra["cache_control"] = {"type": "ephemeral"}
    history = [
        *HI,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}],
        },
        {"role": "user", "content": [result]},
    ]

    def usage() -> Any:
        return _create(client, system=LONG_SYSTEM, tools=[WEATHER], messages=history, extra_body=extra).usage

    first, second = usage(), usage()

    # The breakpoint closes the whole prompt: nothing is left uncached.
    assert first.input_tokens == second.input_tokens == 0
    assert first.cache_creation_input_tokens > 1024 and first.cache_read_input_tokens == 0
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (
        0,
        first.cache_creation_input_tokens,
    )
